// The name lookup behind tools' --merge_operator flags.
#include "shale/utilities/merge_operators.h"

namespace shale {

std::shared_ptr<MergeOperator> MergeOperators::CreateFromStringId(const std::string& name) {
  if (name == "put" || name == "PutOperator") return CreatePutOperator();
  if (name == "uint64add" || name == "UInt64AddOperator") return CreateUInt64AddOperator();
  if (name == "stringappend" || name == "StringAppendOperator") {
    return CreateStringAppendOperator();
  }
  if (name == "max" || name == "MaxOperator") return CreateMaxOperator();
  return nullptr;
}

}  // namespace shale
