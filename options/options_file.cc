// Writing and parsing OPTIONS files (see options_file.h).
#include "options/options_file.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "options/option_codec.h"
#include "options/option_table.h"
#include "shale/cache.h"
#include "shale/db.h"
#include "table/table_factory.h"

namespace shale {
namespace {

constexpr char kPrefix[] = "OPTIONS-";
constexpr char kTempSuffix[] = ".dbtmp";
// The RocksDB release whose option names and file format these files follow.
constexpr char kRocksDBVersion[] = "7.8.3";
constexpr char kFileVersion[] = "1.1";
constexpr char kTablePrefix[] = "TableOptions/";
// kDefaultColumnFamilyName lives in db/, above this layer.
constexpr char kDefaultCF[] = "default";

void AppendSection(const std::span<const OptionInfo> table, const void* options, std::string* out) {
  for (const OptionInfo& info : table) {
    if (!info.persisted()) continue;
    *out += "  ";
    *out += info.name;
    *out += '=';
    *out += FormatOption(info, options);
    *out += '\n';
  }
}

const BlockBasedTableOptions* TableOptionsOf(const ColumnFamilyOptions& cf) {
  if (cf.table_factory == nullptr ||
      std::string(cf.table_factory->Name()) != BlockBasedTableFactory::kClassName) {
    return nullptr;
  }
  return &static_cast<const BlockBasedTableFactory*>(cf.table_factory.get())->table_options();
}

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return s.substr(b, e - b);
}

// RocksDB's escapes: a backslash before '\', '#', ':', CR and LF, the last two as 'r', 'n'.
std::string Escape(const std::string& raw) {
  std::string out;
  for (const char c : raw) {
    if (c == '\\' || c == '#' || c == ':' || c == '\r' || c == '\n') {
      out += '\\';
      out += c == '\n' ? 'n' : c == '\r' ? 'r' : c;
    } else {
      out += c;
    }
  }
  return out;
}

// Undoes Escape: "\x" is x, except "\n" and "\r".
std::string Unescape(const std::string& escaped) {
  std::string out;
  for (size_t i = 0; i < escaped.size(); ++i) {
    const char c = escaped[i];
    if (c == '\\' && i + 1 < escaped.size()) {
      const char n = escaped[++i];
      out += n == 'n' ? '\n' : n == 'r' ? '\r' : n;
    } else {
      out += c;
    }
  }
  return out;
}

// Drops a comment: the first '#' not escaped by a backslash, and what follows.
std::string StripComment(const std::string& line) {
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\') {
      ++i;
    } else if (line[i] == '#') {
      return Trim(line.substr(0, i));
    }
  }
  return Trim(line);
}

Status LineError(const std::string& fname, int line, const std::string& what) {
  return Status::InvalidArgument(fname + ":" + std::to_string(line), what);
}

// One section's statements in file order, with their line numbers.
struct Section {
  std::string title;
  std::string argument;
  int line = 0;
  std::vector<std::pair<std::string, std::string>> values;
  std::vector<int> lines;
};

Status ParseFilterPolicy(const std::string& value, std::shared_ptr<const FilterPolicy>* out) {
  if (value == "nullptr" || value.empty()) {
    out->reset();
    return Status::OK();
  }
  const size_t colon = value.find(':');
  const std::string kind = value.substr(0, colon);
  std::string rest = colon == std::string::npos ? "" : value.substr(colon + 1);
  const size_t colon2 = rest.find(':');
  const std::string bits_text = rest.substr(0, colon2);
  const std::string extra = colon2 == std::string::npos ? "" : rest.substr(colon2 + 1);
  double bits;
  if (!ParseDouble(bits_text, &bits)) {
    return Status::InvalidArgument("filter_policy", "cannot parse \"" + value + "\"");
  }
  if (kind == "bloomfilter") {
    out->reset(NewBloomFilterPolicy(bits));
    return Status::OK();
  }
  if (kind == "ribbonfilter") {
    long long level = 0;
    if (!extra.empty() && !ParseSigned(extra, -1, 1 << 20, &level)) {
      return Status::InvalidArgument("filter_policy", "cannot parse \"" + value + "\"");
    }
    out->reset(NewRibbonFilterPolicy(bits, static_cast<int>(level)));
    return Status::OK();
  }
  return Status::InvalidArgument("filter_policy", "unknown filter policy \"" + value + "\"");
}

// Applies one section's values to `options` (a struct of `which` kind). Objects are left
// to the caller, which gets them in *objects.
Status ApplySection(const Section& section, OptionStruct which, const std::string& fname,
                    bool ignore_unknown, void* options,
                    std::map<std::string, std::string>* objects) {
  for (size_t i = 0; i < section.values.size(); ++i) {
    const auto& [name, value] = section.values[i];
    const OptionInfo* info = FindOption(which, name);
    if (info == nullptr || !info->persisted()) {
      if (ignore_unknown) continue;
      return LineError(fname, section.lines[i], "unknown option " + name);
    }
    if (info->is_object()) {
      (*objects)[name] = value;
      continue;
    }
    Status s = ParseOption(*info, value, options, /*check_bounds=*/false);
    if (!s.ok()) return LineError(fname, section.lines[i], s.ToString());
  }
  return Status::OK();
}

Status ResolveCFObjects(const std::map<std::string, std::string>& objects, ColumnFamilyOptions* cf,
                        std::string* merge_operator) {
  if (auto it = objects.find("comparator"); it != objects.end()) {
    const std::string& name = it->second;
    if (name == BytewiseComparator()->Name()) {
      cf->comparator = BytewiseComparator();
    } else if (name == ReverseBytewiseComparator()->Name()) {
      cf->comparator = ReverseBytewiseComparator();
    } else {
      return Status::InvalidArgument("comparator", "unknown comparator \"" + name + "\"");
    }
  }
  if (auto it = objects.find("table_factory"); it != objects.end()) {
    if (it->second != BlockBasedTableFactory::kClassName) {
      return Status::InvalidArgument("table_factory", "unknown table factory " + it->second);
    }
  }
  merge_operator->clear();
  if (auto it = objects.find("merge_operator"); it != objects.end()) {
    if (it->second != "nullptr") *merge_operator = it->second;
  }
  return Status::OK();
}

}  // namespace

std::string OptionsFilePath(const std::string& dbname, uint64_t number) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%s%06" PRIu64, kPrefix, number);
  return dbname + "/" + buf;
}

std::string TempOptionsFilePath(const std::string& dbname, uint64_t number) {
  return OptionsFilePath(dbname, number) + kTempSuffix;
}

bool ParseOptionsFileName(const std::string& name, uint64_t* number) {
  const size_t p = sizeof(kPrefix) - 1;
  if (name.compare(0, p, kPrefix) != 0 || name.size() == p) return false;
  uint64_t n = 0;
  for (size_t i = p; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    if (n > (UINT64_MAX - 9) / 10) return false;
    n = n * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  *number = n;
  return true;
}

std::string SerializeOptions(const DBOptions& db_options, const std::vector<std::string>& cf_names,
                             const std::vector<ColumnFamilyOptions>& cf_options) {
  std::string out =
      "# The options of a shale DB, in RocksDB's OPTIONS file format.\n"
      "# Written by shale at Open and at every option change; RocksDB 7.8 reads it too.\n"
      "\n[Version]\n";
  out += std::string("  rocksdb_version=") + kRocksDBVersion + "\n";
  out += std::string("  options_file_version=") + kFileVersion + "\n";
  out += "\n[DBOptions]\n";
  AppendSection(DBOptionsTable(), &db_options, &out);
  for (size_t i = 0; i < cf_options.size() && i < cf_names.size(); ++i) {
    const std::string name = Escape(cf_names[i]);
    out += "\n[CFOptions \"" + name + "\"]\n";
    AppendSection(CFOptionsTable(), &cf_options[i], &out);
    if (const BlockBasedTableOptions* t = TableOptionsOf(cf_options[i])) {
      out += std::string("\n[") + kTablePrefix + BlockBasedTableFactory::kClassName + " \"" + name +
             "\"]\n";
      AppendSection(BlockBasedTableOptionsTable(), t, &out);
    }
  }
  return out;
}

Status WriteOptionsFile(Env* env, const std::string& dbname, uint64_t number,
                        const DBOptions& db_options, const ColumnFamilyOptions& cf_options,
                        Directory* dir) {
  return WriteOptionsFile(env, dbname, number, db_options, {kDefaultCF}, {cf_options}, dir);
}

Status WriteOptionsFile(Env* env, const std::string& dbname, uint64_t number,
                        const DBOptions& db_options, const std::vector<std::string>& cf_names,
                        const std::vector<ColumnFamilyOptions>& cf_options, Directory* dir) {
  const std::string text = SerializeOptions(db_options, cf_names, cf_options);
  const std::string temp = TempOptionsFilePath(dbname, number);
  Status s = WriteStringToFile(env, text, temp, /*should_sync=*/true);
  if (s.ok()) s = env->RenameFile(temp, OptionsFilePath(dbname, number));
  if (s.ok() && dir != nullptr) s = dir->Fsync();
  if (!s.ok()) {
    env->DeleteFile(temp).PermitUncheckedError();
    return s;
  }
  // Keep the newest two; drop older ones and temporaries left by a crash.
  std::vector<std::string> children;
  if (!env->GetChildren(dbname, &children).ok()) return Status::OK();
  std::vector<uint64_t> numbers;
  for (const std::string& name : children) {
    uint64_t n;
    if (ParseOptionsFileName(name, &n)) {
      numbers.push_back(n);
    } else if (name.size() > sizeof(kTempSuffix) - 1 &&
               name.compare(0, sizeof(kPrefix) - 1, kPrefix) == 0 &&
               name.compare(name.size() - (sizeof(kTempSuffix) - 1), std::string::npos,
                            kTempSuffix) == 0) {
      env->DeleteFile(dbname + "/" + name).PermitUncheckedError();
    }
  }
  std::sort(numbers.begin(), numbers.end(), std::greater<uint64_t>());
  for (size_t i = 2; i < numbers.size(); ++i) {
    env->DeleteFile(OptionsFilePath(dbname, numbers[i])).PermitUncheckedError();
  }
  return Status::OK();
}

Status ParseOptions(const std::string& text, const std::string& fname,
                    const ParseOptionsConfig& config, ParsedOptions* result) {
  // Split into sections first; then apply them in order.
  std::vector<Section> sections;
  size_t pos = 0;
  int line_number = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string raw = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    const std::string line = StripComment(raw);
    if (line.empty()) continue;
    if (line.front() == '[') {
      if (line.back() != ']') return LineError(fname, line_number, "bad section " + line);
      Section section;
      section.line = line_number;
      // As RocksDB: the argument is between the first and the last quote, escaped.
      const std::string inner = line.substr(1, line.size() - 2);
      const size_t q1 = inner.find('"');
      const size_t q2 = inner.rfind('"');
      if (q1 != std::string::npos && q2 > q1) {
        section.title = Trim(inner.substr(0, q1));
        section.argument = Unescape(inner.substr(q1 + 1, q2 - q1 - 1));
      } else {
        section.title = Trim(inner);
      }
      sections.push_back(std::move(section));
      continue;
    }
    const std::string statement = Unescape(line);
    const size_t eq = statement.find('=');
    if (eq == std::string::npos || eq == 0 || sections.empty()) {
      return LineError(fname, line_number, "expected name=value inside a section");
    }
    sections.back().values.emplace_back(Trim(statement.substr(0, eq)),
                                        Trim(statement.substr(eq + 1)));
    sections.back().lines.push_back(line_number);
  }

  *result = ParsedOptions();
  bool have_version = false, have_db = false;
  for (const Section& section : sections) {
    std::map<std::string, std::string> objects;
    if (section.title == "Version") {
      if (have_version) return LineError(fname, section.line, "second [Version]");
      have_version = true;
      bool have_file_version = false;
      for (const auto& [name, value] : section.values) {
        if (name == "options_file_version") {
          have_file_version = true;
          if (value.empty() || value[0] != '1') {
            return LineError(fname, section.line, "options_file_version " + value);
          }
        }
      }
      if (!have_file_version) {
        return LineError(fname, section.line, "[Version] without options_file_version");
      }
    } else if (section.title == "DBOptions") {
      if (have_db) return LineError(fname, section.line, "second [DBOptions]");
      have_db = true;
      Status s = ApplySection(section, OptionStruct::kDB, fname, config.ignore_unknown_options,
                              &result->db_options, &objects);
      if (!s.ok()) return s;
    } else if (section.title == "CFOptions") {
      const bool is_default = section.argument == kDefaultCF;
      if (result->cf_names.empty() != is_default ||
          std::count(result->cf_names.begin(), result->cf_names.end(), section.argument) > 0) {
        return LineError(fname, section.line,
                         "the default column family must come first, and each only once");
      }
      ColumnFamilyOptions cf;
      Status s = ApplySection(section, OptionStruct::kCF, fname, config.ignore_unknown_options, &cf,
                              &objects);
      std::string merge_operator;
      if (s.ok()) s = ResolveCFObjects(objects, &cf, &merge_operator);
      if (!s.ok()) return LineError(fname, section.line, s.ToString());
      // The table section, if any, replaces this; a file without one means the default.
      BlockBasedTableOptions table;
      if (config.cache != nullptr) table.block_cache = config.cache;
      cf.table_factory.reset(NewBlockBasedTableFactory(table));
      result->cf_names.push_back(section.argument);
      result->cf_options.push_back(std::move(cf));
      result->merge_operator_names.push_back(merge_operator);
    } else if (section.title.compare(0, sizeof(kTablePrefix) - 1, kTablePrefix) == 0) {
      const std::string factory = section.title.substr(sizeof(kTablePrefix) - 1);
      auto it = std::find(result->cf_names.begin(), result->cf_names.end(), section.argument);
      if (it == result->cf_names.end()) {
        return LineError(fname, section.line, "table options of an unknown column family");
      }
      if (factory != BlockBasedTableFactory::kClassName) {
        return LineError(fname, section.line, "unknown table factory " + factory);
      }
      BlockBasedTableOptions table;
      Status s = ApplySection(section, OptionStruct::kBlockBasedTable, fname,
                              config.ignore_unknown_options, &table, &objects);
      if (s.ok()) {
        if (auto f = objects.find("filter_policy"); f != objects.end()) {
          s = ParseFilterPolicy(f->second, &table.filter_policy);
        }
      }
      if (!s.ok()) return LineError(fname, section.line, s.ToString());
      if (config.cache != nullptr) table.block_cache = config.cache;
      result->cf_options[it - result->cf_names.begin()].table_factory.reset(
          NewBlockBasedTableFactory(table));
    } else {
      return LineError(fname, section.line, "unknown section [" + section.title + "]");
    }
  }
  if (!have_version || !have_db || result->cf_names.empty()) {
    return Status::InvalidArgument(fname,
                                   "needs [Version], [DBOptions] and [CFOptions \"default\"]");
  }
  return Status::OK();
}

}  // namespace shale
