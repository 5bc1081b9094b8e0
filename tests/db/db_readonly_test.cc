// DB::OpenForReadOnly (db/db_impl_readonly.h): every write refused with RocksDB's status,
// reads equal to a model over flushed data and WAL data never flushed, the directory left
// byte for byte as it was, the families a read-only open may name, a directory without a
// DB, error_if_wal_file_exists, several instances at once beside a writer, and readers on
// many threads.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "db/filename.h"
#include "shale/db.h"
#include "shale/write_batch.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

class DBReadOnlyTest : public DBTestBase {
 protected:
  DBReadOnlyTest() : DBTestBase("db_readonly") {}

  std::unique_ptr<DB> OpenReadOnly(bool error_if_wal_file_exists = false) {
    std::unique_ptr<DB> db;
    Status s = DB::OpenForReadOnly(options_, dbname_, &db, error_if_wal_file_exists);
    EXPECT_OK(s);
    return db;
  }

  // Every file of the directory: name -> contents.
  std::map<std::string, std::string> DirectoryFiles() {
    std::vector<std::string> children;
    EXPECT_OK(Env::Default()->GetChildren(dbname_, &children));
    std::map<std::string, std::string> files;
    for (const std::string& name : children) {
      if (name == "." || name == "..") continue;
      std::string data;
      EXPECT_OK(ReadFileToString(Env::Default(), dbname_ + "/" + name, &data));
      files[name] = data;
    }
    return files;
  }

  // Everything a DB shows through an iterator, as "k=v " pairs.
  static std::string Scan(DB* db, ColumnFamilyHandle* cf = nullptr,
                          const ReadOptions& ro = ReadOptions()) {
    std::unique_ptr<Iterator> it(cf == nullptr ? db->NewIterator(ro) : db->NewIterator(ro, cf));
    std::string out;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out += it->key().ToString() + "=" + it->value().ToString() + " ";
    }
    EXPECT_OK(it->status());
    return out;
  }
};

TEST_F(DBReadOnlyTest, EveryWriteIsRefused) {
  Open();
  ASSERT_OK(Put("a", "1"));
  ColumnFamilyHandle* cf = nullptr;
  ASSERT_OK(db_->CreateColumnFamily(ColumnFamilyOptions(), "other", &cf));
  delete cf;
  Close();
  std::vector<ColumnFamilyHandle*> handles;
  std::unique_ptr<DB> db;
  ASSERT_OK(DB::OpenForReadOnly(DBOptions(options_), dbname_,
                                {{kDefaultColumnFamilyName, ColumnFamilyOptions(options_)},
                                 {"other", ColumnFamilyOptions(options_)}},
                                &handles, &db));
  const std::string msg = "Not supported operation in read only mode.";
  auto refused = [&](const Status& s) {
    EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
    EXPECT_EQ(s.ToString(), "Not implemented: " + msg);
  };
  WriteBatch batch;
  ASSERT_OK(batch.Put("b", "2"));
  refused(db->Put(WriteOptions(), "b", "2"));
  refused(db->Put(WriteOptions(), handles[1], "b", "2"));
  refused(db->Delete(WriteOptions(), "a"));
  refused(db->SingleDelete(WriteOptions(), "a"));
  refused(db->Merge(WriteOptions(), "a", "x"));
  refused(db->DeleteRange(WriteOptions(), "a", "z"));
  refused(db->DeleteRange(WriteOptions(), handles[1], "a", "z"));
  refused(db->Write(WriteOptions(), &batch));
  refused(db->Flush(FlushOptions()));
  refused(db->Flush(FlushOptions(), handles));
  refused(db->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  refused(db->IngestExternalFile({"x.sst"}, IngestExternalFileOptions()));
  refused(db->IngestExternalFiles({}));
  ColumnFamilyHandle* created = nullptr;
  refused(db->CreateColumnFamily(ColumnFamilyOptions(), "new", &created));
  EXPECT_EQ(created, nullptr);
  std::vector<ColumnFamilyHandle*> many;
  refused(db->CreateColumnFamilies(ColumnFamilyOptions(), {"n1", "n2"}, &many));
  EXPECT_TRUE(many.empty());
  refused(db->DropColumnFamily(handles[1]));
  refused(db->SetOptions({{"write_buffer_size", "1048576"}}));
  refused(db->SetDBOptions({{"max_background_jobs", "3"}}));
  refused(db->DisableFileDeletions());
  refused(db->EnableFileDeletions());
  EXPECT_OK(db->WaitForCompact(WaitForCompactOptions()));
  // Nothing changed: the key is there, the refused ones are not, the family too.
  EXPECT_EQ(ReadValue(db.get(), "a"), "1");
  EXPECT_EQ(ReadValue(db.get(), "b"), "NOT_FOUND");
  for (ColumnFamilyHandle* h : handles) delete h;
}

TEST_F(DBReadOnlyTest, SeesFlushedFilesAndTheWalOfACrashedWriter) {
  options_.disable_auto_compactions = true;
  Open();
  for (int i = 0; i < 100; i++) ASSERT_OK(Put(Key(i), "file" + std::to_string(i)));
  ASSERT_OK(Flush());
  for (int i = 50; i < 150; i++) ASSERT_OK(Put(Key(i), "wal" + std::to_string(i)));
  ASSERT_OK(Delete(Key(3)));
  // The writer is still open: its last writes are only in its WAL, as after a crash.
  std::unique_ptr<DB> ro = OpenReadOnly();
  ASSERT_NE(ro, nullptr);
  for (int i = 0; i < 150; i++) {
    const std::string want = i == 3   ? "NOT_FOUND"
                             : i < 50 ? "file" + std::to_string(i)
                                      : "wal" + std::to_string(i);
    ASSERT_EQ(ReadValue(ro.get(), Key(i)), want) << i;
  }
  // Writes after the open are not seen.
  ASSERT_OK(Put(Key(200), "late"));
  EXPECT_EQ(ReadValue(ro.get(), Key(200)), "NOT_FOUND");
  EXPECT_EQ(ro->GetLatestSequenceNumber(), 201u);
  uint64_t files = 0;
  ASSERT_TRUE(ro->GetIntProperty("shale.num-files-at-level0", &files));
  EXPECT_EQ(files, 1u);
}

TEST_F(DBReadOnlyTest, LeavesTheDirectoryAsItWas) {
  options_.write_buffer_size = 64 << 10;
  Open();
  for (int i = 0; i < 3000; i++) ASSERT_OK(Put(Key(i % 700), std::string(100, 'a' + i % 26)));
  Close();  // the last memtable stays in the WAL
  const std::map<std::string, std::string> before = DirectoryFiles();
  ASSERT_TRUE(before.count("LOCK") > 0);
  {
    // A small write_buffer_size: the replay does not flush however much it reads.
    options_.write_buffer_size = 4 << 10;
    options_.create_if_missing = true;  // creates nothing when the DB exists
    std::unique_ptr<DB> ro = OpenReadOnly();
    ASSERT_NE(ro, nullptr);
    EXPECT_EQ(ReadValue(ro.get(), Key(699)), std::string(100, 'a' + 2799 % 26));
    const Snapshot* snap = ro->GetSnapshot();
    EXPECT_FALSE(Scan(ro.get()).empty());
    ro->ReleaseSnapshot(snap);
    std::vector<std::string> live;
    uint64_t manifest_size = 0;
    ASSERT_OK(ro->GetLiveFiles(live, &manifest_size, /*flush_memtable=*/true));
    EXPECT_GT(manifest_size, 0u);
    std::string stats;
    EXPECT_TRUE(ro->GetProperty("shale.stats", &stats));
    VectorWalPtr wals;
    ASSERT_OK(ro->GetSortedWalFiles(wals));
    EXPECT_FALSE(wals.empty());
    ASSERT_OK(ro->Close());
  }
  const std::map<std::string, std::string> after = DirectoryFiles();
  EXPECT_EQ(before.size(), after.size());
  for (const auto& [name, data] : before) {
    auto it = after.find(name);
    ASSERT_NE(it, after.end()) << name;
    EXPECT_TRUE(it->second == data) << name << " changed";
  }
}

TEST_F(DBReadOnlyTest, ADirectoryWithoutADb) {
  const std::string missing = dbname_ + "_missing";
  std::unique_ptr<DB> db;
  options_.create_if_missing = false;
  Status s = DB::OpenForReadOnly(options_, missing, &db);
  EXPECT_TRUE(s.IsIOError() && s.IsPathNotFound()) << s.ToString();
  EXPECT_TRUE(Env::Default()->FileExists(missing).IsNotFound()) << "nothing made";
  EXPECT_EQ(db, nullptr);
  // An empty directory answers the same; create_if_missing makes only the directory.
  Options create = options_;
  create.create_if_missing = true;
  s = DB::OpenForReadOnly(create, missing, &db);
  EXPECT_TRUE(s.IsIOError() && s.IsPathNotFound()) << s.ToString();
  std::vector<std::string> children;
  ASSERT_OK(Env::Default()->GetChildren(missing, &children));
  for (const std::string& c : children) EXPECT_TRUE(c == "." || c == "..") << c;
  ASSERT_OK(Env::Default()->DeleteDir(missing));
}

TEST_F(DBReadOnlyTest, ErrorIfWalFileExists) {
  Open();
  ASSERT_OK(Put("a", "1"));
  Close();
  std::unique_ptr<DB> db;
  Status s = DB::OpenForReadOnly(options_, dbname_, &db, /*error_if_wal_file_exists=*/true);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_EQ(db, nullptr);
  std::vector<ColumnFamilyHandle*> handles;
  s = DB::OpenForReadOnly(DBOptions(options_), dbname_,
                          {{kDefaultColumnFamilyName, ColumnFamilyOptions(options_)}}, &handles,
                          &db, /*error_if_wal_file_exists=*/true);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  // Once everything is flushed, the WALs left hold nothing (the current one is allocated
  // ahead, but empty).
  Open();
  ASSERT_OK(Flush());
  Close();
  ASSERT_OK(DB::OpenForReadOnly(options_, dbname_, &db, /*error_if_wal_file_exists=*/true));
  EXPECT_EQ(ReadValue(db.get(), "a"), "1");
}

TEST_F(DBReadOnlyTest, OpensAnyOfTheFamilies) {
  Open();
  ColumnFamilyHandle* one = nullptr;
  ColumnFamilyHandle* two = nullptr;
  ASSERT_OK(db_->CreateColumnFamily(ColumnFamilyOptions(), "one", &one));
  ASSERT_OK(db_->CreateColumnFamily(ColumnFamilyOptions(), "two", &two));
  ASSERT_OK(db_->Put(WriteOptions(), one, "k", "in one"));
  ASSERT_OK(db_->Put(WriteOptions(), two, "k", "in two"));
  ASSERT_OK(db_->Flush(FlushOptions(), one));
  ASSERT_OK(Put("k", "in default"));
  delete one;
  delete two;
  Close();

  std::vector<ColumnFamilyHandle*> handles;
  std::unique_ptr<DB> db;
  // A subset: "two" is left out, its WAL records skipped.
  ASSERT_OK(DB::OpenForReadOnly(
      DBOptions(options_), dbname_,
      {{kDefaultColumnFamilyName, ColumnFamilyOptions()}, {"one", ColumnFamilyOptions()}}, &handles,
      &db));
  ASSERT_EQ(handles.size(), 2u);
  EXPECT_EQ(handles[1]->GetName(), "one");
  EXPECT_EQ(ReadValue(db.get(), "k"), "in default");
  std::string v;
  ASSERT_OK(db->Get(ReadOptions(), handles[1], "k", &v));
  EXPECT_EQ(v, "in one");
  EXPECT_EQ(Scan(db.get(), handles[1]), "k=in one ");
  for (ColumnFamilyHandle* h : handles) delete h;
  db.reset();

  // A family the DB lacks is not created, whatever the options say.
  DBOptions create(options_);
  create.create_missing_column_families = true;
  Status s = DB::OpenForReadOnly(
      create, dbname_,
      {{kDefaultColumnFamilyName, ColumnFamilyOptions()}, {"three", ColumnFamilyOptions()}},
      &handles, &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(s.ToString(), "Invalid argument: Column family not found: three");
  EXPECT_TRUE(handles.empty());
  // The default family must be named.
  s = DB::OpenForReadOnly(DBOptions(options_), dbname_, {{"one", ColumnFamilyOptions()}}, &handles,
                          &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  std::vector<std::string> names;
  ASSERT_OK(DB::ListColumnFamilies(DBOptions(options_), dbname_, &names));
  EXPECT_EQ(names.size(), 3u);
}

TEST_F(DBReadOnlyTest, SeveralInstancesBesideAWriter) {
  Open();
  for (int i = 0; i < 50; i++) ASSERT_OK(Put(Key(i), "v1"));
  std::unique_ptr<DB> first = OpenReadOnly();
  ASSERT_OK(Flush());
  for (int i = 0; i < 50; i += 2) ASSERT_OK(Put(Key(i), "v2"));
  std::unique_ptr<DB> second = OpenReadOnly();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ASSERT_OK(Put(Key(1), "v3"));  // the writer goes on, unhindered
  for (int i = 0; i < 50; i++) {
    EXPECT_EQ(ReadValue(first.get(), Key(i)), "v1");
    EXPECT_EQ(ReadValue(second.get(), Key(i)), i % 2 == 0 ? "v2" : "v1");
    EXPECT_EQ(Get(Key(i)), i % 2 == 0 ? "v2" : i == 1 ? "v3" : "v1");
  }
  first.reset();
  second.reset();
  Reopen();  // the writer's LOCK was never taken from it
  EXPECT_EQ(Get(Key(1)), "v3");
}

// A random history of writes, flushes and reopens; then the read-only view (files and the
// unflushed WAL) must equal the model, read by Get, MultiGet, iterators both ways and at a
// snapshot, from several threads at once.
TEST_F(DBReadOnlyTest, ReadsEqualTheModelFromManyThreads) {
  const uint64_t seed = TestSeed();
  std::mt19937_64 rnd(seed);
  options_.write_buffer_size = 32 << 10;
  Open();
  std::map<std::string, std::string> model;
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < 1500; i++) {
      const std::string k = Key(static_cast<int>(rnd() % 400));
      if (rnd() % 5 == 0) {
        ASSERT_OK(Delete(k));
        model.erase(k);
      } else {
        const std::string v = "r" + std::to_string(round) + "-" + std::to_string(rnd() % 1000);
        ASSERT_OK(Put(k, v));
        model[k] = v;
      }
    }
    if (round == 1) ASSERT_OK(Flush());
    if (round == 2) Reopen();
  }
  std::string expected;
  for (const auto& [k, v] : model) expected += k + "=" + v + " ";
  std::unique_ptr<DB> ro = OpenReadOnly();  // the writer still open: its WAL as a crash left it
  ASSERT_NE(ro, nullptr);
  const Snapshot* snap = ro->GetSnapshot();
  std::vector<std::thread> readers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; t++) {
    readers.emplace_back([&, t] {
      std::mt19937_64 r(seed + t);
      for (int n = 0; n < 300; n++) {
        const std::string k = Key(static_cast<int>(r() % 420));
        auto it = model.find(k);
        const std::string want = it == model.end() ? "NOT_FOUND" : it->second;
        if (ReadValue(ro.get(), k) != want) failures++;
        ReadOptions at;
        at.snapshot = snap;
        if (ReadValue(ro.get(), k, at) != want) failures++;
      }
      std::vector<Slice> keys;
      std::vector<std::string> names;
      for (int i = 0; i < 420; i++) names.push_back(Key(i));
      for (const std::string& n : names) keys.emplace_back(n);
      std::vector<std::string> values;
      std::vector<Status> st = ro->MultiGet(ReadOptions(), keys, &values);
      for (size_t i = 0; i < keys.size(); i++) {
        auto it = model.find(names[i]);
        if (it == model.end() ? !st[i].IsNotFound() : (!st[i].ok() || values[i] != it->second)) {
          failures++;
        }
      }
      if (Scan(ro.get()) != expected) failures++;
      std::unique_ptr<Iterator> rev(ro->NewIterator(ReadOptions()));
      std::string backwards;
      for (rev->SeekToLast(); rev->Valid(); rev->Prev()) {
        backwards = rev->key().ToString() + "=" + rev->value().ToString() + " " + backwards;
      }
      if (!rev->status().ok() || backwards != expected) failures++;
    });
  }
  for (std::thread& t : readers) t.join();
  ro->ReleaseSnapshot(snap);
  EXPECT_EQ(failures.load(), 0) << "seed " << seed;
  EXPECT_EQ(Scan(ro.get()), expected);
}

}  // namespace
}  // namespace shale
