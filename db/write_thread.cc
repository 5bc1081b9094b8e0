#include "db/write_thread.h"

namespace shale {

bool WriteThread::JoinBatchGroup(Writer* w) {
  std::unique_lock<std::mutex> lock(mu_);
  queue_.push_back(w);
  w->cv.wait(lock, [&] { return w->done || queue_.front() == w; });
  return !w->done;
}

void WriteThread::BuildBatchGroup(Writer* leader, std::vector<Writer*>* group) {
  group->clear();
  group->push_back(leader);
  if (leader->batch == nullptr) return;
  size_t size = leader->batch->GetDataSize();
  size_t max_size = kMaxGroupBytes;
  if (size <= (128 << 10)) max_size = size + (128 << 10);

  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 1; i < queue_.size(); i++) {
    Writer* w = queue_[i];
    if (w->batch == nullptr) break;
    if (w->sync && !leader->sync) break;
    if (w->disable_wal != leader->disable_wal) break;
    size += w->batch->GetDataSize();
    if (size > max_size) break;
    group->push_back(w);
  }
}

void WriteThread::ExitAsBatchGroupLeader(const std::vector<Writer*>& group) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < group.size(); i++) {
    queue_.pop_front();
    if (i > 0) {
      group[i]->done = true;
      group[i]->cv.notify_one();
    }
  }
  if (!queue_.empty()) queue_.front()->cv.notify_one();
}

}  // namespace shale
