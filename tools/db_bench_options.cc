// Benchmark::BuildOptions: the DB's Options from db_bench's flags, as RocksDB's db_bench
// maps them. A flag that sets one option is mapped through the option tables
// (options/option_table.h); the few the tables mark kOptionBenchByHand (compression by
// name, block cache, filter, statistics, merge operator, arena and huge pages) are mapped
// here by hand, and so is --use_keep_filter (a compaction filter, not an option value).
#include <strings.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "options/option_table.h"
#include "shale/cache.h"
#include "shale/compaction_filter.h"
#include "shale/compression_type.h"
#include "shale/filter_policy.h"
#include "shale/table.h"
#include "shale/utilities/merge_operators.h"
#include "tools/db_bench.h"
#include "tools/db_bench_flags.h"

namespace shale::tools {
namespace {

// --use_keep_filter: offered every entry, keeps every one, as RocksDB db_bench's KeepFilter.
class KeepFilter : public CompactionFilter {
 public:
  bool Filter(int /*level*/, const Slice& /*key*/, const Slice& /*value*/,
              std::string* /*new_value*/, bool* /*value_changed*/) const override {
    return false;
  }
  const char* Name() const override { return "KeepFilter"; }
};

bool ParseCompression(const std::string& s, CompressionType* type) {
  static const struct {
    const char* name;
    CompressionType type;
  } kNames[] = {{"none", kNoCompression},       {"snappy", kSnappyCompression},
                {"zlib", kZlibCompression},     {"bzip2", kBZip2Compression},
                {"lz4", kLZ4Compression},       {"lz4hc", kLZ4HCCompression},
                {"xpress", kXpressCompression}, {"zstd", kZSTD}};
  for (const auto& n : kNames) {
    if (strcasecmp(s.c_str(), n.name) == 0) {
      *type = n.type;
      return true;
    }
  }
  return false;
}

// The block-based table options: cache, block size, filter.
bool BuildTableOptions(BlockBasedTableOptions* table, std::string* error) {
  if (FLAGS_cache_size > 0) {
    const auto capacity = static_cast<size_t>(FLAGS_cache_size);
    if (FLAGS_cache_type == "lru_cache") {
      table->block_cache =
          NewLRUCache(capacity, FLAGS_cache_numshardbits, false, FLAGS_cache_high_pri_pool_ratio);
    } else if (FLAGS_cache_type == "hyper_clock_cache") {
      // As RocksDB's db_bench: the table is sized for entries of one block each.
      table->block_cache =
          HyperClockCacheOptions(capacity, static_cast<size_t>(std::max(FLAGS_block_size, 1)),
                                 FLAGS_cache_numshardbits)
              .MakeSharedCache();
    } else {
      *error = "--cache_type must be lru_cache or hyper_clock_cache, not " + FLAGS_cache_type;
      return false;
    }
    if (table->block_cache == nullptr) {
      *error =
          "--cache_numshardbits must be below 20 and --cache_high_pri_pool_ratio in "
          "[0, 1]";
      return false;
    }
  } else {
    table->no_block_cache = true;
  }
  // Negative: the table default (no filter); zero: no filter.
  if (FLAGS_bloom_bits > 0) {
    table->filter_policy.reset(FLAGS_use_ribbon_filter ? NewRibbonFilterPolicy(FLAGS_bloom_bits)
                                                       : NewBloomFilterPolicy(FLAGS_bloom_bits));
  }
  return true;
}

// Every flag the tables name for `options` (a struct of kind `which`), parsed into it.
bool ApplyOptionFlags(OptionStruct which, void* options, std::string* error) {
  for (const OptionInfo& info : OptionsTable(which)) {
    const char* flag = info.BenchFlag();
    if (flag == nullptr || (info.flags & kOptionBenchByHand) != 0) continue;
    std::string value;
    if (!GFLAGS_NAMESPACE::GetCommandLineOption(flag, &value)) {
      *error = std::string("option table names --") + flag + ", which db_bench lacks";
      return false;
    }
    // Bounds are Open's business: it clamps or refuses as it would for any program.
    Status s = ParseOption(info, value, options, /*check_bounds=*/false);
    if (!s.ok()) {
      *error = "--" + std::string(flag) + ": " + s.ToString();
      return false;
    }
  }
  return true;
}

}  // namespace

bool Benchmark::BuildOptions(std::string* error) {
  if (FLAGS_compression_ratio > 1) {
    *error = "compression_ratio should be between 0 and 1";
    return false;
  }
  if (FLAGS_key_size < 1 || FLAGS_value_size < 0 || FLAGS_threads < 1) {
    *error = "--key_size and --threads must be positive, --value_size not negative";
    return false;
  }
  if (FLAGS_stats_level < kDisableAll || FLAGS_stats_level > kAll) {
    *error = "--stats_level must be between 0 and 5";
    return false;
  }
  CompressionType compression;
  if (!ParseCompression(FLAGS_compression_type, &compression)) {
    *error = "Cannot parse compression type '" + FLAGS_compression_type + "'";
    return false;
  }
  if (!CompressionTypeSupported(compression)) {
    *error = "--compression_type=" + FLAGS_compression_type +
             " is not supported by this shale build (supported: none, and snappy, lz4, "
             "zstd when built with them)";
    return false;
  }
  if (FLAGS_max_successive_merges < 0 || FLAGS_merge_keys == 0) {
    *error = "--max_successive_merges must not be negative, --merge_keys not 0";
    return false;
  }
  std::shared_ptr<MergeOperator> merge_operator;
  if (!FLAGS_merge_operator.empty()) {
    merge_operator = MergeOperators::CreateFromStringId(FLAGS_merge_operator);
    if (merge_operator == nullptr) {
      // The first words are RocksDB's, for scripts that look for them.
      *error = "invalid merge operator[" + FLAGS_merge_operator +
               "]: not one of shale's (put, uint64add, stringappend, max)";
      return false;
    }
  }
  options_ = Options();
  options_.merge_operator = std::move(merge_operator);
  if (FLAGS_use_keep_filter) {
    static const KeepFilter keep_filter;  // stateless: shared by every DB and thread
    options_.compaction_filter = &keep_filter;
    fprintf(stdout, "A noop compaction filter is used\n");
  }
  options_.create_if_missing = true;
  // As RocksDB's: harmless with one family, and --num_column_families needs it.
  options_.create_missing_column_families = true;
  options_.compression = compression;
  options_.arena_block_size = static_cast<size_t>(std::max<int64_t>(FLAGS_arena_block_size, 0));
  // As RocksDB's db_bench: 2 MiB pages from the reserved huge-page pool when asked.
  options_.memtable_huge_page_size = FLAGS_memtable_use_huge_page ? (size_t{2} << 20) : 0;
  if (!ApplyOptionFlags(OptionStruct::kDB, static_cast<DBOptions*>(&options_), error) ||
      !ApplyOptionFlags(OptionStruct::kCF, static_cast<ColumnFamilyOptions*>(&options_), error)) {
    return false;
  }
  if (FLAGS_statistics) {
    dbstats_ = CreateDBStatistics();
    dbstats_->set_stats_level(static_cast<StatsLevel>(FLAGS_stats_level));
    options_.statistics = dbstats_;
  }
  BlockBasedTableOptions table;
  if (!BuildTableOptions(&table, error) ||
      !ApplyOptionFlags(OptionStruct::kBlockBasedTable, &table, error)) {
    return false;
  }
  // RocksDB's db_bench spells the hash index as a bool; either spelling turns it on.
  if (FLAGS_use_data_block_hash_index) {
    table.data_block_index_type = BlockBasedTableOptions::kDataBlockBinaryAndHash;
  }
  options_.table_factory.reset(NewBlockBasedTableFactory(table));
  return true;
}

}  // namespace shale::tools
