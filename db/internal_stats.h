// InternalStats: the DB's own counters behind GetProperty("shale.stats"): per-level
// compaction (and flush) work, cumulative writes and write stalls, rendered as the table
// RocksDB users read (files, size, score, read/write GB, write amplification, seconds,
// count).
//
// Thread safety: the per-level stats are guarded by the DB mutex, which it is built with
// (updated when a job installs its result; the compiler checks the REQUIRES); the write
// counters are atomics the write leader bumps.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "util/mutexlock.h"

namespace shale {

class Version;
class WriteController;

struct LevelCompactionStats {
  uint64_t micros = 0;
  uint64_t bytes_read_non_output = 0;  // from the input level (Rn)
  uint64_t bytes_read_output = 0;      // from the output level (Rnp1)
  uint64_t bytes_written = 0;
  uint64_t bytes_moved = 0;  // trivial moves
  uint64_t files_in = 0;
  uint64_t files_out = 0;
  uint64_t count = 0;  // jobs that wrote into this level
  uint64_t keys_in = 0;
  uint64_t keys_dropped = 0;

  void Add(const LevelCompactionStats& o);
};

class InternalStats {
 public:
  // db_mutex: the DB mutex, which must outlive this object.
  InternalStats(int num_levels, uint64_t start_micros, Mutex* db_mutex);

  // `level` is the output level (0 for flushes).
  void AddCompactionStats(int level, const LevelCompactionStats& stats) REQUIRES(db_mutex_);
  const LevelCompactionStats& level_stats(int level) const REQUIRES(db_mutex_) {
    return levels_[level];
  }

  std::atomic<uint64_t> writes{0};  // write groups' batches
  std::atomic<uint64_t> keys_written{0};
  std::atomic<uint64_t> bytes_written{0};  // user batch bytes
  std::atomic<uint64_t> wal_bytes{0};
  std::atomic<uint64_t> wal_syncs{0};
  std::atomic<uint64_t> write_with_wal{0};
  std::atomic<uint64_t> write_done_by_self{0};
  std::atomic<uint64_t> write_done_by_other{0};

  // The "shale.stats" text. scores[level] as the compaction picker computes them.
  std::string Dump(const Version* current, const std::vector<double>& scores,
                   const WriteController& wc, uint64_t now_micros) const REQUIRES(db_mutex_);
  // The "shale.levelstats" text.
  static std::string DumpLevelSizes(const Version* current);

  // The DB mutex, for the compiler (see VersionSet::db_mutex()).
  Mutex* db_mutex() const RETURN_CAPABILITY(db_mutex_) { return db_mutex_; }

 private:
  const uint64_t start_micros_;
  Mutex* const db_mutex_;
  std::vector<LevelCompactionStats> levels_ GUARDED_BY(db_mutex_);
  // Flushed bytes at the previous Dump, for its "interval" figure.
  mutable uint64_t flushed_at_last_dump_ GUARDED_BY(db_mutex_) = 0;
};

}  // namespace shale
