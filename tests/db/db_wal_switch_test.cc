// What a memtable switch does with the WAL it leaves (db/closed_wals.h): writers go on
// without waiting for its sync; a sync=true write after it makes it durable too; and the
// new WAL names it and its size (log_format.h, kPredecessorType), so that recovery stops
// where an older WAL lost its tail rather than replay a newer one over the hole.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "db/filename.h"
#include "db/log_reader.h"
#include "shale/db.h"
#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/gated_sst_env.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

bool IsLog(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".log") == 0;
}

// Holds every WAL Sync (and Fsync) while its gate is closed.
class GatedWalSyncEnv : public EnvWrapper {
 public:
  explicit GatedWalSyncEnv(Env* base) : EnvWrapper(base) {}

  Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result,
                         const EnvOptions& options) override {
    Status s = target()->NewWritableFile(fname, result, options);
    if (s.ok() && IsLog(fname)) *result = std::make_unique<File>(this, std::move(*result));
    return s;
  }

  void SetOpen(bool open) {
    std::lock_guard<std::mutex> l(mu_);
    open_ = open;
    cv_.notify_all();
  }
  int held() {
    std::lock_guard<std::mutex> l(mu_);
    return held_;
  }

 private:
  void Wait() {
    std::unique_lock<std::mutex> l(mu_);
    held_++;
    cv_.wait(l, [this] { return open_; });
    held_--;
  }

  class File final : public WritableFile {
   public:
    File(GatedWalSyncEnv* env, std::unique_ptr<WritableFile> target)
        : env_(env), target_(std::move(target)) {}
    Status Append(const Slice& data) override { return target_->Append(data); }
    Status Flush() override { return target_->Flush(); }
    Status Sync() override {
      env_->Wait();
      return target_->Sync();
    }
    Status Fsync() override {
      env_->Wait();
      return target_->Fsync();
    }
    Status Close() override { return target_->Close(); }
    uint64_t GetFileSize() override { return target_->GetFileSize(); }

   private:
    GatedWalSyncEnv* const env_;
    const std::unique_ptr<WritableFile> target_;
  };

  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int held_ = 0;
};

std::string ValueOf(int i) { return std::string(200, static_cast<char>('a' + i % 26)); }

// Puts keys from *next on until the DB has `imm` immutable memtables.
void WriteUntilImmutable(DB* db, int imm, int* next) {
  std::string v;
  for (;;) {
    ASSERT_TRUE(db->GetProperty(DB::Properties::kNumImmutableMemTable, &v));
    if (std::stoi(v) >= imm) return;
    ASSERT_OK(db->Put(WriteOptions(), Key(*next), ValueOf(*next)));
    (*next)++;
  }
}

// Keys 0 .. n-1 exactly, with their values.
void ExpectKeys(DB* db, int n) {
  std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions()));
  int i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), i++) {
    ASSERT_EQ(Key(i), it->key().ToString());
    ASSERT_EQ(ValueOf(i), it->value().ToString());
  }
  ASSERT_OK(it->status());
  ASSERT_EQ(n, i);
}

Options SmallMemtables(Env* env) {
  Options options;
  options.create_if_missing = true;
  options.env = env;
  options.write_buffer_size = 64 << 10;
  options.max_write_buffer_number = 4;
  return options;
}

TEST(DBWalSwitchTest, WritersDoNotWaitForTheOldWalsSync) {
  TempDirectory dir("wal_switch_nowait");
  GatedWalSyncEnv env(Env::Default());
  std::unique_ptr<DB> db;
  ASSERT_OK(DB::Open(SmallMemtables(&env), dir.File("db"), &db));
  env.SetOpen(false);
  int next = 0;
  // Across a switch and on into the new memtable, while no WAL sync can finish.
  auto writes = std::async(std::launch::async, [&] {
    WriteUntilImmutable(db.get(), 1, &next);
    for (int i = 0; i < 50; i++, next++) {
      if (!db->Put(WriteOptions(), Key(next), ValueOf(next)).ok()) return false;
    }
    return true;
  });
  const bool done = writes.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  env.SetOpen(true);
  ASSERT_TRUE(done) << "the writes waited for a WAL sync";
  ASSERT_TRUE(writes.get());
  // The flush syncs the old WAL (and waited at the gate meanwhile, or had not started).
  ASSERT_OK(db->Flush(FlushOptions()));
  ExpectKeys(db.get(), next);
}

TEST(DBWalSwitchTest, ASyncedWriteMakesTheWalsBeforeItDurable) {
  TempDirectory dir("wal_switch_sync");
  const std::string dbname = dir.File("db");
  GatedSstEnv gate;
  FaultInjectionTestEnv env(&gate);
  Options options = SmallMemtables(&env);
  std::unique_ptr<DB> db;
  ASSERT_OK(DB::Open(options, dbname, &db));
  // The first flush syncs the first WAL left, then waits to create its SST; the flushes of
  // later switches cannot start meanwhile, so only a sync=true write can sync their WALs.
  gate.SetOpen(false);
  int next = 0;
  WriteUntilImmutable(db.get(), 1, &next);
  gate.WaitForBlockedJob();
  WriteUntilImmutable(db.get(), 2, &next);
  WriteOptions sync;
  sync.sync = true;
  ASSERT_OK(db->Put(sync, Key(next), ValueOf(next)));
  next++;
  // Power fails: nothing more reaches the disk, and what was not synced is lost.
  env.SetFilesystemActive(false);
  gate.SetOpen(true);
  db.reset();
  ASSERT_OK(env.SimulatePowerLoss());
  env.ResetState();
  ASSERT_OK(DB::Open(options, dbname, &db));
  ExpectKeys(db.get(), next);
}

// Copies every file of a live DB but its LOCK and LOG: what a crash at this moment would
// leave, if the page cache all reached the disk.
void CopyDb(const std::string& from, const std::string& to) {
  Env* env = Env::Default();
  ASSERT_OK(env->CreateDirIfMissing(to));
  std::vector<std::string> names;
  ASSERT_OK(env->GetChildren(from, &names));
  for (const std::string& name : names) {
    if (name == "." || name == ".." || name == "LOCK" || name.compare(0, 3, "LOG") == 0) continue;
    std::string data;
    ASSERT_OK(ReadFileToString(env, from + "/" + name, &data));
    ASSERT_OK(WriteStringToFile(env, data, to + "/" + name));
  }
}

// The WAL files of dbname, oldest first.
std::vector<std::string> Wals(const std::string& dbname) {
  std::vector<std::string> names, wals;
  EXPECT_OK(Env::Default()->GetChildren(dbname, &names));
  for (const std::string& n : names) {
    if (IsLog(n)) wals.push_back(dbname + "/" + n);
  }
  std::sort(wals.begin(), wals.end());
  return wals;
}

// Where the WAL's record `records` ends (counting from 1), read with log::Reader.
uint64_t RecordEnd(const std::string& fname, int records) {
  std::unique_ptr<SequentialFile> file;
  EXPECT_OK(Env::Default()->NewSequentialFile(fname, &file, EnvOptions()));
  log::Reader reader(std::move(file), nullptr, true, 0, fname);
  Slice record;
  std::string scratch;
  for (int i = 0; i < records; i++) EXPECT_TRUE(reader.ReadRecord(&record, &scratch));
  return reader.LastRecordEnd();
}

class DBWalSwitchRecoveryTest : public ::testing::Test {
 protected:
  // A DB whose memtables are all unflushed, in three WALs: the first holds keys
  // [0, first_wal_keys_), the second [first_wal_keys_, second_wal_keys_), the current one
  // the rest, up to keys_. Its copy at copy_; middle_wal_ the second WAL there.
  void SetUp() override {
    GatedSstEnv gate;
    std::unique_ptr<DB> db;
    ASSERT_OK(DB::Open(SmallMemtables(&gate), dir_.File("db"), &db));
    gate.SetOpen(false);  // no flush completes
    // The write that switches goes to the new WAL.
    WriteUntilImmutable(db.get(), 1, &keys_);
    first_wal_keys_ = keys_ - 1;
    WriteUntilImmutable(db.get(), 2, &keys_);
    second_wal_keys_ = keys_ - 1;
    for (int i = 0; i < 20; i++, keys_++) {
      ASSERT_OK(db->Put(WriteOptions(), Key(keys_), ValueOf(keys_)));
    }
    CopyDb(dir_.File("db"), copy_);
    gate.SetOpen(true);
    ASSERT_OK(db->Close());
    const std::vector<std::string> wals = Wals(copy_);
    ASSERT_EQ(3u, wals.size());
    middle_wal_ = wals[1];
    ASSERT_GT(second_wal_keys_ - first_wal_keys_, 10);
  }

  Status OpenCopy(WALRecoveryMode mode, std::unique_ptr<DB>* db) {
    Options options;
    options.wal_recovery_mode = mode;
    return DB::Open(options, copy_, db);
  }

  TempDirectory dir_{"wal_switch_recovery"};
  const std::string copy_ = dir_.File("copy");
  std::string middle_wal_;
  int first_wal_keys_ = 0;
  int second_wal_keys_ = 0;
  int keys_ = 0;
};

TEST_F(DBWalSwitchRecoveryTest, EveryModeReplaysWholeWals) {
  for (WALRecoveryMode mode :
       {WALRecoveryMode::kAbsoluteConsistency, WALRecoveryMode::kTolerateCorruptedTailRecords,
        WALRecoveryMode::kPointInTimeRecovery, WALRecoveryMode::kSkipAnyCorruptedRecords}) {
    const std::string again = dir_.File("again" + std::to_string(static_cast<int>(mode)));
    CopyDb(copy_, again);
    Options options;
    options.wal_recovery_mode = mode;
    std::unique_ptr<DB> db;
    ASSERT_OK(DB::Open(options, again, &db));
    ExpectKeys(db.get(), keys_);
  }
}

TEST_F(DBWalSwitchRecoveryTest, RecoveryStopsWhereAnOlderWalLostItsTail) {
  // A power loss kept the newest WAL and cut the middle one after its 10th record.
  ASSERT_OK(Env::Default()->TruncateFile(middle_wal_, RecordEnd(middle_wal_, 10)));
  std::unique_ptr<DB> db;
  // Replaying the newest WAL would leave the middle one's lost keys out: a hole.
  ASSERT_OK(OpenCopy(WALRecoveryMode::kPointInTimeRecovery, &db));
  ExpectKeys(db.get(), first_wal_keys_ + 10);
}

TEST_F(DBWalSwitchRecoveryTest, TolerateCorruptedTailStopsThereToo) {
  ASSERT_OK(Env::Default()->TruncateFile(middle_wal_, RecordEnd(middle_wal_, 10)));
  std::unique_ptr<DB> db;
  ASSERT_OK(OpenCopy(WALRecoveryMode::kTolerateCorruptedTailRecords, &db));
  ExpectKeys(db.get(), first_wal_keys_ + 10);
}

TEST_F(DBWalSwitchRecoveryTest, AbsoluteConsistencyCallsItCorruption) {
  ASSERT_OK(Env::Default()->TruncateFile(middle_wal_, RecordEnd(middle_wal_, 10)));
  std::unique_ptr<DB> db;
  Status s = OpenCopy(WALRecoveryMode::kAbsoluteConsistency, &db);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
}

TEST_F(DBWalSwitchRecoveryTest, SkipAnyCorruptedRecordsSalvagesTheNewerWal) {
  ASSERT_OK(Env::Default()->TruncateFile(middle_wal_, RecordEnd(middle_wal_, 10)));
  std::unique_ptr<DB> db;
  ASSERT_OK(OpenCopy(WALRecoveryMode::kSkipAnyCorruptedRecords, &db));
  std::string v;
  ASSERT_OK(db->Get(ReadOptions(), Key(first_wal_keys_ + 9), &v));
  ASSERT_TRUE(db->Get(ReadOptions(), Key(first_wal_keys_ + 10), &v).IsNotFound());
  ASSERT_OK(db->Get(ReadOptions(), Key(keys_ - 1), &v));
}

TEST_F(DBWalSwitchRecoveryTest, AMissingOlderWalIsAHoleToo) {
  ASSERT_OK(Env::Default()->DeleteFile(middle_wal_));
  std::unique_ptr<DB> db;
  ASSERT_OK(OpenCopy(WALRecoveryMode::kPointInTimeRecovery, &db));
  ExpectKeys(db.get(), first_wal_keys_);
}

}  // namespace
}  // namespace shale
