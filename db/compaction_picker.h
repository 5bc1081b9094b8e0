// CompactionPicker: chooses the next leveled compaction from a Version's scores, and the
// chunks of a manual CompactRange; remembers the compactions it handed out until they are
// released, so that no two running compactions share an input file or write overlapping
// key ranges into the same level.
//
// State it owns, so that Versions stay immutable: which files running compactions hold
// (IsBeingCompacted), and the LevelScores (db/level_scores.h) of the Version it was last
// asked about, recomputed when asked about another Version or when a compaction was
// registered or released since (files being compacted do not count towards a score).
//
// Leveled policy (RocksDB's, simplified): the level with the highest score >= 1 compacts.
// L0 -> base level: the oldest L0 file not being compacted plus every L0 file transitively
// overlapping it, at most one L0 compaction at a time. Ln -> Ln+1: the file not being
// compacted with the smallest ratio of overlapping bytes in Ln+1 to its own size
// (kMinOverlappingRatio), widened to a clean cut so that no user key straddles the edge of
// the inputs, then widened in Ln while that adds no Ln+1 file and stays under
// max_compaction_bytes.
//
// Thread safety: none of its own. The DB's picker is PT_GUARDED_BY its mutex
// (db/db_impl.h), so the compiler checks every call. Compactions it returns point back to
// it: the picker must outlive them.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "db/compaction.h"
#include "db/level_scores.h"
#include "db/version_set.h"
#include "shale/options.h"
#include "util/dbformat.h"

namespace shale {

class CompactionPicker {
 public:
  // options: the DB's options in effect (level targets, triggers, file sizes); icmp must
  // outlive the picker.
  CompactionPicker(std::shared_ptr<const Options> options, const InternalKeyComparator* icmp);
  // With a copy of options, for tests and tools that change none.
  CompactionPicker(const Options& options, const InternalKeyComparator* icmp)
      : CompactionPicker(std::make_shared<const Options>(options), icmp) {}
  ~CompactionPicker() = default;
  CompactionPicker(const CompactionPicker&) = delete;
  CompactionPicker& operator=(const CompactionPicker&) = delete;

  // v's level targets, scores and pending bytes, not counting files being compacted. Valid
  // until the next call of any method of the picker.
  const LevelScores& ScoresOf(const Version* v);

  // Whether some level of v scores >= 1 (disable_auto_compactions is the caller's check).
  bool NeedsCompaction(const Version* v) { return ScoresOf(v).NeedsCompaction(); }

  // Whether a running compaction holds f as an input.
  bool IsBeingCompacted(const FileMetaData& f) const { return compacting_.count(f.number) > 0; }

  // The next automatic compaction, or null if no level needs one or every candidate
  // conflicts with a running compaction. The result's files count as being compacted and
  // the compaction is registered as running until ReleaseCompaction (or its destruction).
  // The result references v.
  std::unique_ptr<Compaction> PickCompaction(Version* v);

  // A manual compaction of the files of input_level overlapping [begin, end] (null:
  // unbounded) into output_level (== input_level for a bottommost-level rewrite, else
  // input_level + 1, or the base level for L0). At levels >= 1 the inputs are cut into
  // chunks of about max_compaction_bytes: when the chunk stops short of `end`,
  // **compaction_end is set to the largest key of the chunk (the caller points
  // *compaction_end at storage before the call) and the caller continues after it;
  // when it covers the rest of the range, *compaction_end is set to null.
  // Returns null with *manual_conflict = true when a needed file is being compacted or
  // the output range overlaps a running compaction's output (retry after it finishes),
  // and null with *manual_conflict = false when nothing in input_level overlaps the range.
  std::unique_ptr<Compaction> CompactRange(Version* v, int input_level, int output_level,
                                           const InternalKey* begin, const InternalKey* end,
                                           InternalKey** compaction_end, bool* manual_conflict);

  // Takes c out of the running compactions, so its input files may be picked again. Call
  // when the job is over (whether it succeeded or not). Idempotent.
  void ReleaseCompaction(Compaction* c);

  // Compactions handed out and not yet released.
  int NumRunningCompactions() const { return static_cast<int>(running_.size()); }
  bool IsLevel0CompactionRunning() const;

  // Whether a running compaction, or a reservation, writes into output_level within the
  // user keys [smallest, largest].
  bool OutputRangeBusy(int output_level, const Slice& smallest, const Slice& largest) const;
  // Keeps compactions out of [smallest, largest] (user keys) at `level` until
  // ClearReservations: an ingestion's file is going there, and a compaction picked before
  // it is recorded would not see it.
  void ReserveOutputRange(int level, const Slice& smallest, const Slice& largest);
  void ClearReservations() { reserved_.clear(); }
  // Keeps files out of every compaction, as if one read them, until ReleaseFiles: a
  // DeleteFilesInRange is removing them (db/delete_files_in_range.h). REQUIRES: none of
  // them is being compacted.
  void HoldFiles(const std::vector<uint64_t>& numbers);
  void ReleaseFiles(const std::vector<uint64_t>& numbers);

  const Options& options() const { return *options_; }
  // The options changed (SetOptions): later picks and scores use these.
  void SetOptions(std::shared_ptr<const Options> options);

 private:
  friend class Compaction;

  // The compaction of `level` into the next level, or null.
  std::unique_ptr<Compaction> PickLevel(Version* v, int level, double score);
  // Given the start-level inputs, adds the output level's overlapping files and the
  // grandparents and builds the Compaction; null if a needed file is being compacted or
  // the output range collides with a running compaction.
  std::unique_ptr<Compaction> SetupOtherInputs(Version* v, int level, int output_level,
                                               std::vector<FileMetaPtr> start_inputs, double score,
                                               bool is_manual, bool may_expand_start);
  bool AnyBeingCompacted(const std::vector<FileMetaPtr>& files) const;
  void Register(Compaction* c);
  void UnregisterCompaction(Compaction* c);

  std::shared_ptr<const Options> options_;
  const InternalKeyComparator* const icmp_;
  std::set<Compaction*> running_;
  struct Reservation {
    int level;
    std::string smallest, largest;  // user keys
  };
  std::vector<Reservation> reserved_;
  std::unordered_set<uint64_t> compacting_;  // input file numbers of running_

  // ScoresOf's cache: the Version scored (pointer and number, since a freed Version's
  // address may be reused) and whether compacting_ changed since.
  LevelScores scores_;
  const Version* scored_ = nullptr;
  uint64_t scored_number_ = 0;
  bool scores_stale_ = true;
};

}  // namespace shale
