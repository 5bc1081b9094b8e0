// Statistics: process-wide counters (tickers) and value distributions (histograms) a DB
// records while it works, named as RocksDB names them so dashboards and scripts written for
// RocksDB read shale's with "rocksdb." replaced by "shale.".
//
// Thread safety: every method of a Statistics may be called from any thread at any time;
// recordTick and recordInHistogram are on hot paths and never take a lock in the built-in
// implementation. Readers (getTickerCount, histogramData, ToString) sum the per-thread
// shards, so a value read while writers run is a sum of some recent values, never torn.
//
// Ownership: CreateDBStatistics returns a shared_ptr that Options::statistics holds; a
// Statistics may be shared by several DBs, whose counts then add up.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shale/status.h"

namespace shale {

// Counters. The order follows RocksDB 7.8's for the tickers shale has; the numeric values
// are shale's own (not RocksDB's) and may grow between releases: persist names, not numbers.
enum Tickers : uint32_t {
  // Block cache totals. BLOCK_CACHE_MISS == INDEX_MISS + FILTER_MISS + DATA_MISS, likewise
  // for hits.
  BLOCK_CACHE_MISS = 0,
  BLOCK_CACHE_HIT,
  // Blocks inserted, and inserts the cache refused (strict capacity limit).
  BLOCK_CACHE_ADD,
  BLOCK_CACHE_ADD_FAILURES,
  BLOCK_CACHE_INDEX_MISS,
  BLOCK_CACHE_INDEX_HIT,
  BLOCK_CACHE_INDEX_ADD,
  BLOCK_CACHE_INDEX_BYTES_INSERT,
  BLOCK_CACHE_FILTER_MISS,
  BLOCK_CACHE_FILTER_HIT,
  BLOCK_CACHE_FILTER_ADD,
  BLOCK_CACHE_FILTER_BYTES_INSERT,
  BLOCK_CACHE_DATA_MISS,
  BLOCK_CACHE_DATA_HIT,
  BLOCK_CACHE_DATA_ADD,
  BLOCK_CACHE_DATA_BYTES_INSERT,
  // Bytes served from the cache, and bytes inserted into it.
  BLOCK_CACHE_BYTES_READ,
  BLOCK_CACHE_BYTES_WRITE,

  // Point lookups a filter answered "no" to (a table read avoided).
  BLOOM_FILTER_USEFUL,
  // Lookups a whole-key filter answered "maybe" to, and of those the ones where the key
  // was really there.
  BLOOM_FILTER_FULL_POSITIVE,
  BLOOM_FILTER_FULL_TRUE_POSITIVE,

  // Gets answered by a memtable (mutable or immutable), and those that went on to tables.
  MEMTABLE_HIT,
  MEMTABLE_MISS,

  // Gets answered by a table in L0, in L1, in L2 or deeper.
  GET_HIT_L0,
  GET_HIT_L1,
  GET_HIT_L2_AND_UP,

  // Why compaction dropped an entry: a newer version of the key hides it from every
  // snapshot; a deletion (or what it hid) reached the bottom with nothing beneath; a range
  // deletion covered it; a compaction filter removed it.
  COMPACTION_KEY_DROP_NEWER_ENTRY,
  COMPACTION_KEY_DROP_OBSOLETE,
  COMPACTION_KEY_DROP_RANGE_DEL,
  COMPACTION_KEY_DROP_USER,
  COMPACTION_RANGE_DEL_DROP_OBSOLETE,
  COMPACTION_OPTIMIZED_DEL_DROP_OBSOLETE,
  // Compactions abandoned before they finished (shutdown, manual cancel).
  COMPACTION_CANCELLED,

  // Keys written by Put/Delete/Merge/Write; keys read by Get (found or not); keys updated
  // in place (always 0 in shale: no in-place updates).
  NUMBER_KEYS_WRITTEN,
  NUMBER_KEYS_READ,
  NUMBER_KEYS_UPDATED,
  // Uncompressed bytes of keys and values written by the user, and of values Get returned.
  BYTES_WRITTEN,
  BYTES_READ,
  // Iterator calls, and those that left the iterator Valid().
  NUMBER_DB_SEEK,
  NUMBER_DB_NEXT,
  NUMBER_DB_PREV,
  NUMBER_DB_SEEK_FOUND,
  NUMBER_DB_NEXT_FOUND,
  NUMBER_DB_PREV_FOUND,
  // Key and value bytes iterators returned.
  ITER_BYTES_READ,
  // Table files opened, and opens that failed.
  NO_FILE_OPENS,
  NO_FILE_ERRORS,
  // Microseconds writers spent delayed or stopped by the write controller.
  STALL_MICROS,
  // Microseconds spent waiting for the DB mutex (only at StatsLevel kAll).
  DB_MUTEX_WAIT_MICROS,
  // MultiGet calls, the keys they asked for (found or not), the bytes of the values they
  // returned, and the keys they found.
  NUMBER_MULTIGET_CALLS,
  NUMBER_MULTIGET_KEYS_READ,
  NUMBER_MULTIGET_BYTES_READ,
  NUMBER_MULTIGET_KEYS_FOUND,
  NUMBER_MERGE_FAILURES,
  // WAL syncs, and bytes appended to WALs.
  WAL_FILE_SYNCED,
  WAL_FILE_BYTES,
  // Writes the calling thread committed as group leader, and those a leader did for it.
  WRITE_DONE_BY_SELF,
  WRITE_DONE_BY_OTHER,
  // Write calls that asked for the WAL.
  WRITE_WITH_WAL,
  // Writes that failed with Incomplete instead of waiting out a stall (no_slowdown).
  WRITE_TIMEDOUT,
  // Bytes compaction read and wrote; bytes flushes wrote.
  COMPACT_READ_BYTES,
  COMPACT_WRITE_BYTES,
  FLUSH_WRITE_BYTES,
  NUMBER_SUPERVERSION_ACQUIRES,
  NUMBER_SUPERVERSION_RELEASES,
  NUMBER_BLOCK_COMPRESSED,
  NUMBER_BLOCK_DECOMPRESSED,
  NUMBER_BLOCK_NOT_COMPRESSED,
  // Bytes of live entries in memtables when they were flushed, and of entries a newer
  // version in the same memtable made obsolete.
  MEMTABLE_PAYLOAD_BYTES_AT_FLUSH,
  MEMTABLE_GARBAGE_BYTES_AT_FLUSH,
  // Iterators created and destroyed.
  NO_ITERATOR_CREATED,
  NO_ITERATOR_DELETED,
  TICKER_ENUM_MAX
};

// Every ticker below TICKER_ENUM_MAX with its printed name ("shale.block.cache.miss"), in
// enum order.
extern const std::vector<std::pair<Tickers, std::string>> TickersNameMap;

// Distributions (of microseconds unless the name says otherwise), in RocksDB 7.8's order.
enum Histograms : uint32_t {
  DB_GET = 0,
  DB_WRITE,
  COMPACTION_TIME,
  COMPACTION_CPU_TIME,
  SUBCOMPACTION_SETUP_TIME,
  TABLE_SYNC_MICROS,
  COMPACTION_OUTFILE_SYNC_MICROS,
  WAL_FILE_SYNC_MICROS,
  MANIFEST_FILE_SYNC_MICROS,
  TABLE_OPEN_IO_MICROS,
  DB_MULTIGET,
  READ_BLOCK_COMPACTION_MICROS,
  READ_BLOCK_GET_MICROS,
  WRITE_RAW_BLOCK_MICROS,
  STALL_L0_SLOWDOWN_COUNT,
  STALL_MEMTABLE_COMPACTION_COUNT,
  STALL_L0_NUM_FILES_COUNT,
  HARD_RATE_LIMIT_DELAY_COUNT,
  SOFT_RATE_LIMIT_DELAY_COUNT,
  NUM_FILES_IN_SINGLE_COMPACTION,
  DB_SEEK,
  WRITE_STALL,
  SST_READ_MICROS,
  NUM_SUBCOMPACTIONS_SCHEDULED,
  // Bytes per Get value, per Write batch and per MultiGet call (its values together).
  BYTES_PER_READ,
  BYTES_PER_WRITE,
  BYTES_PER_MULTIGET,
  BYTES_COMPRESSED,
  BYTES_DECOMPRESSED,
  COMPRESSION_TIMES_NANOS,
  DECOMPRESSION_TIMES_NANOS,
  READ_NUM_MERGE_OPERANDS,
  FLUSH_TIME,
  HISTOGRAM_ENUM_MAX
};

// Every histogram below HISTOGRAM_ENUM_MAX with its printed name ("shale.db.get.micros").
extern const std::vector<std::pair<Histograms, std::string>> HistogramsNameMap;

// A summary of one histogram. Percentiles are interpolated within the bucket holding them
// and clamped to [min, max].
struct HistogramData {
  double median = 0.0;
  double percentile95 = 0.0;
  double percentile99 = 0.0;
  double average = 0.0;
  double standard_deviation = 0.0;
  double max = 0.0;
  uint64_t count = 0;
  uint64_t sum = 0;
  double min = 0.0;
};

// How much to collect; each level includes everything the levels before it collect. Time
// measurements cost a clock read each, which is why they can be left out.
enum StatsLevel : uint8_t {
  // Nothing at all (tickers neither).
  kDisableAll,
  // RocksDB's alias: no tickers means nothing.
  kExceptTickers = kDisableAll,
  // Tickers only.
  kExceptHistogramOrTimers,
  // Tickers and histograms of sizes, no timings.
  kExceptTimers,
  // Everything but the finest timers (compression times). The default.
  kExceptDetailedTimers,
  // Everything but time spent waiting for the DB mutex.
  kExceptTimeForMutex,
  // Everything.
  kAll,
};

class Statistics {
 public:
  virtual ~Statistics() = default;

  virtual uint64_t getTickerCount(uint32_t ticker_type) const = 0;
  virtual void histogramData(uint32_t type, HistogramData* data) const = 0;
  // Same as histogramData.
  void getHistogramData(uint32_t type, HistogramData* data) const { histogramData(type, data); }
  // One line summary of the histogram (count, average, percentiles) followed by its
  // non-empty buckets.
  virtual std::string getHistogramString(uint32_t /*type*/) const { return std::string(); }

  // Adds count to the ticker (if the level collects tickers). Out-of-range types are
  // ignored.
  virtual void recordTick(uint32_t ticker_type, uint64_t count = 1) = 0;
  virtual void setTickerCount(uint32_t ticker_type, uint64_t count) = 0;
  virtual uint64_t getAndResetTickerCount(uint32_t ticker_type) = 0;

  // Adds a value to a histogram if the level collects histograms.
  virtual void recordInHistogram(uint32_t histogram_type, uint64_t value) = 0;
  // Adds a time measurement (micros) if the level collects timers.
  virtual void reportTimeToHistogram(uint32_t histogram_type, uint64_t micros) {
    if (get_stats_level() <= kExceptTimers) return;
    recordInHistogram(histogram_type, micros);
  }
  // Older name of reportTimeToHistogram.
  virtual void measureTime(uint32_t histogram_type, uint64_t micros) {
    reportTimeToHistogram(histogram_type, micros);
  }

  // Zeroes every ticker and histogram.
  virtual Status Reset() { return Status::NotSupported("Reset not implemented"); }

  // "<name> COUNT : <n>" for every ticker, then
  // "<name> P50 : <f> P95 : <f> P99 : <f> P100 : <f> COUNT : <n> SUM : <n>" for every
  // histogram, one per line, in enum order.
  virtual std::string ToString() const { return "ToString(): not implemented"; }
  // Name -> count for every ticker.
  virtual bool getTickerMap(std::map<std::string, uint64_t>* /*stats_map*/) const { return false; }
  virtual bool HistEnabledForType(uint32_t type) const { return type < HISTOGRAM_ENUM_MAX; }

  void set_stats_level(StatsLevel level) { stats_level_.store(level, std::memory_order_relaxed); }
  StatsLevel get_stats_level() const { return stats_level_.load(std::memory_order_relaxed); }

 private:
  std::atomic<StatsLevel> stats_level_{kExceptDetailedTimers};
};

// The built-in implementation: per-thread-group shards of atomics, summed on read.
std::shared_ptr<Statistics> CreateDBStatistics();

}  // namespace shale
