#include "utilities/transactions/optimistic_transaction.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "db/db_for_transactions.h"
#include "db/write_batch_internal.h"
#include "util/hash.h"

namespace shale {

// ---- The transaction.

OptimisticTransaction::OptimisticTransaction(OptimisticTransactionDBImpl* txn_db,
                                             const WriteOptions& write_options,
                                             const OptimisticTransactionOptions& txn_options)
    : TransactionBaseImpl(txn_db->GetBaseDB(), write_options),
      txn_db_(txn_db),
      engine_(txn_db->engine()) {
  Initialize(txn_options);
}

void OptimisticTransaction::Initialize(const OptimisticTransactionOptions& txn_options) {
  state_ = STARTED;
  if (txn_options.set_snapshot) SetSnapshot();
}

void OptimisticTransaction::Reinitialize(const WriteOptions& write_options,
                                         const OptimisticTransactionOptions& txn_options) {
  ClearBase();
  write_options_ = write_options;
  Initialize(txn_options);
}

Status OptimisticTransaction::Prepare() {
  return Status::InvalidArgument("Two phase commit not supported for optimistic transactions.");
}

Status OptimisticTransaction::SetName(const TransactionName& /*name*/) {
  return Status::InvalidArgument("Optimistic transactions cannot be named.");
}

Status OptimisticTransaction::TryLock(ColumnFamilyHandle* cf, const Slice& key, bool read_only,
                                      bool exclusive, bool do_validate, bool /*assume_tracked*/) {
  if (state_ != STARTED) return Status::InvalidArgument("Transaction is not in state for writes.");
  if (!do_validate) return Status::OK();
  // Checked at Commit from here: the snapshot's sequence, or the newest one now. A write
  // after it by anyone else is a conflict.
  const SequenceNumber seq = GetSnapshot() != nullptr ? GetSnapshot()->GetSequenceNumber()
                                                      : db_->GetLatestSequenceNumber();
  TrackKey(cf->GetID(), key.ToString(), seq, read_only, exclusive);
  return Status::OK();
}

Status OptimisticTransaction::CheckForConflicts() {
  for (const auto& [cf_id, keys] : tracked_keys()) {
    Status s = CheckFamilyForConflicts(HandleOf(cf_id), keys);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status OptimisticTransaction::CheckFamilyForConflicts(
    ColumnFamilyHandle* cf, const std::map<std::string, TrackedKey>& keys) {
  for (const auto& [key, tracked] : keys) {
    SequenceNumber seq;
    bool found;
    Status s = engine_->GetLatestSequenceForKey(cf, key, /*cache_only=*/true, &seq, &found);
    if (!s.ok()) return s;
    if (found) {
      // Memtables are flushed oldest first: a newer write to the key would be found
      // before this one, so the newest entry decides.
      if (seq > tracked.seq) return Status::Busy("Write Conflict");
    } else if (seq > tracked.seq + 1) {
      // Writes numbered between the tracked sequence and seq may have left the memtables.
      char msg[300];
      snprintf(msg, sizeof(msg),
               "Transaction could not check for conflicts for operation at SequenceNumber "
               "%" PRIu64
               " as the MemTable only contains changes newer than SequenceNumber "
               "%" PRIu64 ".",
               tracked.seq, seq - 1);
      return Status::TryAgain(msg);
    }
  }
  return Status::OK();
}

Status OptimisticTransaction::Commit() NO_THREAD_SAFETY_ANALYSIS {
  if (state_ != STARTED) {
    return Status::InvalidArgument("Transaction has already been committed or rolled back.");
  }
  // The buckets of the tracked keys, each once, in order: two commits take shared
  // buckets in the same order and so never deadlock.
  std::vector<size_t> buckets;
  buckets.reserve(GetNumKeys());
  for (const auto& [cf_id, keys] : tracked_keys()) {
    for (const auto& entry : keys) buckets.push_back(txn_db_->BucketOf(cf_id, entry.first));
  }
  std::sort(buckets.begin(), buckets.end());
  buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
  for (size_t b : buckets) txn_db_->bucket(b)->Lock();

  Status s = CheckForConflicts();
  if (s.ok()) {
    WriteBatch* records = GetWriteBatch()->GetWriteBatch();
    WriteBatch combined;
    if (commit_time_batch_.Count() > 0) {
      combined = *records;
      s = WriteBatchInternal::Append(&combined, &commit_time_batch_);
      records = &combined;
    }
    // Written before the buckets open, so the next committer's check sees it.
    if (s.ok() && records->Count() > 0) s = db_->Write(write_options_, records);
  }
  for (size_t b : buckets) txn_db_->bucket(b)->Unlock();
  // A failed commit leaves the transaction as it was, for the caller to roll back.
  if (s.ok()) {
    ClearBase();
    state_ = COMMITTED;
  }
  return s;
}

Status OptimisticTransaction::Rollback() {
  if (state_ == COMMITTED) {
    return Status::InvalidArgument("This transaction has already been committed.");
  }
  ClearBase();
  state_ = ROLLEDBACK;
  return Status::OK();
}

// ---- The DB.

OptimisticTransactionDBImpl::OptimisticTransactionDBImpl(DB* db, DBForTransactions* engine,
                                                         const OptimisticTransactionDBOptions& o)
    : OptimisticTransactionDB(db),
      engine_(engine),
      num_buckets_(std::max<uint32_t>(o.occ_lock_buckets, 1)),
      buckets_(new Mutex[num_buckets_]) {}

size_t OptimisticTransactionDBImpl::BucketOf(uint32_t cf_id, const Slice& key) const {
  return Hash32(key, /*seed=*/cf_id) % num_buckets_;
}

Transaction* OptimisticTransactionDBImpl::BeginTransaction(
    const WriteOptions& write_options, const OptimisticTransactionOptions& txn_options,
    Transaction* old_txn) {
  if (old_txn != nullptr) {
    static_cast<OptimisticTransaction*>(old_txn)->Reinitialize(write_options, txn_options);
    return old_txn;
  }
  return new OptimisticTransaction(this, write_options, txn_options);
}

Status OptimisticTransactionDB::Open(const Options& options, const std::string& dbname,
                                     OptimisticTransactionDB** dbptr) {
  *dbptr = nullptr;
  DB* db = nullptr;
  Status s = DB::Open(options, dbname, &db);
  if (!s.ok()) return s;
  DBForTransactions* impl = DBForTransactions::From(db);
  if (impl == nullptr) {
    delete db;
    return Status::NotSupported("OptimisticTransactionDB needs shale's own DB beneath it");
  }
  *dbptr = new OptimisticTransactionDBImpl(db, impl, OptimisticTransactionDBOptions());
  return Status::OK();
}

Status OptimisticTransactionDB::Open(const DBOptions& db_options, const std::string& dbname,
                                     const std::vector<ColumnFamilyDescriptor>& column_families,
                                     std::vector<ColumnFamilyHandle*>* handles,
                                     OptimisticTransactionDB** dbptr) {
  return Open(db_options, OptimisticTransactionDBOptions(), dbname, column_families, handles,
              dbptr);
}

Status OptimisticTransactionDB::Open(const DBOptions& db_options,
                                     const OptimisticTransactionDBOptions& occ_options,
                                     const std::string& dbname,
                                     const std::vector<ColumnFamilyDescriptor>& column_families,
                                     std::vector<ColumnFamilyHandle*>* handles,
                                     OptimisticTransactionDB** dbptr) {
  *dbptr = nullptr;
  if (occ_options.validate_policy != OccValidationPolicy::kValidateParallel) {
    return Status::NotSupported("only the kValidateParallel validation policy is implemented");
  }
  if (handles == nullptr) return Status::InvalidArgument("null handles");
  DB* db = nullptr;
  Status s = DB::Open(db_options, dbname, column_families, handles, &db);
  if (!s.ok()) return s;
  DBForTransactions* impl = DBForTransactions::From(db);
  if (impl == nullptr) {
    for (ColumnFamilyHandle* h : *handles) delete h;
    handles->clear();
    delete db;
    return Status::NotSupported("OptimisticTransactionDB needs shale's own DB beneath it");
  }
  *dbptr = new OptimisticTransactionDBImpl(db, impl, occ_options);
  return Status::OK();
}

}  // namespace shale
