// Sanitizing, validating, changing and logging options through the tables.
#include "options/options_check.h"

#include <algorithm>
#include <cstring>

#include "options/option_codec.h"
#include "options/option_table.h"
#include "shale/cache.h"
#include "table/table_factory.h"
#include "util/logging.h"

namespace shale {
namespace {

void* StructOf(OptionStruct which, Options* options) {
  return which == OptionStruct::kDB ? static_cast<void*>(static_cast<DBOptions*>(options))
                                    : static_cast<void*>(static_cast<ColumnFamilyOptions*>(options));
}

// Clamps a number into [min, max] through its own parser, so the member keeps its type.
bool Clamp(const OptionInfo& info, void* s) {
  const long double v = info.number(OptionField(info, s));
  const long double target = v < info.min ? info.min : info.max;
  char buf[64];
  snprintf(buf, sizeof(buf), "%.0Lf", target);
  return ParseOption(info, buf, s, /*check_bounds=*/true).ok();
}

Status CheckTable(OptionStruct which, void* s, bool clamp, std::vector<std::string>* warnings) {
  for (const OptionInfo& info : OptionsTable(which)) {
    Status st = CheckOptionBounds(info, s);
    if (st.ok()) continue;
    if (!clamp || (info.flags & kOptionClampAtOpen) == 0) return st;
    const std::string before = FormatOption(info, s);
    if (!Clamp(info, s)) return st;
    warnings->push_back(std::string(info.name) + " " + before + " is out of bounds; using " +
                        FormatOption(info, s));
  }
  return Status::OK();
}

// The rules that tie several options together. With clamp (Open) the L0 triggers are
// raised into order, as RocksDB does; without (SetOptions) disorder is refused.
Status CheckCrossOptions(Options* o, bool clamp, std::vector<std::string>* warnings) {
  int& trigger = o->level0_file_num_compaction_trigger;
  int& slowdown = o->level0_slowdown_writes_trigger;
  int& stop = o->level0_stop_writes_trigger;
  // An L0 stop below the compaction trigger would stop writes with nothing to clear it.
  if (slowdown < trigger || stop < slowdown) {
    if (!clamp) {
      return Status::InvalidArgument(
          "level0_stop_writes_trigger >= level0_slowdown_writes_trigger >= "
          "level0_file_num_compaction_trigger must hold");
    }
    const int given[] = {stop, slowdown, trigger};
    slowdown = std::max(slowdown, trigger);
    stop = std::max(stop, slowdown);
    char buf[200];
    snprintf(buf, sizeof(buf),
             "level0 stop/slowdown/compaction triggers %d/%d/%d raised to %d/%d/%d (each must "
             "be at least the next, and the compaction trigger at least 1)",
             given[0], given[1], given[2], stop, slowdown, trigger);
    warnings->push_back(buf);
  }
  if (o->unordered_write && o->max_successive_merges != 0) {
    return Status::InvalidArgument(
        "max_successive_merges > 0 is incompatible with unordered_write");
  }
  if (!CompressionTypeSupported(o->compression)) {
    return Status::InvalidArgument("Compression type ",
                                   CompressionTypeToString(o->compression) +
                                       std::string(" is not linked with the binary."));
  }
  return Status::OK();
}

}  // namespace

Status SanitizeAndValidateAtOpen(Options* options, std::vector<std::string>* warnings) {
  if (options->env == nullptr) options->env = Env::Default();
  if (options->comparator == nullptr) options->comparator = BytewiseComparator();
  if (options->table_factory == nullptr) options->table_factory.reset(NewBlockBasedTableFactory());
  Status s = CheckTable(OptionStruct::kDB, static_cast<DBOptions*>(options), true, warnings);
  if (s.ok()) {
    s = CheckTable(OptionStruct::kCF, static_cast<ColumnFamilyOptions*>(options), true, warnings);
  }
  if (s.ok() && std::string(options->table_factory->Name()) == BlockBasedTableFactory::kClassName) {
    BlockBasedTableOptions t =
        static_cast<const BlockBasedTableFactory*>(options->table_factory.get())->table_options();
    s = CheckTable(OptionStruct::kBlockBasedTable, &t, false, warnings);
  }
  if (s.ok()) s = CheckCrossOptions(options, true, warnings);
  if (s.ok() && options->max_background_flushes > 1) {
    warnings->push_back("max_background_flushes " +
                        std::to_string(options->max_background_flushes) +
                        ": flushes run one at a time (oldest memtable first)");
  }
  return s;
}

Status ApplyOptionChanges(OptionStruct which,
                          const std::unordered_map<std::string, std::string>& changes,
                          Options* options) {
  if (changes.empty()) return Status::InvalidArgument("empty input");
  Options changed = *options;
  void* target = StructOf(which, &changed);
  for (const auto& [name, value] : changes) {
    const OptionInfo* info = FindOption(which, name);
    if (info == nullptr) {
      const bool other = FindOption(which == OptionStruct::kDB ? OptionStruct::kCF
                                                               : OptionStruct::kDB, name);
      return Status::InvalidArgument(
          name, other ? (which == OptionStruct::kDB ? "is a column family option (SetOptions)"
                                                    : "is a DB option (SetDBOptions)")
                      : "is not an option");
    }
    if (!info->is_mutable()) return Status::InvalidArgument(name, "cannot change while open");
    Status s = ParseOption(*info, value, target);
    if (!s.ok()) return s;
  }
  std::vector<std::string> unused;
  Status s = CheckCrossOptions(&changed, /*clamp=*/false, &unused);
  if (!s.ok()) return s;
  *options = std::move(changed);
  return Status::OK();
}

void LogOptions(Logger* log, const Options& options) {
  auto spell = [](const OptionInfo& info, const void* s) {
    std::string v = FormatOption(info, s);
    if (v == "true" || v == "false") return std::string(v == "true" ? "1" : "0");
    if (std::strcmp(info.name, "compression") == 0) {
      return std::string(
          CompressionTypeToString(static_cast<const ColumnFamilyOptions*>(s)->compression));
    }
    return v;
  };
  const DBOptions* db = &options;
  for (const OptionInfo& info : DBOptionsTable()) {
    Header(log, "Options.%s: %s", info.name, spell(info, db).c_str());
  }
  const ColumnFamilyOptions* cf = &options;
  for (const OptionInfo& info : CFOptionsTable()) {
    Header(log, "Options.%s: %s", info.name, spell(info, cf).c_str());
  }
  if (options.table_factory == nullptr ||
      std::string(options.table_factory->Name()) != BlockBasedTableFactory::kClassName) {
    return;
  }
  const BlockBasedTableOptions& t =
      static_cast<const BlockBasedTableFactory*>(options.table_factory.get())->table_options();
  for (const OptionInfo& info : BlockBasedTableOptionsTable()) {
    Header(log, "  table_options.%s: %s", info.name, spell(info, &t).c_str());
  }
  Header(log, "  table_options.block_cache capacity: %zu",
         t.block_cache != nullptr ? t.block_cache->GetCapacity() : size_t{0});
}

}  // namespace shale
