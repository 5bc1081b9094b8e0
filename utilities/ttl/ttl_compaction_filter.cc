#include "utilities/ttl/ttl_compaction_filter.h"

#include "utilities/ttl/ttl_value.h"

namespace shale {
namespace ttl {

CompactionFilter::Decision TtlCompactionFilter::FilterV3(
    int level, const Slice& key, ValueType value_type, const Slice* existing_value,
    const WideColumns* existing_columns, std::string* new_value,
    std::vector<std::pair<std::string, std::string>>* new_columns, std::string* skip_until) const {
  if (existing_value == nullptr || !Check(*existing_value).ok()) return Decision::kKeep;
  if (value_type == kValue &&
      Expired(*existing_value, setting_->ttl.load(std::memory_order_relaxed), Now(clock_))) {
    return Decision::kRemove;
  }
  if (user_ == nullptr) return Decision::kKeep;
  const Slice stripped = Strip(*existing_value);
  const Decision d = user_->FilterV3(level, key, value_type, &stripped, existing_columns, new_value,
                                     new_columns, skip_until);
  if (d == Decision::kChangeValue) {
    const Slice suffix = Suffix(*existing_value);
    new_value->append(suffix.data(), suffix.size());
  }
  return d;
}

bool TtlCompactionFilterFactory::ShouldFilterTableFileCreation(
    TableFileCreationReason reason) const {
  return reason == TableFileCreationReason::kCompaction ||
         (user_ != nullptr && user_->ShouldFilterTableFileCreation(reason));
}

std::unique_ptr<CompactionFilter> TtlCompactionFilterFactory::CreateCompactionFilter(
    const CompactionFilter::Context& context) {
  std::unique_ptr<CompactionFilter> user;
  if (user_ != nullptr && user_->ShouldFilterTableFileCreation(context.reason)) {
    user = user_->CreateCompactionFilter(context);
  }
  const CompactionFilter* raw = user.get();
  return std::make_unique<TtlCompactionFilter>(setting_, clock_, raw, std::move(user));
}

namespace {

// Stripped copies of the operands; false if one is too short for a suffix.
template <typename Container>
bool StripAll(const Container& in, Container* out) {
  for (const Slice& s : in) {
    if (s.size() < kTimestampLength) return false;
    out->push_back(Strip(s));
  }
  return true;
}

void AppendNow(Env* clock, std::string* value) {
  std::string stamped;
  Stamp(*value, clock, &stamped);
  value->swap(stamped);
}

}  // namespace

bool TtlMergeOperator::FullMergeV2(const MergeOperationInput& merge_in,
                                   MergeOperationOutput* merge_out) const {
  const Slice* existing = merge_in.existing_value;
  if (existing != nullptr && existing->size() < kTimestampLength) return false;
  std::vector<Slice> operands;
  operands.reserve(merge_in.operand_list.size());
  if (!StripAll(merge_in.operand_list, &operands)) return false;
  Slice existing_stripped;
  if (existing != nullptr) existing_stripped = Strip(*existing);
  Slice user_operand(nullptr, 0);
  MergeOperationOutput user_out(merge_out->new_value, user_operand);
  const MergeOperationInput user_in(
      merge_in.key, existing != nullptr ? &existing_stripped : nullptr, operands, merge_in.logger);
  if (!user_->FullMergeV2(user_in, &user_out)) return false;
  // The user may hand back one of the inputs; it needs a new suffix, so it is copied.
  if (user_operand.data() != nullptr) {
    merge_out->new_value.assign(user_operand.data(), user_operand.size());
  }
  AppendNow(clock_, &merge_out->new_value);
  return true;
}

bool TtlMergeOperator::PartialMerge(const Slice& key, const Slice& left_operand,
                                    const Slice& right_operand, std::string* new_value,
                                    Logger* logger) const {
  if (left_operand.size() < kTimestampLength || right_operand.size() < kTimestampLength) {
    return false;
  }
  std::string merged;
  if (!user_->PartialMerge(key, Strip(left_operand), Strip(right_operand), &merged, logger)) {
    return false;
  }
  Stamp(merged, clock_, new_value);
  return true;
}

bool TtlMergeOperator::PartialMergeMulti(const Slice& key, const std::deque<Slice>& operand_list,
                                         std::string* new_value, Logger* logger) const {
  std::deque<Slice> operands;
  if (!StripAll(operand_list, &operands)) return false;
  std::string merged;
  if (!user_->PartialMergeMulti(key, operands, &merged, logger)) return false;
  Stamp(merged, clock_, new_value);
  return true;
}

bool TtlMergeOperator::ShouldMerge(const std::vector<Slice>& operands) const {
  std::vector<Slice> stripped;
  stripped.reserve(operands.size());
  return StripAll(operands, &stripped) && user_->ShouldMerge(stripped);
}

}  // namespace ttl
}  // namespace shale
