#include "utilities/transactions/deadlock_info_buffer.h"

#include <algorithm>
#include <utility>

namespace shale {

void DeadlockInfoBuffer::AddNewPath(DeadlockPath path) {
  MutexLock l(&mu_);
  if (slots_.empty()) return;
  slots_[next_] = std::move(path);
  next_ = (next_ + 1) % slots_.size();
}

std::vector<DeadlockPath> DeadlockInfoBuffer::OldestFirst() {
  std::vector<DeadlockPath> out;
  out.reserve(slots_.size());
  // From next_ to the end holds the older entries once the ring has wrapped, and only
  // never-written (empty) slots before that.
  for (size_t i = 0; i < slots_.size(); i++) {
    DeadlockPath& p = slots_[(next_ + i) % slots_.size()];
    if (!p.empty()) out.push_back(p);
  }
  return out;
}

std::vector<DeadlockPath> DeadlockInfoBuffer::PrepareBuffer() {
  MutexLock l(&mu_);
  std::vector<DeadlockPath> out = OldestFirst();
  std::reverse(out.begin(), out.end());
  return out;
}

void DeadlockInfoBuffer::Resize(uint32_t capacity) {
  MutexLock l(&mu_);
  std::vector<DeadlockPath> kept = OldestFirst();
  if (kept.size() > capacity) kept.erase(kept.begin(), kept.end() - capacity);
  next_ = capacity == 0 ? 0 : kept.size() % capacity;
  kept.resize(capacity);
  slots_ = std::move(kept);
}

}  // namespace shale
