// VersionSetTest: the fixture of the VersionSet suites (version_set_test.cc for the MANIFEST,
// recovery and LogAndApply; version_read_test.cc for lookups, level iterators and the
// TableCache). Each test gets a VersionSet over a fresh temporary directory, with
// options_.env the fault-injecting env (over the real file system) so MANIFEST writes can
// be made to fail, and real SST files built by BuildFile/BuildRange.
//
// Thread safety: the helpers run on the test's thread; Apply and Current take mu_, the
// mutex the VersionSet requires.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "db/filename.h"
#include "db/log_writer.h"
#include "db/table_cache.h"
#include "db/version_set.h"
#include "table/table_builder.h"
#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/test_util.h"

namespace shale {

// One entry of an SST file BuildFile writes.
struct SstEntry {
  std::string key;
  SequenceNumber seq;
  ValueType type;
  std::string value;
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
    vset_ = std::make_unique<VersionSet>(dbname_, &options_, table_cache_.get(), &icmp_, &mu_);
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
    return Recover();
  }

  // The VersionSet's calls that need the DB mutex, each holding it.
  Status Recover() EXCLUDES(vset_->db_mutex()) {
    MutexLock l(vset_->db_mutex());
    return vset_->Recover();
  }
  Status VerifyFilesExist(bool open_tables = false) EXCLUDES(vset_->db_mutex()) {
    MutexLock l(vset_->db_mutex());
    return vset_->VerifyFilesExist(open_tables);
  }
  uint64_t LogNumber() EXCLUDES(vset_->db_mutex()) {
    MutexLock l(vset_->db_mutex());
    return vset_->LogNumber();
  }
  int NumLevelFiles(int level) EXCLUDES(vset_->db_mutex()) {
    MutexLock l(vset_->db_mutex());
    return vset_->NumLevelFiles(level);
  }

  // Writes an SST file holding entries (sorted here) and returns its metadata.
  FileMetaData BuildFile(uint64_t number, std::vector<SstEntry> entries) {
    std::sort(entries.begin(), entries.end(), [this](const SstEntry& a, const SstEntry& b) {
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
    for (const SstEntry& e : entries) {
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
    std::vector<SstEntry> entries;
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
    MutexLock l(vset_->db_mutex());
    return vset_->LogAndApply(edit);
  }

  Version* Current() {
    MutexLock l(vset_->db_mutex());
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

}  // namespace shale
