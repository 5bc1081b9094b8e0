// The memtable budget across column families (db_write_buffer_size, WriteBufferManager):
// with many families none of whose memtables is full, memory stays near the budget
// because the largest family is flushed; a manager shared by two DBs counts both; a cache
// is charged what the memtables hold; and the accounting returns to zero when they go.
#include <memory>
#include <string>
#include <vector>

#include "shale/cache.h"
#include "shale/db.h"
#include "shale/write_buffer_manager.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/family_handles.h"
#include "tests/testutil/gated_sst_env.h"

namespace shale {
namespace {

class DBWriteBufferManagerTest : public DBTestBase {
 protected:
  DBWriteBufferManagerTest() : DBTestBase("db_write_buffer_manager") {
    options_.create_missing_column_families = true;
    options_.write_buffer_size = 8 << 20;  // never reached by one family here
  }
  ~DBWriteBufferManagerTest() override { ReleaseHandles(db_.get(), &handles_); }

  void OpenWithFamilies(int n) {
    ReleaseHandles(db_.get(), &handles_);
    db_.reset();
    std::vector<ColumnFamilyDescriptor> descs = {{kDefaultColumnFamilyName, options_}};
    for (int i = 1; i < n; i++) descs.emplace_back("cf" + std::to_string(i), options_);
    DB* db = nullptr;
    ASSERT_OK(DB::Open(options_, dbname_, descs, &handles_, &db));
    db_.reset(db);
  }
  uint64_t Aggregated(const std::string& property) {
    uint64_t v = 0;
    EXPECT_TRUE(db_->GetAggregatedIntProperty(property, &v)) << property;
    return v;
  }

  std::vector<ColumnFamilyHandle*> handles_;
};

TEST_F(DBWriteBufferManagerTest, SixteenFamiliesStayNearTheBudget) {
  constexpr size_t kBudget = 1 << 20;
  options_.db_write_buffer_size = kBudget;
  OpenWithFamilies(16);
  const std::string value(1000, 'v');
  uint64_t peak = 0;
  for (int i = 0; i < 12000; i++) {
    ColumnFamilyHandle* cf = handles_[i % handles_.size()];
    ASSERT_OK(db_->Put(WriteOptions(), cf, "key" + std::to_string(i), value));
    if (i % 500 == 0) peak = std::max(peak, Aggregated("shale.cur-size-all-mem-tables"));
  }
  ASSERT_OK(db_->WaitForCompact(WaitForCompactOptions()));
  // 12 MB went in; no family's memtable filled (8 MiB each), so only the budget made the
  // families flush, and the memory in memtables stayed within it (plus what was being
  // flushed, at most about as much again).
  EXPECT_GT(Aggregated("shale.num-files-at-level0") + Aggregated("shale.num-files-at-level1"), 8u);
  EXPECT_LE(peak, kBudget);
  EXPECT_LE(Aggregated("shale.cur-size-all-mem-tables"), kBudget + (kBudget >> 2));
  // Everything is still there.
  std::string v;
  for (int i = 0; i < 12000; i += 997) {
    ASSERT_OK(
        db_->Get(ReadOptions(), handles_[i % handles_.size()], "key" + std::to_string(i), &v));
  }
}

// Written faster than it flushes (the flush held at the gate), a DB stops at the budget:
// once the memtables reach it with a flush pending, switching more would free nothing, so
// writes wait for the flush (and a no_slowdown write gets Incomplete) instead of going over.
TEST_F(DBWriteBufferManagerTest, WritesWaitForAPendingFlushAtTheBudget) {
  constexpr size_t kBudget = 1 << 20;
  GatedSstEnv gate;
  options_.env = &gate;
  options_.db_write_buffer_size = kBudget;
  OpenWithFamilies(4);
  gate.SetOpen(false);
  WriteOptions no_slowdown;
  no_slowdown.no_slowdown = true;
  const std::string value(1000, 'v');
  int written = 0;
  Status s;
  for (; written < 3000; written++) {
    s = db_->Put(no_slowdown, handles_[written % handles_.size()], "k" + std::to_string(written),
                 value);
    if (!s.ok()) break;
    ASSERT_LE(Aggregated("shale.cur-size-all-mem-tables"), kBudget) << "after " << written;
  }
  EXPECT_TRUE(s.IsIncomplete()) << s.ToString();
  EXPECT_LT(written, 1100);  // about the budget's worth of 1 KB values, no more
  gate.SetOpen(true);
  ASSERT_OK(db_->WaitForCompact(WaitForCompactOptions()));
  ASSERT_OK(db_->Put(no_slowdown, handles_[0], "after", value));
  std::string v;
  ASSERT_OK(db_->Get(ReadOptions(), handles_[1], "k1", &v));
  ReleaseHandles(db_.get(), &handles_);
  db_.reset();  // before the gate goes
}

TEST_F(DBWriteBufferManagerTest, ASharedManagerCountsBothDBsAndChargesItsCache) {
  std::shared_ptr<Cache> cache = NewLRUCache(64 << 20);
  auto wbm = std::make_shared<WriteBufferManager>(0, cache);  // counts, no budget
  options_.write_buffer_manager = wbm;
  OpenWithFamilies(2);
  TempDirectory other_dir("db_write_buffer_manager_other");
  std::unique_ptr<DB> other;
  ASSERT_OK(DB::Open(options_, other_dir.path() + "/db", &other));
  const std::string value(1000, 'v');
  for (int i = 0; i < 2000; i++) {
    ASSERT_OK(db_->Put(WriteOptions(), handles_[i % 2], "k" + std::to_string(i), value));
    ASSERT_OK(other->Put(WriteOptions(), "k" + std::to_string(i), value));
  }
  // A write charges what the memtables grew by before it: one more write settles it.
  ASSERT_OK(db_->Put(WriteOptions(), "last", "v"));
  ASSERT_OK(other->Put(WriteOptions(), "last", "v"));
  uint64_t mine = Aggregated("shale.cur-size-all-mem-tables");
  uint64_t theirs = 0;
  ASSERT_TRUE(other->GetIntProperty("shale.cur-size-all-mem-tables", &theirs));
  EXPECT_GE(wbm->memory_usage(), (mine + theirs) * 9 / 10);
  EXPECT_LE(wbm->memory_usage(), mine + theirs);
  EXPECT_GT(wbm->dummy_entries_in_cache_usage(), 0u);
  EXPECT_GE(cache->GetUsage(), wbm->dummy_entries_in_cache_usage());
  // Flushed and gone, the memtables give their memory back.
  ASSERT_OK(other->Flush(FlushOptions()));
  ASSERT_OK(other->Close());
  other.reset();
  ReleaseHandles(db_.get(), &handles_);
  db_.reset();
  EXPECT_EQ(0u, wbm->memory_usage());
  EXPECT_EQ(0u, wbm->mutable_memtable_memory_usage());
  EXPECT_EQ(0u, wbm->dummy_entries_in_cache_usage());
}

TEST(WriteBufferManagerTest, FlushAndStallRules) {
  WriteBufferManager wbm(1000, nullptr, /*allow_stall=*/true);
  wbm.ReserveMem(800);
  EXPECT_FALSE(wbm.ShouldFlush());  // 800 writable is within 7/8 of 1000
  wbm.ReserveMem(100);
  EXPECT_TRUE(wbm.ShouldFlush());  // 900 writable
  wbm.ScheduleFreeMem(900);        // all of it on its way to disk
  EXPECT_FALSE(wbm.ShouldFlush());
  EXPECT_FALSE(wbm.ShouldStall());
  wbm.ReserveMem(200);  // 1100 in all, 200 writable
  EXPECT_FALSE(wbm.ShouldFlush());
  EXPECT_TRUE(wbm.ShouldStall());
  wbm.FreeMem(900);
  EXPECT_FALSE(wbm.ShouldStall());
  EXPECT_EQ(200u, wbm.memory_usage());
}

}  // namespace
}  // namespace shale
