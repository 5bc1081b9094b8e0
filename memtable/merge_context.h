// MergeContext: the merge operands a point lookup gathers for one user key on its way down
// the tree (memtable, immutable memtables, L0 files, deeper levels), newest first as they
// are found, and how the bytes of each stay alive until the lookup has used them.
//
// An operand is held one of four ways, chosen by whoever finds it:
//  - by reference (PushOperand): the memory outlives the context by the caller's promise;
//  - by reference with a Keeper (PushOperandKept): as above (a memtable the lookup's
//    SuperVersion keeps referenced), and the Keeper can take a reference of its own later,
//    when the operand is handed out (PinInto), so gathering costs nothing per operand;
//  - copied (PushOperandCopy), for bytes valid only during a callback;
//  - pinned (PushOperandPinned): a Cleanable whose cleanups keep the memory alive (a cached
//    block) travels with the operand and can be handed to a PinnableSlice, so the operand
//    outlives the lookup (GetMergeOperands).
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

  // What keeps an operand's memory alive for a PushOperandKept operand: ref(arg) takes a
  // reference that unref(arg, nullptr) drops. Must outlive the context.
  struct Keeper {
    void (*ref)(void* arg);
    Cleanable::CleanupFunction unref;
    void* arg;
  };

  const MergeOperator* merge_operator = nullptr;  // for ShouldMerge; may be null
  bool want_pins = false;
  bool base_as_operand = false;

  // Each adds an operand older than every one already held.
  void PushOperand(const Slice& operand) {
    operands_.push_back(operand);
    if (want_pins) holds_.push_back(Hold{nullptr, kNoPin});
  }
  void PushOperandKept(const Slice& operand, const Keeper* keeper) {
    operands_.push_back(operand);
    if (want_pins) holds_.push_back(Hold{keeper, kNoPin});
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
    holds_.push_back(Hold{nullptr, pins_.size()});
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
  // Points `out` at the i-th operand counted from the oldest (0), giving it what keeps the
  // operand alive (the pin, or a new reference from the Keeper) and returning true; returns
  // false, touching nothing, for an operand held only by reference or copied.
  // REQUIRES: want_pins; each pinned operand handed out at most once.
  bool PinInto(size_t i_oldest_first, PinnableSlice* out) {
    const size_t i = operands_.size() - 1 - i_oldest_first;
    const Hold& h = holds_[i];
    if (h.pin != kNoPin) {
      out->PinSlice(operands_[i], &pins_[h.pin]);
      return true;
    }
    if (h.keeper != nullptr) {
      h.keeper->ref(h.keeper->arg);
      out->PinSlice(operands_[i], h.keeper->unref, h.keeper->arg, nullptr);
      return true;
    }
    return false;
  }

  // Whether the merge operator says the operands found so far suffice.
  bool ShouldStop() const {
    return merge_operator != nullptr && !operands_.empty() &&
           merge_operator->ShouldMerge(operands_);
  }

  void Clear() {
    operands_.clear();
    oldest_first_.clear();
    holds_.clear();
    pins_.clear();
    copies_.clear();
  }

 private:
  std::vector<Slice> operands_;  // newest first
  std::vector<Slice> oldest_first_;
  // How each operand is held, parallel to operands_ when want_pins: its Keeper, or the
  // index of its pin in pins_.
  static constexpr size_t kNoPin = ~size_t{0};
  struct Hold {
    const Keeper* keeper;
    size_t pin;
  };
  std::vector<Hold> holds_;
  std::vector<Cleanable> pins_;
  // Each copy has its own allocation, so the bytes stay in place as the vector grows (and
  // an empty context allocates nothing, which matters on every Get).
  std::vector<std::unique_ptr<std::string>> copies_;
};

}  // namespace shale
