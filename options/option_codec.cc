// Spelling of option values, as RocksDB 7.8 writes and reads them in OPTIONS files.
#include "options/option_codec.h"

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "shale/compaction_filter.h"
#include "shale/merge_operator.h"
#include "table/filter.h"
#include "table/table_factory.h"

namespace shale {
namespace {

// The multiplier of a k/m/g/t suffix (any case), 1 without one; 0 for another letter.
unsigned long long SuffixMultiplier(char c) {
  switch (c) {
    case 'k':
    case 'K': return 1ull << 10;
    case 'm':
    case 'M': return 1ull << 20;
    case 'g':
    case 'G': return 1ull << 30;
    case 't':
    case 'T': return 1ull << 40;
    default: return 0;
  }
}

// Splits "123k" into the digits and the multiplier; false when malformed.
bool SplitSuffix(const std::string& text, std::string* digits, unsigned long long* mult) {
  *digits = text;
  *mult = 1;
  if (text.empty()) return false;
  const char last = text.back();
  if (!(last >= '0' && last <= '9')) {
    *mult = SuffixMultiplier(last);
    if (*mult == 0) return false;
    digits->pop_back();
  }
  return !digits->empty();
}

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

template <typename E, size_t N>
const char* NameOf(const EnumName<E> (&names)[N], E value) {
  for (const auto& n : names) {
    if (n.value == value) return n.name;
  }
  return "unknown";
}

template <typename E, size_t N>
bool ValueOf(const EnumName<E> (&names)[N], const std::string& text, E* value) {
  for (const auto& n : names) {
    if (text == n.name) {
      *value = n.value;
      return true;
    }
  }
  return false;
}

constexpr EnumName<CompressionType> kCompressionNames[] = {
    {kNoCompression, "kNoCompression"},
    {kSnappyCompression, "kSnappyCompression"},
    {kZlibCompression, "kZlibCompression"},
    {kBZip2Compression, "kBZip2Compression"},
    {kLZ4Compression, "kLZ4Compression"},
    {kLZ4HCCompression, "kLZ4HCCompression"},
    {kXpressCompression, "kXpressCompression"},
    {kZSTD, "kZSTD"},
    {kDisableCompressionOption, "kDisableCompressionOption"},
};

constexpr EnumName<WALRecoveryMode> kWALRecoveryModeNames[] = {
    {WALRecoveryMode::kTolerateCorruptedTailRecords, "kTolerateCorruptedTailRecords"},
    {WALRecoveryMode::kAbsoluteConsistency, "kAbsoluteConsistency"},
    {WALRecoveryMode::kPointInTimeRecovery, "kPointInTimeRecovery"},
    {WALRecoveryMode::kSkipAnyCorruptedRecords, "kSkipAnyCorruptedRecords"},
};

constexpr EnumName<InfoLogLevel> kInfoLogLevelNames[] = {
    {DEBUG_LEVEL, "DEBUG_LEVEL"}, {INFO_LEVEL, "INFO_LEVEL"},   {WARN_LEVEL, "WARN_LEVEL"},
    {ERROR_LEVEL, "ERROR_LEVEL"}, {FATAL_LEVEL, "FATAL_LEVEL"}, {HEADER_LEVEL, "HEADER_LEVEL"},
};

constexpr EnumName<ChecksumType> kChecksumNames[] = {
    {kNoChecksum, "kNoChecksum"}, {kCRC32c, "kCRC32c"}, {kxxHash, "kxxHash"},
    {kxxHash64, "kxxHash64"},     {kXXH3, "kXXH3"},
};

constexpr EnumName<BlockBasedTableOptions::DataBlockIndexType> kDataBlockIndexTypeNames[] = {
    {BlockBasedTableOptions::kDataBlockBinarySearch, "kDataBlockBinarySearch"},
    {BlockBasedTableOptions::kDataBlockBinaryAndHash, "kDataBlockBinaryAndHash"},
};

}  // namespace

bool ParseUnsigned(const std::string& text, unsigned long long max, unsigned long long* value) {
  std::string digits;
  unsigned long long mult;
  if (!SplitSuffix(text, &digits, &mult) || digits[0] == '-' || digits[0] == '+') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(digits.c_str(), &end, 10);
  if (errno != 0 || end != digits.c_str() + digits.size()) return false;
  if (v > max / mult) return false;
  *value = v * mult;
  return true;
}

bool ParseSigned(const std::string& text, long long min, long long max, long long* value) {
  std::string digits;
  unsigned long long mult;
  if (!SplitSuffix(text, &digits, &mult)) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(digits.c_str(), &end, 10);
  if (errno != 0 || end != digits.c_str() + digits.size()) return false;
  const long long m = static_cast<long long>(mult);
  if (v > max / m || v < min / m) return false;
  *value = v * m;
  return true;
}

std::string FormatDouble(double value) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%f", value);
  if (std::strtod(buf, nullptr) == value) return buf;
  snprintf(buf, sizeof(buf), "%.17g", value);
  return buf;
}

bool ParseDouble(const std::string& text, double* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v)) return false;
  *value = v;
  return true;
}

bool ParseBool(const std::string& text, bool* value) {
  // RocksDB accepts 1 and 0 as well.
  if (text == "true" || text == "1") {
    *value = true;
  } else if (text == "false" || text == "0") {
    *value = false;
  } else {
    return false;
  }
  return true;
}

const char* CompressionTypeName(CompressionType type) { return NameOf(kCompressionNames, type); }
bool ParseCompressionTypeName(const std::string& text, CompressionType* type) {
  return ValueOf(kCompressionNames, text, type);
}
const char* WALRecoveryModeName(WALRecoveryMode mode) {
  return NameOf(kWALRecoveryModeNames, mode);
}
bool ParseWALRecoveryMode(const std::string& text, WALRecoveryMode* mode) {
  return ValueOf(kWALRecoveryModeNames, text, mode);
}
const char* InfoLogLevelOptionName(InfoLogLevel level) { return NameOf(kInfoLogLevelNames, level); }
bool ParseInfoLogLevel(const std::string& text, InfoLogLevel* level) {
  return ValueOf(kInfoLogLevelNames, text, level);
}
const char* ChecksumTypeName(ChecksumType type) { return NameOf(kChecksumNames, type); }
bool ParseChecksumType(const std::string& text, ChecksumType* type) {
  return ValueOf(kChecksumNames, text, type);
}

const char* DataBlockIndexTypeName(BlockBasedTableOptions::DataBlockIndexType type) {
  return NameOf(kDataBlockIndexTypeNames, type);
}
bool ParseDataBlockIndexType(const std::string& text,
                             BlockBasedTableOptions::DataBlockIndexType* type) {
  return ValueOf(kDataBlockIndexTypeNames, text, type);
}

std::string FormatComparator(const Comparator* comparator) {
  return comparator != nullptr ? comparator->Name() : "nullptr";
}

std::string FormatTableFactory(const TableFactory* factory) {
  return factory != nullptr ? factory->Name() : "nullptr";
}

std::string FormatMergeOperator(const MergeOperator* merge_operator) {
  return merge_operator != nullptr ? merge_operator->Name() : "nullptr";
}

std::string FormatCompactionFilter(const CompactionFilter* filter) {
  return filter != nullptr ? filter->Name() : "nullptr";
}

std::string FormatCompactionFilterFactory(const CompactionFilterFactory* factory) {
  return factory != nullptr ? factory->Name() : "nullptr";
}

std::string FormatFilterPolicy(const FilterPolicy* policy) {
  if (policy == nullptr) return "nullptr";
  // RocksDB spells a built-in filter by its kind and parameters; the bits per key are
  // written as an integer when they are one, as RocksDB does.
  const double bits = policy->GetBitsPerKey();
  std::string b =
      std::floor(bits) == bits ? std::to_string(static_cast<long long>(bits)) : FormatDouble(bits);
  bool ribbon = false;
  int bloom_before_level = 0;
  if (!DescribeBuiltinFilterPolicy(*policy, &ribbon, &bloom_before_level)) return policy->Name();
  if (ribbon) return "ribbonfilter:" + b + ":" + std::to_string(bloom_before_level);
  return "bloomfilter:" + b + ":false";
}

std::string FormatPointer(const void* object) {
  if (object == nullptr) return "nullptr";
  char buf[32];
  snprintf(buf, sizeof(buf), "%p", object);
  return buf;
}

}  // namespace shale
