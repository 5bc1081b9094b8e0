// The OPTIONS file: a DB's options in RocksDB's ini format, written at every Open and every
// option change as OPTIONS-NNNNNN (NNNNNN a file number of the DB), and read back by
// LoadLatestOptions / LoadOptionsFromFile (shale/utilities/options_util.h).
//
//   [Version]                        rocksdb_version=7.8.3, options_file_version=1.1
//   [DBOptions]                      one name=value line per persisted DBOptions field
//   [CFOptions "default"]            the same for ColumnFamilyOptions
//   [TableOptions/BlockBasedTable "default"]   the BlockBasedTableOptions
//   [CFOptions "name"], [TableOptions/BlockBasedTable "name"]   the same for each other
//                                    live column family, in the order given
//
// A family's name is written with RocksDB's escapes ('\\', '#', ':', CR and LF preceded by
// a backslash; CR and LF as 'r' and 'n'), so any name reads back as it was, by RocksDB too.
//
// Names and value spellings are RocksDB 7.8's, taken from the option tables
// (options/option_table.h), and rocksdb_version says 7.8.3 because that is the release
// whose names and formats the file follows; RocksDB's own LoadOptionsFromFile reads it.
// RocksDB refuses an unknown option name unless asked to ignore unknown options, so shale
// persists only options RocksDB also has (options_table_test checks every persisted name
// against a RocksDB 7.8.3 file); an option of shale's own would be kOptionNotPersisted.
// Objects are written by name (comparator, merge_operator, table_factory, filter_policy);
// env, info_log, statistics and block_cache are not written, as in RocksDB.
//
// Thread safety: pure functions, plus file I/O through the Env given.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shale/env.h"
#include "shale/options.h"
#include "shale/status.h"

namespace shale {

class Cache;

// "dbname/OPTIONS-000012", and the temporary name it is written under before the rename.
std::string OptionsFilePath(const std::string& dbname, uint64_t number);
std::string TempOptionsFilePath(const std::string& dbname, uint64_t number);
// True if `name` (no directory) is an OPTIONS file; *number is its number.
bool ParseOptionsFileName(const std::string& name, uint64_t* number);

// The file's text for one DB and its column families, cf_names[i] with cf_options[i].
// REQUIRES: the vectors have the same size; the first name is "default"; no name twice.
std::string SerializeOptions(const DBOptions& db_options, const std::vector<std::string>& cf_names,
                             const std::vector<ColumnFamilyOptions>& cf_options);

// Writes OPTIONS-<number> durably: to its temporary name, synced, renamed, directory
// synced (when dir is not null). Then deletes older OPTIONS files (and leftover temporary
// ones), keeping the newest two as RocksDB does. A failure to delete is not an error.
// REQUIRES: as SerializeOptions.
Status WriteOptionsFile(Env* env, const std::string& dbname, uint64_t number,
                        const DBOptions& db_options, const std::vector<std::string>& cf_names,
                        const std::vector<ColumnFamilyOptions>& cf_options, Directory* dir);
// The same for a DB with only the default column family.
Status WriteOptionsFile(Env* env, const std::string& dbname, uint64_t number,
                        const DBOptions& db_options, const ColumnFamilyOptions& cf_options,
                        Directory* dir);

// What an OPTIONS file holds. Merge operators are named, not built: the options layer
// sits below the built-in operators (utilities/), which LoadOptionsFromFile resolves.
struct ParsedOptions {
  DBOptions db_options;
  std::vector<std::string> cf_names;
  std::vector<ColumnFamilyOptions> cf_options;
  // Per column family: "" for none, else the value as written: a name
  // ("UInt64AddOperator") or, as RocksDB writes a configured one,
  // "{id=StringAppendOperator;delimiter=:;}".
  std::vector<std::string> merge_operator_names;
};

struct ParseOptionsConfig {
  // Skip option names this build does not know instead of failing (RocksDB's
  // ConfigOptions::ignore_unknown_options): needed for files RocksDB wrote.
  bool ignore_unknown_options = false;
  // When not null, every table's block_cache (RocksDB's LoadOptionsFromFile `cache`).
  std::shared_ptr<Cache> cache;
};

// Parses the text of an OPTIONS file (`fname` only names it in errors). Values are not
// bounds-checked here (DB::Open validates them); malformed text, an unknown section, a
// missing [Version], [DBOptions] or default column family, a family not after the default
// or named twice, table options of a family with no [CFOptions] before them, an unknown
// name (unless ignored), a comparator or table factory shale lacks: InvalidArgument with
// the line. The families are returned in file order, the default first.
Status ParseOptions(const std::string& text, const std::string& fname,
                    const ParseOptionsConfig& config, ParsedOptions* result);

}  // namespace shale
