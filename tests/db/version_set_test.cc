// VersionSet, Version, the level iterator and the TableCache, over real SST files in a
// temporary directory.
#include "db/version_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include "db/filename.h"
#include "db/level_iterator.h"
#include "db/log_writer.h"
#include "db/table_cache.h"
#include "table/table_builder.h"
#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

struct Entry {
  std::string key;
  SequenceNumber seq;
  ValueType type;
  std::string value;
};

class ReverseComparatorNamed : public Comparator {
 public:
  int Compare(const Slice& a, const Slice& b) const override { return b.compare(a); }
  const char* Name() const override { return "test.Reverse"; }
  void FindShortestSeparator(std::string*, const Slice&) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

class VersionSetTest : public ::testing::Test {
 protected:
  VersionSetTest()
      : fault_env_(Env::Default()),
        dir_("version_set_test"),
        dbname_(dir_.path()),
        icmp_(BytewiseComparator()) {
    options_.env = &fault_env_;
    options_.num_levels = 4;
    OpenVersionSet();
  }

  ~VersionSetTest() override {
    vset_.reset();
    table_cache_.reset();
  }

  void OpenVersionSet(int max_open_files = -1) {
    vset_.reset();
    table_cache_ = std::make_unique<TableCache>(dbname_, options_, &icmp_, max_open_files);
    vset_ = std::make_unique<VersionSet>(dbname_, &options_, table_cache_.get(), &icmp_);
  }

  // What DB::Open writes for a new DB: MANIFEST-000001 and CURRENT.
  void NewDB(const char* comparator_name = nullptr) {
    VersionEdit edit;
    edit.SetComparatorName(comparator_name ? comparator_name : BytewiseComparator()->Name());
    edit.SetLogNumber(0);
    edit.SetNextFile(2);
    edit.SetLastSequence(0);
    std::unique_ptr<WritableFile> file;
    ASSERT_OK(fault_env_.NewWritableFile(DescriptorFileName(dbname_, 1), &file, EnvOptions()));
    log::Writer writer(std::move(file), 1);
    std::string record;
    edit.EncodeTo(&record);
    ASSERT_OK(writer.AddRecord(record));
    ASSERT_OK(writer.Sync(false));
    ASSERT_OK(writer.Close());
    ASSERT_OK(SetCurrentFile(&fault_env_, dbname_, 1, nullptr));
  }

  Status Reopen(int max_open_files = -1) {
    OpenVersionSet(max_open_files);
    return vset_->Recover();
  }

  // Writes an SST file holding entries (sorted here) and returns its metadata.
  FileMetaData BuildFile(uint64_t number, std::vector<Entry> entries) {
    std::sort(entries.begin(), entries.end(), [this](const Entry& a, const Entry& b) {
      return icmp_.Compare(InternalKey(a.key, a.seq, a.type).Encode(),
                           InternalKey(b.key, b.seq, b.type).Encode()) < 0;
    });
    FileMetaData meta;
    meta.number = number;
    const std::string fname = TableFileName(dbname_, number);
    std::unique_ptr<WritableFile> file;
    EXPECT_OK(Env::Default()->NewWritableFile(fname, &file, EnvOptions()));
    TableBuilderOptions tbo;
    tbo.icmp = &icmp_;
    tbo.file_name = fname;
    TableBuilder builder(tbo, file.get());
    for (const Entry& e : entries) {
      InternalKey ikey(e.key, e.seq, e.type);
      if (!meta.smallest.Valid()) meta.smallest = ikey;
      meta.largest = ikey;
      meta.smallest_seqno = std::min(meta.smallest_seqno, e.seq);
      meta.largest_seqno = std::max(meta.largest_seqno, e.seq);
      builder.Add(ikey.Encode(), e.value);
    }
    EXPECT_OK(builder.Finish());
    EXPECT_OK(file->Sync());
    EXPECT_OK(file->Close());
    meta.file_size = builder.FileSize();
    meta.num_entries = builder.NumEntries();
    return meta;
  }

  // A file of Puts key -> "v<seq>@<key>" for every key in [from, to) with step.
  FileMetaData BuildRange(uint64_t number, int from, int to, int step, SequenceNumber seq) {
    std::vector<Entry> entries;
    for (int i = from; i < to; i += step) {
      const std::string key = Key(i);
      entries.push_back({key, seq, kTypeValue,
                         std::string("v").append(std::to_string(seq)).append("@").append(key)});
    }
    return BuildFile(number, entries);
  }

  static std::string Key(int i) {
    char buf[16];
    snprintf(buf, sizeof(buf), "k%05d", i);
    return buf;
  }

  Status Apply(VersionEdit* edit) {
    MutexLock l(&mu_);
    return vset_->LogAndApply(edit, &mu_);
  }

  Version* Current() {
    MutexLock l(&mu_);
    Version* v = vset_->current();
    v->Ref();
    return v;
  }

  // The lookup result: the value, "DELETED", "MERGE", "ABSENT" or "ERROR: ...".
  std::string Get(const std::string& key, SequenceNumber snapshot = kMaxSequenceNumber,
                  ReadCallback* callback = nullptr, SequenceNumber* found_seq = nullptr) {
    Version* v = Current();
    LookupKey lkey(key, snapshot);
    std::string value;
    Status s;
    SequenceNumber seq = 0;
    const bool found = v->Get(ReadOptions(), lkey, &value, &s, &seq, callback);
    v->Unref();
    if (found_seq != nullptr) *found_seq = seq;
    if (!found) return "ABSENT";
    if (s.ok()) return value;
    if (s.IsNotFound()) return "DELETED";
    if (s.IsNotSupported()) return "MERGE";
    return "ERROR: " + s.ToString();
  }

  std::vector<uint64_t> FileNumbers(int level) {
    Version* v = Current();
    std::vector<uint64_t> numbers;
    for (const auto& f : v->files(level)) numbers.push_back(f->number);
    v->Unref();
    return numbers;
  }

  FaultInjectionTestEnv fault_env_;
  TempDirectory dir_;
  const std::string dbname_;
  InternalKeyComparator icmp_;
  Options options_;
  Mutex mu_;
  std::unique_ptr<TableCache> table_cache_;
  std::unique_ptr<VersionSet> vset_;
};

TEST_F(VersionSetTest, MissingCurrentIsNotFoundNamingIt) {
  Status s = vset_->Recover();
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("CURRENT")) << s.ToString();
}

TEST_F(VersionSetTest, RecoverNewDB) {
  NewDB();
  ASSERT_OK(vset_->Recover());
  EXPECT_EQ(0u, vset_->LogNumber());
  EXPECT_EQ(0u, vset_->LastSequence());
  EXPECT_EQ(1u, vset_->ManifestFileNumber());
  EXPECT_EQ(2u, vset_->NewFileNumber());
  EXPECT_EQ(3u, vset_->NewFileNumber());
  for (int level = 0; level < 4; level++) EXPECT_EQ(0, vset_->NumLevelFiles(level));
}

TEST_F(VersionSetTest, LogAndApplyRecoverRoundTrip) {
  NewDB();
  ASSERT_OK(vset_->Recover());
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
  EXPECT_EQ(7u, vset_->LogNumber());
  const uint64_t next_before = vset_->PeekNextFileNumber();

  ASSERT_OK(Reopen());
  EXPECT_EQ(manifest, vset_->ManifestFileNumber());
  EXPECT_EQ(7u, vset_->LogNumber());
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
  ASSERT_OK(vset_->VerifyFilesExist(/*open_tables=*/true));
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
  ASSERT_OK(vset_->Recover());
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

TEST_F(VersionSetTest, GetAcrossLevels) {
  NewDB();
  ASSERT_OK(vset_->Recover());
  // L1: two files with old values. L0: two newer overlapping files.
  FileMetaData l1a = BuildRange(vset_->NewFileNumber(), 0, 50, 1, 5);
  FileMetaData l1b = BuildRange(vset_->NewFileNumber(), 60, 100, 2, 6);
  FileMetaData l0old = BuildFile(vset_->NewFileNumber(), {{Key(10), 20, kTypeValue, "l0old10"},
                                                          {Key(11), 21, kTypeDeletion, ""},
                                                          {Key(12), 22, kTypeMerge, "operand"},
                                                          {Key(70), 23, kTypeValue, "l0old70"}});
  FileMetaData l0new = BuildFile(vset_->NewFileNumber(), {{Key(10), 30, kTypeValue, "l0new10"},
                                                          {Key(10), 31, kTypeSingleDeletion, ""},
                                                          {Key(40), 32, kTypeValue, "l0new40"},
                                                          {Key(61), 33, kTypeValue, "l0new61"}});
  VersionEdit edit;
  edit.AddFile(1, l1b);
  edit.AddFile(1, l1a);
  edit.AddFile(0, l0old);
  edit.AddFile(0, l0new);
  ASSERT_OK(Apply(&edit));
  // L0 is ordered newest first whatever the order of AddFile.
  EXPECT_EQ((std::vector<uint64_t>{l0new.number, l0old.number}), FileNumbers(0));
  EXPECT_EQ((std::vector<uint64_t>{l1a.number, l1b.number}), FileNumbers(1));

  SequenceNumber seq;
  EXPECT_EQ("DELETED", Get(Key(10), kMaxSequenceNumber, nullptr, &seq));
  EXPECT_EQ(31u, seq);
  EXPECT_EQ("l0new10", Get(Key(10), 30));
  EXPECT_EQ("l0old10", Get(Key(10), 29));
  EXPECT_EQ("l0old10", Get(Key(10), 20, nullptr, &seq));
  EXPECT_EQ(20u, seq);
  EXPECT_EQ("v5@" + Key(10), Get(Key(10), 19));
  EXPECT_EQ("ABSENT", Get(Key(10), 4));
  EXPECT_EQ("DELETED", Get(Key(11)));
  EXPECT_EQ("v5@" + Key(11), Get(Key(11), 20));
  EXPECT_EQ("MERGE", Get(Key(12)));
  EXPECT_EQ("l0new40", Get(Key(40)));
  EXPECT_EQ("v5@" + Key(41), Get(Key(41)));
  EXPECT_EQ("ABSENT", Get(Key(55)));      // between the L1 files
  EXPECT_EQ("ABSENT", Get(Key(61), 32));  // odd keys are not in l1b
  EXPECT_EQ("l0new61", Get(Key(61)));
  EXPECT_EQ("l0old70", Get(Key(70)));
  EXPECT_EQ("v6@" + Key(70), Get(Key(70), 22));
  EXPECT_EQ("v6@" + Key(98), Get(Key(98)));
  EXPECT_EQ("ABSENT", Get(Key(100)));
  EXPECT_EQ("ABSENT", Get("a"));
  EXPECT_EQ("ABSENT", Get("z"));

  // A callback hiding sequences 30..33 (say, uncommitted) exposes the older versions.
  struct Hide30s : public ReadCallback {
    bool IsVisible(SequenceNumber s) override { return s < 30 || s > 33; }
  } hide;
  EXPECT_EQ("l0old10", Get(Key(10), kMaxSequenceNumber, &hide));
  EXPECT_EQ("v5@" + Key(40), Get(Key(40), kMaxSequenceNumber, &hide));
  EXPECT_EQ("ABSENT", Get(Key(61), kMaxSequenceNumber, &hide));
}

TEST_F(VersionSetTest, GetReportsUnreadableFile) {
  NewDB();
  ASSERT_OK(vset_->Recover());
  FileMetaData f = BuildRange(vset_->NewFileNumber(), 0, 10, 1, 5);
  VersionEdit edit;
  edit.AddFile(1, f);
  ASSERT_OK(Apply(&edit));
  ASSERT_OK(Env::Default()->DeleteFile(TableFileName(dbname_, f.number)));
  const std::string r = Get(Key(3));
  EXPECT_EQ(0u, r.find("ERROR")) << r;
  EXPECT_EQ("ABSENT", Get(Key(30)));  // no file covers it: nothing is opened
}

// Scans an iterator both ways and checks every seek against the sorted list of keys.
void CheckIterator(InternalIterator* iter, const std::vector<std::string>& keys,
                   const InternalKeyComparator& icmp, const std::vector<std::string>& probes) {
  std::vector<std::string> forward;
  for (iter->SeekToFirst(); iter->Valid(); iter->Next()) forward.push_back(iter->key().ToString());
  ASSERT_OK(iter->status());
  EXPECT_EQ(keys, forward);
  std::vector<std::string> backward;
  for (iter->SeekToLast(); iter->Valid(); iter->Prev()) backward.push_back(iter->key().ToString());
  ASSERT_OK(iter->status());
  std::reverse(backward.begin(), backward.end());
  EXPECT_EQ(keys, backward);

  auto lower = [&](const std::string& t) {
    return std::lower_bound(
        keys.begin(), keys.end(), t,
        [&](const std::string& a, const std::string& b) { return icmp.Compare(a, b) < 0; });
  };
  for (const std::string& t : probes) {
    auto it = lower(t);
    iter->Seek(t);
    if (it == keys.end()) {
      EXPECT_FALSE(iter->Valid());
    } else {
      ASSERT_TRUE(iter->Valid());
      EXPECT_EQ(*it, iter->key().ToString());
      // Direction changes after a seek.
      iter->Prev();
      if (it == keys.begin()) {
        EXPECT_FALSE(iter->Valid());
      } else {
        ASSERT_TRUE(iter->Valid());
        EXPECT_EQ(*(it - 1), iter->key().ToString());
      }
    }
    // Last key <= t.
    auto up = std::upper_bound(
        keys.begin(), keys.end(), t,
        [&](const std::string& a, const std::string& b) { return icmp.Compare(a, b) < 0; });
    iter->SeekForPrev(t);
    if (up == keys.begin()) {
      EXPECT_FALSE(iter->Valid());
    } else {
      ASSERT_TRUE(iter->Valid());
      EXPECT_EQ(*(up - 1), iter->key().ToString());
      iter->Next();
      if (up == keys.end()) {
        EXPECT_FALSE(iter->Valid());
      } else {
        ASSERT_TRUE(iter->Valid());
        EXPECT_EQ(*up, iter->key().ToString());
      }
    }
  }
}

TEST_F(VersionSetTest, LevelIterator) {
  NewDB();
  ASSERT_OK(vset_->Recover());
  std::vector<FileMetaData> files = {
      BuildRange(vset_->NewFileNumber(), 0, 20, 2, 5),
      BuildFile(vset_->NewFileNumber(), {{Key(30), 9, kTypeValue, "a"},
                                         {Key(30), 7, kTypeDeletion, ""},
                                         {Key(35), 8, kTypeValue, "b"}}),
      BuildRange(vset_->NewFileNumber(), 41, 60, 3, 6),
      BuildRange(vset_->NewFileNumber(), 100, 102, 1, 7),
  };
  VersionEdit edit;
  std::vector<std::string> keys;
  for (const FileMetaData& f : files) edit.AddFile(2, f);
  ASSERT_OK(Apply(&edit));
  for (const FileMetaData& f : files) {
    std::unique_ptr<InternalIterator> it(table_cache_->NewIterator(ReadOptions(), f));
    for (it->SeekToFirst(); it->Valid(); it->Next()) keys.push_back(it->key().ToString());
    ASSERT_OK(it->status());
  }
  ASSERT_EQ(10u + 3 + 7 + 2, keys.size());

  std::vector<std::string> probes = {InternalKey("a", 1, kTypeValue).Encode().ToString(),
                                     InternalKey("z", 1, kTypeValue).Encode().ToString()};
  for (int i = -1; i < 105; i++) {
    for (SequenceNumber seq : {SequenceNumber{0}, SequenceNumber{8}, kMaxSequenceNumber}) {
      probes.push_back(InternalKey(Key(i), seq, kValueTypeForSeek).Encode().ToString());
    }
  }
  Version* v = Current();
  {
    std::unique_ptr<InternalIterator> iter(
        NewLevelIterator(table_cache_.get(), ReadOptions(), &icmp_, &v->files(2)));
    CheckIterator(iter.get(), keys, icmp_, probes);
  }
  // The same through AddIterators, which keeps the Version alive by itself.
  std::vector<InternalIterator*> iters;
  v->AddIterators(ReadOptions(), &iters);
  v->Unref();
  ASSERT_EQ(1u, iters.size());
  {
    VersionEdit drop;
    for (const FileMetaData& f : files) drop.DeleteFile(2, f.number);
    ASSERT_OK(Apply(&drop));
  }
  std::set<uint64_t> live;
  vset_->AddLiveFiles(&live);
  EXPECT_EQ(files.size(), live.size());  // still pinned by the iterator's Version
  CheckIterator(iters[0], keys, icmp_, probes);
  delete iters[0];
  live.clear();
  vset_->AddLiveFiles(&live);
  EXPECT_TRUE(live.empty());

  // Empty level list.
  std::vector<FileMetaPtr> none;
  std::unique_ptr<InternalIterator> empty(
      NewLevelIterator(table_cache_.get(), ReadOptions(), &icmp_, &none));
  CheckIterator(empty.get(), {}, icmp_, probes);
}

TEST_F(VersionSetTest, LevelIteratorStopsAtUnreadableFile) {
  NewDB();
  ASSERT_OK(vset_->Recover());
  FileMetaData a = BuildRange(vset_->NewFileNumber(), 0, 10, 1, 5);
  FileMetaData b = BuildRange(vset_->NewFileNumber(), 10, 20, 1, 5);
  FileMetaData c = BuildRange(vset_->NewFileNumber(), 20, 30, 1, 5);
  VersionEdit edit;
  edit.AddFile(1, a);
  edit.AddFile(1, b);
  edit.AddFile(1, c);
  ASSERT_OK(Apply(&edit));
  ASSERT_OK(CorruptFile(TableFileName(dbname_, b.number), -10, 4));  // breaks the footer
  Version* v = Current();
  std::unique_ptr<InternalIterator> iter(
      NewLevelIterator(table_cache_.get(), ReadOptions(), &icmp_, &v->files(1)));
  int n = 0;
  for (iter->SeekToFirst(); iter->Valid(); iter->Next()) n++;
  EXPECT_EQ(10, n);  // a's entries, then the error; c is not reached silently
  EXPECT_TRUE(iter->status().IsCorruption()) << iter->status().ToString();
  iter->SeekToLast();
  n = 0;
  for (; iter->Valid(); iter->Prev()) n++;
  EXPECT_EQ(10, n);
  EXPECT_FALSE(iter->status().ok());
  // Seeking into a healthy file works again.
  iter->Seek(InternalKey(Key(25), kMaxSequenceNumber, kValueTypeForSeek).Encode());
  ASSERT_TRUE(iter->Valid());
  EXPECT_OK(iter->status());
  EXPECT_EQ(Key(25), ExtractUserKey(iter->key()).ToString());
  iter.reset();
  v->Unref();
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
  ASSERT_OK(vset_->Recover());
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
  Status s = vset_->Recover();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("test.Reverse")) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find(BytewiseComparator()->Name())) << s.ToString();
}

TEST_F(VersionSetTest, FewerLevelsThanTheManifest) {
  NewDB();
  ASSERT_OK(vset_->Recover());
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
  ASSERT_OK(vset_->Recover());
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
  ASSERT_OK(vset_->Recover());
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
  ASSERT_OK(vset_->Recover());
  FileMetaData a = BuildRange(vset_->NewFileNumber(), 0, 10, 1, 5);
  FileMetaData b = BuildRange(vset_->NewFileNumber(), 20, 30, 1, 6);
  VersionEdit edit;
  edit.AddFile(0, a);
  edit.AddFile(3, b);
  ASSERT_OK(Apply(&edit));
  ASSERT_OK(vset_->VerifyFilesExist(true));

  ASSERT_OK(TruncateFileTo(TableFileName(dbname_, a.number), a.file_size - 1));
  ASSERT_OK(Reopen());
  Status s = vset_->VerifyFilesExist();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find(TableFileName(dbname_, a.number)));

  ASSERT_OK(Env::Default()->DeleteFile(TableFileName(dbname_, a.number)));
  s = vset_->VerifyFilesExist();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find(TableFileName(dbname_, a.number)));
}

TEST_F(VersionSetTest, ConcurrentLogAndApply) {
  NewDB();
  ASSERT_OK(vset_->Recover());
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
  ASSERT_OK(vset_->Recover());
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

TEST_F(VersionSetTest, TableCacheEvictsButKeepsReadersInUse) {
  NewDB();
  ASSERT_OK(Reopen(/*max_open_files=*/2));
  std::vector<FileMetaData> files;
  for (int i = 0; i < 4; i++) {
    files.push_back(BuildRange(vset_->NewFileNumber(), i * 10, i * 10 + 10, 1, 5));
  }
  std::vector<std::unique_ptr<InternalIterator>> iters;
  for (const FileMetaData& f : files) {
    iters.emplace_back(table_cache_->NewIterator(ReadOptions(), f));
    EXPECT_LE(table_cache_->TEST_NumCached(), 2u);
  }
  EXPECT_EQ(2u, table_cache_->TEST_NumCached());
  // Every iterator still reads its (possibly evicted) reader.
  for (size_t i = 0; i < iters.size(); i++) {
    iters[i]->SeekToFirst();
    ASSERT_TRUE(iters[i]->Valid());
    EXPECT_EQ(Key(static_cast<int>(i) * 10), ExtractUserKey(iters[i]->key()).ToString());
  }
  table_cache_->Evict(files[3].number);
  table_cache_->Evict(files[3].number);  // twice is harmless
  EXPECT_EQ(1u, table_cache_->TEST_NumCached());
  iters[3]->Next();
  ASSERT_TRUE(iters[3]->Valid());
  iters.clear();

  // A failed open is not cached: once the file is back, it opens.
  const std::string fname = TableFileName(dbname_, files[0].number);
  ASSERT_OK(Env::Default()->RenameFile(fname, fname + ".away"));
  table_cache_->Evict(files[0].number);
  std::unique_ptr<InternalIterator> bad(table_cache_->NewIterator(ReadOptions(), files[0]));
  EXPECT_FALSE(bad->Valid());
  EXPECT_FALSE(bad->status().ok());
  ASSERT_OK(Env::Default()->RenameFile(fname + ".away", fname));
  std::shared_ptr<TableReader> reader;
  EXPECT_OK(table_cache_->FindTable(files[0], &reader));
}

}  // namespace
}  // namespace shale
