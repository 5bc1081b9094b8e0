// CompactionJob end to end: real SST files written with TableBuilder, registered through
// VersionSet::LogAndApply, compacted, and the result applied and read back.
#include "db/compaction_job.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "db/compaction_picker.h"
#include "db/filename.h"
#include "db/table_cache.h"
#include "db/version_set.h"
#include "table/table_builder.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

struct Entry {
  std::string key;
  SequenceNumber seq;
  ValueType type;
  std::string value;
};

std::string Show(const Slice& ikey, const Slice& value) {
  ParsedInternalKey p;
  if (!ParseInternalKey(ikey, &p).ok()) return "<corrupt>";
  const char* t = p.type == kTypeValue      ? "P"
                  : p.type == kTypeDeletion ? "D"
                  : p.type == kTypeMerge    ? "M"
                                            : "S";
  return p.user_key.ToString() + "@" + std::to_string(p.sequence) + ":" + t +
         (value.empty() ? "" : "=" + value.ToString());
}

class CompactionJobTest : public ::testing::Test {
 protected:
  CompactionJobTest() : dir_("compaction_job_test"), icmp_(BytewiseComparator()) {
    options_.num_levels = 4;
    options_.compression = kNoCompression;
    options_.target_file_size_base = 1 << 20;
    options_.max_bytes_for_level_base = 1 << 30;
  }

  ~CompactionJobTest() override {
    MutexLock l(&mu_);
    vset_.reset();
  }

  int NumLevelFiles(int level) EXCLUDES(vset_->db_mutex()) {
    MutexLock l(vset_->db_mutex());
    return vset_->NumLevelFiles(level);
  }

  void Open() {
    table_cache_ = std::make_unique<TableCache>(dir_.path(), options_, &icmp_, -1);
    vset_ = std::make_unique<VersionSet>(dir_.path(), &options_, table_cache_.get(), &icmp_, &mu_);
    picker_ = std::make_unique<CompactionPicker>(options_, &icmp_);
    ASSERT_OK(options_.env->NewDirectory(dir_.path(), &db_dir_));
  }

  // Writes entries (any order) into a new SST and returns its metadata.
  FileMetaData WriteSst(std::vector<Entry> entries) {
    std::vector<std::pair<std::string, std::string>> kv;
    for (const Entry& e : entries) {
      std::string ikey;
      AppendInternalKey(&ikey, e.key, e.seq, e.type);
      kv.emplace_back(ikey, e.value);
    }
    std::sort(kv.begin(), kv.end(),
              [this](const auto& a, const auto& b) { return icmp_.Compare(a.first, b.first) < 0; });
    FileMetaData meta;
    meta.number = vset_->NewFileNumber();
    const std::string fname = TableFileName(dir_.path(), meta.number);
    std::unique_ptr<WritableFile> file;
    EXPECT_OK(options_.env->NewWritableFile(fname, &file, EnvOptions()));
    TableBuilderOptions tbo;
    tbo.icmp = &icmp_;
    tbo.compression = kNoCompression;
    tbo.file_name = fname;
    TableBuilder builder(tbo, file.get());
    for (const auto& [k, v] : kv) {
      builder.Add(k, v);
      const SequenceNumber seq = ExtractSequence(k);
      meta.smallest_seqno = std::min(meta.smallest_seqno, seq);
      meta.largest_seqno = std::max(meta.largest_seqno, seq);
    }
    EXPECT_OK(builder.Finish());
    EXPECT_OK(file->Close());
    meta.file_size = builder.FileSize();
    meta.num_entries = builder.NumEntries();
    meta.smallest.DecodeFrom(kv.front().first);
    meta.largest.DecodeFrom(kv.back().first);
    return meta;
  }

  void AddFile(int level, const std::vector<Entry>& entries) {
    VersionEdit edit;
    edit.AddFile(level, WriteSst(entries));
    MutexLock l(vset_->db_mutex());
    ASSERT_OK(vset_->LogAndApply(&edit));
  }

  // Every entry of the level's files, in file order, as "key@seq:T=value".
  std::vector<std::string> Contents(int level) {
    std::vector<std::string> r;
    MutexLock l(vset_->db_mutex());
    for (const FileMetaPtr& f : vset_->current()->files(level)) {
      std::unique_ptr<InternalIterator> it(table_cache_->NewIterator(ReadOptions(), *f));
      for (it->SeekToFirst(); it->Valid(); it->Next()) r.push_back(Show(it->key(), it->value()));
      EXPECT_OK(it->status());
    }
    return r;
  }

  std::unique_ptr<Compaction> ManualCompaction(int input_level, int output_level) {
    MutexLock l(vset_->db_mutex());
    InternalKey storage;
    InternalKey* end = &storage;
    bool conflict = false;
    std::unique_ptr<Compaction> c = picker_->CompactRange(
        vset_->current(), input_level, output_level, nullptr, nullptr, &end, &conflict);
    EXPECT_FALSE(conflict);
    return c;
  }

  // Runs the job and applies its edit; returns Run()'s status.
  Status RunJob(Compaction* c, std::vector<SequenceNumber> snapshots,
                CompactionJobStats* stats = nullptr) {
    CompactionJob job(
        options_, dir_.path(), c, table_cache_.get(), &icmp_, std::move(snapshots),
        [this] { return vset_->NewFileNumber(); }, [this](uint64_t n) { registered_.insert(n); },
        db_dir_.get());
    Status s = job.Run();
    if (stats != nullptr) *stats = job.stats();
    if (!s.ok()) return s;
    EXPECT_EQ(job.outputs().size(), job.stats().num_output_files);
    for (const FileMetaData& f : job.outputs()) EXPECT_EQ(registered_.count(f.number), 1u);
    VersionEdit edit;
    job.AddToEdit(&edit);
    MutexLock l(vset_->db_mutex());
    s = vset_->LogAndApply(&edit);
    picker_->ReleaseCompaction(c);
    return s;
  }

  // The SST files in the directory.
  std::set<uint64_t> SstFiles() {
    std::vector<std::string> names;
    EXPECT_OK(options_.env->GetChildren(dir_.path(), &names));
    std::set<uint64_t> r;
    for (const std::string& n : names) {
      uint64_t number;
      FileType type;
      if (ParseFileName(n, &number, &type) && type == kTableFile) r.insert(number);
    }
    return r;
  }

  // Checks that the level's files are sorted, do not overlap, and never share a user key.
  void CheckLevelShape(int level) {
    MutexLock l(vset_->db_mutex());
    const auto& files = vset_->current()->files(level);
    for (size_t i = 1; i < files.size(); i++) {
      EXPECT_LT(files[i - 1]->largest.user_key().compare(files[i]->smallest.user_key()), 0)
          << "files " << files[i - 1]->number << " and " << files[i]->number;
    }
  }

  TempDirectory dir_;
  InternalKeyComparator icmp_;
  Options options_;
  Mutex mu_;
  std::unique_ptr<TableCache> table_cache_;
  std::unique_ptr<VersionSet> vset_;
  std::unique_ptr<CompactionPicker> picker_;
  std::unique_ptr<Directory> db_dir_;
  std::set<uint64_t> registered_;
};

TEST_F(CompactionJobTest, Level0AndLevel1IntoLevel1) {
  Open();
  AddFile(1, {{"a", 1, kTypeValue, "a1"},
              {"b", 2, kTypeValue, "b2"},
              {"c", 3, kTypeValue, "c3"},
              {"d", 4, kTypeValue, "d4"}});
  AddFile(0, {{"a", 10, kTypeValue, "a10"}, {"c", 11, kTypeDeletion, ""}});
  AddFile(
      0,
      {{"b", 12, kTypeValue, "b12"}, {"c", 13, kTypeValue, "c13"}, {"e", 14, kTypeDeletion, ""}});
  const std::set<uint64_t> inputs = SstFiles();
  std::unique_ptr<Compaction> c = ManualCompaction(0, 1);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->num_input_files(), 3u);
  EXPECT_TRUE(c->bottommost_level());
  CompactionJobStats stats;
  ASSERT_OK(RunJob(c.get(), {}, &stats));
  c.reset();

  EXPECT_EQ(Contents(1),
            (std::vector<std::string>{"a@10:P=a10", "b@12:P=b12", "c@13:P=c13", "d@4:P=d4"}));
  EXPECT_EQ(NumLevelFiles(0), 0);
  EXPECT_EQ(stats.num_input_files, 3u);
  EXPECT_EQ(stats.num_input_files_at_output_level, 1u);
  EXPECT_EQ(stats.iter.num_input_records, 9u);
  EXPECT_EQ(stats.iter.num_output_records, 4u);
  EXPECT_EQ(stats.iter.num_record_drop_hidden, 4u);    // a@1 b@2 c@11 c@3
  EXPECT_EQ(stats.iter.num_record_drop_obsolete, 1u);  // e@14, nothing below
  EXPECT_EQ(stats.num_output_files, 1u);
  EXPECT_GT(stats.total_output_bytes, 0u);
  {
    MutexLock l(vset_->db_mutex());
    const FileMetaData& out = *vset_->current()->files(1)[0];
    EXPECT_EQ(out.smallest_seqno, 4u);
    EXPECT_EQ(out.largest_seqno, 13u);
    EXPECT_EQ(out.num_entries, 4u);
    EXPECT_EQ(out.smallest.user_key().ToString(), "a");
    EXPECT_EQ(out.largest.user_key().ToString(), "d");
  }
  // The inputs are out of the Version (deleting their files is the DB's job).
  std::set<uint64_t> live;
  vset_->AddLiveFiles(&live);
  for (uint64_t n : inputs) EXPECT_EQ(live.count(n), 0u);
}

TEST_F(CompactionJobTest, SnapshotVisibleVersionsSurvive) {
  Open();
  AddFile(1, {{"a", 3, kTypeValue, "3"}, {"a", 4, kTypeValue, "4"}, {"b", 2, kTypeValue, "2"}});
  AddFile(0, {{"a", 10, kTypeValue, "10"},
              {"a", 12, kTypeValue, "12"},
              {"a", 20, kTypeValue, "20"},
              {"b", 16, kTypeDeletion, ""},
              {"b", 14, kTypeValue, "14"}});
  std::unique_ptr<Compaction> c = ManualCompaction(0, 1);
  ASSERT_NE(c, nullptr);
  ASSERT_OK(RunJob(c.get(), {15, 5}));
  // Stripes (..5], (5, 15], (15, max]: the newest entry of each.
  EXPECT_EQ(Contents(1), (std::vector<std::string>{"a@20:P=20", "a@12:P=12", "a@4:P=4", "b@16:D",
                                                   "b@14:P=14", "b@2:P=2"}));
}

TEST_F(CompactionJobTest, OutputsSplitAtTargetSizeNeverInsideAUserKey) {
  options_.target_file_size_base = 16 * 1024;
  Open();
  Random rnd(301);
  std::vector<Entry> entries;
  std::vector<SequenceNumber> snapshots;
  SequenceNumber seq = 1;
  char key[16];
  for (int i = 0; i < 2000; i++) {
    snprintf(key, sizeof(key), "k%05d", i);
    if (i == 700) {
      // One user key with 300 versions, each kept by a snapshot: ~30 KiB, over the target.
      for (int v = 0; v < 300; v++) {
        snapshots.push_back(seq);
        entries.push_back({key, seq++, kTypeValue, RandomString(&rnd, 100)});
      }
      continue;
    }
    entries.push_back({key, seq++, kTypeValue, RandomString(&rnd, 100)});
  }
  AddFile(0, std::vector<Entry>(entries.begin(), entries.begin() + 1200));
  AddFile(0, std::vector<Entry>(entries.begin() + 1200, entries.end()));
  const std::vector<std::string> before = Contents(0);
  std::unique_ptr<Compaction> c = ManualCompaction(0, 1);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->max_output_file_size(), 16u * 1024);
  CompactionJobStats stats;
  ASSERT_OK(RunJob(c.get(), snapshots, &stats));
  c.reset();

  EXPECT_GE(stats.num_output_files, 10u);
  CheckLevelShape(1);
  std::vector<std::string> after = Contents(1);
  std::vector<std::string> expected = before;
  std::sort(expected.begin(), expected.end());
  std::sort(after.begin(), after.end());
  EXPECT_EQ(after, expected);
  MutexLock l(vset_->db_mutex());
  int big_key_files = 0;
  for (const FileMetaPtr& f : vset_->current()->files(1)) {
    const bool has_big = f->smallest.user_key().compare("k00700") <= 0 &&
                         f->largest.user_key().compare("k00700") >= 0;
    if (has_big) {
      big_key_files++;
      EXPECT_GT(f->file_size, 30000u);
    } else {
      EXPECT_LT(f->file_size, 16u * 1024 + 8 * 1024) << f->number;
    }
  }
  EXPECT_EQ(big_key_files, 1);
}

TEST_F(CompactionJobTest, OutputsCutAtGrandparentOverlap) {
  options_.max_compaction_bytes = 1;  // cut as soon as an output spans a grandparent
  Open();
  for (int g = 0; g < 5; g++) {
    const std::string k(1, static_cast<char>('b' + 2 * g));  // b d f h j
    AddFile(2, {{k, 1, kTypeValue, "g"}});
  }
  std::vector<Entry> entries;
  for (char ch = 'a'; ch <= 'k'; ch++) entries.push_back({std::string(1, ch), 10, kTypeValue, "v"});
  AddFile(0, entries);
  std::unique_ptr<Compaction> c = ManualCompaction(0, 1);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->grandparents().size(), 5u);
  CompactionJobStats stats;
  ASSERT_OK(RunJob(c.get(), {}, &stats));
  c.reset();
  // A new output whenever a key passes a grandparent file it did not start at.
  EXPECT_GE(stats.num_output_files, 4u);
  CheckLevelShape(1);
  EXPECT_EQ(Contents(1).size(), 11u);
}

// Builds the same inputs in a fresh directory and compacts them with max_subcompactions.
class SubcompactionTest : public ::testing::Test {};

class SubcompactionRunner : public CompactionJobTest {
 public:
  void TestBody() override {}
  std::vector<std::string> Run(uint32_t max_subcompactions, uint64_t seed,
                               CompactionJobStats* stats);
};

std::vector<std::string> SubcompactionRunner::Run(uint32_t max_subcompactions, uint64_t seed,
                                                  CompactionJobStats* stats) {
  options_.max_subcompactions = max_subcompactions;
  options_.target_file_size_base = 8 * 1024;
  Open();
  Random rnd(static_cast<uint32_t>(seed));
  SequenceNumber seq = 1;
  char key[16];
  // L1: 6 files over disjoint ranges; L0: 4 files over random keys of the whole range.
  for (int f = 0; f < 6; f++) {
    std::vector<Entry> entries;
    for (int i = 0; i < 200; i++) {
      snprintf(key, sizeof(key), "k%05d", f * 1000 + i * 5);
      entries.push_back({key, seq++, kTypeValue, RandomString(&rnd, 50)});
    }
    AddFile(1, entries);
  }
  for (int f = 0; f < 4; f++) {
    std::map<std::string, Entry> entries;
    for (int i = 0; i < 300; i++) {
      snprintf(key, sizeof(key), "k%05d", static_cast<int>(rnd.Uniform(6000)));
      const ValueType type = rnd.OneIn(5) ? kTypeDeletion : kTypeValue;
      entries[key] = {key, seq++, type, type == kTypeValue ? RandomString(&rnd, 50) : ""};
    }
    std::vector<Entry> v;
    for (auto& [k, e] : entries) v.push_back(e);
    AddFile(0, v);
  }
  std::unique_ptr<Compaction> c = ManualCompaction(0, 1);
  EXPECT_NE(c, nullptr);
  if (c == nullptr) return {};
  EXPECT_OK(RunJob(c.get(), {seq / 2}, stats));
  c.reset();
  CheckLevelShape(1);
  return Contents(1);
}

TEST_F(SubcompactionTest, SameContentsAsOneJob) {
  const uint64_t seed = TestSeed();
  CompactionJobStats one, four;
  const std::vector<std::string> a = SubcompactionRunner().Run(1, seed, &one);
  const std::vector<std::string> b = SubcompactionRunner().Run(4, seed, &four);
  EXPECT_EQ(one.num_subcompactions, 1u);
  EXPECT_EQ(four.num_subcompactions, 4u);
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_EQ(one.iter.num_input_records, four.iter.num_input_records);
  EXPECT_EQ(one.iter.num_output_records, four.iter.num_output_records);
  EXPECT_EQ(one.iter.num_record_drop_hidden, four.iter.num_record_drop_hidden);
  EXPECT_EQ(one.iter.num_output_records, a.size());
}

TEST_F(CompactionJobTest, FailedJobDeletesItsOutputs) {
  options_.target_file_size_base = 4 * 1024;
  Open();
  Random rnd(7);
  std::vector<Entry> first, second;
  char key[16];
  for (int i = 0; i < 400; i++) {
    snprintf(key, sizeof(key), "k%05d", i);
    first.push_back({key, static_cast<SequenceNumber>(i + 1), kTypeValue, RandomString(&rnd, 100)});
    second.push_back(
        {key, static_cast<SequenceNumber>(i + 1000), kTypeValue, RandomString(&rnd, 100)});
  }
  AddFile(1, first);
  AddFile(0, second);
  const std::set<uint64_t> before = SstFiles();
  // Damage a data block near the end of the L1 file: the job fails after writing some
  // outputs.
  uint64_t l1_number;
  {
    MutexLock l(vset_->db_mutex());
    l1_number = vset_->current()->files(1)[0]->number;
  }
  table_cache_->Evict(l1_number);
  ASSERT_OK(CorruptFile(TableFileName(dir_.path(), l1_number), 30000, 4));
  std::unique_ptr<Compaction> c = ManualCompaction(0, 1);
  ASSERT_NE(c, nullptr);
  CompactionJobStats stats;
  const Status s = RunJob(c.get(), {}, &stats);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_FALSE(registered_.empty());  // it did write outputs
  EXPECT_EQ(SstFiles(), before);      // and removed them
  EXPECT_EQ(NumLevelFiles(0), 1);
}

TEST_F(CompactionJobTest, ShutdownStopsTheJob) {
  Open();
  AddFile(0, {{"a", 2, kTypeValue, "x"}});
  AddFile(1, {{"a", 1, kTypeValue, "y"}});
  std::unique_ptr<Compaction> c = ManualCompaction(0, 1);
  ASSERT_NE(c, nullptr);
  std::atomic<bool> shutting_down{true};
  CompactionJob job(
      options_, dir_.path(), c.get(), table_cache_.get(), &icmp_, {},
      [this] { return vset_->NewFileNumber(); }, [](uint64_t) {}, db_dir_.get());
  job.SetShuttingDown(&shutting_down);
  EXPECT_TRUE(job.Run().IsShutdownInProgress());
  EXPECT_TRUE(job.outputs().empty());
}

}  // namespace
}  // namespace shale
