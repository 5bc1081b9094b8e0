// WritePreparedVisibility: the state a WritePrepared transaction DB keeps to answer "is the
// data written at prepare sequence P visible to a read at snapshot S?" without looking
// into the memtable. Data reaches the memtable at Prepare under P; the transaction's commit
// gets a later sequence C; the data is visible at S exactly when it is committed and C <= S.
//
// The parts (RocksDB's design):
//   commit cache      a fixed array of 2^commit_cache_bits atomic words, slot P mod size
//                     holding (P, C) for a recent commit. A newer commit landing in an
//                     occupied slot evicts the older entry.
//   max_evicted_seq   every commit whose entry left the cache has C <= max_evicted_seq. It
//                     only grows; eviction advances it (a little past the evicted C, so that
//                     it moves in steps rather than on every commit).
//   prepared heap     the prepare sequences in flight (AddPrepared .. RemovePrepared).
//   delayed prepared  in-flight prepares at or below max_evicted_seq: moved there when the
//                     maximum passes them, because below it "not in the cache" no longer
//                     means "not committed". Their commits, once known, are kept beside
//                     them until RemovePrepared.
//   old-commit map    for a live snapshot S at or below max_evicted_seq, the prepares
//                     whose evicted commit straddles it (P <= S < C): invisible to S
//                     although evicted. Every live snapshot at or below the maximum has an
//                     entry (maybe empty), so that a missing entry means a released one.
//   snapshot cache    the live snapshots at or below max_evicted_seq, fetched from the DB
//                     each time the maximum advances: the first 2^snapshot_cache_bits in
//                     atomic slots read without a lock, the rest in a vector under a mutex.
//
// Writers' contract (what makes IsInSnapshot right): AddPrepared(P) before any read can
// take a snapshot >= P; AddCommitted(P, C) before any read can take a snapshot >= C;
// RemovePrepared(P) after C is published. A write without Prepare commits at its own
// sequence: AddCommitted(P, P), no AddPrepared. Readers' contract: a snapshot is used only
// if SnapshotIsSafe says so.
//
// Thread safety: every method from any thread. IsInSnapshot takes no lock unless the
// delayed-prepared set is non-empty or the snapshot is at or below max_evicted_seq.
// Lock order: snapshots_mu_ before old_commit_mu_; prepared_mu_ is never held with either.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "db/snapshot_checker.h"
#include "shale/types.h"
#include "util/mutexlock.h"

namespace shale {

class WritePreparedVisibility {
 public:
  struct Hooks {
    // The sequences of the live snapshots at or below max, ascending. Called when
    // max_evicted_seq advances. Null: there are never any snapshots.
    std::function<std::vector<SequenceNumber>(SequenceNumber max)> live_snapshots;
    // The newest published sequence: an eviction moves max_evicted_seq to below it (or to
    // the evicted commit, if that is not below it). Null: exactly to the evicted commit.
    std::function<SequenceNumber()> last_published;
  };

  // Bits as TransactionDBOptions' wp_commit_cache_bits and wp_snapshot_cache_bits; the
  // caller validates them (ValidBits).
  WritePreparedVisibility(int commit_cache_bits, int snapshot_cache_bits, Hooks hooks);
  WritePreparedVisibility(const WritePreparedVisibility&) = delete;
  WritePreparedVisibility& operator=(const WritePreparedVisibility&) = delete;

  // Whether the bits can size the caches: commit cache 1..32, snapshot cache 0..20.
  static bool ValidBits(int commit_cache_bits, int snapshot_cache_bits);

  // A prepare at seq is in flight.
  void AddPrepared(SequenceNumber seq);
  // The transaction prepared at prepare_seq committed at commit_seq (>= prepare_seq).
  void AddCommitted(SequenceNumber prepare_seq, SequenceNumber commit_seq);
  // The prepares at seq .. seq+count-1 are resolved (committed and published, or rolled
  // back with their rollback committed).
  void RemovePrepared(SequenceNumber seq, size_t count = 1);

  // Whether data written at prep_seq is visible to a read at snapshot_seq. min_uncommitted:
  // the snapshot's smallest uncommitted sequence (every prepare below it was committed
  // before the snapshot), or kMinUnCommittedSeq when unknown. When the answer cannot be
  // known because the snapshot was released (only a flush or compaction asks about those),
  // *snap_released (if given) is set and the answer is true.
  bool IsInSnapshot(SequenceNumber prep_seq, SequenceNumber snapshot_seq,
                    SequenceNumber min_uncommitted = kMinUnCommittedSeq,
                    bool* snap_released = nullptr) const;

  // The smallest prepare sequence that may be in flight: the smallest in the prepared and
  // delayed sets, and at most the published sequence + 1 (kMaxSequenceNumber without the
  // last_published hook and nothing in flight). A snapshot records it, taken before the
  // snapshot's sequence, as its min_uncommitted.
  SequenceNumber SmallestUncommitted() const;

  // Whether a read may use snapshot_seq: a snapshot registered with the DB (live_snapshots
  // returns it from now on), or the published sequence for a read without one. False in
  // the rare case that a commit was evicted before it was published, pushing the maximum
  // to or past the published sequence: the snapshot may have been missed when the
  // straddling commits were recorded. The reader then lets it go and takes another once
  // that commit is published. The check reads the maximum being advanced to, raised
  // before the snapshots are fetched, so that a snapshot registered first is never missed.
  bool SnapshotIsSafe(SequenceNumber snapshot_seq) const {
    return future_max_evicted_seq_.load(std::memory_order_acquire) < snapshot_seq;
  }

  // Raises max_evicted_seq from prev_max to new_max (no-op if it is already there):
  // prepares at or below new_max become delayed prepared, the snapshots at or below it are
  // fetched. Recovery calls it with the last recovered sequence.
  void AdvanceMaxEvictedSeq(SequenceNumber prev_max, SequenceNumber new_max);
  SequenceNumber max_evicted_seq() const {
    return max_evicted_seq_.load(std::memory_order_acquire);
  }

  // For tests.
  size_t TEST_DelayedPreparedCount() const;
  bool TEST_InOldCommitMap(SequenceNumber snapshot_seq, SequenceNumber prep_seq) const;
  // Called by IsInSnapshot after it read the maximum and before it looks in the cache, on
  // the reading thread (lets a test move the state under a reader). Set before any read.
  void TEST_SetBeforeCacheLookup(std::function<void()> hook) {
    test_before_cache_lookup_ = std::move(hook);
  }
  // Called by IsInSnapshot after a first miss in the cache and before it looks in the
  // delayed-prepared set (only when that set was non-empty), on the reading thread.
  void TEST_SetBeforeDelayedLookup(std::function<void()> hook) {
    test_before_delayed_lookup_ = std::move(hook);
  }
  size_t commit_cache_size() const { return commit_cache_size_; }
  size_t snapshot_cache_size() const { return snapshot_cache_size_; }

 private:
  struct CommitEntry {
    SequenceNumber prep = 0;
    SequenceNumber commit = 0;
  };

  // A slot's word: prep's bits above the slot index, then commit - prep + 1 in the low
  // delta_bits_ bits (0 is an empty slot). False if the distance does not fit.
  bool Pack(SequenceNumber prep, SequenceNumber commit, uint64_t* word) const;
  CommitEntry Unpack(size_t index, uint64_t word) const;
  // The committed entry in slot index, if any.
  bool LoadCommitEntry(size_t index, CommitEntry* entry) const;
  // An entry leaves the cache (or never fits in it): advance the maximum past its commit
  // and record it for the snapshots it straddles.
  void Evict(const CommitEntry& e);
  // Moves in-flight prepares at or below new_max to the delayed set.
  void DelayPreparedUpTo(SequenceNumber new_max) EXCLUDES(prepared_mu_);
  // Installs the snapshot list fetched for max_evicted_seq = version, unless a newer one is
  // installed already; drops the old-commit entries of snapshots that left the list.
  void UpdateSnapshots(const std::vector<SequenceNumber>& snapshots, SequenceNumber version)
      EXCLUDES(snapshots_mu_, old_commit_mu_);
  // Records e in the old-commit map for each live snapshot it straddles.
  void CheckAgainstSnapshots(const CommitEntry& e) EXCLUDES(snapshots_mu_, old_commit_mu_);
  // One snapshot of that search: records e if it straddles snap; returns whether the
  // search (moving to larger snapshots if next_is_larger, else smaller) must go on.
  bool RecordIfStraddling(const CommitEntry& e, SequenceNumber snap, bool next_is_larger)
      EXCLUDES(old_commit_mu_);
  // IsInSnapshot's last step, for prep_seq <= max_evicted_seq <= ... and an old snapshot.
  bool InOldSnapshot(SequenceNumber prep_seq, SequenceNumber snapshot_seq,
                     bool* snap_released) const EXCLUDES(old_commit_mu_);

  const Hooks hooks_;
  const int commit_cache_bits_;
  const size_t commit_cache_size_;
  const int delta_bits_;  // 8 + commit_cache_bits_: the word's bits left after prep's
  const size_t snapshot_cache_size_;

  // The slots' words, read and written only through std::atomic_ref (Slot). They come
  // zeroed from calloc: a cache of millions of slots (64 MiB at the default 23 bits) is
  // then mapped zero pages, each touched only when a commit first lands in it, instead of
  // being cleared at Open.
  struct FreeWords {
    void operator()(uint64_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint64_t[], FreeWords> commit_cache_;
  std::atomic_ref<uint64_t> Slot(size_t index) const {
    return std::atomic_ref<uint64_t>(commit_cache_[index]);
  }
  std::atomic<SequenceNumber> max_evicted_seq_{0};
  // What max_evicted_seq_ is being advanced to: raised before the prepared set is swept.
  std::atomic<SequenceNumber> future_max_evicted_seq_{0};

  // Guards the in-flight prepares. The flag mirrors delayed_prepared_.empty() for the
  // lock-free path: set false before max_evicted_seq_ passes a delayed prepare.
  // A min-heap of sequences that keeps its storage when emptied (a write that commits at
  // once passes through both heaps below: reallocating them cost an allocation per write).
  class SeqHeap
      : public std::priority_queue<SequenceNumber, std::vector<SequenceNumber>, std::greater<>> {
   public:
    void clear() { c.clear(); }
  };
  mutable SharedMutex prepared_mu_;
  SeqHeap prepared_ GUARDED_BY(prepared_mu_);
  // Removed from prepared_ while not at its top: skipped when they reach it.
  SeqHeap prepared_removed_ GUARDED_BY(prepared_mu_);
  std::set<SequenceNumber> delayed_prepared_ GUARDED_BY(prepared_mu_);
  std::unordered_map<SequenceNumber, SequenceNumber> delayed_prepared_commits_
      GUARDED_BY(prepared_mu_);
  std::atomic<bool> delayed_prepared_empty_{true};

  // The snapshot cache: slots [0, min(total, cache size)) hold the smallest snapshots of
  // the installed list; snapshots_ holds all of it.
  std::unique_ptr<std::atomic<SequenceNumber>[]> snapshot_cache_;
  std::atomic<size_t> snapshots_total_{0};
  mutable SharedMutex snapshots_mu_;
  std::vector<SequenceNumber> snapshots_ GUARDED_BY(snapshots_mu_);
  SequenceNumber snapshots_version_ GUARDED_BY(snapshots_mu_) = 0;

  mutable SharedMutex old_commit_mu_;
  // Snapshot -> the prepares (sorted) invisible to it although their commits were evicted.
  std::map<SequenceNumber, std::vector<SequenceNumber>> old_commit_map_ GUARDED_BY(old_commit_mu_);
  std::atomic<bool> old_commit_map_empty_{true};

  std::function<void()> test_before_cache_lookup_;
  std::function<void()> test_before_delayed_lookup_;
};

// What a flush or compaction asks of the visibility state (db/snapshot_checker.h). The
// state must outlive the checker.
class WritePreparedSnapshotChecker final : public SnapshotChecker {
 public:
  explicit WritePreparedSnapshotChecker(const WritePreparedVisibility* visibility)
      : visibility_(visibility) {}
  Result CheckInSnapshot(SequenceNumber seq, SequenceNumber snapshot_seq) const override {
    bool released = false;
    const bool in = visibility_->IsInSnapshot(seq, snapshot_seq, kMinUnCommittedSeq, &released);
    if (released) return Result::kSnapshotReleased;
    return in ? Result::kInSnapshot : Result::kNotInSnapshot;
  }
  SequenceNumber SmallestUncommitted() const override { return visibility_->SmallestUncommitted(); }

 private:
  const WritePreparedVisibility* const visibility_;
};

}  // namespace shale
