// The batch's newest state per key (the delta) of one column family laid over a base
// iterator of that family, both directions. The delta side never leaves the family's
// entries; index().end() stands for "exhausted" whichever way it ran out.
//
// The delta is walked one key at a time, positioned on the key's newest index entry, which
// decides what the key looks like: a Put shows, a Delete or SingleDelete hides the key and
// the base's entry of the same key. At each position the side whose key comes first in
// the current direction is current; on equal keys the delta wins and both sides move on
// together. Merge operands on top of a key are folded, with the column family's merge
// operator, over the batch's Put (nothing after a Delete) or, when the batch has neither,
// over the base's entry of the same key. A change of direction re-seeks both sides to the current
// key, which is simpler than RocksDB's in-place repositioning and costs one seek per turn.
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "db/merge_helper.h"
#include "utilities/write_batch_with_index/wbwi_index.h"

namespace shale {
namespace wbwi {
namespace {

class BaseDeltaIterator : public Iterator {
 public:
  BaseDeltaIterator(const BatchIndex* bi, uint32_t cf, Iterator* base, const Slice* lower_bound,
                    const Slice* upper_bound, const MergeOperator* merge_operator)
      : bi_(bi),
        cf_(cf),
        cmp_(bi->comparator(cf)),
        base_(base),
        lower_(lower_bound),
        upper_(upper_bound),
        merge_operator_(merge_operator),
        delta_(End()) {}

  bool Valid() const override { return current_ != kNone && status_.ok(); }

  void SeekToFirst() override {
    if (lower_ != nullptr) return Seek(*lower_);
    Start(true);
    base_->SeekToFirst();
    DeltaSettle(bi_->FamilyFirst(cf_));
    Update();
  }

  void SeekToLast() override {
    Start(false);
    if (upper_ != nullptr) {
      // The last key below the exclusive upper bound.
      base_->SeekForPrev(*upper_);
      if (base_->Valid() && cmp_->Compare(base_->key(), *upper_) == 0) base_->Prev();
      DeltaSeekForPrev(*upper_);
      if (delta_ != End() && cmp_->Compare(bi_->Key(*delta_), *upper_) == 0) DeltaStep();
    } else {
      base_->SeekToLast();
      delta_ = bi_->FamilyLast(cf_);
    }
    Update();
  }

  void Seek(const Slice& target) override {
    Start(true);
    const Slice t = (lower_ != nullptr && cmp_->Compare(target, *lower_) < 0) ? *lower_ : target;
    base_->Seek(t);
    DeltaSettle(bi_->InFamily(cf_, bi_->index().lower_bound(IndexProbe{cf_, t, 0})));
    Update();
  }

  void SeekForPrev(const Slice& target) override {
    if (upper_ != nullptr && cmp_->Compare(target, *upper_) >= 0) return SeekToLast();
    Start(false);
    base_->SeekForPrev(target);
    DeltaSeekForPrev(target);
    Update();
  }

  void Next() override {
    if (!forward_) {
      // Turn around: both sides at the current key, moving forward.
      const std::string k = key().ToString();
      Seek(k);
      if (!Valid()) return;
    }
    Advance();
  }

  void Prev() override {
    if (forward_) {
      const std::string k = key().ToString();
      SeekForPrev(k);
      if (!Valid()) return;
    }
    Advance();
  }

  Slice key() const override { return current_ == kBase ? base_->key() : bi_->Key(*delta_); }
  Slice value() const override {
    if (current_ == kBase) return base_->value();
    return merged_ ? Slice(merged_value_) : bi_->Value(*delta_);
  }
  Status status() const override { return status_.ok() ? base_->status() : status_; }

 private:
  enum Current { kNone, kBase, kDelta };

  Index::const_iterator End() const { return bi_->index().end(); }

  void Start(bool forward) {
    forward_ = forward;
    status_ = Status::OK();
    current_ = kNone;
  }

  // delta_ on the newest entry of the key at `it` (end(): exhausted).
  void DeltaSettle(Index::const_iterator it) {
    delta_ = it == End() ? End() : bi_->NewestOfKey(it);
  }
  void DeltaSeekForPrev(const Slice& target) {
    delta_ = bi_->PrevInFamily(
        cf_, bi_->index().upper_bound(IndexProbe{cf_, target, std::numeric_limits<size_t>::max()}));
  }
  // One key on in the current direction. Found by key rather than by walking from delta_,
  // so that records added to the batch since delta_ was set are stepped over too.
  void DeltaStep() {
    const Slice key = bi_->Key(*delta_);
    if (forward_) {
      DeltaSettle(bi_->InFamily(
          cf_, bi_->index().upper_bound(IndexProbe{cf_, key, std::numeric_limits<size_t>::max()})));
    } else {
      delta_ = bi_->PrevInFamily(cf_, bi_->index().lower_bound(IndexProbe{cf_, key, 0}));
    }
  }
  void BaseStep() { forward_ ? base_->Next() : base_->Prev(); }

  // Whether key lies inside the bound ahead of the current direction (the bound behind
  // was applied by the seek).
  bool InBounds(const Slice& key) const {
    if (forward_) return upper_ == nullptr || cmp_->Compare(key, *upper_) < 0;
    return lower_ == nullptr || cmp_->Compare(key, *lower_) >= 0;
  }
  bool BaseValid() const { return base_->Valid() && InBounds(base_->key()); }
  bool DeltaValid() const { return delta_ != End() && InBounds(bi_->Key(*delta_)); }

  // Moves past the current key.
  void Advance() {
    if (current_ == kDelta) {
      if (equal_keys_) BaseStep();
      DeltaStep();
    } else {
      BaseStep();
    }
    Update();
  }

  // Picks the current side, skipping keys the delta deletes.
  void Update() {
    Slice put_value;
    std::vector<Slice> operands;
    while (true) {
      current_ = kNone;
      equal_keys_ = false;
      merged_ = false;
      if (!base_->status().ok()) return;
      const bool base_valid = BaseValid();
      const bool delta_valid = DeltaValid();
      if (!delta_valid) {
        if (base_valid) current_ = kBase;
        return;
      }
      int c = 0;  // > 0: the delta's key comes first in this direction
      if (base_valid) {
        c = cmp_->Compare(base_->key(), bi_->Key(*delta_));
        if (!forward_) c = -c;
        if (c < 0) {
          current_ = kBase;
          return;
        }
      }
      const Lookup r = LookupKey(*bi_, delta_, &put_value, &operands);
      equal_keys_ = base_valid && c == 0;
      if (!operands.empty()) {
        Merge(r, put_value, operands);
        return;
      }
      if (r == Lookup::kFound) {
        current_ = kDelta;
        return;
      }
      // Deleted in the batch: hidden, and so is the base's entry of the same key.
      if (equal_keys_) BaseStep();
      DeltaStep();
    }
  }

  // Shows the key at delta_ as its operands folded over what lies beneath them.
  void Merge(Lookup r, const Slice& put_value, const std::vector<Slice>& operands) {
    if (merge_operator_ == nullptr) {
      status_ = Status::NotSupported(
          "WriteBatchWithIndex iterator: key has Merge operands in the batch and no merge "
          "operator is known; pass the DB's column family handle to NewIteratorWithBase");
      return;
    }
    Slice base_value;
    const Slice* existing = nullptr;
    if (r == Lookup::kFound) {
      existing = &put_value;
    } else if (r == Lookup::kMergeInProgress && equal_keys_) {
      base_value = base_->value();
      existing = &base_value;
    }
    status_ = FullMergeOperands(merge_operator_, bi_->Key(*delta_), existing, operands,
                                &merged_value_, nullptr);
    if (!status_.ok()) return;
    merged_ = true;
    current_ = kDelta;
  }

  const BatchIndex* const bi_;
  const uint32_t cf_;
  const Comparator* const cmp_;  // the family's
  const std::unique_ptr<Iterator> base_;
  const Slice* const lower_;  // inclusive; null: none. The caller's, outlives the iterator.
  const Slice* const upper_;  // exclusive; null: none
  const MergeOperator* const merge_operator_;  // null: none known; the DB's, outlives us
  bool forward_ = true;
  Current current_ = kNone;
  bool equal_keys_ = false;  // current_ == kDelta and the base is at the same key
  bool merged_ = false;      // current_ == kDelta and its value is merged_value_
  std::string merged_value_;
  Index::const_iterator delta_;  // the newest entry of the delta's key, or end()
  Status status_;
};

}  // namespace

Iterator* NewBaseDeltaIterator(const BatchIndex* bi, uint32_t cf, Iterator* base,
                               const Slice* lower_bound, const Slice* upper_bound,
                               const MergeOperator* merge_operator) {
  return new BaseDeltaIterator(bi, cf, base, lower_bound, upper_bound, merge_operator);
}

}  // namespace wbwi
}  // namespace shale
