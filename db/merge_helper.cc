#include "db/merge_helper.h"

#include <deque>

#include "util/logging.h"

namespace shale {

Status FullMergeOperands(const MergeOperator* op, const Slice& key, const Slice* existing,
                         const std::vector<Slice>& operands, std::string* result, Logger* logger) {
  std::string merged;
  Slice chosen(nullptr, 0);
  MergeOperator::MergeOperationInput in(key, existing, operands, logger);
  MergeOperator::MergeOperationOutput out(merged, chosen);
  if (!op->FullMergeV2(in, &out)) {
    SHALE_LOG_ERROR(logger, "merge operator %s failed on key %s (%zu operands)", op->Name(),
                    key.ToString(true).c_str(), operands.size());
    return Status::Corruption("merge operator failed", op->Name());
  }
  if (chosen.data() != nullptr) {
    result->assign(chosen.data(), chosen.size());
  } else {
    result->swap(merged);
  }
  return Status::OK();
}

bool PartialMergeOperands(const MergeOperator* op, const Slice& key,
                          const std::vector<Slice>& operands, std::string* result, Logger* logger) {
  if (operands.empty() || (operands.size() == 1 && !op->AllowSingleOperand())) return false;
  const std::deque<Slice> list(operands.begin(), operands.end());
  std::string merged;
  if (!op->PartialMergeMulti(key, list, &merged, logger)) return false;
  result->swap(merged);
  return true;
}

Status MergeOperatorMissing() { return Status::NotSupported("no merge operator configured"); }

}  // namespace shale
