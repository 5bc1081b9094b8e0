// max and put: both pick one of their inputs, so they hand it back through
// existing_operand instead of copying it.
#include <algorithm>

#include "shale/utilities/merge_operators.h"

namespace shale {
namespace {

// The bytewise largest of the value (if any) and the operands.
class MaxOperator final : public MergeOperator {
 public:
  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    Slice best = in.existing_value != nullptr ? *in.existing_value : in.operand_list.front();
    for (const Slice& op : in.operand_list) {
      if (op.compare(best) > 0) best = op;
    }
    out->existing_operand = best;
    return true;
  }
  bool PartialMerge(const Slice& key, const Slice& left, const Slice& right,
                    std::string* new_value, Logger* logger) const override {
    const Slice& best = left.compare(right) >= 0 ? left : right;
    new_value->assign(best.data(), best.size());
    return true;
  }
  bool PartialMergeMulti(const Slice& key, const std::deque<Slice>& operands,
                         std::string* new_value, Logger* logger) const override {
    if (operands.empty()) return false;
    const Slice& best = *std::max_element(
        operands.begin(), operands.end(),
        [](const Slice& a, const Slice& b) { return a.compare(b) < 0; });
    new_value->assign(best.data(), best.size());
    return true;
  }
  const char* Name() const override { return "MaxOperator"; }
};

// Each operand replaces what came before: the newest wins.
class PutOperator final : public MergeOperator {
 public:
  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    out->existing_operand = in.operand_list.back();
    return true;
  }
  bool PartialMerge(const Slice& key, const Slice& left, const Slice& right,
                    std::string* new_value, Logger* logger) const override {
    new_value->assign(right.data(), right.size());
    return true;
  }
  bool PartialMergeMulti(const Slice& key, const std::deque<Slice>& operands,
                         std::string* new_value, Logger* logger) const override {
    if (operands.empty()) return false;
    new_value->assign(operands.back().data(), operands.back().size());
    return true;
  }
  const char* Name() const override { return "PutOperator"; }
};

}  // namespace

std::shared_ptr<MergeOperator> MergeOperators::CreateMaxOperator() {
  return std::make_shared<MaxOperator>();
}

std::shared_ptr<MergeOperator> MergeOperators::CreatePutOperator() {
  return std::make_shared<PutOperator>();
}

}  // namespace shale
