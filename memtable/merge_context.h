// MergeContext: the merge operands a point lookup gathers for one user key on its way down
// the tree (memtable, immutable memtables, L0 files, deeper levels), newest first as they
// are found, and how the bytes of each stay alive until the lookup has used them.
//
// An operand is held one of three ways, chosen by whoever finds it:
//  - by reference (PushOperand): the memory outlives the context by the caller's promise
//    (a memtable the lookup's SuperVersion keeps referenced);
//  - copied (PushOperandCopy), for bytes valid only during a callback;
//  - pinned (PushOperandPinned): a Cleanable whose cleanups keep the memory alive (a cached
//    block, a memtable reference) travels with the operand and can be handed to a
//    PinnableSlice, so the operand outlives the lookup (GetMergeOperands).
//
// Options for the lookup that fills it: merge_operator (may be null) answers ShouldMerge;
// want_pins asks finders to pin rather than reference or copy; base_as_operand asks them to
// push a Put found beneath the operands as the oldest operand instead of returning it as the
// value (GetMergeOperands reports it that way).
//
// Thread safety: one lookup, one thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "shale/cleanable.h"
#include "shale/merge_operator.h"
#include "shale/slice.h"

namespace shale {

class MergeContext {
 public:
  MergeContext() = default;
  MergeContext(const MergeContext&) = delete;
  MergeContext& operator=(const MergeContext&) = delete;

  const MergeOperator* merge_operator = nullptr;  // for ShouldMerge; may be null
  bool want_pins = false;
  bool base_as_operand = false;

  // Each adds an operand older than every one already held.
  void PushOperand(const Slice& operand) {
    operands_.push_back(operand);
    if (want_pins) pins_.emplace_back();
  }
  void PushOperandCopy(const Slice& operand) {
    copies_.push_back(std::make_unique<std::string>(operand.data(), operand.size()));
    PushOperand(*copies_.back());
  }
  // Takes over pinner's cleanups, which keep operand's bytes alive.
  void PushOperandPinned(const Slice& operand, Cleanable* pinner) {
    if (!want_pins) {
      PushOperandCopy(operand);
      return;
    }
    operands_.push_back(operand);
    pins_.emplace_back();
    pinner->DelegateCleanupsTo(&pins_.back());
  }

  size_t GetNumOperands() const { return operands_.size(); }
  bool empty() const { return operands_.empty(); }

  // Newest first, as found (and as ShouldMerge takes them). Valid until the next Push.
  const std::vector<Slice>& GetOperandsNewestFirst() const { return operands_; }
  // Oldest first, as FullMergeV2 takes them. Valid until the next Push.
  const std::vector<Slice>& GetOperands() {
    if (oldest_first_.size() != operands_.size()) {
      oldest_first_.assign(operands_.rbegin(), operands_.rend());
    }
    return oldest_first_;
  }
  // The Cleanable pinning the i-th operand counted from the oldest (0), holding no cleanups
  // when that operand was not pinned. REQUIRES: want_pins.
  Cleanable* PinOf(size_t i_oldest_first) { return &pins_[pins_.size() - 1 - i_oldest_first]; }

  // Whether the merge operator says the operands found so far suffice.
  bool ShouldStop() const {
    return merge_operator != nullptr && !operands_.empty() &&
           merge_operator->ShouldMerge(operands_);
  }

  void Clear() {
    operands_.clear();
    oldest_first_.clear();
    pins_.clear();
    copies_.clear();
  }

 private:
  std::vector<Slice> operands_;  // newest first
  std::vector<Slice> oldest_first_;
  std::vector<Cleanable> pins_;     // parallel to operands_ when want_pins
  // Each copy has its own allocation, so the bytes stay in place as the vector grows (and
  // an empty context allocates nothing, which matters on every Get).
  std::vector<std::unique_ptr<std::string>> copies_;
};

}  // namespace shale
