// The DB's files as its users see them (db/db_impl_files.cc): GetLiveFiles,
// GetLiveFilesMetaData, GetColumnFamilyMetaData, GetSortedWalFiles, GetCurrentWalFile,
// and DisableFileDeletions / EnableFileDeletions with RocksDB's counting.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "db/filename.h"
#include "shale/db.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

class DBFilesTest : public DBTestBase {
 protected:
  DBFilesTest() : DBTestBase("db_files") { options_.disable_auto_compactions = true; }

  // The numbers of the files of `type` in the DB directory.
  std::set<uint64_t> FilesOnDisk(FileType want) {
    std::vector<std::string> children;
    EXPECT_OK(options_.env->GetChildren(dbname_, &children));
    std::set<uint64_t> numbers;
    for (const std::string& name : children) {
      uint64_t number;
      FileType type;
      if (ParseFileName(name, &number, &type) && type == want) numbers.insert(number);
    }
    return numbers;
  }

  // The numbers of the table files of the live trees.
  std::set<uint64_t> LiveTables() {
    std::vector<LiveFileMetaData> meta;
    db_->GetLiveFilesMetaData(&meta);
    std::set<uint64_t> numbers;
    for (const LiveFileMetaData& m : meta) numbers.insert(m.file_number);
    return numbers;
  }

  // Writes n keys starting at `first` and flushes them into one L0 file.
  void WriteFile(int first, int n) {
    for (int i = first; i < first + n; i++) ASSERT_OK(Put(Key(i), "v" + std::to_string(i)));
    ASSERT_OK(Flush());
  }
};

TEST_F(DBFilesTest, GetLiveFilesNamesTablesManifestCurrentAndOptions) {
  Open();
  WriteFile(0, 10);
  WriteFile(10, 10);
  ASSERT_OK(Put("unflushed", "v"));

  std::vector<std::string> files;
  uint64_t manifest_size = 0;
  ASSERT_OK(db_->GetLiveFiles(files, &manifest_size, /*flush_memtable=*/false));
  std::set<uint64_t> tables;
  std::string manifest;
  int currents = 0, options_files = 0;
  for (const std::string& f : files) {
    ASSERT_EQ('/', f[0]) << f;
    uint64_t number;
    FileType type;
    ASSERT_TRUE(ParseFileName(f.substr(1), &number, &type)) << f;
    if (type == kTableFile) tables.insert(number);
    if (type == kDescriptorFile) manifest = f;
    if (type == kCurrentFile) currents++;
    if (type == kOptionsFile) {
      options_files++;
      EXPECT_EQ(*FilesOnDisk(kOptionsFile).rbegin(), number);  // the newest
    }
  }
  EXPECT_EQ(FilesOnDisk(kTableFile), tables);
  EXPECT_EQ(2u, tables.size());
  EXPECT_EQ(1, currents);
  EXPECT_EQ(1, options_files);
  ASSERT_FALSE(manifest.empty());
  uint64_t on_disk = 0;
  ASSERT_OK(options_.env->GetFileSize(dbname_ + manifest, &on_disk));
  EXPECT_GT(manifest_size, 0u);
  EXPECT_LE(manifest_size, on_disk);

  // flush_memtable: the write still in the memtable gets a file of its own first.
  ASSERT_OK(db_->GetLiveFiles(files, &manifest_size));
  EXPECT_EQ(3, std::count_if(files.begin(), files.end(), [](const std::string& f) {
              return f.size() > 4 && f.substr(f.size() - 4) == ".sst";
            }));
  EXPECT_EQ(0u, IntProperty("rocksdb.num-immutable-mem-table"));
  EXPECT_EQ(3u, FilesOnDisk(kTableFile).size());
}

TEST_F(DBFilesTest, LiveFilesMetaDataNamesEveryFileWithItsFamilyAndLevel) {
  Open();
  ColumnFamilyHandle* hot = nullptr;
  ASSERT_OK(db_->CreateColumnFamily(ColumnFamilyOptions(), "hot", &hot));
  WriteFile(0, 5);
  ASSERT_OK(db_->Put(WriteOptions(), hot, "a", "1"));
  ASSERT_OK(db_->Put(WriteOptions(), hot, "z", "2"));
  ASSERT_OK(db_->Flush(FlushOptions(), hot));
  CompactRangeOptions cro;
  ASSERT_OK(db_->CompactRange(cro, hot, nullptr, nullptr));

  std::vector<LiveFileMetaData> meta;
  db_->GetLiveFilesMetaData(&meta);
  ASSERT_EQ(2u, meta.size());
  std::sort(meta.begin(), meta.end(), [](const LiveFileMetaData& a, const LiveFileMetaData& b) {
    return a.column_family_name < b.column_family_name;
  });
  const LiveFileMetaData& d = meta[0];
  EXPECT_EQ("default", d.column_family_name);
  EXPECT_EQ(0, d.level);
  EXPECT_EQ(Key(0), d.smallestkey);
  EXPECT_EQ(Key(4), d.largestkey);
  EXPECT_EQ(5u, d.num_entries);
  EXPECT_EQ(1u, d.smallest_seqno);
  EXPECT_EQ(5u, d.largest_seqno);
  EXPECT_EQ(dbname_, d.directory);
  EXPECT_EQ("/" + d.relative_filename, d.name);
  EXPECT_EQ(TableFileName(dbname_, d.file_number), d.directory + d.name);
  uint64_t size = 0;
  ASSERT_OK(options_.env->GetFileSize(d.directory + d.name, &size));
  EXPECT_EQ(size, d.size);
  EXPECT_EQ(Key(0), Slice(d.smallest).ToString().substr(0, Key(0).size()));
  EXPECT_EQ(Key(0).size() + 8, d.smallest.size());  // the internal key

  const LiveFileMetaData& h = meta[1];
  EXPECT_EQ("hot", h.column_family_name);
  EXPECT_GT(h.level, 0);  // compacted down
  EXPECT_EQ("a", h.smallestkey);
  EXPECT_EQ("z", h.largestkey);
  EXPECT_FALSE(h.being_compacted);
  ASSERT_OK(db_->DestroyColumnFamilyHandle(hot));
}

TEST_F(DBFilesTest, ColumnFamilyMetaDataHasEveryLevel) {
  options_.num_levels = 4;
  Open();
  WriteFile(0, 10);
  WriteFile(5, 10);
  ColumnFamilyMetaData cf;
  db_->GetColumnFamilyMetaData(&cf);
  EXPECT_EQ("default", cf.name);
  ASSERT_EQ(4u, cf.levels.size());
  EXPECT_EQ(2u, cf.file_count);
  ASSERT_EQ(2u, cf.levels[0].files.size());
  // L0 newest first.
  EXPECT_GT(cf.levels[0].files[0].largest_seqno, cf.levels[0].files[1].largest_seqno);
  EXPECT_EQ(cf.levels[0].files[0].size + cf.levels[0].files[1].size, cf.levels[0].size);
  EXPECT_EQ(cf.levels[0].size, cf.size);

  ASSERT_OK(CompactAll());
  db_->GetColumnFamilyMetaData(db_->DefaultColumnFamily(), &cf);
  EXPECT_EQ(1u, cf.file_count);
  ASSERT_EQ(4u, cf.levels.size());
  EXPECT_TRUE(cf.levels[0].files.empty());
  uint64_t entries = 0;
  for (const LevelMetaData& l : cf.levels) {
    for (const SstFileMetaData& f : l.files) entries += f.num_entries;
  }
  EXPECT_EQ(15u, entries);  // the overlap compacted away
  for (const LevelMetaData& l : cf.levels) EXPECT_EQ(&l - &cf.levels[0], l.level);

  // A handle of another DB: nothing.
  TempDirectory other_dir("db_files_other");
  std::unique_ptr<DB> other;
  ASSERT_OK(DB::Open(options_, other_dir.path(), &other));
  ColumnFamilyHandle* foreign = nullptr;
  ASSERT_OK(other->CreateColumnFamily(ColumnFamilyOptions(), "x", &foreign));
  db_->GetColumnFamilyMetaData(foreign, &cf);
  EXPECT_EQ(0u, cf.file_count);
  EXPECT_TRUE(cf.levels.empty());
  EXPECT_TRUE(cf.name.empty());
  ASSERT_OK(other->DestroyColumnFamilyHandle(foreign));
}

TEST_F(DBFilesTest, DisableFileDeletionsCounts) {
  Open();
  WriteFile(0, 10);
  WriteFile(10, 10);
  const std::set<uint64_t> before = FilesOnDisk(kTableFile);
  ASSERT_EQ(2u, before.size());

  ASSERT_OK(db_->DisableFileDeletions());
  ASSERT_OK(db_->DisableFileDeletions());
  ASSERT_OK(CompactAll());  // the two inputs become obsolete
  std::set<uint64_t> now = FilesOnDisk(kTableFile);
  EXPECT_EQ(3u, now.size());
  for (uint64_t n : before) EXPECT_EQ(1u, now.count(n)) << n;

  ASSERT_OK(db_->EnableFileDeletions());  // one disable still stands
  WriteFile(20, 1);
  ASSERT_OK(CompactAll());
  now = FilesOnDisk(kTableFile);
  for (uint64_t n : before) EXPECT_EQ(1u, now.count(n)) << n;

  EXPECT_LT(LiveTables().size(), now.size());

  ASSERT_OK(db_->EnableFileDeletions());  // the last: obsolete files go now
  now = FilesOnDisk(kTableFile);
  EXPECT_EQ(LiveTables(), now);
  for (uint64_t n : before) EXPECT_EQ(0u, now.count(n)) << n;

  // More enables than disables are ignored; deletions stay on.
  ASSERT_OK(db_->EnableFileDeletions());
  for (int i = 0; i < 10; i++) ASSERT_OK(Put(Key(i), "w"));
  ASSERT_OK(Flush());
  ASSERT_OK(CompactAll());  // rewrites the file of keys 0..19
  EXPECT_EQ(LiveTables(), FilesOnDisk(kTableFile));
  Reopen();
  EXPECT_EQ("v20", Get(Key(20)));
  EXPECT_EQ("w", Get(Key(0)));
  EXPECT_EQ("v10", Get(Key(10)));
}

TEST_F(DBFilesTest, DisableFileDeletionsKeepsWals) {
  Open();
  ASSERT_OK(db_->DisableFileDeletions());
  for (int round = 0; round < 3; round++) WriteFile(round * 10, 10);
  // Every WAL switched away from is still there, and GetSortedWalFiles lists them all.
  const std::set<uint64_t> wals = FilesOnDisk(kWalFile);
  EXPECT_EQ(4u, wals.size());
  VectorWalPtr listed;
  ASSERT_OK(db_->GetSortedWalFiles(listed));
  ASSERT_EQ(wals.size(), listed.size());
  ASSERT_OK(db_->EnableFileDeletions());
  EXPECT_EQ(1u, FilesOnDisk(kWalFile).size());
}

TEST_F(DBFilesTest, SortedWalFilesAndCurrentWalFile) {
  Open();
  ASSERT_OK(db_->DisableFileDeletions());
  ASSERT_OK(Put("a", "1"));  // sequence 1
  ASSERT_OK(Put("b", "2"));
  ASSERT_OK(Flush());        // a new WAL starts
  ASSERT_OK(Put("c", "3"));  // sequence 3

  VectorWalPtr wals;
  ASSERT_OK(db_->GetSortedWalFiles(wals));
  ASSERT_GE(wals.size(), 2u);
  for (size_t i = 1; i < wals.size(); i++) {
    EXPECT_LT(wals[i - 1]->LogNumber(), wals[i]->LogNumber());
  }
  const WalFile& older = *wals[wals.size() - 2];
  const WalFile& newest = *wals.back();
  EXPECT_EQ(kAliveLogFile, newest.Type());
  EXPECT_EQ(LogFileName("", newest.LogNumber()), newest.PathName());
  EXPECT_EQ(1u, older.StartSequence());
  EXPECT_EQ(3u, newest.StartSequence());
  uint64_t size = 0;
  ASSERT_OK(options_.env->GetFileSize(dbname_ + older.PathName(), &size));
  EXPECT_EQ(size, older.SizeFileBytes());
  EXPECT_GT(older.SizeFileBytes(), 0u);

  std::unique_ptr<WalFile> current;
  ASSERT_OK(db_->GetCurrentWalFile(&current));
  EXPECT_EQ(newest.LogNumber(), current->LogNumber());
  EXPECT_EQ(0u, current->StartSequence());
  EXPECT_EQ(kAliveLogFile, current->Type());
  ASSERT_OK(db_->EnableFileDeletions());
}

}  // namespace
}  // namespace shale
