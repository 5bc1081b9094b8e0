#include "util/thread_pool.h"

#include <utility>

namespace shale {

ThreadPool::ThreadPool(int threads) {
  std::lock_guard<std::mutex> l(mu_);
  target_ = threads > 0 ? threads : 0;
  StartWorkersLocked(target_);
}

ThreadPool::~ThreadPool() {
  std::list<Worker> workers;
  {
    std::lock_guard<std::mutex> l(mu_);
    shutting_down_ = true;
    work_cv_.notify_all();
  }
  // Workers drain the queue before they exit; a worker never touches workers_ itself, so
  // the list can be walked without the lock.
  for (Worker& w : workers_) {
    if (w.thread.joinable()) w.thread.join();
  }
  // With no worker at all, the queued jobs are run here.
  std::deque<std::function<void()>> rest;
  {
    std::lock_guard<std::mutex> l(mu_);
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
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    if (running_workers_ > target_ && !shutting_down_) break;
    if (!queue_.empty()) {
      std::function<void()> job = std::move(queue_.front());
      queue_.pop_front();
      active_jobs_++;
      l.unlock();
      job();
      job = nullptr;  // destroy captures outside the lock
      l.lock();
      active_jobs_--;
      idle_cv_.notify_all();
      continue;
    }
    if (shutting_down_) break;
    work_cv_.wait(l);
  }
  running_workers_--;
  self->exited = true;
}

void ThreadPool::Schedule(std::function<void()> job) {
  std::lock_guard<std::mutex> l(mu_);
  queue_.push_back(std::move(job));
  work_cv_.notify_one();
}

void ThreadPool::WaitForIdle() {
  std::unique_lock<std::mutex> l(mu_);
  idle_cv_.wait(l, [this] { return queue_.empty() && active_jobs_ == 0; });
}

void ThreadPool::SetBackgroundThreads(int threads) {
  std::lock_guard<std::mutex> l(mu_);
  if (shutting_down_) return;
  target_ = threads > 0 ? threads : 0;
  ReapExitedLocked();
  if (running_workers_ < target_) {
    StartWorkersLocked(target_ - running_workers_);
  } else if (running_workers_ > target_) {
    work_cv_.notify_all();
  }
}

int ThreadPool::GetBackgroundThreads() {
  std::lock_guard<std::mutex> l(mu_);
  return target_;
}

int ThreadPool::QueueLen() {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<int>(queue_.size());
}

}  // namespace shale
