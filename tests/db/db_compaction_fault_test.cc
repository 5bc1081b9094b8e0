// Faults during compaction (an output SST's write or sync, the MANIFEST's write or sync),
// both for background compactions and for CompactRange: the compaction fails, the DB
// enters error mode, and after a restart on a healthy file system it opens and every key
// reads back. A failed MANIFEST sync after a good append is the hard case: the MANIFEST
// names the outputs, so they must survive the failure (they once were swept at once).
// Also: a failed directory sync while NewDB switches CURRENT must not leave a CURRENT
// naming a deleted MANIFEST; flush honours use_fsync and writable_file_max_buffer_size.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "shale/db.h"
#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/gated_sst_env.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

constexpr int kKeys = 600;

// Round r's value for key i: later rounds overwrite earlier ones.
std::string Value(int i, int round) { return "v" + std::to_string(round) + "-" + Key(i); }

// Writes every key for `round` and flushes, making one more L0 file.
void WriteRound(DB* db, int round) {
  for (int i = 0; i < kKeys; i++) ASSERT_OK(db->Put(WriteOptions(), Key(i), Value(i, round)));
  ASSERT_OK(db->Flush(FlushOptions()));
}

void ExpectRound(DB* db, int round) {
  for (int i = 0; i < kKeys; i++) {
    std::string v;
    ASSERT_OK(db->Get(ReadOptions(), Key(i), &v)) << Key(i);
    ASSERT_EQ(v, Value(i, round)) << Key(i);
  }
}

// A DB created on demand over env.
Options OptionsOn(Env* env) {
  Options options;
  options.create_if_missing = true;
  options.env = env;
  return options;
}

struct Fault {
  const char* name;
  FailOn what;
  const char* filter;
};

const Fault kFaults[] = {
    {"OutputWrite", FailOn::kWrite, ".sst"},
    {"OutputSync", FailOn::kSync, ".sst"},
    {"ManifestWrite", FailOn::kWrite, "MANIFEST"},
    {"ManifestSync", FailOn::kSync, "MANIFEST"},
};

class CompactionFaultTest : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(CompactionFaultTest, FailsIntoErrorModeAndReopensWithEveryKey) {
  const Fault& fault = kFaults[std::get<0>(GetParam())];
  const bool manual = std::get<1>(GetParam());
  TempDirectory dir("compaction_fault");
  const std::string dbname = dir.path() + "/db";
  GatedSstEnv gate;
  FaultInjectionTestEnv env(&gate);
  Options options = OptionsOn(&env);
  options.disable_auto_compactions = true;
  options.level0_file_num_compaction_trigger = 2;
  {
    std::unique_ptr<DB> db;
    ASSERT_OK(DB::Open(options, dbname, &db));
    WriteRound(db.get(), 0);
    WriteRound(db.get(), 1);
    ASSERT_OK(db->Close());
  }

  std::unique_ptr<DB> db;
  Status s;
  if (manual) {
    ASSERT_OK(DB::Open(options, dbname, &db));
    env.SetFailure(fault.what, 1, FailMode::kNth, fault.filter);
    s = db->CompactRange(CompactRangeOptions(), nullptr, nullptr);
  } else {
    // Open schedules the compaction the two L0 files call for; it is held at its first
    // output until the fault is armed, so Open's own MANIFEST edit is not the one hit.
    gate.SetOpen(false);
    options.disable_auto_compactions = false;
    ASSERT_OK(DB::Open(options, dbname, &db));
    gate.WaitForBlockedJob();
    env.SetFailure(fault.what, 1, FailMode::kNth, fault.filter);
    gate.SetOpen(true);
    s = db->WaitForCompact(WaitForCompactOptions());
  }
  ASSERT_EQ(env.InjectedCount(fault.what), 1u) << fault.name;
  ASSERT_NOK(s) << fault.name;
  // Error mode: writes are refused, reads still work.
  ASSERT_NOK(db->Put(WriteOptions(), "after", "x"));
  ExpectRound(db.get(), 1);
  db.reset();

  env.ResetState();
  options.disable_auto_compactions = false;
  ASSERT_OK(DB::Open(options, dbname, &db)) << fault.name;
  ExpectRound(db.get(), 1);
  // The DB works on: a full compaction succeeds and keeps every key.
  ASSERT_OK(db->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  ExpectRound(db.get(), 1);
}

INSTANTIATE_TEST_SUITE_P(Faults, CompactionFaultTest,
                         ::testing::Combine(::testing::Range(0,
                                                             static_cast<int>(std::size(kFaults))),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<int, bool>>& info) {
                           return std::string(kFaults[std::get<0>(info.param)].name) +
                                  (std::get<1>(info.param) ? "_CompactRange" : "_Background");
                         });

// Creates a DB whose nth directory sync fails, so that Open fails; then CURRENT exists or
// not, as current_exists says. The next Open, failing nothing, must give a working DB.
// (The directory is synced twice for a new MANIFEST: before the rename, for the
// MANIFEST's own entry, and after it.)
void CreateWithFailedDirSync(int nth, bool current_exists) {
  TempDirectory dir("newdb_fault");
  const std::string dbname = dir.path() + "/db";
  FaultInjectionTestEnv env(Env::Default());
  Options options = OptionsOn(&env);
  env.SetFailure(FailOn::kDirSync, nth, FailMode::kNth);
  std::unique_ptr<DB> db;
  ASSERT_NOK(DB::Open(options, dbname, &db));
  ASSERT_EQ(env.InjectedCount(FailOn::kDirSync), 1u);
  const Status current = env.FileExists(dbname + "/CURRENT");
  if (current_exists) {
    ASSERT_OK(current);
  } else {
    EXPECT_TRUE(current.IsNotFound()) << current.ToString();
  }
  env.ResetState();
  ASSERT_OK(DB::Open(options, dbname, &db));
  ASSERT_OK(db->Put(WriteOptions(), "k", "v"));
  std::string v;
  ASSERT_OK(db->Get(ReadOptions(), "k", &v));
  ASSERT_EQ(v, "v");
}

// CURRENT is renamed into place, then the directory sync fails: CURRENT may well name
// MANIFEST-000001 now, so NewDB must not delete it; the next Open succeeds.
TEST(NewDBFaultTest, FailedDirectorySyncKeepsTheManifestCurrentNames) {
  CreateWithFailedDirSync(2, /*current_exists=*/true);
}

// The directory sync before the rename fails: CURRENT is never written and Open fails; the
// next Open creates the DB afresh (over the MANIFEST left behind: with no CURRENT to read,
// NewDB keeps it, as it keeps any MANIFEST that CURRENT may name).
TEST(NewDBFaultTest, FailedDirectorySyncBeforeTheRenameLeavesNoCurrent) {
  CreateWithFailedDirSync(1, /*current_exists=*/false);
}

// Records, for every SST file created, the buffer size asked for and the kinds of sync.
class SyncRecordingEnv : public EnvWrapper {
 public:
  struct Record {
    size_t buffer_size = 0;
    int syncs = 0;
    int fsyncs = 0;
  };
  explicit SyncRecordingEnv(Env* base) : EnvWrapper(base) {}

  Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result,
                         const EnvOptions& options) override {
    Status s = target()->NewWritableFile(fname, result, options);
    if (!s.ok() || fname.size() < 4 || fname.substr(fname.size() - 4) != ".sst") return s;
    std::lock_guard<std::mutex> l(mu_);
    files_[fname].buffer_size = options.writable_file_max_buffer_size;
    *result = std::make_unique<File>(this, fname, std::move(*result));
    return s;
  }

  std::map<std::string, Record> files() {
    std::lock_guard<std::mutex> l(mu_);
    return files_;
  }

 private:
  class File final : public WritableFile {
   public:
    File(SyncRecordingEnv* env, std::string fname, std::unique_ptr<WritableFile> target)
        : env_(env), fname_(std::move(fname)), target_(std::move(target)) {}
    Status Append(const Slice& data) override { return target_->Append(data); }
    Status Flush() override { return target_->Flush(); }
    Status Sync() override {
      env_->Count(fname_, false);
      return target_->Sync();
    }
    Status Fsync() override {
      env_->Count(fname_, true);
      return target_->Fsync();
    }
    Status Close() override { return target_->Close(); }
    uint64_t GetFileSize() override { return target_->GetFileSize(); }

   private:
    SyncRecordingEnv* const env_;
    const std::string fname_;
    std::unique_ptr<WritableFile> target_;
  };

  void Count(const std::string& fname, bool full) {
    std::lock_guard<std::mutex> l(mu_);
    (full ? files_[fname].fsyncs : files_[fname].syncs)++;
  }

  std::mutex mu_;
  std::map<std::string, Record> files_;
};

TEST(FlushOptionsTest, FlushHonoursUseFsyncAndWritableBufferSize) {
  TempDirectory dir("flush_fsync");
  SyncRecordingEnv env(Env::Default());
  Options options = OptionsOn(&env);
  options.use_fsync = true;
  options.writable_file_max_buffer_size = 12345;
  std::unique_ptr<DB> db;
  ASSERT_OK(DB::Open(options, dir.path() + "/db", &db));
  ASSERT_OK(db->Put(WriteOptions(), "a", "1"));
  ASSERT_OK(db->Flush(FlushOptions()));
  const auto files = env.files();
  ASSERT_EQ(files.size(), 1u);
  const SyncRecordingEnv::Record& r = files.begin()->second;
  EXPECT_EQ(r.buffer_size, 12345u);
  EXPECT_GE(r.fsyncs, 1);
  EXPECT_EQ(r.syncs, 0);
}

}  // namespace
}  // namespace shale
