// DB::OpenAsSecondary and TryCatchUpWithPrimary (db/db_impl_secondary.h): a secondary
// sees what the primary wrote once it catches up, through the primary's flushes,
// compactions (files deleted under an open view) and MANIFEST rollovers, the families it
// drops; it refuses writes with RocksDB's status; and it follows a primary writing on one
// thread while readers read it on others (a prefix of the writes, never a hole).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "shale/db.h"
#include "shale/utilities/stackable_db.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

class DBSecondaryTest : public DBTestBase {
 protected:
  DBSecondaryTest() : DBTestBase("db_secondary"), secondary_path_(dbname_ + "_secondary") {}
  ~DBSecondaryTest() override { DestroyDir(secondary_path_).PermitUncheckedError(); }

  std::unique_ptr<DB> OpenSecondary() {
    std::unique_ptr<DB> db;
    EXPECT_OK(DB::OpenAsSecondary(options_, dbname_, secondary_path_, &db));
    return db;
  }

  static std::string Value(int i) { return "value" + std::to_string(i); }

  // The table files of the primary's directory this process holds open though they were
  // deleted (Linux's descriptor table).
  int DeletedTablesHeldOpen() {
    std::vector<std::string> fds;
    EXPECT_OK(Env::Default()->GetChildren("/proc/self/fd", &fds));
    int n = 0;
    for (const std::string& fd : fds) {
      char target[4096];
      const ssize_t len = readlink(("/proc/self/fd/" + fd).c_str(), target, sizeof(target) - 1);
      if (len <= 0) continue;
      const std::string t(target, static_cast<size_t>(len));
      if (t.rfind(dbname_ + "/", 0) == 0 && t.find(".sst (deleted)") != std::string::npos) n++;
    }
    return n;
  }

  const std::string secondary_path_;
};

TEST_F(DBSecondaryTest, RefusesWritesAsRocksDBDoes) {
  Open();
  ASSERT_OK(Put("a", "1"));
  std::unique_ptr<DB> sec = OpenSecondary();
  ASSERT_NE(sec, nullptr);
  const std::string msg = "Not implemented: Not supported operation in secondary mode.";
  WriteBatch batch;
  ASSERT_OK(batch.Put("b", "2"));
  EXPECT_EQ(sec->Put(WriteOptions(), "b", "2").ToString(), msg);
  EXPECT_EQ(sec->Delete(WriteOptions(), "a").ToString(), msg);
  EXPECT_EQ(sec->Merge(WriteOptions(), "a", "x").ToString(), msg);
  EXPECT_EQ(sec->DeleteRange(WriteOptions(), "a", "z").ToString(), msg);
  EXPECT_EQ(sec->Write(WriteOptions(), &batch).ToString(), msg);
  EXPECT_EQ(sec->Flush(FlushOptions()).ToString(), msg);
  EXPECT_EQ(sec->CompactRange(CompactRangeOptions(), nullptr, nullptr).ToString(), msg);
  EXPECT_EQ(sec->SetDBOptions({{"max_background_jobs", "3"}}).ToString(), msg);
  EXPECT_EQ(sec->EnableFileDeletions().ToString(), msg);
  EXPECT_EQ(ReadValue(sec.get(), "a"), "1");
  // Only a secondary catches up.
  Status s = db_->TryCatchUpWithPrimary();
  EXPECT_TRUE(s.IsNotSupported());
  EXPECT_EQ(s.ToString(), "Not implemented: Supported only by secondary instance");
  std::unique_ptr<DB> ro;
  ASSERT_OK(DB::OpenForReadOnly(options_, dbname_, &ro));
  EXPECT_TRUE(ro->TryCatchUpWithPrimary().IsNotSupported());
  // A DB stacked on a secondary (a DBWithTTL, say) catches up through it.
  ASSERT_OK(Put("c", "3"));
  StackableDB stacked(sec.release());
  ASSERT_OK(stacked.TryCatchUpWithPrimary());
  EXPECT_EQ(ReadValue(&stacked, "c"), "3");
  // Its info LOG is in its own directory.
  EXPECT_OK(Env::Default()->FileExists(secondary_path_ + "/LOG"));
}

TEST_F(DBSecondaryTest, ADirectoryWithoutADb) {
  std::unique_ptr<DB> db;
  Status s = DB::OpenAsSecondary(options_, dbname_ + "_none", secondary_path_, &db);
  EXPECT_TRUE(s.IsIOError() && s.IsPathNotFound()) << s.ToString();
  EXPECT_TRUE(Env::Default()->FileExists(dbname_ + "_none").IsNotFound());
}

TEST_F(DBSecondaryTest, FollowsWritesFlushesAndCompactions) {
  options_.write_buffer_size = 16 << 10;
  options_.max_manifest_file_size = 1024;  // the MANIFEST rolls over now and then
  Open();
  for (int i = 0; i < 100; i++) ASSERT_OK(Put(Key(i), Value(i)));
  std::unique_ptr<DB> sec = OpenSecondary();
  ASSERT_NE(sec, nullptr);
  EXPECT_EQ(ReadValue(sec.get(), Key(99)), Value(99));
  for (int i = 100; i < 2000; i++) ASSERT_OK(Put(Key(i), Value(i)));
  ASSERT_OK(Delete(Key(5)));
  EXPECT_EQ(ReadValue(sec.get(), Key(1500)), "NOT_FOUND") << "not caught up yet";
  ASSERT_OK(sec->TryCatchUpWithPrimary());
  EXPECT_EQ(ReadValue(sec.get(), Key(1500)), Value(1500));
  EXPECT_EQ(ReadValue(sec.get(), Key(5)), "NOT_FOUND");

  // A view taken now keeps reading after the primary compacts its files away.
  std::unique_ptr<Iterator> old_view(sec->NewIterator(ReadOptions()));
  int count = 0;
  for (old_view->SeekToFirst(); old_view->Valid(); old_view->Next()) count++;
  ASSERT_OK(old_view->status());
  EXPECT_EQ(count, 1999);
  std::vector<LiveFileMetaData> old_files;
  sec->GetLiveFilesMetaData(&old_files);
  ASSERT_FALSE(old_files.empty());
  ASSERT_OK(Flush());
  ASSERT_OK(CompactAll());
  for (int i = 0; i < 2000; i += 3) ASSERT_OK(Put(Key(i), "new"));
  ASSERT_OK(Flush());
  ASSERT_OK(CompactAll());
  ASSERT_OK(Put(Key(1), "in the wal"));
  for (const LiveFileMetaData& f : old_files) {
    EXPECT_TRUE(Env::Default()->FileExists(dbname_ + f.name).IsNotFound()) << f.name;
  }
  count = 0;
  for (old_view->SeekToFirst(); old_view->Valid(); old_view->Next()) {
    EXPECT_EQ(old_view->value().ToString(), Value(std::stoi(old_view->key().ToString().substr(3))));
    count++;
  }
  ASSERT_OK(old_view->status());
  EXPECT_EQ(count, 1999);
  old_view.reset();
  EXPECT_GT(DeletedTablesHeldOpen(), 0) << "the secondary's view still reads them";

  ASSERT_OK(sec->TryCatchUpWithPrimary());
  EXPECT_EQ(DeletedTablesHeldOpen(), 0) << "no view lists them: closed";
  for (int i = 0; i < 2000; i++) {
    const std::string want = i == 5       ? "NOT_FOUND"
                             : i == 1     ? "in the wal"
                             : i % 3 == 0 ? "new"
                                          : Value(i);
    ASSERT_EQ(ReadValue(sec.get(), Key(i)), want) << i;
  }
  EXPECT_EQ(sec->GetLatestSequenceNumber(), db_->GetLatestSequenceNumber());
  // The primary reopens (a new MANIFEST and WAL); the secondary follows.
  Reopen();
  ASSERT_OK(Put(Key(3000), "after reopen"));
  ASSERT_OK(sec->TryCatchUpWithPrimary());
  EXPECT_EQ(ReadValue(sec.get(), Key(3000)), "after reopen");
}

// A file of the secondary's view that the primary deletes: with max_open_files = -1 it
// was opened when the view was loaded and still reads; with a bounded table cache, one
// never opened answers IOError, as RocksDB's secondary does, and catching up moves past it.
TEST_F(DBSecondaryTest, AFileThePrimaryDeletedUnderAView) {
  options_.disable_auto_compactions = true;
  for (int max_open_files : {-1, 100}) {
    SCOPED_TRACE(max_open_files);
    options_.max_open_files = max_open_files;
    Open();
    ASSERT_OK(Put("a", "1"));
    ASSERT_OK(Flush());
    std::unique_ptr<DB> sec = OpenSecondary();
    ASSERT_NE(sec, nullptr);
    ASSERT_OK(Put("b", "2"));
    ASSERT_OK(Flush());
    ASSERT_OK(sec->TryCatchUpWithPrimary());  // lists b's file
    ASSERT_OK(CompactAll());                  // which deletes it
    std::string v;
    Status s = sec->Get(ReadOptions(), "b", &v);
    if (max_open_files == -1) {
      ASSERT_OK(s);
      EXPECT_EQ(v, "2");
    } else {
      EXPECT_TRUE(s.IsIOError()) << s.ToString();
    }
    ASSERT_OK(sec->TryCatchUpWithPrimary());
    EXPECT_EQ(ReadValue(sec.get(), "a"), "1");
    EXPECT_EQ(ReadValue(sec.get(), "b"), "2");
    sec.reset();
    Destroy();
  }
}

TEST_F(DBSecondaryTest, FamiliesThePrimaryDropsOrCreates) {
  Open();
  ColumnFamilyHandle* one = nullptr;
  ASSERT_OK(db_->CreateColumnFamily(ColumnFamilyOptions(), "one", &one));
  ASSERT_OK(db_->Put(WriteOptions(), one, "k", "v1"));
  std::vector<ColumnFamilyHandle*> handles;
  std::unique_ptr<DB> sec;
  ASSERT_OK(DB::OpenAsSecondary(
      DBOptions(options_), dbname_, secondary_path_,
      {{kDefaultColumnFamilyName, ColumnFamilyOptions()}, {"one", ColumnFamilyOptions()}}, &handles,
      &sec));
  std::string v;
  ASSERT_OK(sec->Get(ReadOptions(), handles[1], "k", &v));
  EXPECT_EQ(v, "v1");
  ASSERT_OK(db_->DropColumnFamily(one));
  ColumnFamilyHandle* two = nullptr;
  ASSERT_OK(db_->CreateColumnFamily(ColumnFamilyOptions(), "two", &two));
  ASSERT_OK(db_->Put(WriteOptions(), two, "k", "v2"));
  ASSERT_OK(Put("k", "v0"));
  ASSERT_OK(sec->TryCatchUpWithPrimary());
  // The dropped family's handle reads its last view; the new family is ignored.
  ASSERT_OK(sec->Get(ReadOptions(), handles[1], "k", &v));
  EXPECT_EQ(v, "v1");
  EXPECT_EQ(ReadValue(sec.get(), "k"), "v0");
  ColumnFamilyMetaData meta;
  sec->GetColumnFamilyMetaData(handles[1], &meta);
  EXPECT_EQ(meta.name, "one");
  for (ColumnFamilyHandle* h : handles) delete h;
  delete one;
  delete two;
}

// One writer numbers its writes (key i is write i, each alone in its batch) and flushes
// and compacts as it goes; a secondary catches up over and over while readers read it.
// Every view must be a prefix of the writes: keys 0..n-1 with their values, no key past
// them, n never going back.
TEST_F(DBSecondaryTest, FollowsAWriterWithReadersOnOtherThreads) {
  const int kWrites = TestKnob("SHALE_SECONDARY_WRITES", 6000);
  options_.write_buffer_size = 32 << 10;
  options_.max_manifest_file_size = 4096;
  options_.level0_file_num_compaction_trigger = 2;
  Open();
  ASSERT_OK(Put(Key(0), Value(0)));
  std::unique_ptr<DB> sec = OpenSecondary();
  ASSERT_NE(sec, nullptr);
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::atomic<int> seen{1};
  std::thread writer([&] {
    for (int i = 1; i < kWrites; i++) {
      if (!Put(Key(i), Value(i)).ok()) failures++;
      // One key overwritten again and again, whose old versions compactions drop.
      if (i % 10 == 0 && !Put("zcounter", Key(i)).ok()) failures++;
      if (i % 1500 == 0 && !CompactAll().ok()) failures++;
    }
    done = true;
  });
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; t++) {
    readers.emplace_back([&, t] {
      uint64_t x = t + 1;
      std::string counter;  // the newest value this thread read; views only move forward
      while (!done) {
        const int n = seen.load();
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const int i = static_cast<int>((x >> 33) % static_cast<uint64_t>(n));
        if (ReadValue(sec.get(), Key(i)) != Value(i)) failures++;
        const std::string c = ReadValue(sec.get(), "zcounter");
        if (c == "NOT_FOUND" ? !counter.empty() : c < counter) failures++;
        if (c != "NOT_FOUND") counter = c;
      }
    });
  }
  int catch_ups = 0;
  int last = 1;
  while (!done || catch_ups == 0) {
    Status s = sec->TryCatchUpWithPrimary();
    if (!s.ok()) {
      ADD_FAILURE() << s.ToString();
      break;
    }
    catch_ups++;
    std::unique_ptr<Iterator> it(sec->NewIterator(ReadOptions()));
    int n = 0;
    for (it->SeekToFirst(); it->Valid() && it->key()[0] != 'z'; it->Next(), n++) {
      if (it->key().ToString() != Key(n) || it->value().ToString() != Value(n)) {
        ADD_FAILURE() << "hole or wrong value at " << n << ": " << it->key().ToString();
        break;
      }
    }
    if (!it->status().ok()) ADD_FAILURE() << it->status().ToString();
    EXPECT_GE(n, last);
    EXPECT_LE(static_cast<uint64_t>(n), sec->GetLatestSequenceNumber());
    last = n;
    seen = std::max(n, 1);  // key 0 was written before the open
  }
  writer.join();
  for (std::thread& r : readers) r.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_OK(sec->TryCatchUpWithPrimary());
  for (int i = 0; i < kWrites; i++) ASSERT_EQ(ReadValue(sec.get(), Key(i)), Value(i)) << i;
  fprintf(stderr, "%d catch-ups\n", catch_ups);
}

}  // namespace
}  // namespace shale
