// WritePreparedVisibility as a unit, with commit caches of a few slots so that evictions,
// advances of max_evicted_seq, delayed prepares, the old-commit map and the snapshot cache
// all run: scenarios, RocksDB's known defects in this area written as their scenarios, a
// randomized order of prepares, commits, rollbacks and snapshots against a model, and
// threads racing commits against readers (run it under ThreadSanitizer too).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "tests/testutil/test_util.h"
#include "util/dbformat.h"
#include "util/random.h"
#include "utilities/transactions/wp_visibility.h"

namespace shale {
namespace {

// The DB as the visibility state sees it: the published sequence and the live snapshots.
struct FakeDb {
  std::mutex mu;
  std::multiset<SequenceNumber> snapshots;
  std::atomic<SequenceNumber> last{0};

  WritePreparedVisibility::Hooks Hooks() {
    WritePreparedVisibility::Hooks h;
    h.live_snapshots = [this](SequenceNumber max) {
      std::lock_guard<std::mutex> l(mu);
      std::vector<SequenceNumber> out;
      for (SequenceNumber s : snapshots) {
        if (s <= max) out.push_back(s);
      }
      return out;
    };
    h.last_published = [this] { return last.load(); };
    return h;
  }
  SequenceNumber TakeSnapshot() {
    std::lock_guard<std::mutex> l(mu);
    const SequenceNumber s = last.load();
    snapshots.insert(s);
    return s;
  }
  void Release(SequenceNumber s) {
    std::lock_guard<std::mutex> l(mu);
    snapshots.erase(snapshots.find(s));
  }
};

TEST(WritePreparedVisibilityTest, BitsAreChecked) {
  EXPECT_TRUE(WritePreparedVisibility::ValidBits(23, 7));  // RocksDB's defaults
  EXPECT_TRUE(WritePreparedVisibility::ValidBits(1, 0));
  EXPECT_FALSE(WritePreparedVisibility::ValidBits(0, 7));
  EXPECT_FALSE(WritePreparedVisibility::ValidBits(33, 7));
  EXPECT_FALSE(WritePreparedVisibility::ValidBits(23, -1));
  EXPECT_FALSE(WritePreparedVisibility::ValidBits(23, 21));
}

TEST(WritePreparedVisibilityTest, PreparedIsInvisibleUntilCommitted) {
  FakeDb db;
  WritePreparedVisibility v(4, 2, db.Hooks());
  EXPECT_EQ(1u, v.SmallestUncommitted());  // nothing in flight: the published sequence + 1
  v.AddPrepared(10);
  db.last = 10;
  EXPECT_EQ(10u, v.SmallestUncommitted());
  EXPECT_FALSE(v.IsInSnapshot(10, 9));
  EXPECT_FALSE(v.IsInSnapshot(10, 20));
  v.AddCommitted(10, 15);
  EXPECT_FALSE(v.IsInSnapshot(10, 14));
  EXPECT_TRUE(v.IsInSnapshot(10, 15));
  EXPECT_TRUE(v.IsInSnapshot(10, 30));
  v.RemovePrepared(10);
  db.last = 15;
  EXPECT_EQ(16u, v.SmallestUncommitted());
  // Below the snapshot's smallest uncommitted prepare, everything is committed.
  EXPECT_TRUE(v.IsInSnapshot(3, 20, /*min_uncommitted=*/4));
  EXPECT_TRUE(v.IsInSnapshot(0, 1));  // a bottom-level entry with its sequence zeroed
}

TEST(WritePreparedVisibilityTest, EvictionAdvancesMaxEvictedSeq) {
  WritePreparedVisibility v(1, 0, WritePreparedVisibility::Hooks());  // two slots
  v.AddCommitted(2, 3);
  v.AddCommitted(4, 5);  // slot 0 again: (2, 3) leaves
  EXPECT_EQ(3u, v.max_evicted_seq());
  EXPECT_TRUE(v.IsInSnapshot(2, 4));
  EXPECT_TRUE(v.IsInSnapshot(4, 5));
  EXPECT_FALSE(v.IsInSnapshot(4, 4));
  // A prepare above the maximum and absent from the cache is in flight.
  EXPECT_FALSE(v.IsInSnapshot(6, 100));
}

// With a two-slot cache: prepares 5, then commits others until the maximum passes it,
// with slot 1 left empty.
void PrepareFiveAndPassIt(WritePreparedVisibility* v) {
  v->AddPrepared(5);
  v->AddCommitted(6, 7);
  v->AddCommitted(8, 9);    // evicts (6, 7); 8 and 6 share slot 0
  v->AddCommitted(10, 12);  // evicts (8, 9): the maximum passes 5
}

TEST(WritePreparedVisibilityTest, PreparesPassedByTheMaximumAreDelayed) {
  FakeDb db;
  db.last = 100;
  WritePreparedVisibility v(1, 0, db.Hooks());
  PrepareFiveAndPassIt(&v);
  EXPECT_GE(v.max_evicted_seq(), 9u);
  EXPECT_EQ(1u, v.TEST_DelayedPreparedCount());
  EXPECT_FALSE(v.IsInSnapshot(5, 50));
  EXPECT_EQ(5u, v.SmallestUncommitted());
  v.AddCommitted(5, 20);
  EXPECT_FALSE(v.IsInSnapshot(5, 19));
  EXPECT_TRUE(v.IsInSnapshot(5, 20));
  // Its slot is taken over before RemovePrepared: the delayed set still answers.
  v.AddCommitted(7, 21);
  v.AddCommitted(9, 22);
  EXPECT_FALSE(v.IsInSnapshot(5, 19));
  EXPECT_TRUE(v.IsInSnapshot(5, 20));
  v.RemovePrepared(5);
  EXPECT_EQ(0u, v.TEST_DelayedPreparedCount());
  EXPECT_TRUE(v.IsInSnapshot(5, 60));
}

// The prepare is delayed after its commit reached the cache and before RemovePrepared;
// then the commit leaves the cache. The delayed set must know the commit by then.
TEST(WritePreparedVisibilityTest, CommitOfPrepareDelayedLaterSurvivesEviction) {
  FakeDb db;
  db.last = 100;
  db.snapshots.insert(7);  // taken when 7 was the newest sequence
  WritePreparedVisibility v(1, 0, db.Hooks());
  v.AddPrepared(5);
  v.AddCommitted(5, 6);  // slot 1; 5 is not delayed yet
  v.AddCommitted(8, 9);
  v.AddCommitted(10, 11);  // evicts (8, 9): the maximum passes 5, still in flight
  ASSERT_EQ(1u, v.TEST_DelayedPreparedCount());
  v.AddCommitted(7, 12);  // slot 1: evicts (5, 6)
  EXPECT_FALSE(v.IsInSnapshot(5, 5));
  EXPECT_TRUE(v.IsInSnapshot(5, 6));
  EXPECT_TRUE(v.IsInSnapshot(5, 50));
  v.RemovePrepared(5);
  EXPECT_TRUE(v.IsInSnapshot(5, 50));
}

// The commit leaves the cache after the reader read the maximum and before it looked in
// the cache: the miss must not be taken for "in flight" on the strength of the old
// maximum. The check starts over and finds the commit below the new one.
TEST(WritePreparedVisibilityTest, EvictionDuringTheCheckIsRetried) {
  FakeDb db;
  db.last = 100;
  db.snapshots.insert(7);  // taken when 7 was the newest sequence
  WritePreparedVisibility v(1, 0, db.Hooks());
  v.AddPrepared(5);
  v.AddCommitted(5, 6);
  v.RemovePrepared(5);
  ASSERT_EQ(0u, v.max_evicted_seq());
  int calls = 0;
  v.TEST_SetBeforeCacheLookup([&] {
    if (calls++ == 0) v.AddCommitted(7, 8);  // slot 1: evicts (5, 6)
  });
  EXPECT_TRUE(v.IsInSnapshot(5, 50));
  EXPECT_EQ(2, calls);  // looked twice
  EXPECT_GE(v.max_evicted_seq(), 6u);
  calls = 0;
  // And a snapshot between prepare and commit still does not see it.
  v.TEST_SetBeforeCacheLookup([&] {
    if (calls++ == 0) v.AddCommitted(9, 10);  // evicts (7, 8) the same way
  });
  EXPECT_FALSE(v.IsInSnapshot(7, 7));
}

// RocksDB 4947: a delayed prepare commits (its entry reaches the cache, then it leaves the
// delayed set) after a reader missed it in the cache and before the reader looks in the
// delayed set. Neither look finds it, and the maximum did not move: taken for evicted, it
// would read as committed at or below the maximum, visible to any snapshot above it. The
// reader must look in the cache once more and find the commit there, after the snapshot.
TEST(WritePreparedVisibilityTest, DelayedPrepareCommittingBetweenTheLooksIsFound) {
  FakeDb db;
  db.last = 100;
  WritePreparedVisibility v(1, 0, db.Hooks());
  PrepareFiveAndPassIt(&v);
  ASSERT_EQ(1u, v.TEST_DelayedPreparedCount());
  const SequenceNumber max = v.max_evicted_seq();
  const SequenceNumber snapshot = max + 10;
  ASSERT_LT(5u, max);
  int calls = 0;
  v.TEST_SetBeforeDelayedLookup([&] {
    if (calls++ != 0) return;
    v.AddCommitted(5, snapshot + 1);  // slot 1, empty: nothing is evicted
    v.RemovePrepared(5);
  });
  EXPECT_FALSE(v.IsInSnapshot(5, snapshot));
  EXPECT_EQ(1, calls);
  EXPECT_EQ(max, v.max_evicted_seq());
  EXPECT_TRUE(v.IsInSnapshot(5, snapshot + 1));
}

TEST(WritePreparedVisibilityTest, LatePrepareBelowTheMaximumIsDelayed) {
  WritePreparedVisibility v(1, 0, WritePreparedVisibility::Hooks());
  v.AdvanceMaxEvictedSeq(0, 40);  // as recovery does
  v.AddPrepared(30);
  EXPECT_EQ(1u, v.TEST_DelayedPreparedCount());
  EXPECT_FALSE(v.IsInSnapshot(30, 50));
  EXPECT_TRUE(v.IsInSnapshot(29, 50));  // not in flight, below the maximum: committed
}

TEST(WritePreparedVisibilityTest, OldCommitMapKeepsStraddledSnapshotsImmutable) {
  FakeDb db;
  db.last = 7;
  WritePreparedVisibility v(1, 1, db.Hooks());
  v.AddPrepared(6);
  const SequenceNumber snap = db.TakeSnapshot();  // 7: prepare 6 is not in it
  v.AddCommitted(6, 9);
  v.RemovePrepared(6);
  db.last = 10;
  const SequenceNumber later = db.TakeSnapshot();  // 10: commit 9 is in it
  db.last = 30;
  v.AddCommitted(8, 11);   // slot 0: evicts (6, 9), which straddles snap
  v.AddCommitted(10, 12);  // evicts (8, 11)
  v.AddCommitted(12, 13);  // evicts (10, 12)
  ASSERT_GE(v.max_evicted_seq(), 10u);
  EXPECT_TRUE(v.TEST_InOldCommitMap(snap, 6));
  bool released = false;
  EXPECT_FALSE(v.IsInSnapshot(6, snap, kMinUnCommittedSeq, &released));
  EXPECT_FALSE(released);
  EXPECT_TRUE(v.IsInSnapshot(6, later, kMinUnCommittedSeq, &released));
  EXPECT_FALSE(released);
  // Once released (and the list refreshed by the next advance), a question about the
  // snapshot cannot be answered: the caller is told so.
  db.Release(snap);
  db.last = 100;
  v.AddCommitted(14, 40);
  v.AddCommitted(16, 41);
  ASSERT_GE(v.max_evicted_seq(), 40u);
  EXPECT_FALSE(v.TEST_InOldCommitMap(snap, 6));
  released = false;
  EXPECT_TRUE(v.IsInSnapshot(6, snap, kMinUnCommittedSeq, &released));
  EXPECT_TRUE(released);
}

// RocksDB 4639: an evicted commit was checked only against the snapshots in the snapshot
// cache, so a snapshot beyond it that the commit straddles saw the data as committed.
TEST(WritePreparedVisibilityTest, EvictedCommitIsCheckedBeyondTheSnapshotCache) {
  FakeDb db;
  WritePreparedVisibility v(1, 1, db.Hooks());  // two snapshot slots
  db.last = 2;
  v.AddPrepared(2);
  std::vector<SequenceNumber> snaps;
  for (SequenceNumber s = 3; s <= 8; s++) {
    db.last = s;
    snaps.push_back(db.TakeSnapshot());
  }
  db.last = 9;
  v.AddCommitted(2, 9);  // straddles every snapshot 3..8
  v.RemovePrepared(2);
  db.last = 50;
  v.AddCommitted(4, 10);  // slot 0: evicts (2, 9)
  ASSERT_GE(v.max_evicted_seq(), 9u);
  for (SequenceNumber s : snaps) {
    bool released = false;
    EXPECT_FALSE(v.IsInSnapshot(2, s, kMinUnCommittedSeq, &released)) << "snapshot " << s;
    EXPECT_FALSE(released);
  }
  EXPECT_TRUE(v.IsInSnapshot(2, 50));
}

TEST(WritePreparedVisibilityTest, CommitTooFarFromItsPrepareIsEvictedAtOnce) {
  FakeDb db;
  WritePreparedVisibility v(1, 1, db.Hooks());  // slots hold a distance below 2^9
  db.last = 1;
  v.AddPrepared(1);
  db.last = 500;
  const SequenceNumber snap = db.TakeSnapshot();
  db.last = 2000;
  v.AddCommitted(1, 2000);
  v.RemovePrepared(1);
  EXPECT_GE(v.max_evicted_seq(), 2000u);
  EXPECT_FALSE(v.IsInSnapshot(1, snap));
  db.last = 2001;
  EXPECT_TRUE(v.IsInSnapshot(1, 2001));
}

TEST(WritePreparedVisibilityTest, SnapshotCheckerAnswersFromTheState) {
  FakeDb db;
  db.last = 7;
  WritePreparedVisibility v(1, 1, db.Hooks());
  const WritePreparedSnapshotChecker checker(&v);
  using Result = SnapshotChecker::Result;
  v.AddPrepared(6);
  const SequenceNumber snap = db.TakeSnapshot();
  EXPECT_EQ(Result::kNotInSnapshot, checker.CheckInSnapshot(6, snap));
  EXPECT_EQ(Result::kNotInSnapshot, checker.CheckInSnapshot(6, kMaxSequenceNumber));
  v.AddCommitted(6, 9);
  v.RemovePrepared(6);
  db.last = 9;
  EXPECT_EQ(Result::kNotInSnapshot, checker.CheckInSnapshot(6, snap));
  EXPECT_EQ(Result::kInSnapshot, checker.CheckInSnapshot(6, kMaxSequenceNumber));
  // Evicted, with the snapshot released before the maximum passed it: unknowable.
  db.Release(snap);
  db.last = 30;
  v.AddCommitted(8, 10);
  v.AddCommitted(10, 11);
  ASSERT_GE(v.max_evicted_seq(), 9u);
  EXPECT_EQ(Result::kSnapshotReleased, checker.CheckInSnapshot(6, snap));
  EXPECT_EQ(Result::kInSnapshot, checker.CheckInSnapshot(6, 29));
}

// ---- A random order of operations against a model.

struct ModelSnapshot {
  SequenceNumber seq;
  SequenceNumber min_uncommitted;
};

TEST(WritePreparedVisibilityTest, RandomOrderMatchesModel) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  const int rounds = TestKnob("SHALE_WP_MODEL_ROUNDS", 40);
  for (int round = 0; round < rounds; round++) {
    FakeDb db;
    const int commit_bits = 1 + static_cast<int>(rnd.Uniform(3));
    const int snapshot_bits = static_cast<int>(rnd.Uniform(3));
    WritePreparedVisibility v(commit_bits, snapshot_bits, db.Hooks());
    std::map<SequenceNumber, SequenceNumber> commit_of;  // prepare -> commit (0: in flight)
    std::vector<SequenceNumber> open;
    std::vector<ModelSnapshot> snaps;
    SequenceNumber last = 0;
    auto publish = [&](SequenceNumber s) { db.last = last = s; };
    auto check = [&](SequenceNumber snap, SequenceNumber min_uncommitted) {
      for (const auto& [prep, commit] : commit_of) {
        const bool want = prep <= snap && commit != 0 && commit <= snap;
        bool released = false;
        ASSERT_EQ(want, v.IsInSnapshot(prep, snap, min_uncommitted, &released))
            << "prepare " << prep << " commit " << commit << " snapshot " << snap << " round "
            << round << " bits " << commit_bits << "/" << snapshot_bits << " max_evicted "
            << v.max_evicted_seq();
        ASSERT_FALSE(released);
      }
    };
    for (int step = 0; step < 300; step++) {
      const uint32_t op = rnd.Uniform(10);
      if (op < 3) {  // Prepare
        const SequenceNumber p = last + 1;
        v.AddPrepared(p);
        commit_of[p] = 0;
        open.push_back(p);
        publish(p);
      } else if (op < 6 && !open.empty()) {  // Commit, or Rollback (its rollback commits)
        // Mostly the oldest-but-one, so that some prepares live long and get delayed.
        const size_t i = rnd.OneIn(4) ? 0 : rnd.Uniform(static_cast<uint32_t>(open.size()));
        const SequenceNumber p = open[i];
        open.erase(open.begin() + static_cast<long>(i));
        const SequenceNumber c = last + 1 + rnd.Uniform(3);  // sequences of the commit batch
        v.AddCommitted(p, c);
        commit_of[p] = c;
        publish(c);
        v.RemovePrepared(p);
      } else if (op < 8) {  // a write without Prepare
        const SequenceNumber s = last + 1;
        v.AddCommitted(s, s);
        commit_of[s] = s;
        publish(s);
      } else if (op < 9) {  // a snapshot
        const SequenceNumber mu = v.SmallestUncommitted();
        const SequenceNumber s = db.TakeSnapshot();
        snaps.push_back({s, std::min(mu, s + 1)});
      } else if (!snaps.empty()) {  // a release
        const size_t i = rnd.Uniform(static_cast<uint32_t>(snaps.size()));
        db.Release(snaps[i].seq);
        snaps.erase(snaps.begin() + static_cast<long>(i));
      }
      for (const ModelSnapshot& s : snaps) check(s.seq, s.min_uncommitted);
      check(last, kMinUnCommittedSeq);  // a read without a snapshot
      if (HasFatalFailure()) return;
    }
  }
}

// ---- Commits racing readers (RocksDB 4947, 5683).

// Two writers (as two write queues would) prepare, commit and write without Prepare, each
// publishing in sequence order after its cache update; readers hold snapshots and ask
// about random transactions. A commit published at or below a read's snapshot must be
// visible; a visible one must be committed at or below it. With two slots the cache
// evicts all the time, long prepares become delayed and are committed while readers look.
// One writer's commit is often evicted by the other's before it is published, moving the
// maximum past the published sequence: readers that skipped SnapshotIsSafe would fail.
TEST(WritePreparedVisibilityTest, CommitsRacingReadersStayConsistent) {
  const uint64_t seed = TestSeed();
  constexpr int kTxns = 1 << 14;
  const int ops = TestKnob("SHALE_WP_RACE_OPS", 6000);
  FakeDb db;
  WritePreparedVisibility v(1, 1, db.Hooks());
  std::vector<std::atomic<SequenceNumber>> prep(kTxns);
  std::vector<std::atomic<SequenceNumber>> commit(kTxns);
  for (int i = 0; i < kTxns; i++) prep[i].store(0), commit[i].store(0);
  std::atomic<int> next_txn{0};
  std::mutex alloc_mu;
  SequenceNumber allocated = 0;
  auto allocate = [&](SequenceNumber n) {
    std::lock_guard<std::mutex> l(alloc_mu);
    allocated += n;
    return allocated - n + 1;
  };
  // In sequence order: wait for the predecessor, then publish.
  auto publish = [&](SequenceNumber first, SequenceNumber last_seq) {
    while (db.last.load(std::memory_order_acquire) != first - 1) std::this_thread::yield();
    db.last.store(last_seq, std::memory_order_release);
  };
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};

  auto writer = [&](uint64_t wseed) {
    Random rnd(wseed);
    std::vector<int> mine;
    for (int n = 0; n < ops; n++) {
      const uint32_t op = rnd.Uniform(4);
      if ((op == 0 || mine.empty()) && next_txn.load() < kTxns) {
        const int t = next_txn.fetch_add(1);
        if (t >= kTxns) continue;
        const SequenceNumber p = allocate(1);
        prep[t].store(p, std::memory_order_release);
        v.AddPrepared(p);
        publish(p, p);
        mine.push_back(t);
      } else if (op == 1 && !mine.empty()) {
        // The oldest mostly: long-lived ones are what the maximum overtakes.
        const size_t i = rnd.OneIn(3) ? mine.size() - 1 : 0;
        const int t = mine[i];
        mine.erase(mine.begin() + static_cast<long>(i));
        const SequenceNumber c = allocate(1);
        commit[t].store(c, std::memory_order_release);
        v.AddCommitted(prep[t].load(), c);
        publish(c, c);
        v.RemovePrepared(prep[t].load());
      } else {
        const SequenceNumber s = allocate(1);
        v.AddCommitted(s, s);
        publish(s, s);
      }
    }
    // Leave nothing in flight, so that the other writer's publications never wait on us.
    for (int t : mine) {
      const SequenceNumber c = allocate(1);
      commit[t].store(c, std::memory_order_release);
      v.AddCommitted(prep[t].load(), c);
      publish(c, c);
      v.RemovePrepared(prep[t].load());
    }
  };

  auto reader = [&](uint64_t rseed) {
    Random rnd(rseed);
    while (!stop.load(std::memory_order_acquire)) {
      SequenceNumber mu = v.SmallestUncommitted();
      SequenceNumber snap = db.TakeSnapshot();
      while (!v.SnapshotIsSafe(snap)) {
        db.Release(snap);
        std::this_thread::yield();
        mu = v.SmallestUncommitted();
        snap = db.TakeSnapshot();
      }
      const SequenceNumber min_uncommitted = std::min(mu, snap + 1);
      for (int q = 0; q < 50; q++) {
        const int hi = next_txn.load(std::memory_order_acquire);
        if (hi == 0) break;
        const int t = static_cast<int>(rnd.Uniform(static_cast<uint32_t>(std::min(hi, kTxns))));
        const SequenceNumber p = prep[t].load(std::memory_order_acquire);
        if (p == 0 || p > snap) continue;
        const SequenceNumber before = commit[t].load(std::memory_order_acquire);
        const bool visible = v.IsInSnapshot(p, snap, min_uncommitted);
        const SequenceNumber after = commit[t].load(std::memory_order_acquire);
        if (before != 0 && before <= snap && !visible) failures.fetch_add(1);
        if (visible && (after == 0 || after > snap)) failures.fetch_add(1);
      }
      db.Release(snap);
    }
  };

  std::vector<std::thread> readers;
  for (int r = 0; r < 4; r++) readers.emplace_back(reader, seed + 100 + r);
  std::thread w1(writer, seed + 1);
  std::thread w2(writer, seed + 2);
  w1.join();
  w2.join();
  stop.store(true, std::memory_order_release);
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(0, failures.load());
  EXPECT_EQ(db.last.load() + 1, v.SmallestUncommitted());
  EXPECT_EQ(0u, v.TEST_DelayedPreparedCount());
}

}  // namespace
}  // namespace shale
