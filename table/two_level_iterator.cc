#include "table/two_level_iterator.h"

#include <string>

namespace shale {
namespace {

class TwoLevelIterator final : public InternalIterator {
 public:
  TwoLevelIterator(std::unique_ptr<TwoLevelIteratorState> state, InternalIterator* first)
      : state_(std::move(state)), first_(first) {}

  bool Valid() const override { return second_ != nullptr && second_->Valid(); }
  Slice key() const override { return second_->key(); }
  Slice value() const override { return second_->value(); }

  Status status() const override {
    if (!first_->status().ok()) return first_->status();
    if (second_ != nullptr) return second_->status();
    return Status::OK();
  }

  void SeekToFirst() override {
    first_->SeekToFirst();
    InitSecondLevel();
    if (second_ != nullptr) second_->SeekToFirst();
    SkipEmptyForward();
  }

  void SeekToLast() override {
    first_->SeekToLast();
    InitSecondLevel();
    if (second_ != nullptr) second_->SeekToLast();
    SkipEmptyBackward();
  }

  void Seek(const Slice& target) override {
    first_->Seek(target);
    InitSecondLevel();
    if (second_ != nullptr) second_->Seek(target);
    SkipEmptyForward();
    CheckSeek(target, /*forward=*/true);
  }

  void SeekForPrev(const Slice& target) override {
    // Entries <= target lie in the second level of the first bound >= target or before it.
    first_->Seek(target);
    if (!first_->Valid()) {
      if (!first_->status().ok()) {
        SetSecond(nullptr);
        return;
      }
      first_->SeekToLast();
    }
    InitSecondLevel();
    if (second_ != nullptr) second_->SeekForPrev(target);
    SkipEmptyBackward();
    CheckSeek(target, /*forward=*/false);
  }

  void Next() override {
    second_->Next();
    SkipEmptyForward();
  }

  void Prev() override {
    second_->Prev();
    SkipEmptyBackward();
  }

 private:
  bool SecondLevelFailed() const { return second_ != nullptr && !second_->status().ok(); }

  void CheckSeek(const Slice& target, bool forward) {
    if (!first_->status().ok() || SecondLevelFailed()) return;
    Status s = state_->CheckSeek(target, forward, first_.get(), second_.get());
    if (!s.ok()) SetSecond(NewEmptyInternalIterator(s));
  }

  void SkipEmptyForward() {
    while (second_ == nullptr || !second_->Valid()) {
      if (SecondLevelFailed() || !first_->Valid()) {
        if (!SecondLevelFailed()) SetSecond(nullptr);
        return;
      }
      first_->Next();
      InitSecondLevel();
      if (second_ != nullptr) second_->SeekToFirst();
    }
  }

  void SkipEmptyBackward() {
    while (second_ == nullptr || !second_->Valid()) {
      if (SecondLevelFailed() || !first_->Valid()) {
        if (!SecondLevelFailed()) SetSecond(nullptr);
        return;
      }
      first_->Prev();
      InitSecondLevel();
      if (second_ != nullptr) second_->SeekToLast();
    }
  }

  // A failed second level is only replaced by a new seek: the skip loops stop at it, so
  // its error stays visible in status() until then.
  void SetSecond(InternalIterator* iter) { second_.reset(iter); }

  // Points second_ at the second level of the current first-level entry, reusing it when
  // the entry names the same second level.
  void InitSecondLevel() {
    if (!first_->Valid()) {
      SetSecond(nullptr);
      return;
    }
    const Slice handle = first_->value();
    if (second_ != nullptr && second_->status().ok() && handle == Slice(second_handle_)) {
      return;
    }
    second_handle_.assign(handle.data(), handle.size());
    SetSecond(state_->NewSecondLevelIterator(handle));
  }

  std::unique_ptr<TwoLevelIteratorState> state_;
  std::unique_ptr<InternalIterator> first_;
  std::unique_ptr<InternalIterator> second_;
  std::string second_handle_;  // the first-level value second_ was made from
};

}  // namespace

InternalIterator* NewTwoLevelIterator(std::unique_ptr<TwoLevelIteratorState> state,
                                      InternalIterator* first_level) {
  return new TwoLevelIterator(std::move(state), first_level);
}

}  // namespace shale
