// db_stress --enable_compaction_filter (RocksDB's flag): a compaction filter that removes
// what the oracle says is deleted, as RocksDB's DbStressCompactionFilter does. A key is
// removed (kRemove; kPurge for single-delete keys, whose history must stay Puts and
// SingleDeletes) only when the oracle holds it absent with no write in flight, read under
// the key's lock taken with TryLock: a key whose lock is busy is kept, so the filter never
// waits on a worker (which may itself wait on this compaction) and never races a write.
// Dropping the newest Put of a deleted key changes no read of the latest state, so the
// oracle stays right; it does change what an older snapshot reads, so db_stress takes no
// snapshots in this mode (RocksDB's refuses snapshot operations with the flag), and it
// keeps the WAL (RocksDB's crash test never draws the filter with disable_wal: the prefix
// rule after a crash has no notion of a filtered entry).
//
// The filter maps a compaction's column family id to db_stress's family index through
// the ids the driver registers (SetFamily) after each open and each re-creation; a family
// it does not know (yet) is compacted without a filter.
// Thread safety: the factory and its filters are called from compaction threads;
// SetFamily from the driver or a worker; all state is guarded or atomic.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>

#include "shale/compaction_filter.h"
#include "tools/db_stress.h"
#include "util/mutexlock.h"

namespace shale::stress {

class StressFilterFactory : public CompactionFilterFactory {
 public:
  explicit StressFilterFactory(Context* ctx) : ctx_(ctx) {}

  // Column family `id` is db_stress's family `index` (replacing what the index was).
  void SetFamily(uint32_t id, size_t index) EXCLUDES(mu_);

  std::unique_ptr<CompactionFilter> CreateCompactionFilter(
      const CompactionFilter::Context& context) override EXCLUDES(mu_);
  const char* Name() const override { return "DbStressCompactionFilterFactory"; }

  // Entries the filters removed, and those they kept because the key's lock was busy.
  uint64_t removed() const { return removed_.load(std::memory_order_relaxed); }
  uint64_t busy() const { return busy_.load(std::memory_order_relaxed); }

 private:
  friend class StressFilter;
  Context* const ctx_;
  Mutex mu_;
  std::map<uint32_t, size_t> index_of_ GUARDED_BY(mu_);
  std::atomic<uint64_t> removed_{0};
  std::atomic<uint64_t> busy_{0};
};

}  // namespace shale::stress

DECLARE_bool(enable_compaction_filter);
