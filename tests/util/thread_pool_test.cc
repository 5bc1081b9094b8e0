// ThreadPool: every job runs once, FIFO hand-out, idle waits, resizing, destruction drains.
#include "util/thread_pool.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace shale {
namespace {

TEST(ThreadPoolTest, RunsEveryJobOnce) {
  ThreadPool pool(4);
  std::atomic<int> sum{0};
  std::vector<std::atomic<int>> runs(1000);
  for (int i = 0; i < 1000; i++) {
    pool.Schedule([&, i] {
      runs[i]++;
      sum += i;
    });
  }
  pool.WaitForIdle();
  ASSERT_EQ(0, pool.QueueLen());
  ASSERT_EQ(999 * 1000 / 2, sum.load());
  for (auto& r : runs) ASSERT_EQ(1, r.load());
}

// Workers carry the pool's name (cut to the 15 bytes Linux keeps); without one they keep
// the name of the thread that started them.
TEST(ThreadPoolTest, WorkersAreNamed) {
  auto name_in = [](ThreadPool* pool) {
    std::string name;
    pool->Schedule([&name] {
      char buf[64] = {};
      pthread_getname_np(pthread_self(), buf, sizeof(buf));
      name = buf;
    });
    pool->WaitForIdle();
    return name;
  };
  ThreadPool named(1, "shale:test");
  EXPECT_EQ(name_in(&named), "shale:test");
  ThreadPool long_named(1, "shale:a-very-long-name");
  EXPECT_EQ(name_in(&long_named), "shale:a-very-lo");
  char own[64] = {};
  pthread_getname_np(pthread_self(), own, sizeof(own));
  ThreadPool unnamed(1);
  EXPECT_EQ(name_in(&unnamed), own);
}

TEST(ThreadPoolTest, SingleThreadRunsInOrder) {
  ThreadPool pool(1);
  std::vector<int> order;  // only the one worker touches it
  for (int i = 0; i < 100; i++) pool.Schedule([&order, i] { order.push_back(i); });
  pool.WaitForIdle();
  ASSERT_EQ(100u, order.size());
  for (int i = 0; i < 100; i++) ASSERT_EQ(i, order[i]);
}

TEST(ThreadPoolTest, UsesSeveralThreads) {
  ThreadPool pool(3);
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::atomic<int> arrived{0};
  for (int i = 0; i < 3; i++) {
    pool.Schedule([&] {
      {
        std::lock_guard<std::mutex> l(mu);
        ids.insert(std::this_thread::get_id());
      }
      arrived++;
      // Each job waits for the others, which is only possible on three threads.
      while (arrived.load() < 3) std::this_thread::yield();
    });
  }
  pool.WaitForIdle();
  ASSERT_EQ(3u, ids.size());
  ASSERT_EQ(0u, ids.count(std::this_thread::get_id()));
}

TEST(ThreadPoolTest, QueueLenCountsWaitingJobs) {
  ThreadPool pool(1);
  std::atomic<bool> release{false};
  std::atomic<bool> started{false};
  pool.Schedule([&] {
    started = true;
    while (!release.load()) std::this_thread::yield();
  });
  while (!started.load()) std::this_thread::yield();
  for (int i = 0; i < 5; i++) pool.Schedule([] {});
  ASSERT_EQ(5, pool.QueueLen());
  release = true;
  pool.WaitForIdle();
  ASSERT_EQ(0, pool.QueueLen());
}

TEST(ThreadPoolTest, JobsMayScheduleJobs) {
  ThreadPool pool(2);
  std::atomic<int> count{0};
  std::function<void(int)> spawn = [&](int depth) {
    count++;
    if (depth > 0) {
      pool.Schedule([&, depth] { spawn(depth - 1); });
      pool.Schedule([&, depth] { spawn(depth - 1); });
    }
  };
  pool.Schedule([&] { spawn(6); });
  // WaitForIdle cannot miss a job queued by a running job: the queue is filled before the
  // running job counts as finished.
  pool.WaitForIdle();
  ASSERT_EQ(127, count.load());
}

TEST(ThreadPoolTest, DestructorFinishesQueuedWork) {
  std::atomic<int> done{0};
  {
    ThreadPool pool(2);
    for (int i = 0; i < 50; i++) {
      pool.Schedule([&] {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        done++;
      });
    }
  }
  ASSERT_EQ(50, done.load());
}

TEST(ThreadPoolTest, ZeroThreadsQueueUntilGrownOrDestroyed) {
  std::atomic<int> done{0};
  {
    ThreadPool pool(0);
    pool.Schedule([&] { done++; });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(0, done.load());
    ASSERT_EQ(1, pool.QueueLen());
    pool.SetBackgroundThreads(1);
    pool.WaitForIdle();
    ASSERT_EQ(1, done.load());
    pool.SetBackgroundThreads(0);
    pool.Schedule([&] { done++; });
  }  // the destroying thread runs what no worker could
  ASSERT_EQ(2, done.load());
}

TEST(ThreadPoolTest, ShrinkAndGrow) {
  ThreadPool pool(4);
  ASSERT_EQ(4, pool.GetBackgroundThreads());
  pool.SetBackgroundThreads(1);
  ASSERT_EQ(1, pool.GetBackgroundThreads());
  // With one worker left, jobs can no longer overlap.
  std::atomic<int> running{0}, max_running{0}, done{0};
  auto job = [&] {
    int now = ++running;
    int prev = max_running.load();
    while (now > prev && !max_running.compare_exchange_weak(prev, now)) {
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    running--;
    done++;
  };
  // Give surplus workers time to notice; a worker busy with an old job could otherwise
  // still overlap, so wait until the pool is idle first.
  pool.WaitForIdle();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  for (int i = 0; i < 40; i++) pool.Schedule(job);
  pool.WaitForIdle();
  ASSERT_EQ(40, done.load());
  ASSERT_EQ(1, max_running.load());

  pool.SetBackgroundThreads(3);
  std::atomic<int> arrived{0};
  for (int i = 0; i < 3; i++) {
    pool.Schedule([&] {
      arrived++;
      while (arrived.load() < 3) std::this_thread::yield();
    });
  }
  pool.WaitForIdle();  // would hang with fewer than three workers
  ASSERT_EQ(3, arrived.load());
  for (int i = 0; i < 20; i++) {  // repeated resizing leaves no thread behind
    pool.SetBackgroundThreads(i % 5);
  }
  pool.SetBackgroundThreads(2);
  for (int i = 0; i < 10; i++) pool.Schedule(job);
  pool.WaitForIdle();
  ASSERT_EQ(50, done.load());
}

}  // namespace
}  // namespace shale
