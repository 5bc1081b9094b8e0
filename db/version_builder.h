// VersionBuilder: the files of a Version after a series of VersionEdits, checked. Used by
// VersionSet when it applies an edit to the current Version and when it replays the
// MANIFEST at recovery.
//
// Apply takes an edit's deletions first, then its additions, so one edit may move a file
// between levels. It refuses, with Corruption naming the file, to delete a file that is not
// at the level named, to add a file that is already present, or to add one whose key range
// or sequence range is inverted; and with InvalidArgument a level beyond num_levels.
// SaveTo orders L0 newest first (largest sequence, then file number) and every deeper level
// by smallest key, and refuses (Corruption) overlapping files at a level >= 1.
//
// Thread safety: none; a builder is used by one thread and thrown away. The base Version
// must stay referenced while the builder lives (the builder shares its FileMetaData).
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "db/version.h"
#include "db/version_edit.h"
#include "util/dbformat.h"

namespace shale {

class VersionBuilder {
 public:
  // base may be null (an empty tree).
  VersionBuilder(const InternalKeyComparator* icmp, int num_levels, const Version* base);

  Status Apply(const VersionEdit& edit);
  // Fills v's levels with the result. REQUIRES: v is new and not yet shared.
  Status SaveTo(Version* v) const;

 private:
  Status CheckLevel(int level) const;

  const InternalKeyComparator* const icmp_;
  const int num_levels_;
  std::vector<std::map<uint64_t, FileMetaPtr>> levels_;  // per level: number -> file
  std::unordered_map<uint64_t, int> level_of_;           // number -> level
};

}  // namespace shale
