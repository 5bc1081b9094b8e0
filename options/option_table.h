// The option tables: every public field of DBOptions, ColumnFamilyOptions and
// BlockBasedTableOptions described once — its RocksDB name, where it lives, how its value
// is spelled (RocksDB's spelling: "true", "67108864", "10.000000", "kSnappyCompression"),
// its default, its bounds, whether it may change while the DB is open, one line of help,
// and its db_bench flag when it has one.
//
// Everything that handles options by name reads these tables: the OPTIONS file writer and
// parser (options/options_file.h), SetOptions, validation at Open, the options written to
// the LOG, and db_bench's flags. The defaults themselves stay in the public headers (a
// RocksDB program relies on `Options o;` having them); options_table_test checks that
// each table's default spelling matches the struct's and that no field with a default is
// missing from its table.
//
// Thread safety: the tables are constant; the functions are pure.
#pragma once

#include <cstddef>
#include <limits>
#include <span>
#include <string>

#include "shale/options.h"
#include "shale/status.h"
#include "shale/table.h"

namespace shale {

// Which struct a table describes; an OptionInfo's Field() expects a pointer to that struct.
enum class OptionStruct { kDB, kCF, kBlockBasedTable };

enum OptionFlags : unsigned {
  kOptionNone = 0,
  // Changeable at run time by SetOptions / SetDBOptions (RocksDB's mutable options).
  kOptionMutable = 1u << 0,
  // A pointer to an object (comparator, merge operator, filter policy, ...): written to the
  // OPTIONS file by name, but not parsed by the table (options_file.h resolves names).
  kOptionObject = 1u << 1,
  // Not written to the OPTIONS file (RocksDB does not persist it either: env, info_log,
  // statistics, block_cache).
  kOptionNotPersisted = 1u << 2,
  // Out-of-range values are clamped into [min, max] at Open, as RocksDB sanitizes them;
  // without this flag they are refused with InvalidArgument.
  kOptionClampAtOpen = 1u << 3,
  // db_bench sets it by hand: its flag (bench_flag) is spelled differently or feeds
  // several options (--compression_type=snappy, --cache_size, --bloom_bits).
  kOptionBenchByHand = 1u << 4,
};

struct OptionInfo {
  // RocksDB's name of the option, also the C++ member name.
  const char* name;
  // sizeof the member, for the coverage test.
  size_t size;
  // The member inside a struct of the table's kind.
  void* (*field)(void* options);
  // Value -> text in RocksDB's spelling, and back. parse returns false on a malformed value
  // and leaves the member unchanged then. Objects: format only (parse is nullptr).
  std::string (*format)(const void* member);
  bool (*parse)(const std::string& text, void* member);
  // The member as a number, for the bounds (nullptr for non-numbers).
  long double (*number)(const void* member);
  // The default, as format() spells the default-constructed struct's member.
  const char* default_value;
  // Inclusive bounds of a number; ignored for non-numbers.
  long double min = -std::numeric_limits<long double>::infinity();
  long double max = std::numeric_limits<long double>::infinity();
  unsigned flags = kOptionNone;
  const char* help = "";
  // db_bench's flag for this option: nullptr when db_bench has none, "" when it is the
  // option's name, else the flag's name; and bench_default when db_bench's default differs from the
  // struct's (RocksDB's db_bench has a few such; nullptr when it does not).
  const char* bench_flag = nullptr;
  const char* bench_default = nullptr;

  bool is_mutable() const { return (flags & kOptionMutable) != 0; }
  bool is_object() const { return (flags & kOptionObject) != 0; }
  bool persisted() const { return (flags & kOptionNotPersisted) == 0; }
  // nullptr when db_bench has no flag for it.
  const char* BenchFlag() const {
    return bench_flag == nullptr || *bench_flag != '\0' ? bench_flag : name;
  }
  const char* BenchDefault() const {
    return bench_default != nullptr ? bench_default : default_value;
  }
};

std::span<const OptionInfo> DBOptionsTable();
std::span<const OptionInfo> CFOptionsTable();
std::span<const OptionInfo> BlockBasedTableOptionsTable();
std::span<const OptionInfo> OptionsTable(OptionStruct which);

// The entry named `name` in the table, or nullptr.
const OptionInfo* FindOption(OptionStruct which, const std::string& name);

// The member of `info` inside `options`, which must be a struct of the table's kind.
inline void* OptionField(const OptionInfo& info, void* options) { return info.field(options); }
inline const void* OptionField(const OptionInfo& info, const void* options) {
  return info.field(const_cast<void*>(options));
}

// The value of `info`'s member of `options`, spelled as in an OPTIONS file.
std::string FormatOption(const OptionInfo& info, const void* options);

// Parses `text` into `info`'s member of `options` and, with check_bounds, checks its
// bounds. Malformed or out of bounds: InvalidArgument naming the option, and the member is
// unchanged. Objects: InvalidArgument (they are set through options_file.h or by the
// program).
Status ParseOption(const OptionInfo& info, const std::string& text, void* options,
                   bool check_bounds = true);

// Checks `info`'s member against its bounds: OK, or InvalidArgument naming the option and
// the bounds.
Status CheckOptionBounds(const OptionInfo& info, const void* options);

// The spelling of enums and of the built-in objects, shared with options_file.cc.
const char* CompressionTypeName(CompressionType type);
bool ParseCompressionTypeName(const std::string& text, CompressionType* type);

}  // namespace shale
