#include "db/merge_helper.h"

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

Status MergeOperatorMissing() { return Status::NotSupported("no merge operator configured"); }

}  // namespace shale
