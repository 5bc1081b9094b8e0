// PointLockManager: exclusive and shared locks, re-entrancy and upgrade, timeouts, the
// lock limit, expired holders, a removed family's waiters woken, deadlock detection with
// its depth and its info ring, and
// many threads moving counters under the locks with exact final sums. Also the Status
// factories and predicates the transaction layer answers with.
#include "utilities/transactions/point_lock_manager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <latch>
#include <thread>
#include <vector>

#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

constexpr uint32_t kCf = 0;
constexpr int64_t kSecond = 1000 * 1000;

LockRequester Txn(TransactionID id, int64_t timeout_us = 0, bool detect = false) {
  LockRequester r;
  r.id = id;
  r.lock_timeout_us = timeout_us;
  r.deadlock_detect = detect;
  return r;
}

bool IsLockTimeout(const Status& s) {
  return s.IsTimedOut() && s.subcode() == Status::kLockTimeout;
}

uint64_t NowMicros() { return Env::Default()->NowMicros(); }

class PointLockManagerTest : public testing::Test {
 protected:
  explicit PointLockManagerTest(PointLockManager::Options options = {})
      : mgr_(std::make_unique<PointLockManager>(std::move(options))) {
    mgr_->AddColumnFamily(kCf);
  }
  void Recreate(PointLockManager::Options options) {
    mgr_ = std::make_unique<PointLockManager>(std::move(options));
    mgr_->AddColumnFamily(kCf);
  }
  // The lock on key in kCf as GetLockStatusData reports it; ids sorted, empty if none.
  KeyLockInfo Info(const std::string& key) {
    PointLockManager::LockStatusData data = mgr_->GetLockStatusData();
    for (auto& [cf, info] : data) {
      if (cf == kCf && info.key == key) {
        std::sort(info.ids.begin(), info.ids.end());
        return info;
      }
    }
    return KeyLockInfo{key, {}, false};
  }

  std::unique_ptr<PointLockManager> mgr_;
};

TEST(LockStatusTest, FactoriesAndPredicates) {
  Status timed_out = Status::TimedOut(Status::kLockTimeout);
  EXPECT_TRUE(timed_out.IsTimedOut());
  EXPECT_EQ(Status::kLockTimeout, timed_out.subcode());
  EXPECT_EQ("Operation timed out: Timeout waiting to lock key", timed_out.ToString());
  Status deadlock = Status::Busy(Status::kDeadlock);
  EXPECT_TRUE(deadlock.IsBusy());
  EXPECT_TRUE(deadlock.IsDeadlock());
  EXPECT_EQ("Resource busy: Deadlock", deadlock.ToString());
  EXPECT_FALSE(Status::Busy().IsDeadlock());
  EXPECT_FALSE(Status::Busy("conflict").IsDeadlock());
  EXPECT_EQ("Resource busy: conflict", Status::Busy("conflict").ToString());
  Status limit = Status::LockLimit();
  EXPECT_TRUE(limit.IsAborted());
  EXPECT_TRUE(limit.IsLockLimit());
  EXPECT_FALSE(Status::Aborted().IsLockLimit());
  EXPECT_FALSE(Status::Busy(Status::kLockLimit).IsLockLimit());
  Status not_prepared = Status::TxnNotPrepared();
  EXPECT_TRUE(not_prepared.IsInvalidArgument());
  EXPECT_TRUE(not_prepared.IsTxnNotPrepared());
  EXPECT_FALSE(Status::InvalidArgument("x").IsTxnNotPrepared());
  EXPECT_EQ(Status::kNone, Status::TimedOut().subcode());
  EXPECT_EQ(Status::kNone, Status::Aborted("why").subcode());
}

TEST_F(PointLockManagerTest, ExclusiveLockExcludesOthersUntilUnlocked) {
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "a", true));
  EXPECT_TRUE(IsLockTimeout(mgr_->TryLock(Txn(2), kCf, "a", true)));
  EXPECT_TRUE(IsLockTimeout(mgr_->TryLock(Txn(2), kCf, "a", false)));
  // Other keys and other column families are independent.
  ASSERT_OK(mgr_->TryLock(Txn(2), kCf, "b", true));
  mgr_->AddColumnFamily(7);
  ASSERT_OK(mgr_->TryLock(Txn(2), 7, "a", true));
  KeyLockInfo info = Info("a");
  EXPECT_TRUE(info.exclusive);
  EXPECT_EQ(std::vector<TransactionID>{1}, info.ids);

  mgr_->UnLock(2, kCf, "a");  // not its lock: nothing happens
  EXPECT_TRUE(IsLockTimeout(mgr_->TryLock(Txn(2), kCf, "a", true)));
  mgr_->UnLock(1, kCf, "a");
  ASSERT_OK(mgr_->TryLock(Txn(2), kCf, "a", true));
  EXPECT_EQ(std::vector<TransactionID>{2}, Info("a").ids);
}

TEST_F(PointLockManagerTest, SharedLocksShareAndExcludeWriters) {
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "k", false));
  ASSERT_OK(mgr_->TryLock(Txn(2), kCf, "k", false));
  ASSERT_OK(mgr_->TryLock(Txn(2), kCf, "k", false));  // again: still one entry
  KeyLockInfo info = Info("k");
  EXPECT_FALSE(info.exclusive);
  EXPECT_EQ((std::vector<TransactionID>{1, 2}), info.ids);
  EXPECT_TRUE(IsLockTimeout(mgr_->TryLock(Txn(3), kCf, "k", true)));
  mgr_->UnLock(1, kCf, "k");
  EXPECT_TRUE(IsLockTimeout(mgr_->TryLock(Txn(3), kCf, "k", true)));
  mgr_->UnLock(2, kCf, "k");
  ASSERT_OK(mgr_->TryLock(Txn(3), kCf, "k", true));
}

TEST_F(PointLockManagerTest, ReentrantAndUpgrade) {
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "x", true));
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "x", true));
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "x", false));
  EXPECT_TRUE(Info("x").exclusive);  // a shared request does not weaken it

  // A sole shared holder upgrades in place.
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "y", false));
  EXPECT_FALSE(Info("y").exclusive);
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "y", true));
  EXPECT_TRUE(Info("y").exclusive);
  EXPECT_TRUE(IsLockTimeout(mgr_->TryLock(Txn(2), kCf, "y", false)));

  // With another shared holder the upgrade waits for it.
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "z", false));
  ASSERT_OK(mgr_->TryLock(Txn(2), kCf, "z", false));
  EXPECT_TRUE(IsLockTimeout(mgr_->TryLock(Txn(1), kCf, "z", true)));
  mgr_->UnLock(2, kCf, "z");
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "z", true));
  EXPECT_TRUE(Info("z").exclusive);

  // Locks are not counted: one UnLock releases however often it was locked.
  mgr_->UnLock(1, kCf, std::vector<std::string>{"x", "y", "z", "never-locked"});
  EXPECT_TRUE(mgr_->GetLockStatusData().empty());
}

TEST_F(PointLockManagerTest, ColumnFamilies) {
  Status s = mgr_->TryLock(Txn(1), 3, "k", true);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  mgr_->AddColumnFamily(3);
  ASSERT_OK(mgr_->TryLock(Txn(1), 3, "k", true));
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "k", true));
  PointLockManager::LockStatusData data = mgr_->GetLockStatusData();
  EXPECT_EQ(1u, data.count(3));
  EXPECT_EQ(1u, data.count(kCf));
  mgr_->RemoveColumnFamily(3);
  EXPECT_TRUE(mgr_->TryLock(Txn(2), 3, "k", true).IsInvalidArgument());
  mgr_->UnLock(1, 3, "k");  // harmless after the removal
  EXPECT_EQ(0u, mgr_->GetLockStatusData().count(3));
  // The default family (kCf, 0), found without the families' mutex, is never removed.
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "d", true));
  mgr_->RemoveColumnFamily(kCf);
  EXPECT_TRUE(IsLockTimeout(mgr_->TryLock(Txn(2), kCf, "d", true)));
  mgr_->UnLock(1, kCf, "d");
  ASSERT_OK(mgr_->TryLock(Txn(2), kCf, "d", true));
  EXPECT_EQ(std::vector<TransactionID>{2}, Info("d").ids);
}

TEST_F(PointLockManagerTest, WaitEndsAtTheTimeout) {
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "k", true));
  const int64_t timeout = 200 * 1000;
  uint64_t start = NowMicros();
  Status s = mgr_->TryLock(Txn(2, timeout), kCf, "k", true);
  uint64_t waited = NowMicros() - start;
  EXPECT_TRUE(IsLockTimeout(s)) << s.ToString();
  EXPECT_GE(waited, static_cast<uint64_t>(timeout));
  // Trying once does not wait for the timeout.
  EXPECT_TRUE(IsLockTimeout(mgr_->TryLock(Txn(2, 0), kCf, "k", false)));
}

TEST_F(PointLockManagerTest, UnlockWakesWaiters) {
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "k", true));
  std::atomic<bool> released{false};
  Status forever, bounded;
  std::thread waiter_forever([&] {
    forever = mgr_->TryLock(Txn(2, -1), kCf, "k", false);
    EXPECT_TRUE(released.load());
  });
  std::thread waiter_bounded([&] {
    bounded = mgr_->TryLock(Txn(3, 60 * kSecond), kCf, "k", false);
    EXPECT_TRUE(released.load());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  released = true;
  mgr_->UnLock(1, kCf, "k");
  waiter_forever.join();
  waiter_bounded.join();
  ASSERT_OK(forever);
  ASSERT_OK(bounded);
  EXPECT_EQ((std::vector<TransactionID>{2, 3}), Info("k").ids);
}

// Removing a family ends the waits on its keys at once, with ColumnFamilyDropped (a
// deadlock-detecting waiter too); a waiter of another family waits on for its own lock.
TEST_F(PointLockManagerTest, RemovingAFamilyWakesItsWaiters) {
  constexpr uint32_t kOther = 5;
  mgr_->AddColumnFamily(kOther);
  ASSERT_OK(mgr_->TryLock(Txn(1), kOther, "k", true));
  ASSERT_OK(mgr_->TryLock(Txn(1), kOther, "j", true));
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "k", true));
  Status plain, detecting, elsewhere;
  std::thread t1([&] { plain = mgr_->TryLock(Txn(2, 60 * kSecond), kOther, "k", true); });
  std::thread t2(
      [&] { detecting = mgr_->TryLock(Txn(3, 60 * kSecond, true), kOther, "j", false); });
  std::atomic<bool> released{false};
  std::thread t3([&] {
    elsewhere = mgr_->TryLock(Txn(4, 60 * kSecond), kCf, "k", true);
    EXPECT_TRUE(released.load());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const uint64_t start = NowMicros();
  mgr_->RemoveColumnFamily(kOther);
  t1.join();
  t2.join();
  EXPECT_LT(NowMicros() - start, 30 * kSecond);
  EXPECT_TRUE(plain.IsColumnFamilyDropped()) << plain.ToString();
  EXPECT_TRUE(detecting.IsColumnFamilyDropped()) << detecting.ToString();
  EXPECT_EQ(0u, mgr_->GetLockStatusData().count(kOther));
  released = true;
  mgr_->UnLock(1, kCf, "k");
  t3.join();
  ASSERT_OK(elsewhere);
  EXPECT_EQ(std::vector<TransactionID>{4}, Info("k").ids);
}

TEST_F(PointLockManagerTest, LockLimitCountsKeysPerColumnFamily) {
  PointLockManager::Options options;
  options.max_num_locks = 2;
  Recreate(options);
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "a", false));
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "b", true));
  Status s = mgr_->TryLock(Txn(1, kSecond), kCf, "c", true);
  EXPECT_TRUE(s.IsLockLimit()) << s.ToString();
  EXPECT_EQ("Operation aborted: Failed to acquire lock due to max_num_locks limit", s.ToString());
  // Keys already locked are not new: re-locking and sharing them is fine.
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "b", true));
  ASSERT_OK(mgr_->TryLock(Txn(2), kCf, "a", false));
  mgr_->UnLock(1, kCf, "a");  // still held by 2: the count stays
  EXPECT_TRUE(mgr_->TryLock(Txn(1), kCf, "c", true).IsLockLimit());
  mgr_->AddColumnFamily(9);  // another family has its own count
  ASSERT_OK(mgr_->TryLock(Txn(1), 9, "c", true));
  mgr_->UnLock(2, kCf, "a");
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "c", true));
  EXPECT_TRUE(mgr_->TryLock(Txn(1), kCf, "d", true).IsLockLimit());
}

TEST_F(PointLockManagerTest, ExpiredHoldersLoseTheirLocks) {
  std::atomic<int> asked{0};
  std::atomic<bool> agree{true};
  PointLockManager::Options options;
  options.try_steal_expired = [&](TransactionID id) {
    EXPECT_EQ(1u, id);
    asked++;
    return agree.load();
  };
  Recreate(options);
  LockRequester holder = Txn(1);
  const uint64_t expires = NowMicros() + 150 * 1000;
  holder.expiration_time_us = expires;
  ASSERT_OK(mgr_->TryLock(holder, kCf, "k", true));
  ASSERT_OK(mgr_->TryLock(Txn(3), kCf, "never", true));  // expiration 0: never stolen

  // Before it expires, a try fails; a wait ends at the expiration and steals the lock.
  EXPECT_TRUE(IsLockTimeout(mgr_->TryLock(Txn(2), kCf, "k", true)));
  EXPECT_EQ(0, asked.load());
  ASSERT_OK(mgr_->TryLock(Txn(2, 60 * kSecond), kCf, "k", true));
  EXPECT_GE(NowMicros(), expires);
  EXPECT_EQ(1, asked.load());
  EXPECT_EQ(std::vector<TransactionID>{2}, Info("k").ids);
  mgr_->UnLock(1, kCf, "k");  // the expired holder's unlock changes nothing
  EXPECT_EQ(std::vector<TransactionID>{2}, Info("k").ids);
  EXPECT_TRUE(IsLockTimeout(mgr_->TryLock(Txn(4, 50 * 1000), kCf, "never", true)));

  // A holder that refuses keeps its lock.
  holder.expiration_time_us = NowMicros();
  ASSERT_OK(mgr_->TryLock(holder, kCf, "j", true));
  agree = false;
  EXPECT_TRUE(IsLockTimeout(mgr_->TryLock(Txn(2, 50 * 1000), kCf, "j", true)));
  EXPECT_EQ(std::vector<TransactionID>{1}, Info("j").ids);
}

TEST_F(PointLockManagerTest, WithoutDetectionADeadlockTimesOut) {
  ASSERT_OK(mgr_->TryLock(Txn(1), kCf, "a", true));
  ASSERT_OK(mgr_->TryLock(Txn(2), kCf, "b", true));
  Status first;
  std::thread t([&] { first = mgr_->TryLock(Txn(1, 300 * 1000), kCf, "b", true); });
  Status s = mgr_->TryLock(Txn(2, 300 * 1000), kCf, "a", true);
  t.join();
  EXPECT_TRUE(IsLockTimeout(s)) << s.ToString();
  EXPECT_TRUE(IsLockTimeout(first)) << first.ToString();
  EXPECT_TRUE(mgr_->GetDeadlockInfoBuffer().empty());
}

// n transactions each hold one key and want the next one's (a cycle; n = 2 is two
// transactions locking in opposite orders): exactly one is told of the deadlock, whichever
// closes the cycle, and the others finish once it lets go. *newest is the newest entry of
// the deadlock buffer: the whole cycle, ending with the victim, or limit_exceeded when
// depth is below n.
void RunCycle(PointLockManager* mgr, int n, int64_t depth, DeadlockPath* newest) {
  std::vector<std::string> keys;
  for (int t = 0; t < n; t++) keys.push_back("k" + std::to_string(t));
  std::vector<Status> second(n);
  std::latch all_hold_first(n);
  std::vector<std::thread> threads;
  for (int t = 0; t < n; t++) {
    threads.emplace_back([&, t] {
      LockRequester me = Txn(t + 1, 60 * kSecond, true);
      me.deadlock_detect_depth = depth;
      ASSERT_OK(mgr->TryLock(me, kCf, keys[t], true));
      all_hold_first.arrive_and_wait();
      second[t] = mgr->TryLock(me, kCf, keys[(t + 1) % n], true);
      mgr->UnLock(me.id, kCf, std::vector<std::string>{keys[t], keys[(t + 1) % n]});
    });
  }
  for (auto& th : threads) th.join();
  int victim = -1;
  for (int t = 0; t < n; t++) {
    if (second[t].IsDeadlock()) {
      EXPECT_EQ(-1, victim) << "a second victim";
      victim = t;
    } else {
      EXPECT_OK(second[t]);
    }
  }
  ASSERT_NE(-1, victim);
  std::vector<DeadlockPath> buffer = mgr->GetDeadlockInfoBuffer();
  ASSERT_FALSE(buffer.empty());
  *newest = buffer[0];
  EXPECT_GT(newest->deadlock_time, 0);
  if (newest->limit_exceeded) return;
  // Each entry waits for the key the next one holds; the last is the victim.
  ASSERT_EQ(static_cast<size_t>(n), newest->path.size());
  EXPECT_EQ(static_cast<TransactionID>(victim + 1), newest->path.back().m_txn_id);
  for (size_t i = 0; i < newest->path.size(); i++) {
    const DeadlockInfo& d = newest->path[i];
    EXPECT_EQ(keys[d.m_txn_id % n], d.m_waiting_key);
    EXPECT_EQ(kCf, d.m_cf_id);
    EXPECT_TRUE(d.m_exclusive);
    if (i + 1 < newest->path.size()) {
      EXPECT_EQ(d.m_txn_id % n + 1, newest->path[i + 1].m_txn_id);
    }
  }
}

// Two transactions locking in opposite orders, a three-transaction cycle, and the same
// cycle with a search depth below its length.
TEST_F(PointLockManagerTest, CyclesAreDetectedUpToTheDepth) {
  struct Case {
    int n;
    int64_t depth;
    bool limit_exceeded;
  };
  for (const Case& c : {Case{2, 50, false}, Case{3, 50, false}, Case{3, 2, true}}) {
    SCOPED_TRACE("n=" + std::to_string(c.n) + " depth=" + std::to_string(c.depth));
    Recreate({});
    DeadlockPath path;
    RunCycle(mgr_.get(), c.n, c.depth, &path);
    EXPECT_EQ(c.limit_exceeded, path.limit_exceeded);
    EXPECT_EQ(c.limit_exceeded ? 0u : static_cast<size_t>(c.n), path.path.size());
    EXPECT_EQ(1u, mgr_->GetDeadlockInfoBuffer().size());
  }
}

TEST(DeadlockInfoBufferTest, RingKeepsTheNewestFirst) {
  auto path = [](TransactionID id) {
    return DeadlockPath(std::vector<DeadlockInfo>{{id, 0, true, "k"}}, 1);
  };
  auto ids = [](const std::vector<DeadlockPath>& paths) {
    std::vector<TransactionID> out;
    for (const DeadlockPath& p : paths) out.push_back(p.path.empty() ? 0 : p.path[0].m_txn_id);
    return out;
  };
  DeadlockInfoBuffer buffer(5);
  EXPECT_TRUE(buffer.PrepareBuffer().empty());
  for (TransactionID i = 1; i <= 3; i++) buffer.AddNewPath(path(i));
  EXPECT_EQ((std::vector<TransactionID>{3, 2, 1}), ids(buffer.PrepareBuffer()));
  for (TransactionID i = 4; i <= 7; i++) buffer.AddNewPath(path(i));
  EXPECT_EQ((std::vector<TransactionID>{7, 6, 5, 4, 3}), ids(buffer.PrepareBuffer()));
  buffer.Resize(2);
  EXPECT_EQ((std::vector<TransactionID>{7, 6}), ids(buffer.PrepareBuffer()));
  buffer.AddNewPath(path(8));
  EXPECT_EQ((std::vector<TransactionID>{8, 7}), ids(buffer.PrepareBuffer()));
  buffer.Resize(4);
  buffer.AddNewPath(path(9));
  EXPECT_EQ((std::vector<TransactionID>{9, 8, 7}), ids(buffer.PrepareBuffer()));
  buffer.AddNewPath(DeadlockPath(1, true));
  std::vector<DeadlockPath> got = buffer.PrepareBuffer();
  ASSERT_EQ(4u, got.size());
  EXPECT_TRUE(got[0].limit_exceeded);
  buffer.Resize(0);
  buffer.AddNewPath(path(10));
  EXPECT_TRUE(buffer.PrepareBuffer().empty());
}

TEST_F(PointLockManagerTest, ManagerBufferIsBoundedAndResizable) {
  PointLockManager::Options options;
  options.max_num_deadlocks = 1;
  Recreate(options);
  DeadlockPath path;
  RunCycle(mgr_.get(), 3, 50, &path);
  RunCycle(mgr_.get(), 3, 2, &path);
  std::vector<DeadlockPath> buffer = mgr_->GetDeadlockInfoBuffer();
  ASSERT_EQ(1u, buffer.size());  // only the newest is kept
  EXPECT_TRUE(buffer[0].limit_exceeded);
  mgr_->Resize(3);
  RunCycle(mgr_.get(), 3, 50, &path);
  buffer = mgr_->GetDeadlockInfoBuffer();
  ASSERT_EQ(2u, buffer.size());  // newest first
  EXPECT_FALSE(buffer[0].limit_exceeded);
  EXPECT_TRUE(buffer[1].limit_exceeded);
  mgr_->Resize(0);
  EXPECT_TRUE(mgr_->GetDeadlockInfoBuffer().empty());
}

// Threads move counters under exclusive locks taken in random order (and sometimes as a
// shared lock upgraded later), readers look under shared locks, and every Busy or
// TimedOut releases everything and retries. The counters are plain ints: a lock that
// failed to exclude would lose increments (and ThreadSanitizer would see the race).
TEST_F(PointLockManagerTest, ConcurrentCountersStayExact) {
  const int kThreads = 8;
  const int kKeys = 12;
  const int kRounds = TestKnob("SHALE_LOCK_STRESS_ROUNDS", 500);
  const uint64_t seed = TestSeed();
  std::vector<int64_t> counters(kKeys, 0);
  std::vector<std::vector<int64_t>> expected(kThreads, std::vector<int64_t>(kKeys, 0));
  std::atomic<int> deadlocks{0}, timeouts{0};
  auto key = [](int i) { return Key(i); };

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      Random rnd(seed + t);
      // One thread does without deadlock detection: the cycles through it end when it
      // times out, which it does soon.
      const bool detect = t != kThreads - 1;
      LockRequester me = Txn(t + 1, detect ? 10 * 1000 : 1000, detect);
      for (int round = 0; round < kRounds; round++) {
        std::vector<int> picks;
        while (picks.size() < 3) {
          int k = static_cast<int>(rnd.Uniform(kKeys));
          if (std::find(picks.begin(), picks.end(), k) == picks.end()) picks.push_back(k);
        }
        const bool reader = rnd.OneIn(4);
        const bool upgrade = !reader && rnd.OneIn(3);
        const bool collide = rnd.OneIn(2);
        for (;;) {
          std::vector<std::string> held;
          Status s;
          for (int k : picks) {
            s = mgr_->TryLock(me, kCf, key(k), !reader && !upgrade);
            if (!s.ok()) break;
            held.push_back(key(k));
            // On two cores, yielding while holding locks is what makes threads collide.
            if (collide) std::this_thread::yield();
          }
          if (s.ok() && upgrade) {
            for (int k : picks) {
              s = mgr_->TryLock(me, kCf, key(k), true);
              if (!s.ok()) break;
            }
          }
          if (s.ok()) {
            int64_t sum = 0;
            for (int k : picks) {
              if (reader) {
                sum += counters[k];
              } else {
                // Read, maybe yield, write: a second writer let in would lose an update.
                const int64_t v = counters[k];
                if (collide) std::this_thread::yield();
                counters[k] = v + 1;
                expected[t][k]++;
              }
            }
            EXPECT_GE(sum, 0);
          } else if (s.IsDeadlock()) {
            deadlocks++;
          } else {
            ASSERT_TRUE(IsLockTimeout(s)) << s.ToString();
            timeouts++;
          }
          mgr_->UnLock(me.id, kCf, held);
          if (s.ok()) break;
          std::this_thread::yield();  // let the transaction that won go on
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int k = 0; k < kKeys; k++) {
    int64_t want = 0;
    for (int t = 0; t < kThreads; t++) want += expected[t][k];
    EXPECT_EQ(want, counters[k]) << "counter " << k;
  }
  EXPECT_TRUE(mgr_->GetLockStatusData().empty());
  fprintf(stderr, "deadlocks %d, timeouts %d\n", deadlocks.load(), timeouts.load());
}

}  // namespace
}  // namespace shale
