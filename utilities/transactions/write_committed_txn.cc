// The WRITE_COMMITTED policy: how a transaction's writes reach the DB at each step. The
// memtable sees them only at Commit, so a reader never meets uncommitted data and needs
// no visibility check. Two-phase commit goes through DBForTransactions::WriteTxn
// (db/db_for_transactions.h).
#include "db/db_for_transactions.h"
#include "db/write_batch_internal.h"
#include "utilities/transactions/pessimistic_transaction.h"

namespace shale {

Status WriteCommittedTxn::PrepareInternal() {
  // BeginPrepare (the Noop the marker call turns into it), the records, EndPrepare(name),
  // logged and not applied: recovery finds it there until a Commit or Rollback marker
  // resolves it.
  WriteBatch prepared;
  Status s = PreparedBatch(&prepared, PreparePolicy::kWriteCommitted);
  if (!s.ok()) return s;
  uint64_t log = 0;
  DBForTransactions::TxnWrite t;
  t.wal_only = true;
  t.log_used = &log;
  s = engine_->WriteTxn(write_options_, &prepared, t);
  if (s.ok()) log_number_ = log;
  return s;
}

Status WriteCommittedTxn::CommitWithoutPrepareInternal() {
  WriteBatch combined;
  WriteBatch* records = nullptr;
  Status s = RecordsToCommit(&combined, &records);
  if (!s.ok() || records == nullptr) return s;
  return db_->Write(write_options_, records);
}

Status WriteCommittedTxn::CommitInternal() {
  // The WAL already holds the prepared records: the commit logs only the commit-time
  // records and the marker, and the DB applies the prepared records after them.
  WriteBatch commit = commit_time_batch_;
  WriteBatchInternal::MarkCommit(&commit, name_);
  DBForTransactions::TxnWrite t;
  t.txn_batch = batch_.GetWriteBatch();
  t.prep_log = log_number_;
  Status s = engine_->WriteTxn(write_options_, &commit, t);
  if (s.ok()) engine_->MarkPrepareResolved(log_number_);
  return s;
}

Status WriteCommittedTxn::RollbackInternal() {
  WriteBatch rollback;
  WriteBatchInternal::MarkRollback(&rollback, name_);
  DBForTransactions::TxnWrite t;
  t.wal_only = true;
  Status s = engine_->WriteTxn(write_options_, &rollback, t);
  if (s.ok()) engine_->MarkPrepareResolved(log_number_);
  return s;
}

}  // namespace shale
