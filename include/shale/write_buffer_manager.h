// WriteBufferManager: a memory budget for memtables, shared by every column family of a DB
// and, when the same object is given to several DBs (DBOptions::write_buffer_manager), by
// all of them. A DB counts each memtable's memory here while it lives; once the memtables
// that still take writes pass seven eighths of the budget, or all of them pass the budget
// while the writable ones hold at least half of it, the DB flushes its largest family.
// While the total is at or over the budget and a DB has memtables waiting for their flush,
// that DB's writes wait for the flush (switching more memtables would free nothing), so
// that a DB written faster than it flushes stays within the budget. With allow_stall,
// writes also wait while the total is at or over the budget whoever holds it, until
// flushes bring it down. With a cache, the memory is also charged to that cache (in
// 256 KiB entries), so that memtables and cached blocks share one limit.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "shale/cache.h"

namespace shale {

class WriteBufferManager {
 public:
  // buffer_size: the budget in bytes; 0 counts memory without a budget (nothing is flushed
  // or stalled for it). cache (may be null): charged the memory as well. allow_stall:
  // writes wait while the budget is exceeded.
  explicit WriteBufferManager(size_t buffer_size, std::shared_ptr<Cache> cache = {},
                              bool allow_stall = false);
  ~WriteBufferManager();
  WriteBufferManager(const WriteBufferManager&) = delete;
  WriteBufferManager& operator=(const WriteBufferManager&) = delete;

  bool enabled() const { return buffer_size() > 0; }
  bool cost_to_cache() const { return cache_ != nullptr; }
  // Memory of every memtable counted here, and of those that still take writes.
  size_t memory_usage() const { return memory_used_.load(std::memory_order_relaxed); }
  size_t mutable_memtable_memory_usage() const {
    return memory_active_.load(std::memory_order_relaxed);
  }
  // What the cache is charged (a multiple of 256 KiB), 0 without a cache.
  size_t dummy_entries_in_cache_usage() const;
  size_t buffer_size() const { return buffer_size_.load(std::memory_order_relaxed); }
  void SetBufferSize(size_t new_size) { buffer_size_.store(new_size, std::memory_order_relaxed); }
  void SetAllowStall(bool new_allow_stall) {
    allow_stall_.store(new_allow_stall, std::memory_order_relaxed);
  }
  bool allow_stall() const { return allow_stall_.load(std::memory_order_relaxed); }

  // Whether a DB should flush a memtable now (see the top of this file).
  bool ShouldFlush() const;
  // Whether the memtables counted here are at or over the budget.
  bool OverBudget() const { return enabled() && memory_usage() >= buffer_size(); }
  // Whether writes should wait (allow_stall and the budget is exceeded).
  bool ShouldStall() const { return allow_stall() && OverBudget(); }

  // The accounting, as a DB does it: a memtable's growth is reserved; when it stops taking
  // writes its memory leaves the writable share; when it is freed, the total.
  void ReserveMem(size_t mem);
  void ScheduleFreeMem(size_t mem);
  void FreeMem(size_t mem);

 private:
  // Brings the cache's dummy entries in line with memory_used_.
  void UpdateCacheCharge();

  std::atomic<size_t> buffer_size_;
  std::atomic<size_t> memory_used_{0};
  std::atomic<size_t> memory_active_{0};
  std::atomic<bool> allow_stall_;
  const std::shared_ptr<Cache> cache_;
  mutable std::mutex cache_mu_;  // guards dummy_handles_
  std::vector<Cache::Handle*> dummy_handles_;
};

}  // namespace shale
