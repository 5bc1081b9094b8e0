// VersionSet and the MANIFEST: recovery of a new and an existing DB, LogAndApply round trips,
// damaged CURRENT and MANIFEST files, comparator and level-count mismatches, edits that
// cannot apply, live files, concurrent and failing MANIFEST writes. Over real SST files in a
// temporary directory; lookups and iterators are in version_read_test.cc.
#include "db/version_set.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/db/version_set_fixture.h"

namespace shale {
namespace {

TEST_F(VersionSetTest, MissingCurrentIsNotFoundNamingIt) {
  Status s = Recover();
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("CURRENT")) << s.ToString();
}

TEST_F(VersionSetTest, RecoverNewDB) {
  NewDB();
  ASSERT_OK(Recover());
  EXPECT_EQ(0u, LogNumber());
  EXPECT_EQ(0u, vset_->LastSequence());
  EXPECT_EQ(1u, vset_->ManifestFileNumber());
  EXPECT_EQ(2u, vset_->NewFileNumber());
  EXPECT_EQ(3u, vset_->NewFileNumber());
  for (int level = 0; level < 4; level++) EXPECT_EQ(0, NumLevelFiles(level));
}

TEST_F(VersionSetTest, LogAndApplyRecoverRoundTrip) {
  NewDB();
  ASSERT_OK(Recover());
  FileMetaData f1 = BuildRange(vset_->NewFileNumber(), 0, 100, 1, 10);
  FileMetaData f2 = BuildRange(vset_->NewFileNumber(), 200, 300, 1, 20);
  VersionEdit edit;
  edit.AddFile(0, f1);
  edit.AddFile(1, f2);
  edit.SetLogNumber(7);
  vset_->MarkFileNumberUsed(7);
  vset_->SetLastSequence(20);
  ASSERT_OK(Apply(&edit));
  // The first LogAndApply after Recover switched to a new MANIFEST.
  const uint64_t manifest = vset_->ManifestFileNumber();
  EXPECT_GT(manifest, 1u);
  std::string current;
  ASSERT_OK(ReadFileToString(Env::Default(), CurrentFileName(dbname_), &current));
  EXPECT_EQ(DescriptorFileName(dbname_, manifest).substr(dbname_.size() + 1) + "\n", current);

  // A second edit goes into the same MANIFEST.
  FileMetaData f3 = BuildRange(vset_->NewFileNumber(), 50, 60, 1, 30);
  VersionEdit edit2;
  edit2.AddFile(0, f3);
  edit2.DeleteFile(0, f1.number);
  edit2.SetLastSequence(30);
  ASSERT_OK(Apply(&edit2));
  EXPECT_EQ(manifest, vset_->ManifestFileNumber());
  EXPECT_EQ(7u, LogNumber());
  const uint64_t next_before = vset_->PeekNextFileNumber();

  ASSERT_OK(Reopen());
  EXPECT_EQ(manifest, vset_->ManifestFileNumber());
  EXPECT_EQ(7u, LogNumber());
  EXPECT_EQ(30u, vset_->LastSequence());
  EXPECT_GE(vset_->PeekNextFileNumber(), next_before);
  EXPECT_EQ(std::vector<uint64_t>{f3.number}, FileNumbers(0));
  EXPECT_EQ(std::vector<uint64_t>{f2.number}, FileNumbers(1));
  Version* v = Current();
  const FileMetaData& r2 = *v->files(1)[0];
  EXPECT_EQ(f2.file_size, r2.file_size);
  EXPECT_EQ(f2.smallest.Encode(), r2.smallest.Encode());
  EXPECT_EQ(f2.largest.Encode(), r2.largest.Encode());
  EXPECT_EQ(f2.num_entries, r2.num_entries);
  EXPECT_EQ(f2.file_size, v->NumLevelBytes(1));
  v->Unref();
  ASSERT_OK(VerifyFilesExist(/*open_tables=*/true));
  EXPECT_EQ("v30@" + Key(55), Get(Key(55)));
  EXPECT_EQ("v20@" + Key(250), Get(Key(250)));
  EXPECT_EQ("ABSENT", Get(Key(5)));  // its file was deleted

  // A new number never collides with a recovered file.
  const uint64_t n = vset_->NewFileNumber();
  EXPECT_GT(n, f3.number);
  EXPECT_GT(n, manifest);
}

TEST_F(VersionSetTest, RecoverTwiceWithoutWritesKeepsState) {
  NewDB();
  ASSERT_OK(Recover());
  FileMetaData f = BuildRange(vset_->NewFileNumber(), 0, 10, 1, 5);
  VersionEdit edit;
  edit.AddFile(2, f);
  ASSERT_OK(Apply(&edit));
  for (int i = 0; i < 3; i++) {
    ASSERT_OK(Reopen());
    EXPECT_EQ(std::vector<uint64_t>{f.number}, FileNumbers(2));
    VersionEdit empty;
    ASSERT_OK(Apply(&empty));  // writes yet another MANIFEST with the snapshot
    EXPECT_EQ(std::vector<uint64_t>{f.number}, FileNumbers(2));
  }
}

TEST_F(VersionSetTest, GarbageCurrent) {
  NewDB();
  const std::string current = CurrentFileName(dbname_);
  for (const char* contents :
       {"", "MANIFEST-000001", "garbage\n", "MANIFEST-\n", "000001.log\n", "MANIFEST-000009\n"}) {
    ASSERT_OK(WriteStringToFile(Env::Default(), contents, current));
    Status s = Reopen();
    EXPECT_TRUE(s.IsCorruption()) << "'" << contents << "': " << s.ToString();
    EXPECT_NE(std::string::npos, s.ToString().find("CURRENT")) << s.ToString();
  }
  ASSERT_OK(WriteStringToFile(Env::Default(), "MANIFEST-000001\n", current));
  EXPECT_OK(Reopen());
}

TEST_F(VersionSetTest, DamagedManifest) {
  NewDB();
  ASSERT_OK(Recover());
  std::vector<FileMetaData> files;
  for (int i = 0; i < 3; i++) {
    files.push_back(BuildRange(vset_->NewFileNumber(), i * 10, i * 10 + 10, 1, 5 + i));
    VersionEdit edit;
    edit.AddFile(1, files.back());
    ASSERT_OK(Apply(&edit));
  }
  const std::string manifest = DescriptorFileName(dbname_, vset_->ManifestFileNumber());
  vset_.reset();
  uint64_t size;
  ASSERT_OK(Env::Default()->GetFileSize(manifest, &size));
  std::string original;
  ASSERT_OK(ReadFileToString(Env::Default(), manifest, &original));

  // A torn last record (the edit was never acknowledged) is dropped: the state before it.
  ASSERT_OK(TruncateFileTo(manifest, size - 3));
  ASSERT_OK(Reopen());
  EXPECT_EQ((std::vector<uint64_t>{files[0].number, files[1].number}), FileNumbers(1));

  // A MANIFEST cut inside its first record has no state at all.
  ASSERT_OK(WriteStringToFile(Env::Default(), original.substr(0, 12), manifest));
  Status s = Reopen();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("MANIFEST")) << s.ToString();

  // A flipped byte in the middle: Corruption naming the file and the offset.
  ASSERT_OK(WriteStringToFile(Env::Default(), original, manifest));
  ASSERT_OK(CorruptFile(manifest, 20, 1));
  s = Reopen();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("MANIFEST")) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("offset")) << s.ToString();

  // A valid record holding an edit that does not decode.
  ASSERT_OK(WriteStringToFile(Env::Default(), original, manifest));
  {
    std::unique_ptr<WritableFile> file;
    ASSERT_OK(Env::Default()->NewWritableFile(manifest, &file, EnvOptions()));
    ASSERT_OK(file->Append(original));
    log::Writer writer(std::move(file), 0);
    ASSERT_OK(writer.AddRecord(std::string("\x07\x01", 2)));  // a new-file tag, truncated
    ASSERT_OK(writer.Close());
  }
  s = Reopen();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("offset " + std::to_string(original.size())))
      << s.ToString();

  // An edit deleting a file that is not there.
  ASSERT_OK(WriteStringToFile(Env::Default(), original, manifest));
  {
    std::unique_ptr<WritableFile> file;
    ASSERT_OK(Env::Default()->NewWritableFile(manifest, &file, EnvOptions()));
    ASSERT_OK(file->Append(original));
    log::Writer writer(std::move(file), 0);
    VersionEdit bad;
    bad.DeleteFile(3, files[0].number);
    std::string record;
    bad.EncodeTo(&record);
    ASSERT_OK(writer.AddRecord(record));
    ASSERT_OK(writer.Close());
  }
  s = Reopen();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("not at level 3")) << s.ToString();
}

TEST_F(VersionSetTest, ComparatorMismatch) {
  NewDB("test.Reverse");
  Status s = Recover();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("test.Reverse")) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find(BytewiseComparator()->Name())) << s.ToString();
}

TEST_F(VersionSetTest, FewerLevelsThanTheManifest) {
  NewDB();
  ASSERT_OK(Recover());
  VersionEdit edit;
  edit.AddFile(3, BuildRange(vset_->NewFileNumber(), 0, 5, 1, 1));
  ASSERT_OK(Apply(&edit));
  options_.num_levels = 3;
  Status s = Reopen();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("num_levels")) << s.ToString();
  options_.num_levels = 7;
  EXPECT_OK(Reopen());
}

TEST_F(VersionSetTest, EditsThatCannotApplyChangeNothing) {
  NewDB();
  ASSERT_OK(Recover());
  FileMetaData a = BuildRange(vset_->NewFileNumber(), 0, 10, 1, 5);
  FileMetaData b = BuildRange(vset_->NewFileNumber(), 5, 15, 1, 6);  // overlaps a
  VersionEdit ok;
  ok.AddFile(1, a);
  ASSERT_OK(Apply(&ok));

  VersionEdit overlap;
  overlap.AddFile(1, b);
  EXPECT_TRUE(Apply(&overlap).IsCorruption());
  VersionEdit twice;
  twice.AddFile(2, a);
  EXPECT_TRUE(Apply(&twice).IsCorruption());
  VersionEdit absent;
  absent.DeleteFile(1, 999);
  EXPECT_TRUE(Apply(&absent).IsCorruption());
  VersionEdit wrong_level;
  wrong_level.DeleteFile(2, a.number);
  EXPECT_TRUE(Apply(&wrong_level).IsCorruption());
  VersionEdit too_deep;
  too_deep.AddFile(4, b);
  EXPECT_TRUE(Apply(&too_deep).IsInvalidArgument());
  VersionEdit no_seqnos;
  FileMetaData unset = b;
  unset.number = 777;
  unset.smallest_seqno = kMaxSequenceNumber;
  unset.largest_seqno = 0;
  no_seqnos.AddFile(0, unset);
  EXPECT_TRUE(Apply(&no_seqnos).IsCorruption());
  VersionEdit cf;
  cf.SetColumnFamily(3);
  EXPECT_TRUE(Apply(&cf).IsInvalidArgument());
  EXPECT_EQ(std::vector<uint64_t>{a.number}, FileNumbers(1));

  // L0 accepts overlapping files; moving a file down in one edit works.
  VersionEdit l0;
  l0.AddFile(0, b);
  ASSERT_OK(Apply(&l0));
  VersionEdit move;
  move.DeleteFile(1, a.number);
  move.AddFile(2, a);
  ASSERT_OK(Apply(&move));
  ASSERT_OK(Reopen());
  EXPECT_EQ(std::vector<uint64_t>{b.number}, FileNumbers(0));
  EXPECT_TRUE(FileNumbers(1).empty());
  EXPECT_EQ(std::vector<uint64_t>{a.number}, FileNumbers(2));
}

TEST_F(VersionSetTest, LiveFilesFollowVersions) {
  NewDB();
  ASSERT_OK(Recover());
  FileMetaData a = BuildRange(vset_->NewFileNumber(), 0, 10, 1, 5);
  FileMetaData b = BuildRange(vset_->NewFileNumber(), 20, 30, 1, 6);
  VersionEdit e1;
  e1.AddFile(0, a);
  ASSERT_OK(Apply(&e1));
  Version* old = Current();
  VersionEdit e2;
  e2.DeleteFile(0, a.number);
  e2.AddFile(1, b);
  ASSERT_OK(Apply(&e2));
  std::set<uint64_t> live;
  vset_->AddLiveFiles(&live);
  EXPECT_EQ((std::set<uint64_t>{a.number, b.number}), live);
  // The old Version still reads its file.
  LookupKey lkey(Key(3), kMaxSequenceNumber);
  std::string value;
  Status s;
  SequenceNumber seq;
  ASSERT_TRUE(old->Get(ReadOptions(), lkey, &value, &s, &seq, nullptr));
  EXPECT_OK(s);
  old->Unref();
  live.clear();
  vset_->AddLiveFiles(&live);
  EXPECT_EQ(std::set<uint64_t>{b.number}, live);
}

TEST_F(VersionSetTest, VerifyFilesExist) {
  NewDB();
  ASSERT_OK(Recover());
  FileMetaData a = BuildRange(vset_->NewFileNumber(), 0, 10, 1, 5);
  FileMetaData b = BuildRange(vset_->NewFileNumber(), 20, 30, 1, 6);
  VersionEdit edit;
  edit.AddFile(0, a);
  edit.AddFile(3, b);
  ASSERT_OK(Apply(&edit));
  ASSERT_OK(VerifyFilesExist(true));

  ASSERT_OK(TruncateFileTo(TableFileName(dbname_, a.number), a.file_size - 1));
  ASSERT_OK(Reopen());
  Status s = VerifyFilesExist();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find(TableFileName(dbname_, a.number)));

  ASSERT_OK(Env::Default()->DeleteFile(TableFileName(dbname_, a.number)));
  s = VerifyFilesExist();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find(TableFileName(dbname_, a.number)));
}

TEST_F(VersionSetTest, ConcurrentLogAndApply) {
  NewDB();
  ASSERT_OK(Recover());
  constexpr int kThreads = 4, kEditsPerThread = 5;
  std::vector<std::vector<FileMetaData>> files(kThreads);
  for (int t = 0; t < kThreads; t++) {
    for (int i = 0; i < kEditsPerThread; i++) {
      const int base = (t * kEditsPerThread + i) * 10;
      files[t].push_back(BuildRange(vset_->NewFileNumber(), base, base + 10, 1, base + 1));
    }
  }
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (const FileMetaData& f : files[t]) {
        VersionEdit edit;
        edit.AddFile(0, f);
        if (!Apply(&edit).ok()) failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(0, failures.load());
  EXPECT_EQ(kThreads * kEditsPerThread, static_cast<int>(FileNumbers(0).size()));
  ASSERT_OK(Reopen());
  EXPECT_EQ(kThreads * kEditsPerThread, static_cast<int>(FileNumbers(0).size()));
  EXPECT_EQ("v171@" + Key(175), Get(Key(175)));
}

TEST_F(VersionSetTest, FailedManifestWriteInstallsNothing) {
  NewDB();
  ASSERT_OK(Recover());
  FileMetaData a = BuildRange(vset_->NewFileNumber(), 0, 10, 1, 5);
  FileMetaData b = BuildRange(vset_->NewFileNumber(), 20, 30, 1, 6);
  FileMetaData c = BuildRange(vset_->NewFileNumber(), 40, 50, 1, 7);
  VersionEdit e1;
  e1.AddFile(1, a);
  ASSERT_OK(Apply(&e1));
  const uint64_t first_manifest = vset_->ManifestFileNumber();

  // Appending to the live MANIFEST fails at the sync.
  fault_env_.SetFailure(FailOn::kSync, 1, FailMode::kNth, "MANIFEST");
  VersionEdit e2;
  e2.AddFile(1, b);
  EXPECT_FALSE(Apply(&e2).ok());
  EXPECT_EQ(std::vector<uint64_t>{a.number}, FileNumbers(1));

  // The next edit starts a fresh MANIFEST whose snapshot lacks the failed edit.
  VersionEdit e3;
  e3.AddFile(1, c);
  ASSERT_OK(Apply(&e3));
  EXPECT_GT(vset_->ManifestFileNumber(), first_manifest);
  ASSERT_OK(Reopen());
  EXPECT_EQ((std::vector<uint64_t>{a.number, c.number}), FileNumbers(1));

  // Creating the new MANIFEST fails: CURRENT still names the old one, which still works.
  const uint64_t live_manifest = vset_->ManifestFileNumber();
  fault_env_.SetFailure(FailOn::kRename, 1, FailMode::kNth, "CURRENT");
  VersionEdit e4;
  e4.DeleteFile(1, a.number);
  EXPECT_FALSE(Apply(&e4).ok());
  EXPECT_EQ(live_manifest, vset_->ManifestFileNumber());
  std::vector<std::string> children;
  ASSERT_OK(Env::Default()->GetChildren(dbname_, &children));
  for (const std::string& name : children) {
    uint64_t number;
    FileType type;
    ASSERT_TRUE(ParseFileName(name, &number, &type)) << name;
    if (type == kDescriptorFile) {
      EXPECT_LE(number, live_manifest) << "left behind: " << name;
    }
    EXPECT_NE(kTempFile, type) << "left behind: " << name;
  }
  ASSERT_OK(Reopen());
  EXPECT_EQ((std::vector<uint64_t>{a.number, c.number}), FileNumbers(1));
}

}  // namespace
}  // namespace shale
