// L0 key filters (FileMetaData::key_filter): when Gets reach the memtables, a flush keeps a
// filter of its file's keys in memory, and a point lookup then searches only the L0 files
// that may hold its key, though the table has no filter policy. A file without one (from
// before a reopen) gets one built in the background once enough lookups reach it
// (TableReader::WantsKeyFilter). Counted by the data blocks the lookups touch (the block
// cache's data hits and misses); every answer is checked.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "db/column_family.h"
#include "shale/filter_policy.h"
#include "shale/statistics.h"
#include "shale/table.h"
#include "table/table_reader.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

constexpr int kFiles = 4;
constexpr int kKeys = 4000;  // key i is in file i % kFiles, so every file spans the range

std::string ValueOf(int i) { return "value-" + std::to_string(i); }
// Between Key(i) and Key(i + 1): inside every file's range, in none.
std::string AbsentKey(int i) { return Key(i) + "x"; }

class DBL0KeyFilterTest : public DBTestBase {
 protected:
  DBL0KeyFilterTest() : DBTestBase("db_l0_key_filter") {
    options_.disable_auto_compactions = true;
    options_.statistics = CreateDBStatistics();
  }
  ~DBL0KeyFilterTest() override { EXPECT_OK(TryClose()); }

  // kFiles L0 files, with Gets reaching each memtable before its flush.
  void Fill() {
    for (int f = 0; f < kFiles; f++) {
      for (int i = f; i < kKeys; i += kFiles) ASSERT_OK(Put(Key(i), ValueOf(i)));
      // Enough Gets that the next memtable keeps a filter too (see DBImpl::NewMemTable).
      for (int i = f; i < kKeys; i += 8 * kFiles) ASSERT_EQ(ValueOf(i), Get(Key(i)));
      ASSERT_OK(Flush());
    }
    ASSERT_EQ(std::to_string(kFiles), FilesPerLevel());
  }

  // Waits for the key filters the lookups so far have asked to be built.
  void WaitForKeyFilters() {
    static_cast<ColumnFamilyHandleImpl*>(db_->DefaultColumnFamily())
        ->cfd()
        ->table_cache()
        ->TEST_WaitForKeyFilters();
  }

  uint64_t DataBlocksTouched() {
    return options_.statistics->getTickerCount(BLOCK_CACHE_DATA_MISS) +
           options_.statistics->getTickerCount(BLOCK_CACHE_DATA_HIT);
  }

  // Data blocks touched by a Get of every key, then of as many absent keys; checks each answer.
  void GetAll(uint64_t* present_blocks, uint64_t* absent_blocks) {
    uint64_t before = DataBlocksTouched();
    for (int i = 0; i < kKeys; i++) ASSERT_EQ(ValueOf(i), Get(Key(i))) << i;
    *present_blocks = DataBlocksTouched() - before;
    before = DataBlocksTouched();
    for (int i = 0; i < kKeys; i++) ASSERT_EQ("NOT_FOUND", Get(AbsentKey(i))) << i;
    *absent_blocks = DataBlocksTouched() - before;
  }
};

TEST_F(DBL0KeyFilterTest, GetsSearchOnlyTheFilesThatMayHoldTheKey) {
  Open();
  Fill();
  uint64_t present = 0, absent = 0;
  GetAll(&present, &absent);
  // One block a Get, and about 1% false positives per file on top. Searching every file
  // newest first until the key's would take 2.5 blocks a Get, and 4 for an absent key.
  EXPECT_LT(present, kKeys * 11u / 10) << present;
  EXPECT_LT(absent, kKeys * kFiles / 10u) << absent;

  // MultiGet asks the same filters. Batches of four keys far apart, so that no two share a
  // block: one block a present key, as for Get.
  uint64_t touched = 0;
  int batch_keys = 0;
  for (int i = 0; i < kKeys / 4; i += 7) {
    std::vector<std::string> keys;
    for (int q = 0; q < 4; q++) {
      const int k = i + q * (kKeys / 4);
      keys.push_back(k % 2 == 0 ? Key(k) : AbsentKey(k));
    }
    std::vector<Slice> slices(keys.begin(), keys.end());
    std::vector<std::string> values;
    const uint64_t before = DataBlocksTouched();
    std::vector<Status> statuses = db_->MultiGet(ReadOptions(), slices, &values);
    touched += DataBlocksTouched() - before;
    batch_keys += 4;
    for (int q = 0; q < 4; q++) {
      const int k = i + q * (kKeys / 4);
      if (k % 2 == 0) {
        ASSERT_OK(statuses[q]);
        EXPECT_EQ(ValueOf(k), values[q]);
      } else {
        EXPECT_TRUE(statuses[q].IsNotFound()) << statuses[q].ToString();
      }
    }
  }
  EXPECT_LT(touched, batch_keys * 7u / 10) << touched << " for " << batch_keys;

  // The flush's filters live in memory only: a reopened DB searches every file again (as
  // long as fewer lookups than the threshold have reached it), and still answers right.
  Reopen();
  static_assert(kKeys < TableReader::kLookupsBeforeKeyFilter);
  const uint64_t before = DataBlocksTouched();
  for (int i = 0; i < kKeys; i++) ASSERT_EQ("NOT_FOUND", Get(AbsentKey(i))) << i;
  EXPECT_GT(DataBlocksTouched() - before, kKeys * (kFiles - 1) * 1u);
}

TEST_F(DBL0KeyFilterTest, FilesFromAnEarlierRunGetFiltersOnceLookupsReachThem) {
  Open();
  Fill();
  Reopen();
  // Every file is searched for every absent key: after the threshold's worth of lookups,
  // each asks for a filter. The answers stay right while the filters are built.
  const int rounds = TableReader::kLookupsBeforeKeyFilter / kKeys + 1;
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < kKeys; i++) ASSERT_EQ("NOT_FOUND", Get(AbsentKey(i))) << r << " " << i;
  }
  WaitForKeyFilters();
  uint64_t present = 0, absent = 0;
  GetAll(&present, &absent);
  EXPECT_LT(present, kKeys * 11u / 10) << present;
  EXPECT_LT(absent, kKeys * kFiles / 10u) << absent;
  // MultiGet asks them too.
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; i += 97) keys.push_back(AbsentKey(i));
  std::vector<Slice> slices(keys.begin(), keys.end());
  std::vector<std::string> values;
  const uint64_t before = DataBlocksTouched();
  for (const Status& s : db_->MultiGet(ReadOptions(), slices, &values)) {
    EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  }
  EXPECT_LT(DataBlocksTouched() - before, keys.size() * kFiles / 4) << keys.size();
}

TEST_F(DBL0KeyFilterTest, ThreadsLookUpWhileTheFiltersAreBuilt) {
  Open();
  Fill();
  Reopen();
  // Four threads cross the threshold together, with Get and MultiGet, and keep reading
  // while the filters are built and published: every answer stays right.
  constexpr int kThreads = 4;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 2; r++) {
        for (int i = t; i < kKeys; i += kThreads / 2) {
          std::string value;
          Status s = db_->Get(ReadOptions(), Key(i), &value);
          if (!s.ok() || value != ValueOf(i)) wrong++;
          s = db_->Get(ReadOptions(), AbsentKey(i), &value);
          if (!s.IsNotFound()) wrong++;
          if (i % 16 == 0) {
            const std::string present_key = Key(i), absent_key = AbsentKey(i);
            std::vector<Slice> keys = {present_key, absent_key};
            std::vector<std::string> values;
            std::vector<Status> statuses = db_->MultiGet(ReadOptions(), keys, &values);
            if (!statuses[0].ok() || values[0] != ValueOf(i) || !statuses[1].IsNotFound()) {
              wrong++;
            }
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  WaitForKeyFilters();
  uint64_t present = 0, absent = 0;
  GetAll(&present, &absent);
  EXPECT_LT(absent, kKeys * kFiles / 10u) << absent;
}

TEST_F(DBL0KeyFilterTest, NoFilterBuiltBelowTheThresholdOrForDeeperLevels) {
  Open();
  Fill();
  Reopen();
  // Keys inside every file's range, in none: each lookup searches all the files.
  const auto inside = [](int i) { return AbsentKey(kFiles + i % (kKeys - 2 * kFiles)); };
  // Up to one lookup under the threshold, no file asks: the last of them still searches
  // every file. (A build reads blocks too, so counts are taken with none running.)
  const int lookups = TableReader::kLookupsBeforeKeyFilter - 2;
  for (int i = 0; i < lookups; i++) ASSERT_EQ("NOT_FOUND", Get(inside(i)));
  WaitForKeyFilters();
  uint64_t before = DataBlocksTouched();
  ASSERT_EQ("NOT_FOUND", Get(inside(0)));
  EXPECT_EQ(DataBlocksTouched() - before, uint64_t{kFiles});
  ASSERT_EQ("NOT_FOUND", Get(inside(1)));  // the threshold's lookup: each file asks now
  WaitForKeyFilters();
  before = DataBlocksTouched();
  for (int i = 0; i < kKeys; i++) ASSERT_EQ("NOT_FOUND", Get(inside(i)));
  EXPECT_LT(DataBlocksTouched() - before, kKeys * kFiles / 10u);

  // After a compaction the data is in one file deeper down: no filter there, however many
  // lookups reach it (a DB without a filter policy keeps none beneath L0).
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  ASSERT_EQ("0,1", FilesPerLevel());
  for (int r = 0; r < 2; r++) {
    for (int i = 0; i < kKeys; i++) ASSERT_EQ("NOT_FOUND", Get(inside(i)));
  }
  WaitForKeyFilters();
  before = DataBlocksTouched();
  for (int i = 0; i < kKeys; i++) ASSERT_EQ("NOT_FOUND", Get(inside(i)));
  EXPECT_EQ(DataBlocksTouched() - before, uint64_t{kKeys});
  for (int i = 0; i < kKeys; i++) ASSERT_EQ(ValueOf(i), Get(Key(i))) << i;
}

TEST_F(DBL0KeyFilterTest, NoneWhenGetsDoNotReachTheMemtables) {
  // The first memtable after open keeps a filter; after a flush without Gets, the next does
  // not, nor does the file it becomes.
  Open();
  for (int f = 0; f < kFiles; f++) {
    for (int i = f; i < kKeys; i += kFiles) ASSERT_OK(Put(Key(i), ValueOf(i)));
    ASSERT_OK(Flush());
  }
  // The three files flushed after the first have no filter (and have not yet seen enough
  // lookups to ask for one).
  const uint64_t before = DataBlocksTouched();
  for (int i = 0; i < kKeys; i++) ASSERT_EQ("NOT_FOUND", Get(AbsentKey(i))) << i;
  const uint64_t absent = DataBlocksTouched() - before;
  EXPECT_GE(absent, kKeys * (kFiles - 1) * 1u) << absent;
}

TEST_F(DBL0KeyFilterTest, TheTablesOwnFilterServesWhenConfigured) {
  BlockBasedTableOptions t;
  t.filter_policy.reset(NewBloomFilterPolicy(10));
  options_.table_factory.reset(NewBlockBasedTableFactory(t));
  Open();
  Fill();
  uint64_t present = 0, absent = 0;
  GetAll(&present, &absent);
  EXPECT_LT(absent, kKeys * kFiles / 10u) << absent;
  EXPECT_GT(options_.statistics->getTickerCount(BLOOM_FILTER_USEFUL), kKeys * 3u);
}

}  // namespace
}  // namespace shale
