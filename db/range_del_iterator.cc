#include "db/range_del_iterator.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "util/dbformat.h"

namespace shale {

namespace {

class RangeDelIterator final : public InternalIterator {
 public:
  RangeDelIterator(InternalIterator* source, std::shared_ptr<const FragmentedRangeTombstones> newer,
                   std::shared_ptr<const FragmentedRangeTombstones> newer2,
                   std::shared_ptr<const FragmentedRangeTombstones> own, SequenceNumber snapshot,
                   ReadCallback* callback)
      : source_(source),
        newer_{std::move(newer), std::move(newer2)},
        own_(std::move(own)),
        snapshot_(snapshot),
        callback_(callback) {}
  ~RangeDelIterator() override { delete source_; }

  bool Valid() const override { return source_->Valid(); }
  void SeekToFirst() override {
    source_->SeekToFirst();
    SkipForward();
  }
  void SeekToLast() override {
    source_->SeekToLast();
    SkipBackward();
  }
  void Seek(const Slice& target) override {
    source_->Seek(target);
    SkipForward();
  }
  void SeekForPrev(const Slice& target) override {
    source_->SeekForPrev(target);
    SkipBackward();
  }
  void Next() override {
    source_->Next();
    SkipForward();
  }
  void Prev() override {
    source_->Prev();
    SkipBackward();
  }
  Slice key() const override { return source_->key(); }
  Slice value() const override { return source_->value(); }
  Status status() const override { return source_->status(); }
  bool IsKeyPinned() const override { return source_->IsKeyPinned(); }
  bool IsValuePinned() const override { return source_->IsValuePinned(); }

 private:
  // What covers the current entry: kNone, kNewer (fragment *fragment of *list, one of
  // newer_, seen by the read) or kOwn (a tombstone of this source newer than the entry).
  enum Cover { kNone, kNewer, kOwn };
  Cover Covered(const FragmentedRangeTombstones** list, size_t* fragment) {
    ParsedInternalKey parsed;
    if (!ParseInternalKey(source_->key(), &parsed).ok()) {
      return kNone;  // the DBIter reports a malformed key
    }
    for (const auto& newer : newer_) {
      if (newer == nullptr) continue;
      const size_t i = newer->FindFragment(parsed.user_key);
      if (newer->FragmentCovers(i, parsed.user_key) &&
          newer->VisibleSeq(i, snapshot_, callback_) != 0) {
        *list = newer.get();
        *fragment = i;
        return kNewer;
      }
    }
    if (own_ != nullptr && parsed.sequence <= snapshot_ &&
        own_->MaxCoveringSeq(parsed.user_key, snapshot_, callback_) > parsed.sequence) {
      return kOwn;
    }
    return kNone;
  }

  void SkipForward() {
    const FragmentedRangeTombstones* list = nullptr;
    size_t f = 0;
    while (source_->Valid()) {
      const Cover c = Covered(&list, &f);
      if (c == kNone) return;
      if (c == kOwn) {
        source_->Next();
        continue;
      }
      // Past every entry of the fragment: its end's first internal key.
      target_.clear();
      AppendInternalKey(&target_, ParsedInternalKey(list->fragment(f).end, kMaxSequenceNumber,
                                                    kValueTypeForSeek));
      source_->Seek(target_);
    }
  }

  void SkipBackward() {
    const FragmentedRangeTombstones* list = nullptr;
    size_t f = 0;
    while (source_->Valid()) {
      const Cover c = Covered(&list, &f);
      if (c == kNone) return;
      if (c == kOwn) {
        source_->Prev();
        continue;
      }
      // Before every entry of the fragment: the last entry below its begin's first
      // internal key.
      target_.clear();
      AppendInternalKey(&target_, ParsedInternalKey(list->fragment(f).begin, kMaxSequenceNumber,
                                                    kValueTypeForSeek));
      source_->SeekForPrev(target_);
      // SeekForPrev lands on an entry <= target; one of begin's own user key would sort
      // after target unless its sequence is kMaxSequenceNumber, which no entry has.
    }
  }

  InternalIterator* const source_;
  const std::shared_ptr<const FragmentedRangeTombstones> newer_[2];
  const std::shared_ptr<const FragmentedRangeTombstones> own_;
  const SequenceNumber snapshot_;
  ReadCallback* const callback_;
  std::string target_;
};

class CoveredEntryDropper final : public InternalIterator {
 public:
  CoveredEntryDropper(InternalIterator* source, const FragmentedRangeTombstones& tombstones,
                      std::vector<SequenceNumber> snapshots)
      : source_(source),
        snapshots_(std::move(snapshots)),
        // One sequence per stripe and fragment: the newest, which decides.
        striped_(tombstones.ToTombstones(), tombstones.comparator(), snapshots_) {}
  ~CoveredEntryDropper() override { delete source_; }

  bool Valid() const override { return source_->Valid(); }
  void SeekToFirst() override {
    source_->SeekToFirst();
    Skip();
  }
  void Seek(const Slice& target) override {
    source_->Seek(target);
    Skip();
  }
  void Next() override {
    source_->Next();
    Skip();
  }
  // Flushes and compactions read forward only.
  void SeekToLast() override { Unsupported(); }
  void SeekForPrev(const Slice&) override { Unsupported(); }
  void Prev() override { Unsupported(); }
  Slice key() const override { return source_->key(); }
  Slice value() const override { return source_->value(); }
  Status status() const override { return unsupported_.ok() ? source_->status() : unsupported_; }
  bool IsKeyPinned() const override { return source_->IsKeyPinned(); }
  bool IsValuePinned() const override { return source_->IsValuePinned(); }

 private:
  void Unsupported() {
    unsupported_ = Status::NotSupported("a flush or compaction input reads forward only");
  }
  size_t Stripe(SequenceNumber s) const {
    return std::lower_bound(snapshots_.begin(), snapshots_.end(), s) - snapshots_.begin();
  }
  bool Dropped() const {
    ParsedInternalKey parsed;
    if (!ParseInternalKey(source_->key(), &parsed).ok()) return false;
    const size_t i = striped_.FindFragment(parsed.user_key);
    if (!striped_.FragmentCovers(i, parsed.user_key)) return false;
    const FragmentedRangeTombstones::Fragment& f = striped_.fragment(i);
    const size_t stripe = Stripe(parsed.sequence);
    for (size_t k = f.first_seq; k < f.last_seq; k++) {
      const SequenceNumber t = striped_.seqs()[k];
      if (t <= parsed.sequence) return false;  // the rest are older still
      if (Stripe(t) == stripe) return true;
    }
    return false;
  }
  void Skip() {
    while (source_->Valid() && Dropped()) source_->Next();
  }

  InternalIterator* const source_;
  const std::vector<SequenceNumber> snapshots_;
  const FragmentedRangeTombstones striped_;
  Status unsupported_;
};

}  // namespace

InternalIterator* NewCoveredEntryDropper(InternalIterator* source,
                                         const FragmentedRangeTombstones* tombstones,
                                         const std::vector<SequenceNumber>& snapshots) {
  if (tombstones == nullptr || tombstones->empty()) return source;
  return new CoveredEntryDropper(source, *tombstones, snapshots);
}

InternalIterator* NewRangeDelIterator(InternalIterator* source,
                                      std::shared_ptr<const FragmentedRangeTombstones> newer,
                                      std::shared_ptr<const FragmentedRangeTombstones> newer2,
                                      std::shared_ptr<const FragmentedRangeTombstones> own,
                                      SequenceNumber snapshot, ReadCallback* callback) {
  if (newer != nullptr && newer->empty()) newer.reset();
  if (newer2 != nullptr && newer2->empty()) newer2.reset();
  if (own != nullptr && own->empty()) own.reset();
  if (newer == nullptr && newer2 == nullptr && own == nullptr) return source;
  return new RangeDelIterator(source, std::move(newer), std::move(newer2), std::move(own), snapshot,
                              callback);
}

std::shared_ptr<const FragmentedRangeTombstones> MergeRangeTombstones(
    const std::shared_ptr<const FragmentedRangeTombstones>& a,
    const std::shared_ptr<const FragmentedRangeTombstones>& b, const Comparator* ucmp) {
  if (a == nullptr || a->empty()) return b;
  if (b == nullptr || b->empty()) return a;
  std::vector<RangeTombstone> all = a->ToTombstones();
  std::vector<RangeTombstone> more = b->ToTombstones();
  all.insert(all.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  return std::make_shared<const FragmentedRangeTombstones>(std::move(all), ucmp);
}

}  // namespace shale
