// WriteController: decides whether writes proceed, are slowed to a byte rate, or stop,
// from the shape of the tree (L0 files, pending compaction bytes, full memtables), as
// RocksDB's write stalls do. The DB recomputes the condition whenever a flush or
// compaction installs a new Version, and the write-group leader asks it before each write.
//
// Thread safety: none of its own. The DB's WriteController is GUARDED_BY its mutex
// (db/db_impl.h), so the compiler checks every call; the leader sleeps without the mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "shale/options.h"

namespace shale {

class WriteController {
 public:
  enum class State { kNormal, kDelayed, kStopped };
  // Why writes are slowed or stopped; counted for shale.stats.
  enum Cause {
    kMemtableLimit = 0,       // all write buffers full
    kL0FileCountLimit,        // level0_slowdown/stop_writes_trigger
    kPendingCompactionBytes,  // soft/hard_pending_compaction_bytes_limit
    kNumCauses
  };

  explicit WriteController(const Options& options) { SetOptions(options); }

  // Takes the triggers, limits and rate from options (at Open and at each SetOptions); the
  // state follows at the next Update.
  void SetOptions(const Options& options);

  // Recomputes the state from the tree's shape. Returns true if it changed.
  bool Update(int num_l0_files, uint64_t pending_compaction_bytes, bool auto_compactions);

  // With several column families: what one family's tree asks for under that family's
  // triggers and limits (family: its options in effect), and the state set to the worst
  // of them (a stop over a slowdown over nothing). Apply returns true if the state changed.
  struct Condition {
    State state = State::kNormal;
    Cause cause = kMemtableLimit;
  };
  static Condition Assess(const Options& family, int num_l0_files,
                          uint64_t pending_compaction_bytes);
  static Condition Worse(Condition a, Condition b) { return b.state > a.state ? b : a; }
  bool Apply(Condition c);

  // Also read without the DB mutex (the write path's check for room): a change seen one
  // write late is as if that write had come first.
  State state() const { return state_.load(std::memory_order_relaxed); }
  // Bytes per second while delayed.
  uint64_t delayed_write_rate() const { return rate_; }
  Cause cause() const { return cause_; }
  const char* CauseName(Cause c) const;

  // Micros the leader should sleep before writing `bytes` while delayed (0 otherwise): the
  // time until the writes before it and this one's own bytes fit the delayed rate.
  uint64_t GetDelay(uint64_t now_micros, uint64_t bytes);

  // Bookkeeping of time spent stalled, per cause.
  void AddStallMicros(Cause cause, bool stopped, uint64_t micros);
  uint64_t stall_micros(Cause cause, bool stopped) const {
    return stall_micros_[cause][stopped ? 1 : 0];
  }
  uint64_t stall_count(Cause cause, bool stopped) const {
    return stall_count_[cause][stopped ? 1 : 0];
  }
  uint64_t total_stall_micros() const;

 private:
  static Condition Judge(int slowdown_trigger, int stop_trigger, uint64_t soft_limit,
                         uint64_t hard_limit, int num_l0_files, uint64_t pending_bytes);

  int slowdown_trigger_ = 0;
  int stop_trigger_ = 0;
  uint64_t soft_pending_limit_ = 0;
  uint64_t hard_pending_limit_ = 0;
  uint64_t rate_ = 0;  // bytes per second while delayed

  std::atomic<State> state_{State::kNormal};  // written under the DB mutex
  Cause cause_ = kMemtableLimit;
  uint64_t next_write_micros_ = 0;  // when the next delayed write may start
  uint64_t stall_micros_[kNumCauses][2] = {};
  uint64_t stall_count_[kNumCauses][2] = {};
};

}  // namespace shale
