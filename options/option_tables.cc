// The three option tables (see option_table.h). One entry per public field, in the order
// the header declares them. Mutability follows RocksDB 7.8 where shale acts on the change;
// an option RocksDB lets change but shale cannot yet says so in its help.
#include <cstring>

#include "options/option_codec.h"

namespace shale {
namespace {

// The first six fields of an entry, from the struct and the member's name.
#define SHALE_OPTION(S, m)                                                        \
  .name = #m, .size = sizeof(S::m), .field = &Member<&S::m>::Field,               \
  .format = Codec<decltype(S::m)>::Format, .parse = Codec<decltype(S::m)>::Parse, \
  .number = Codec<decltype(S::m)>::kNumber

#define DB_OPTION(m) SHALE_OPTION(DBOptions, m)
#define CF_OPTION(m) SHALE_OPTION(ColumnFamilyOptions, m)
#define BBT_OPTION(m) SHALE_OPTION(BlockBasedTableOptions, m)

constexpr long double kGiB = 1024.0L * 1024 * 1024;
constexpr long double kIntMax = 2147483647.0L;
constexpr const char* kSame = "";  // db_bench's flag has the option's name

const OptionInfo kDBOptions[] = {
    {DB_OPTION(create_if_missing), .default_value = "false",
     .help = "Create the DB if it is missing"},
    {DB_OPTION(error_if_exists), .default_value = "false", .help = "Fail Open if the DB exists"},
    {DB_OPTION(create_missing_column_families), .default_value = "false",
     .help = "Create the column families Open names that the DB lacks"},
    {DB_OPTION(paranoid_checks), .default_value = "true",
     .help = "Check aggressively: verify every SST file at Open, stop at the first damage"},
    {DB_OPTION(env), .default_value = "Env::Default()",
     .flags = kOptionObject | kOptionNotPersisted, .help = "Files, time and locks"},
    {DB_OPTION(max_open_files), .default_value = "-1", .min = -1, .max = kIntMax,
     .help = "SST readers kept open; -1 keeps all (fixed at Open, unlike RocksDB)",
     .bench_flag = "open_files"},
    {DB_OPTION(use_fsync), .default_value = "false", .help = "fsync instead of fdatasync",
     .bench_flag = kSame},
    {DB_OPTION(wal_recovery_mode), .default_value = "kPointInTimeRecovery",
     .help = "What recovery does with a damaged WAL"},
    {DB_OPTION(max_background_jobs), .default_value = "2", .min = 1, .max = 1024,
     .flags = kOptionMutable | kOptionClampAtOpen,
     .help = "Background threads for flushes and compactions", .bench_flag = kSame},
    {DB_OPTION(max_background_compactions), .default_value = "-1", .min = -1, .max = 1024,
     .flags = kOptionMutable, .help = "Compactions at once; -1 derives it from max_background_jobs",
     .bench_flag = kSame},
    {DB_OPTION(max_background_flushes), .default_value = "-1", .min = -1, .max = 1024,
     .flags = kOptionMutable, .help = "Flushes at once; -1 derives it from max_background_jobs",
     .bench_flag = kSame},
    {DB_OPTION(max_subcompactions), .default_value = "1", .min = 1, .max = 1024,
     .flags = kOptionMutable | kOptionClampAtOpen, .help = "Threads one compaction may split into",
     .bench_flag = "subcompactions"},
    {DB_OPTION(delayed_write_rate), .default_value = "0", .flags = kOptionMutable,
     .help = "Bytes per second while writes are slowed; 0 means 16 MiB/s", .bench_flag = kSame,
     .bench_default = "8388608"},
    {DB_OPTION(db_write_buffer_size), .default_value = "0", .min = 0, .max = 1024 * kGiB,
     .help = "Memtable memory of all column families together; 0 means no limit",
     .bench_flag = kSame},
    {DB_OPTION(atomic_flush), .default_value = "false",
     .help = "Flush all column families together, recorded in one MANIFEST write",
     .bench_flag = kSame},
    {DB_OPTION(write_buffer_manager), .default_value = "nullptr",
     .flags = kOptionObject | kOptionNotPersisted, .help = "A memtable budget DBs may share"},
    {DB_OPTION(statistics), .default_value = "nullptr",
     .flags = kOptionObject | kOptionNotPersisted | kOptionBenchByHand,
     .help = "Tickers and histograms", .bench_flag = kSame},
    {DB_OPTION(info_log), .default_value = "nullptr", .flags = kOptionObject | kOptionNotPersisted,
     .help = "Where LOG lines go; nullptr writes LOG in the DB directory"},
    {DB_OPTION(info_log_level), .default_value = "INFO_LEVEL",
     .help = "Lines below this level are not logged"},
    {DB_OPTION(stats_dump_period_sec), .default_value = "600", .flags = kOptionMutable,
     .help = "Seconds between stats dumps into the LOG; 0 disables", .bench_flag = kSame},
    {DB_OPTION(use_direct_reads), .default_value = "false", .help = "O_DIRECT for SST reads",
     .bench_flag = kSame},
    {DB_OPTION(allow_mmap_reads), .default_value = "false",
     .help = "Read SST files through a mapping instead of pread", .bench_flag = "mmap_read"},
    {DB_OPTION(use_direct_io_for_flush_and_compaction), .default_value = "false",
     .help = "O_DIRECT for SST writes", .bench_flag = kSame},
    {DB_OPTION(allow_concurrent_memtable_write), .default_value = "true",
     .help = "Group members insert their batches into the memtable in parallel",
     .bench_flag = kSame},
    {DB_OPTION(enable_pipelined_write), .default_value = "false",
     .help = "Overlap one group's WAL write with the previous group's inserts", .bench_flag = kSame,
     .bench_default = "true"},
    {DB_OPTION(unordered_write), .default_value = "false",
     .help = "Publish writes right after the WAL; weaker snapshot guarantees", .bench_flag = kSame},
    {DB_OPTION(two_write_queues), .default_value = "false",
     .help = "A second write queue for WAL-only writes", .bench_flag = kSame},
    {DB_OPTION(allow_2pc), .default_value = "false",
     .help = "Two-phase commit: prepared transactions in the WAL (TransactionDB)"},
    {DB_OPTION(allow_ingest_behind), .default_value = "false",
     .help = "Keep the last level for files ingested behind the rest"},
    {DB_OPTION(enable_write_thread_adaptive_yield), .default_value = "true",
     .help = "Writers yield before blocking while they wait", .bench_flag = kSame},
    {DB_OPTION(write_thread_max_yield_usec), .default_value = "100",
     .help = "Longest yielding wait of a writer, in microseconds", .bench_flag = kSame},
    {DB_OPTION(write_thread_slow_yield_usec), .default_value = "3",
     .help = "A yield slower than this ends the yielding wait", .bench_flag = kSame},
    {DB_OPTION(writable_file_max_buffer_size), .default_value = "1048576", .min = 0, .max = kGiB,
     .help = "Bytes of writes buffered before a write() call"},
    {DB_OPTION(compaction_readahead_size), .default_value = "2097152", .min = 0, .max = kGiB,
     .flags = kOptionMutable, .help = "Bytes a compaction reads from an input table at a time",
     .bench_flag = kSame},
    {DB_OPTION(max_manifest_file_size), .default_value = "1073741824",
     .help = "Bytes of MANIFEST after which the next edit starts a new one"},
};

const OptionInfo kCFOptions[] = {
    {CF_OPTION(comparator), .default_value = "leveldb.BytewiseComparator", .flags = kOptionObject,
     .help = "Order of user keys; fixed for the life of the DB"},
    {CF_OPTION(write_buffer_size), .default_value = "67108864", .min = 4096, .max = 64 * kGiB,
     .flags = kOptionMutable | kOptionClampAtOpen,
     .help = "Bytes a memtable holds before it is switched and flushed", .bench_flag = kSame},
    {CF_OPTION(max_write_buffer_number), .default_value = "2", .min = 2, .max = kIntMax,
     .flags = kOptionMutable | kOptionClampAtOpen,
     .help = "Memtables (active and immutable) before writes wait for a flush",
     .bench_flag = kSame},
    {CF_OPTION(max_write_buffer_size_to_maintain), .default_value = "0", .min = -1,
     .max = 64 * kGiB,
     .help = "Bytes of memtables kept, flushed ones included, for conflict checks",
     .bench_flag = kSame},
    {CF_OPTION(min_write_buffer_number_to_merge), .default_value = "1", .min = 1, .max = 1,
     .flags = kOptionClampAtOpen,
     .help = "Immutable memtables merged into one flush; lowered to 1 at Open",
     .bench_flag = kSame},
    {CF_OPTION(arena_block_size), .default_value = "0", .min = 0, .max = kGiB,
     .flags = kOptionMutable | kOptionBenchByHand,
     .help = "Bytes a memtable takes from the system at a time; 0: derived", .bench_flag = kSame},
    {CF_OPTION(memtable_huge_page_size), .default_value = "0",
     .flags = kOptionMutable | kOptionBenchByHand,
     .help = "Reserved huge pages of this size for memtables; 0: none",
     .bench_flag = "memtable_use_huge_page"},
    {CF_OPTION(compression), .default_value = "kSnappyCompression",
     .flags = kOptionMutable | kOptionBenchByHand,
     .help = "Block compression of new SST files (default: none in a build without snappy)",
     .bench_flag = "compression_type"},
    {CF_OPTION(num_levels), .default_value = "7", .min = 2, .max = 100,
     .help = "Levels of the LSM tree", .bench_flag = kSame},
    {CF_OPTION(level0_file_num_compaction_trigger), .default_value = "4", .min = 1, .max = kIntMax,
     .flags = kOptionMutable | kOptionClampAtOpen,
     .help = "L0 files that start a compaction into L1", .bench_flag = kSame},
    {CF_OPTION(level0_slowdown_writes_trigger), .default_value = "20", .min = 1, .max = kIntMax,
     .flags = kOptionMutable | kOptionClampAtOpen, .help = "L0 files at which writes are slowed",
     .bench_flag = kSame},
    {CF_OPTION(level0_stop_writes_trigger), .default_value = "36", .min = 1, .max = kIntMax,
     .flags = kOptionMutable | kOptionClampAtOpen, .help = "L0 files at which writes stop",
     .bench_flag = kSame},
    {CF_OPTION(max_bytes_for_level_base), .default_value = "268435456", .min = 1,
     .flags = kOptionMutable, .help = "Target size of L1", .bench_flag = kSame},
    {CF_OPTION(max_bytes_for_level_multiplier), .default_value = "10.000000", .min = 1, .max = 1e6L,
     .flags = kOptionMutable, .help = "Each level's target is this many times the one above",
     .bench_flag = kSame},
    {CF_OPTION(level_compaction_dynamic_level_bytes), .default_value = "false",
     .help = "Size level targets from the last level upward", .bench_flag = kSame},
    {CF_OPTION(target_file_size_base), .default_value = "67108864", .min = 1,
     .flags = kOptionMutable, .help = "Target size of a compaction output file at L1",
     .bench_flag = kSame},
    {CF_OPTION(target_file_size_multiplier), .default_value = "1", .min = 1, .max = 1000,
     .flags = kOptionMutable,
     .help = "Each level's target file size is this many times the one above", .bench_flag = kSame},
    {CF_OPTION(max_compaction_bytes), .default_value = "0", .flags = kOptionMutable,
     .help = "Largest input of one compaction; 0: 25 * target_file_size_base", .bench_flag = kSame},
    {CF_OPTION(disable_auto_compactions), .default_value = "false", .flags = kOptionMutable,
     .help = "No automatic compactions (CompactRange still works)", .bench_flag = kSame},
    {CF_OPTION(soft_pending_compaction_bytes_limit), .default_value = "68719476736",
     .flags = kOptionMutable, .help = "Pending compaction bytes at which writes slow",
     .bench_flag = kSame},
    {CF_OPTION(hard_pending_compaction_bytes_limit), .default_value = "274877906944",
     .flags = kOptionMutable, .help = "Pending compaction bytes at which writes stop",
     .bench_flag = kSame, .bench_default = "137438953472"},
    {CF_OPTION(optimize_filters_for_hits), .default_value = "false",
     .help = "Build no filter for the last level", .bench_flag = kSame},
    {CF_OPTION(table_factory), .default_value = "BlockBasedTable", .flags = kOptionObject,
     .help = "The SST format; its options have their own section"},
    {CF_OPTION(merge_operator), .default_value = "nullptr",
     .flags = kOptionObject | kOptionBenchByHand, .help = "How Merge operands are combined",
     .bench_flag = kSame},
    {CF_OPTION(max_successive_merges), .default_value = "0", .flags = kOptionMutable,
     .help = "Operands of one key in the memtable before a Merge folds them; 0: never",
     .bench_flag = kSame},
    {CF_OPTION(compaction_filter), .default_value = "nullptr", .flags = kOptionObject,
     .help = "Offered each key's newest value in compaction"},
    {CF_OPTION(compaction_filter_factory), .default_value = "nullptr", .flags = kOptionObject,
     .help = "Makes a compaction filter per compaction"},
};

const OptionInfo kBlockBasedTableOptions[] = {
    {BBT_OPTION(checksum), .default_value = "kXXH3", .help = "Checksum of every block"},
    {BBT_OPTION(block_size), .default_value = "4096", .min = 1, .max = 4 * kGiB - 1,
     .help = "Uncompressed size a data block aims at", .bench_flag = kSame},
    {BBT_OPTION(block_restart_interval), .default_value = "16", .min = 1, .max = kIntMax,
     .help = "Keys between restart points in data blocks"},
    {BBT_OPTION(index_block_restart_interval), .default_value = "1", .min = 1, .max = kIntMax,
     .help = "Keys between restart points in the index block"},
    {BBT_OPTION(data_block_index_type), .default_value = "kDataBlockBinarySearch",
     .help = "Data blocks: kDataBlockBinarySearch, or kDataBlockBinaryAndHash (a hash index "
             "for Get)",
     .bench_flag = kSame},
    {BBT_OPTION(data_block_hash_table_util_ratio), .default_value = "0.750000",
     .help = "Keys per bucket of the data block hash index", .bench_flag = kSame},
    {BBT_OPTION(block_cache), .default_value = "nullptr",
     .flags = kOptionObject | kOptionNotPersisted | kOptionBenchByHand,
     .help = "Cache of uncompressed blocks; nullptr: an 8 MiB LRU cache",
     .bench_flag = "cache_size"},
    {BBT_OPTION(no_block_cache), .default_value = "false", .flags = kOptionBenchByHand,
     .help = "Read without a cache", .bench_flag = "cache_size"},
    {BBT_OPTION(cache_index_and_filter_blocks), .default_value = "false",
     .help = "Index and filter blocks live in the block cache", .bench_flag = kSame},
    {BBT_OPTION(cache_index_and_filter_blocks_with_high_priority), .default_value = "true",
     .help = "... in its high-priority pool"},
    {BBT_OPTION(pin_l0_filter_and_index_blocks_in_cache), .default_value = "false",
     .help = "L0 files keep theirs pinned in the cache", .bench_flag = kSame},
    {BBT_OPTION(filter_policy), .default_value = "nullptr",
     .flags = kOptionObject | kOptionBenchByHand,
     .help = "A filter per file (bloomfilter:<bits>:false, ribbonfilter:<bits>:<level>)",
     .bench_flag = "bloom_bits"},
    {BBT_OPTION(whole_key_filtering), .default_value = "true",
     .help = "Put whole keys into the filter"},
    {BBT_OPTION(verify_compression), .default_value = "false",
     .help = "Decompress each compressed block and compare"},
    {BBT_OPTION(format_version), .default_value = "5", .min = 5, .max = 5,
     .help = "SST format version written; only 5"},
};

}  // namespace

std::span<const OptionInfo> DBOptionsTable() { return kDBOptions; }
std::span<const OptionInfo> CFOptionsTable() { return kCFOptions; }
std::span<const OptionInfo> BlockBasedTableOptionsTable() { return kBlockBasedTableOptions; }

std::span<const OptionInfo> OptionsTable(OptionStruct which) {
  switch (which) {
    case OptionStruct::kDB: return kDBOptions;
    case OptionStruct::kCF: return kCFOptions;
    case OptionStruct::kBlockBasedTable: return kBlockBasedTableOptions;
  }
  return {};
}

const OptionInfo* FindOption(OptionStruct which, const std::string& name) {
  for (const OptionInfo& info : OptionsTable(which)) {
    if (name == info.name) return &info;
  }
  return nullptr;
}

std::string FormatOption(const OptionInfo& info, const void* options) {
  return info.format(OptionField(info, options));
}

Status CheckOptionBounds(const OptionInfo& info, const void* options) {
  if (info.number == nullptr) return Status::OK();
  const long double v = info.number(OptionField(info, options));
  if (v >= info.min && v <= info.max) return Status::OK();
  return Status::InvalidArgument(info.name, FormatOption(info, options) + " is out of bounds [" +
                                                FormatDouble(double(info.min)) + ", " +
                                                FormatDouble(double(info.max)) + "]");
}

Status ParseOption(const OptionInfo& info, const std::string& text, void* options,
                   bool check_bounds) {
  if (info.parse == nullptr) {
    return Status::InvalidArgument(info.name, "is an object and cannot be set from text");
  }
  void* member = OptionField(info, options);
  // Parse into a copy of the whole member so that a refused value changes nothing.
  alignas(16) unsigned char saved[64];
  if (info.size > sizeof(saved)) return Status::InvalidArgument(info.name, "too large");
  std::memcpy(saved, member, info.size);
  if (!info.parse(text, member)) {
    return Status::InvalidArgument(info.name, "cannot parse \"" + text + "\"");
  }
  Status s = check_bounds ? CheckOptionBounds(info, options) : Status::OK();
  if (!s.ok()) std::memcpy(member, saved, info.size);
  return s;
}

}  // namespace shale
