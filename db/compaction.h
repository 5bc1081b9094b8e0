// Compaction: one compaction job's description, as the CompactionPicker chose it: the input
// files of the start level and of the output level, the grandparent files (the level below
// the output level) that bound how large one output file may grow in key range, and the
// per-output limits.
//
// A Compaction references the Version it was picked from (input_version()) for its whole
// life, so the input files and the levels below stay readable and the bottommost checks
// answer against that Version. While it runs, the picker that created it counts its input
// files as being compacted, so no other compaction picks them.
//
// Thread safety: releasing it (CompactionPicker::ReleaseCompaction, or the destructor of a
// compaction not released) touches the picker's registry: hold the DB mutex, as for every
// method of the picker. Everything else reads immutable state and may be called from the
// compaction threads without the mutex.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "db/version_edit.h"
#include "db/version_set.h"
#include "shale/options.h"
#include "util/dbformat.h"

namespace shale {

class CompactionPicker;

// The input files of one level.
struct CompactionInputFiles {
  int level = 0;
  std::vector<FileMetaPtr> files;  // L0: newest first; deeper levels: key order
};

// Target size of an output file at `level` given the base level L0 compacts into:
// target_file_size_base at the base level (and at L0), times target_file_size_multiplier
// per level below it.
uint64_t MaxFileSizeForLevel(const Options& options, int level, int base_level);

// options.max_compaction_bytes, or 25 * target_file_size_base when it is 0.
uint64_t MaxCompactionBytes(const Options& options);

class Compaction {
 public:
  // inputs: one entry per input level, start level first (the output level's entry may be
  // absent or empty). Refs input_version. Called by the picker; tests may call it directly.
  Compaction(Version* input_version, const InternalKeyComparator* icmp, int start_level,
             int output_level, std::vector<CompactionInputFiles> inputs,
             std::vector<FileMetaPtr> grandparents, uint64_t max_output_file_size,
             uint64_t max_compaction_bytes, double score, bool is_manual);
  // REQUIRES: DB mutex. Releases the files (CompactionPicker::ReleaseCompaction) if that was
  // not done, and unrefs the input Version.
  ~Compaction();
  Compaction(const Compaction&) = delete;
  Compaction& operator=(const Compaction&) = delete;

  int start_level() const { return start_level_; }
  int output_level() const { return output_level_; }
  size_t num_input_levels() const { return inputs_.size(); }
  // REQUIRES: which < num_input_levels().
  int level(size_t which) const { return inputs_[which].level; }
  const std::vector<FileMetaPtr>& inputs(size_t which) const { return inputs_[which].files; }
  const std::vector<CompactionInputFiles>& inputs() const { return inputs_; }
  size_t num_input_files() const;
  // The output level's files that are inputs (empty if none).
  const std::vector<FileMetaPtr>& output_level_inputs() const;
  const std::vector<FileMetaPtr>& grandparents() const { return grandparents_; }
  Version* input_version() const { return input_version_; }
  const InternalKeyComparator* icmp() const { return icmp_; }

  uint64_t max_output_file_size() const { return max_output_file_size_; }
  uint64_t max_compaction_bytes() const { return max_compaction_bytes_; }
  // An output file is cut once it overlaps more than this many grandparent bytes, so that a
  // later compaction of that file into the next level stays bounded (RocksDB uses
  // max_compaction_bytes for it).
  uint64_t max_grandparent_overlap_bytes() const { return max_compaction_bytes_; }
  double score() const { return score_; }
  bool is_manual() const { return is_manual_; }
  // Threads the job may split into; 0 means DBOptions::max_subcompactions. Set by the DB
  // for manual compactions (CompactRangeOptions::max_subcompactions).
  uint32_t max_subcompactions() const { return max_subcompactions_; }
  void set_max_subcompactions(uint32_t n) { max_subcompactions_ = n; }

  // Sum of the input files' sizes.
  uint64_t TotalInputBytes() const { return total_input_bytes_; }
  // Smallest and largest user keys over all inputs.
  Slice smallest_user_key() const { return smallest_user_key_; }
  Slice largest_user_key() const { return largest_user_key_; }

  // True when the job can move the single input file down a level by editing the MANIFEST
  // only: one input file, a different output level with no overlapping file in it, and
  // no more grandparent overlap than max_grandparent_overlap_bytes().
  bool IsTrivialMove() const;
  // Makes IsTrivialMove() false: the files are rewritten (for a compaction filter).
  void DisallowTrivialMove() { trivial_move_allowed_ = false; }
  // For a trivial move: delete the input from the start level and add it to the output
  // level unchanged.
  void AddTrivialMoveEdit(VersionEdit* edit) const;

  // True when no level below the output level holds data in the inputs' key range, so
  // the output is the bottom of the tree for it.
  bool bottommost_level() const { return bottommost_level_; }
  // True when no level below the output level has a file containing user_key: a deletion
  // of it that no snapshot needs may be dropped. Thread-safe.
  bool KeyNotExistsBeyondOutputLevel(const Slice& user_key) const;

  // Files may still be ingested beneath the output (allow_ingest_behind): it is never the
  // bottom, and no key is known to be absent below it.
  void SetIngestBehind() {
    ingest_behind_ = true;
    bottommost_level_ = false;
  }

  // Adds a DeleteFile for every input file.
  void AddInputDeletions(VersionEdit* edit) const;

  // "2@0 + 1@1 files, 1234 bytes: [7 8] [5]": for the LOG.
  std::string InputsSummary() const;

 private:
  friend class CompactionPicker;

  // Leaves the picker's registry (through CompactionPicker::ReleaseCompaction).
  void ReleaseCompactionFiles();

  Version* const input_version_;
  const InternalKeyComparator* const icmp_;
  const int start_level_;
  const int output_level_;
  std::vector<CompactionInputFiles> inputs_;
  std::vector<FileMetaPtr> grandparents_;
  const uint64_t max_output_file_size_;
  const uint64_t max_compaction_bytes_;
  const double score_;
  const bool is_manual_;
  uint32_t max_subcompactions_ = 0;
  bool trivial_move_allowed_ = true;
  uint64_t total_input_bytes_ = 0;
  std::string smallest_user_key_;
  std::string largest_user_key_;
  bool bottommost_level_ = false;
  bool ingest_behind_ = false;
  CompactionPicker* picker_ = nullptr;  // registry this compaction is in, if any
  bool released_ = false;
};

}  // namespace shale
