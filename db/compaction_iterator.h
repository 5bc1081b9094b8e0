// CompactionIterator: the entries of a sorted internal-key stream (the merged inputs of a
// compaction, or a memtable being flushed) that must survive into the output.
//
// Snapshot stripes: with live snapshots s1 < s2 < ... < sn, the sequence numbers of one
// user key fall into stripes (.., s1], (s1, s2], ..., (sn, max]. A reader at any snapshot
// (or at the latest state) sees at most the newest entry of each stripe, so within a
// stripe only the newest entry is kept and the older ones are dropped ("hidden",
// COMPACTION_KEY_DROP_NEWER_ENTRY). Further rules, as RocksDB applies them:
//  - A Delete in the earliest stripe is dropped ("obsolete", COMPACTION_KEY_DROP_OBSOLETE)
//    when the Compaction says no level below the output holds the key
//    (KeyNotExistsBeyondOutputLevel); everything older in that stripe goes with it.
//  - A SingleDelete that meets an older entry of the same stripe drops itself and that entry
//    (the entry should be the Put it cancels; anything else counts as a mismatch). Two
//    SingleDeletes in a row drop the first. A SingleDelete meeting nothing (a snapshot
//    boundary, another key, the end) is kept, unless it is in the earliest stripe and the
//    key exists nowhere below the output, where it is dropped like a Delete.
//  - A SingleDelete under a newer Put of the same stripe is hidden from readers but is not
//    dropped for that: it is judged as if nothing covered it. The Put above it may later be
//    cancelled by a newer SingleDelete, and what this one deletes (a Put in an older
//    stripe, or in a level below) must stay deleted then (history P S P S with a snapshot
//    between the first P and S).
//  - Merge operands, without a merge operator, are kept unchanged and do not hide what is
//    below them: the entries under a Merge in the same stripe are treated as if the Merge
//    were not there (the newest non-Merge entry of the stripe is kept, and hides the rest).
//  - With a merge operator, a run of operands that no newer entry of its stripe hides is
//    resolved against what lies beneath it in the same stripe:
//      a Put: folded with the operands (FullMergeV2) into one Put carrying the newest
//        operand's sequence number; the Put is consumed and hides the rest of the stripe;
//      a Delete: the same, folded onto no value, and the Delete is consumed;
//      a SingleDelete: folded onto no value, but the SingleDelete is not consumed: it is
//        then judged on its own, as under a newer Put (it may delete a Put of an older
//        stripe, or of a level below, that must stay deleted);
//      nothing (the key has no older entry in the input) when the Compaction says no level
//        below the output holds the key: folded onto no value;
//      otherwise (a snapshot boundary, or older data may exist below, or a flush): the
//        operands are only combined with each other (PartialMergeMulti) into one Merge
//        carrying the newest sequence number, or kept unchanged when the operator declines.
//    Operands never combine across a snapshot boundary: each stripe is resolved alone.
//    Range tombstones (SetRangeTombstones): an entry of the run, or the base beneath it, that
//    a tombstone newer than it and no newer than the run's newest operand covers is deleted
//    for every reader of the stripe when each of them also sees that tombstone: the run is
//    then folded onto no value, as onto a Delete, and that entry (not consumed) is judged
//    by the next round, hidden by the result. When some reader of the stripe may not see
//    the tombstone (with a checker: it committed later, or not as of the job's snapshot),
//    the operands are only combined with each other. (Without a checker the flush or
//    compaction drops such entries before they get here, db/range_del_iterator.h; with one
//    it drops none, and this rule is what keeps an operand off a deleted value.)
//    A FullMergeV2 that fails stops the iteration with Corruption (and counts
//    NUMBER_MERGE_FAILURES); PartialMerge declining is not a failure.
// Without a Compaction (flush) no Delete or SingleDelete is dropped for being at the
// bottom, since older data may exist in the SST files.
//
// With a SnapshotChecker (db/snapshot_checker.h: data written before it commits), an
// entry's stripe is the earliest live snapshot that sees it, or the latest state if none
// does, rather than the one its sequence falls under; the rules above then apply to those
// stripes (two entries of one stripe are seen by the same readers, who meet the newer
// first). Further:
//  - Committed means seen by the job's snapshot (job_snapshot, taken when the job
//    started and live until it ends), not by whatever state holds when the entry is
//    reached: a snapshot taken after the job started was not in its list, and an entry
//    that committed after the job's snapshot may be invisible to it (RocksDB 4883). An
//    entry the job's snapshot does not see (uncommitted) is written unchanged and is
//    invisible to the rules: it hides nothing, no operand folds onto it, no SingleDelete
//    cancels it, and it is never dropped.
//  - Commits need not come in sequence order, so an older entry may have a later stripe
//    than a newer one. Every reader of such an entry also sees the newer one, so a Put or
//    a Delete (kept, or dropped as obsolete) or a merge folded into a Put hides every older
//    entry of its own or a later stripe; a Merge or a SingleDelete hides nothing that way,
//    and a SingleDelete is never dropped that way (as within one stripe).
//  - A tombstone dropped (as obsolete, or with the Put it cancels) is written after all
//    when an uncommitted entry of its key follows: that entry may commit after it (its
//    writer held no lock on the key), and must stay hidden then.
//  - A snapshot the checker reports released (kSnapshotReleased) is skipped from then on,
//    for every entry of the job: it is nobody's stripe, and the earliest snapshot of the
//    Delete rules is the earliest one not known to be released.
//
// With a CompactionFilter (SetCompactionFilter; what each decision means is in
// shale/compaction_filter.h), as RocksDB applies one:
//  - The first committed entry of each user key (the newest one, or, with a checker, the
//    newest the job's snapshot sees) is offered when it is a Put, whatever its stripe, and
//    no other entry of the key is. kRemove and kPurge turn it into a Delete or a
//    SingleDelete at its sequence number, kChangeValue gives it the new value; the entry
//    is then judged by the rules above as if it had been written so. kRemoveAndSkipUntil
//    drops it and moves the input to the first entry of skip_until (or past the end
//    bound), dropping everything between unread.
//  - With a merge operator, each operand of a run newer than the latest snapshot is
//    offered before the run is resolved: kRemove and kPurge drop the operand,
//    kChangeValue replaces it, kRemoveAndSkipUntil drops it and skips as above (the run
//    then ends as at another key). A run whose every operand was dropped resolves to
//    nothing, and what lies beneath it is judged on its own.
//  - A decision shale cannot honour stops the iteration with NotSupported.
//
// Corrupt internal keys stop the iteration with Corruption; input errors stop it with the
// input's status.
//
// Thread safety: one thread at a time. key()/value() stay valid until the next Next().
// The input is not owned and must be positioned by the caller (e.g. SeekToFirst or Seek to
// a subcompaction's start) before SeekToFirst() here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "db/snapshot_checker.h"
#include "shale/compaction_filter.h"
#include "shale/comparator.h"
#include "shale/env.h"
#include "shale/merge_operator.h"
#include "shale/options.h"
#include "shale/slice.h"
#include "shale/statistics.h"
#include "shale/status.h"
#include "util/dbformat.h"
#include "util/internal_iterator.h"
#include "util/range_tombstone.h"

namespace shale {

class Compaction;

// Counters of what an iteration read, wrote and dropped, and why.
struct CompactionIterationStats {
  uint64_t num_input_records = 0;
  uint64_t num_input_deletion_records = 0;  // Delete and SingleDelete entries read
  uint64_t num_output_records = 0;
  // Older entries of a stripe shadowed by a newer one (COMPACTION_KEY_DROP_NEWER_ENTRY).
  uint64_t num_record_drop_hidden = 0;
  // Deletions (and Puts cancelled by a SingleDelete) no reader needs any more
  // (COMPACTION_KEY_DROP_OBSOLETE).
  uint64_t num_record_drop_obsolete = 0;
  // Obsolete deletions dropped above the bottommost level because no level below the
  // output holds the key (COMPACTION_OPTIMIZED_DEL_DROP_OBSOLETE).
  uint64_t num_optimized_del_drop_obsolete = 0;
  // SingleDeletes dropped without meeting their Put.
  uint64_t num_single_del_fallthru = 0;
  // SingleDeletes that met something other than one Put.
  uint64_t num_single_del_mismatch = 0;
  // Entries replaced by a merge result: n operands (and the Put or Delete beneath them)
  // folded into one entry count n (n + 1 - 1).
  uint64_t num_record_drop_merged = 0;
  // Merge operator calls that failed (the iteration stopped with Corruption).
  uint64_t num_merge_failures = 0;
  // Entries the compaction filter removed, purged or skipped from (COMPACTION_KEY_DROP_USER).
  uint64_t num_record_drop_user = 0;
  uint64_t total_input_raw_key_bytes = 0;
  uint64_t total_input_raw_value_bytes = 0;

  void Add(const CompactionIterationStats& o);
};

// The filter a job offers entries to: for a compaction, the family's compaction_filter;
// otherwise (or for a flush) one the family's compaction_filter_factory makes, if
// ShouldFilterTableFileCreation(context.reason) says so. *owned holds a made one; *filter
// is null when there is none. NotSupported for a filter whose IgnoreSnapshots() is false.
Status ChooseCompactionFilter(const Options& options, const CompactionFilter::Context& context,
                              std::unique_ptr<CompactionFilter>* owned,
                              const CompactionFilter** filter);

class CompactionIterator {
 public:
  // snapshots: the live snapshot sequence numbers, sorted ascending (duplicates allowed).
  // The earliest snapshot is snapshots.front() (kMaxSequenceNumber when none).
  // compaction may be null (flush). end_user_key, when not null, is an exclusive upper bound:
  // the iteration ends at the first entry whose user key is >= it (the Slice must outlive
  // the iterator). merge_operator null: operands pass through unchanged. info_log (the
  // operator's logger), statistics and snapshot_checker may be null. job_snapshot (used
  // with a checker only): the snapshot whose view decides what is committed, normally one
  // of snapshots held by the job for its life; kMaxSequenceNumber asks about the state at
  // the time of each check. Every pointer must outlive the iterator.
  CompactionIterator(InternalIterator* input, const Comparator* ucmp,
                     std::vector<SequenceNumber> snapshots, const Compaction* compaction,
                     const Slice* end_user_key = nullptr,
                     const MergeOperator* merge_operator = nullptr, Logger* info_log = nullptr,
                     Statistics* statistics = nullptr,
                     const SnapshotChecker* snapshot_checker = nullptr,
                     SequenceNumber job_snapshot = kMaxSequenceNumber);
  CompactionIterator(const CompactionIterator&) = delete;
  CompactionIterator& operator=(const CompactionIterator&) = delete;

  // Offers entries to filter, telling it level (see the rules above). Optional (null:
  // none); before SeekToFirst(). The filter must outlive the iterator.
  void SetCompactionFilter(const CompactionFilter* filter, int level) {
    filter_ = filter;
    filter_level_ = level;
  }

  // The range tombstones of the input (unstriped), to judge merge runs by (see the rules
  // above). Optional (null: none); before SeekToFirst(); must outlive the iterator.
  void SetRangeTombstones(const FragmentedRangeTombstones* tombstones) {
    tombstones_ = tombstones != nullptr && !tombstones->empty() ? tombstones : nullptr;
  }

  // Starts at the input's current position.
  void SeekToFirst();
  // REQUIRES: Valid().
  void Next();

  bool Valid() const { return valid_; }
  // The entry to write. REQUIRES: Valid().
  Slice key() const { return key_; }
  Slice value() const { return value_; }
  Slice user_key() const { return ikey_.user_key; }
  const ParsedInternalKey& ikey() const { return ikey_; }
  // OK while Valid() or after a clean end; else why the iteration stopped.
  Status status() const { return status_; }
  const CompactionIterationStats& stats() const { return stats_; }

  SequenceNumber earliest_snapshot() const { return earliest_snapshot_; }

 private:
  // Advances until an entry survives (valid_) or the input ends or fails.
  void NextFromInput();
  // The stripe of an entry at seq: the smallest snapshot that sees it (without a checker,
  // the smallest >= seq), kMaxSequenceNumber if only the latest state does. False (with a
  // checker) when not even that sees it.
  bool StripeOf(SequenceNumber seq, SequenceNumber* stripe);
  // Whether an entry at seq (of the current key) is committed and in the current stripe.
  bool InCurrentStripe(SequenceNumber seq);
  // The earliest snapshot not known to be released (kMaxSequenceNumber if none).
  SequenceNumber EarliestLiveSnapshot() const;
  bool IsReleased(SequenceNumber snapshot) const;
  // A Put or Delete of the current stripe hides everything older in it, and (with a
  // checker) every older entry of a later stripe.
  void CoverStripe();
  // With a checker: keeps a copy of the first tombstone of the current key dropped (as
  // obsolete, or with the Put it cancels), to be written after all if an uncommitted
  // entry of the key follows. optimized: counted in num_optimized_del_drop_obsolete.
  void RememberDroppedTombstone(const Slice& key, const Slice& value, bool optimized);
  // Counts the entry at the input as read.
  void CountInput(const ParsedInternalKey& ik, const Slice& value);
  // Outputs the input's current entry in place.
  void EmitFromInput(const ParsedInternalKey& ik);
  // Outputs a copy of key/value (the input has moved past them).
  void EmitCopy(const Slice& key, const Slice& value);
  // Resolves the run of operands starting at the input's current Merge entry (the newest
  // of the current stripe): emits the result, or the first of the operands kept, or sets
  // status_, and returns true; false when the filter dropped every operand (nothing
  // emitted, the input at the next entry to process).
  bool ResolveMerge(const ParsedInternalKey& first);
  // Whether a range tombstone deletes the current key's entry at seq (of the current
  // stripe) for readers of a run whose newest operand is at newest: kCovered when one in
  // (seq, newest] is seen by every reader of the stripe, kMaybe when only ones some reader
  // may not see are there, kNone when none is.
  enum class RangeCover { kNone, kCovered, kMaybe };
  RangeCover CoveredByRange(SequenceNumber seq, SequenceNumber newest);
  // Asks the filter about one entry (a Put or an operand) of the current key. Returns the
  // decision to apply (kRemoveAndSkipUntil only with a skip_until_ past the key; the new
  // value in filter_value_), or kUndetermined with status_ set.
  CompactionFilter::Decision Offer(const ParsedInternalKey& ik, const Slice& value);
  // Moves the input to the first entry at or after filter_skip_until_ (a user key).
  void SkipToFilterBound();
  // Emits the next queued entry, if any.
  bool EmitQueued();

  InternalIterator* const input_;
  const Comparator* const ucmp_;
  const std::vector<SequenceNumber> snapshots_;
  const SequenceNumber earliest_snapshot_;
  const Compaction* const compaction_;
  const Slice* const end_user_key_;
  const MergeOperator* const merge_operator_;
  Logger* const info_log_;
  Statistics* const statistics_;
  const SnapshotChecker* const snapshot_checker_;
  const SequenceNumber job_snapshot_;
  // Snapshots the checker reported released (few: a linear search is enough).
  std::vector<SequenceNumber> released_;

  bool valid_ = false;
  Status status_;
  Slice key_;
  Slice value_;
  ParsedInternalKey ikey_;
  std::string key_buf_;
  std::string value_buf_;
  // True when the input sits on an entry not yet looked at (after a SingleDelete peeked
  // ahead, or at the start); false when it sits on the entry last processed.
  bool input_unprocessed_ = true;
  // Operands kept unchanged by ResolveMerge, waiting to be emitted from queue_pos_ on, as
  // (internal key, value), newest first.
  std::vector<std::pair<std::string, std::string>> queue_;
  size_t queue_pos_ = 0;
  // Scratch for ResolveMerge: the run of operands, newest first, as (internal key, value).
  std::vector<std::pair<std::string, std::string>> run_;

  // The user key being processed and its current stripe.
  std::string current_user_key_;
  bool has_current_user_key_ = false;
  bool has_stripe_ = false;
  SequenceNumber stripe_ = 0;
  // A non-Merge entry of the current stripe was seen: everything older in it is hidden.
  bool stripe_covered_ = false;
  // The earliest stripe of the current key covered by a Put or Delete (see CoverStripe);
  // kMaxSequenceNumber with has_cover_ false when none is.
  bool has_cover_ = false;
  SequenceNumber cover_stripe_ = kMaxSequenceNumber;
  // See RememberDroppedTombstone: (internal key, value).
  bool has_dropped_tombstone_ = false;
  bool dropped_tombstone_optimized_ = false;
  std::pair<std::string, std::string> dropped_tombstone_;

  const FragmentedRangeTombstones* tombstones_ = nullptr;
  const CompactionFilter* filter_ = nullptr;
  int filter_level_ = 0;
  // The current key's first committed entry was offered (or was no Put): no other is.
  bool key_offered_ = false;
  std::string filter_value_;
  std::string filter_skip_until_;
  // The current entry as the filter rewrote it (internal key, value).
  std::string rewritten_key_;
  std::string rewritten_value_;

  CompactionIterationStats stats_;
};

}  // namespace shale
