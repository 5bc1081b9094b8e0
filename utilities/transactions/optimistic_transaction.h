// OptimisticTransaction and OptimisticTransactionDBImpl: optimistic concurrency control
// (see include/shale/utilities/optimistic_transaction_db.h).
//
// A transaction tracks each key it writes or reads for update with the sequence it must be
// checked from: its snapshot's, or, without one, the DB's latest when it first touched
// the key. Commit locks the hash buckets of its keys (in bucket order, so two commits
// cannot deadlock), asks the DB for the newest sequence of each key in the memtables
// (DBForTransactions::GetLatestSequenceForKey, cache_only, in the key's column family),
// writes the batch if none is newer than its tracked sequence, and unlocks. Keys are
// tracked per family: the same key in two families is two keys. Holding the buckets across check
// and write is what keeps two committers of one key from both passing the check.
//
// Thread safety: a transaction is used by one thread at a time; the DB's buckets are its
// own mutexes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "shale/utilities/optimistic_transaction_db.h"
#include "util/mutexlock.h"
#include "utilities/transactions/transaction_base.h"

namespace shale {

class DBForTransactions;
class OptimisticTransactionDBImpl;

class OptimisticTransaction : public TransactionBaseImpl {
 public:
  OptimisticTransaction(OptimisticTransactionDBImpl* txn_db, const WriteOptions& write_options,
                        const OptimisticTransactionOptions& txn_options);
  ~OptimisticTransaction() override = default;

  // Starts afresh (BeginTransaction's old_txn).
  void Reinitialize(const WriteOptions& write_options,
                    const OptimisticTransactionOptions& txn_options);

  // InvalidArgument: two-phase commit is TransactionDB's.
  Status Prepare() override;
  // Busy on a conflict, TryAgain when the memtables no longer reach back far enough: the
  // transaction is then left as it was, for the caller to roll back and retry (as
  // RocksDB's). InvalidArgument when not STARTED.
  Status Commit() override;
  Status Rollback() override;

  Status SetName(const TransactionName& name) override;
  TransactionName GetName() const override { return TransactionName(); }
  TransactionID GetID() const override { return 0; }
  TransactionState GetState() const override { return state_; }
  void SetLockTimeout(int64_t /*timeout*/) override {}  // no locks to wait for

 protected:
  // Tracks the key (unless !do_validate: an untracked write or read is never checked).
  Status TryLock(ColumnFamilyHandle* cf, const Slice& key, bool read_only, bool exclusive,
                 bool do_validate, bool assume_tracked) override;
  void UnlockKeys(uint32_t /*cf_id*/, const std::vector<std::string>& /*keys*/) override {}

 private:
  void Initialize(const OptimisticTransactionOptions& txn_options);
  // Busy if a tracked key was written after its tracked sequence, TryAgain if that cannot
  // be told from the memtables. REQUIRES: the keys' buckets are locked.
  Status CheckForConflicts();
  // The same for the keys of one family (cf: its handle).
  Status CheckFamilyForConflicts(ColumnFamilyHandle* cf,
                                 const std::map<std::string, TrackedKey>& keys);

  OptimisticTransactionDBImpl* const txn_db_;
  DBForTransactions* const engine_;
  TransactionState state_ = STARTED;
};

class OptimisticTransactionDBImpl final : public OptimisticTransactionDB {
 public:
  // db: the opened DB, which this object takes over; engine: the engine beneath it.
  OptimisticTransactionDBImpl(DB* db, DBForTransactions* engine,
                              const OptimisticTransactionDBOptions& o);

  Transaction* BeginTransaction(const WriteOptions& write_options,
                                const OptimisticTransactionOptions& txn_options,
                                Transaction* old_txn) override;

  DBForTransactions* engine() const { return engine_; }
  // The bucket the commit of family cf_id's key locks.
  size_t BucketOf(uint32_t cf_id, const Slice& key) const;
  Mutex* bucket(size_t i) RETURN_CAPABILITY(buckets_[i]) { return &buckets_[i]; }

 private:
  DBForTransactions* const engine_;
  const size_t num_buckets_;
  std::unique_ptr<Mutex[]> buckets_;
};

}  // namespace shale
