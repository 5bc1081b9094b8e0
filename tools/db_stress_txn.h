// db_stress through TransactionDB (--use_txn) and OptimisticTransactionDB
// (--use_optimistic_txn), as RocksDB's db_stress runs them.
//
// In these modes every write operation of the table is one transaction: the worker takes
// the oracle's locks on its keys and sets their pending words as for any write, then
// writes them in a transaction and commits it. With --use_txn, one transaction in
// --txn_prepare_one_in is named and goes through Prepare before Commit (two-phase commit),
// and one in --txn_rollback_one_in is rolled back instead (after Prepare, when it was
// prepared): none of its writes may appear. Busy, TimedOut and TryAgain are a transaction's
// expected refusals: the write is skipped, its keys keep their values, and the refusals
// are counted. The txn_rmw operation reads a few keys with GetForUpdate under a snapshot
// taken before their oracle locks (so another worker may write them in between, which the
// transaction must refuse) and overwrites them; with --use_txn it sometimes locks its
// first key before the oracle's locks as well, so that writers time out waiting for it.
//
// Crashes: before a transaction's writes can reach the DB its worker records it in the
// expected state (db_stress_state.h). A restart first resolves the prepared transactions
// the DB gives back: each must be one a worker had recorded as prepared and not finished
// (anything else fails the run); it is committed or rolled back as that worker meant to.
// The verification then demands each recorded transaction all there or all absent, and
// absent for one meant to roll back, and present for one the restart committed.
//
// Thread safety: IssueTxn and OpTxnReadModifyWrite from workers; the rest while no worker
// runs.
#pragma once

#include <gflags/gflags.h>

#include <memory>
#include <string>
#include <vector>

#include "shale/db.h"
#include "shale/utilities/transaction.h"
#include "tools/db_stress.h"

DECLARE_bool(use_txn);
DECLARE_bool(use_optimistic_txn);
DECLARE_int32(txn_write_policy);
DECLARE_uint32(txn_prepare_one_in);
DECLARE_uint32(txn_rollback_one_in);
DECLARE_int32(txn_rmw_weight);
DECLARE_int64(txn_lock_timeout);
DECLARE_bool(test_half_commit);
DECLARE_bool(test_unrecorded_prepare);

namespace shale::stress {

// Opens the DB as the flags say (plain, TransactionDB or OptimisticTransactionDB) and sets
// ctx->txn_db / ctx->occ_db; with --column_families > 1 (plain DBs only) it opens every
// family and puts their handles, the caller's to destroy, in ctx->cfs.
Status OpenStressDB(const Options& options, const std::string& name, Context* ctx,
                    std::unique_ptr<DB>* db);

// The transaction flags, for the option line that replays a run.
std::string TxnSummary();

// Issues plans (their keys' oracle locks held, pending words set) as one transaction:
// txn if given (begun by the caller), else a new one. Afterwards the oracle holds the
// outcome: the new words if it committed, the old ones if it was rolled back or refused.
bool IssueTxn(Context* ctx, ThreadState* t, const std::vector<Planned>& plans,
              std::unique_ptr<Transaction> txn, const char* what);

// The table's txn_rmw kind: GetForUpdate and Put on two or three keys.
bool OpTxnReadModifyWrite(Context* ctx, ThreadState* t);

// After an open with --use_txn: commits or rolls back every prepared transaction the DB
// recovered, as the worker that recorded it meant to; fails on one no worker left prepared.
bool ResolvePrepared(Context* ctx);

// Part of the verification: each recorded transaction in flight against what the DB holds
// (held, one word per key). False (after Fail) when one is half applied, or shows writes it
// should not.
bool CheckTxnRecords(Context* ctx, const std::vector<uint32_t>& held);
// Empties the records, once the oracle holds what the DB holds.
void ClearTxnRecords(Context* ctx);

// "; transactions: N committed (M two-phase), ..." for the last line of a run.
std::string TxnCounts(const Context& ctx);

}  // namespace shale::stress
