// Crashes with concurrent writers, in every write mode: (a) a child process with four
// writer threads killed by SIGKILL, (b) simulated power loss through the fault-injecting
// Env while four threads write. Each thread writes its own keys t<t>_<i> in order, half of
// the threads with sync=true. After the crash, each thread's keys must be a prefix
// t<t>_0 .. t<t>_<n-1> (no hole), holding every write acknowledged before the crash that
// was synced, or (a process crash) that went to the WAL at all.
// SHALE_CRASH_CYCLES scales the number of crashes per mode (default 3). The crashes
// themselves are tests/testutil/crash_harness.h's.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "shale/db.h"
#include "tests/testutil/crash_harness.h"
#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

constexpr int kThreads = kCrashWriters;

struct Mode {
  const char* name;
  bool concurrent, pipelined, unordered, two_queues;
};
const Mode kModes[] = {
    {"Serial", false, false, false, false},
    {"Parallel", true, false, false, false},
    {"Pipelined", true, true, false, false},
    {"Unordered", true, false, true, false},
    {"ParallelTwoQueues", true, false, false, true},
    {"UnorderedTwoQueues", true, false, true, true},
};

Options ModeOptions(const Mode& m, Env* env) {
  Options o;
  o.create_if_missing = true;
  o.env = env;
  o.write_buffer_size = 16 << 10;  // switches and flushes during the run
  o.allow_concurrent_memtable_write = m.concurrent;
  o.enable_pipelined_write = m.pipelined;
  o.unordered_write = m.unordered;
  o.two_write_queues = m.two_queues;
  return o;
}

std::string Key(int t, int i) {
  char buf[32];
  snprintf(buf, sizeof(buf), "t%d_%07d", t, i);
  return buf;
}

// The number of thread t's keys in db, checking they are t_0 .. t_<n-1>; -1 on a hole.
int PrefixLength(DB* db, int t) {
  std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions()));
  const std::string prefix = "t" + std::to_string(t) + "_";
  int n = 0;
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next(), n++) {
    if (it->key().ToString() != Key(t, n)) return -1;
  }
  return it->status().ok() ? n : -1;
}

TEST(DBWriteModesCrashTest, KilledChildWithConcurrentWriters) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    TempDirectory dir("write_modes_kill");
    const std::string dbname = dir.File("db");
    int next[kThreads] = {0, 0, 0, 0};
    for (int cycle = 0; cycle < CrashRounds(); cycle++) {
      // The child: each thread writes its keys from next[t] on and acknowledges each write.
      std::unique_ptr<DB> child_db;
      std::vector<CrashAck> acks;
      const std::string error = KillWritersAfter(
          10000 + rnd.Uniform(100000), next,
          [&] { return DB::Open(ModeOptions(m, Env::Default()), dbname, &child_db); },
          [&](int t, int i, const CrashAckFn& ack) {
            const std::string value(200, static_cast<char>('a' + t));
            if (!child_db->Put(CrashWriterOptions(t), Key(t, i), value).ok()) return false;
            ack(0);
            return true;
          },
          &acks);
      ASSERT_EQ(error, "");
      int acked[kThreads];
      for (int t = 0; t < kThreads; t++) acked[t] = next[t] - 1;
      for (const CrashAck& ack : acks) acked[ack.thread] = ack.index;

      std::unique_ptr<DB> db;
      Status s = DB::Open(ModeOptions(m, Env::Default()), dbname, &db);
      ASSERT_TRUE(s.ok()) << "cycle " << cycle << " seed " << seed << ": " << s.ToString();
      for (int t = 0; t < kThreads; t++) {
        const int n = PrefixLength(db.get(), t);
        ASSERT_GE(n, 0) << "thread " << t << " has a hole; cycle " << cycle << " seed " << seed;
        // A process crash keeps what reached the WAL (the OS has it), synced or not.
        ASSERT_GT(n, acked[t]) << "thread " << t << " lost acknowledged write " << acked[t]
                               << "; cycle " << cycle << " seed " << seed;
        next[t] = n;
      }
    }
  }
}

TEST(DBWriteModesCrashTest, PowerLossWithConcurrentWriters) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    TempDirectory dir("write_modes_power");
    const std::string dbname = dir.File("db");
    FaultInjectionTestEnv env(Env::Default());
    const Options options = ModeOptions(m, &env);
    int next[kThreads] = {0, 0, 0, 0};
    for (int round = 0; round < CrashRounds() * 2; round++) {
      std::unique_ptr<DB> db;
      Status s = DB::Open(options, dbname, &db);
      ASSERT_TRUE(s.ok()) << "round " << round << " seed " << seed << ": " << s.ToString();
      int durable[kThreads];  // the last synced write acknowledged per thread
      for (int t = 0; t < kThreads; t++) durable[t] = next[t] - 1;
      ASSERT_OK(PowerLossAfter(
          2000 + rnd.Uniform(30000), next, &env,
          [&](int t, int i) {
            const std::string value(100, static_cast<char>('a' + t));
            if (!db->Put(CrashWriterOptions(t), Key(t, i), value).ok()) return false;
            if (CrashWriterOptions(t).sync) durable[t] = i;
            return true;
          },
          [&] { db.reset(); }));

      s = DB::Open(options, dbname, &db);
      ASSERT_TRUE(s.ok()) << "reopen round " << round << " seed " << seed << ": " << s.ToString();
      for (int t = 0; t < kThreads; t++) {
        const int n = PrefixLength(db.get(), t);
        ASSERT_GE(n, 0) << "thread " << t << " has a hole; round " << round << " seed " << seed;
        ASSERT_GT(n, durable[t]) << "thread " << t << " lost synced write " << durable[t]
                                 << "; round " << round << " seed " << seed;
        next[t] = n;
      }
    }
  }
}

}  // namespace
}  // namespace shale
