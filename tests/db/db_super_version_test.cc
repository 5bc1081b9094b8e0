// The lock-free SuperVersion pin (db/column_family.h): each thread's cached reference,
// swept when a new view is installed. Unit cases on a bare ColumnFamilyData (reference
// counts, nested pins, thread exit, a pin outliving an install) and a DB case with reader
// threads (Get, MultiGet, iterators) racing a writer whose small memtables force flushes
// and compactions: every key a reader knows was written must be found, which a reader
// keeping an outdated view would miss. Run under ASan and TSan as well: a view freed while
// pinned, or freed twice, is reported there.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "db/column_family.h"
#include "db/db_impl.h"
#include "shale/db.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

class SuperVersionUnitTest : public testing::Test {
 protected:
  SuperVersionUnitTest() : cfd_(0, "default", options_, "unused", &db_mutex_) {}

  // Installs a fresh empty view (no memtables, no Version) and returns it.
  SuperVersion* Install() {
    auto* sv = new SuperVersion;
    MutexLock l(cfd_.db_mutex());
    cfd_.InstallSuperVersion(sv);
    return sv;
  }

  Options options_;
  Mutex db_mutex_;
  ColumnFamilyData cfd_;
};

TEST_F(SuperVersionUnitTest, PinCachesOneReferencePerThread) {
  SuperVersion* sv = Install();
  EXPECT_EQ(sv->refs.load(), 1);  // the family's own
  {
    SuperVersionPin pin = cfd_.PinSuperVersion();
    EXPECT_EQ(pin.get(), sv);
    EXPECT_EQ(sv->refs.load(), 2);
  }
  // The reference stays cached in this thread's slot: the next pin takes no new one.
  EXPECT_EQ(sv->refs.load(), 2);
  {
    SuperVersionPin pin = cfd_.PinSuperVersion();
    EXPECT_EQ(sv->refs.load(), 2);
    // A nested pin on the same thread cannot use the slot: it takes its own reference.
    SuperVersionPin nested = cfd_.PinSuperVersion();
    EXPECT_EQ(nested.get(), sv);
    EXPECT_EQ(sv->refs.load(), 3);
  }
  EXPECT_EQ(sv->refs.load(), 2);
}

TEST_F(SuperVersionUnitTest, InstallSweepsCachedReferences) {
  SuperVersion* first = Install();
  { SuperVersionPin pin = cfd_.PinSuperVersion(); }
  SuperVersionPin held = cfd_.PinSuperVersion();
  ASSERT_EQ(held.get(), first);
  SuperVersion* second = Install();
  // Only the pin keeps the first view now; the sweep took the slot's marker away, so the
  // pin drops its reference (and frees the view) instead of caching it.
  EXPECT_EQ(first->refs.load(), 1);
  EXPECT_EQ(held->current, nullptr);
  held.Reset();
  SuperVersionPin pin = cfd_.PinSuperVersion();
  EXPECT_EQ(pin.get(), second);
  pin.Reset();
  EXPECT_EQ(second->refs.load(), 2);
}

TEST_F(SuperVersionUnitTest, ThreadExitDropsItsCachedReference) {
  SuperVersion* sv = Install();
  const size_t before = cfd_.TEST_NumCachedSlots();
  std::vector<std::thread> threads;
  std::atomic<int> pinned{0};
  std::atomic<bool> go{false};
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&] {
      { SuperVersionPin pin = cfd_.PinSuperVersion(); }
      pinned++;
      while (!go.load()) std::this_thread::yield();
    });
  }
  while (pinned.load() < 4) std::this_thread::yield();
  EXPECT_EQ(sv->refs.load(), 5);  // the family's and four cached
  EXPECT_EQ(cfd_.TEST_NumCachedSlots(), before + 4);
  go = true;
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(sv->refs.load(), 1);
  EXPECT_EQ(cfd_.TEST_NumCachedSlots(), before);
}

TEST_F(SuperVersionUnitTest, ClosedFamilyPinsNothing) {
  EXPECT_FALSE(cfd_.PinSuperVersion());
  Install();
  { SuperVersionPin pin = cfd_.PinSuperVersion(); }
  {
    MutexLock l(cfd_.db_mutex());
    cfd_.InstallSuperVersion(nullptr);
  }
  EXPECT_FALSE(cfd_.PinSuperVersion());
  EXPECT_EQ(cfd_.GetSuperVersion(), nullptr);
}

class DBSuperVersionTest : public DBTestBase {
 protected:
  DBSuperVersionTest() : DBTestBase("db_super_version") {
    options_.stats_dump_period_sec = 0;
    options_.write_buffer_size = 32 << 10;  // a memtable switch every ~200 writes
    options_.level0_file_num_compaction_trigger = 2;
    options_.target_file_size_base = 64 << 10;
    options_.max_bytes_for_level_base = 256 << 10;
  }
  static std::string Value(int i) { return std::string(100, static_cast<char>('a' + i % 26)); }
};

// Readers learn from an atomic counter that key i was written (its Put returned), then
// read it: Get the newest one and a random older one, MultiGet both, and an iterator Seek
// to the newest. A reader answering from an outdated view misses keys that went into a
// memtable created after that view.
TEST_F(DBSuperVersionTest, ReadersSeeEveryWriteTheyWaitedFor) {
  Open();
  const uint64_t seed = TestSeed();
  const int kWrites = 6000;
  std::atomic<int> written{0};
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::atomic<uint64_t> reads{0};
  auto reader = [&](uint64_t thread_seed) {
    Random rnd(thread_seed);
    while (!done.load(std::memory_order_acquire)) {
      const int w = written.load(std::memory_order_acquire);
      if (w == 0) continue;
      const int newest = w - 1;
      const int older = static_cast<int>(rnd.Uniform(static_cast<uint32_t>(w)));
      std::string v;
      Status s = db_->Get(ReadOptions(), Key(newest), &v);
      if (!s.ok() || v != Value(newest)) failures++;
      s = db_->Get(ReadOptions(), Key(older), &v);
      if (!s.ok() || v != Value(older)) failures++;
      if (rnd.OneIn(4)) {
        std::vector<Slice> keys;
        const std::string k1 = Key(newest), k2 = Key(older);
        keys.emplace_back(k1);
        keys.emplace_back(k2);
        std::vector<std::string> values;
        std::vector<Status> st = db_->MultiGet(ReadOptions(), keys, &values);
        if (!st[0].ok() || values[0] != Value(newest)) failures++;
        if (!st[1].ok() || values[1] != Value(older)) failures++;
      }
      if (rnd.OneIn(16)) {
        std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
        it->Seek(Key(newest));
        if (!it->Valid() || it->key() != Key(newest) || it->value() != Value(newest)) {
          failures++;
        }
      }
      reads++;
    }
  };
  std::vector<std::thread> readers;
  for (uint64_t t = 0; t < 4; t++) readers.emplace_back(reader, seed + t);
  WriteOptions wo;
  wo.disableWAL = true;
  for (int i = 0; i < kWrites; i++) {
    ASSERT_OK(Put(Key(i), Value(i), wo));
    written.store(i + 1, std::memory_order_release);
  }
  done.store(true, std::memory_order_release);
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(failures.load(), 0) << "seed " << seed << ", " << reads.load() << " reads";
  EXPECT_GT(reads.load(), 0u);
  // Views did change under the readers: memtables were flushed into files.
  EXPECT_GT(IntProperty("shale.estimate-num-keys"), 0u);
  EXPECT_NE(FilesPerLevel(), "") << "no flush happened";
  ASSERT_OK(WaitForCompact());
  for (int i = 0; i < kWrites; i += 97) EXPECT_EQ(Get(Key(i)), Value(i));
}

// Threads that read and exit give back their cached references: after they are gone and
// the DB closes, nothing is left behind (ASan's leak check) and a reopened DB reads.
TEST_F(DBSuperVersionTest, ShortLivedReaderThreads) {
  Open();
  ASSERT_OK(Put("a", "1"));
  ASSERT_OK(Flush());
  auto* cfd = static_cast<ColumnFamilyHandleImpl*>(db_->DefaultColumnFamily())->cfd();
  const size_t before = cfd->TEST_NumCachedSlots();
  for (int round = 0; round < 3; round++) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++) {
      threads.emplace_back([&] {
        std::string v;
        EXPECT_OK(db_->Get(ReadOptions(), "a", &v));
        EXPECT_EQ(v, "1");
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(cfd->TEST_NumCachedSlots(), before);
    ASSERT_OK(Put("a", "1"));
    ASSERT_OK(Flush());  // a new view while no reader thread is alive
  }
  Reopen();
  EXPECT_EQ(Get("a"), "1");
}

}  // namespace
}  // namespace shale
