// LevelScores: how far each level of a Version is over its target, as leveled compaction
// judges it. It is the input of the compaction policy (which level compacts next) and of
// write stalls (the estimated pending compaction bytes). The CompactionPicker computes and
// keeps it for the Version it picks from; Versions themselves stay free of it.
//
// Targets: level L1..Ln-1 get max_bytes_for_level_base times multiplier^(level-1), or with
// level_compaction_dynamic_level_bytes targets sized from the largest level upward, so
// that the last level holds about 90% of the data and L0 compacts into the highest level
// that is worth it (the base level), as RocksDB sizes them.
//
// Scores: for L0 the larger of (files not being compacted / level0_file_num_compaction_
// trigger) and (their bytes / the base level's target floor); for L1..Ln-2 the bytes not
// being compacted over the level's target; 0 for the last level. >= 1 means the level
// needs a compaction.
//
// Thread safety: a plain value.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "db/version.h"
#include "shale/options.h"

namespace shale {

struct LevelScores {
  // The level L0 compacts into: 1, or with dynamic level bytes the highest level whose
  // target is at least max_bytes_for_level_base / multiplier.
  int base_level = 1;
  // Target size per level; levels above the base level have none (UINT64_MAX).
  std::vector<uint64_t> level_max_bytes;
  std::vector<double> score;  // per level
  // (score, level) over levels 0..n-2, highest score first (ties: lower level first).
  std::vector<std::pair<double, int>> sorted;
  // Bytes compaction must rewrite to bring every level within its target, estimated as
  // RocksDB does (the "estimate-pending-compaction-bytes" property, and the pending-bytes
  // write stall input).
  uint64_t estimated_compaction_needed_bytes = 0;

  // Whether some level scores >= 1.
  bool NeedsCompaction() const { return !sorted.empty() && sorted[0].first >= 1; }
};

// The levels compactions use: all of them, or with allow_ingest_behind (and more than two
// levels) all but the last, which is kept for files ingested behind the rest.
inline int CompactionLevels(const Options& options, int num_levels) {
  return options.allow_ingest_behind && num_levels > 2 ? num_levels - 1 : num_levels;
}

// Computes v's scores under options; files for which being_compacted returns true do not
// count towards a level's size or file count (their compaction is already under way).
LevelScores ComputeLevelScores(const Options& options, const Version& v,
                               const std::function<bool(const FileMetaData&)>& being_compacted);

}  // namespace shale
