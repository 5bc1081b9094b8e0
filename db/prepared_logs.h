// PreparedLogs: the WAL files that hold a prepared transaction not yet committed or rolled
// back (two-phase commit). Such a WAL must outlive the flushes that would otherwise retire
// it: recovery rebuilds the transaction from it.
//
// Thread safety: every method is thread-safe (its own mutex, taken last).
#pragma once

#include <cstdint>
#include <map>

#include "util/mutexlock.h"

namespace shale {

class PreparedLogs {
 public:
  // One more prepared transaction lives in WAL `log`.
  void Add(uint64_t log) {
    MutexLock l(&mu_);
    count_[log]++;
  }
  // One of them was resolved. A log not added is ignored.
  void Remove(uint64_t log) {
    MutexLock l(&mu_);
    auto it = count_.find(log);
    if (it != count_.end() && --it->second == 0) count_.erase(it);
  }
  // The oldest WAL holding an unresolved prepare; 0 if none.
  uint64_t Min() const {
    MutexLock l(&mu_);
    return count_.empty() ? 0 : count_.begin()->first;
  }

 private:
  mutable Mutex mu_;
  std::map<uint64_t, int> count_ GUARDED_BY(mu_);  // WAL number -> unresolved prepares
};

}  // namespace shale
