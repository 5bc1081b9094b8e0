// MergeOperator: the user's read-modify-write rule. DB::Merge(key, operand) records an
// operand without reading anything; reads, flushes and compactions later combine the
// operands of a key, oldest first, on top of the value beneath them (a Put) or on nothing
// (no value, or a Delete). Counters, appends and set unions become one blind write.
//
// Two ways to write one:
//  - AssociativeMergeOperator: one Merge(existing, operand) step, when operands and values
//    have the same form and combining is associative (sums, concatenation);
//  - MergeOperator: FullMergeV2 over a whole run of operands, and optionally PartialMerge /
//    PartialMergeMulti to combine operands with each other when no base value is at hand.
//
// Thread safety: the DB calls every method from many threads at once, so an operator must
// be stateless or synchronize itself. Methods must not call back into the DB.
// Failure: a method returning false (FullMergeV2) means the operands or the value are not
// what the operator understands; the read that needed the merge fails with Corruption.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

#include "shale/slice.h"

namespace shale {

class Logger;

class MergeOperator {
 public:
  virtual ~MergeOperator() = default;

  // What FullMergeV2 is given. Every reference is valid only during the call.
  struct MergeOperationInput {
    explicit MergeOperationInput(const Slice& _key, const Slice* _existing_value,
                                 const std::vector<Slice>& _operand_list, Logger* _logger)
        : key(_key), existing_value(_existing_value), operand_list(_operand_list),
          logger(_logger) {}
    // The user key the operands belong to.
    const Slice& key;
    // The value beneath the operands; null when there is none (never written, deleted, or
    // unknown because the read stopped early, see ShouldMerge).
    const Slice* existing_value;
    // The operands, oldest first (the order DB::Merge was called in). Never empty.
    const std::vector<Slice>& operand_list;
    // The DB's info log, for the operator's error messages; may be null.
    Logger* logger;
  };

  // Where FullMergeV2 puts its result: either new_value (empty on entry), or, to hand back
  // one of the inputs without copying it, existing_operand set to *existing_value or to
  // one of operand_list's slices (new_value is then ignored).
  struct MergeOperationOutput {
    explicit MergeOperationOutput(std::string& _new_value, Slice& _existing_operand)
        : new_value(_new_value), existing_operand(_existing_operand) {}
    std::string& new_value;
    Slice& existing_operand;
  };

  // Applies merge_in.operand_list, oldest first, to merge_in.existing_value. Returns false
  // if it cannot (bad data); the library treats that as corruption. The default calls the
  // older FullMerge with copies of the operands.
  virtual bool FullMergeV2(const MergeOperationInput& merge_in,
                           MergeOperationOutput* merge_out) const {
    std::deque<std::string> copies;
    for (const Slice& op : merge_in.operand_list) copies.emplace_back(op.data(), op.size());
    return FullMerge(merge_in.key, merge_in.existing_value, copies, &merge_out->new_value,
                     merge_in.logger);
  }

  // The pre-V2 interface, kept so that RocksDB operators port unchanged: operand_list
  // oldest first, *new_value empty on entry. Only called through the default FullMergeV2.
  // Default: false (an operator must override one of the two).
  virtual bool FullMerge(const Slice& key, const Slice* existing_value,
                         const std::deque<std::string>& operand_list, std::string* new_value,
                         Logger* logger) const {
    return false;
  }

  // Combines two operands written in this order (left first) into one operand with the
  // same effect as both, into *new_value (empty on entry), and returns true; returns false,
  // leaving *new_value alone, when they cannot be combined without a base value. Then the
  // library keeps them apart until a base value (or the lack of one) is known. Default:
  // false.
  virtual bool PartialMerge(const Slice& key, const Slice& left_operand,
                            const Slice& right_operand, std::string* new_value,
                            Logger* logger) const {
    return false;
  }

  // The same over two or more operands, oldest first. The default folds them pairwise with
  // PartialMerge and fails as soon as one step does. Override either this or PartialMerge;
  // doing many at once is usually cheaper.
  virtual bool PartialMergeMulti(const Slice& key, const std::deque<Slice>& operand_list,
                                 std::string* new_value, Logger* logger) const {
    if (operand_list.size() < 2) return false;
    std::string acc(operand_list[0].data(), operand_list[0].size());
    std::string step;
    for (size_t i = 1; i < operand_list.size(); i++) {
      step.clear();
      if (!PartialMerge(key, acc, operand_list[i], &step, logger)) return false;
      acc.swap(step);
    }
    new_value->swap(acc);
    return true;
  }

  // Identifies the operator (the DB does not yet store it, so reopening a DB with another
  // operator is the caller's mistake to avoid).
  virtual const char* Name() const = 0;

  // Whether PartialMerge / PartialMergeMulti may also be called with a single operand
  // (useful to rewrite an operand into a compact form). Default: false.
  virtual bool AllowSingleOperand() const { return false; }

  // Lets a point lookup stop early: called as operands are collected, with the operands
  // found so far, NEWEST FIRST (the reverse of FullMergeV2's order). Returning true ends
  // the search and merges those operands with no existing value, so it must only say true
  // when the older entries cannot change the result. Used by Get only, not by iterators or
  // GetMergeOperands. Default: false.
  virtual bool ShouldMerge(const std::vector<Slice>& operands) const { return false; }
};

// The simple kind: the result of merging has the same form as an operand, and merging is
// associative, so the library may combine operands in any grouping.
class AssociativeMergeOperator : public MergeOperator {
 public:
  ~AssociativeMergeOperator() override = default;

  // Merges one operand `value` into *existing_value (null: no value yet), writing the result
  // into *new_value (empty on entry). Returns false on bad data, which the library treats as
  // corruption.
  virtual bool Merge(const Slice& key, const Slice* existing_value, const Slice& value,
                     std::string* new_value, Logger* logger) const = 0;

 private:
  // Both defined in terms of Merge: one step per operand.
  bool FullMergeV2(const MergeOperationInput& merge_in,
                   MergeOperationOutput* merge_out) const override {
    // Each step reads the previous result, so two buffers alternate.
    std::string acc;
    std::string step;
    Slice current;
    const Slice* existing = merge_in.existing_value;
    for (const Slice& operand : merge_in.operand_list) {
      step.clear();
      if (!Merge(merge_in.key, existing, operand, &step, merge_in.logger)) return false;
      acc.swap(step);
      current = acc;
      existing = &current;
    }
    merge_out->new_value.swap(acc);
    return true;
  }
  bool PartialMerge(const Slice& key, const Slice& left_operand, const Slice& right_operand,
                    std::string* new_value, Logger* logger) const override {
    return Merge(key, &left_operand, right_operand, new_value, logger);
  }
};

}  // namespace shale
