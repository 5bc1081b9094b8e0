// InternalStats: the DB's own counters behind GetProperty("shale.stats"): per-level
// compaction (and flush) work of each column family, cumulative writes and write stalls of
// the DB, rendered as the tables RocksDB users read (files, size, score, read/write GB,
// write amplification, seconds, count): "** Compaction Stats [name] **" per family.
//
// Thread safety: the per-level stats are guarded by the DB mutex, which it is built with
// (updated when a job installs its result; the compiler checks the REQUIRES); the write
// counters are atomics the write leader bumps.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
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
  InternalStats(uint64_t start_micros, Mutex* db_mutex);

  // Work of a job of family `family` whose output went to `level` (0 for flushes).
  void AddCompactionStats(uint32_t family, int level, const LevelCompactionStats& stats)
      REQUIRES(db_mutex_);

  std::atomic<uint64_t> writes{0};  // write groups' batches
  std::atomic<uint64_t> keys_written{0};
  std::atomic<uint64_t> bytes_written{0};  // user batch bytes
  std::atomic<uint64_t> wal_bytes{0};
  std::atomic<uint64_t> wal_syncs{0};
  std::atomic<uint64_t> write_with_wal{0};
  std::atomic<uint64_t> write_done_by_self{0};
  std::atomic<uint64_t> write_done_by_other{0};

  // The "shale.cfstats" text of one family: its compaction table (current is its Version,
  // scores[level] as its picker computes them), flushed and compacted bytes.
  std::string DumpFamily(uint32_t family, const std::string& name, const Version* current,
                         const std::vector<double>& scores, uint64_t now_micros) const
      REQUIRES(db_mutex_);
  // The "shale.dbstats" text: uptime, cumulative writes, WAL and stalls.
  std::string DumpDB(const WriteController& wc, uint64_t now_micros) const;
  // The same as maps (GetMapProperty), with RocksDB's keys: "compaction.<L0..|Sum>.<figure>"
  // (NumFiles, SizeBytes, Score, ReadGB, RnGB, Rnp1GB, WriteGB, MovedGB, WriteAmp,
  // ReadMBps, WriteMBps, CompSec, CompCount, AvgSec, KeyIn, KeyDrop) for a family;
  // "db.<counter>" (wal_bytes_written, wal_syncs, user_bytes_written, user_keys_written,
  // user_writes_by_other, user_writes_by_self, user_writes_with_wal,
  // user_write_stall_micros, uptime) for the DB.
  void FamilyMap(uint32_t family, const Version* current, const std::vector<double>& scores,
                 std::map<std::string, std::string>* out) const REQUIRES(db_mutex_);
  void DBMap(const WriteController& wc, uint64_t now_micros,
             std::map<std::string, std::string>* out) const;
  // The "shale.levelstats" text.
  static std::string DumpLevelSizes(const Version* current);

  // The DB mutex, for the compiler (see VersionSet::db_mutex()).
  Mutex* db_mutex() const RETURN_CAPABILITY(db_mutex_) { return db_mutex_; }

 private:
  struct FamilyStats {
    std::vector<LevelCompactionStats> levels;
    // Flushed bytes at the previous dump, for its "interval" figure.
    uint64_t flushed_at_last_dump = 0;
  };

  // The family's per-level stats, one per level of current at least.
  std::vector<LevelCompactionStats>& LevelsOf(uint32_t family, const Version* current) const
      REQUIRES(db_mutex_);

  const uint64_t start_micros_;
  Mutex* const db_mutex_;
  // By family id; mutable: a dump advances the interval mark.
  mutable std::map<uint32_t, FamilyStats> families_ GUARDED_BY(db_mutex_);
};

}  // namespace shale
