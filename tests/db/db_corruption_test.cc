// Bad input and faults: every case must end in a clear Status, never a crash and never a
// wrong answer reported as OK. Covers directories that hold no DB, damaged CURRENT,
// MANIFEST and SST files, WAL damage under each WALRecoveryMode, the LOCK file, and I/O
// errors injected through FaultInjectionTestEnv into WAL appends and syncs, flushes and
// MANIFEST updates.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "db/filename.h"
#include "db/log_format.h"
#include "shale/db.h"
#include "table/format.h"
#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

using Model = std::map<std::string, std::string>;

// 100 bytes, different for every i, so that a value from the wrong key is noticed.
std::string Value(int i) {
  std::string v = "value-" + std::to_string(i) + "-";
  while (v.size() < 100) v.push_back(static_cast<char>('a' + (v.size() + i) % 26));
  return v;
}

bool ContainsCaseInsensitive(std::string haystack, std::string needle) {
  auto lower = [](std::string* s) {
    for (char& c : *s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  lower(&haystack);
  lower(&needle);
  return haystack.find(needle) != std::string::npos;
}

std::vector<std::string> FilesOfType(const std::string& dir, FileType want) {
  std::vector<std::string> children, out;
  EXPECT_OK(Env::Default()->GetChildren(dir, &children));
  for (const std::string& name : children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type) && type == want) out.push_back(dir + "/" + name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

class DBCorruptionTest : public DBTestBase {
 protected:
  DBCorruptionTest() : DBTestBase("db_corruption") {
    options_.compression = kNoCompression;  // flipped bytes land where the test aims
  }

  Status TryOpen(const Options& options, const std::string& name, std::unique_ptr<DB>* db) {
    return DB::Open(options, name, db);
  }

  // Writes keys [0, n) with Value(i), one Put each, into a fresh DB at dbname_, and
  // flushes them to an SST when `flush`. Closes the DB.
  void Fill(int n, bool flush, Options options) {
    std::unique_ptr<DB> db;
    ASSERT_OK(DB::Open(options, dbname_, &db));
    for (int i = 0; i < n; i++) {
      ASSERT_OK(db->Put(WriteOptions(), Key(i), Value(i)));
      model_[Key(i)] = Value(i);
    }
    if (flush) {
      ASSERT_OK(db->Flush(FlushOptions()));
    }
    ASSERT_OK(db->Close());
  }

  // Reads every model key with Get and the whole DB with a forward scan. Every OK answer
  // must equal the model; every failure must be Corruption. Returns how many reads failed
  // (a failed scan counts once).
  int CheckNoWrongAnswers(DB* db, const Model& model) {
    int failures = 0;
    for (const auto& [k, v] : model) {
      std::string got;
      Status s = db->Get(ReadOptions(), k, &got);
      if (s.ok()) {
        EXPECT_EQ(v, got) << k;
      } else {
        EXPECT_TRUE(s.IsCorruption()) << k << ": " << s.ToString();
        failures++;
      }
    }
    std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions()));
    auto m = model.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
      // A damaged block may stop the scan, but never be skipped silently.
      if (m == model.end()) {
        ADD_FAILURE() << "extra key " << it->key().ToString(true);
        break;
      }
      EXPECT_EQ(m->first, it->key().ToString());
      EXPECT_EQ(m->second, it->value().ToString());
    }
    if (!it->status().ok()) {
      EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
      failures++;
    } else {
      EXPECT_TRUE(m == model.end()) << "scan ended early at " << m->first << " with OK status";
    }
    auto r = model.rbegin();
    for (it->SeekToLast(); it->Valid(); it->Prev(), ++r) {
      if (r == model.rend()) {
        ADD_FAILURE() << "extra key " << it->key().ToString(true);
        break;
      }
      EXPECT_EQ(r->first, it->key().ToString());
      EXPECT_EQ(r->second, it->value().ToString());
    }
    if (!it->status().ok()) {
      EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
      failures++;
    } else {
      EXPECT_TRUE(r == model.rend()) << "reverse scan ended early at " << r->first;
    }
    return failures;
  }

  void ExpectExactly(DB* db, const Model& model) { EXPECT_EQ(0, CheckNoWrongAnswers(db, model)); }

  Model model_;
};

// ---- Directories and CURRENT / MANIFEST damage.

TEST_F(DBCorruptionTest, NoDBWithoutCreateIfMissing) {
  Options o = options_;
  o.create_if_missing = false;
  std::unique_ptr<DB> db;
  Status s = DB::Open(o, dir_.path(), &db);  // exists, but holds no DB
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(nullptr, db);
  s = DB::Open(o, dir_.path() + "/missing", &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(nullptr, db);
}

TEST_F(DBCorruptionTest, DirectoryWithUnrelatedFiles) {
  Env* env = Env::Default();
  ASSERT_OK(env->CreateDir(dbname_));
  Random rnd(301);
  for (const char* name : {"notes.txt", "foo", "MANIFEST", "CURRENTX", "123.sstx", "x.log"}) {
    ASSERT_OK(WriteStringToFile(env, RandomBinaryString(&rnd, 300), dbname_ + "/" + name));
  }
  Options o = options_;
  o.create_if_missing = false;
  std::unique_ptr<DB> db;
  Status s = DB::Open(o, dbname_, &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  // Created among them, the DB works and leaves them alone.
  ASSERT_OK(DB::Open(options_, dbname_, &db));
  ASSERT_OK(db->Put(WriteOptions(), "k", "v"));
  ASSERT_OK(db->Flush(FlushOptions()));
  ASSERT_OK(db->Close());
  db.reset();
  ASSERT_OK(DB::Open(options_, dbname_, &db));
  std::string v;
  ASSERT_OK(db->Get(ReadOptions(), "k", &v));
  EXPECT_EQ("v", v);
  EXPECT_OK(env->FileExists(dbname_ + "/notes.txt"));
  EXPECT_OK(env->FileExists(dbname_ + "/x.log"));
}

TEST_F(DBCorruptionTest, BadCurrentFile) {
  ASSERT_NO_FATAL_FAILURE(Fill(50, true, options_));
  std::string current;
  ASSERT_OK(ReadFileToString(Env::Default(), CurrentFileName(dbname_), &current));
  ASSERT_FALSE(current.empty());
  ASSERT_EQ('\n', current.back());
  Random rnd(17);
  std::vector<std::string> bad = {"", "garbage\n", "MANIFEST-\n", "000001.log\n"};
  bad.push_back(current.substr(0, current.size() - 1));  // no newline
  bad.push_back(RandomBinaryString(&rnd, 40));
  for (const std::string& contents : bad) {
    SCOPED_TRACE("CURRENT = " + Slice(contents).ToString(true));
    ASSERT_OK(WriteStringToFile(Env::Default(), contents, CurrentFileName(dbname_)));
    std::unique_ptr<DB> db;
    Status s = DB::Open(options_, dbname_, &db);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(std::string::npos, s.ToString().find("CURRENT")) << s.ToString();
    EXPECT_EQ(nullptr, db);
  }
  // Put right again, everything is there.
  ASSERT_OK(WriteStringToFile(Env::Default(), current, CurrentFileName(dbname_)));
  std::unique_ptr<DB> db;
  ASSERT_OK(DB::Open(options_, dbname_, &db));
  ExpectExactly(db.get(), model_);
}

TEST_F(DBCorruptionTest, CurrentNamesMissingManifest) {
  ASSERT_NO_FATAL_FAILURE(Fill(50, true, options_));
  ASSERT_OK(WriteStringToFile(Env::Default(), "MANIFEST-009999\n", CurrentFileName(dbname_)));
  std::unique_ptr<DB> db;
  Status s = DB::Open(options_, dbname_, &db);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("MANIFEST-009999")) << s.ToString();
}

TEST_F(DBCorruptionTest, ManifestNamesMissingSst) {
  ASSERT_NO_FATAL_FAILURE(Fill(50, true, options_));
  std::vector<std::string> ssts = FilesOfType(dbname_, kTableFile);
  ASSERT_EQ(1u, ssts.size());
  ASSERT_OK(Env::Default()->DeleteFile(ssts[0]));
  std::unique_ptr<DB> db;
  Status s = DB::Open(options_, dbname_, &db);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  const std::string base = ssts[0].substr(ssts[0].rfind('/') + 1);
  EXPECT_NE(std::string::npos, s.ToString().find(base)) << s.ToString();
}

TEST_F(DBCorruptionTest, DamagedManifest) {
  ASSERT_NO_FATAL_FAILURE(Fill(50, true, options_));
  std::vector<std::string> manifests = FilesOfType(dbname_, kDescriptorFile);
  ASSERT_EQ(1u, manifests.size());
  uint64_t size;
  ASSERT_OK(Env::Default()->GetFileSize(manifests[0], &size));
  ASSERT_GT(size, 20u);
  ASSERT_OK(CorruptFile(manifests[0], static_cast<int64_t>(size / 2), 3));
  std::unique_ptr<DB> db;
  Status s = DB::Open(options_, dbname_, &db);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("MANIFEST")) << s.ToString();
}

// ---- SST damage.

class SstCorruptionTest : public DBCorruptionTest {
 protected:
  // One SST holding 2000 keys in many 4 KiB data blocks; returns its path.
  std::string MakeSst() {
    Fill(2000, true, options_);
    std::vector<std::string> ssts = FilesOfType(dbname_, kTableFile);
    EXPECT_EQ(1u, ssts.size());
    return ssts.empty() ? "" : ssts[0];
  }

  Footer ReadFooter(const std::string& sst) {
    std::string data;
    EXPECT_OK(ReadFileToString(Env::Default(), sst, &data));
    Footer footer;
    EXPECT_GE(data.size(), Footer::kEncodedLength);
    EXPECT_OK(
        footer.DecodeFrom(Slice(data).ToStringView().substr(data.size() - Footer::kEncodedLength)));
    return footer;
  }

  // Opens (paranoid or not) and checks reads; returns whether any damage was reported.
  bool OpenAndCheck(bool paranoid) {
    Options o = options_;
    o.paranoid_checks = paranoid;
    std::unique_ptr<DB> db;
    Status s = DB::Open(o, dbname_, &db);
    if (!s.ok()) {
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
      EXPECT_NE(std::string::npos, s.ToString().find(".sst")) << s.ToString();
      return true;
    }
    return CheckNoWrongAnswers(db.get(), model_) > 0;
  }
};

TEST_F(SstCorruptionTest, DataBlock) {
  const std::string sst = MakeSst();
  const Footer footer = ReadFooter(sst);
  // Inside the first data block and in one about a third into the data.
  ASSERT_OK(CorruptFile(sst, 10, 1));
  ASSERT_OK(CorruptFile(sst, static_cast<int64_t>(footer.index_handle().offset() / 3), 1));
  EXPECT_TRUE(OpenAndCheck(true));
  EXPECT_TRUE(OpenAndCheck(false));
}

TEST_F(SstCorruptionTest, DataBlockWithBloomFilter) {
  BlockBasedTableOptions t;
  t.filter_policy.reset(NewBloomFilterPolicy(10));
  options_.table_factory.reset(NewBlockBasedTableFactory(t));
  const std::string sst = MakeSst();
  ASSERT_OK(CorruptFile(sst, 2000, 2));
  EXPECT_TRUE(OpenAndCheck(true));
}

TEST_F(SstCorruptionTest, IndexBlock) {
  const std::string sst = MakeSst();
  const Footer footer = ReadFooter(sst);
  ASSERT_GT(footer.index_handle().size(), 10u);
  ASSERT_OK(CorruptFile(
      sst, static_cast<int64_t>(footer.index_handle().offset() + footer.index_handle().size() / 2),
      1));
  EXPECT_TRUE(OpenAndCheck(true));
  EXPECT_TRUE(OpenAndCheck(false));
}

TEST_F(SstCorruptionTest, Footer) {
  const std::string sst = MakeSst();
  for (int64_t offset : {int64_t{-1}, int64_t{-8}, int64_t{-12},
                         -static_cast<int64_t>(Footer::kEncodedLength) + 1}) {
    SCOPED_TRACE("offset " + std::to_string(offset));
    ASSERT_OK(CorruptFile(sst, offset, 1));
    // paranoid_checks opens every table at Open: the footer damage stops it there.
    {
      std::unique_ptr<DB> db;
      Status s = DB::Open(options_, dbname_, &db);
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    }
    EXPECT_TRUE(OpenAndCheck(false));
    ASSERT_OK(CorruptFile(sst, offset, 1));  // flip back
  }
  std::unique_ptr<DB> db;
  ASSERT_OK(DB::Open(options_, dbname_, &db));
  ExpectExactly(db.get(), model_);
}

TEST_F(SstCorruptionTest, Truncated) {
  const std::string sst = MakeSst();
  uint64_t size;
  ASSERT_OK(Env::Default()->GetFileSize(sst, &size));
  for (uint64_t new_size : {size - 1, size / 2, uint64_t{10}, uint64_t{0}}) {
    SCOPED_TRACE("size " + std::to_string(new_size));
    ASSERT_OK(TruncateFileTo(sst, new_size));
    EXPECT_TRUE(OpenAndCheck(true));
    EXPECT_TRUE(OpenAndCheck(false));
  }
}

// ---- WAL damage under each recovery mode.

// Where each record of a WAL written by log::Writer starts, for records of the given
// payload sizes (fragmentation over 32 KiB blocks and block-end padding included).
std::vector<uint64_t> RecordStarts(const std::vector<size_t>& payloads, uint64_t* end) {
  std::vector<uint64_t> starts;
  uint64_t off = 0;
  for (size_t len : payloads) {
    size_t left = len;
    bool first = true;
    do {
      const uint64_t room = log::kBlockSize - off % log::kBlockSize;
      if (room < log::kHeaderSize) {
        off += room;  // zero padding
        continue;
      }
      if (first) starts.push_back(off);
      first = false;
      const size_t frag = std::min<size_t>(left, room - log::kHeaderSize);
      off += log::kHeaderSize + frag;
      left -= frag;
    } while (left > 0);
  }
  *end = off;
  return starts;
}

class WalCorruptionTest : public DBCorruptionTest,
                          public ::testing::WithParamInterface<WALRecoveryMode> {
 protected:
  static constexpr int kRecords = 600;  // about 2.4 WAL blocks
  // Each Put is one WAL record: 12-byte header, tag, length-prefixed key and value.
  static constexpr size_t kPayload = 12 + 1 + 1 + 9 + 1 + 100;

  // Writes kRecords Puts that stay in the WAL (nothing flushed) and returns the WAL path.
  std::string MakeWal() {
    Fill(kRecords, false, options_);
    std::vector<std::string> wals = FilesOfType(dbname_, kWalFile);
    std::vector<std::string> ssts = FilesOfType(dbname_, kTableFile);
    EXPECT_EQ(0u, ssts.size());
    EXPECT_EQ(1u, wals.size());
    if (wals.empty()) return "";
    uint64_t end;
    starts_ = RecordStarts(std::vector<size_t>(kRecords, kPayload), &end);
    uint64_t size;
    EXPECT_OK(Env::Default()->GetFileSize(wals.back(), &size));
    EXPECT_EQ(end, size) << "the WAL layout is not the expected one";
    return wals.back();
  }

  Status OpenWithMode(std::unique_ptr<DB>* db) {
    Options o = options_;
    o.wal_recovery_mode = GetParam();
    // Small memtables: replay writes SSTs before it meets the damage.
    o.write_buffer_size = 8 << 10;
    return DB::Open(o, dbname_, db);
  }

  // After a refused Open nothing may have changed for good: a retry in the default mode
  // recovers the consistent prefix.
  void RetryPointInTime(const Model& expected) {
    Options o = options_;
    o.wal_recovery_mode = WALRecoveryMode::kPointInTimeRecovery;
    std::unique_ptr<DB> db;
    ASSERT_OK(DB::Open(o, dbname_, &db));
    ExpectExactly(db.get(), expected);
  }

  Model Prefix(int n) {
    Model m;
    for (int i = 0; i < n; i++) m[Key(i)] = Value(i);
    return m;
  }

  // After a successful recovery the state must survive a reopen and take new writes.
  void CheckStable(std::unique_ptr<DB>* db, const Model& model) {
    ASSERT_OK((*db)->Put(WriteOptions(), "zz-new", "after"));
    Model with_new = model;
    with_new["zz-new"] = "after";
    ASSERT_OK((*db)->Close());
    db->reset();
    ASSERT_OK(OpenWithMode(db));
    ExpectExactly(db->get(), with_new);
  }

  std::vector<uint64_t> starts_;
};

TEST_P(WalCorruptionTest, TornTail) {
  const std::string wal = MakeWal();
  uint64_t size;
  ASSERT_OK(Env::Default()->GetFileSize(wal, &size));
  ASSERT_OK(TruncateFileTo(wal, size - 50));  // cuts the last record in half
  std::unique_ptr<DB> db;
  Status s = OpenWithMode(&db);
  if (GetParam() == WALRecoveryMode::kAbsoluteConsistency) {
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_EQ(nullptr, db);
    RetryPointInTime(Prefix(kRecords - 1));
    return;
  }
  ASSERT_OK(s);
  const Model expected = Prefix(kRecords - 1);
  ExpectExactly(db.get(), expected);
  CheckStable(&db, expected);
}

TEST_P(WalCorruptionTest, FlippedByteInTheMiddle) {
  const std::string wal = MakeWal();
  constexpr int kDamaged = 100;
  ASSERT_LT(starts_[kDamaged + 1], log::kBlockSize);  // damage inside the first block
  ASSERT_OK(CorruptFile(wal, static_cast<int64_t>(starts_[kDamaged] + log::kHeaderSize + 40), 1));
  std::unique_ptr<DB> db;
  Status s = OpenWithMode(&db);
  switch (GetParam()) {
    case WALRecoveryMode::kTolerateCorruptedTailRecords:
    case WALRecoveryMode::kAbsoluteConsistency:
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
      EXPECT_NE(std::string::npos, s.ToString().find(".log")) << s.ToString();
      EXPECT_EQ(nullptr, db);
      RetryPointInTime(Prefix(kDamaged));
      return;
    case WALRecoveryMode::kPointInTimeRecovery: {
      ASSERT_OK(s);
      const Model expected = Prefix(kDamaged);
      ExpectExactly(db.get(), expected);
      CheckStable(&db, expected);
      return;
    }
    case WALRecoveryMode::kSkipAnyCorruptedRecords: {
      ASSERT_OK(s);
      // Records after the damaged one in its block may be lost with it; every record
      // starting in a later block must be back, and nothing may be wrong.
      Model expected;
      for (int i = 0; i < kRecords; i++) {
        std::string v;
        Status g = db->Get(ReadOptions(), Key(i), &v);
        const bool must = i < kDamaged || starts_[i] >= log::kBlockSize;
        if (i == kDamaged) {
          EXPECT_TRUE(g.IsNotFound()) << i << ": " << g.ToString();
        } else if (must) {
          ASSERT_OK(g) << i;
        }
        if (g.ok()) {
          EXPECT_EQ(Value(i), v) << i;
          expected[Key(i)] = v;
        } else {
          EXPECT_TRUE(g.IsNotFound()) << i << ": " << g.ToString();
        }
      }
      ExpectExactly(db.get(), expected);
      CheckStable(&db, expected);
      return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, WalCorruptionTest,
                         ::testing::Values(WALRecoveryMode::kTolerateCorruptedTailRecords,
                                           WALRecoveryMode::kAbsoluteConsistency,
                                           WALRecoveryMode::kPointInTimeRecovery,
                                           WALRecoveryMode::kSkipAnyCorruptedRecords),
                         [](const ::testing::TestParamInfo<WALRecoveryMode>& info) {
                           switch (info.param) {
                             case WALRecoveryMode::kTolerateCorruptedTailRecords:
                               return std::string("TolerateCorruptedTail");
                             case WALRecoveryMode::kAbsoluteConsistency:
                               return std::string("AbsoluteConsistency");
                             case WALRecoveryMode::kPointInTimeRecovery:
                               return std::string("PointInTime");
                             case WALRecoveryMode::kSkipAnyCorruptedRecords:
                               return std::string("SkipAny");
                           }
                           return std::string("Unknown");
                         });

// ---- The LOCK file.

TEST_F(DBCorruptionTest, SecondOpenFailsOnLock) {
  std::unique_ptr<DB> db;
  ASSERT_OK(DB::Open(options_, dbname_, &db));
  ASSERT_OK(db->Put(WriteOptions(), "k", "v"));
  std::unique_ptr<DB> db2;
  Status s = DB::Open(options_, dbname_, &db2);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_TRUE(ContainsCaseInsensitive(s.ToString(), "lock")) << s.ToString();
  EXPECT_EQ(nullptr, db2);
  // The first DB is unaffected, and once closed the directory can be opened again.
  std::string v;
  ASSERT_OK(db->Get(ReadOptions(), "k", &v));
  EXPECT_EQ("v", v);
  ASSERT_OK(db->Close());
  db.reset();
  ASSERT_OK(DB::Open(options_, dbname_, &db2));
  ASSERT_OK(db2->Get(ReadOptions(), "k", &v));
}

// ---- Injected I/O errors.

class FaultTest : public DBCorruptionTest {
 protected:
  void PutAcked(int from, int to) {
    for (int i = from; i < to; i++) {
      ASSERT_OK(db_->Put(WriteOptions(), Key(i), Value(i)));
      model_[Key(i)] = Value(i);
    }
  }

  // Every write path refuses with an error once the DB has hit one.
  void ExpectWritesRefused() {
    EXPECT_NOK(db_->Put(WriteOptions(), "refused", "x"));
    EXPECT_NOK(db_->Delete(WriteOptions(), Key(0)));
    WriteBatch b;
    ASSERT_OK(b.Put("refused2", "y"));
    EXPECT_NOK(db_->Write(WriteOptions(), &b));
    std::string v;
    EXPECT_TRUE(db_->Get(ReadOptions(), "refused", &v).IsNotFound());
    EXPECT_TRUE(db_->Get(ReadOptions(), "refused2", &v).IsNotFound());
  }

  // Closes (the error may be reported again), clears the faults and reopens: every
  // acknowledged write must be back, and the DB must work normally.
  void ReopenClean() {
    db_->Close().PermitUncheckedError();
    db_.reset();
    env_.ResetState();
    Open();
    ExpectExactly(db_.get(), model_);
    PutAcked(100000, 100010);
    ASSERT_OK(db_->Flush(FlushOptions()));
    ASSERT_OK(db_->Close());
    db_.reset();
    Open();
    ExpectExactly(db_.get(), model_);
  }

  // The base's fault-injecting env, which outlives db_.
  FaultInjectionTestEnv& env_ = *UseFaultInjectionEnv();
};

TEST_F(FaultTest, WalAppendFailure) {
  for (int nth : {1, 2}) {  // the record's first or a later Append (a partial record)
    SCOPED_TRACE("nth " + std::to_string(nth));
    Open();
    PutAcked(nth * 1000, nth * 1000 + 100);
    env_.SetFailure(FailOn::kWrite, nth, FailMode::kNth, ".log");
    Status s = db_->Put(WriteOptions(), "bad", std::string(200, 'b'));
    if (env_.InjectedCount(FailOn::kWrite) == 0) {
      // The record went out in one Append: nothing to inject a second failure into.
      ASSERT_OK(s);
      model_["bad"] = std::string(200, 'b');
      ASSERT_OK(db_->Delete(WriteOptions(), "bad"));
      model_.erase("bad");
      ASSERT_OK(db_->Close());
      db_.reset();
      env_.ResetState();
      continue;
    }
    EXPECT_TRUE(s.IsIOError()) << s.ToString();
    std::string v;
    EXPECT_TRUE(db_->Get(ReadOptions(), "bad", &v).IsNotFound());
    ExpectWritesRefused();
    EXPECT_NOK(db_->Flush(FlushOptions()));
    ExpectExactly(db_.get(), model_);
    ASSERT_NO_FATAL_FAILURE(ReopenClean());
    EXPECT_TRUE(db_->Get(ReadOptions(), "bad", &v).IsNotFound());
    ASSERT_OK(db_->Close());
    db_.reset();
  }
}

TEST_F(FaultTest, WalSyncFailure) {
  Open();
  PutAcked(0, 100);
  env_.SetFailure(FailOn::kSync, 1, FailMode::kNth, ".log");
  WriteOptions sync;
  sync.sync = true;
  Status s = db_->Put(sync, "bad", "unsynced");
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  std::string v;
  EXPECT_TRUE(db_->Get(ReadOptions(), "bad", &v).IsNotFound());
  ExpectWritesRefused();
  ExpectExactly(db_.get(), model_);
  db_->Close().PermitUncheckedError();
  db_.reset();
  env_.ResetState();
  Open();
  // The record reached the file before its sync failed, so recovery may bring it back:
  // the write's fate was unknown to its writer. It must not come back wrong.
  s = db_->Get(ReadOptions(), "bad", &v);
  if (s.ok()) {
    EXPECT_EQ("unsynced", v);
    model_["bad"] = v;
  } else {
    EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  }
  ExpectExactly(db_.get(), model_);
}

struct FlushFault {
  const char* name;
  FailOn what;
  const char* filter;
  // Which matching call fails: kFromNth 1 is a lasting failure; kNth 2 of an Append is a
  // partial record (log::Writer appends the header, then the payload).
  FailMode mode = FailMode::kFromNth;
  int nth = 1;
};

class FlushFaultTest : public FaultTest, public ::testing::WithParamInterface<FlushFault> {};

TEST_P(FlushFaultTest, ManualFlush) {
  Open();
  PutAcked(0, 300);
  env_.SetFailure(GetParam().what, GetParam().nth, GetParam().mode, GetParam().filter);
  Status s = db_->Flush(FlushOptions());
  ASSERT_GT(env_.InjectedCount(GetParam().what), 0u) << "the fault was never hit";
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  ExpectWritesRefused();
  EXPECT_NOK(db_->Flush(FlushOptions()));
  ExpectExactly(db_.get(), model_);
  ASSERT_NO_FATAL_FAILURE(ReopenClean());
}

TEST_P(FlushFaultTest, BackgroundFlush) {
  options_.write_buffer_size = 8 << 10;
  Open();
  PutAcked(0, 100);
  env_.SetFailure(GetParam().what, GetParam().nth, GetParam().mode, GetParam().filter);
  Status s;
  int i = 1000;
  for (; i < 20000; i++) {
    s = db_->Put(WriteOptions(), Key(i), Value(i));
    if (!s.ok()) break;
    model_[Key(i)] = Value(i);
  }
  ASSERT_NOK(s) << "writes never noticed the failed flush";
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  std::string v;
  EXPECT_TRUE(db_->Get(ReadOptions(), Key(i), &v).IsNotFound());
  ExpectWritesRefused();
  ExpectExactly(db_.get(), model_);
  ASSERT_NO_FATAL_FAILURE(ReopenClean());
}

INSTANTIATE_TEST_SUITE_P(
    Faults, FlushFaultTest,
    ::testing::Values(FlushFault{"SstCreate", FailOn::kCreate, ".sst"},
                      FlushFault{"SstWrite", FailOn::kWrite, ".sst"},
                      FlushFault{"SstSync", FailOn::kSync, ".sst"},
                      FlushFault{"SstWriteOnce", FailOn::kWrite, ".sst", FailMode::kNth, 3},
                      FlushFault{"ManifestWrite", FailOn::kWrite, "MANIFEST"},
                      FlushFault{"ManifestPartialRecord", FailOn::kWrite, "MANIFEST",
                                 FailMode::kNth, 2},
                      FlushFault{"ManifestSync", FailOn::kSync, "MANIFEST"},
                      FlushFault{"DirSync", FailOn::kDirSync, ""},
                      FlushFault{"WalCreate", FailOn::kCreate, ".log"}),
    [](const ::testing::TestParamInfo<FlushFault>& info) { return std::string(info.param.name); });

TEST_F(FaultTest, OpenFailsWhenCurrentCannotBeRenamed) {
  // A new DB and an existing one both install a MANIFEST through CURRENT at Open.
  for (int round = 0; round < 2; round++) {
    SCOPED_TRACE("round " + std::to_string(round));
    env_.SetFailure(FailOn::kRename, 1, FailMode::kNth, "CURRENT");
    Status s = DB::Open(options_, dbname_, &db_);
    EXPECT_TRUE(s.IsIOError()) << s.ToString();
    EXPECT_EQ(nullptr, db_);
    env_.ResetState();
    Open();
    ExpectExactly(db_.get(), model_);
    PutAcked(round * 100, round * 100 + 100);
    if (round == 1) {
      ASSERT_OK(db_->Flush(FlushOptions()));
    }
    ASSERT_OK(db_->Close());
    db_.reset();
  }
  Open();
  ExpectExactly(db_.get(), model_);
}

TEST_F(FaultTest, ManifestWriteFailureAtOpen) {
  Open();
  PutAcked(0, 200);
  ASSERT_OK(db_->Close());
  db_.reset();
  for (FailOn what : {FailOn::kWrite, FailOn::kSync, FailOn::kCreate}) {
    env_.SetFailure(what, 1, FailMode::kNth, "MANIFEST");
    Status s = DB::Open(options_, dbname_, &db_);
    EXPECT_TRUE(s.IsIOError()) << s.ToString();
    EXPECT_EQ(nullptr, db_);
    env_.ResetState();
  }
  Open();
  ExpectExactly(db_.get(), model_);
}

}  // namespace
}  // namespace shale
