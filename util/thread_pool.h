// ThreadPool: a fixed set of worker threads running queued jobs in FIFO order. The DB runs
// flushes and compactions on pools like this one.
//
// Thread safety: every method may be called from any thread, including from a job running
// on the pool itself (except the destructor, and WaitForIdle from a job, which would wait
// for itself). Jobs must not throw.
//
// Invariants: a job is run exactly once. The destructor runs every job still queued (on the
// workers, or on the destroying thread when the pool has none) and joins all threads, so no
// job outlives the pool.
#pragma once

#include <deque>
#include <functional>
#include <list>
#include <string>
#include <thread>

#include "util/mutexlock.h"

namespace shale {

class ThreadPool {
 public:
  // Starts `threads` workers (0 is allowed: jobs then wait until threads are added).
  // `name` (at most 15 bytes are kept) names the workers' threads as ps, top and perf show
  // them; empty leaves the name they inherit.
  explicit ThreadPool(int threads, std::string name = "");
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Schedule(std::function<void()> job);

  // Blocks until the queue is empty and no job is running. REQUIRES: at least one thread
  // when jobs are queued; not called from a job of this pool.
  void WaitForIdle();

  // Grows or shrinks the pool. Surplus workers leave after finishing their current job.
  void SetBackgroundThreads(int threads);
  int GetBackgroundThreads();

  // Jobs queued and not yet started.
  int QueueLen();

 private:
  struct Worker {
    std::thread thread;
    bool exited = false;  // guarded by mu_
  };

  void WorkerLoop(Worker* self) EXCLUDES(mu_);
  void StartWorkersLocked(int n) REQUIRES(mu_);
  void ReapExitedLocked() REQUIRES(mu_);

  const std::string name_;
  Mutex mu_;
  CondVar work_cv_{&mu_};  // a job was queued, shutdown began or the target fell
  CondVar idle_cv_{&mu_};  // a job finished
  std::deque<std::function<void()>> queue_ GUARDED_BY(mu_);
  // std::list: a Worker's address is stable for its thread, even across a swap.
  std::list<Worker> workers_ GUARDED_BY(mu_);
  int target_ GUARDED_BY(mu_) = 0;           // how many workers should run
  int running_workers_ GUARDED_BY(mu_) = 0;  // workers that have not decided to exit
  int active_jobs_ GUARDED_BY(mu_) = 0;      // jobs being run now
  bool shutting_down_ GUARDED_BY(mu_) = false;
};

}  // namespace shale
