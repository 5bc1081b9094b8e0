// uint64add: 8-byte little-endian counters. A malformed value counts as 0 (and is logged)
// rather than failing the read, as RocksDB's UInt64AddOperator does.
#include <cstdint>

#include "shale/utilities/merge_operators.h"
#include "util/coding.h"
#include "util/logging.h"

namespace shale {
namespace {

class UInt64AddOperator final : public AssociativeMergeOperator {
 public:
  bool Merge(const Slice& key, const Slice* existing_value, const Slice& value,
             std::string* new_value, Logger* logger) const override {
    const uint64_t sum =
        (existing_value == nullptr ? 0 : Decode(*existing_value, logger)) + Decode(value, logger);
    new_value->resize(sizeof(uint64_t));
    EncodeFixed64(new_value->data(), sum);
    return true;
  }
  const char* Name() const override { return "UInt64AddOperator"; }

 private:
  static uint64_t Decode(const Slice& v, Logger* logger) {
    if (v.size() == sizeof(uint64_t)) return DecodeFixed64(v.data());
    SHALE_LOG_ERROR(logger, "uint64add: value of %zu bytes, not 8; counted as 0", v.size());
    return 0;
  }
};

}  // namespace

std::shared_ptr<MergeOperator> MergeOperators::CreateUInt64AddOperator() {
  return std::make_shared<UInt64AddOperator>();
}

}  // namespace shale
