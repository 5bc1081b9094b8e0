// Two-phase commit under crashes, in the DB layer (allow_2pc): threads prepare transactions
// and then commit them (or, every fourth, roll them back), while (a) the process is killed
// by SIGKILL or (b) the machine loses power through the fault-injecting Env. After each
// crash, for every transaction:
//   - its two records are both there or both absent: never half a transaction;
//   - it is never both visible and recovered as prepared;
//   - an acknowledged commit is visible and an acknowledged rollback gone (for a power
//     loss: the thread's writes were synced);
//   - an acknowledged prepare whose resolution may not have reached the disk is visible
//     (committed) or recovered as prepared (a commit), or not visible (a rollback);
//   - a recovered transaction holds the records it prepared.
// The recovered transactions are then resolved as the thread meant to, and the next round
// goes on. SHALE_CRASH_CYCLES scales the rounds (default 3); the seed is printed. The
// crashes themselves are tests/testutil/crash_harness.h's.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "db/db_impl.h"
#include "db/write_batch_internal.h"
#include "tests/testutil/crash_harness.h"
#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

constexpr int kThreads = kCrashWriters;

struct Mode {
  const char* name;
  bool pipelined, two_queues;
};
const Mode kModes[] = {
    {"Parallel", false, false}, {"Pipelined", true, false}, {"TwoQueues", false, true}};

Options ModeOptions(const Mode& m, Env* env) {
  Options o;
  o.create_if_missing = true;
  o.env = env;
  o.allow_2pc = true;
  o.write_buffer_size = 16 << 10;  // switches and flushes during the run
  o.enable_pipelined_write = m.pipelined;
  o.two_write_queues = m.two_queues;
  return o;
}

std::string Name(int t, int i) { return "t" + std::to_string(t) + "_" + std::to_string(i); }
bool RollsBack(int i) { return i % 4 == 3; }

WriteBatch Records(int t, int i) {
  WriteBatch b;
  const std::string name = Name(t, i);
  EXPECT_OK(b.Put(name + "_a", name));
  EXPECT_OK(b.Put(name + "_b", name + std::string(150, 'x')));
  return b;
}

// Commits the transaction `name` (records, prepared in WAL log) or rolls it back.
Status Resolve(DBImpl* db, const WriteOptions& wo, const std::string& name, bool rollback,
               const WriteBatch& records, uint64_t log) {
  WriteBatch resolve;
  DBImpl::TxnWrite w;
  if (rollback) {
    WriteBatchInternal::MarkRollback(&resolve, name);
    w.wal_only = true;
  } else {
    WriteBatchInternal::MarkCommit(&resolve, name);
    w.txn_batch = &records;
    w.prep_log = log;
  }
  Status s = db->WriteTxn(wo, &resolve, w);
  if (s.ok()) db->MarkPrepareResolved(log);
  return s;
}

// One transaction of thread t: prepare, then commit or roll back. Calls acked(0) once
// prepared and acked(1) once resolved; false on any failure.
template <typename Ack>
bool RunTransaction(DBImpl* db, int t, int i, Ack acked) {
  const std::string name = Name(t, i);
  const WriteBatch records = Records(t, i);
  WriteBatch prepare;
  WriteBatchInternal::InsertNoop(&prepare);
  if (!WriteBatchInternal::Append(&prepare, &records).ok()) return false;
  if (!WriteBatchInternal::MarkEndPrepare(&prepare, name).ok()) return false;
  DBImpl::TxnWrite wal_only;
  wal_only.wal_only = true;
  uint64_t log = 0;
  wal_only.log_used = &log;
  if (!db->WriteTxn(CrashWriterOptions(t), &prepare, wal_only).ok()) return false;
  acked(0);
  if (!Resolve(db, CrashWriterOptions(t), name, RollsBack(i), records, log).ok()) return false;
  acked(1);
  return true;
}

// A batch's records without its header (sequence and count).
std::string RecordsOf(const WriteBatch& b) {
  return WriteBatchInternal::Contents(&b).ToString().substr(WriteBatchInternal::kHeader);
}

// What the crashed run acknowledged per thread: the last transaction prepared and the
// last resolved (-1: none this round), among those a check may count on.
struct Acks {
  int prepared[kThreads];
  int resolved[kThreads];
  int attempted[kThreads];  // the last transaction begun, acknowledged or not
};

// Checks every transaction of the round (from next[t] on), resolves the recovered ones as
// their thread meant to, and moves next[t] past everything the round wrote.
void CheckAndResolve(DB* db, const Acks& acks, int* next, const std::string& where) {
  auto* impl = static_cast<DBImpl*>(db);
  auto recovered = impl->TakeRecoveredTransactions();
  for (int t = 0; t < kThreads; t++) {
    const int last = std::max(acks.attempted[t], next[t]);
    int seen = next[t] - 1;
    for (int i = next[t]; i <= last; i++) {
      const std::string name = Name(t, i);
      const std::string what = where + " " + name;
      std::string a, b;
      const bool has_a = db->Get(ReadOptions(), name + "_a", &a).ok();
      const bool has_b = db->Get(ReadOptions(), name + "_b", &b).ok();
      ASSERT_EQ(has_a, has_b) << what << ": half a transaction";
      if (has_a) {
        ASSERT_EQ(a, name) << what;
        ASSERT_EQ(b, name + std::string(150, 'x')) << what;
        ASSERT_FALSE(RollsBack(i)) << what << ": a rolled-back transaction is visible";
      }
      auto it = recovered.find(name);
      const bool is_recovered = it != recovered.end();
      ASSERT_FALSE(has_a && is_recovered) << what << ": visible and still prepared";
      if (i <= acks.resolved[t]) {
        ASSERT_FALSE(is_recovered) << what << ": resolved, yet recovered as prepared";
        ASSERT_EQ(has_a, !RollsBack(i)) << what << ": acknowledged resolution lost";
      } else if (i <= acks.prepared[t] && !RollsBack(i)) {
        ASSERT_TRUE(has_a || is_recovered) << what << ": acknowledged prepare lost";
      }
      if (is_recovered) {
        const WriteBatch records = Records(t, i);
        ASSERT_EQ(RecordsOf(it->second.batch), RecordsOf(records))
            << what << ": recovered with other records";
        ASSERT_OK(
            Resolve(impl, WriteOptions(), name, RollsBack(i), records, it->second.log_number));
        recovered.erase(it);
      }
      if (has_a || is_recovered) seen = i;
    }
    next[t] = std::max(seen, acks.attempted[t]) + 1;
  }
  ASSERT_TRUE(recovered.empty()) << where << ": recovered an unknown transaction "
                                 << recovered.begin()->first;
}

TEST(DB2PCCrashTest, KilledChildBetweenPrepareAndCommit) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    TempDirectory dir("2pc_kill");
    const std::string dbname = dir.File("db");
    int next[kThreads] = {0, 0, 0, 0};
    for (int cycle = 0; cycle < CrashRounds(); cycle++) {
      std::unique_ptr<DB> child_db;
      std::vector<CrashAck> reported;
      const std::string error = KillWritersAfter(
          10000 + rnd.Uniform(100000), next,
          [&] { return DB::Open(ModeOptions(m, Env::Default()), dbname, &child_db); },
          [&](int t, int i, const CrashAckFn& ack) {
            return RunTransaction(static_cast<DBImpl*>(child_db.get()), t, i, ack);
          },
          &reported);
      ASSERT_EQ(error, "");
      // A process crash keeps whatever reached the WAL: every acknowledgement counts.
      Acks acks;
      for (int t = 0; t < kThreads; t++) acks.prepared[t] = acks.resolved[t] = next[t] - 1;
      for (const CrashAck& ack : reported) {
        (ack.stage == 0 ? acks.prepared : acks.resolved)[ack.thread] = ack.index;
      }
      // Each thread runs one transaction at a time: one past its last prepare may be
      // in the WAL unacknowledged.
      for (int t = 0; t < kThreads; t++) acks.attempted[t] = acks.prepared[t] + 1;

      std::unique_ptr<DB> db;
      Status s = DB::Open(ModeOptions(m, Env::Default()), dbname, &db);
      ASSERT_TRUE(s.ok()) << "cycle " << cycle << " seed " << seed << ": " << s.ToString();
      CheckAndResolve(db.get(), acks, next,
                      "cycle " + std::to_string(cycle) + " seed " + std::to_string(seed));
      if (HasFatalFailure()) return;
    }
  }
}

TEST(DB2PCCrashTest, PowerLossBetweenPrepareAndCommit) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  for (const Mode& m : kModes) {
    SCOPED_TRACE(m.name);
    TempDirectory dir("2pc_power");
    const std::string dbname = dir.File("db");
    FaultInjectionTestEnv env(Env::Default());
    env.SetRealisticPowerLoss(true);
    const Options options = ModeOptions(m, &env);
    int next[kThreads] = {0, 0, 0, 0};
    for (int round = 0; round < CrashRounds() * 2; round++) {
      std::unique_ptr<DB> db;
      Status s = DB::Open(options, dbname, &db);
      ASSERT_TRUE(s.ok()) << "round " << round << " seed " << seed << ": " << s.ToString();
      auto* impl = static_cast<DBImpl*>(db.get());
      // Only synced acknowledgements count: the threads without sync may lose anything.
      Acks acks;
      for (int t = 0; t < kThreads; t++) {
        acks.prepared[t] = acks.resolved[t] = next[t] - 1;
        acks.attempted[t] = next[t];
      }
      ASSERT_OK(PowerLossAfter(
          2000 + rnd.Uniform(30000), next, &env,
          [&](int t, int i) {
            acks.attempted[t] = i;
            return RunTransaction(impl, t, i, [&](int stage) {
              if (CrashWriterOptions(t).sync) (stage == 0 ? acks.prepared : acks.resolved)[t] = i;
            });
          },
          [&] { db.reset(); }));

      s = DB::Open(options, dbname, &db);
      ASSERT_TRUE(s.ok()) << "reopen round " << round << " seed " << seed << ": " << s.ToString();
      CheckAndResolve(db.get(), acks, next,
                      "round " + std::to_string(round) + " seed " + std::to_string(seed));
      if (HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace shale
