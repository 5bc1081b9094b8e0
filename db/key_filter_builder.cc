#include "db/key_filter_builder.h"

#include <utility>

namespace shale {

KeyFilterBuilder::~KeyFilterBuilder() {
  {
    MutexLock l(&mu_);
    stop_.store(true, std::memory_order_relaxed);
    queue_.clear();
    work_cv_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
}

void KeyFilterBuilder::Request(std::shared_ptr<TableReader> reader) {
  MutexLock l(&mu_);
  if (stop_.load(std::memory_order_relaxed)) return;
  queue_.push_back(std::move(reader));
  if (!started_) {
    started_ = true;
    thread_ = std::thread([this] { Run(); });
  }
  work_cv_.Signal();
}

void KeyFilterBuilder::WaitIdle() {
  MutexLock l(&mu_);
  while (!queue_.empty() || building_) idle_cv_.Wait(&mu_);
}

void KeyFilterBuilder::Run() {
  mu_.Lock();
  while (true) {
    while (queue_.empty() && !stop_.load(std::memory_order_relaxed)) work_cv_.Wait(&mu_);
    if (stop_.load(std::memory_order_relaxed)) break;
    std::shared_ptr<TableReader> reader = std::move(queue_.front());
    queue_.pop_front();
    building_ = true;
    mu_.Unlock();
    // A failure leaves the reader as it was (see the header); nothing to report.
    (void)reader->BuildKeyFilter(&stop_);
    reader.reset();  // the last reference may close the file: not under mu_
    mu_.Lock();
    building_ = false;
    if (queue_.empty()) idle_cv_.SignalAll();
  }
  building_ = false;
  idle_cv_.SignalAll();
  mu_.Unlock();
}

}  // namespace shale
