#include "db/level_scores.h"

#include <algorithm>

namespace shale {

namespace {

// a * b, saturating at UINT64_MAX.
uint64_t MultiplySaturating(uint64_t a, double b) {
  const double r = static_cast<double>(a) * b;
  if (r >= static_cast<double>(UINT64_MAX)) return UINT64_MAX;
  return static_cast<uint64_t>(r);
}

}  // namespace

LevelScores ComputeLevelScores(const Options& options, const Version& v,
                               const std::function<bool(const FileMetaData&)>& being_compacted) {
  LevelScores r;
  // A level kept for ingest_behind has no target and no score, as if it did not exist.
  const int num_levels = CompactionLevels(options, v.NumLevels());
  r.level_max_bytes.assign(v.NumLevels(), UINT64_MAX);
  r.score.assign(v.NumLevels(), 0.0);
  const double multiplier = std::max(options.max_bytes_for_level_multiplier, 1.0);
  const uint64_t base_bytes = std::max<uint64_t>(options.max_bytes_for_level_base, 1);
  if (num_levels > 0) r.level_max_bytes[0] = base_bytes;

  // Level targets.
  if (!options.level_compaction_dynamic_level_bytes) {
    r.base_level = 1;
    uint64_t target = base_bytes;
    for (int level = 1; level < num_levels; level++) {
      if (level > 1) target = MultiplySaturating(target, multiplier);
      r.level_max_bytes[level] = target;
    }
  } else {
    // Size the levels from the biggest one upward so that it holds most of the data, and
    // let L0 skip the levels that would be too small to be worth a compaction.
    uint64_t max_level_bytes = 0;
    int first_non_empty = -1;
    for (int level = 1; level < num_levels; level++) {
      const uint64_t bytes = v.NumLevelBytes(level);
      if (bytes > 0 && first_non_empty == -1) first_non_empty = level;
      max_level_bytes = std::max(max_level_bytes, bytes);
    }
    if (max_level_bytes == 0) {
      // Nothing below L0: it compacts straight into the last level.
      r.base_level = std::max(num_levels - 1, 1);
      if (num_levels > 1) r.level_max_bytes[r.base_level] = base_bytes;
    } else {
      const double base_min = static_cast<double>(base_bytes) / multiplier;
      double size = static_cast<double>(max_level_bytes);
      for (int level = num_levels - 2; level >= first_non_empty; level--) size /= multiplier;
      double base_size;
      if (size <= base_min) {
        // Even the first non-empty level would get a target below the minimum: give it
        // the minimum instead.
        r.base_level = first_non_empty;
        base_size = base_min + 1;
      } else {
        r.base_level = first_non_empty;
        while (r.base_level > 1 && size > static_cast<double>(base_bytes)) {
          r.base_level--;
          size /= multiplier;
        }
        base_size = std::min(size, static_cast<double>(base_bytes));
        base_size = std::max(base_size, 1.0);
      }
      double target = base_size;
      for (int level = r.base_level; level < num_levels; level++) {
        if (level > r.base_level) target *= multiplier;
        // No level below the base level gets a target under max_bytes_for_level_base, so
        // the tree never becomes narrower than L0 in the middle.
        const double t = std::max(target, static_cast<double>(base_bytes));
        r.level_max_bytes[level] =
            t >= static_cast<double>(UINT64_MAX) ? UINT64_MAX : static_cast<uint64_t>(t);
      }
    }
  }

  // Scores.
  const int trigger = std::max(options.level0_file_num_compaction_trigger, 1);
  for (int level = 0; level < num_levels; level++) {
    double score = 0;
    if (level == num_levels - 1 && level > 0) {
      score = 0;  // the last level has nowhere to go
    } else if (level == 0) {
      int count = 0;
      uint64_t bytes = 0;
      for (const FileMetaPtr& f : v.files(0)) {
        if (being_compacted(*f)) continue;
        count++;
        bytes += f->file_size;
      }
      score = static_cast<double>(count) / trigger;
      if (num_levels > 1) {
        const uint64_t l0_target = options.level_compaction_dynamic_level_bytes
                                       ? std::max(r.level_max_bytes[r.base_level], base_bytes)
                                       : base_bytes;
        score = std::max(score, static_cast<double>(bytes) / static_cast<double>(l0_target));
      }
    } else {
      uint64_t bytes = 0;
      for (const FileMetaPtr& f : v.files(level)) {
        if (!being_compacted(*f)) bytes += f->file_size;
      }
      if (r.level_max_bytes[level] != UINT64_MAX) {
        score = static_cast<double>(bytes) / static_cast<double>(r.level_max_bytes[level]);
      }
    }
    r.score[level] = score;
  }
  r.sorted.clear();
  for (int level = 0; level + 1 < num_levels; level++) {
    r.sorted.emplace_back(r.score[level], level);
  }
  std::stable_sort(r.sorted.begin(), r.sorted.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });

  // Pending bytes: what each level holds beyond its target, carried down level by level,
  // times the fan-out it meets below (the ratio of the next level's size to this one's).
  uint64_t estimated = 0;
  uint64_t carry = 0;
  if (num_levels > 1) {
    const uint64_t l0_bytes = v.NumLevelBytes(0);
    if (v.NumFiles(0) >= trigger || l0_bytes >= base_bytes) {
      carry = l0_bytes;
      estimated = l0_bytes;
    }
  }
  uint64_t next_level_bytes = 0;
  for (int level = r.base_level; level < num_levels - 1; level++) {
    uint64_t level_bytes = next_level_bytes > 0 ? next_level_bytes : v.NumLevelBytes(level);
    next_level_bytes = 0;
    level_bytes += carry;
    carry = 0;
    const uint64_t target = r.level_max_bytes[level];
    if (level_bytes > target) {
      carry = level_bytes - target;
      next_level_bytes = v.NumLevelBytes(level + 1);
      if (next_level_bytes > 0) {
        const double fan_out =
            static_cast<double>(next_level_bytes) / static_cast<double>(level_bytes) + 1;
        estimated += MultiplySaturating(carry, fan_out);
      }
    }
  }
  r.estimated_compaction_needed_bytes = estimated;
  return r;
}

}  // namespace shale
