// WriteThread on its own: which queued writers a leader may group with, that the queue
// hands leadership on in order, that a parallel group completes every member exactly once
// and publishes through the last one to finish, and that pipelined groups finish in the
// order they were logged.
#include "db/write_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

namespace shale {
namespace {

using Writer = WriteThread::Writer;
using WriteGroup = WriteThread::WriteGroup;

void WaitForQueue(WriteThread* wt, size_t n) {
  while (wt->TEST_QueuedWriters() < n) std::this_thread::sleep_for(std::chrono::microseconds(50));
}

// Queues `followers` behind a leader that holds the queue, then lets the leader form one
// group and returns how many writers it took (the leader included). Every writer ends.
size_t GroupSizeBehindLeader(Writer* leader, std::vector<Writer*> followers) {
  WriteThread wt;
  EXPECT_EQ(wt.JoinBatchGroup(leader), WriteThread::kGroupLeader);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < followers.size(); i++) {
    threads.emplace_back([&wt, w = followers[i]] {
      uint8_t state = wt.JoinBatchGroup(w);
      if (state == WriteThread::kGroupLeader) {
        WriteGroup g;
        wt.EnterAsBatchGroupLeader(w, &g);
        wt.ExitGroup(&g, w);
      }
    });
    WaitForQueue(&wt, i + 2);  // queue them in this order
  }
  WriteGroup group;
  wt.EnterAsBatchGroupLeader(leader, &group);
  const size_t size = group.size;
  group.ForEach([](Writer* m) { m->status = Status::OK(); });
  wt.ExitGroup(&group, leader);
  for (auto& t : threads) t.join();
  return size;
}

TEST(WriteThreadTest, GroupsOnlyCompatibleWriters) {
  WriteBatch batch;
  ASSERT_TRUE(batch.Put("k", "v").ok());
  auto make = [&](bool sync, bool no_wal, bool no_slowdown) {
    auto* w = new Writer;
    w->batch = &batch;
    w->sync = sync;
    w->disable_wal = no_wal;
    w->no_slowdown = no_slowdown;
    return w;
  };
  struct Case {
    const char* what;
    bool sync, no_wal, no_slowdown;  // the follower's; the leader has none of them
    size_t expected;
  };
  const Case cases[] = {
      {"same options", false, false, false, 2},
      {"sync behind a non-sync leader", true, false, false, 1},
      {"disableWAL behind a WAL leader", false, true, false, 1},
      {"no_slowdown behind a leader that waits", false, false, true, 1},
  };
  for (const Case& c : cases) {
    std::unique_ptr<Writer> leader(make(false, false, false));
    std::unique_ptr<Writer> follower(make(c.sync, c.no_wal, c.no_slowdown));
    EXPECT_EQ(GroupSizeBehindLeader(leader.get(), {follower.get()}), c.expected) << c.what;
  }
  // A waiting writer is not grouped behind a no_slowdown leader either, and a run stops at
  // the first writer that does not fit, even if later ones would.
  std::unique_ptr<Writer> leader(make(false, false, true));
  std::unique_ptr<Writer> a(make(false, false, true));
  std::unique_ptr<Writer> b(make(false, false, false));
  std::unique_ptr<Writer> c(make(false, false, true));
  EXPECT_EQ(GroupSizeBehindLeader(leader.get(), {a.get(), b.get(), c.get()}), 2u);
  // An exclusive writer (no batch) is never grouped.
  std::unique_ptr<Writer> d(make(false, false, false));
  std::unique_ptr<Writer> exclusive(new Writer);
  std::unique_ptr<Writer> e(make(false, false, false));
  std::unique_ptr<Writer> lead2(make(false, false, false));
  EXPECT_EQ(GroupSizeBehindLeader(lead2.get(), {d.get(), exclusive.get(), e.get()}), 2u);
}

// Many threads write through the queue in the parallel protocol: every write is applied
// exactly once, every group publishes after all its members applied, and publications
// come in queue order.
void RunParallelGroups(bool pipelined) {
  WriteThread wt;
  constexpr int kThreads = 8;
  constexpr int kWrites = 3000;
  WriteBatch batch;
  ASSERT_TRUE(batch.Put("k", "v").ok());
  std::atomic<uint64_t> next_seq{1};
  std::atomic<uint64_t> applied{0};
  std::atomic<uint64_t> published{0};
  std::atomic<int> errors{0};
  std::atomic<int> batches_of_several{0};
  auto publish = [&](WriteGroup* g) {
    // Every member applied before us (acq_rel in CompleteParallelWriter).
    const uint64_t last = g->batch_last->last_sequence;
    if (applied.load() < last) errors++;
    if (published.load() + g->batch_size != last) errors++;  // in order, no gap
    published.store(last);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&] {
      for (int i = 0; i < kWrites; i++) {
        Writer w;
        w.batch = &batch;
        uint8_t state = wt.JoinBatchGroup(&w);
        if (state == WriteThread::kCompleted) {
          errors++;  // nobody completes a writer without its insert here
          continue;
        }
        WriteGroup g;
        Writer* self = &w;
        if (state == WriteThread::kGroupLeader) {
          wt.EnterAsBatchGroupLeader(&w, &g);
          uint64_t seq = next_seq.fetch_add(g.size);
          g.ForEach([&](Writer* m) { m->sequence = seq++; });
          g.last_sequence = seq - 1;
          // Pipelined, an earlier batch may take the group along (its leader then inserts
          // as a member); nobody completes a writer without its insert here.
          uint8_t stage =
              pipelined ? wt.EnterMemtableStage(&g) : WriteThread::kMemtableWriterLeader;
          if (stage == WriteThread::kCompleted) {
            errors++;
            continue;
          }
          if (stage == WriteThread::kMemtableWriterLeader) {
            if (g.batch_size > g.size) batches_of_several++;
            wt.LaunchParallelWriters(&g);
          }
        }
        applied.fetch_add(1);
        if (wt.CompleteParallelWriter(self)) {
          publish(self->group);
          wt.ExitGroup(self->group, self);
        }
        // Done, w is about to leave scope: nothing may still link to it. (A pipelined WAL
        // leader once left its group in the queue after another stage had completed it.)
        if (wt.TEST_InQueue(&w)) errors++;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(applied.load(), uint64_t{kThreads} * kWrites);
  EXPECT_EQ(published.load(), uint64_t{kThreads} * kWrites);
  EXPECT_EQ(wt.TEST_QueuedWriters(), 0u);
  // How often a memtable stage took other groups along depends on timing: printed only.
  if (pipelined) printf("memtable stages of several groups: %d\n", batches_of_several.load());
}

TEST(WriteThreadTest, ParallelGroupsPublishInOrder) { RunParallelGroups(false); }
TEST(WriteThreadTest, PipelinedGroupsPublishInOrder) { RunParallelGroups(true); }

// A waiter that blocks (no spinning or yielding left) is still woken.
TEST(WriteThreadTest, BlockedFollowerIsWoken) {
  WriteThread::WaitOptions wait;
  wait.adaptive_yield = false;
  WriteThread wt(wait);
  WriteBatch batch;
  ASSERT_TRUE(batch.Put("k", "v").ok());
  Writer leader;
  leader.batch = &batch;
  ASSERT_EQ(wt.JoinBatchGroup(&leader), WriteThread::kGroupLeader);
  Writer follower;
  follower.batch = &batch;
  uint8_t follower_state = 0;
  std::thread t([&] { follower_state = wt.JoinBatchGroup(&follower); });
  WaitForQueue(&wt, 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // well past any spin
  WriteGroup g;
  wt.EnterAsBatchGroupLeader(&leader, &g);
  ASSERT_EQ(g.size, 2u);
  g.ForEach([](Writer* m) { m->status = Status::Busy("from the leader"); });
  wt.ExitGroup(&g, &leader);
  t.join();
  EXPECT_EQ(follower_state, WriteThread::kCompleted);
  EXPECT_TRUE(follower.status.IsBusy());
}

// Ordered writes: after a group of several writers, the first of them back finds the queue
// empty; it waits (here up to 2 s) for a companion instead of leading alone, so the two
// share the next group. After a group of one (a lone writer), nobody waits.
TEST(WriteThreadTest, LeaderAfterASharedGroupWaitsForACompanion) {
  WriteThread wt(WriteThread::WaitOptions{}, /*companion_wait_nanos=*/2'000'000'000);
  WriteBatch batch;
  ASSERT_TRUE(batch.Put("k", "v").ok());
  using Clock = std::chrono::steady_clock;

  // A lone writer: a group of one, formed at once.
  Writer lone;
  lone.batch = &batch;
  ASSERT_EQ(wt.JoinBatchGroup(&lone), WriteThread::kGroupLeader);
  auto start = Clock::now();
  WriteGroup g0;
  wt.EnterAsBatchGroupLeader(&lone, &g0);
  EXPECT_EQ(g0.size, 1u);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(1));
  wt.ExitGroup(&g0, &lone);

  // A shared group: a leader and a follower queued behind it.
  Writer leader;
  leader.batch = &batch;
  ASSERT_EQ(wt.JoinBatchGroup(&leader), WriteThread::kGroupLeader);
  Writer follower;
  follower.batch = &batch;
  std::thread t([&] { EXPECT_EQ(wt.JoinBatchGroup(&follower), WriteThread::kCompleted); });
  WaitForQueue(&wt, 2);
  WriteGroup g1;
  wt.EnterAsBatchGroupLeader(&leader, &g1);
  ASSERT_EQ(g1.size, 2u);
  g1.ForEach([](Writer* m) { m->status = Status::OK(); });
  wt.ExitGroup(&g1, &leader);
  t.join();

  // The next leader finds the queue empty and waits; a writer arriving 50 ms later joins
  // its group.
  Writer first_back;
  first_back.batch = &batch;
  ASSERT_EQ(wt.JoinBatchGroup(&first_back), WriteThread::kGroupLeader);
  Writer second_back;
  second_back.batch = &batch;
  std::thread t2([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (wt.JoinBatchGroup(&second_back) == WriteThread::kGroupLeader) {
      ADD_FAILURE() << "the second writer back led a group of its own";
      WriteGroup g;
      wt.EnterAsBatchGroupLeader(&second_back, &g);
      wt.ExitGroup(&g, &second_back);
    }
  });
  WriteGroup g2;
  wt.EnterAsBatchGroupLeader(&first_back, &g2);
  EXPECT_EQ(g2.size, 2u);
  g2.ForEach([](Writer* m) { m->status = Status::OK(); });
  wt.ExitGroup(&g2, &first_back);
  t2.join();

  // That group was shared too; a writer now alone after a group of one does not wait.
  Writer alone_again;
  alone_again.batch = &batch;
  ASSERT_EQ(wt.JoinBatchGroup(&alone_again), WriteThread::kGroupLeader);
  WriteGroup g3;
  wt.EnterAsBatchGroupLeader(&alone_again, &g3);  // waits: the last group was shared
  ASSERT_EQ(g3.size, 1u);
  wt.ExitGroup(&g3, &alone_again);
  Writer after_lone;
  after_lone.batch = &batch;
  ASSERT_EQ(wt.JoinBatchGroup(&after_lone), WriteThread::kGroupLeader);
  start = Clock::now();
  WriteGroup g4;
  wt.EnterAsBatchGroupLeader(&after_lone, &g4);
  EXPECT_EQ(g4.size, 1u);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(1));
  wt.ExitGroup(&g4, &after_lone);
}

}  // namespace
}  // namespace shale
