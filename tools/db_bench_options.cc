// Benchmark::BuildOptions: the DB's Options from db_bench's flags, as RocksDB's db_bench
// maps them (block cache, filter, statistics, leveled compaction, write stalls, merge
// operator).
#include <strings.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "shale/cache.h"
#include "shale/compression_type.h"
#include "shale/filter_policy.h"
#include "shale/table.h"
#include "shale/utilities/merge_operators.h"
#include "tools/db_bench.h"
#include "tools/db_bench_flags.h"

namespace shale::tools {
namespace {

bool ParseCompression(const std::string& s, CompressionType* type) {
  static const struct {
    const char* name;
    CompressionType type;
  } kNames[] = {{"none", kNoCompression},   {"snappy", kSnappyCompression},
                {"zlib", kZlibCompression}, {"bzip2", kBZip2Compression},
                {"lz4", kLZ4Compression},   {"lz4hc", kLZ4HCCompression},
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
    table->block_cache = NewLRUCache(static_cast<size_t>(FLAGS_cache_size),
                                     FLAGS_cache_numshardbits, false,
                                     FLAGS_cache_high_pri_pool_ratio);
    if (table->block_cache == nullptr) {
      *error = "--cache_numshardbits must be below 20 and --cache_high_pri_pool_ratio in "
               "[0, 1]";
      return false;
    }
  } else {
    table->no_block_cache = true;
  }
  table->cache_index_and_filter_blocks = FLAGS_cache_index_and_filter_blocks;
  table->pin_l0_filter_and_index_blocks_in_cache = FLAGS_pin_l0_filter_and_index_blocks_in_cache;
  if (FLAGS_block_size > 0) table->block_size = static_cast<size_t>(FLAGS_block_size);
  // Negative: the table default (no filter); zero: no filter.
  if (FLAGS_bloom_bits > 0) {
    table->filter_policy.reset(FLAGS_use_ribbon_filter ? NewRibbonFilterPolicy(FLAGS_bloom_bits)
                                                       : NewBloomFilterPolicy(FLAGS_bloom_bits));
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
  options_.max_successive_merges = static_cast<size_t>(FLAGS_max_successive_merges);
  options_.create_if_missing = true;
  options_.compression = compression;
  options_.write_buffer_size = static_cast<size_t>(FLAGS_write_buffer_size);
  options_.arena_block_size = static_cast<size_t>(std::max<int64_t>(FLAGS_arena_block_size, 0));
  // As RocksDB's db_bench: 2 MiB pages from the reserved huge-page pool when asked.
  options_.memtable_huge_page_size = FLAGS_memtable_use_huge_page ? (size_t{2} << 20) : 0;
  options_.max_write_buffer_number = FLAGS_max_write_buffer_number;
  options_.min_write_buffer_number_to_merge = FLAGS_min_write_buffer_number_to_merge;
  options_.max_background_jobs = FLAGS_max_background_jobs;
  options_.max_background_compactions = FLAGS_max_background_compactions;
  options_.max_background_flushes = FLAGS_max_background_flushes;
  options_.max_subcompactions = static_cast<uint32_t>(FLAGS_subcompactions);
  options_.num_levels = FLAGS_num_levels;
  options_.level0_file_num_compaction_trigger = FLAGS_level0_file_num_compaction_trigger;
  options_.level0_slowdown_writes_trigger = FLAGS_level0_slowdown_writes_trigger;
  options_.level0_stop_writes_trigger = FLAGS_level0_stop_writes_trigger;
  options_.max_bytes_for_level_base = FLAGS_max_bytes_for_level_base;
  options_.max_bytes_for_level_multiplier = FLAGS_max_bytes_for_level_multiplier;
  options_.target_file_size_base = static_cast<uint64_t>(FLAGS_target_file_size_base);
  options_.target_file_size_multiplier = FLAGS_target_file_size_multiplier;
  options_.max_compaction_bytes = FLAGS_max_compaction_bytes;
  options_.level_compaction_dynamic_level_bytes = FLAGS_level_compaction_dynamic_level_bytes;
  options_.disable_auto_compactions = FLAGS_disable_auto_compactions;
  options_.delayed_write_rate = FLAGS_delayed_write_rate;
  options_.soft_pending_compaction_bytes_limit = FLAGS_soft_pending_compaction_bytes_limit;
  options_.hard_pending_compaction_bytes_limit = FLAGS_hard_pending_compaction_bytes_limit;
  options_.optimize_filters_for_hits = FLAGS_optimize_filters_for_hits;
  options_.max_open_files = FLAGS_open_files;
  options_.use_fsync = FLAGS_use_fsync;
  options_.stats_dump_period_sec = static_cast<unsigned int>(FLAGS_stats_dump_period_sec);
  options_.use_direct_reads = FLAGS_use_direct_reads;
  options_.use_direct_io_for_flush_and_compaction = FLAGS_use_direct_io_for_flush_and_compaction;
  options_.allow_concurrent_memtable_write = FLAGS_allow_concurrent_memtable_write;
  options_.enable_pipelined_write = FLAGS_enable_pipelined_write;
  options_.unordered_write = FLAGS_unordered_write;
  options_.two_write_queues = FLAGS_two_write_queues;
  options_.enable_write_thread_adaptive_yield = FLAGS_enable_write_thread_adaptive_yield;
  options_.write_thread_max_yield_usec = FLAGS_write_thread_max_yield_usec;
  options_.write_thread_slow_yield_usec = FLAGS_write_thread_slow_yield_usec;
  if (FLAGS_statistics) {
    dbstats_ = CreateDBStatistics();
    dbstats_->set_stats_level(static_cast<StatsLevel>(FLAGS_stats_level));
    options_.statistics = dbstats_;
  }
  BlockBasedTableOptions table;
  if (!BuildTableOptions(&table, error)) return false;
  options_.table_factory.reset(NewBlockBasedTableFactory(table));
  return true;
}

}  // namespace shale::tools
