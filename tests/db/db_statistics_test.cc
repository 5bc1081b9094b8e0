// The DB's info LOG and Statistics: what a RocksDB user reads to see what the engine did.
// The LOG names the options, every flush and compaction and the periodic stats dump; the
// tickers and histograms move when their events happen.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "shale/cache.h"
#include "shale/db.h"
#include "shale/filter_policy.h"
#include "shale/statistics.h"
#include "shale/table.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

// A value that compression cannot shrink much: bytes from a simple generator.
std::string Incompressible(int seed, size_t n) {
  std::string r(n, '\0');
  uint32_t x = static_cast<uint32_t>(seed) * 2654435761u + 1;
  for (char& c : r) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 24);
  }
  return r;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class DBStatisticsTest : public DBTestBase {
 protected:
  DBStatisticsTest() : DBTestBase("db_statistics") {
    options_.statistics = CreateDBStatistics();
    options_.write_buffer_size = 64 << 10;
    BlockBasedTableOptions t;
    t.filter_policy.reset(NewBloomFilterPolicy(10));
    t.block_cache = NewLRUCache(1 << 20);
    options_.table_factory.reset(NewBlockBasedTableFactory(t));
  }

  uint64_t Ticker(uint32_t t) const { return options_.statistics->getTickerCount(t); }
  uint64_t HistCount(uint32_t h) const {
    HistogramData d;
    options_.statistics->histogramData(h, &d);
    return d.count;
  }
};

TEST_F(DBStatisticsTest, WritePathTickers) {
  Open();
  WriteOptions sync;
  sync.sync = true;
  ASSERT_OK(db_->Put(WriteOptions(), "a", "1"));
  ASSERT_OK(db_->Put(sync, "b", "22"));
  WriteBatch batch;
  ASSERT_OK(batch.Put("c", "333"));
  ASSERT_OK(batch.Delete("a"));
  ASSERT_OK(db_->Write(WriteOptions(), &batch));
  WriteOptions no_wal;
  no_wal.disableWAL = true;
  ASSERT_OK(db_->Put(no_wal, "d", "4"));

  EXPECT_EQ(5u, Ticker(NUMBER_KEYS_WRITTEN));
  EXPECT_GT(Ticker(BYTES_WRITTEN), 10u);
  EXPECT_EQ(1u, Ticker(WAL_FILE_SYNCED));
  EXPECT_GT(Ticker(WAL_FILE_BYTES), 0u);
  EXPECT_LT(Ticker(WAL_FILE_BYTES), Ticker(BYTES_WRITTEN));  // the disableWAL write is not in it
  EXPECT_EQ(3u, Ticker(WRITE_WITH_WAL));
  EXPECT_EQ(4u, Ticker(WRITE_DONE_BY_SELF) + Ticker(WRITE_DONE_BY_OTHER));
  EXPECT_EQ(4u, HistCount(DB_WRITE));
  EXPECT_EQ(1u, HistCount(WAL_FILE_SYNC_MICROS));
}

TEST_F(DBStatisticsTest, FlushAndCompactionTickers) {
  options_.disable_auto_compactions = true;
  options_.write_buffer_size = 1 << 20;  // only the two Flush calls flush
  Open();
  // Two files holding the same keys: compacting them drops the older versions.
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < 500; i++) {
      ASSERT_OK(db_->Put(WriteOptions(), "key" + std::to_string(i),
                         Incompressible(round * 1000 + i, 100)));
    }
    ASSERT_OK(db_->Flush(FlushOptions()));
  }
  EXPECT_GT(Ticker(FLUSH_WRITE_BYTES), 2 * 500 * 100u);
  EXPECT_EQ(2u, HistCount(FLUSH_TIME));
  EXPECT_EQ(0u, Ticker(COMPACT_WRITE_BYTES));

  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  EXPECT_GT(Ticker(COMPACT_READ_BYTES), 0u);
  EXPECT_GT(Ticker(COMPACT_WRITE_BYTES), 0u);
  EXPECT_EQ(500u, Ticker(COMPACTION_KEY_DROP_NEWER_ENTRY));
  EXPECT_GE(HistCount(COMPACTION_TIME), 1u);

  // Deletions that reach the bottom go, and are counted as obsolete.
  for (int i = 0; i < 100; i++) ASSERT_OK(db_->Delete(WriteOptions(), "key" + std::to_string(i)));
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  EXPECT_GE(Ticker(COMPACTION_KEY_DROP_OBSOLETE), 100u);
  std::string v;
  EXPECT_TRUE(db_->Get(ReadOptions(), "key5", &v).IsNotFound());
  ASSERT_OK(db_->Get(ReadOptions(), "key200", &v));
  EXPECT_EQ(Incompressible(1000 + 200, 100), v);
}

TEST_F(DBStatisticsTest, BlockCacheAndFilterTickers) {
  Open();
  for (int i = 0; i < 2000; i++) {
    ASSERT_OK(db_->Put(WriteOptions(), "key" + std::to_string(i), std::string(100, 'v')));
  }
  ASSERT_OK(db_->Flush(FlushOptions()));
  std::string v;
  for (int i = 0; i < 2000; i += 10)
    ASSERT_OK(db_->Get(ReadOptions(), "key" + std::to_string(i), &v));
  EXPECT_GT(Ticker(BLOCK_CACHE_DATA_MISS), 0u);
  EXPECT_GT(Ticker(BLOCK_CACHE_DATA_ADD), 0u);
  const uint64_t hits = Ticker(BLOCK_CACHE_DATA_HIT);
  for (int i = 0; i < 2000; i += 10)
    ASSERT_OK(db_->Get(ReadOptions(), "key" + std::to_string(i), &v));
  EXPECT_GT(Ticker(BLOCK_CACHE_DATA_HIT), hits);
  EXPECT_EQ(Ticker(BLOCK_CACHE_HIT), Ticker(BLOCK_CACHE_DATA_HIT) + Ticker(BLOCK_CACHE_INDEX_HIT) +
                                         Ticker(BLOCK_CACHE_FILTER_HIT));
  // Keys that are not there but inside the file's key range: the filter answers for
  // almost all of them.
  for (int i = 0; i < 1000; i++) {
    ASSERT_TRUE(db_->Get(ReadOptions(), "key" + std::to_string(i) + "x", &v).IsNotFound());
  }
  EXPECT_GT(Ticker(BLOOM_FILTER_USEFUL), 900u);
  uint64_t usage = 0;
  ASSERT_TRUE(db_->GetIntProperty("shale.block-cache-usage", &usage));
  EXPECT_GT(usage, 0u);
}

TEST_F(DBStatisticsTest, ReadPathTickers) {
  options_.disable_auto_compactions = true;
  Open();
  ASSERT_OK(db_->Put(WriteOptions(), "deep", "d"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  CompactRangeOptions cro;
  cro.change_level = true;
  cro.target_level = 3;
  ASSERT_OK(db_->CompactRange(cro, nullptr, nullptr));
  ASSERT_OK(db_->Put(WriteOptions(), "one", "1"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(db_->Put(WriteOptions(), "mem", "memvalue"));
  std::string v;
  ASSERT_OK(db_->Get(ReadOptions(), "mem", &v));
  ASSERT_OK(db_->Get(ReadOptions(), "one", &v));
  ASSERT_OK(db_->Get(ReadOptions(), "deep", &v));
  ASSERT_TRUE(db_->Get(ReadOptions(), "none", &v).IsNotFound());
  EXPECT_EQ(4u, Ticker(NUMBER_KEYS_READ));
  EXPECT_EQ(1u, Ticker(MEMTABLE_HIT));
  EXPECT_EQ(3u, Ticker(MEMTABLE_MISS));
  EXPECT_EQ(1u, Ticker(GET_HIT_L0));
  EXPECT_EQ(0u, Ticker(GET_HIT_L1));
  EXPECT_EQ(1u, Ticker(GET_HIT_L2_AND_UP));
  EXPECT_EQ(8u + 1 + 1, Ticker(BYTES_READ));
  EXPECT_EQ(4u, HistCount(DB_GET));
}

TEST_F(DBStatisticsTest, IteratorTickers) {
  Open();
  for (int i = 0; i < 10; i++) ASSERT_OK(db_->Put(WriteOptions(), "k" + std::to_string(i), "vv"));
  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
  it->Seek("k3");
  ASSERT_TRUE(it->Valid());
  it->Next();
  it->Prev();
  it->Seek("z");  // past the end: counted, not found
  ASSERT_FALSE(it->Valid());
  it->SeekToLast();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(3u, Ticker(NUMBER_DB_SEEK));
  EXPECT_EQ(2u, Ticker(NUMBER_DB_SEEK_FOUND));
  EXPECT_EQ(1u, Ticker(NUMBER_DB_NEXT));
  EXPECT_EQ(1u, Ticker(NUMBER_DB_NEXT_FOUND));
  EXPECT_EQ(1u, Ticker(NUMBER_DB_PREV));
  EXPECT_EQ(4u * (2 + 2), Ticker(ITER_BYTES_READ));  // four positions landed on k?=vv
  EXPECT_EQ(3u, HistCount(DB_SEEK));
}

// A value read from a table stays in its cached block, pinned by the PinnableSlice, and
// stays valid and unchanged through later writes, flushes and compactions until Reset().
TEST_F(DBStatisticsTest, GetPinsTableValues) {
  Open();
  const std::string big = Incompressible(7, 3000);
  ASSERT_OK(db_->Put(WriteOptions(), "k", big));
  ASSERT_OK(db_->Put(WriteOptions(), "m", "memtable value"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(db_->Put(WriteOptions(), "m", "memtable value 2"));
  PinnableSlice from_table, from_mem;
  ASSERT_OK(db_->Get(ReadOptions(), db_->DefaultColumnFamily(), "k", &from_table));
  ASSERT_OK(db_->Get(ReadOptions(), db_->DefaultColumnFamily(), "m", &from_mem));
  EXPECT_TRUE(from_table.IsPinned());
  EXPECT_FALSE(from_mem.IsPinned());  // memtable values are copied
  EXPECT_EQ("memtable value 2", from_mem.ToString());
  for (int i = 0; i < 3; i++) {
    ASSERT_OK(db_->Put(WriteOptions(), "k", Incompressible(100 + i, 3000)));
    ASSERT_OK(db_->Flush(FlushOptions()));
  }
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  EXPECT_EQ(big, from_table.ToString());
  // Reusing the slice drops the old pin first.
  ASSERT_OK(db_->Get(ReadOptions(), db_->DefaultColumnFamily(), "k", &from_table));
  EXPECT_EQ(Incompressible(102, 3000), from_table.ToString());
  from_table.Reset();
  // The std::string overload copies whatever was pinned.
  std::string copy;
  ASSERT_OK(db_->Get(ReadOptions(), "k", &copy));
  EXPECT_EQ(Incompressible(102, 3000), copy);
}

// With cache_index_and_filter_blocks, an L0 file's index and filter stay referenced in
// the cache for the reader's life only with pin_l0_filter_and_index_blocks_in_cache.
TEST_F(DBStatisticsTest, PinL0FilterAndIndexBlocks) {
  for (const bool pin : {false, true}) {
    SCOPED_TRACE(pin ? "pinned" : "not pinned");
    std::shared_ptr<Cache> cache = NewLRUCache(4 << 20);
    BlockBasedTableOptions t;
    t.filter_policy.reset(NewBloomFilterPolicy(10));
    t.block_cache = cache;
    t.cache_index_and_filter_blocks = true;
    t.pin_l0_filter_and_index_blocks_in_cache = pin;
    options_.table_factory.reset(NewBlockBasedTableFactory(t));
    options_.disable_auto_compactions = true;
    db_.reset();
    ASSERT_OK(DestroyDB(dbname_, options_));
    Open();
    for (int i = 0; i < 1000; i++) {
      ASSERT_OK(db_->Put(WriteOptions(), "key" + std::to_string(i), Incompressible(i, 50)));
    }
    ASSERT_OK(db_->Flush(FlushOptions()));
    std::string v;
    ASSERT_OK(db_->Get(ReadOptions(), "key7", &v));
    if (pin) {
      EXPECT_GT(cache->GetPinnedUsage(), 0u);
    } else {
      EXPECT_EQ(0u, cache->GetPinnedUsage());
    }
    EXPECT_GT(cache->GetUsage(), 0u);
  }
}

TEST_F(DBStatisticsTest, InfoLogNamesOptionsFlushesAndCompactions) {
  options_.disable_auto_compactions = true;
  Open();
  for (int i = 0; i < 100; i++) ASSERT_OK(db_->Put(WriteOptions(), "k" + std::to_string(i), "v"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(db_->Put(WriteOptions(), "k0", "w"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  ASSERT_OK(db_->Close());
  db_.reset();

  const std::string log = ReadWholeFile(dbname_ + "/LOG");
  EXPECT_NE(std::string::npos, log.find("Options.write_buffer_size: 65536")) << log;
  EXPECT_NE(std::string::npos, log.find("Options.disable_auto_compactions: 1"));
  EXPECT_NE(std::string::npos, log.find("Level-0 flush table #"));
  EXPECT_NE(std::string::npos, log.find("Compacting 2@0 files to L"));
  EXPECT_NE(std::string::npos, log.find("Generated table #"));
  // tools/flush_compaction_mbps.py reads job throughput from these two lines.
  const std::regex flush_line(
      R"(Level-0 flush table #\d+: \d+ bytes, \d+ entries, \d+ micros, \d+ cpu micros OK)");
  const std::regex compaction_line(
      R"(Compacted 2@0 files to L\d.* \d+ bytes written, \d+ micros, \d+ cpu micros)");
  EXPECT_TRUE(std::regex_search(log, flush_line)) << log;
  EXPECT_TRUE(std::regex_search(log, compaction_line)) << log;

  // A reopen moves the old LOG aside.
  Open();
  ASSERT_OK(db_->Close());
  std::vector<std::string> children;
  ASSERT_OK(Env::Default()->GetChildren(dbname_, &children));
  int old_logs = 0;
  for (const std::string& c : children) old_logs += c.rfind("LOG.old.", 0) == 0 ? 1 : 0;
  EXPECT_EQ(1, old_logs);
}

TEST_F(DBStatisticsTest, StatsDumpedPeriodically) {
  options_.stats_dump_period_sec = 1;
  Open();
  ASSERT_OK(db_->Put(WriteOptions(), "a", "1"));
  // Wait (a bounded time) for the first dump: a loaded machine may delay it.
  std::string log;
  for (int i = 0; i < 100; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    log = ReadWholeFile(dbname_ + "/LOG");
    if (log.find("shale.number.keys.written COUNT : 1") != std::string::npos) break;
  }
  EXPECT_NE(std::string::npos, log.find("DUMPING STATS")) << log;
  EXPECT_NE(std::string::npos, log.find("Cumulative stall")) << log;
  EXPECT_NE(std::string::npos, log.find("shale.number.keys.written COUNT : 1")) << log;
}

}  // namespace
}  // namespace shale
