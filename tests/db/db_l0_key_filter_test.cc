// L0 key filters (FileMetaData::key_filter): when Gets reach the memtables, a flush keeps a
// filter of its file's keys in memory, and a point lookup then searches only the L0 files
// that may hold its key, though the table has no filter policy. Counted by the data blocks
// the lookups touch (the block cache's data hits and misses); every answer is checked, and
// the answers stay right after a reopen, which starts without the filters.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "shale/filter_policy.h"
#include "shale/statistics.h"
#include "shale/table.h"
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

  // The filters live in memory only: a reopened DB searches every file again, and still
  // answers right.
  Reopen();
  GetAll(&present, &absent);
  EXPECT_GT(absent, kKeys * (kFiles - 1) * 1u) << absent;
}

TEST_F(DBL0KeyFilterTest, NoneWhenGetsDoNotReachTheMemtables) {
  // The first memtable after open keeps a filter; after a flush without Gets, the next does
  // not, nor does the file it becomes.
  Open();
  for (int f = 0; f < kFiles; f++) {
    for (int i = f; i < kKeys; i += kFiles) ASSERT_OK(Put(Key(i), ValueOf(i)));
    ASSERT_OK(Flush());
  }
  uint64_t present = 0, absent = 0;
  GetAll(&present, &absent);
  // The three files flushed after the first have no filter.
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
