// The command-line flags of db_bench: RocksDB 7.8's names, types and defaults, so one
// command line runs either binary. Defined in db_bench_flags.cc.
//
// Some flags are accepted for compatibility but shale has nothing to act on yet (mmap,
// sync tuning, ...). CheckFlagsShaleCannotHonor() names each of those set to a non-default
// value on stderr, once, and fails the run for the few whose absence would change what is
// measured.
#pragma once

#include <gflags/gflags.h>

#ifndef GFLAGS_NAMESPACE
#define GFLAGS_NAMESPACE google
#endif

// Workload.
DECLARE_string(benchmarks);
DECLARE_int64(num);
DECLARE_int64(arena_block_size);
DECLARE_bool(memtable_use_huge_page);
DECLARE_int64(reads);
DECLARE_int64(writes);
DECLARE_int64(deletes);
DECLARE_int32(duration);
DECLARE_int32(threads);
DECLARE_int32(key_size);
DECLARE_int32(value_size);
DECLARE_double(compression_ratio);
DECLARE_int64(batch_size);
DECLARE_bool(multiread_batched);
DECLARE_int64(multiread_stride);
DECLARE_int64(seed);
DECLARE_int32(seek_nexts);
DECLARE_bool(reverse_iterator);
DECLARE_int32(readwritepercent);
DECLARE_int32(mergereadpercent);
DECLARE_int64(merge_keys);
DECLARE_int32(num_column_families);
DECLARE_int32(num_hot_column_families);
DECLARE_string(column_family_distribution);
DECLARE_int64(writes_before_delete_range);
DECLARE_int64(writes_per_range_tombstone);
DECLARE_int64(range_tombstone_width);
DECLARE_int64(max_num_range_tombstones);
DECLARE_bool(expand_range_tombstones);
DECLARE_int32(ops_between_duration_checks);
DECLARE_bool(progress_reports);

// Where and how the DB is opened.
DECLARE_string(db);
DECLARE_bool(use_existing_db);
DECLARE_string(compression_type);
DECLARE_int32(block_size);
DECLARE_bool(use_data_block_hash_index);
DECLARE_int32(bloom_bits);
DECLARE_int64(write_buffer_size);
DECLARE_int32(max_write_buffer_number);
DECLARE_int64(max_write_buffer_size_to_maintain);
DECLARE_int32(max_background_jobs);
DECLARE_int32(num_levels);
DECLARE_int32(open_files);
DECLARE_bool(use_direct_reads);
DECLARE_bool(use_direct_io_for_flush_and_compaction);
DECLARE_bool(allow_concurrent_memtable_write);
DECLARE_bool(enable_pipelined_write);
DECLARE_bool(unordered_write);
DECLARE_bool(two_write_queues);
DECLARE_bool(enable_write_thread_adaptive_yield);
DECLARE_uint64(write_thread_max_yield_usec);
DECLARE_uint64(write_thread_slow_yield_usec);
DECLARE_uint64(benchmark_write_rate_limit);
DECLARE_bool(sync);
DECLARE_bool(disable_wal);
DECLARE_string(merge_operator);
DECLARE_int32(max_successive_merges);
DECLARE_bool(use_keep_filter);
DECLARE_int64(cache_size);
DECLARE_string(cache_type);
DECLARE_int32(cache_numshardbits);
DECLARE_double(cache_high_pri_pool_ratio);
DECLARE_bool(use_ribbon_filter);
DECLARE_bool(cache_index_and_filter_blocks);
DECLARE_bool(pin_l0_filter_and_index_blocks_in_cache);
DECLARE_bool(optimize_filters_for_hits);
DECLARE_bool(verify_checksum);
DECLARE_int32(max_background_compactions);
DECLARE_int32(max_background_flushes);
DECLARE_uint64(subcompactions);
DECLARE_int32(min_write_buffer_number_to_merge);
DECLARE_int32(level0_file_num_compaction_trigger);
DECLARE_int32(level0_slowdown_writes_trigger);
DECLARE_int32(level0_stop_writes_trigger);
DECLARE_uint64(max_bytes_for_level_base);
DECLARE_double(max_bytes_for_level_multiplier);
DECLARE_int64(target_file_size_base);
DECLARE_int32(target_file_size_multiplier);
DECLARE_uint64(max_compaction_bytes);
DECLARE_bool(level_compaction_dynamic_level_bytes);
DECLARE_bool(disable_auto_compactions);
DECLARE_uint64(delayed_write_rate);
DECLARE_uint64(soft_pending_compaction_bytes_limit);
DECLARE_uint64(hard_pending_compaction_bytes_limit);
DECLARE_bool(use_fsync);
DECLARE_uint64(stats_dump_period_sec);

// Transactions.
DECLARE_bool(transaction_db);
DECLARE_int32(txn_write_policy);
DECLARE_bool(optimistic_transaction_db);
DECLARE_uint64(transaction_sets);
DECLARE_bool(transaction_set_snapshot);
DECLARE_uint64(transaction_lock_timeout);

// Reporting.
DECLARE_bool(histogram);
DECLARE_bool(statistics);
DECLARE_int32(stats_level);
DECLARE_int32(stats_per_interval);
DECLARE_int64(stats_interval);
DECLARE_int64(stats_interval_seconds);
DECLARE_int64(report_interval_seconds);
DECLARE_string(report_file);
DECLARE_int32(perf_level);

namespace shale::tools {

// Prints "WARNING: --X is accepted but not used by shale yet" for each accepted flag set
// to a value shale would not honour. Returns false (after printing why) when such a flag
// would make the run measure something else than asked (--compaction_style=1).
bool CheckFlagsShaleCannotHonor();

}  // namespace shale::tools
