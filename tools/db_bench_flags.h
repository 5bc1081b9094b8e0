// The command-line flags of db_bench: RocksDB 7.8's names, types and defaults, so one
// command line runs either binary. Defined in db_bench_flags.cc.
//
// Some flags are accepted for compatibility but shale has nothing to act on yet (caches,
// statistics, compaction tuning, merge, transactions). CheckFlagsShaleCannotHonor() names
// each of those set to a non-default value on stderr, once.
#pragma once

#include <gflags/gflags.h>

#ifndef GFLAGS_NAMESPACE
#define GFLAGS_NAMESPACE google
#endif

// Workload.
DECLARE_string(benchmarks);
DECLARE_int64(num);
DECLARE_int64(reads);
DECLARE_int64(writes);
DECLARE_int64(deletes);
DECLARE_int32(duration);
DECLARE_int32(threads);
DECLARE_int32(key_size);
DECLARE_int32(value_size);
DECLARE_double(compression_ratio);
DECLARE_int64(batch_size);
DECLARE_int64(seed);
DECLARE_int32(seek_nexts);
DECLARE_bool(reverse_iterator);
DECLARE_int32(readwritepercent);
DECLARE_int32(ops_between_duration_checks);
DECLARE_bool(progress_reports);

// Where and how the DB is opened.
DECLARE_string(db);
DECLARE_bool(use_existing_db);
DECLARE_string(compression_type);
DECLARE_int32(block_size);
DECLARE_int32(bloom_bits);
DECLARE_int64(write_buffer_size);
DECLARE_int32(max_write_buffer_number);
DECLARE_int32(max_background_jobs);
DECLARE_int32(num_levels);
DECLARE_int32(open_files);
DECLARE_bool(use_direct_reads);
DECLARE_bool(use_direct_io_for_flush_and_compaction);
DECLARE_bool(allow_concurrent_memtable_write);
DECLARE_bool(enable_pipelined_write);
DECLARE_bool(sync);
DECLARE_bool(disable_wal);

// Reporting.
DECLARE_bool(histogram);
DECLARE_int64(stats_interval);
DECLARE_int64(stats_interval_seconds);
DECLARE_int64(report_interval_seconds);
DECLARE_string(report_file);
DECLARE_int32(perf_level);

namespace shale::tools {

// Prints "WARNING: --X is accepted but not used by shale yet" for each accepted flag set
// to a value shale would not honour. Returns false (after printing why) when such a flag
// would make the run measure something else than asked (e.g. --transaction_db=1).
bool CheckFlagsShaleCannotHonor();

}  // namespace shale::tools
