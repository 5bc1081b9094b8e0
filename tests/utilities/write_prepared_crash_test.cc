// WRITE_PREPARED transactions under crashes, through the public TransactionDB API, in each
// write configuration the policy allows: one queue; two queues; two queues with
// unordered_write (and no concurrency control, the recipe issue 15 is about). Under this
// policy a prepare's records are in the WAL and the memtable (and, after a flush, in a
// table) before anything decides whether they are committed, so a recovery that loses
// track of a prepare would publish uncommitted data; and a commit is a marker written
// apart from its records (through the second queue), so a recovery that misreads the
// markers could lose committed data.
//
// Four threads each own a pair of keys and run transactions that write one value, naming
// the thread and the transaction's number, to both keys: in turn a prepare then a commit,
// a commit without prepare, a prepare then a rollback, and a plain TransactionDB::Write of
// a batch. Each thread acknowledges its finished steps. Then (a) the process is killed by
// SIGKILL, or (b) the machine loses power through the fault-injecting Env (there only the
// threads whose writes are synced acknowledge). After the reopen, for every thread:
//   - both keys hold the same value: never half a transaction;
//   - no value of a rolled-back transaction, and none written before the round and found
//     absent at the last check, is visible;
//   - the last acknowledged commit is visible, or a later transaction of the thread;
//   - an acknowledged prepare is visible (committed) or recovered as prepared, and a
//     recovered prepare is not visible, neither by Get nor by an iterator, nor is it
//     anything but the thread's last transaction.
// The recovered transactions are then committed or rolled back as their thread meant to,
// the outcome checked, and the next round goes on from there. The commit cache holds 16
// entries, so that recovery and the run evict all the time. SHALE_CRASH_CYCLES scales the
// rounds (default 3); the seed is printed. The crashes themselves are
// tests/testutil/crash_harness.h's.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "shale/utilities/transaction.h"
#include "shale/utilities/transaction_db.h"
#include "tests/testutil/crash_harness.h"
#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/test_util.h"
#include "tests/testutil/write_prepared_config.h"
#include "util/random.h"

namespace shale {
namespace {

constexpr int kThreads = kCrashWriters;

using Config = WritePreparedConfig;

enum Kind { kPrepareCommit, kCommitOnly, kPrepareRollback, kPlainWrite };
// Threads start at different kinds, so that all four run at any moment.
Kind KindOf(int t, int i) { return static_cast<Kind>((i + t) % 4); }
bool Prepares(Kind k) { return k == kPrepareCommit || k == kPrepareRollback; }

std::string Name(int t, int i) { return "t" + std::to_string(t) + "_" + std::to_string(i); }
std::string KeyA(int t) { return "pair" + std::to_string(t) + "_a"; }
std::string KeyB(int t) { return "pair" + std::to_string(t) + "_b"; }
// Long enough that a round fills several memtables.
std::string Value(int t, int i) { return Name(t, i) + "|" + std::string(150, 'x'); }

// The transaction number in a name or value of thread t, or -2 if it is not one of t's.
int IndexOf(int t, const std::string& s) {
  const std::string prefix = "t" + std::to_string(t) + "_";
  if (s.compare(0, prefix.size(), prefix) != 0) return -2;
  const size_t end = std::min(s.find('|'), s.size());
  if (end <= prefix.size()) return -2;
  int i = 0;
  for (size_t p = prefix.size(); p < end; p++) {
    if (s[p] < '0' || s[p] > '9') return -2;
    i = i * 10 + (s[p] - '0');
  }
  return i;
}

// Transaction i of thread t. Calls acked(0) once prepared (prepare kinds) and acked(1) once
// committed, rolled back or written; false on any failure.
template <typename Ack>
bool RunTransaction(TransactionDB* db, int t, int i, Ack acked) {
  const WriteOptions wo = CrashWriterOptions(t);
  const Kind kind = KindOf(t, i);
  if (kind == kPlainWrite) {
    WriteBatch batch;
    if (!batch.Put(KeyA(t), Value(t, i)).ok() || !batch.Put(KeyB(t), Value(t, i)).ok()) {
      return false;
    }
    if (!db->Write(wo, &batch).ok()) return false;
    acked(1);
    return true;
  }
  std::unique_ptr<Transaction> txn(db->BeginTransaction(wo));
  if (Prepares(kind) && !txn->SetName(Name(t, i)).ok()) return false;
  if (!txn->Put(KeyA(t), Value(t, i)).ok() || !txn->Put(KeyB(t), Value(t, i)).ok()) return false;
  if (Prepares(kind)) {
    if (!txn->Prepare().ok()) return false;
    acked(0);
  }
  if (!(kind == kPrepareRollback ? txn->Rollback() : txn->Commit()).ok()) return false;
  acked(1);
  return true;
}

// One thread's state across rounds and what the crashed round acknowledged of it (-1: no
// transaction). Transaction numbers only grow: a round starts past all the last one began.
struct ThreadModel {
  int base = -1;       // the value visible when the round began
  int next = 0;        // the round's first transaction
  int prepared = -1;   // the last transaction acknowledged prepared
  int resolved = -1;   // ... acknowledged finished (committed, rolled back or written)
  int committed = -1;  // ... acknowledged finished and not rolled back
  int attempted = -1;  // the last transaction the round may have begun
  void StartRound() {
    prepared = resolved = committed = -1;
    attempted = next - 1;
  }
  void Ack(int t, int i, int stage) {
    (stage == 0 ? prepared : resolved) = i;
    if (stage == 1 && KindOf(t, i) != kPrepareRollback) committed = i;
  }
};

// The value of thread t's pair as Get and the iterator's scan see it (-1: absent).
int CheckPair(TransactionDB* db, int t, const std::map<std::string, std::string>& scan,
              const std::string& what) {
  std::string a, b;
  const Status sa = db->Get(ReadOptions(), KeyA(t), &a);
  const Status sb = db->Get(ReadOptions(), KeyB(t), &b);
  EXPECT_TRUE(sa.ok() || sa.IsNotFound()) << what << ": " << sa.ToString();
  EXPECT_TRUE(sb.ok() || sb.IsNotFound()) << what << ": " << sb.ToString();
  EXPECT_EQ(sa.ok(), sb.ok()) << what << ": half a transaction";
  if (sa.ok() && sb.ok()) {
    EXPECT_EQ(a, b) << what << ": half a transaction";
  }
  for (const auto& [key, value] : {std::make_pair(KeyA(t), a), std::make_pair(KeyB(t), b)}) {
    auto it = scan.find(key);
    EXPECT_EQ(it != scan.end(), sa.ok()) << what << ": the iterator disagrees with Get on " << key;
    if (it != scan.end() && sa.ok()) {
      EXPECT_EQ(it->second, value) << what << ": iterator";
    }
  }
  if (!sa.ok()) return -1;
  const int v = IndexOf(t, a);
  EXPECT_GE(v, 0) << what << ": a value no transaction of the thread wrote: " << a;
  return v;
}

std::map<std::string, std::string> Scan(TransactionDB* db) {
  std::map<std::string, std::string> out;
  std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next())
    out[it->key().ToString()] = it->value().ToString();
  EXPECT_OK(it->status());
  return out;
}

// Transactions the round began, by all threads.
int Begun(const ThreadModel* models) {
  int n = 0;
  for (int t = 0; t < kThreads; t++) n += models[t].attempted - models[t].next + 1;
  return n;
}

// Checks every thread against its model after a crash, resolves the recovered prepares as
// their threads meant to and checks the outcome, and readies the models for the next
// round. Adds the number of recovered prepares to *recovered_count.
void CheckAndResolve(TransactionDB* db, ThreadModel* models, const std::string& where,
                     int* recovered_count) {
  std::vector<Transaction*> prepared;
  db->GetAllPreparedTransactions(&prepared);
  std::map<std::string, Transaction*> recovered;
  for (Transaction* txn : prepared) recovered[txn->GetName()] = txn;
  ASSERT_EQ(recovered.size(), prepared.size()) << where << ": two prepares of one name";
  const auto scan = Scan(db);
  for (int t = 0; t < kThreads; t++) {
    ThreadModel& m = models[t];
    const std::string what = where + " thread " + std::to_string(t);
    const int v = CheckPair(db, t, scan, what);
    if (testing::Test::HasFailure()) return;
    // The recovered prepare of this thread, if any: one at most, its last transaction.
    int r = -1;
    for (auto it = recovered.begin(); it != recovered.end();) {
      const int i = IndexOf(t, it->first);
      if (i < 0) {
        ++it;
        continue;
      }
      ASSERT_EQ(r, -1) << what << ": two recovered prepares";
      ASSERT_TRUE(i >= m.next && i <= m.attempted && Prepares(KindOf(t, i)))
          << what << ": recovered " << it->first << ", which the round never prepared (it began at "
          << m.next << ", last began " << m.attempted << ")";
      r = i;
      ++it;
    }
    const std::string visible =
        "visible " + std::to_string(v) + ", recovered " + std::to_string(r) +
        ", acknowledged commit " + std::to_string(m.committed) + ", prepare " +
        std::to_string(m.prepared) + ", finish " + std::to_string(m.resolved);
    ASSERT_GE(v, std::max(m.base, m.committed)) << what << ": a committed value lost; " << visible;
    if (v != m.base) {
      ASSERT_TRUE(v >= m.next && v <= m.attempted)
          << what << ": a value absent at the last check came back; " << visible;
      ASSERT_NE(KindOf(t, v), kPrepareRollback)
          << what << ": a rolled-back transaction is visible; " << visible;
    }
    if (r >= 0) {
      ASSERT_LT(v, r) << what << ": a prepared transaction is visible; " << visible;
      ASSERT_GT(r, m.resolved) << what << ": finished, yet recovered as prepared; " << visible;
    }
    if (m.prepared > m.resolved && KindOf(t, m.prepared) == kPrepareCommit) {
      ASSERT_TRUE(v == m.prepared || r == m.prepared)
          << what << ": an acknowledged prepare lost; " << visible;
    }
    int expect = v;
    if (r >= 0) {
      Transaction* txn = recovered[Name(t, r)];
      recovered.erase(Name(t, r));
      ASSERT_EQ(Transaction::PREPARED, txn->GetState()) << what;
      const bool commit = KindOf(t, r) == kPrepareCommit;
      ASSERT_OK(commit ? txn->Commit() : txn->Rollback());
      delete txn;
      if (commit) expect = r;
      ++*recovered_count;
    }
    const int after = CheckPair(db, t, Scan(db), what + " after resolving " + std::to_string(r));
    ASSERT_EQ(expect, after) << what << ": resolving the recovered prepare; " << visible;
    m.base = after;
    m.next = std::max(m.attempted, m.next - 1) + 1;
  }
  ASSERT_TRUE(recovered.empty()) << where << ": recovered an unknown transaction "
                                 << recovered.begin()->first;
  // The outcome becomes the next round's starting point: make it durable, so that only
  // that round's own writes are at risk at its power loss.
  WriteOptions sync;
  sync.sync = true;
  ASSERT_OK(db->Put(sync, "round", where));
}

Status OpenDB(const Config& c, Env* env, const std::string& dbname,
              std::unique_ptr<TransactionDB>* db) {
  Options o;
  o.create_if_missing = true;
  o.env = env;
  o.write_buffer_size = 16 << 10;  // memtable switches and flushes during every round
  TransactionDBOptions txn_options;
  UseWritePrepared(c, &o, &txn_options);
  txn_options.wp_commit_cache_bits = 4;
  // Every thread writes its own keys: nothing to lock, as the unordered recipe assumes.
  txn_options.skip_concurrency_control = c.unordered;
  TransactionDB* raw = nullptr;
  Status s = TransactionDB::Open(o, txn_options, dbname, &raw);
  db->reset(raw);
  return s;
}

// The first transaction of each thread this round.
std::vector<int> FirstOfRound(const ThreadModel* models) {
  std::vector<int> first(kThreads);
  for (int t = 0; t < kThreads; t++) first[t] = models[t].next;
  return first;
}

TEST(WritePreparedCrashTest, KilledChild) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  for (const Config& c : kWritePreparedConfigs) {
    SCOPED_TRACE(c.name);
    TempDirectory dir("wp_kill");
    const std::string dbname = dir.File("db");
    ThreadModel models[kThreads];
    int recovered = 0, begun = 0;
    for (int cycle = 0; cycle < CrashRounds() * 2; cycle++) {
      for (ThreadModel& m : models) m.StartRound();
      std::unique_ptr<TransactionDB> child_db;
      std::vector<CrashAck> reported;
      const std::string error = KillWritersAfter(
          20000 + rnd.Uniform(100000), FirstOfRound(models).data(),
          [&] { return OpenDB(c, Env::Default(), dbname, &child_db); },
          [&](int t, int i, const CrashAckFn& ack) {
            return RunTransaction(child_db.get(), t, i, ack);
          },
          &reported);
      ASSERT_EQ(error, "");
      // A process crash keeps whatever reached the WAL: every acknowledgement counts.
      for (const CrashAck& ack : reported) {
        models[ack.thread].Ack(ack.thread, ack.index, ack.stage);
        // One transaction at a time per thread: the next may have begun unacknowledged.
        models[ack.thread].attempted = std::max(models[ack.thread].attempted, ack.index + 1);
      }
      for (ThreadModel& m : models) m.attempted = std::max(m.attempted, m.next);
      const std::string where =
          std::string(c.name) + " cycle " + std::to_string(cycle) + " seed " + std::to_string(seed);
      std::unique_ptr<TransactionDB> db;
      Status s = OpenDB(c, Env::Default(), dbname, &db);
      ASSERT_TRUE(s.ok()) << where << ": " << s.ToString();
      begun += Begun(models);
      CheckAndResolve(db.get(), models, where, &recovered);
      if (HasFailure()) return;
    }
    fprintf(stderr, "%s: %d kills, %d transactions, %d prepared ones recovered\n", c.name,
            CrashRounds() * 2, begun, recovered);
  }
}

TEST(WritePreparedCrashTest, PowerLoss) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  for (const Config& c : kWritePreparedConfigs) {
    SCOPED_TRACE(c.name);
    TempDirectory dir("wp_power");
    const std::string dbname = dir.File("db");
    FaultInjectionTestEnv env(Env::Default());
    env.SetRealisticPowerLoss(true);
    ThreadModel models[kThreads];
    int recovered = 0, begun = 0;
    for (int round = 0; round < CrashRounds() * 2; round++) {
      const std::string where =
          std::string(c.name) + " round " + std::to_string(round) + " seed " + std::to_string(seed);
      std::unique_ptr<TransactionDB> db;
      Status s = OpenDB(c, &env, dbname, &db);
      ASSERT_TRUE(s.ok()) << where << ": " << s.ToString();
      for (ThreadModel& m : models) m.StartRound();
      // Only synced acknowledgements count: the other threads may lose anything unsynced.
      ASSERT_OK(PowerLossAfter(
          5000 + rnd.Uniform(40000), FirstOfRound(models).data(), &env,
          [&](int t, int i) {
            ThreadModel& m = models[t];
            m.attempted = i;
            return RunTransaction(db.get(), t, i, [&](int stage) {
              if (CrashWriterOptions(t).sync) m.Ack(t, i, stage);
            });
          },
          [&] { db.reset(); }))
          << where;

      s = OpenDB(c, &env, dbname, &db);
      ASSERT_TRUE(s.ok()) << "reopen " << where << ": " << s.ToString();
      begun += Begun(models);
      CheckAndResolve(db.get(), models, where, &recovered);
      if (HasFailure()) return;
    }
    fprintf(stderr, "%s: %d power losses, %d transactions, %d prepared ones recovered\n", c.name,
            CrashRounds() * 2, begun, recovered);
  }
}

// Holds every flush inside the creation of its table file until Release(), so that a test
// can write while the flush is under way (past its switch to a new WAL, before its
// MANIFEST edit).
class FlushHoldingEnv : public EnvWrapper {
 public:
  explicit FlushHoldingEnv(Env* target) : EnvWrapper(target) {}
  Status NewWritableFile(const std::string& f, std::unique_ptr<WritableFile>* r,
                         const EnvOptions& o) override {
    if (f.ends_with(".sst")) {
      std::unique_lock<std::mutex> l(mu_);
      held_ = true;
      cv_.notify_all();
      cv_.wait(l, [this] { return released_; });
    }
    return EnvWrapper::NewWritableFile(f, r, o);
  }
  void WaitUntilHeld() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [this] { return held_; });
  }
  void Release() {
    std::lock_guard<std::mutex> l(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false;
  bool released_ = false;
};

// Found by PowerLoss (TwoQueues, seed 55807423655831, under load): a rollback whose restoring
// records were not yet durable when a flush of the prepare's memtable recorded the WALs to
// keep. The prepare is in WAL 1 and its memtable; the flush switches to WAL 2 and, while it
// writes the table, the transaction rolls back (unsynced, into WAL 2). The flush then
// recorded that WAL 1 need not be replayed any more: nothing held it once the rollback
// resolved the prepare. The power loss takes WAL 2's tail, recovery starts at WAL 2, the
// prepare is unknown, and its records in the table read as committed: the rolled-back value
// was visible. The memtable the rollback's records go to must hold the prepare's WAL until it
// is flushed itself, as a WRITE_COMMITTED commit's does. The same for a commit with
// commit-time records (the prepared value may then be visible, but as committed).
TEST(WritePreparedCrashTest, RollbackUnsyncedWhileThePreparesMemtableFlushes) {
  for (const Config& c : kWritePreparedConfigs) {
    SCOPED_TRACE(c.name);
    TempDirectory dir("wp_rollback_flush");
    const std::string dbname = dir.File("db");
    FaultInjectionTestEnv fault(Env::Default());
    FlushHoldingEnv env(&fault);
    std::unique_ptr<TransactionDB> db;
    ASSERT_OK(OpenDB(c, &env, dbname, &db));
    WriteOptions sync;
    sync.sync = true;
    ASSERT_OK(db->Put(sync, "k", "old"));
    std::unique_ptr<Transaction> txn(db->BeginTransaction(WriteOptions()));
    ASSERT_OK(txn->SetName("rolled_back"));
    ASSERT_OK(txn->Put("k", "new"));
    ASSERT_OK(txn->Prepare());
    Status flushed;
    std::thread flush([&] { flushed = db->Flush(FlushOptions()); });
    env.WaitUntilHeld();
    ASSERT_OK(txn->Rollback());
    env.Release();
    flush.join();
    ASSERT_OK(flushed);
    txn.reset();
    // The rollback's records are in the current WAL, unsynced: the power loss takes them.
    fault.SetFilesystemActive(false);
    db.reset();
    ASSERT_OK(fault.SimulatePowerLoss());
    fault.SetFilesystemActive(true);

    ASSERT_OK(OpenDB(c, &fault, dbname, &db));
    std::string v;
    ASSERT_OK(db->Get(ReadOptions(), "k", &v));
    EXPECT_EQ("old", v) << "the rolled-back prepare is visible";
    std::vector<Transaction*> prepared;
    db->GetAllPreparedTransactions(&prepared);
    ASSERT_EQ(1u, prepared.size()) << "the prepare, its rollback lost, comes back prepared";
    EXPECT_EQ("rolled_back", prepared[0]->GetName());
    ASSERT_OK(prepared[0]->Rollback());
    delete prepared[0];
    ASSERT_OK(db->Get(ReadOptions(), "k", &v));
    EXPECT_EQ("old", v);
  }
}

}  // namespace
}  // namespace shale
