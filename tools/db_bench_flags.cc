#include "tools/db_bench_flags.h"

#include <cstdio>
#include <cstdlib>
#include <string>

// The default list is RocksDB 7.8.3's, including the benchmarks shale cannot run yet; the
// driver rejects those before running anything.
DEFINE_string(benchmarks,
              "fillseq,fillseqdeterministic,fillsync,fillrandom,"
              "filluniquerandomdeterministic,overwrite,readrandom,newiterator,"
              "newiteratorwhilewriting,seekrandom,seekrandomwhilewriting,"
              "seekrandomwhilemerging,readseq,readreverse,compact,compactall,flush,"
              "compact0,compact1,waitforcompaction,multireadrandom,mixgraph,readseq,"
              "readtorowcache,readtocache,readreverse,readwhilewriting,readwhilemerging,"
              "readwhilescanning,readrandomwriterandom,updaterandom,xorupdaterandom,"
              "approximatesizerandom,randomwithverify,fill100K,crc32c,xxhash,xxhash64,xxh3,"
              "compress,uncompress,acquireload,fillseekseq,randomtransaction,"
              "randomreplacekeys,timeseries,getmergeoperands,",
              "Comma-separated list of operations to run in the specified order. A name may "
              "carry [X<n>] (repeat n times) and [W<n>] (n warm-up runs), e.g. "
              "readrandom[X3-W1]. Runs now:\n"
              "\tfillseq, fillbatch, fillrandom, filluniquerandom, fillsync, fill100K,\n"
              "\toverwrite, readseq, readreverse, readrandom, readmissing, seekrandom,\n"
              "\treadwhilewriting, readrandomwriterandom, deleteseq, deleterandom,\n"
              "\tflush, crc32c\n"
              "Other RocksDB benchmarks are refused until shale has what they need.");

DEFINE_int64(num, 1000000, "Number of key/values to place in database");
DEFINE_int64(reads, -1, "Number of read operations to do.  If negative, do FLAGS_num reads.");
DEFINE_int64(writes, -1, "Number of write operations to do. If negative, do --num reads.");
DEFINE_int64(deletes, -1,
             "Number of delete operations to do.  If negative, do FLAGS_num deletions.");
DEFINE_int32(duration, 0,
             "Time in seconds for the random-ops tests to run. When 0 then num & reads "
             "determine the test duration");
DEFINE_int32(threads, 1, "Number of concurrent threads to run.");
DEFINE_int32(key_size, 16, "size of each key");
DEFINE_int32(value_size, 100, "Size of each value in fixed distribution");
DEFINE_double(compression_ratio, 0.5,
              "Arrange to generate values that shrink to this fraction of their original "
              "size after compression");
DEFINE_int64(batch_size, 1, "Batch size");
DEFINE_int64(seed, 0,
             "Seed base for random number generators. When 0 it is derived from the "
             "current time.");
DEFINE_int32(seek_nexts, 0,
             "How many times to call Next() after Seek() in fillseekseq, seekrandom, "
             "seekrandomwhilewriting and seekrandomwhilemerging");
DEFINE_bool(reverse_iterator, false,
            "When true use Prev rather than Next for iterators that do Seek and then Next");
DEFINE_int32(readwritepercent, 90,
             "Ratio of reads to reads/writes (expressed as percentage) for the "
             "ReadRandomWriteRandom workload. The default value 90 means 90% operations out "
             "of all reads and writes operations are reads. In other words, 9 gets for "
             "every 1 put.");
DEFINE_int32(ops_between_duration_checks, 1000, "Check duration limit every x ops");
DEFINE_bool(progress_reports, true,
            "If true, db_bench will report number of finished operations.");

DEFINE_string(db, "", "Use the db with the following name.");
DEFINE_bool(use_existing_db, false,
            "If true, do not destroy the existing database.  If you set this flag and also "
            "specify a benchmark that wants a fresh database, that benchmark will fail.");
DEFINE_string(compression_type, "snappy", "Algorithm to use to compress the database");
DEFINE_int32(block_size, 4096, "Number of bytes in a block.");
DEFINE_int32(bloom_bits, -1, "Bloom filter bits per key. Negative means use default.Zero disables.");
DEFINE_int64(write_buffer_size, 67108864,
             "Number of bytes to buffer in memtable before compacting");
DEFINE_int32(max_write_buffer_number, 2,
             "The number of in-memory memtables. Each memtable is of size "
             "write_buffer_size bytes.");
DEFINE_int32(max_background_jobs, 2,
             "The maximum number of concurrent background jobs that can occur in parallel.");
DEFINE_int32(num_levels, 7, "The total number of levels");
DEFINE_int32(open_files, -1,
             "Maximum number of files to keep open at the same time (use default if == 0)");
DEFINE_bool(use_direct_reads, false, "Use O_DIRECT for reading data");
DEFINE_bool(use_direct_io_for_flush_and_compaction, false,
            "Use O_DIRECT for background flush and compaction writes");
DEFINE_bool(allow_concurrent_memtable_write, true,
            "Allow multi-writers to update mem tables in parallel.");
DEFINE_bool(enable_pipelined_write, true, "Allow WAL and memtable writes to be pipelined");
DEFINE_bool(sync, false, "Sync all writes to disk");
DEFINE_bool(disable_wal, false, "If true, do not write WAL for write.");

DEFINE_bool(histogram, false, "Print histogram of operation timings");
DEFINE_int64(stats_interval, 0,
             "Stats are reported every N operations when this is greater than zero. When 0 "
             "the interval grows over time.");
DEFINE_int64(stats_interval_seconds, 0,
             "Report stats every N seconds. This overrides stats_interval when both are > 0.");
DEFINE_int64(report_interval_seconds, 0,
             "If greater than zero, it will write simple stats in CSV format to "
             "--report_file every N seconds");
DEFINE_string(report_file, "report.csv",
              "Filename where some simple stats are reported to (if "
              "--report_interval_seconds is bigger than 0)");
DEFINE_int32(perf_level, 1, "Level of perf collection");

// ---- Accepted for compatibility; shale has nothing to act on yet. ----
DEFINE_bool(statistics, false, "Database statistics");
DEFINE_int32(stats_level, 3, "stats level for statistics");
DEFINE_int32(stats_per_interval, 0,
             "Reports additional stats per interval when this is greater than 0.");
DEFINE_int64(cache_size, 8388608, "Number of bytes to use as a cache of uncompressed data");
DEFINE_int32(cache_numshardbits, -1,
             "Number of shards for the block cache is 2 ** cache_numshardbits. Negative "
             "means use default settings.");
DEFINE_bool(use_ribbon_filter, false, "Use Ribbon instead of Bloom filter");
DEFINE_bool(cache_index_and_filter_blocks, false, "Cache index/filter blocks in block cache.");
DEFINE_int32(max_background_compactions, -1,
             "The maximum number of concurrent background compactions that can occur in "
             "parallel.");
DEFINE_int32(max_background_flushes, -1,
             "The maximum number of concurrent background flushes that can occur in "
             "parallel.");
DEFINE_uint64(subcompactions, 1,
              "Maximum number of subcompactions to divide L0-L1 compactions into.");
DEFINE_int32(level0_file_num_compaction_trigger, 4,
             "Number of files in level-0 when compactions start.");
DEFINE_int32(level0_slowdown_writes_trigger, 20,
             "Number of files in level-0 that will slow down writes.");
DEFINE_int32(level0_stop_writes_trigger, 36,
             "Number of files in level-0 that will trigger put stop.");
DEFINE_uint64(max_bytes_for_level_base, 268435456, "Max bytes for level-1");
DEFINE_double(max_bytes_for_level_multiplier, 10,
              "A multiplier to compute max bytes for level-N (N >= 2)");
DEFINE_int64(target_file_size_base, 67108864, "Target file size at level-1");
DEFINE_bool(level_compaction_dynamic_level_bytes, false, "Whether level size base is dynamic");
DEFINE_bool(disable_auto_compactions, false, "Do not auto trigger compactions");
DEFINE_uint64(delayed_write_rate, 8388608,
              "Limited bytes allowed to DB when soft_rate_limit or "
              "level0_slowdown_writes_trigger triggers");
DEFINE_bool(mmap_read, false, "Allow reads to occur via mmap-ing files");
DEFINE_string(merge_operator, "",
              "The merge operator to use with the database. shale has no merge operators "
              "yet.");
DEFINE_int32(max_successive_merges, 0,
             "Maximum number of successive merge operations on a key in the memtable");
DEFINE_int32(mergereadpercent, 70,
             "Ratio of merges to merges&reads (expressed as percentage) for the "
             "ReadRandomMergeRandom workload.");
DEFINE_bool(unordered_write, false,
            "Enable the unordered write feature, which provides higher throughput but "
            "relaxes the guarantees around atomic reads and immutable snapshots");
DEFINE_bool(two_write_queues, false,
            "Use a second write queue for WAL-only writes (not a RocksDB 7.8 db_bench flag)");
DEFINE_bool(transaction_db, false,
            "Open a TransactionDB instance. Required for randomtransaction benchmark.");
DEFINE_uint64(transaction_lock_timeout, 100,
              "If using a transaction_db, specifies the lock wait timeout in milliseconds "
              "before failing a transaction waiting on a lock");
DEFINE_string(wal_dir, "", "If not empty, use the given dir for WAL");
DEFINE_uint64(benchmark_write_rate_limit, 0,
              "If non-zero, db_bench will rate-limit the writes going into RocksDB. This is "
              "the global rate in bytes/second.");
DEFINE_int32(disable_seek_compaction, 0, "Not used, left here for backwards compatibility");
DEFINE_int32(max_grandparent_overlap_factor, 10,
             "Not used, left here for backwards compatibility");
DEFINE_uint64(delete_obsolete_files_period_micros, 0,
              "Ignored. Left here for backward compatibility");
DEFINE_int32(min_level_to_compress, -1,
             "If non-negative, compression starts from this level. Levels with number < "
             "min_level_to_compress are not compressed. Otherwise, apply compression_type "
             "to all levels.");

namespace shale::tools {
namespace {

// How a compatibility flag relates to what shale does.
enum class Rule {
  kWarn,           // any non-default value is ignored: warn
  kQuietIfHigher,  // an L0 trigger: no compaction and no L0 stalls yet, so raising it
                   // changes nothing; lowering it asks for stalls we do not make
  kQuietIfTrue,    // disable_auto_compactions=1 is what shale does today
  kReject,         // ignoring it would measure something else than asked
};

struct CompatFlag {
  const char* name;
  Rule rule;
  const char* why;  // for kReject
};

constexpr CompatFlag kCompatFlags[] = {
    {"statistics", Rule::kWarn, nullptr},
    {"stats_level", Rule::kWarn, nullptr},
    {"stats_per_interval", Rule::kWarn, nullptr},
    {"cache_size", Rule::kWarn, nullptr},
    {"cache_numshardbits", Rule::kWarn, nullptr},
    {"use_ribbon_filter", Rule::kWarn, nullptr},
    {"cache_index_and_filter_blocks", Rule::kWarn, nullptr},
    {"max_background_compactions", Rule::kWarn, nullptr},
    {"max_background_flushes", Rule::kWarn, nullptr},
    {"subcompactions", Rule::kWarn, nullptr},
    {"level0_file_num_compaction_trigger", Rule::kQuietIfHigher, nullptr},
    {"level0_slowdown_writes_trigger", Rule::kQuietIfHigher, nullptr},
    {"level0_stop_writes_trigger", Rule::kQuietIfHigher, nullptr},
    {"max_bytes_for_level_base", Rule::kWarn, nullptr},
    {"max_bytes_for_level_multiplier", Rule::kWarn, nullptr},
    {"target_file_size_base", Rule::kWarn, nullptr},
    {"level_compaction_dynamic_level_bytes", Rule::kWarn, nullptr},
    {"disable_auto_compactions", Rule::kQuietIfTrue, nullptr},
    {"delayed_write_rate", Rule::kWarn, nullptr},
    {"mmap_read", Rule::kWarn, nullptr},
    {"merge_operator", Rule::kWarn, nullptr},
    {"max_successive_merges", Rule::kWarn, nullptr},
    {"mergereadpercent", Rule::kWarn, nullptr},
    {"unordered_write", Rule::kWarn, nullptr},
    {"two_write_queues", Rule::kWarn, nullptr},
    {"transaction_db", Rule::kReject,
     "--transaction_db=1 needs a TransactionDB, which shale does not have yet; running "
     "without one would report plain writes as transactional"},
    {"transaction_lock_timeout", Rule::kWarn, nullptr},
    {"wal_dir", Rule::kWarn, nullptr},
    {"benchmark_write_rate_limit", Rule::kWarn, nullptr},
    {"perf_level", Rule::kWarn, nullptr},
    {"disable_seek_compaction", Rule::kWarn, nullptr},
    {"max_grandparent_overlap_factor", Rule::kWarn, nullptr},
    {"delete_obsolete_files_period_micros", Rule::kWarn, nullptr},
    {"min_level_to_compress", Rule::kWarn, nullptr},
};

}  // namespace

bool CheckFlagsShaleCannotHonor() {
  bool ok = true;
  for (const CompatFlag& f : kCompatFlags) {
    GFLAGS_NAMESPACE::CommandLineFlagInfo info;
    if (!GFLAGS_NAMESPACE::GetCommandLineFlagInfo(f.name, &info)) continue;
    if (info.current_value == info.default_value) continue;
    bool quiet = false;
    switch (f.rule) {
      case Rule::kWarn:
        break;
      case Rule::kQuietIfHigher:
        quiet = std::strtoll(info.current_value.c_str(), nullptr, 10) >=
                std::strtoll(info.default_value.c_str(), nullptr, 10);
        break;
      case Rule::kQuietIfTrue:
        quiet = info.current_value == "true";
        break;
      case Rule::kReject:
        fprintf(stderr, "%s\n", f.why);
        ok = false;
        continue;
    }
    if (!quiet) fprintf(stderr, "WARNING: --%s is accepted but not used by shale yet\n", f.name);
  }
  return ok;
}

}  // namespace shale::tools
