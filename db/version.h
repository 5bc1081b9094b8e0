// Version: an immutable snapshot of the LSM tree's live SST files per level, and the
// point lookup through them.
//
// L0 files may overlap and are kept newest first (by largest_seqno, then file number);
// every deeper level is a sorted run of non-overlapping files ordered by smallest key.
// Versions are built by VersionBuilder and installed by VersionSet; once built, nothing in
// a Version changes (what compaction thinks of it, its scores and the files being
// compacted, lives in the CompactionPicker). Versions are reference counted (Ref/Unref,
// safe from any thread); a Version and the files it lists stay alive while anyone holds a
// reference, and VersionSet::AddLiveFiles reports the files of every Version still alive,
// so the DB deletes only files no reader can reach.
//
// Thread safety: every const method may be called from any thread while the caller holds
// a reference.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "db/version_edit.h"
#include "shale/options.h"
#include "util/dbformat.h"
#include "util/internal_iterator.h"
#include "util/mutexlock.h"
#include "util/range_tombstone.h"
#include "util/read_callback.h"

namespace shale {

class MergeContext;
class TableCache;
class VersionSet;

using FileMetaPtr = std::shared_ptr<FileMetaData>;

// One key of Version::MultiGet: Get's arguments (key, value, merge_context, pinned; the
// pointers must outlive the call) and its results (found is Get's return value).
struct VersionGetItem {
  const LookupKey* key = nullptr;
  std::string* value = nullptr;
  MergeContext* merge_context = nullptr;
  PinnableSlice* pinned = nullptr;
  bool found = false;
  Status status;
  SequenceNumber seq = 0;
  int hit_level = -2;
  uint64_t key_hash = 0;  // Hash64 of the user key, once an L0 key filter needs it
  // As Get's deleted_below: set by the caller from the memtables, raised by the files.
  SequenceNumber deleted_below = 0;
};

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
  //
  // Range tombstones: deleted_below is the newest visible tombstone sequence covering the
  // key in the memtables (0: none). The files' own tombstones join it as the search goes
  // down (a file's, read through the table cache, only when it has some); a visible entry
  // older than it is deleted, and a file whose entries are all older answers NotFound for
  // itself and every file beneath it; either answer's *seq is the tombstone's. When no
  // file answers, *covered_out (if given) receives the newest tombstone sequence covering
  // the key that the search met, memtables' included (0: none): a miss may still be a
  // deletion, which a conflict check must count as a write to the key.
  bool Get(const ReadOptions& read_options, const LookupKey& key, std::string* value, Status* s,
           SequenceNumber* seq, ReadCallback* callback, MergeContext* merge_context = nullptr,
           PinnableSlice* pinned = nullptr, int* hit_level = nullptr,
           SequenceNumber deleted_below = 0, SequenceNumber* covered_out = nullptr);

  // Get for every item at once, each answered exactly as Get answers it alone (with the
  // same callback). The levels are walked once for the batch: each file is searched for
  // all the keys still unanswered that fall in its range (TableReader::MultiGet, which
  // fetches a data block once for the keys it holds), and a key leaves the batch at its
  // answer. REQUIRES: items sorted by ascending internal key (equal keys allowed).
  void MultiGet(const ReadOptions& read_options, VersionGetItem* const* items, size_t n,
                ReadCallback* callback);

  // Appends iterators over this Version's data: one per L0 file and one concatenating
  // level iterator per non-empty deeper level. The caller owns them; each keeps this
  // Version referenced until it is deleted.
  // With tombstones, also appends for each iterator the range tombstones of what it reads
  // (an L0 file's, or every file's of the level, fragmented together), or null when it has
  // none, and with newer the union of those of every iterator appended before it (its
  // newer files), or null. Both are made at the first call that wants them and kept for
  // the Version's life (its files never change). When a file's tombstones cannot be read,
  // every iterator is one with that error instead (and nothing is kept).
  void AddIterators(
      const ReadOptions& read_options, std::vector<InternalIterator*>* iters,
      std::vector<std::shared_ptr<const FragmentedRangeTombstones>>* tombstones = nullptr,
      std::vector<std::shared_ptr<const FragmentedRangeTombstones>>* newer = nullptr);

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
  // "files[4 2 0 0 0 0 0] base level 1": file counts per level and the base level the
  // compaction picker computed, for the LOG.
  std::string LevelSummary(int base_level) const;

  // ---- Queries for compaction picking and for dropping tombstones.

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
  // *deleted_below: as Get's, raised by f's own tombstones first.
  bool SearchFile(const ReadOptions& read_options, const FileMetaData& f, const LookupKey& key,
                  std::string* value, Status* s, SequenceNumber* seq, ReadCallback* callback,
                  MergeContext* merge_context, PinnableSlice* pinned,
                  SequenceNumber* deleted_below);

  // Searches one file for each of batch's keys, marking those whose search is over
  // (found, with level as hit_level); see MultiGet.
  void SearchFileBatch(const ReadOptions& read_options, const FileMetaData& f, int level,
                       const std::vector<VersionGetItem*>& batch, ReadCallback* callback);

  // The lists AddIterators hands out, made once (see there).
  using TombstoneList = std::shared_ptr<const FragmentedRangeTombstones>;
  Status TombstoneLists(std::vector<TombstoneList>* own, std::vector<TombstoneList>* newer)
      EXCLUDES(tombstones_mu_);

  VersionSet* vset_;  // null once the VersionSet is gone
  TableCache* const table_cache_;
  const InternalKeyComparator* const icmp_;
  std::vector<std::vector<FileMetaPtr>> files_;
  Mutex tombstones_mu_;
  bool tombstones_made_ GUARDED_BY(tombstones_mu_) = false;
  std::vector<TombstoneList> own_tombstones_ GUARDED_BY(tombstones_mu_);
  std::vector<TombstoneList> newer_tombstones_ GUARDED_BY(tombstones_mu_);
  std::atomic<int> refs_{0};
  const uint64_t version_number_;
};

}  // namespace shale
