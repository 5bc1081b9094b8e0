// TransactionDB: a DB with pessimistic transactions (transaction.h), as RocksDB's. It is a
// StackableDB over the DB it opens: reads pass straight through; Put, Delete, Merge,
// SingleDelete and Write lock their keys as a one-write transaction would (waiting at
// most default_lock_timeout), so they never slip between a transaction's GetForUpdate and
// its Commit.
//
// Two-phase commit is always on: Open sets DBOptions::allow_2pc. Transactions prepared
// and not resolved when the DB closed (or crashed) come back at Open, PREPARED, named,
// holding their keys' locks; GetAllPreparedTransactions and GetTransactionByName hand
// them out to be committed or rolled back.
//
// Column families: Open with descriptors opens them all; keys are locked per family (the
// lock limits and stripes are per family too). CreateColumnFamily and DropColumnFamily
// through this DB add and remove the family's locks: a transaction waiting for a lock of a
// dropped family gets ColumnFamilyDropped. A prepared transaction may span families; after
// a crash it comes back with its records in each (those of a family dropped since are left
// out), through the handles Open returned: keep them until such transactions are resolved.
//
// Thread safety: every method may be called from any thread. Ownership: the caller
// deletes the TransactionDB after every Transaction it began; recovered transactions not
// resolved by then are deleted with the DB.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "shale/db.h"
#include "shale/options.h"
#include "shale/utilities/lock_info.h"
#include "shale/utilities/stackable_db.h"
#include "shale/utilities/transaction.h"

namespace shale {

// When a transaction's data reaches the memtable: at Commit (WRITE_COMMITTED), or at
// Prepare (WRITE_PREPARED), with reads deciding per entry whether it is committed as of
// their snapshot. Open answers NotSupported for WRITE_UNPREPARED.
enum TxnDBWritePolicy {
  WRITE_COMMITTED = 0,
  WRITE_PREPARED,
  WRITE_UNPREPARED,
};

const uint32_t kInitialMaxDeadlocks = 5;

struct TransactionDBOptions {
  // Keys locked at once per column family; past it a lock request gets LockLimit. Zero or
  // negative: no limit. Default: -1.
  int64_t max_num_locks = -1;
  // Deadlocks kept for GetDeadlockInfoBuffer. Default: 5.
  uint32_t max_num_deadlocks = kInitialMaxDeadlocks;
  // Stripes of the lock table per column family, each with its own mutex: more stripes,
  // less contention. Default: 16.
  size_t num_stripes = 16;
  // Milliseconds a transaction waits for a lock when TransactionOptions::lock_timeout is
  // negative: 0 tries once, negative waits forever. Default: 1000.
  int64_t transaction_lock_timeout = 1000;
  // Milliseconds a write outside a transaction (Put, Write, ... on this DB) waits for a
  // lock: 0 tries once, negative waits forever. Default: 1000.
  int64_t default_lock_timeout = 1000;
  // Default: WRITE_COMMITTED.
  TxnDBWritePolicy write_policy = TxnDBWritePolicy::WRITE_COMMITTED;
  // WRITE_PREPARED: whether Rollback undoes the keys a transaction only merged into. With
  // false (RocksDB's default, kept for applications that merge into shared counters
  // without locks), Rollback restores only the keys the transaction put or deleted, and
  // its merge operands of the other keys commit with the rollback: they become visible.
  // With true, every key is restored to its value from before the prepare. WRITE_COMMITTED
  // ignores it: its rollback writes nothing. Default: false.
  bool rollback_merge_operands = false;
  // Writes outside a transaction take no locks: for applications that order their writes
  // themselves. Default: false.
  bool skip_concurrency_control = false;
  // WRITE_PREPARED: the commit cache holds 2^wp_commit_cache_bits recent commits (8 bytes
  // each; 1..32), and 2^wp_snapshot_cache_bits snapshots are checked against evicted
  // commits without a lock (0..20). Defaults: 23 (64 MiB) and 7, as RocksDB's.
  int wp_commit_cache_bits = 23;
  int wp_snapshot_cache_bits = 7;
};

struct TransactionOptions {
  // Same as calling Transaction::SetSnapshot() at the start. Default: false.
  bool set_snapshot = false;
  // Before waiting for a lock, look for a cycle of waiting transactions and answer Busy
  // (IsDeadlock()) instead of waiting into it. Default: false.
  bool deadlock_detect = false;
  // Milliseconds to wait for a lock: 0 tries once; negative takes
  // TransactionDBOptions::transaction_lock_timeout. Default: -1.
  int64_t lock_timeout = -1;
  // Milliseconds after which the transaction can no longer commit (Expired), and another
  // transaction that wants one of its locks may take it. Negative: never. Default: -1.
  int64_t expiration = -1;
  // Transactions the deadlock search visits at most (reaching the limit counts as a
  // deadlock). Default: 50.
  int64_t deadlock_detect_depth = 50;
  // Bytes the transaction's write batch may hold; a write past it fails with
  // Aborted(kMemoryLimit). 0: no limit. Default: 0.
  size_t max_write_batch_size = 0;
  // Take no locks and check no conflicts: for applications that know their transactions
  // never overlap. Default: false.
  bool skip_concurrency_control = false;
  // Commit may be called without Prepare. Default: true.
  bool skip_prepare = true;
};

// Promises a write outside a transaction makes about itself (TransactionDB::Write with
// these), so that the DB can skip work.
struct TransactionDBWriteOptimizations {
  // The batch conflicts with no transaction: no key is locked for it.
  bool skip_concurrency_control = false;
  // WRITE_PREPARED: no key appears twice in the batch.
  bool skip_duplicate_key_check = false;
};

class TransactionDB : public StackableDB {
 public:
  // A write outside a transaction, with promises about it. The only way to write a range
  // deletion into a TransactionDB, as RocksDB's: a range cannot be locked, so the batch
  // must set skip_concurrency_control (and, under WRITE_PREPARED, also
  // skip_duplicate_key_check); otherwise a batch holding one fails with InvalidArgument and
  // writes nothing. By default the promises are ignored: Write(opts, updates).
  using StackableDB::Write;
  virtual Status Write(const WriteOptions& opts, const TransactionDBWriteOptimizations&,
                       WriteBatch* updates) {
    return Write(opts, updates);
  }
  // Transactional range deletions are not supported (nor in RocksDB): NotSupported. See
  // Write with TransactionDBWriteOptimizations above.
  using StackableDB::DeleteRange;
  Status DeleteRange(const WriteOptions&, ColumnFamilyHandle*, const Slice&,
                     const Slice&) override {
    return Status::NotSupported("DeleteRange is not supported in a TransactionDB");
  }

  // Opens the DB at dbname with transactions. On failure *dbptr is nullptr. NotSupported
  // for WRITE_UNPREPARED, and (RocksDB's rules, checked first) for unordered_write unless
  // write_policy is WRITE_PREPARED with two_write_queues, and for WRITE_PREPARED with
  // max_successive_merges; InvalidArgument for cache bits out of range. A DB is opened with the
  // policy it was written with: switching needs an empty WAL (every memtable flushed, no
  // transaction prepared).
  static Status Open(const Options& options, const TransactionDBOptions& txn_db_options,
                     const std::string& dbname, TransactionDB** dbptr);
  // The same with column families, as DB::Open with descriptors: every family the DB has
  // must be named; *handles receives one handle per descriptor, in their order, owned by
  // the caller (DestroyColumnFamilyHandle before deleting the DB). WRITE_PREPARED refuses
  // max_successive_merges in any family.
  static Status Open(const DBOptions& db_options, const TransactionDBOptions& txn_db_options,
                     const std::string& dbname,
                     const std::vector<ColumnFamilyDescriptor>& column_families,
                     std::vector<ColumnFamilyHandle*>* handles, TransactionDB** dbptr);

  ~TransactionDB() override = default;

  // A new transaction, or old_txn (one of this DB's, committed or rolled back, or never
  // used) reset to start afresh with these options. The caller owns the result.
  virtual Transaction* BeginTransaction(
      const WriteOptions& write_options,
      const TransactionOptions& txn_options = TransactionOptions(),
      Transaction* old_txn = nullptr) = 0;

  // The live transaction of that name, or null. The DB keeps ownership of a recovered
  // transaction until the caller commits or rolls it back; from then on the caller deletes
  // it.
  virtual Transaction* GetTransactionByName(const TransactionName& name) = 0;
  // Replaces *trans with every named transaction in the PREPARED state.
  virtual void GetAllPreparedTransactions(std::vector<Transaction*>* trans) = 0;

  // The locked keys by column family id, and the recent deadlocks, newest first.
  virtual std::unordered_multimap<uint32_t, KeyLockInfo> GetLockStatusData() = 0;
  virtual std::vector<DeadlockPath> GetDeadlockInfoBuffer() = 0;
  virtual void SetDeadlockInfoBufferSize(uint32_t target_size) = 0;

 protected:
  // Takes ownership of db.
  explicit TransactionDB(DB* db) : StackableDB(db) {}
};

}  // namespace shale
