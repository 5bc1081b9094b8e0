#include "tools/db_bench_flags.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "options/option_codec.h"
#include "options/option_table.h"

// Flags that set an option take their default and help from the option tables
// (options/option_tables.cc), where a db_bench default that differs from the struct's (as
// RocksDB's db_bench has a few) is recorded. BuildOptions maps them onto Options through
// the same tables. They run during static initialization; the tables are constants.
namespace {

const shale::OptionInfo& BenchOption(const char* flag) {
  for (shale::OptionStruct which : {shale::OptionStruct::kDB, shale::OptionStruct::kCF,
                                    shale::OptionStruct::kBlockBasedTable}) {
    for (const shale::OptionInfo& info : shale::OptionsTable(which)) {
      const char* f = info.BenchFlag();
      if (f != nullptr && std::string(f) == flag) return info;
    }
  }
  fprintf(stderr, "db_bench: no option table entry has the flag --%s\n", flag);
  std::abort();
}

const char* OptionHelp(const char* flag) { return BenchOption(flag).help; }

template <typename T>
T OptionDefault(const char* flag) {
  const shale::OptionInfo& info = BenchOption(flag);
  const std::string text = info.BenchDefault();
  T value{};
  bool ok;
  if constexpr (std::is_same_v<T, bool>) {
    ok = shale::ParseBool(text, &value);
  } else if constexpr (std::is_same_v<T, double>) {
    ok = shale::ParseDouble(text, &value);
  } else if constexpr (std::is_signed_v<T>) {
    long long v = 0;
    ok = shale::ParseSigned(text, std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), &v);
    value = static_cast<T>(v);
  } else {
    unsigned long long v = 0;
    ok = shale::ParseUnsigned(text, std::numeric_limits<T>::max(), &v);
    value = static_cast<T>(v);
  }
  if (!ok) {
    fprintf(stderr, "db_bench: default \"%s\" of --%s does not fit the flag\n", text.c_str(), flag);
    std::abort();
  }
  return value;
}

}  // namespace

// An option's flag: RocksDB's db_bench name and type, the table's default and help.
#define OPTION_FLAG(type, ctype, name) \
  DEFINE_##type(name, OptionDefault<ctype>(#name), OptionHelp(#name))

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
              "\toverwrite, readseq, readreverse, readrandom, readrandomfast, readmissing,\n"
              "\tseekrandom (with seek_nexts), readwhilewriting, readrandomwriterandom,\n"
              "\tupdaterandom, deleteseq, deleterandom, crc32c, compress, uncompress,\n"
              "\tcompact, multireadrandom (batch_size keys per MultiGet, multiread_batched,\n"
              "\tmultiread_stride); with --merge_operator: mergerandom, readrandommergerandom,\n"
              "\treadwhilemerging, seekrandomwhilemerging, getmergeoperands (one key, 999\n"
              "\tcomma-separated lists of 100 numbers, read back whole with Get and as\n"
              "\toperands); readrandomoperands (readrandom through GetMergeOperands);\n"
              "\trandomtransaction (read-modify-write transactions over --transaction_sets\n"
              "\tsets of keys, verified after with --transaction_db);\n"
              "\tand without a result line: flush, compactall, waitforcompaction, stats,\n"
              "\tlevelstats, memstats, sstables\n"
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
DEFINE_bool(multiread_batched, false, "Use the new MultiGet API");
DEFINE_int64(multiread_stride, 0,
             "Stride length for the keys in a MultiGet batch: 0 draws each key at random, n > 0 "
             "reads consecutive keys n apart from a random start");
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
DEFINE_int32(mergereadpercent, 70,
             "readrandommergerandom: the percentage of its operations that are merges (the "
             "rest are reads)");
DEFINE_int64(merge_keys, -1,
             "Number of distinct keys mergerandom and readrandommergerandom pick from; "
             "negative: --num");
DEFINE_int32(num_column_families, 1,
             "Column families to spread the writes and point reads over: \"default\" and "
             "column_family_name_000001, ...; a key's number picks its family");
DEFINE_int32(num_hot_column_families, 0,
             "If more than 0 (and below --num_column_families): only this many families "
             "take the traffic at a time; a write benchmark creates the next this many once "
             "it has done its share of writes to the current ones, until all exist");
DEFINE_string(column_family_distribution, "",
              "Comma-separated percentages: the ith is the chance that an operation uses "
              "the ith hot family. As many as --num_hot_column_families (else "
              "--num_column_families), summing to 100, e.g. \"10,20,30,40\"");
// Range deletions in the write benchmarks, as RocksDB 11.8.1's write loop adds them.
DEFINE_int64(writes_before_delete_range, 0,
             "Number of writes before DeleteRange is called regularly.");
DEFINE_int64(writes_per_range_tombstone, 0, "Number of writes between range tombstones");
DEFINE_int64(range_tombstone_width, 100, "Number of keys in tombstone's range");
DEFINE_int64(max_num_range_tombstones, 0, "Maximum number of range tombstones to insert.");
DEFINE_bool(expand_range_tombstones, false,
            "Expand range tombstone into sequential regular tombstones.");
DEFINE_int32(ops_between_duration_checks, 1000, "Check duration limit every x ops");
DEFINE_bool(progress_reports, true, "If true, db_bench will report number of finished operations.");

DEFINE_string(db, "", "Use the db with the following name.");
DEFINE_bool(use_existing_db, false,
            "If true, do not destroy the existing database.  If you set this flag and also "
            "specify a benchmark that wants a fresh database, that benchmark will fail.");
DEFINE_string(compression_type, "snappy", "Algorithm to use to compress the database");
OPTION_FLAG(int32, int32_t, block_size);
DEFINE_string(data_block_index_type, "kDataBlockBinarySearch", OptionHelp("data_block_index_type"));
DEFINE_bool(use_data_block_hash_index, false,
            "Data blocks get a hash index for Get (RocksDB's db_bench spelling of "
            "--data_block_index_type=kDataBlockBinaryAndHash)");
OPTION_FLAG(double, double, data_block_hash_table_util_ratio);
DEFINE_int32(bloom_bits, -1,
             "Bloom filter bits per key. Negative means use default.Zero disables.");
OPTION_FLAG(int64, int64_t, write_buffer_size);
DEFINE_int64(arena_block_size, 0, "The size, in bytes, of one block in arena memory allocation.");
DEFINE_bool(memtable_use_huge_page, false, "Try to use huge page in memtables.");
OPTION_FLAG(int32, int32_t, max_write_buffer_number);
OPTION_FLAG(int64, int64_t, max_write_buffer_size_to_maintain);
OPTION_FLAG(int32, int32_t, max_background_jobs);
OPTION_FLAG(int32, int32_t, num_levels);
OPTION_FLAG(int32, int32_t, open_files);
OPTION_FLAG(bool, bool, use_direct_reads);
OPTION_FLAG(bool, bool, use_direct_io_for_flush_and_compaction);
OPTION_FLAG(bool, bool, allow_concurrent_memtable_write);
OPTION_FLAG(bool, bool, enable_pipelined_write);
DEFINE_bool(sync, false, "Sync all writes to disk");
DEFINE_bool(disable_wal, false, "If true, do not write WAL for write.");
DEFINE_string(merge_operator, "",
              "Merge operator the DB is opened with, by name: put, uint64add, stringappend "
              "or max (or the operator's Name()). Empty: none, and the merge benchmarks "
              "are skipped. A DB written with one operator needs the same one to be read");
OPTION_FLAG(int32, int32_t, max_successive_merges);
DEFINE_bool(use_keep_filter, false,
            "Whether to use a noop compaction filter (RocksDB's flag: one that keeps "
            "everything, to measure what running a filter costs compaction)");

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

// ---- Caches, filters, statistics and compaction: handed to the DB's options. ----
DEFINE_bool(statistics, false, "Collect DB statistics and print them at the end of the run");
DEFINE_int32(stats_level, 3,
             "How much the statistics collect: 0 nothing, 1 tickers, 2 and size histograms, "
             "3 and timings but the finest, 4 all but mutex waits, 5 everything");
DEFINE_int32(stats_per_interval, 0,
             "With stats_interval(_seconds), thread 0 also prints the DB's compaction stats "
             "at each report, and once more when the run ends");
DEFINE_int64(cache_size, 8388608, "Capacity in bytes of the block cache; 0 or less: none");
DEFINE_string(cache_type, "lru_cache",
              "Type of block cache: lru_cache (sharded LRU) or hyper_clock_cache (lock-free "
              "clock, its table sized for entries of --block_size bytes)");
DEFINE_int32(cache_numshardbits, -1,
             "The block cache has 2^cache_numshardbits shards; negative picks by capacity");
DEFINE_double(cache_high_pri_pool_ratio, 0.0,
              "Share of the block cache kept for high-priority (index and filter) blocks");
DEFINE_bool(use_ribbon_filter, false, "Ribbon filters (same false-positive rate) instead of Bloom");
OPTION_FLAG(bool, bool, cache_index_and_filter_blocks);
OPTION_FLAG(bool, bool, pin_l0_filter_and_index_blocks_in_cache);
OPTION_FLAG(bool, bool, optimize_filters_for_hits);
DEFINE_bool(verify_checksum, true, "Check the checksum of every block read");
OPTION_FLAG(int32, int32_t, max_background_compactions);
OPTION_FLAG(int32, int32_t, max_background_flushes);
OPTION_FLAG(uint64, uint64_t, subcompactions);
OPTION_FLAG(int32, int32_t, min_write_buffer_number_to_merge);
OPTION_FLAG(int32, int32_t, level0_file_num_compaction_trigger);
OPTION_FLAG(int32, int32_t, level0_slowdown_writes_trigger);
OPTION_FLAG(int32, int32_t, level0_stop_writes_trigger);
OPTION_FLAG(uint64, uint64_t, max_bytes_for_level_base);
OPTION_FLAG(double, double, max_bytes_for_level_multiplier);
OPTION_FLAG(int64, int64_t, target_file_size_base);
OPTION_FLAG(int32, int32_t, target_file_size_multiplier);
OPTION_FLAG(uint64, uint64_t, max_compaction_bytes);
OPTION_FLAG(bool, bool, level_compaction_dynamic_level_bytes);
OPTION_FLAG(bool, bool, disable_auto_compactions);
OPTION_FLAG(uint64, uint64_t, delayed_write_rate);
OPTION_FLAG(uint64, uint64_t, db_write_buffer_size);
OPTION_FLAG(bool, bool, atomic_flush);
OPTION_FLAG(uint64, uint64_t, soft_pending_compaction_bytes_limit);
OPTION_FLAG(uint64, uint64_t, hard_pending_compaction_bytes_limit);
OPTION_FLAG(bool, bool, use_fsync);
OPTION_FLAG(uint64, uint64_t, stats_dump_period_sec);
DEFINE_int32(compaction_style, 0, "0: leveled, the only style shale has (1 universal, 2 FIFO)");

// ---- Transactions (RocksDB's randomtransaction and --transaction_db). ----
DEFINE_bool(transaction_db, false,
            "Open the DB as a TransactionDB (pessimistic, WriteCommitted): plain writes "
            "lock their keys, and randomtransaction runs real transactions and verifies them");
DEFINE_int32(txn_write_policy, 0,
             "shale's own: --transaction_db's TransactionDBOptions::write_policy (0: "
             "WRITE_COMMITTED, 1: WRITE_PREPARED); --unordered_write picks WRITE_PREPARED");
DEFINE_bool(optimistic_transaction_db, false,
            "Open the DB as an OptimisticTransactionDB (wins over --transaction_db): "
            "randomtransaction runs optimistic transactions and verifies them");
DEFINE_uint64(transaction_sets, 2,
              "randomtransaction: how many sets of keys each transaction increments one key "
              "of (1 to 9999)");
DEFINE_bool(transaction_set_snapshot, false,
            "randomtransaction: each transaction takes its snapshot when it begins "
            "(TransactionOptions::set_snapshot)");
DEFINE_uint64(transaction_lock_timeout, 100,
              "randomtransaction: milliseconds a transaction waits for a lock before it "
              "gives up (TimedOut, counted as an abort)");
DEFINE_int32(transaction_sleep, 0,
             "Accepted for RocksDB's command lines; its db_bench reads it nowhere either");

DEFINE_uint64(benchmark_write_rate_limit, 0,
              "If non-zero, the background writer of readwhilewriting, readwhilemerging "
              "and the like writes at most this many bytes (keys and values) per second");

// ---- Accepted for compatibility; shale has nothing to act on yet. ----
DEFINE_string(memtablerep, "skip_list", "Memtable kind; shale has skip_list only");
DEFINE_uint64(bytes_per_sync, 0, "Incremental background sync of SST files every N bytes");
DEFINE_uint64(wal_bytes_per_sync, 0, "Incremental background sync of WAL files every N bytes");
DEFINE_int32(compression_max_dict_bytes, 0, "Size of a compression dictionary");
OPTION_FLAG(bool, bool, mmap_read);
OPTION_FLAG(bool, bool, unordered_write);
OPTION_FLAG(bool, bool, two_write_queues);
OPTION_FLAG(bool, bool, enable_write_thread_adaptive_yield);
OPTION_FLAG(uint64, uint64_t, write_thread_max_yield_usec);
OPTION_FLAG(uint64, uint64_t, write_thread_slow_yield_usec);
OPTION_FLAG(uint64, uint64_t, compaction_readahead_size);
DEFINE_string(wal_dir, "", "If not empty, use the given dir for WAL");
DEFINE_int32(disable_seek_compaction, 0, "Not used, left here for backwards compatibility");
DEFINE_int32(max_grandparent_overlap_factor, 10, "Not used, left here for backwards compatibility");
DEFINE_uint64(delete_obsolete_files_period_micros, 0,
              "Ignored. Left here for backward compatibility");
DEFINE_int32(min_level_to_compress, -1,
             "If non-negative, compression starts from this level. Levels with number < "
             "min_level_to_compress are not compressed. Otherwise, apply compression_type "
             "to all levels.");

namespace shale::tools {
namespace {

// A flag shale accepts but cannot act on. Set to anything but its default, it either only
// warns (the run measures the same thing, minus that feature) or fails the run (ignoring
// it would report something else than was asked).
struct CompatFlag {
  const char* name;
  const char* reject_why;  // nullptr: warn only
};

constexpr CompatFlag kCompatFlags[] = {
    {"compaction_style",
     "--compaction_style: shale has leveled compaction (0) only; another style would "
     "measure a different LSM shape"},
    {"wal_dir", nullptr},
    {"perf_level", nullptr},
    {"memtablerep", nullptr},
    {"bytes_per_sync", nullptr},
    {"wal_bytes_per_sync", nullptr},
    {"compression_max_dict_bytes", nullptr},
    {"disable_seek_compaction", nullptr},
    {"max_grandparent_overlap_factor", nullptr},
    {"delete_obsolete_files_period_micros", nullptr},
    {"min_level_to_compress", nullptr},
};

}  // namespace

bool CheckFlagsShaleCannotHonor() {
  bool ok = true;
  for (const CompatFlag& f : kCompatFlags) {
    GFLAGS_NAMESPACE::CommandLineFlagInfo info;
    if (!GFLAGS_NAMESPACE::GetCommandLineFlagInfo(f.name, &info)) continue;
    if (info.current_value == info.default_value) continue;
    if (f.reject_why != nullptr) {
      fprintf(stderr, "%s\n", f.reject_why);
      ok = false;
      continue;
    }
    fprintf(stderr, "WARNING: --%s is accepted but not used by shale yet\n", f.name);
  }
  return ok;
}

}  // namespace shale::tools
