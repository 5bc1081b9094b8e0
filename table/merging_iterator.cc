// One binary heap of child cursors, ordered for the current direction: a min-heap by
// (key, child index) going forward, a max-heap by the same pair going backward. The top is
// the current entry. Switching direction repositions every other child on the far side of
// the current (key, index) and rebuilds the heap, so the merged order is the same total
// order in both directions even when children share keys.

#include "table/merging_iterator.h"

#include <memory>
#include <utility>
#include <vector>

namespace shale {
namespace {

class MergingIterator final : public InternalIterator {
 public:
  MergingIterator(const InternalKeyComparator* cmp, InternalIterator** children, int n)
      : cmp_(cmp) {
    children_.reserve(n);
    for (int i = 0; i < n; i++) children_.push_back(Child{children[i], i});
    heap_.reserve(n);
  }

  ~MergingIterator() override {
    for (Child& c : children_) delete c.iter;
  }

  bool Valid() const override { return current_ != nullptr && status_.ok(); }

  void SeekToFirst() override {
    status_ = Status::OK();
    for (Child& c : children_) c.iter->SeekToFirst();
    Rebuild(kForward);
  }

  void SeekToLast() override {
    status_ = Status::OK();
    for (Child& c : children_) c.iter->SeekToLast();
    Rebuild(kReverse);
  }

  void Seek(const Slice& target) override {
    status_ = Status::OK();
    for (Child& c : children_) c.iter->Seek(target);
    Rebuild(kForward);
  }

  void SeekForPrev(const Slice& target) override {
    status_ = Status::OK();
    for (Child& c : children_) c.iter->SeekForPrev(target);
    Rebuild(kReverse);
  }

  void Next() override {
    if (!Valid()) return;
    if (direction_ != kForward) SwitchToForward();
    if (!Valid()) return;
    current_->iter->Next();
    FixTopAfterMove();
  }

  void Prev() override {
    if (!Valid()) return;
    if (direction_ != kReverse) SwitchToReverse();
    if (!Valid()) return;
    current_->iter->Prev();
    FixTopAfterMove();
  }

  Slice key() const override { return current_->iter->key(); }
  Slice value() const override { return current_->iter->value(); }
  Status status() const override { return status_; }

  bool IsKeyPinned() const override { return Valid() && current_->iter->IsKeyPinned(); }
  bool IsValuePinned() const override { return Valid() && current_->iter->IsValuePinned(); }

 private:
  enum Direction { kForward, kReverse };

  struct Child {
    InternalIterator* iter;  // owned
    int index;
  };

  // Whether a goes before b in the merged order of the current direction.
  bool Before(const Child* a, const Child* b) const {
    int r = cmp_->Compare(a->iter->key(), b->iter->key());
    if (r == 0) r = a->index < b->index ? -1 : (a->index > b->index ? 1 : 0);
    return direction_ == kForward ? r < 0 : r > 0;
  }

  void NoteInvalidChild(const Child& c) {
    if (status_.ok()) {
      Status s = c.iter->status();
      if (!s.ok()) status_ = std::move(s);
    }
  }

  // Builds the heap of direction d from the children where they stand now.
  void Rebuild(Direction d) {
    direction_ = d;
    heap_.clear();
    for (Child& c : children_) {
      if (c.iter->Valid()) {
        heap_.push_back(&c);
      } else {
        NoteInvalidChild(c);
      }
    }
    for (size_t i = heap_.size() / 2; i-- > 0;) SiftDown(i);
    current_ = heap_.empty() ? nullptr : heap_[0];
  }

  // The top child has moved: restore the heap and the current entry.
  void FixTopAfterMove() {
    if (current_->iter->Valid()) {
      SiftDown(0);
    } else {
      NoteInvalidChild(*current_);
      heap_[0] = heap_.back();
      heap_.pop_back();
      if (!heap_.empty()) SiftDown(0);
    }
    current_ = heap_.empty() ? nullptr : heap_[0];
  }

  void SiftDown(size_t i) {
    const size_t n = heap_.size();
    Child* item = heap_[i];
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && Before(heap_[child + 1], heap_[child])) child++;
      if (!Before(heap_[child], item)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = item;
  }

  // Going forward, a child before the current one (by index) must stand past the current
  // key, a child after it may stand on the current key itself.
  void SwitchToForward() {
    const Slice target = key();  // stays valid: the current child does not move here
    for (Child& c : children_) {
      if (&c == current_) continue;
      c.iter->Seek(target);
      if (c.index < current_->index && c.iter->Valid() &&
          cmp_->Compare(c.iter->key(), target) == 0) {
        c.iter->Next();
      }
    }
    Rebuild(kForward);
  }

  // The mirror image of SwitchToForward.
  void SwitchToReverse() {
    const Slice target = key();
    for (Child& c : children_) {
      if (&c == current_) continue;
      c.iter->SeekForPrev(target);
      if (c.index > current_->index && c.iter->Valid() &&
          cmp_->Compare(c.iter->key(), target) == 0) {
        c.iter->Prev();
      }
    }
    Rebuild(kReverse);
  }

  const InternalKeyComparator* const cmp_;
  std::vector<Child> children_;  // never resized after construction: heap_ points into it
  std::vector<Child*> heap_;
  Child* current_ = nullptr;  // heap_[0], or null when the heap is empty
  Direction direction_ = kForward;
  Status status_;
};

}  // namespace

InternalIterator* NewMergingIterator(const InternalKeyComparator* cmp, InternalIterator** children,
                                     int n) {
  if (n <= 0) return NewEmptyInternalIterator();
  if (n == 1) return children[0];
  return new MergingIterator(cmp, children, n);
}

}  // namespace shale
