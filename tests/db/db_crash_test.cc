// Crash consistency: (a) simulated power losses through the fault-injecting Env at random
// points, realistic ones (torn and garbage tails of unsynced data, undone creates, renames
// and deletions), some of them during the recovery that follows another, and some rounds
// writing without the WAL; (b) a real child process writing with sync=true killed by
// SIGKILL. After each crash the DB must open and hold a prefix of the history that
// includes every write made durable (synced, or covered by a completed Flush) — no holes,
// nothing invented.
//
// SHALE_CRASH_CYCLES=N runs N power losses (default 150) and N/6 kills (default 25).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/log_format.h"
#include "shale/db.h"
#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/gated_sst_env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

using Model = std::map<std::string, std::string>;

// $SHALE_CRASH_CYCLES, or 150.
int CrashCycles() { return TestKnob("SHALE_CRASH_CYCLES", 150); }

// One history entry: a batch of puts (value set) and deletes (value empty).
struct Op {
  std::vector<std::pair<std::string, std::optional<std::string>>> updates;
};

void Apply(const Op& op, Model* m) {
  for (const auto& [k, v] : op.updates) {
    if (v) {
      (*m)[k] = *v;
    } else {
      m->erase(k);
    }
  }
}

Status ReadAll(DB* db, Model* out) {
  out->clear();
  std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    (*out)[it->key().ToString()] = it->value().ToString();
  }
  return it->status();
}

// Returns the length m of the history prefix the DB holds, or -1 if it holds none with
// m >= durable.
int MatchPrefix(const Model& base, const std::vector<Op>& history, const Model& got,
                size_t durable) {
  Model m = base;
  for (size_t i = 0; i <= history.size(); i++) {
    if (i >= durable && m == got) return static_cast<int>(i);
    if (i < history.size()) Apply(history[i], &m);
  }
  return -1;
}

TEST(DBCrashTest, SimulatedPowerLoss) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  TempDirectory dir("crash_power");
  const std::string dbname = dir.path() + "/db";
  FaultInjectionTestEnv env(Env::Default());
  env.SetSeed(seed);
  env.SetRealisticPowerLoss(true);
  Options options;
  options.create_if_missing = true;
  options.env = &env;
  options.write_buffer_size = 8 << 10;  // frequent flushes, so crashes hit them too

  Model base;  // the state verified after the last crash
  const int crashes = CrashCycles();
  for (int round = 0; round < crashes; round++) {
    // Every fourth round writes without the WAL: only flushed writes are durable then, and
    // what survives must still be a prefix.
    const bool no_wal = round % 4 == 3;
    std::unique_ptr<DB> db;
    Status s = DB::Open(options, dbname, &db);
    ASSERT_TRUE(s.ok()) << "round " << round << " seed " << seed << ": " << s.ToString();
    std::vector<Op> history;
    size_t durable = 0;  // history[0, durable) is guaranteed to survive
    const int ops = 1 + static_cast<int>(rnd.Uniform(60));
    const int crash_at = static_cast<int>(rnd.Uniform(ops + 1));
    for (int i = 0; i < ops; i++) {
      if (i == crash_at) env.SetFilesystemActive(false);
      if (rnd.OneIn(15)) {
        Status fs = db->Flush(FlushOptions());
        if (fs.ok()) durable = history.size();
        continue;
      }
      Op op;
      WriteBatch batch;
      const int n = rnd.OneIn(4) ? 1 + static_cast<int>(rnd.Uniform(5)) : 1;
      for (int j = 0; j < n; j++) {
        std::string key = "k" + std::to_string(rnd.Uniform(40));
        if (rnd.OneIn(5)) {
          ASSERT_TRUE(batch.Delete(key).ok());
          op.updates.emplace_back(key, std::nullopt);
        } else {
          std::string value = RandomString(&rnd, 10 + rnd.Uniform(300));
          ASSERT_TRUE(batch.Put(key, value).ok());
          op.updates.emplace_back(key, value);
        }
      }
      WriteOptions wo;
      wo.disableWAL = no_wal;
      wo.sync = !no_wal && rnd.OneIn(3);
      Status ws = db->Write(wo, &batch);
      // A write that fails is not acknowledged; it may or may not survive (a prefix either
      // way), so it stays in the history as a candidate.
      history.push_back(op);
      if (ws.ok() && wo.sync) durable = history.size();
      if (!ws.ok()) break;  // the DB is in error mode now
    }
    env.SetFilesystemActive(false);
    db.reset();  // the "crash": nothing more reaches the disk
    ASSERT_TRUE(env.SimulatePowerLoss().ok());
    env.SetFilesystemActive(true);
    env.ResetState();
    if (rnd.OneIn(4)) {
      // Power fails again during the recovery (or right after it).
      env.DeactivateAfter(static_cast<int>(rnd.Uniform(40)));
      s = DB::Open(options, dbname, &db);
      env.SetFilesystemActive(false);
      db.reset();
      ASSERT_TRUE(env.SimulatePowerLoss().ok());
      env.ResetState();
    }

    s = DB::Open(options, dbname, &db);
    ASSERT_TRUE(s.ok()) << "reopen round " << round << " seed " << seed << ": " << s.ToString();
    Model got;
    ASSERT_TRUE(ReadAll(db.get(), &got).ok());
    int m = MatchPrefix(base, history, got, durable);
    ASSERT_GE(m, 0) << "round " << round << " seed " << seed << ": state is not a prefix "
                    << "holding the " << durable << " durable ops of " << history.size();
    for (int i = 0; i < m; i++) Apply(history[i], &base);
    // Point reads agree with the scan.
    for (const auto& [k, v] : base) {
      std::string value;
      ASSERT_TRUE(db->Get(ReadOptions(), k, &value).ok()) << k;
      ASSERT_EQ(value, v);
    }
  }
}

// The child writes k000000, k000001, ... with sync=true and reports each acknowledged
// index through a pipe until it is killed.
[[noreturn]] void ChildWriter(const std::string& dbname, int start, int fd) {
  Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 32 << 10;
  std::unique_ptr<DB> db;
  if (!DB::Open(options, dbname, &db).ok()) _exit(3);
  WriteOptions wo;
  wo.sync = true;
  std::string value(700, 'v');
  for (int i = start; i < start + 200000; i++) {
    char key[16];
    snprintf(key, sizeof(key), "k%06d", i);
    if (!db->Put(wo, key, value).ok()) _exit(4);
    if (write(fd, &i, sizeof(i)) != sizeof(i)) _exit(5);
  }
  _exit(0);
}

// Without the WAL, writes made while a flush runs go to the next memtable, and a crash
// loses them: the recovered sequence must be the flushed data's, not count them too.
TEST(DBCrashTest, UnloggedWritesDuringAFlushDoNotCountAfterACrash) {
  TempDirectory dir("crash_seq");
  FaultInjectionTestEnv fault(Env::Default());
  GatedSstEnv gate(&fault);
  Options options;
  options.create_if_missing = true;
  options.env = &gate;
  std::unique_ptr<DB> db;
  ASSERT_OK(DB::Open(options, dir.File("db"), &db));
  WriteOptions no_wal;
  no_wal.disableWAL = true;
  for (int i = 0; i < 10; i++) ASSERT_OK(db->Put(no_wal, "a" + std::to_string(i), "v"));
  gate.SetOpen(false);  // the flush switches memtables, then waits to write its file
  FlushOptions no_wait;
  no_wait.wait = false;
  ASSERT_OK(db->Flush(no_wait));
  gate.WaitForBlockedJob();
  for (int i = 0; i < 10; i++) ASSERT_OK(db->Put(no_wal, "b" + std::to_string(i), "v"));
  gate.SetOpen(true);
  WaitForCompactOptions wait;
  ASSERT_OK(db->WaitForCompact(wait));
  EXPECT_EQ(db->GetLatestSequenceNumber(), 20u);

  fault.SetFilesystemActive(false);  // the power goes; the b keys were never logged
  db.reset();
  ASSERT_OK(fault.SimulatePowerLoss());
  fault.SetFilesystemActive(true);
  fault.ResetState();
  ASSERT_OK(DB::Open(options, dir.File("db"), &db));
  std::string value;
  EXPECT_OK(db->Get(ReadOptions(), "a9", &value));
  EXPECT_TRUE(db->Get(ReadOptions(), "b0", &value).IsNotFound());
  EXPECT_EQ(db->GetLatestSequenceNumber(), 10u) << "counts writes the crash lost";
}

TEST(DBCrashTest, KilledChildProcessKeepsSyncedWrites) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  TempDirectory dir("crash_kill");
  const std::string dbname = dir.path() + "/db";
  int next = 0;  // the first index not yet known to be in the DB
  const int cycles = std::max(1, CrashCycles() / 6);
  for (int cycle = 0; cycle < cycles; cycle++) {
    std::string output;
    const std::string error = RunChildUntilKilled([&](int fd) { ChildWriter(dbname, next, fd); },
                                                  5000 + rnd.Uniform(120000), &output);
    ASSERT_EQ(error, "");
    int acked = next - 1;
    if (output.size() >= sizeof(int)) {
      memcpy(&acked, output.data() + (output.size() / sizeof(int) - 1) * sizeof(int), sizeof(int));
    }

    Options options;
    // A child killed before its Open wrote CURRENT (a loaded machine may not run it at all
    // before the kill) leaves no DB, or a half-created one: with nothing acknowledged, an
    // empty DB is the right answer then.
    options.create_if_missing = true;
    std::unique_ptr<DB> db;
    Status s = DB::Open(options, dbname, &db);
    ASSERT_TRUE(s.ok()) << "cycle " << cycle << " seed " << seed << ": " << s.ToString();
    // Keys must be exactly k000000 .. k<last> with last >= acked: a prefix, no holes.
    std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions()));
    int expect = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), expect++) {
      char key[16];
      snprintf(key, sizeof(key), "k%06d", expect);
      ASSERT_EQ(it->key().ToString(), key) << "cycle " << cycle << " seed " << seed;
      ASSERT_EQ(it->value().size(), 700u);
    }
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    ASSERT_GT(expect, acked) << "cycle " << cycle << ": acknowledged write " << acked
                             << " lost (seed " << seed << ")";
    next = expect;
  }
}

// Kills its own process inside a WAL record: at the append that follows the record
// header numbered `headers`, so that the header is appended and its payload is not.
class KillMidRecordEnv : public EnvWrapper {
 public:
  explicit KillMidRecordEnv(int headers) : EnvWrapper(Env::Default()), headers_(headers) {}

  Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result,
                         const EnvOptions& options) override {
    Status s = target()->NewWritableFile(fname, result, options);
    if (s.ok() && fname.size() > 4 && fname.compare(fname.size() - 4, 4, ".log") == 0) {
      *result = std::make_unique<File>(this, std::move(*result));
    }
    return s;
  }

 private:
  class File final : public WritableFile {
   public:
    File(KillMidRecordEnv* env, std::unique_ptr<WritableFile> target)
        : env_(env), target_(std::move(target)) {}
    Status Append(const Slice& data) override {
      if (env_->armed_) raise(SIGKILL);
      if (data.size() == log::kHeaderSize && --env_->headers_ == 0) env_->armed_ = true;
      return target_->Append(data);
    }
    Status Flush() override { return target_->Flush(); }
    Status Sync() override { return target_->Sync(); }
    Status Fsync() override { return target_->Fsync(); }
    Status Close() override { return target_->Close(); }
    uint64_t GetFileSize() override { return target_->GetFileSize(); }

   private:
    KillMidRecordEnv* const env_;
    const std::unique_ptr<WritableFile> target_;
  };

  int headers_;
  bool armed_ = false;
};

// kAbsoluteConsistency fails recovery on any damaged WAL record, a torn last one included.
// A process crash must not leave one: a record reaches the file whole or not at all (the
// mapped WAL, which copies a record into the file piece by piece, is not used then).
TEST(DBCrashTest, AbsoluteConsistencyOpensAfterAKillInsideARecord) {
  TempDirectory dir("crash_absolute");
  const std::string dbname = dir.path() + "/db";
  constexpr int kKilledAt = 50;  // the record whose payload is never appended
  Options options;
  options.create_if_missing = true;
  options.wal_recovery_mode = WALRecoveryMode::kAbsoluteConsistency;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    KillMidRecordEnv env(kKilledAt);
    Options child = options;
    child.env = &env;
    std::unique_ptr<DB> db;
    if (!DB::Open(child, dbname, &db).ok()) _exit(3);
    for (int i = 0; i < 1000; i++) {
      if (!db->Put(WriteOptions(), Key(i), std::string(100, 'v')).ok()) _exit(4);
    }
    _exit(5);  // not killed
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;

  std::unique_ptr<DB> db;
  ASSERT_OK(DB::Open(options, dbname, &db));
  // Every acknowledged write, and not the one killed inside.
  std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions()));
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), n++) ASSERT_EQ(Key(n), it->key().ToString());
  ASSERT_OK(it->status());
  ASSERT_EQ(kKilledAt - 1, n);
}

}  // namespace
}  // namespace shale
