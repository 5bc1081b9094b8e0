// How each C++ type of an option is spelled in an OPTIONS file (RocksDB's spelling) and
// parsed back: Codec<T> for every member type the option tables hold, and Member<&S::m>,
// which reaches a member through a type-erased pointer. Used only to build the tables
// (options/option_tables.cc); everything else goes through option_table.h.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "options/option_table.h"

namespace shale {

class Cache;
class Logger;
class MergeOperator;
class Statistics;

// Integers: decimal, optionally with RocksDB's k/m/g/t suffix on input (powers of 1024).
bool ParseSigned(const std::string& text, long long min, long long max, long long* value);
bool ParseUnsigned(const std::string& text, unsigned long long max, unsigned long long* value);
// Doubles are written as RocksDB writes them ("%f") when that reads back exactly, else
// with every digit.
std::string FormatDouble(double value);
bool ParseDouble(const std::string& text, double* value);
bool ParseBool(const std::string& text, bool* value);

const char* WALRecoveryModeName(WALRecoveryMode mode);
bool ParseWALRecoveryMode(const std::string& text, WALRecoveryMode* mode);
const char* InfoLogLevelOptionName(InfoLogLevel level);
bool ParseInfoLogLevel(const std::string& text, InfoLogLevel* level);
const char* ChecksumTypeName(ChecksumType type);
bool ParseChecksumType(const std::string& text, ChecksumType* type);
const char* DataBlockIndexTypeName(BlockBasedTableOptions::DataBlockIndexType type);
bool ParseDataBlockIndexType(const std::string& text,
                             BlockBasedTableOptions::DataBlockIndexType* type);

// The OPTIONS-file spelling of the objects RocksDB persists by name.
std::string FormatComparator(const Comparator* comparator);
std::string FormatTableFactory(const TableFactory* factory);
std::string FormatMergeOperator(const MergeOperator* merge_operator);
std::string FormatCompactionFilter(const CompactionFilter* filter);
std::string FormatCompactionFilterFactory(const CompactionFilterFactory* factory);
// "nullptr", "bloomfilter:<bits>:false" or "ribbonfilter:<bits>:<bloom_before_level>".
std::string FormatFilterPolicy(const FilterPolicy* policy);
// Objects RocksDB does not persist; spelled for the LOG only.
std::string FormatPointer(const void* object);

template <typename T>
struct Codec;

template <>
struct Codec<bool> {
  static std::string Format(const void* m) {
    return *static_cast<const bool*>(m) ? "true" : "false";
  }
  static bool Parse(const std::string& t, void* m) { return ParseBool(t, static_cast<bool*>(m)); }
  static constexpr auto kNumber = nullptr;
};

template <typename T>
requires std::is_integral_v<T> &&(!std::is_same_v<T, bool>)struct Codec<T> {
  static std::string Format(const void* m) { return std::to_string(*static_cast<const T*>(m)); }
  static bool Parse(const std::string& t, void* m) {
    if constexpr (std::is_signed_v<T>) {
      long long v;
      if (!ParseSigned(t, std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), &v)) {
        return false;
      }
      *static_cast<T*>(m) = static_cast<T>(v);
    } else {
      unsigned long long v;
      if (!ParseUnsigned(t, std::numeric_limits<T>::max(), &v)) return false;
      *static_cast<T*>(m) = static_cast<T>(v);
    }
    return true;
  }
  static long double Number(const void* m) {
    return static_cast<long double>(*static_cast<const T*>(m));
  }
  static constexpr auto kNumber = &Number;
};

template <>
struct Codec<double> {
  static std::string Format(const void* m) { return FormatDouble(*static_cast<const double*>(m)); }
  static bool Parse(const std::string& t, void* m) {
    return ParseDouble(t, static_cast<double*>(m));
  }
  static long double Number(const void* m) { return *static_cast<const double*>(m); }
  static constexpr auto kNumber = &Number;
};

// Enums spelled by name.
template <typename E, const char* (*kName)(E), bool (*kParse)(const std::string&, E*)>
struct EnumCodec {
  static std::string Format(const void* m) { return kName(*static_cast<const E*>(m)); }
  static bool Parse(const std::string& t, void* m) { return kParse(t, static_cast<E*>(m)); }
  static constexpr auto kNumber = nullptr;
};
template <>
struct Codec<CompressionType>
    : EnumCodec<CompressionType, CompressionTypeName, ParseCompressionTypeName> {};
template <>
struct Codec<WALRecoveryMode>
    : EnumCodec<WALRecoveryMode, WALRecoveryModeName, ParseWALRecoveryMode> {};
template <>
struct Codec<InfoLogLevel> : EnumCodec<InfoLogLevel, InfoLogLevelOptionName, ParseInfoLogLevel> {};
template <>
struct Codec<ChecksumType> : EnumCodec<ChecksumType, ChecksumTypeName, ParseChecksumType> {};
template <>
struct Codec<BlockBasedTableOptions::DataBlockIndexType>
    : EnumCodec<BlockBasedTableOptions::DataBlockIndexType, DataBlockIndexTypeName,
                ParseDataBlockIndexType> {};

// Objects: written by name, never parsed through the table.
template <typename P, std::string (*kFormat)(P)>
struct ObjectCodec {
  static std::string Format(const void* m) { return kFormat(*static_cast<const P*>(m)); }
  static constexpr auto Parse = nullptr;
  static constexpr auto kNumber = nullptr;
};
template <typename P, std::string (*kFormat)(const P*)>
struct SharedObjectCodec {
  static std::string Format(const void* m) {
    return kFormat(static_cast<const std::shared_ptr<P>*>(m)->get());
  }
  static constexpr auto Parse = nullptr;
  static constexpr auto kNumber = nullptr;
};
inline std::string FormatEnv(Env* env) {
  return env == Env::Default() ? std::string("Env::Default()") : FormatPointer(env);
}
inline std::string FormatAny(const void* p) { return FormatPointer(p); }
template <>
struct Codec<const Comparator*> : ObjectCodec<const Comparator*, FormatComparator> {};
template <>
struct Codec<Env*> : ObjectCodec<Env*, FormatEnv> {};
template <>
struct Codec<std::shared_ptr<TableFactory>> : SharedObjectCodec<TableFactory, FormatTableFactory> {
};
template <>
struct Codec<std::shared_ptr<MergeOperator>>
    : SharedObjectCodec<MergeOperator, FormatMergeOperator> {};
template <>
struct Codec<const CompactionFilter*>
    : ObjectCodec<const CompactionFilter*, FormatCompactionFilter> {};
template <>
struct Codec<std::shared_ptr<CompactionFilterFactory>>
    : SharedObjectCodec<CompactionFilterFactory, FormatCompactionFilterFactory> {};
template <>
struct Codec<std::shared_ptr<const FilterPolicy>>
    : SharedObjectCodec<const FilterPolicy, FormatFilterPolicy> {};
template <typename P>
struct PointerCodec {
  static std::string Format(const void* m) {
    return FormatPointer(static_cast<const std::shared_ptr<P>*>(m)->get());
  }
  static constexpr auto Parse = nullptr;
  static constexpr auto kNumber = nullptr;
};
template <>
struct Codec<std::shared_ptr<Statistics>> : PointerCodec<Statistics> {};
template <>
struct Codec<std::shared_ptr<Logger>> : PointerCodec<Logger> {};
template <>
struct Codec<std::shared_ptr<Cache>> : PointerCodec<Cache> {};
template <>
struct Codec<std::shared_ptr<WriteBufferManager>> : PointerCodec<WriteBufferManager> {};

// Member<&S::m>::Field reaches member m of the S behind a type-erased pointer.
template <auto M>
struct Member;
template <typename S, typename T, T S::*M>
struct Member<M> {
  using Type = T;
  static void* Field(void* s) { return &(static_cast<S*>(s)->*M); }
};

}  // namespace shale
