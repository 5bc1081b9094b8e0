// stringappend: value, delim, operand, delim, operand... oldest first.
#include <cstddef>

#include "shale/utilities/merge_operators.h"

namespace shale {
namespace {

class StringAppendOperator final : public MergeOperator {
 public:
  explicit StringAppendOperator(std::string delim) : delim_(std::move(delim)) {}

  // One pass with one allocation, rather than an associative step per operand.
  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    const std::vector<Slice>& ops = in.operand_list;
    if (in.existing_value == nullptr && ops.size() == 1) {
      out->existing_operand = ops[0];
      return true;
    }
    std::string& result = out->new_value;
    result.reserve(Joined(in.existing_value, ops.data(), ops.size()));
    bool first = true;
    if (in.existing_value != nullptr) {
      result.append(in.existing_value->data(), in.existing_value->size());
      first = false;
    }
    for (const Slice& op : ops) {
      if (!first) result.append(delim_);
      result.append(op.data(), op.size());
      first = false;
    }
    return true;
  }

  bool PartialMerge(const Slice& key, const Slice& left, const Slice& right,
                    std::string* new_value, Logger* logger) const override {
    new_value->reserve(left.size() + delim_.size() + right.size());
    new_value->append(left.data(), left.size());
    new_value->append(delim_);
    new_value->append(right.data(), right.size());
    return true;
  }

  bool PartialMergeMulti(const Slice& key, const std::deque<Slice>& operands,
                         std::string* new_value, Logger* logger) const override {
    if (operands.empty()) return false;
    for (size_t i = 0; i < operands.size(); i++) {
      if (i > 0) new_value->append(delim_);
      new_value->append(operands[i].data(), operands[i].size());
    }
    return true;
  }

  const char* Name() const override { return "StringAppendOperator"; }

 private:
  size_t Joined(const Slice* existing, const Slice* ops, size_t n) const {
    size_t bytes = existing == nullptr ? 0 : existing->size() + delim_.size();
    for (size_t i = 0; i < n; i++) bytes += ops[i].size() + delim_.size();
    return bytes;
  }

  const std::string delim_;
};

}  // namespace

std::shared_ptr<MergeOperator> MergeOperators::CreateStringAppendOperator() {
  return CreateStringAppendOperator(",");
}

std::shared_ptr<MergeOperator> MergeOperators::CreateStringAppendOperator(char delim_char) {
  return CreateStringAppendOperator(std::string(1, delim_char));
}

std::shared_ptr<MergeOperator> MergeOperators::CreateStringAppendOperator(
    const std::string& delim) {
  return std::make_shared<StringAppendOperator>(delim);
}

}  // namespace shale
