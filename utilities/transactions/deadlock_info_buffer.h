// DeadlockInfoBuffer: the last N deadlocks the lock manager detected, in a ring, for
// TransactionDB::GetDeadlockInfoBuffer (N = TransactionDBOptions::max_num_deadlocks).
//
// Thread safety: every method may be called from any thread; one mutex guards the ring.
// Invariant: slots_[next_] is the oldest entry (or an empty one) once the ring has
// wrapped; empty DeadlockPaths mark slots never written.
#pragma once

#include <cstdint>
#include <vector>

#include "shale/utilities/lock_info.h"
#include "util/mutexlock.h"

namespace shale {

class DeadlockInfoBuffer {
 public:
  explicit DeadlockInfoBuffer(uint32_t capacity) : slots_(capacity) {}

  // Records path, overwriting the oldest entry when full; a no-op at capacity 0.
  void AddNewPath(DeadlockPath path) EXCLUDES(mu_);

  // The recorded deadlocks, newest first.
  std::vector<DeadlockPath> PrepareBuffer() EXCLUDES(mu_);

  // Changes the capacity, keeping the newest entries that fit.
  void Resize(uint32_t capacity) EXCLUDES(mu_);

 private:
  // The written entries, oldest first.
  std::vector<DeadlockPath> OldestFirst() REQUIRES(mu_);

  Mutex mu_;
  std::vector<DeadlockPath> slots_ GUARDED_BY(mu_);
  size_t next_ GUARDED_BY(mu_) = 0;  // the slot the next path goes to
};

}  // namespace shale
