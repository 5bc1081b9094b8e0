// The public API as a RocksDB user sees it: open/close, point writes and reads, batches,
// iterators with bounds in both directions, snapshots, flush, comparators, reopen.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "db/db_impl.h"
#include "shale/db.h"
#include "shale/filter_policy.h"
#include "shale/table.h"
#include "tests/testutil/db_test_base.h"

namespace shale {
namespace {

class DBBasicTest : public DBTestBase {
 protected:
  DBBasicTest() : DBTestBase("db_basic") {}
  // Whatever a case leaves behind, DestroyDB must be able to remove it.
  void TearDown() override { Destroy(); }
};

TEST_F(DBBasicTest, OpenMissingWithoutCreateFails) {
  options_.create_if_missing = false;
  Status s = TryReopen();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("does not exist"), std::string::npos) << s.ToString();
  EXPECT_EQ(db_, nullptr);
}

TEST_F(DBBasicTest, ErrorIfExists) {
  Reopen();
  options_.error_if_exists = true;
  Status s = TryReopen();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("exists"), std::string::npos);
}

TEST_F(DBBasicTest, PutGetDeleteAcrossReopenAndFlush) {
  Reopen();
  ASSERT_TRUE(Put("foo", "v1").ok());
  ASSERT_TRUE(Put("bar", "v2").ok());
  EXPECT_EQ(Get("foo"), "v1");
  ASSERT_TRUE(Put("foo", "v3").ok());
  EXPECT_EQ(Get("foo"), "v3");
  ASSERT_TRUE(Delete("bar").ok());
  EXPECT_EQ(Get("bar"), "NOT_FOUND");
  Reopen();  // from the WAL
  EXPECT_EQ(Get("foo"), "v3");
  EXPECT_EQ(Get("bar"), "NOT_FOUND");
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  EXPECT_EQ(Get("foo"), "v3");
  ASSERT_TRUE(Put("foo", "v4").ok());
  EXPECT_EQ(Get("foo"), "v4");
  Reopen();  // from SST + WAL
  EXPECT_EQ(Get("foo"), "v4");
  EXPECT_EQ(Get("bar"), "NOT_FOUND");
  EXPECT_EQ(Contents(), "foo=v4,");
}

TEST_F(DBBasicTest, GetIntoPinnableSlice) {
  Reopen();
  ASSERT_TRUE(Put("k", std::string(1000, 'x')).ok());
  PinnableSlice v;
  ASSERT_TRUE(db_->Get(ReadOptions(), db_->DefaultColumnFamily(), "k", &v).ok());
  EXPECT_EQ(v.ToString(), std::string(1000, 'x'));
  v.Reset();
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(db_->Get(ReadOptions(), db_->DefaultColumnFamily(), "k", &v).ok());
  EXPECT_EQ(v.size(), 1000u);
  v.Reset();
  EXPECT_TRUE(db_->Get(ReadOptions(), db_->DefaultColumnFamily(), "nope", &v).IsNotFound());
}

TEST_F(DBBasicTest, SingleDelete) {
  Reopen();
  ASSERT_TRUE(Put("a", "1").ok());
  ASSERT_TRUE(db_->SingleDelete(WriteOptions(), "a").ok());
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  ASSERT_TRUE(Put("b", "2").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(db_->SingleDelete(WriteOptions(), "b").ok());
  EXPECT_EQ(Get("b"), "NOT_FOUND");
  Reopen();
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  EXPECT_EQ(Get("b"), "NOT_FOUND");
  EXPECT_EQ(Contents(), "");
}

TEST_F(DBBasicTest, WriteBatchIsAtomicAndOrdered) {
  Reopen();
  WriteBatch batch;
  ASSERT_TRUE(batch.Put("a", "1").ok());
  ASSERT_TRUE(batch.Put("b", "2").ok());
  ASSERT_TRUE(batch.Delete("a").ok());
  ASSERT_TRUE(batch.Put("c", "3").ok());
  EXPECT_EQ(batch.Count(), 4u);
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  EXPECT_EQ(Contents(), "b=2,c=3,");
  Reopen();
  EXPECT_EQ(Contents(), "b=2,c=3,");
  WriteBatch empty;
  EXPECT_TRUE(db_->Write(WriteOptions(), &empty).ok());
  EXPECT_TRUE(db_->Write(WriteOptions(), nullptr).IsInvalidArgument());
}

TEST_F(DBBasicTest, MergeWithoutOperator) {
  Reopen();
  EXPECT_TRUE(db_->Merge(WriteOptions(), "m", "x").IsNotSupported());
  // A merge record written through a batch is stored and survives recovery; reading it
  // without a merge operator says so.
  WriteBatch batch;
  ASSERT_TRUE(batch.Put("m", "base").ok());
  ASSERT_TRUE(batch.Merge("m", "op").ok());
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  std::string v;
  Status s = db_->Get(ReadOptions(), "m", &v);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_NE(s.ToString().find("merge operator"), std::string::npos) << s.ToString();
  Reopen();
  s = db_->Get(ReadOptions(), "m", &v);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  s = db_->Get(ReadOptions(), "m", &v);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsNotSupported()) << it->status().ToString();
}

TEST_F(DBBasicTest, IteratorBothWaysWithBounds) {
  Reopen();
  for (char c = 'a'; c <= 'h'; c++) ASSERT_TRUE(Put(std::string(1, c), std::string(1, c)).ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(Delete("c").ok());
  ASSERT_TRUE(Put("e", "E").ok());
  EXPECT_EQ(Contents(), "a=a,b=b,d=d,e=E,f=f,g=g,h=h,");
  EXPECT_EQ(Contents(ReadOptions(), /*reverse=*/true), "h=h,g=g,f=f,e=E,d=d,b=b,a=a,");

  Slice lower("b"), upper("f");
  ReadOptions ro;
  ro.iterate_lower_bound = &lower;
  ro.iterate_upper_bound = &upper;
  EXPECT_EQ(Contents(ro), "b=b,d=d,e=E,");
  EXPECT_EQ(Contents(ro, /*reverse=*/true), "e=E,d=d,b=b,");

  std::unique_ptr<Iterator> it(db_->NewIterator(ro));
  it->Seek("a");  // below the lower bound: lands on the bound
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "b");
  it->Seek("c");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "d");
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "b");
  it->Prev();
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev("z");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "e");
  it->SeekForPrev("c");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "b");
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "d");
  it->Seek("f");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
}

TEST_F(DBBasicTest, IteratorIsAConsistentView) {
  Reopen();
  ASSERT_TRUE(Put("a", "1").ok());
  ASSERT_TRUE(Put("b", "1").ok());
  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
  ASSERT_TRUE(Put("a", "2").ok());
  ASSERT_TRUE(Delete("b").ok());
  ASSERT_TRUE(Put("c", "2").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());  // the iterator pins what it reads
  std::string seen;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    seen += it->key().ToString() + it->value().ToString();
  }
  EXPECT_EQ(seen, "a1b1");
  EXPECT_EQ(Contents(), "a=2,c=2,");
}

TEST_F(DBBasicTest, Snapshots) {
  Reopen();
  ASSERT_TRUE(Put("k", "v1").ok());
  const Snapshot* s1 = db_->GetSnapshot();
  ASSERT_TRUE(Put("k", "v2").ok());
  ASSERT_TRUE(Put("other", "x").ok());
  const Snapshot* s2 = db_->GetSnapshot();
  ASSERT_TRUE(Delete("k").ok());
  EXPECT_EQ(Get("k", s1), "v1");
  EXPECT_EQ(Get("other", s1), "NOT_FOUND");
  EXPECT_EQ(Get("k", s2), "v2");
  EXPECT_EQ(Get("k"), "NOT_FOUND");
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  EXPECT_EQ(Get("k", s1), "v1");
  EXPECT_EQ(Get("k", s2), "v2");
  ReadOptions ro;
  ro.snapshot = s1;
  EXPECT_EQ(Contents(ro), "k=v1,");
  ro.snapshot = s2;
  EXPECT_EQ(Contents(ro, /*reverse=*/true), "other=x,k=v2,");
  EXPECT_GT(s2->GetSequenceNumber(), s1->GetSequenceNumber());
  db_->ReleaseSnapshot(s1);
  db_->ReleaseSnapshot(s2);
}

TEST_F(DBBasicTest, ReverseComparator) {
  options_.comparator = ReverseBytewiseComparator();
  Reopen();
  ASSERT_TRUE(Put("a", "1").ok());
  ASSERT_TRUE(Put("b", "2").ok());
  ASSERT_TRUE(Put("c", "3").ok());
  EXPECT_EQ(Contents(), "c=3,b=2,a=1,");
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(Put("bb", "4").ok());
  EXPECT_EQ(Contents(), "c=3,bb=4,b=2,a=1,");
  EXPECT_EQ(Contents(ReadOptions(), /*reverse=*/true), "a=1,b=2,bb=4,c=3,");
  Reopen();
  EXPECT_EQ(Get("b"), "2");
  // Reopening with another comparator is refused.
  options_.comparator = BytewiseComparator();
  Status s = TryReopen();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
}

TEST_F(DBBasicTest, ManyMemtablesWithTinyWriteBuffer) {
  options_.write_buffer_size = 16 << 10;
  options_.compression = kNoCompression;
  BlockBasedTableOptions topts;
  topts.filter_policy.reset(NewBloomFilterPolicy(10));
  topts.block_size = 256;
  options_.table_factory.reset(NewBlockBasedTableFactory(topts));
  Reopen();
  std::map<std::string, std::string> model;
  for (int i = 0; i < 4000; i++) {
    std::string k = "key" + std::to_string(i * 7919 % 1000);
    std::string v = std::string(50, static_cast<char>('a' + i % 26)) + std::to_string(i);
    ASSERT_TRUE(Put(k, v).ok());
    model[k] = v;
  }
  for (auto& [k, v] : model) ASSERT_EQ(Get(k), v);
  Reopen();
  for (auto& [k, v] : model) ASSERT_EQ(Get(k), v);
  std::string expect;
  for (auto& [k, v] : model) expect += k + "=" + v + ",";
  EXPECT_EQ(Contents(), expect);
  EXPECT_EQ(Get("missing"), "NOT_FOUND");
}

TEST_F(DBBasicTest, ConcurrentWritersAllLand) {
  options_.write_buffer_size = 64 << 10;
  Reopen();
  constexpr int kThreads = 4, kPerThread = 2000;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      WriteOptions wo;
      wo.sync = (t == 0);  // mix synced and unsynced writers in the groups
      for (int i = 0; i < kPerThread; i++) {
        if (t == 0 && i % 100 != 0) wo.sync = false;
        if (!db_->Put(wo, "t" + std::to_string(t) + "_" + std::to_string(i), "v").ok()) {
          failures++;
        }
        wo.sync = (t == 0);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  Reopen();
  for (int t = 0; t < kThreads; t++) {
    for (int i = 0; i < kPerThread; i++) {
      ASSERT_EQ(Get("t" + std::to_string(t) + "_" + std::to_string(i)), "v");
    }
  }
}

TEST_F(DBBasicTest, DisableWALDataSurvivesClose) {
  Reopen();
  WriteOptions wo;
  wo.disableWAL = true;
  ASSERT_TRUE(db_->Put(wo, "nowal", "v").ok());
  ASSERT_TRUE(db_->Close().ok());
  Reopen();
  EXPECT_EQ(Get("nowal"), "v");
  wo.sync = true;
  EXPECT_TRUE(db_->Put(wo, "x", "y").IsInvalidArgument());
}

TEST_F(DBBasicTest, SecondOpenIsLockedOut) {
  Reopen();
  std::unique_ptr<DB> second;
  Status s = DB::Open(options_, dbname_, &second);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find("lock"), std::string::npos) << s.ToString();
  EXPECT_EQ(second, nullptr);
}

// An open DB's background threads are named for their pools, as ps, top and perf show
// them (RocksDB's are "rocksdb:low" and "rocksdb:high").
TEST_F(DBBasicTest, BackgroundThreadsAreNamed) {
  auto names = [] {
    std::multiset<std::string> out;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
      std::ifstream comm(task.path() / "comm");
      std::string name;
      if (std::getline(comm, name)) out.insert(name);
    }
    return out;
  };
  const size_t flush_before = names().count("shale:flush");
  const size_t compact_before = names().count("shale:compact");
  options_.max_background_jobs = 4;
  Reopen();
  const auto open = names();
  EXPECT_EQ(open.count("shale:flush"), flush_before + 1);
  EXPECT_GE(open.count("shale:compact"), compact_before + 1);
  Close();
  EXPECT_EQ(names().count("shale:flush"), flush_before);
}

TEST_F(DBBasicTest, DestroyRemovesEverything) {
  Reopen();
  ASSERT_TRUE(Put("a", "b").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  db_.reset();
  ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
  EXPECT_TRUE(Env::Default()->FileExists(dbname_).IsNotFound());
  options_.create_if_missing = false;
  EXPECT_FALSE(TryReopen().ok());
}

TEST_F(DBBasicTest, CloseThenDeleteAndEmptyKeys) {
  Reopen();
  ASSERT_TRUE(Put("", "empty key").ok());
  ASSERT_TRUE(Put("k", "").ok());
  EXPECT_EQ(Get(""), "empty key");
  EXPECT_EQ(Get("k"), "");
  ASSERT_TRUE(db_->Close().ok());
  EXPECT_TRUE(db_->Close().ok());  // idempotent
  Reopen();
  EXPECT_EQ(Get(""), "empty key");
  EXPECT_EQ(Contents(), "=empty key,k=,");
}

// Memtables get a filter of key hashes where Gets reach them: the first after open has
// one; then none while the DB is only written to, one in the memtable that follows one that
// Gets reached, none again after writes alone. Reads stay right across every switch.
TEST_F(DBBasicTest, MemtableFilterFollowsTheGets) {
  options_.write_buffer_size = 64 << 10;
  Reopen();
  auto* impl = static_cast<DBImpl*>(db_.get());
  EXPECT_TRUE(impl->TEST_ActiveMemtableHasFilter());
  auto key = [](int i) { return "key" + std::to_string(i); };
  const std::string value(100, 'v');
  for (int i = 0; i < 3000; i++) ASSERT_TRUE(Put(key(i), value + std::to_string(i)).ok());
  EXPECT_FALSE(impl->TEST_ActiveMemtableHasFilter());

  // Gets of present and absent keys while the memtable fills, then a switch.
  int next = 3000;
  for (int round = 0; round < 3 && !impl->TEST_ActiveMemtableHasFilter(); round++) {
    for (int i = 0; i < 20000; i++) {
      const int k = (i * 7919) % 6000;  // half never written
      ASSERT_EQ(Get(key(k)), k < 3000 ? value + std::to_string(k) : "NOT_FOUND") << k;
    }
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());  // switches the memtable
    ASSERT_TRUE(Put(key(next), value + std::to_string(next)).ok());
    next++;
  }
  EXPECT_TRUE(impl->TEST_ActiveMemtableHasFilter());
  // Keys written to the filtered memtable and ones that are not there.
  for (int i = 0; i < 200; i++, next++) {
    ASSERT_TRUE(Put(key(next), value + std::to_string(next)).ok());
  }
  for (int k = 0; k < next + 100; k++) {
    ASSERT_EQ(Get(key(k)), k < next ? value + std::to_string(k) : "NOT_FOUND") << k;
  }
  // Writes alone again: after two switches no filter is kept.
  for (int round = 0; round < 2; round++) {
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    for (int i = 0; i < 500; i++, next++) {
      ASSERT_TRUE(Put(key(next), value + std::to_string(next)).ok());
    }
  }
  EXPECT_FALSE(impl->TEST_ActiveMemtableHasFilter());
  for (int k = 0; k < next; k += 7) ASSERT_EQ(Get(key(k)), value + std::to_string(k)) << k;
}

}  // namespace
}  // namespace shale
