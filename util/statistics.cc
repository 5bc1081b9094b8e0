#include "util/statistics.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <thread>

#include "util/histogram.h"
#include "util/mutexlock.h"

namespace shale {

const std::vector<std::pair<Tickers, std::string>> TickersNameMap = {
    {BLOCK_CACHE_MISS, "shale.block.cache.miss"},
    {BLOCK_CACHE_HIT, "shale.block.cache.hit"},
    {BLOCK_CACHE_ADD, "shale.block.cache.add"},
    {BLOCK_CACHE_ADD_FAILURES, "shale.block.cache.add.failures"},
    {BLOCK_CACHE_INDEX_MISS, "shale.block.cache.index.miss"},
    {BLOCK_CACHE_INDEX_HIT, "shale.block.cache.index.hit"},
    {BLOCK_CACHE_INDEX_ADD, "shale.block.cache.index.add"},
    {BLOCK_CACHE_INDEX_BYTES_INSERT, "shale.block.cache.index.bytes.insert"},
    {BLOCK_CACHE_FILTER_MISS, "shale.block.cache.filter.miss"},
    {BLOCK_CACHE_FILTER_HIT, "shale.block.cache.filter.hit"},
    {BLOCK_CACHE_FILTER_ADD, "shale.block.cache.filter.add"},
    {BLOCK_CACHE_FILTER_BYTES_INSERT, "shale.block.cache.filter.bytes.insert"},
    {BLOCK_CACHE_DATA_MISS, "shale.block.cache.data.miss"},
    {BLOCK_CACHE_DATA_HIT, "shale.block.cache.data.hit"},
    {BLOCK_CACHE_DATA_ADD, "shale.block.cache.data.add"},
    {BLOCK_CACHE_DATA_BYTES_INSERT, "shale.block.cache.data.bytes.insert"},
    {BLOCK_CACHE_BYTES_READ, "shale.block.cache.bytes.read"},
    {BLOCK_CACHE_BYTES_WRITE, "shale.block.cache.bytes.write"},
    {BLOOM_FILTER_USEFUL, "shale.bloom.filter.useful"},
    {BLOOM_FILTER_FULL_POSITIVE, "shale.bloom.filter.full.positive"},
    {BLOOM_FILTER_FULL_TRUE_POSITIVE, "shale.bloom.filter.full.true.positive"},
    {MEMTABLE_HIT, "shale.memtable.hit"},
    {MEMTABLE_MISS, "shale.memtable.miss"},
    {GET_HIT_L0, "shale.l0.hit"},
    {GET_HIT_L1, "shale.l1.hit"},
    {GET_HIT_L2_AND_UP, "shale.l2andup.hit"},
    {COMPACTION_KEY_DROP_NEWER_ENTRY, "shale.compaction.key.drop.new"},
    {COMPACTION_KEY_DROP_OBSOLETE, "shale.compaction.key.drop.obsolete"},
    {COMPACTION_KEY_DROP_RANGE_DEL, "shale.compaction.key.drop.range_del"},
    {COMPACTION_KEY_DROP_USER, "shale.compaction.key.drop.user"},
    {COMPACTION_RANGE_DEL_DROP_OBSOLETE, "shale.compaction.range_del.drop.obsolete"},
    {COMPACTION_OPTIMIZED_DEL_DROP_OBSOLETE, "shale.compaction.optimized.del.drop.obsolete"},
    {COMPACTION_CANCELLED, "shale.compaction.cancelled"},
    {NUMBER_KEYS_WRITTEN, "shale.number.keys.written"},
    {NUMBER_KEYS_READ, "shale.number.keys.read"},
    {NUMBER_KEYS_UPDATED, "shale.number.keys.updated"},
    {BYTES_WRITTEN, "shale.bytes.written"},
    {BYTES_READ, "shale.bytes.read"},
    {NUMBER_DB_SEEK, "shale.number.db.seek"},
    {NUMBER_DB_NEXT, "shale.number.db.next"},
    {NUMBER_DB_PREV, "shale.number.db.prev"},
    {NUMBER_DB_SEEK_FOUND, "shale.number.db.seek.found"},
    {NUMBER_DB_NEXT_FOUND, "shale.number.db.next.found"},
    {NUMBER_DB_PREV_FOUND, "shale.number.db.prev.found"},
    {ITER_BYTES_READ, "shale.db.iter.bytes.read"},
    {NO_FILE_OPENS, "shale.no.file.opens"},
    {NO_FILE_ERRORS, "shale.no.file.errors"},
    {STALL_MICROS, "shale.stall.micros"},
    {DB_MUTEX_WAIT_MICROS, "shale.db.mutex.wait.micros"},
    {NUMBER_MULTIGET_CALLS, "shale.number.multiget.get"},
    {NUMBER_MULTIGET_KEYS_READ, "shale.number.multiget.keys.read"},
    {NUMBER_MULTIGET_BYTES_READ, "shale.number.multiget.bytes.read"},
    {NUMBER_MULTIGET_KEYS_FOUND, "shale.number.multiget.keys.found"},
    {NUMBER_MERGE_FAILURES, "shale.number.merge.failures"},
    {WAL_FILE_SYNCED, "shale.wal.synced"},
    {WAL_FILE_BYTES, "shale.wal.bytes"},
    {WRITE_DONE_BY_SELF, "shale.write.self"},
    {WRITE_DONE_BY_OTHER, "shale.write.other"},
    {WRITE_WITH_WAL, "shale.write.wal"},
    {WRITE_TIMEDOUT, "shale.write.timeout"},
    {COMPACT_READ_BYTES, "shale.compact.read.bytes"},
    {COMPACT_WRITE_BYTES, "shale.compact.write.bytes"},
    {FLUSH_WRITE_BYTES, "shale.flush.write.bytes"},
    {NUMBER_SUPERVERSION_ACQUIRES, "shale.number.superversion_acquires"},
    {NUMBER_SUPERVERSION_RELEASES, "shale.number.superversion_releases"},
    {NUMBER_BLOCK_COMPRESSED, "shale.number.block.compressed"},
    {NUMBER_BLOCK_DECOMPRESSED, "shale.number.block.decompressed"},
    {NUMBER_BLOCK_NOT_COMPRESSED, "shale.number.block.not_compressed"},
    {MEMTABLE_PAYLOAD_BYTES_AT_FLUSH, "shale.memtable.payload.bytes.at.flush"},
    {MEMTABLE_GARBAGE_BYTES_AT_FLUSH, "shale.memtable.garbage.bytes.at.flush"},
    {NO_ITERATOR_CREATED, "shale.num.iterator.created"},
    {NO_ITERATOR_DELETED, "shale.num.iterator.deleted"},
};

const std::vector<std::pair<Histograms, std::string>> HistogramsNameMap = {
    {DB_GET, "shale.db.get.micros"},
    {DB_WRITE, "shale.db.write.micros"},
    {COMPACTION_TIME, "shale.compaction.times.micros"},
    {COMPACTION_CPU_TIME, "shale.compaction.times.cpu_micros"},
    {SUBCOMPACTION_SETUP_TIME, "shale.subcompaction.setup.times.micros"},
    {TABLE_SYNC_MICROS, "shale.table.sync.micros"},
    {COMPACTION_OUTFILE_SYNC_MICROS, "shale.compaction.outfile.sync.micros"},
    {WAL_FILE_SYNC_MICROS, "shale.wal.file.sync.micros"},
    {MANIFEST_FILE_SYNC_MICROS, "shale.manifest.file.sync.micros"},
    {TABLE_OPEN_IO_MICROS, "shale.table.open.io.micros"},
    {DB_MULTIGET, "shale.db.multiget.micros"},
    {READ_BLOCK_COMPACTION_MICROS, "shale.read.block.compaction.micros"},
    {READ_BLOCK_GET_MICROS, "shale.read.block.get.micros"},
    {WRITE_RAW_BLOCK_MICROS, "shale.write.raw.block.micros"},
    {STALL_L0_SLOWDOWN_COUNT, "shale.l0.slowdown.count"},
    {STALL_MEMTABLE_COMPACTION_COUNT, "shale.memtable.compaction.count"},
    {STALL_L0_NUM_FILES_COUNT, "shale.num.files.stall.count"},
    {HARD_RATE_LIMIT_DELAY_COUNT, "shale.hard.rate.limit.delay.count"},
    {SOFT_RATE_LIMIT_DELAY_COUNT, "shale.soft.rate.limit.delay.count"},
    {NUM_FILES_IN_SINGLE_COMPACTION, "shale.numfiles.in.singlecompaction"},
    {DB_SEEK, "shale.db.seek.micros"},
    {WRITE_STALL, "shale.db.write.stall"},
    {SST_READ_MICROS, "shale.sst.read.micros"},
    {NUM_SUBCOMPACTIONS_SCHEDULED, "shale.num.subcompactions.scheduled"},
    {BYTES_PER_READ, "shale.bytes.per.read"},
    {BYTES_PER_WRITE, "shale.bytes.per.write"},
    {BYTES_PER_MULTIGET, "shale.bytes.per.multiget"},
    {BYTES_COMPRESSED, "shale.bytes.compressed"},
    {BYTES_DECOMPRESSED, "shale.bytes.decompressed"},
    {COMPRESSION_TIMES_NANOS, "shale.compression.times.nanos"},
    {DECOMPRESSION_TIMES_NANOS, "shale.decompression.times.nanos"},
    {READ_NUM_MERGE_OPERANDS, "shale.read.num.merge_operands"},
    {FLUSH_TIME, "shale.db.flush.micros"},
};

namespace {

// The built-in Statistics. Writers add into the shard their thread maps to, so threads on
// different shards never share a cache line; readers sum all shards under aggregate_mu_,
// which only orders readers and resets among themselves.
class StatisticsImpl final : public Statistics {
 public:
  StatisticsImpl() : num_shards_(ChooseShardCount()), shards_(new Shard[num_shards_]) {}

  uint64_t getTickerCount(uint32_t ticker_type) const override {
    if (ticker_type >= TICKER_ENUM_MAX) return 0;
    MutexLock lock(&aggregate_mu_);
    return SumTicker(ticker_type);
  }

  void histogramData(uint32_t type, HistogramData* data) const override {
    *data = HistogramData();
    if (type >= HISTOGRAM_ENUM_MAX) return;
    MutexLock lock(&aggregate_mu_);
    Histogram merged;
    MergeHistogram(type, &merged);
    merged.Data(data);
  }

  std::string getHistogramString(uint32_t type) const override {
    if (type >= HISTOGRAM_ENUM_MAX) return std::string();
    MutexLock lock(&aggregate_mu_);
    Histogram merged;
    MergeHistogram(type, &merged);
    return merged.ToString();
  }

  void recordTick(uint32_t ticker_type, uint64_t count) override {
    if (get_stats_level() <= kExceptTickers || ticker_type >= TICKER_ENUM_MAX) return;
    MyShard().tickers[ticker_type].fetch_add(count, std::memory_order_relaxed);
  }

  void setTickerCount(uint32_t ticker_type, uint64_t count) override {
    if (ticker_type >= TICKER_ENUM_MAX) return;
    MutexLock lock(&aggregate_mu_);
    SetTickerLocked(ticker_type, count);
  }

  uint64_t getAndResetTickerCount(uint32_t ticker_type) override {
    if (ticker_type >= TICKER_ENUM_MAX) return 0;
    MutexLock lock(&aggregate_mu_);
    uint64_t sum = 0;
    for (size_t i = 0; i < num_shards_; ++i) {
      sum += shards_[i].tickers[ticker_type].exchange(0, std::memory_order_relaxed);
    }
    return sum;
  }

  void recordInHistogram(uint32_t histogram_type, uint64_t value) override {
    if (get_stats_level() <= kExceptHistogramOrTimers || histogram_type >= HISTOGRAM_ENUM_MAX) {
      return;
    }
    MyShard().histograms[histogram_type].Add(value);
  }

  Status Reset() override {
    MutexLock lock(&aggregate_mu_);
    for (uint32_t t = 0; t < TICKER_ENUM_MAX; ++t) SetTickerLocked(t, 0);
    for (size_t i = 0; i < num_shards_; ++i) {
      for (auto& h : shards_[i].histograms) h.Clear();
    }
    return Status::OK();
  }

  std::string ToString() const override {
    MutexLock lock(&aggregate_mu_);
    std::string out;
    out.reserve(TICKER_ENUM_MAX * 48 + HISTOGRAM_ENUM_MAX * 128);
    char line[256];
    for (const auto& [ticker, name] : TickersNameMap) {
      std::snprintf(line, sizeof(line), "%s COUNT : %" PRIu64 "\n", name.c_str(),
                    SumTicker(ticker));
      out.append(line);
    }
    for (const auto& [histogram, name] : HistogramsNameMap) {
      Histogram merged;
      MergeHistogram(histogram, &merged);
      HistogramData d;
      merged.Data(&d);
      std::snprintf(line, sizeof(line),
                    "%s P50 : %f P95 : %f P99 : %f P100 : %f COUNT : %" PRIu64 " SUM : %" PRIu64
                    "\n",
                    name.c_str(), d.median, d.percentile95, d.percentile99, d.max, d.count, d.sum);
      out.append(line);
    }
    return out;
  }

  bool getTickerMap(std::map<std::string, uint64_t>* stats_map) const override {
    if (stats_map == nullptr) return false;
    stats_map->clear();
    MutexLock lock(&aggregate_mu_);
    for (const auto& [ticker, name] : TickersNameMap) (*stats_map)[name] = SumTicker(ticker);
    return true;
  }

 private:
  // One group of threads' counters. Aligned so that two shards never share a cache line.
  struct alignas(64) Shard {
    std::atomic<uint64_t> tickers[TICKER_ENUM_MAX] = {};
    Histogram histograms[HISTOGRAM_ENUM_MAX];
  };

  // One shard per hardware thread (a power of two, at most 64), so that concurrent writers
  // usually own their shard's cache lines.
  static size_t ChooseShardCount() {
    const size_t hw = std::max<size_t>(1, std::thread::hardware_concurrency());
    size_t n = 1;
    while (n < hw && n < 64) n <<= 1;
    return n;
  }

  // Threads are numbered in the order they first record anything, in any Statistics;
  // consecutive threads land on different shards.
  static size_t ThreadNumber() {
    static std::atomic<size_t> next_thread{0};
    thread_local const size_t number = next_thread.fetch_add(1, std::memory_order_relaxed);
    return number;
  }

  Shard& MyShard() { return shards_[ThreadNumber() & (num_shards_ - 1)]; }

  uint64_t SumTicker(uint32_t ticker) const REQUIRES(aggregate_mu_) {
    uint64_t sum = 0;
    for (size_t i = 0; i < num_shards_; ++i) {
      sum += shards_[i].tickers[ticker].load(std::memory_order_relaxed);
    }
    return sum;
  }

  void SetTickerLocked(uint32_t ticker, uint64_t count) REQUIRES(aggregate_mu_) {
    for (size_t i = 0; i < num_shards_; ++i) {
      shards_[i].tickers[ticker].store(i == 0 ? count : 0, std::memory_order_relaxed);
    }
  }

  void MergeHistogram(uint32_t type, Histogram* into) const REQUIRES(aggregate_mu_) {
    for (size_t i = 0; i < num_shards_; ++i) into->Merge(shards_[i].histograms[type]);
  }

  const size_t num_shards_;
  const std::unique_ptr<Shard[]> shards_;
  mutable Mutex aggregate_mu_;
};

}  // namespace

std::shared_ptr<Statistics> CreateDBStatistics() { return std::make_shared<StatisticsImpl>(); }

}  // namespace shale
