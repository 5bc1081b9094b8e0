#include "db/write_controller.h"

#include <algorithm>

namespace shale {

void WriteController::SetOptions(const Options& options) {
  slowdown_trigger_ = options.level0_slowdown_writes_trigger;
  stop_trigger_ = options.level0_stop_writes_trigger;
  soft_pending_limit_ = options.soft_pending_compaction_bytes_limit;
  hard_pending_limit_ = options.hard_pending_compaction_bytes_limit;
  rate_ = options.delayed_write_rate > 0 ? options.delayed_write_rate : 16ull << 20;
}

bool WriteController::Update(int num_l0_files, uint64_t pending_bytes, bool auto_compactions) {
  Condition c;
  // Without automatic compaction nothing would ever clear an L0 or pending-bytes stall,
  // so, as in RocksDB, those conditions apply only when compactions run.
  if (auto_compactions) {
    c = Judge(slowdown_trigger_, stop_trigger_, soft_pending_limit_, hard_pending_limit_,
              num_l0_files, pending_bytes);
  }
  return Apply(c);
}

WriteController::Condition WriteController::Judge(int slowdown_trigger, int stop_trigger,
                                                  uint64_t soft_limit, uint64_t hard_limit,
                                                  int num_l0_files, uint64_t pending_bytes) {
  Condition c;
  if (num_l0_files >= stop_trigger) {
    c = {State::kStopped, kL0FileCountLimit};
  } else if (hard_limit > 0 && pending_bytes >= hard_limit) {
    c = {State::kStopped, kPendingCompactionBytes};
  } else if (num_l0_files >= slowdown_trigger) {
    c = {State::kDelayed, kL0FileCountLimit};
  } else if (soft_limit > 0 && pending_bytes >= soft_limit) {
    c = {State::kDelayed, kPendingCompactionBytes};
  }
  return c;
}

WriteController::Condition WriteController::Assess(const Options& family, int num_l0_files,
                                                   uint64_t pending_bytes) {
  if (family.disable_auto_compactions) return Condition();
  return Judge(family.level0_slowdown_writes_trigger, family.level0_stop_writes_trigger,
               family.soft_pending_compaction_bytes_limit,
               family.hard_pending_compaction_bytes_limit, num_l0_files, pending_bytes);
}

bool WriteController::Apply(Condition c) {
  // A normal state keeps the last cause, as before: it is only read while stalled.
  const Cause cause = c.state == State::kNormal ? cause_ : c.cause;
  const bool changed = c.state != state_ || cause != cause_;
  state_ = c.state;
  cause_ = cause;
  return changed;
}

const char* WriteController::CauseName(Cause c) const {
  switch (c) {
    case kMemtableLimit: return "memtable-limit";
    case kL0FileCountLimit: return "level0-file-count-limit";
    case kPendingCompactionBytes: return "pending-compaction-bytes";
    default: return "unknown";
  }
}

uint64_t WriteController::GetDelay(uint64_t now_micros, uint64_t bytes) {
  if (state_ != State::kDelayed) return 0;
  // A write pays for its own bytes before it goes in, so the first write of a slowdown
  // (or the first after a pause) waits too; otherwise a writer whose writes are spaced
  // out would never be slowed at all.
  const uint64_t start = std::max(now_micros, next_write_micros_);
  next_write_micros_ = start + std::max<uint64_t>(bytes * 1000000 / rate_, 1);
  return next_write_micros_ - now_micros;
}

void WriteController::AddStallMicros(Cause cause, bool stopped, uint64_t micros) {
  stall_micros_[cause][stopped ? 1 : 0] += micros;
  stall_count_[cause][stopped ? 1 : 0]++;
}

uint64_t WriteController::total_stall_micros() const {
  uint64_t total = 0;
  for (const auto& per_cause : stall_micros_) total += per_cause[0] + per_cause[1];
  return total;
}

}  // namespace shale
