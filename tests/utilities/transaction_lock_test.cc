// TransactionDB's concurrency control: write conflicts under a snapshot (Busy) wherever the
// newer write lives (memtable, immutable memtable, file) and DBImpl::GetLatestSequenceForKey
// beneath them; lock timeouts (TimedOut, the wait at least the timeout); plain writes that
// lock; shared locks and GetLockStatusData; the lock limit; expiration and stolen locks;
// assume_tracked; two threads locking in opposite orders (IsDeadlock); and many threads
// incrementing counters with GetForUpdate + Put + Commit, exact after reopen and
// compaction.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "db/db_impl.h"
#include "shale/utilities/merge_operators.h"
#include "tests/utilities/transaction_fixture.h"
#include "util/coding.h"
#include "util/random.h"

namespace shale {
namespace {

bool IsLockTimeout(const Status& s) {
  return s.IsTimedOut() && s.subcode() == Status::kLockTimeout;
}

class TransactionLockTest : public TransactionTestBase {
 protected:
  TransactionLockTest() { Open(); }
  DBImpl* impl() { return static_cast<DBImpl*>(db_->GetRootDB()); }
  // Milliseconds f takes.
  template <typename F>
  static int64_t Millis(F&& f) {
    auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start)
        .count();
  }
};

TEST_F(TransactionLockTest, LatestSequenceForKey) {
  SequenceNumber seq;
  bool found;
  ASSERT_OK(impl()->GetLatestSequenceForKey(nullptr, "k", false, &seq, &found));
  EXPECT_FALSE(found);
  ASSERT_OK(db_->Put(WriteOptions(), "k", "v1"));
  const SequenceNumber first = db_->GetLatestSequenceNumber();
  ASSERT_OK(db_->Put(WriteOptions(), "other", "v"));
  ASSERT_OK(impl()->GetLatestSequenceForKey(nullptr, "k", true, &seq, &found));
  EXPECT_TRUE(found);
  EXPECT_EQ(seq, first);
  // Only in a file now: cache_only cannot see it, and says from which sequence on the
  // memtables hold every write (the one after the flushed writes).
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(impl()->GetLatestSequenceForKey(nullptr, "k", true, &seq, &found));
  EXPECT_FALSE(found);
  EXPECT_EQ(seq, first + 2);
  ASSERT_OK(impl()->GetLatestSequenceForKey(nullptr, "k", false, &seq, &found));
  EXPECT_TRUE(found);
  EXPECT_EQ(seq, first);
  // A newer tombstone or operand is the newest write, over the file's Put.
  ASSERT_OK(db_->Delete(WriteOptions(), "k"));
  const SequenceNumber del = db_->GetLatestSequenceNumber();
  ASSERT_OK(impl()->GetLatestSequenceForKey(nullptr, "k", false, &seq, &found));
  EXPECT_TRUE(found);
  EXPECT_EQ(seq, del);
  // cache_only and absent: still the first sequence after the flush (the tombstone's).
  ASSERT_OK(impl()->GetLatestSequenceForKey(nullptr, "absent", true, &seq, &found));
  EXPECT_FALSE(found);
  EXPECT_EQ(seq, del);
}

TEST_F(TransactionLockTest, WriteAfterSnapshotIsBusyWhereverItLives) {
  ASSERT_OK(db_->Put(WriteOptions(), "before", "v"));
  auto txn = Begin();
  txn->SetSnapshot();
  ASSERT_OK(db_->Put(WriteOptions(), "in_file", "v"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(db_->Put(WriteOptions(), "in_mem", "v"));
  ASSERT_OK(db_->Delete(WriteOptions(), "deleted"));
  ASSERT_OK(db_->SingleDelete(WriteOptions(), "sdeleted"));

  EXPECT_TRUE(txn->Put("in_file", "t").IsBusy());
  EXPECT_TRUE(txn->Put("in_mem", "t").IsBusy());
  EXPECT_TRUE(txn->Delete("deleted").IsBusy());
  EXPECT_TRUE(txn->Merge("sdeleted", "t").IsBusy());
  std::string value;
  EXPECT_TRUE(txn->GetForUpdate(ReadOptions(), "in_mem", &value).IsBusy());
  // A failed check leaves the key unlocked and untracked.
  EXPECT_EQ(txn->GetNumKeys(), 0u);
  ASSERT_OK(db_->Put(WriteOptions(), "in_mem", "again"));
  // Written before the snapshot, or never: no conflict.
  ASSERT_OK(txn->Put("before", "t"));
  ASSERT_OK(txn->Put("never", "t"));
  // Told not to validate, or writing untracked: no check.
  ASSERT_OK(txn->GetForUpdate(ReadOptions(), "in_file", &value, true, /*do_validate=*/false));
  ASSERT_OK(txn->PutUntracked("in_mem", "t"));
  // Locking without the check proves nothing about the snapshot: a checked write still
  // finds the conflict. A key locked and checked, though, stays good.
  EXPECT_TRUE(txn->Put("in_file", "t").IsBusy());
  ASSERT_OK(txn->Put("before", "t2"));
  ASSERT_OK(txn->Commit());
  EXPECT_EQ(Get("in_mem"), "t");
}

TEST_F(TransactionLockTest, WithoutSnapshotOnlyLaterWritesMatter) {
  ASSERT_OK(db_->Put(WriteOptions(), "k", "v"));
  auto txn = Begin();
  ASSERT_OK(txn->Put("k", "t"));  // no snapshot: written before the lock is fine
  // A snapshot set afterwards does not re-check keys already locked.
  txn->SetSnapshot();
  ASSERT_OK(txn->Put("k", "t2"));
  ASSERT_OK(txn->Commit());
  EXPECT_EQ(Get("k"), "t2");
}

TEST_F(TransactionLockTest, AssumeTracked) {
  auto txn = Begin();
  EXPECT_TRUE(txn->Put(nullptr, "k", "v", /*assume_tracked=*/true).IsInvalidArgument());
  txn->SetSnapshot();
  std::string value;
  ASSERT_TRUE(txn->GetForUpdate(ReadOptions(), "k", &value).IsNotFound());
  ASSERT_OK(txn->Put(nullptr, "k", "v", /*assume_tracked=*/true));
  ASSERT_OK(txn->Merge(nullptr, "k", "m", true));
  ASSERT_OK(txn->Delete(nullptr, "k", true));
  ASSERT_OK(txn->SingleDelete(nullptr, "k", true));
  ASSERT_OK(txn->Commit());
}

TEST_F(TransactionLockTest, LockTimeoutIsRespected) {
  auto holder = Begin();
  ASSERT_OK(holder->Put("k", "held"));

  TransactionOptions o;
  o.lock_timeout = 0;  // try once
  auto waiter = Begin(o);
  EXPECT_TRUE(IsLockTimeout(waiter->Put("k", "w")));
  waiter->SetLockTimeout(300);
  Status s;
  EXPECT_GE(Millis([&] { s = waiter->Put("k", "w"); }), 300);
  EXPECT_TRUE(IsLockTimeout(s)) << s.ToString();
  std::string value;
  EXPECT_GE(Millis([&] { s = waiter->GetForUpdate(ReadOptions(), "k", &value); }), 300);
  EXPECT_TRUE(IsLockTimeout(s)) << s.ToString();
  // The transaction_lock_timeout default (100 ms in this fixture).
  auto plain = Begin();
  EXPECT_GE(Millis([&] { s = plain->Delete("k"); }), 100);
  EXPECT_TRUE(IsLockTimeout(s)) << s.ToString();
  // Writes outside a transaction wait default_lock_timeout, then give up.
  EXPECT_GE(Millis([&] { s = db_->Put(WriteOptions(), "k", "outside"); }), 100);
  EXPECT_TRUE(IsLockTimeout(s)) << s.ToString();
  EXPECT_EQ(Get("k"), "NOT_FOUND");

  // A waiter whose holder lets go in time gets the lock.
  waiter->SetLockTimeout(60 * 1000);
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_OK(holder->Commit());
  });
  ASSERT_OK(waiter->Put("k", "w"));
  release.join();
  ASSERT_OK(waiter->Commit());
  EXPECT_EQ(Get("k"), "w");
}

TEST_F(TransactionLockTest, PlainWritesTakeLocks) {
  auto holder = Begin();
  for (const char* k : {"a", "b", "c", "d"}) ASSERT_OK(holder->Put(k, "held"));
  EXPECT_TRUE(IsLockTimeout(db_->Put(WriteOptions(), "a", "x")));
  EXPECT_TRUE(IsLockTimeout(db_->Delete(WriteOptions(), "b")));
  EXPECT_TRUE(IsLockTimeout(db_->SingleDelete(WriteOptions(), "c")));
  EXPECT_TRUE(IsLockTimeout(db_->Merge(WriteOptions(), "d", "x")));
  WriteBatch batch;
  ASSERT_OK(batch.Put("free", "x"));
  ASSERT_OK(batch.Put("a", "x"));
  EXPECT_TRUE(IsLockTimeout(db_->Write(WriteOptions(), &batch)));
  // All or nothing: the free key was not written either, and is not left locked.
  EXPECT_EQ(Get("free"), "NOT_FOUND");
  ASSERT_OK(holder->Put("free", "held"));
  ASSERT_OK(holder->Rollback());
  ASSERT_OK(db_->Write(WriteOptions(), &batch));
  EXPECT_EQ(Get("a"), "x");
  EXPECT_EQ(Get("free"), "x");
}

// A plain write the DB refuses after its keys were locked gives every lock back.
TEST_F(TransactionLockTest, RefusedPlainWriteLeavesNoLock) {
  WriteBatch batch;
  ASSERT_OK(batch.Put("a", "x"));
  ASSERT_OK(batch.Put("b", "x"));
  WriteOptions refused;
  refused.sync = true;
  refused.disableWAL = true;  // sync without the WAL: InvalidArgument from the DB
  EXPECT_TRUE(db_->Write(refused, &batch).IsInvalidArgument());
  EXPECT_TRUE(db_->GetLockStatusData().empty());
  auto txn = Begin();
  ASSERT_OK(txn->Put("b", "t"));  // would time out on a leftover lock
  ASSERT_OK(txn->Commit());
}

TEST_F(TransactionLockTest, SharedLocksAndLockStatus) {
  auto r1 = Begin();
  auto r2 = Begin();
  auto w = Begin();
  ASSERT_OK(r1->GetForUpdate(ReadOptions(), "s", static_cast<std::string*>(nullptr),
                             /*exclusive=*/false));
  ASSERT_OK(r2->GetForUpdate(ReadOptions(), "s", static_cast<std::string*>(nullptr),
                             /*exclusive=*/false));
  ASSERT_OK(w->Put("x", "v"));
  EXPECT_TRUE(IsLockTimeout(w->Put("s", "v")));
  auto locks = db_->GetLockStatusData();
  ASSERT_EQ(locks.size(), 2u);
  for (const auto& [cf, info] : locks) {
    EXPECT_EQ(cf, 0u);
    std::vector<TransactionID> ids = info.ids;
    std::sort(ids.begin(), ids.end());
    if (info.key == "s") {
      EXPECT_FALSE(info.exclusive);
      std::vector<TransactionID> want = {r1->GetID(), r2->GetID()};
      std::sort(want.begin(), want.end());
      EXPECT_EQ(ids, want);
    } else {
      EXPECT_EQ(info.key, "x");
      EXPECT_TRUE(info.exclusive);
      EXPECT_EQ(ids, std::vector<TransactionID>{w->GetID()});
    }
  }
  // The last shared holder may upgrade.
  ASSERT_OK(r2->Rollback());
  ASSERT_OK(r1->Put("s", "r1"));
  ASSERT_OK(r1->Commit());
  ASSERT_OK(w->Commit());
  EXPECT_TRUE(db_->GetLockStatusData().empty());
}

TEST_F(TransactionLockTest, LockLimit) {
  txn_db_options_.max_num_locks = 2;
  Reopen();
  auto txn = Begin();
  ASSERT_OK(txn->Put("a", "v"));
  ASSERT_OK(txn->Put("b", "v"));
  ASSERT_OK(txn->Put("a", "again"));  // already held: not a new lock
  Status s = txn->Put("c", "v");
  EXPECT_TRUE(s.IsLockLimit()) << s.ToString();
  EXPECT_TRUE(db_->Put(WriteOptions(), "d", "v").IsLockLimit());
  ASSERT_OK(txn->Commit());
  ASSERT_OK(db_->Put(WriteOptions(), "d", "v"));
}

TEST_F(TransactionLockTest, ExpiredTransactionLosesItsLocks) {
  TransactionOptions o;
  o.expiration = 300;  // long enough for the first attempt below, even on a busy machine
  auto old = Begin(o);
  ASSERT_OK(old->Put("k", "old"));
  // Not expired yet: the lock holds.
  auto young = Begin();
  young->SetLockTimeout(0);
  EXPECT_TRUE(IsLockTimeout(young->Put("k", "young")));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  ASSERT_OK(young->Put("k", "young"));
  EXPECT_EQ(old->GetState(), Transaction::LOCKS_STOLEN);
  EXPECT_TRUE(old->Commit().IsExpired());
  ASSERT_OK(young->Commit());
  EXPECT_EQ(Get("k"), "young");
  ASSERT_OK(old->Rollback());

  // Expired with nobody taking its locks: still too late to commit.
  auto late = Begin(o);
  ASSERT_OK(late->Put("j", "late"));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_TRUE(late->Commit().IsExpired());
  EXPECT_EQ(Get("j"), "NOT_FOUND");
}

TEST_F(TransactionLockTest, OppositeOrdersDeadlock) {
  TransactionOptions o;
  o.deadlock_detect = true;
  o.lock_timeout = 60 * 1000;  // a deadlock must be found, not waited out
  auto a = Begin(o);
  auto b = Begin(o);
  ASSERT_OK(a->Put("1", "a"));
  ASSERT_OK(b->Put("2", "b"));
  std::latch both_hold(2);
  Status sa, sb;
  std::thread ta([&] {
    both_hold.arrive_and_wait();
    sa = a->Put("2", "a");
    // The survivor finishes once the victim lets go.
    if (sa.IsDeadlock()) {
      EXPECT_OK(a->Rollback());
    }
  });
  both_hold.arrive_and_wait();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  sb = b->Put("1", "b");
  if (sb.IsDeadlock()) {
    EXPECT_OK(b->Rollback());
  }
  ta.join();
  EXPECT_TRUE(sa.IsDeadlock() != sb.IsDeadlock()) << sa.ToString() << " / " << sb.ToString();
  EXPECT_TRUE(sa.ok() || sb.ok());
  std::vector<DeadlockPath> paths = db_->GetDeadlockInfoBuffer();
  ASSERT_FALSE(paths.empty());
  ASSERT_EQ(paths[0].path.size(), 2u);
  EXPECT_FALSE(paths[0].limit_exceeded);
  const TransactionID victim = sa.IsDeadlock() ? a->GetID() : b->GetID();
  EXPECT_EQ(paths[0].path.back().m_txn_id, victim);
  db_->SetDeadlockInfoBufferSize(0);
  EXPECT_TRUE(db_->GetDeadlockInfoBuffer().empty());
  ASSERT_OK((sa.ok() ? a : b)->Commit());
}

// Plain writes lock their keys in key order whatever the batch's order, so two of them
// never wait for each other in a cycle: threads merge 1 into random keys of 6 (in random
// order, some twice per batch), with a lock timeout far longer than any write, and every
// write succeeds; each key ends at the number of merges into it. (Locked in batch order,
// two writes deadlock and time out.)
TEST_F(TransactionLockTest, PlainWritesInAnyKeyOrderNeverDeadlock) {
  options_.merge_operator = MergeOperators::CreateFromStringId("uint64add");
  txn_db_options_.default_lock_timeout = 5000;
  Reopen();
  constexpr int kThreads = 4, kKeys = 6;
  const int rounds = TestKnob("SHALE_TXN_ROUNDS", 300);
  const uint64_t seed = TestSeed();
  std::vector<std::atomic<uint64_t>> merges(kKeys);
  for (auto& m : merges) m = 0;
  std::string one;
  PutFixed64(&one, 1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      Random rnd(static_cast<uint32_t>(seed + t));
      for (int i = 0; i < rounds; i++) {
        WriteBatch batch;
        const int n = 2 + static_cast<int>(rnd.Uniform(7));
        std::vector<int> picked;
        for (int j = 0; j < n; j++) {
          const int k = static_cast<int>(rnd.Uniform(kKeys));
          ASSERT_OK(batch.Merge("key" + std::to_string(k), one));
          picked.push_back(k);
        }
        ASSERT_OK(db_->Write(WriteOptions(), &batch));
        for (int k : picked) merges[k]++;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int k = 0; k < kKeys; k++) {
    const std::string v = Get("key" + std::to_string(k));
    const uint64_t want = merges[k].load();
    if (want == 0) {
      EXPECT_EQ("NOT_FOUND", v);
      continue;
    }
    ASSERT_EQ(8u, v.size()) << v;
    EXPECT_EQ(want, DecodeFixed64(v.data())) << "key" << k;
  }
  // No lock is left behind.
  EXPECT_TRUE(db_->GetLockStatusData().empty());
}

// N threads add 1 to random counters, each in a transaction of GetForUpdate + Put per
// counter (two counters at a time, so that transactions wait on each other), retrying
// when a lock times out or a check fails. Every commit adds exactly its increments.
TEST_F(TransactionLockTest, CountersAddUpUnderContention) {
  constexpr int kThreads = 4, kCounters = 8;
  const int rounds = TestKnob("SHALE_TXN_ROUNDS", 150);
  const uint64_t seed = TestSeed();
  std::atomic<int> committed{0}, retries{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      Random rnd(seed + t);
      TransactionOptions o;
      o.set_snapshot = rnd.OneIn(2);
      o.deadlock_detect = true;
      o.lock_timeout = 50;
      std::unique_ptr<Transaction> txn;
      for (int i = 0; i < rounds; i++) {
        int c1 = rnd.Uniform(kCounters), c2 = rnd.Uniform(kCounters);
        for (;;) {
          txn.reset(db_->BeginTransaction(WriteOptions(), o, txn.release()));
          Status s;
          for (int c : {c1, c2}) {
            std::string value;
            const std::string key = "counter" + std::to_string(c);
            int64_t n = 0;
            if (s.ok()) s = txn->GetForUpdate(ReadOptions(), key, &value);
            if (s.ok()) n = std::stoll(value);
            if (s.IsNotFound()) s = Status::OK();  // a counter not written yet is 0
            if (s.ok()) s = txn->Put(key, std::to_string(n + 1));
          }
          if (s.ok()) s = txn->Commit();
          if (s.ok()) break;
          ASSERT_TRUE(s.IsBusy() || s.IsTimedOut() || s.IsTryAgain()) << s.ToString();
          retries++;
          ASSERT_OK(txn->Rollback());
        }
        committed++;
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(committed.load(), kThreads * rounds);
  auto sum = [&] {
    int64_t total = 0;
    for (int c = 0; c < kCounters; c++) {
      std::string v = Get("counter" + std::to_string(c));
      if (v != "NOT_FOUND") total += std::stoll(v);
    }
    return total;
  };
  EXPECT_EQ(sum(), 2 * kThreads * rounds) << "retries " << retries.load();
  Reopen();
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  EXPECT_EQ(sum(), 2 * kThreads * rounds);
  Reopen();
  EXPECT_EQ(sum(), 2 * kThreads * rounds);
}

}  // namespace
}  // namespace shale
