#include "utilities/transactions/pessimistic_transaction.h"

#include <algorithm>
#include <set>
#include <utility>

#include "db/db_for_transactions.h"
#include "db/write_batch_internal.h"
#include "utilities/transactions/pessimistic_transaction_db.h"

namespace shale {

namespace {

// RocksDB's bounds on a transaction name.
constexpr size_t kMaxNameLength = 512;

// Milliseconds as the lock manager takes them: microseconds, negative kept (forever).
int64_t LockTimeoutMicros(int64_t ms) { return ms < 0 ? -1 : ms * 1000; }

}  // namespace

PessimisticTransaction::PessimisticTransaction(PessimisticTransactionDB* txn_db,
                                               const WriteOptions& write_options,
                                               const TransactionOptions& txn_options)
    : TransactionBaseImpl(txn_db->ReadDB(), write_options),
      txn_db_(txn_db),
      engine_(txn_db->engine()) {
  Initialize(txn_options);
}

PessimisticTransaction::~PessimisticTransaction() { Release(); }

void PessimisticTransaction::Initialize(const TransactionOptions& txn_options) {
  id_ = txn_db_->NextTransactionID();
  state_.store(STARTED, std::memory_order_release);
  log_number_ = 0;
  skip_concurrency_control_ = txn_options.skip_concurrency_control;
  skip_prepare_ = txn_options.skip_prepare;
  max_write_batch_size_ = txn_options.max_write_batch_size;
  requester_ = LockRequester();
  requester_.id = id_;
  requester_.lock_timeout_us = LockTimeoutMicros(
      txn_options.lock_timeout < 0 ? txn_db_->txn_db_options().transaction_lock_timeout
                                   : txn_options.lock_timeout);
  requester_.deadlock_detect = txn_options.deadlock_detect;
  requester_.deadlock_detect_depth = txn_options.deadlock_detect_depth;
  expiration_time_us_ = 0;
  if (txn_options.expiration >= 0) {
    // Never 0, which means "does not expire".
    expiration_time_us_ = db_->GetEnv()->NowMicros() + txn_options.expiration * 1000 + 1;
    txn_db_->InsertExpirableTransaction(id_, this);
  }
  requester_.expiration_time_us = expiration_time_us_;
  if (txn_options.set_snapshot) SetSnapshot();
}

void PessimisticTransaction::Release() {
  // Out of the expirable registry first: the lock manager may ask about this
  // transaction until then.
  if (expiration_time_us_ > 0) txn_db_->RemoveExpirableTransaction(id_);
  UnlockTracked();
  if (!name_.empty()) txn_db_->UnregisterTransaction(name_, this);
  name_.clear();
  ClearBase();
}

void PessimisticTransaction::Reinitialize(const WriteOptions& write_options,
                                          const TransactionOptions& txn_options) {
  Release();
  write_options_ = write_options;
  Initialize(txn_options);
}

void PessimisticTransaction::SetLockTimeout(int64_t timeout) {
  requester_.lock_timeout_us = LockTimeoutMicros(timeout);
}

bool PessimisticTransaction::IsExpired() const {
  return expiration_time_us_ > 0 && db_->GetEnv()->NowMicros() >= expiration_time_us_;
}

bool PessimisticTransaction::TryStealingLocks() {
  TransactionState expected = STARTED;
  return state_.compare_exchange_strong(expected, LOCKS_STOLEN);
}

Status PessimisticTransaction::SetName(const TransactionName& name) {
  if (GetState() != STARTED)
    return Status::InvalidArgument("Transaction is beyond state for naming.");
  if (!name_.empty()) return Status::InvalidArgument("Transaction has already been named.");
  if (name.empty() || name.size() > kMaxNameLength) {
    return Status::InvalidArgument("Transaction name length must be between 1 and 512 chars.");
  }
  Status s = txn_db_->RegisterTransaction(name, this);
  if (s.ok()) name_ = name;
  return s;
}

// ---- Locks.

Status PessimisticTransaction::TryLock(ColumnFamilyHandle* cf, const Slice& key, bool read_only,
                                       bool exclusive, bool do_validate, bool assume_tracked) {
  // A prepared transaction's writes are in the WAL already; one more would be committed
  // now but lost to a crash before the commit.
  if (!read_only && GetState() != STARTED) {
    return Status::InvalidArgument("Transaction is not in state for writes.");
  }
  if (skip_concurrency_control_) return Status::OK();
  const uint32_t cf_id = cf->GetID();
  std::string k = key.ToString();
  const TrackedKey* tracked = FindTracked(cf_id, k);
  const bool previously_locked = tracked != nullptr;
  if (assume_tracked && !previously_locked) {
    return Status::InvalidArgument("assume_tracked is set but the key is not locked");
  }
  SequenceNumber seq = previously_locked ? tracked->seq : kMaxSequenceNumber;
  if (!previously_locked || (exclusive && !tracked->exclusive)) {
    Status s = txn_db_->lock_manager()->TryLock(requester_, cf_id, k, exclusive);
    if (!s.ok()) return restoring_ ? Status::OK() : s;
  }
  if (do_validate && !assume_tracked && GetSnapshot() != nullptr) {
    Status s = ValidateSnapshot(cf, k, &seq);
    if (!s.ok()) {
      // A lock taken for this call only is given back; an upgraded one stays exclusive,
      // which is more than needed but never wrong.
      if (!previously_locked) txn_db_->lock_manager()->UnLock(id_, cf_id, k);
      return s;
    }
  } else if (seq == kMaxSequenceNumber) {
    // Unchecked: all that is known is that nobody wrote the key after it was locked.
    seq = db_->GetLatestSequenceNumber();
  }
  TrackKey(cf_id, k, seq, read_only, exclusive);
  return Status::OK();
}

Status PessimisticTransaction::ValidateSnapshot(ColumnFamilyHandle* cf, const std::string& key,
                                                SequenceNumber* seq) {
  const SequenceNumber snap = GetSnapshot()->GetSequenceNumber();
  // Already known good at or before the snapshot: a later write would have needed the
  // lock this transaction holds.
  if (*seq <= snap) return Status::OK();
  SequenceNumber latest;
  bool found;
  Status s = engine_->GetLatestSequenceForKey(cf, key, /*cache_only=*/false, &latest, &found);
  if (!s.ok()) return s;
  if (found && !VisibleAt(latest, snap)) {
    return Status::Busy("key written after the transaction's snapshot");
  }
  *seq = snap;
  return Status::OK();
}

void PessimisticTransaction::UnlockKeys(uint32_t cf_id, const std::vector<std::string>& keys) {
  if (keys.empty() || skip_concurrency_control_) return;
  txn_db_->lock_manager()->UnLock(id_, cf_id, keys);
}

// ---- The state machine.

Status PessimisticTransaction::Prepare() {
  if (name_.empty()) {
    return Status::InvalidArgument("Cannot prepare a transaction that has not been named.");
  }
  TransactionState state = GetState();
  switch (state) {
    case PREPARED: return Status::InvalidArgument("Transaction has already been prepared.");
    case COMMITTED: return Status::InvalidArgument("Transaction has already been committed.");
    case ROLLEDBACK: return Status::InvalidArgument("Transaction has already been rolledback.");
    case LOCKS_STOLEN: return Status::Expired();
    case STARTED: break;
    default: return Status::InvalidArgument("Transaction is not in state for prepare.");
  }
  if (IsExpired()) return Status::Expired();
  // Leaving STARTED keeps the locks from being stolen from here on.
  if (!state_.compare_exchange_strong(state, AWAITING_PREPARE)) return Status::Expired();
  Status s = PrepareInternal();
  state_.store(s.ok() ? PREPARED : STARTED, std::memory_order_release);
  return s;
}

Status PessimisticTransaction::Commit() {
  TransactionState state = GetState();
  switch (state) {
    case COMMITTED: return Status::InvalidArgument("Transaction has already been committed.");
    case ROLLEDBACK: return Status::InvalidArgument("Transaction has already been rolledback.");
    case LOCKS_STOLEN: return Status::Expired();
    case STARTED:
      if (!skip_prepare_) return Status::TxnNotPrepared();
      break;
    case PREPARED: break;
    default: return Status::InvalidArgument("Transaction is not in state for commit.");
  }
  if (IsExpired()) return Status::Expired();
  if (!state_.compare_exchange_strong(state, AWAITING_COMMIT)) return Status::Expired();
  Status s = state == PREPARED ? CommitInternal() : CommitWithoutPrepareInternal();
  if (!s.ok()) {
    state_.store(state, std::memory_order_release);
    return s;
  }
  Release();
  state_.store(COMMITTED, std::memory_order_release);
  return s;
}

Status PessimisticTransaction::Rollback() {
  TransactionState state = GetState();
  switch (state) {
    case PREPARED: {
      state_.store(AWAITING_ROLLBACK, std::memory_order_release);
      Status s = RollbackInternal();
      if (!s.ok()) {
        state_.store(PREPARED, std::memory_order_release);
        return s;
      }
      Release();
      state_.store(ROLLEDBACK, std::memory_order_release);
      return s;
    }
    case STARTED:
    case LOCKS_STOLEN: {
      // Nothing reached the WAL: dropping the writes and the locks is the whole rollback.
      // The name stays, so that the transaction can go on (RocksDB's behaviour).
      UnlockTracked();
      ClearBase();
      return Status::OK();
    }
    case COMMITTED: return Status::InvalidArgument("Transaction has already been committed.");
    default: return Status::InvalidArgument("Transaction is not in state for rollback.");
  }
}

// ---- Writes from outside a transaction, and recovery.

namespace {

// The keys a batch writes (merged into only if with_merges), by family, sorted and
// without duplicates.
class KeyCollector : public WriteBatch::Handler {
 public:
  explicit KeyCollector(bool with_merges) : with_merges_(with_merges) {}
  std::map<uint32_t, std::set<std::string>> keys;

  Status PutCF(uint32_t cf, const Slice& key, const Slice&) override { return Add(cf, key); }
  Status DeleteCF(uint32_t cf, const Slice& key) override { return Add(cf, key); }
  Status SingleDeleteCF(uint32_t cf, const Slice& key) override { return Add(cf, key); }
  Status MergeCF(uint32_t cf, const Slice& key, const Slice&) override {
    return with_merges_ ? Add(cf, key) : Status::OK();
  }

 private:
  Status Add(uint32_t cf, const Slice& key) {
    keys[cf].insert(key.ToString());
    return Status::OK();
  }

  const bool with_merges_;
};

// The keys of a batch as slices into it, by family, in batch order.
class SliceCollector : public WriteBatch::Handler {
 public:
  explicit SliceCollector(std::map<uint32_t, std::vector<Slice>>* keys) : keys_(keys) {}
  Status PutCF(uint32_t cf, const Slice& key, const Slice&) override { return Add(cf, key); }
  Status DeleteCF(uint32_t cf, const Slice& key) override { return Add(cf, key); }
  Status SingleDeleteCF(uint32_t cf, const Slice& key) override { return Add(cf, key); }
  Status MergeCF(uint32_t cf, const Slice& key, const Slice&) override { return Add(cf, key); }

 private:
  Status Add(uint32_t cf, const Slice& key) {
    (*keys_)[cf].push_back(key);
    return Status::OK();
  }
  std::map<uint32_t, std::vector<Slice>>* const keys_;
};

// Replays a batch's records into a transaction, as its own writes, each in its family.
// Records of a family the DB no longer has (dropped after the prepare) are left out: their
// data went with the family.
class TransactionReplayer : public WriteBatch::Handler {
 public:
  TransactionReplayer(Transaction* txn, const std::map<uint32_t, ColumnFamilyHandle*>& families)
      : txn_(txn), families_(families) {}
  Status PutCF(uint32_t cf, const Slice& key, const Slice& value) override {
    ColumnFamilyHandle* h = Find(cf);
    return h == nullptr ? Status::OK() : txn_->Put(h, key, value);
  }
  Status DeleteCF(uint32_t cf, const Slice& key) override {
    ColumnFamilyHandle* h = Find(cf);
    return h == nullptr ? Status::OK() : txn_->Delete(h, key);
  }
  Status SingleDeleteCF(uint32_t cf, const Slice& key) override {
    ColumnFamilyHandle* h = Find(cf);
    return h == nullptr ? Status::OK() : txn_->SingleDelete(h, key);
  }
  Status MergeCF(uint32_t cf, const Slice& key, const Slice& value) override {
    ColumnFamilyHandle* h = Find(cf);
    return h == nullptr ? Status::OK() : txn_->Merge(h, key, value);
  }

 private:
  ColumnFamilyHandle* Find(uint32_t cf) const {
    auto it = families_.find(cf);
    return it == families_.end() ? nullptr : it->second;
  }
  Transaction* const txn_;
  const std::map<uint32_t, ColumnFamilyHandle*>& families_;
};

}  // namespace

Status PessimisticTransaction::PreparedBatch(WriteBatch* prepared, PreparePolicy policy) {
  // The Noop becomes BeginPrepare when the end marker is added.
  WriteBatchInternal::InsertNoop(prepared);
  Status s = WriteBatchInternal::Append(prepared, batch_.GetWriteBatch());
  if (s.ok()) s = WriteBatchInternal::MarkEndPrepare(prepared, name_, policy);
  return s;
}

Status PessimisticTransaction::RecordsToCommit(WriteBatch* combined, WriteBatch** records) {
  *records = batch_.GetWriteBatch();
  if (WriteBatchInternal::Count(&commit_time_batch_) > 0) {
    *combined = **records;
    Status s = WriteBatchInternal::Append(combined, &commit_time_batch_);
    if (!s.ok()) return s;
    *records = combined;
  }
  if (WriteBatchInternal::Count(*records) == 0) *records = nullptr;
  return Status::OK();
}

Status CollectWrittenKeys(const WriteBatch& batch, std::map<uint32_t, std::set<std::string>>* keys,
                          bool with_merges) {
  KeyCollector collector(with_merges);
  Status s = batch.Iterate(&collector);
  keys->swap(collector.keys);
  return s;
}

Status CollectSortedKeys(const WriteBatch& batch, std::map<uint32_t, std::vector<Slice>>* keys) {
  keys->clear();
  SliceCollector collector(keys);
  Status s = batch.Iterate(&collector);
  if (!s.ok()) return s;
  auto less = [](const Slice& a, const Slice& b) { return a.compare(b) < 0; };
  for (auto& [cf, family_keys] : *keys) {
    std::sort(family_keys.begin(), family_keys.end(), less);
    family_keys.erase(std::unique(family_keys.begin(), family_keys.end()), family_keys.end());
  }
  return s;
}

Status PessimisticTransaction::RestorePrepared(
    const RecoveredTransaction& recovered,
    const std::map<uint32_t, ColumnFamilyHandle*>& families) {
  TransactionReplayer replayer(this, families);
  restoring_ = true;
  Status s = recovered.batch.Iterate(&replayer);
  restoring_ = false;
  if (!s.ok()) return s;
  log_number_ = recovered.log_number;
  OnRestored(recovered);
  state_.store(PREPARED, std::memory_order_release);
  return Status::OK();
}

}  // namespace shale
