// The built-in merge operators, as RocksDB ships them (utilities/merge_operators.h there):
//
//  - "put" (PutOperator): the newest operand wins, as if each Merge were a Put;
//  - "uint64add" (UInt64AddOperator): 8-byte little-endian unsigned counters, added with
//    wrap-around; a value or operand of another size is logged to the info log and counts
//    as 0;
//  - "stringappend" (StringAppendOperator): joins the value and the operands, oldest
//    first, with a delimiter (default ",");
//  - "max" (MaxOperator): the bytewise largest of the value and the operands.
//
// Every operator is stateless and safe to share between DBs and threads.
#pragma once

#include <memory>
#include <string>

#include "shale/merge_operator.h"

namespace shale {

class MergeOperators {
 public:
  static std::shared_ptr<MergeOperator> CreatePutOperator();
  static std::shared_ptr<MergeOperator> CreateUInt64AddOperator();
  static std::shared_ptr<MergeOperator> CreateStringAppendOperator();
  static std::shared_ptr<MergeOperator> CreateStringAppendOperator(char delim_char);
  static std::shared_ptr<MergeOperator> CreateStringAppendOperator(const std::string& delim);
  static std::shared_ptr<MergeOperator> CreateMaxOperator();

  // The operator a tool names on its command line: "put", "uint64add", "stringappend",
  // "max", or the operator's Name() ("PutOperator", "UInt64AddOperator", ...). nullptr for
  // any other name, including "".
  static std::shared_ptr<MergeOperator> CreateFromStringId(const std::string& name);
};

}  // namespace shale
