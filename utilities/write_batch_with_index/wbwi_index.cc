// BatchIndex (the sorted index over a WriteBatch's records), the lookup of one key, and
// WBWIIterator over the index.
#include "utilities/write_batch_with_index/wbwi_index.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <string>

#include "util/coding.h"

namespace shale {
namespace wbwi {

BatchIndex::BatchIndex(const Comparator* cmp, size_t reserved_bytes, bool overwrite_key)
    : cmps_(cmp == nullptr ? BytewiseComparator() : cmp),
      overwrite_key_(overwrite_key),
      batch_(reserved_bytes),
      index_(IndexOrder(&batch_, &cmps_)) {}

void BatchIndex::AddLast(uint32_t cf, WriteType type, const Slice& key, const Slice& value) {
  // A Put or Merge ends with varint(key size) key varint(value size) value; a deletion
  // with varint(key size) key. Both sizes are known, so the offsets follow from the end.
  const size_t end = batch_.Data().size();
  const bool has_value = type == kPutRecord || type == kMergeRecord;
  const size_t value_offset = end - value.size();
  const size_t key_offset =
      has_value ? value_offset - VarintLength(value.size()) - key.size() : end - key.size();
  Add(cf, type, key_offset, key.size(), has_value ? value_offset : end,
      has_value ? value.size() : 0);
}

void BatchIndex::Add(uint32_t cf, WriteType type, size_t key_offset, size_t key_size,
                     size_t value_offset, size_t value_size) {
  if (overwrite_key_ && type != kMergeRecord) {
    // The key's newest entry takes the new record (Merge operands accumulate instead, as
    // RocksDB's index does). Its order stays that of the older record, which is still
    // the largest among the key's entries.
    auto newest = Newest(cf, Slice(batch_.Data().data() + key_offset, key_size));
    if (newest != index_.end()) {
      newest->value_offset = value_offset;
      newest->value_size = static_cast<uint32_t>(value_size);
      newest->type = type;
      return;
    }
  }
  index_.insert(IndexEntry{cf, key_offset, static_cast<uint32_t>(key_size), value_offset,
                           static_cast<uint32_t>(value_size), type});
}

namespace {

// Indexes every record of a batch, computing offsets from the slices the parser hands out
// (they point into the batch's bytes).
class Reindexer : public WriteBatch::Handler {
 public:
  explicit Reindexer(BatchIndex* bi) : bi_(bi), base_(bi->batch()->Data().data()) {}
  Status PutCF(uint32_t cf, const Slice& key, const Slice& value) override {
    return Take(cf, kPutRecord, key, value);
  }
  Status DeleteCF(uint32_t cf, const Slice& key) override {
    return Take(cf, kDeleteRecord, key, Slice(key.data() + key.size(), 0));
  }
  Status SingleDeleteCF(uint32_t cf, const Slice& key) override {
    return Take(cf, kSingleDeleteRecord, key, Slice(key.data() + key.size(), 0));
  }
  Status MergeCF(uint32_t cf, const Slice& key, const Slice& value) override {
    return Take(cf, kMergeRecord, key, value);
  }
  // A transaction's markers (its batch once prepared or committed) are not records of
  // keys: passed over, as RocksDB's index does.
  Status MarkBeginPrepare(bool) override { return Status::OK(); }
  Status MarkEndPrepare(const Slice&) override { return Status::OK(); }
  Status MarkCommit(const Slice&) override { return Status::OK(); }
  Status MarkRollback(const Slice&) override { return Status::OK(); }

 private:
  Status Take(uint32_t cf, WriteType type, const Slice& key, const Slice& value) {
    bi_->Add(cf, type, key.data() - base_, key.size(), value.data() - base_, value.size());
    return Status::OK();
  }
  BatchIndex* const bi_;
  const char* const base_;
};

}  // namespace

Status BatchIndex::Rebuild() {
  index_.clear();
  Reindexer reindexer(this);
  return batch_.Iterate(&reindexer);
}

Index::const_iterator BatchIndex::Newest(uint32_t cf, const Slice& key) const {
  auto it =
      PrevInFamily(cf, index_.upper_bound(IndexProbe{cf, key, std::numeric_limits<size_t>::max()}));
  return it != index_.end() && comparator(cf)->Compare(Key(*it), key) == 0 ? it : index_.end();
}

Index::const_iterator BatchIndex::NewestOfKey(Index::const_iterator it) const {
  for (auto next = std::next(it); next != index_.end() && SameKey(*next, *it); ++next) it = next;
  return it;
}

Lookup LookupKey(const BatchIndex& bi, Index::const_iterator newest, Slice* value,
                 std::vector<Slice>* operands) {
  operands->clear();
  if (newest == bi.index().end()) return Lookup::kNotFound;
  Lookup result = Lookup::kMergeInProgress;
  auto it = newest;
  while (true) {
    if (it->type == kPutRecord) {
      *value = bi.Value(*it);
      result = Lookup::kFound;
      break;
    }
    if (it->type == kDeleteRecord || it->type == kSingleDeleteRecord) {
      result = Lookup::kDeleted;
      break;
    }
    operands->push_back(bi.Value(*it));  // a Merge; collected newest first
    if (it == bi.index().begin()) break;
    --it;
    if (!bi.SameKey(*it, *newest)) break;
  }
  std::reverse(operands->begin(), operands->end());
  return result;
}

namespace {

class IndexIterator : public WBWIIterator {
 public:
  IndexIterator(const BatchIndex* bi, uint32_t cf, const Status& status)
      : bi_(bi), cf_(cf), it_(bi->index().end()), status_(status) {}

  bool Valid() const override { return status_.ok() && it_ != bi_->index().end(); }
  void SeekToFirst() override { it_ = bi_->FamilyFirst(cf_); }
  void SeekToLast() override { it_ = bi_->FamilyLast(cf_); }
  void Seek(const Slice& key) override {
    it_ = bi_->InFamily(cf_, bi_->index().lower_bound(IndexProbe{cf_, key, 0}));
  }
  void SeekForPrev(const Slice& key) override {
    it_ = bi_->PrevInFamily(
        cf_, bi_->index().upper_bound(IndexProbe{cf_, key, std::numeric_limits<size_t>::max()}));
  }
  void Next() override { it_ = bi_->InFamily(cf_, std::next(it_)); }
  void Prev() override { it_ = bi_->PrevInFamily(cf_, it_); }
  WriteEntry Entry() const override { return bi_->Entry(*it_); }
  Status status() const override { return status_; }

 private:
  const BatchIndex* const bi_;
  const uint32_t cf_;
  Index::const_iterator it_;  // end(): not positioned
  const Status status_;
};

}  // namespace

WBWIIterator* NewIndexIterator(const BatchIndex* bi, uint32_t cf, const Status& status) {
  return new IndexIterator(bi, cf, status);
}

}  // namespace wbwi
}  // namespace shale
