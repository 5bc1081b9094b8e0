#include "utilities/transactions/transaction_base.h"

#include <algorithm>
#include <utility>

#include "util/coding.h"

namespace shale {

TransactionBaseImpl::TransactionBaseImpl(DB* db, const WriteOptions& write_options)
    : db_(db),
      write_options_(write_options),
      // One index entry per key: reads want the key's newest state, and a rollback to a
      // save point rebuilds the index from the batch anyway.
      batch_(db->DefaultColumnFamily()->GetComparator(), 0, /*overwrite_key=*/true) {}

TransactionBaseImpl::~TransactionBaseImpl() = default;

void TransactionBaseImpl::SetSnapshot() {
  DB* db = db_;
  snapshot_.reset(db->GetSnapshot(), [db](const Snapshot* s) { db->ReleaseSnapshot(s); });
  snapshot_needed_ = false;
  snapshot_notifier_ = nullptr;
}

void TransactionBaseImpl::SetSnapshotOnNextOperation(
    std::shared_ptr<TransactionNotifier> notifier) {
  snapshot_needed_ = true;
  snapshot_notifier_ = std::move(notifier);
}

void TransactionBaseImpl::SetSnapshotIfNeeded() {
  if (!snapshot_needed_) return;
  std::shared_ptr<TransactionNotifier> notifier = std::move(snapshot_notifier_);
  SetSnapshot();
  if (notifier != nullptr) notifier->SnapshotCreated(snapshot_.get());
}

void TransactionBaseImpl::ClearSnapshot() {
  snapshot_.reset();
  snapshot_needed_ = false;
  snapshot_notifier_ = nullptr;
}

void TransactionBaseImpl::SetSavePoint() {
  save_points_.push_back(SavePoint{snapshot_, snapshot_needed_, snapshot_notifier_, {}});
  batch_.SetSavePoint();
}

Status TransactionBaseImpl::RollbackToSavePoint() {
  if (save_points_.empty()) return Status::NotFound("no save point");
  SavePoint sp = std::move(save_points_.back());
  save_points_.pop_back();
  Status s = batch_.RollbackToSavePoint();
  if (!s.ok()) return s;
  snapshot_ = std::move(sp.snapshot);
  snapshot_needed_ = sp.snapshot_needed;
  snapshot_notifier_ = std::move(sp.notifier);
  // Take back the reads and writes counted since the save point; a key left with none was
  // first tracked after it and is forgotten (and unlocked) altogether.
  for (const auto& [cf_id, added_keys] : sp.new_keys) {
    auto family = tracked_.find(cf_id);
    if (family == tracked_.end()) continue;
    std::vector<std::string> released;
    for (const auto& [key, added] : added_keys) {
      auto it = family->second.find(key);
      if (it == family->second.end()) continue;
      it->second.reads -= std::min(it->second.reads, added.reads);
      it->second.writes -= std::min(it->second.writes, added.writes);
      if (it->second.reads == 0 && it->second.writes == 0) {
        released.push_back(key);
        family->second.erase(it);
      }
    }
    if (family->second.empty()) tracked_.erase(family);
    if (!released.empty()) UnlockKeys(cf_id, released);
  }
  return Status::OK();
}

Status TransactionBaseImpl::PopSavePoint() {
  if (save_points_.empty()) return Status::NotFound("no save point");
  SavePoint sp = std::move(save_points_.back());
  save_points_.pop_back();
  // The counts now belong to the enclosing save point, if there is one.
  if (!save_points_.empty()) {
    TrackedKeys& outer = save_points_.back().new_keys;
    for (const auto& [cf_id, added_keys] : sp.new_keys) {
      for (const auto& [key, added] : added_keys) {
        TrackedKey& k = outer[cf_id][key];
        k.reads += added.reads;
        k.writes += added.writes;
      }
    }
  }
  return batch_.PopSavePoint();
}

void TransactionBaseImpl::TrackKey(uint32_t cf_id, const std::string& key, SequenceNumber seq,
                                   bool read_only, bool exclusive) {
  auto [it, inserted] = tracked_[cf_id].try_emplace(key);
  TrackedKey& k = it->second;
  k.seq = inserted ? seq : std::min(k.seq, seq);
  k.exclusive = k.exclusive || exclusive;
  (read_only ? k.reads : k.writes)++;
  if (!save_points_.empty()) {
    TrackedKey& added = save_points_.back().new_keys[cf_id][key];
    (read_only ? added.reads : added.writes)++;
  }
}

const TransactionBaseImpl::TrackedKey* TransactionBaseImpl::FindTracked(
    uint32_t cf_id, const std::string& key) const {
  auto family = tracked_.find(cf_id);
  if (family == tracked_.end()) return nullptr;
  auto it = family->second.find(key);
  return it == family->second.end() ? nullptr : &it->second;
}

uint64_t TransactionBaseImpl::GetNumKeys() const {
  uint64_t n = 0;
  for (const auto& [cf_id, keys] : tracked_) n += keys.size();
  return n;
}

void TransactionBaseImpl::UnlockTracked() {
  for (const auto& [cf_id, keys] : tracked_) {
    std::vector<std::string> names;
    names.reserve(keys.size());
    for (const auto& entry : keys) names.push_back(entry.first);
    UnlockKeys(cf_id, names);
  }
}

ColumnFamilyHandle* TransactionBaseImpl::HandleOf(uint32_t cf_id) const {
  if (cf_id == 0) return db_->DefaultColumnFamily();
  auto it = handles_.find(cf_id);
  return it == handles_.end() ? nullptr : it->second;
}

ColumnFamilyHandle* TransactionBaseImpl::Family(ColumnFamilyHandle* column_family) {
  if (column_family == nullptr) return db_->DefaultColumnFamily();
  const uint32_t id = column_family->GetID();
  if (id != 0) handles_[id] = column_family;
  return column_family;
}

void TransactionBaseImpl::ClearBase() {
  batch_.Clear();
  commit_time_batch_.Clear();
  tracked_.clear();
  handles_.clear();
  save_points_.clear();
  ClearSnapshot();
}

// ---- Reads.

Status TransactionBaseImpl::Get(const ReadOptions& options, ColumnFamilyHandle* column_family,
                                const Slice& key, std::string* value) {
  return batch_.GetFromBatchAndDB(db_, options, Family(column_family), key, value);
}

Status TransactionBaseImpl::Get(const ReadOptions& options, const Slice& key, std::string* value) {
  return Get(options, nullptr, key, value);
}

Status TransactionBaseImpl::Get(const ReadOptions& options, ColumnFamilyHandle* column_family,
                                const Slice& key, PinnableSlice* pinnable_val) {
  return batch_.GetFromBatchAndDB(db_, options, Family(column_family), key, pinnable_val);
}

Status TransactionBaseImpl::Get(const ReadOptions& options, const Slice& key,
                                PinnableSlice* pinnable_val) {
  return Get(options, nullptr, key, pinnable_val);
}

std::vector<Status> TransactionBaseImpl::MultiGet(
    const ReadOptions& options, const std::vector<ColumnFamilyHandle*>& column_family,
    const std::vector<Slice>& keys, std::vector<std::string>* values) {
  values->assign(keys.size(), std::string());
  if (column_family.size() != keys.size()) {
    return std::vector<Status>(keys.size(), Status::InvalidArgument("sizes do not match"));
  }
  std::vector<Status> statuses;
  statuses.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); i++) {
    statuses.push_back(Get(options, column_family[i], keys[i], &(*values)[i]));
  }
  return statuses;
}

std::vector<Status> TransactionBaseImpl::MultiGet(const ReadOptions& options,
                                                  const std::vector<Slice>& keys,
                                                  std::vector<std::string>* values) {
  return MultiGet(options, std::vector<ColumnFamilyHandle*>(keys.size(), nullptr), keys, values);
}

template <typename Value>
Status TransactionBaseImpl::LockAndGet(const ReadOptions& options,
                                       ColumnFamilyHandle* column_family, const Slice& key,
                                       Value* value, bool exclusive, bool do_validate) {
  ColumnFamilyHandle* cf = Family(column_family);
  SetSnapshotIfNeeded();
  Status s = TryLock(cf, key, /*read_only=*/true, exclusive, do_validate, /*assume_tracked=*/false);
  if (!s.ok() || value == nullptr) return s;
  return batch_.GetFromBatchAndDB(db_, options, cf, key, value);
}

Status TransactionBaseImpl::GetForUpdate(const ReadOptions& options,
                                         ColumnFamilyHandle* column_family, const Slice& key,
                                         std::string* value, bool exclusive,
                                         const bool do_validate) {
  return LockAndGet(options, column_family, key, value, exclusive, do_validate);
}

Status TransactionBaseImpl::GetForUpdate(const ReadOptions& options,
                                         ColumnFamilyHandle* column_family, const Slice& key,
                                         PinnableSlice* pinnable_val, bool exclusive,
                                         const bool do_validate) {
  return LockAndGet(options, column_family, key, pinnable_val, exclusive, do_validate);
}

Status TransactionBaseImpl::GetForUpdate(const ReadOptions& options, const Slice& key,
                                         std::string* value, bool exclusive,
                                         const bool do_validate) {
  return GetForUpdate(options, nullptr, key, value, exclusive, do_validate);
}

Status TransactionBaseImpl::GetForUpdate(const ReadOptions& options, const Slice& key,
                                         PinnableSlice* pinnable_val, bool exclusive,
                                         const bool do_validate) {
  return GetForUpdate(options, nullptr, key, pinnable_val, exclusive, do_validate);
}

Iterator* TransactionBaseImpl::GetIterator(const ReadOptions& read_options) {
  return GetIterator(read_options, nullptr);
}

Iterator* TransactionBaseImpl::GetIterator(const ReadOptions& read_options,
                                           ColumnFamilyHandle* column_family) {
  ColumnFamilyHandle* cf = Family(column_family);
  return batch_.NewIteratorWithBase(cf, db_->NewIterator(read_options, cf), &read_options);
}

// ---- Writes.

Status TransactionBaseImpl::CheckBatchSize(Op op, ColumnFamilyHandle* column_family,
                                           const Slice& key, const Slice& value) const {
  if (max_write_batch_size_ == 0) return Status::OK();
  // The record as the batch will encode it: a tag, the family's id unless it is the
  // default family, the key with its length and, for Put and Merge, the value with its
  // length.
  const uint32_t cf_id = column_family == nullptr ? 0 : column_family->GetID();
  size_t record =
      1 + (cf_id == 0 ? 0 : VarintLength(cf_id)) + VarintLength(key.size()) + key.size();
  if (op == Op::kPut || op == Op::kMerge) record += VarintLength(value.size()) + value.size();
  if (batch_.GetDataSize() + record > max_write_batch_size_) {
    return Status::Aborted(Status::kMemoryLimit);
  }
  return Status::OK();
}

Status TransactionBaseImpl::Write(Op op, ColumnFamilyHandle* column_family, const Slice& key,
                                  const Slice& value, bool untracked, bool assume_tracked) {
  Status s = CheckBatchSize(op, column_family, key, value);
  if (!s.ok()) return s;
  ColumnFamilyHandle* cf = Family(column_family);
  SetSnapshotIfNeeded();
  // An untracked write is still locked, so that nobody else writes the key before this
  // transaction commits; it is only spared the check against the snapshot.
  s = TryLock(cf, key, /*read_only=*/false, /*exclusive=*/true, /*do_validate=*/!untracked,
              assume_tracked);
  if (!s.ok()) return s;
  switch (op) {
    case Op::kPut: return batch_.Put(cf, key, value);
    case Op::kMerge: return batch_.Merge(cf, key, value);
    case Op::kDelete: return batch_.Delete(cf, key);
    case Op::kSingleDelete: return batch_.SingleDelete(cf, key);
  }
  return Status::OK();
}

Status TransactionBaseImpl::Put(ColumnFamilyHandle* column_family, const Slice& key,
                                const Slice& value, const bool assume_tracked) {
  return Write(Op::kPut, column_family, key, value, false, assume_tracked);
}
Status TransactionBaseImpl::Put(const Slice& key, const Slice& value) {
  return Write(Op::kPut, nullptr, key, value, false, false);
}
Status TransactionBaseImpl::Merge(ColumnFamilyHandle* column_family, const Slice& key,
                                  const Slice& value, const bool assume_tracked) {
  return Write(Op::kMerge, column_family, key, value, false, assume_tracked);
}
Status TransactionBaseImpl::Merge(const Slice& key, const Slice& value) {
  return Write(Op::kMerge, nullptr, key, value, false, false);
}
Status TransactionBaseImpl::Delete(ColumnFamilyHandle* column_family, const Slice& key,
                                   const bool assume_tracked) {
  return Write(Op::kDelete, column_family, key, Slice(), false, assume_tracked);
}
Status TransactionBaseImpl::Delete(const Slice& key) {
  return Write(Op::kDelete, nullptr, key, Slice(), false, false);
}
Status TransactionBaseImpl::SingleDelete(ColumnFamilyHandle* column_family, const Slice& key,
                                         const bool assume_tracked) {
  return Write(Op::kSingleDelete, column_family, key, Slice(), false, assume_tracked);
}
Status TransactionBaseImpl::SingleDelete(const Slice& key) {
  return Write(Op::kSingleDelete, nullptr, key, Slice(), false, false);
}

Status TransactionBaseImpl::PutUntracked(ColumnFamilyHandle* column_family, const Slice& key,
                                         const Slice& value) {
  return Write(Op::kPut, column_family, key, value, true, false);
}
Status TransactionBaseImpl::PutUntracked(const Slice& key, const Slice& value) {
  return Write(Op::kPut, nullptr, key, value, true, false);
}
Status TransactionBaseImpl::MergeUntracked(ColumnFamilyHandle* column_family, const Slice& key,
                                           const Slice& value) {
  return Write(Op::kMerge, column_family, key, value, true, false);
}
Status TransactionBaseImpl::MergeUntracked(const Slice& key, const Slice& value) {
  return Write(Op::kMerge, nullptr, key, value, true, false);
}
Status TransactionBaseImpl::DeleteUntracked(ColumnFamilyHandle* column_family, const Slice& key) {
  return Write(Op::kDelete, column_family, key, Slice(), true, false);
}
Status TransactionBaseImpl::DeleteUntracked(const Slice& key) {
  return Write(Op::kDelete, nullptr, key, Slice(), true, false);
}
Status TransactionBaseImpl::SingleDeleteUntracked(ColumnFamilyHandle* column_family,
                                                  const Slice& key) {
  return Write(Op::kSingleDelete, column_family, key, Slice(), true, false);
}
Status TransactionBaseImpl::SingleDeleteUntracked(const Slice& key) {
  return Write(Op::kSingleDelete, nullptr, key, Slice(), true, false);
}

}  // namespace shale
