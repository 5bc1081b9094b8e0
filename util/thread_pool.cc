#include "util/thread_pool.h"

#include <pthread.h>

#include <utility>

namespace shale {

ThreadPool::ThreadPool(int threads, std::string name) : name_(std::move(name)) {
  MutexLock l(&mu_);
  target_ = threads > 0 ? threads : 0;
  StartWorkersLocked(target_);
}

ThreadPool::~ThreadPool() {
  std::list<Worker> workers;
  {
    MutexLock l(&mu_);
    shutting_down_ = true;
    work_cv_.SignalAll();
    // Nothing starts or reaps workers once shutting_down_ is set, and a worker never
    // touches the list itself: take it, to join without the lock.
    workers.swap(workers_);
  }
  // Workers drain the queue before they exit.
  for (Worker& w : workers) {
    if (w.thread.joinable()) w.thread.join();
  }
  // With no worker at all, the queued jobs are run here.
  std::deque<std::function<void()>> rest;
  {
    MutexLock l(&mu_);
    rest.swap(queue_);
  }
  for (auto& job : rest) job();
}

void ThreadPool::StartWorkersLocked(int n) {
  for (int i = 0; i < n; i++) {
    workers_.emplace_back();
    Worker* w = &workers_.back();
    running_workers_++;
    w->thread = std::thread([this, w] { WorkerLoop(w); });
  }
}

void ThreadPool::ReapExitedLocked() {
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (it->exited) {
      // The thread has left WorkerLoop (it set exited as its last act under mu_), so this
      // join returns at once.
      it->thread.join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
}

void ThreadPool::WorkerLoop(Worker* self) {
  // Linux keeps 15 bytes of a thread's name; a longer one is refused whole.
  if (!name_.empty()) pthread_setname_np(pthread_self(), name_.substr(0, 15).c_str());
  mu_.Lock();
  while (true) {
    if (running_workers_ > target_ && !shutting_down_) break;
    if (!queue_.empty()) {
      std::function<void()> job = std::move(queue_.front());
      queue_.pop_front();
      active_jobs_++;
      mu_.Unlock();
      job();
      job = nullptr;  // destroy captures outside the lock
      mu_.Lock();
      active_jobs_--;
      idle_cv_.SignalAll();
      continue;
    }
    if (shutting_down_) break;
    work_cv_.Wait(&mu_);
  }
  running_workers_--;
  self->exited = true;
  mu_.Unlock();
}

void ThreadPool::Schedule(std::function<void()> job) {
  MutexLock l(&mu_);
  queue_.push_back(std::move(job));
  work_cv_.Signal();
}

void ThreadPool::WaitForIdle() {
  MutexLock l(&mu_);
  while (!queue_.empty() || active_jobs_ != 0) idle_cv_.Wait(&mu_);
}

void ThreadPool::SetBackgroundThreads(int threads) {
  MutexLock l(&mu_);
  if (shutting_down_) return;
  target_ = threads > 0 ? threads : 0;
  ReapExitedLocked();
  if (running_workers_ < target_) {
    StartWorkersLocked(target_ - running_workers_);
  } else if (running_workers_ > target_) {
    work_cv_.SignalAll();
  }
}

int ThreadPool::GetBackgroundThreads() {
  MutexLock l(&mu_);
  return target_;
}

int ThreadPool::QueueLen() {
  MutexLock l(&mu_);
  return static_cast<int>(queue_.size());
}

}  // namespace shale
