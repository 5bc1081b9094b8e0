// Version and VersionSet: the LSM tree's file metadata and its persistence in the MANIFEST.
//
// A Version is an immutable snapshot of the live SST files per level: L0 files may overlap
// and are kept newest first (by largest_seqno, then file number); every deeper level is a
// sorted run of non-overlapping files ordered by smallest key. Versions are reference
// counted (Ref/Unref, safe from any thread); a Version and the files it lists stay alive
// while anyone holds a reference, and AddLiveFiles reports the files of every Version still
// alive, so the DB deletes only files no reader can reach.
//
// The VersionSet owns the current Version, the counters persisted with it (next file
// number, log numbers, last sequence) and the MANIFEST: a log (db/log_writer.h format) of
// VersionEdits whose first record is a full snapshot; CURRENT names the live MANIFEST.
//
// Thread safety: methods marked "REQUIRES: DB mutex" need the mutex passed to LogAndApply
// held; NewFileNumber, MarkFileNumberUsed, LastSequence and SetLastSequence are atomic and
// may be called from any thread. LogAndApply may be called by several threads at once:
// callers queue and are served one at a time, in arrival order.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "db/log_writer.h"
#include "db/version_edit.h"
#include "shale/env.h"
#include "shale/options.h"
#include "util/dbformat.h"
#include "util/internal_iterator.h"
#include "util/mutexlock.h"
#include "util/read_callback.h"

namespace shale {

class MergeContext;
class TableCache;
class VersionSet;

using FileMetaPtr = std::shared_ptr<FileMetaData>;

class Version {
 public:
  Version(const Version&) = delete;
  Version& operator=(const Version&) = delete;

  // Thread-safe. The Version deletes itself when the last reference goes.
  void Ref();
  void Unref();

  // Looks up key.user_key() in the files, newest data first: L0 files newest first, then
  // the one file per deeper level whose range holds the key. Finds the newest entry with
  // sequence <= key's sequence that callback (may be null) accepts. Returns true when it
  // found one: a Put (*s = OK, *value assigned), a Delete or SingleDelete (*s = NotFound),
  // a Merge (*s = NotSupported("no merge operator configured")); *seq is set in these
  // cases. Also returns true, with *s the error, if a file could not be read. Returns false
  // if no file has a visible entry for the key.
  //
  // With a merge_context, operands are gathered into it instead, copied or (with
  // want_pins) pinned in their blocks, and the search goes on beneath them, across files
  // and levels, to the first Put (*value, or an operand with base_as_operand) or
  // tombstone; *s = MergeInProgress when ShouldMerge ends it early; false when the files
  // hold nothing older than the operands.
  //
  // With pinned (and no merge_context), a Put found in a file is not copied into *value:
  // *pinned is pointed at the bytes in their block, which it keeps referenced. *hit_level,
  // when given, is set to the level of the file that answered.
  bool Get(const ReadOptions& read_options, const LookupKey& key, std::string* value, Status* s,
           SequenceNumber* seq, ReadCallback* callback, MergeContext* merge_context = nullptr,
           PinnableSlice* pinned = nullptr, int* hit_level = nullptr);

  // Appends iterators over this Version's data: one per L0 file and one concatenating
  // level iterator per non-empty deeper level. The caller owns them; each keeps this
  // Version referenced until it is deleted.
  void AddIterators(const ReadOptions& read_options, std::vector<InternalIterator*>* iters);

  int NumLevels() const { return static_cast<int>(files_.size()); }
  int NumFiles(int level) const { return static_cast<int>(files_[level].size()); }
  uint64_t NumLevelBytes(int level) const;
  // REQUIRES: 0 <= level < NumLevels(). Valid while this Version is referenced.
  const std::vector<FileMetaPtr>& files(int level) const { return files_[level]; }

  // RocksDB's listing of the files (the "sstables" property): per level a line
  // "--- level N --- version# V ---", then per file
  // " number:size[smallest_seqno .. largest_seqno][smallest .. largest]" with the internal
  // keys as InternalKey::DebugString(hex) prints them.
  std::string DebugString(bool hex = false) const;
  // This Version's place in the sequence its VersionSet built, 0 for the first.
  uint64_t version_number() const { return version_number_; }
  // "files[4 2 0 0 0 0 0] base level 1": file counts per level, for the LOG.
  std::string LevelSummary() const;

  // ---- Compaction support. Everything below reads FileMetaData::being_compacted and the
  // scores, so it REQUIRES the DB mutex once the Version is shared.

  // Recomputes the level targets (base level, MaxBytesForLevel), the per-level scores and
  // the estimated pending compaction bytes from the files and their being_compacted flags.
  // VersionSet calls it whenever a Version becomes current; the compaction picker calls it
  // again after marking or releasing files.
  void ComputeCompactionScore(const Options& options);

  // The level L0 compacts into: 1, or with level_compaction_dynamic_level_bytes the
  // highest level whose target is at least max_bytes_for_level_base / multiplier.
  int base_level() const { return base_level_; }
  // Target size of `level` (>= 1); levels above the base level have none (UINT64_MAX).
  uint64_t MaxBytesForLevel(int level) const { return level_max_bytes_[level]; }
  // The score of `level`: for L0 the larger of (files not being compacted / trigger) and
  // (their bytes / max_bytes_for_level_base); for L1..Ln-2 the bytes not being compacted
  // over the level's target; 0 for the last level. >= 1 means the level needs compacting.
  double LevelScore(int level) const { return level_score_[level]; }
  // The i-th (0-based) highest score over levels 0..NumLevels()-2, and its level.
  double CompactionScore(int i) const { return sorted_scores_[i].first; }
  int CompactionScoreLevel(int i) const { return sorted_scores_[i].second; }
  int NumScoredLevels() const { return static_cast<int>(sorted_scores_.size()); }
  // Bytes that compaction must rewrite to bring every level within its target, estimated as
  // RocksDB does (the "estimate-pending-compaction-bytes" property and the pending-bytes
  // write stall input).
  uint64_t EstimatedCompactionNeededBytes() const { return estimated_compaction_needed_bytes_; }

  // Files of `level` whose user-key range intersects [begin, end] (null: unbounded), in
  // level order. At L0 the range grows to cover every file it picks up, and the search
  // restarts, so the result holds every L0 file transitively overlapping the range.
  void GetOverlappingInputs(int level, const InternalKey* begin, const InternalKey* end,
                            std::vector<FileMetaPtr>* inputs) const;
  // Same with user keys (null: unbounded).
  void GetOverlappingInputsUser(int level, const Slice* begin_user_key, const Slice* end_user_key,
                                std::vector<FileMetaPtr>* inputs) const;
  // Whether some file of `level` intersects the user-key range [smallest, largest] (null:
  // unbounded).
  bool OverlapInLevel(int level, const Slice* smallest_user_key,
                      const Slice* largest_user_key) const;
  // Whether no level below `level` holds a file whose range contains user_key / intersects
  // [smallest, largest]. These say where a tombstone can be dropped.
  bool KeyNotInLevelsBelow(int level, const Slice& user_key) const;
  bool RangeNotInLevelsBelow(int level, const Slice& smallest_user_key,
                             const Slice& largest_user_key) const;
  // Adds to *inputs (files of `level` >= 1, contiguous, in order) the neighbours that share
  // a boundary user key with them, so that no user key is split between files inside and
  // outside the set ("clean cut"). No-op at L0 (GetOverlappingInputs already expands).
  void ExpandInputsToCleanCut(int level, std::vector<FileMetaPtr>* inputs) const;

 private:
  friend class VersionSet;
  friend class VersionBuilder;

  Version(VersionSet* vset, TableCache* table_cache, const InternalKeyComparator* icmp,
          int num_levels);
  ~Version();

  // Searches one file; see Get. Returns true when the search is over.
  bool SearchFile(const ReadOptions& read_options, const FileMetaData& f, const LookupKey& key,
                  std::string* value, Status* s, SequenceNumber* seq, ReadCallback* callback,
                  MergeContext* merge_context, PinnableSlice* pinned);

  VersionSet* vset_;  // null once the VersionSet is gone
  TableCache* const table_cache_;
  const InternalKeyComparator* const icmp_;
  std::vector<std::vector<FileMetaPtr>> files_;
  std::atomic<int> refs_{0};
  const uint64_t version_number_;

  // Computed by ComputeCompactionScore.
  int base_level_ = 1;
  std::vector<uint64_t> level_max_bytes_;
  std::vector<double> level_score_;
  std::vector<std::pair<double, int>> sorted_scores_;  // score descending
  uint64_t estimated_compaction_needed_bytes_ = 0;
};

class VersionSet {
 public:
  // options and icmp must outlive the VersionSet (options->num_levels levels,
  // options->env, options->use_fsync for MANIFEST syncs). table_cache is shared with the DB.
  VersionSet(const std::string& dbname, const Options* options, TableCache* table_cache,
             const InternalKeyComparator* icmp);
  // Versions still referenced elsewhere are detached and stay usable for reads, but must
  // be released before table_cache is destroyed, and none may be released concurrently
  // with this destructor.
  ~VersionSet();
  VersionSet(const VersionSet&) = delete;
  VersionSet& operator=(const VersionSet&) = delete;

  // Loads the state from CURRENT and the MANIFEST it names. Call once, before any
  // LogAndApply. Returns:
  //  - NotFound naming CURRENT if there is no CURRENT file (the DB does not exist);
  //  - Corruption naming CURRENT if it is empty, lacks the final newline, does not name a
  //    MANIFEST, or names one that does not exist;
  //  - Corruption naming the MANIFEST and the offset for a damaged record or an edit that
  //    does not apply (deleting an absent file, overlapping files in a level >= 1, missing
  //    counters); a record cut off at the very end (a crash during an unacknowledged write)
  //    is ignored;
  //  - InvalidArgument naming both comparators if the MANIFEST was written with another
  //    comparator, or if it has files at a level >= options->num_levels.
  // The MANIFEST read is not reused: the first LogAndApply writes a new one.
  Status Recover();

  // Applies *edit to the current Version and makes it durable: fills in the counters the
  // edit does not set (log number, previous log number, last sequence; the next file number
  // is always set), appends the edit to the MANIFEST and syncs it, then installs the new
  // Version as current. The first call after Recover (or after a failed call) writes a
  // new MANIFEST holding a snapshot of the state plus the edit, syncs it and switches
  // CURRENT to it (fsyncing the directory). mu is released during the I/O and held again
  // on return; concurrent callers wait their turn.
  //
  // On failure the current Version is unchanged, but the edit may or may not have reached
  // the disk: the caller must not delete files the edit adds until a later LogAndApply
  // succeeds (it writes a fresh MANIFEST without them). An edit that cannot apply (a file
  // that is absent, present twice, overlapping at a level >= 1, or at a level >=
  // num_levels) returns InvalidArgument or Corruption before any I/O.
  // REQUIRES: *mu held (the DB mutex).
  Status LogAndApply(VersionEdit* edit, Mutex* mu) REQUIRES(mu);

  // Checks that every file of the current Version exists with the size the MANIFEST
  // records: Corruption naming the file otherwise. With open_tables, also opens each one
  // through the TableCache (reading and verifying its footer and meta blocks).
  // REQUIRES: no concurrent LogAndApply.
  Status VerifyFilesExist(bool open_tables = false);

  // REQUIRES: DB mutex. The caller must Ref() it to keep it past the mutex.
  Version* current() const { return current_; }

  // Allocates a fresh file number (SST, WAL, MANIFEST).
  uint64_t NewFileNumber() { return next_file_number_.fetch_add(1); }
  // Makes sure NewFileNumber never returns `number` or anything below it.
  void MarkFileNumberUsed(uint64_t number);
  // The number NewFileNumber would return next.
  uint64_t PeekNextFileNumber() const { return next_file_number_.load(); }

  SequenceNumber LastSequence() const { return last_sequence_.load(std::memory_order_acquire); }
  // REQUIRES: seq >= LastSequence().
  void SetLastSequence(SequenceNumber seq) { last_sequence_.store(seq, std::memory_order_release); }

  // REQUIRES: DB mutex (for the two below).
  // WAL files with numbers below this hold nothing that is not in an SST file.
  uint64_t LogNumber() const { return log_number_; }
  uint64_t PrevLogNumber() const { return prev_log_number_; }
  // The live MANIFEST; thread-safe. A MANIFEST with a larger number may be one being
  // written, and while CURRENT is switched to it, TempFileName(that number) exists: keep
  // MANIFEST and .dbtmp files numbered >= this, delete smaller MANIFESTs.
  uint64_t ManifestFileNumber() const { return manifest_file_number_.load(); }

  // Adds the numbers of the files of every live Version. Thread-safe.
  void AddLiveFiles(std::set<uint64_t>* live);

  int NumLevels() const { return num_levels_; }
  // REQUIRES: DB mutex.
  int NumLevelFiles(int level) const { return current_->NumFiles(level); }
  const InternalKeyComparator* icmp() const { return icmp_; }
  TableCache* table_cache() const { return table_cache_; }

 private:
  friend class Version;
  struct ManifestWriter;

  // Builds the Version that results from applying edit to current_.
  Status BuildVersion(const VersionEdit& edit, Version** result);
  // Writes (mu released) the MANIFEST record(s) for the front writer's edit.
  Status WriteManifest(const std::string& snapshot, const std::string& record,
                       uint64_t new_manifest);
  void EncodeSnapshot(const Version* v, std::string* dst) const;
  // Makes v (unreferenced, just built) the current Version.
  void AppendVersion(Version* v);

  Env* const env_;
  const std::string dbname_;
  const Options* const options_;
  TableCache* const table_cache_;
  const InternalKeyComparator* const icmp_;
  const int num_levels_;

  std::atomic<uint64_t> next_file_number_{2};
  std::atomic<SequenceNumber> last_sequence_{0};
  std::atomic<uint64_t> manifest_file_number_{0};
  std::atomic<uint64_t> next_version_number_{0};  // numbers the Versions built

  // Guarded by the DB mutex. Per-column-family state; only the default family (id 0)
  // exists, so it is held inline until more are supported.
  uint64_t log_number_ = 0;
  uint64_t prev_log_number_ = 0;
  Version* current_ = nullptr;  // referenced

  // Callers of LogAndApply, served front first. Guarded by the DB mutex.
  std::deque<ManifestWriter*> writers_;
  // Touched only by the front writer (with or without the DB mutex).
  std::unique_ptr<log::Writer> descriptor_log_;
  std::unique_ptr<Directory> db_dir_;

  // Every Version not yet deleted, for AddLiveFiles. Versions add and remove themselves.
  Mutex live_mu_;
  std::unordered_set<Version*> live_ GUARDED_BY(live_mu_);
};

}  // namespace shale
