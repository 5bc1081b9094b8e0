#include "utilities/transactions/wp_visibility.h"

#include <algorithm>
#include <new>
#include <utility>

#include "util/dbformat.h"

namespace shale {

namespace {

// Sequences fill 56 bits (kMaxSequenceNumber): a slot's word keeps 8 + index bits for
// the distance from prepare to commit.
constexpr int kSequenceBits = 56;

}  // namespace

bool WritePreparedVisibility::ValidBits(int commit_cache_bits, int snapshot_cache_bits) {
  return commit_cache_bits >= 1 && commit_cache_bits <= 32 && snapshot_cache_bits >= 0 &&
         snapshot_cache_bits <= 20;
}

WritePreparedVisibility::WritePreparedVisibility(int commit_cache_bits, int snapshot_cache_bits,
                                                 Hooks hooks)
    : hooks_(std::move(hooks)),
      commit_cache_bits_(commit_cache_bits),
      commit_cache_size_(size_t{1} << commit_cache_bits),
      delta_bits_(64 - kSequenceBits + commit_cache_bits),
      snapshot_cache_size_(size_t{1} << snapshot_cache_bits),
      commit_cache_(static_cast<uint64_t*>(std::calloc(commit_cache_size_, sizeof(uint64_t)))),
      snapshot_cache_(new std::atomic<SequenceNumber>[snapshot_cache_size_]) {
  if (commit_cache_ == nullptr) throw std::bad_alloc();
  for (size_t i = 0; i < snapshot_cache_size_; i++) snapshot_cache_[i].store(0);
}

// ---- The commit cache.

bool WritePreparedVisibility::Pack(SequenceNumber prep, SequenceNumber commit,
                                   uint64_t* word) const {
  const uint64_t delta = commit - prep + 1;
  if (commit < prep || prep > kMaxSequenceNumber || (delta >> delta_bits_) != 0) return false;
  *word = ((prep >> commit_cache_bits_) << delta_bits_) | delta;
  return true;
}

WritePreparedVisibility::CommitEntry WritePreparedVisibility::Unpack(size_t index,
                                                                     uint64_t word) const {
  CommitEntry e;
  e.prep = ((word >> delta_bits_) << commit_cache_bits_) | index;
  e.commit = e.prep + (word & ((uint64_t{1} << delta_bits_) - 1)) - 1;
  return e;
}

bool WritePreparedVisibility::LoadCommitEntry(size_t index, CommitEntry* entry) const {
  const uint64_t word = Slot(index).load(std::memory_order_acquire);
  if (word == 0) return false;
  *entry = Unpack(index, word);
  return true;
}

void WritePreparedVisibility::AddCommitted(SequenceNumber prepare_seq, SequenceNumber commit_seq) {
  // A delayed prepare is answered from the delayed set until RemovePrepared: its commit
  // goes there first, since the cache slot may be taken over before then.
  if (!delayed_prepared_empty_.load(std::memory_order_acquire)) {
    WriterMutexLock l(&prepared_mu_);
    if (delayed_prepared_.count(prepare_seq) != 0) {
      delayed_prepared_commits_[prepare_seq] = commit_seq;
    }
  }
  const CommitEntry entry{prepare_seq, commit_seq};
  uint64_t word = 0;
  if (!Pack(prepare_seq, commit_seq, &word)) {
    // Too far apart for a slot: the commit is treated as evicted at once, which the
    // maximum and the old-commit map answer for exactly as for any evicted one.
    Evict(entry);
    return;
  }
  const size_t index = prepare_seq & (commit_cache_size_ - 1);
  const std::atomic_ref<uint64_t> slot = Slot(index);
  uint64_t old = slot.load(std::memory_order_acquire);
  for (;;) {
    // The maximum passes the old commit before the old entry leaves the slot: a reader
    // that misses it in the slot then finds it below the maximum.
    if (old != 0) Evict(Unpack(index, old));
    if (slot.compare_exchange_strong(old, word, std::memory_order_acq_rel)) return;
    // Another commit took the slot first; old is now its entry, evicted in turn.
  }
}

void WritePreparedVisibility::Evict(const CommitEntry& e) {
  const SequenceNumber prev = max_evicted_seq_.load(std::memory_order_acquire);
  if (prev < e.commit) {
    // Moving the maximum a little further than needed (1% of the cache, RocksDB's step)
    // makes the work of an advance rarer; it must stay below what readers may see.
    SequenceNumber target = e.commit;
    if (hooks_.last_published) {
      const SequenceNumber last = hooks_.last_published();
      if (e.commit < last)
        target = std::min<SequenceNumber>(e.commit + commit_cache_size_ / 100, last - 1);
    }
    AdvanceMaxEvictedSeq(prev, target);
  }
  CheckAgainstSnapshots(e);
  // A delayed prepare whose commit leaves the cache before RemovePrepared would read as
  // uncommitted (it is in the delayed set): its commit is kept there instead.
  if (!delayed_prepared_empty_.load(std::memory_order_acquire)) {
    WriterMutexLock l(&prepared_mu_);
    if (delayed_prepared_.count(e.prep) != 0) delayed_prepared_commits_[e.prep] = e.commit;
  }
}

// ---- In-flight prepares.

void WritePreparedVisibility::AddPrepared(SequenceNumber seq) {
  WriterMutexLock l(&prepared_mu_);
  // The maximum passed it (or is about to: DelayPreparedUpTo ran without it) before it got
  // here: "not in the cache" below the maximum means committed, so it must be found in the
  // delayed set instead.
  if (seq <= future_max_evicted_seq_.load(std::memory_order_acquire)) {
    delayed_prepared_.insert(seq);
    delayed_prepared_empty_.store(false, std::memory_order_release);
    return;
  }
  prepared_.push(seq);
}

void WritePreparedVisibility::RemovePrepared(SequenceNumber seq, size_t count) {
  WriterMutexLock l(&prepared_mu_);
  for (size_t i = 0; i < count; i++) {
    const SequenceNumber s = seq + i;
    if (!delayed_prepared_.empty() && delayed_prepared_.erase(s) != 0) {
      delayed_prepared_commits_.erase(s);
      continue;
    }
    // Writes mostly resolve in the order they prepared: the oldest leaves at once.
    if (!prepared_.empty() && prepared_.top() == s) {
      prepared_.pop();
      continue;
    }
    prepared_removed_.push(s);
  }
  while (!prepared_.empty() && !prepared_removed_.empty() &&
         prepared_.top() >= prepared_removed_.top()) {
    if (prepared_.top() == prepared_removed_.top()) prepared_.pop();
    // A removal of a sequence that is not in flight (a rolled-back prepare removed twice,
    // or one moved to the delayed set) is dropped here.
    prepared_removed_.pop();
  }
  if (prepared_.empty()) prepared_removed_.clear();
  delayed_prepared_empty_.store(delayed_prepared_.empty(), std::memory_order_release);
}

SequenceNumber WritePreparedVisibility::SmallestUncommitted() const {
  // The published sequence is read first: a prepare at or below it made its AddPrepared
  // before, so the sweep below finds it unless it is resolved. One above it is not counted,
  // and needs not be: a snapshot taken afterwards may include it, but as the minimum is
  // at most published + 1, that prepare is still asked about.
  SequenceNumber smallest = kMaxSequenceNumber;
  if (hooks_.last_published) smallest = hooks_.last_published() + 1;
  ReaderMutexLock l(&prepared_mu_);
  if (!delayed_prepared_.empty()) smallest = *delayed_prepared_.begin();
  if (!prepared_.empty()) smallest = std::min(smallest, prepared_.top());
  return smallest;
}

void WritePreparedVisibility::DelayPreparedUpTo(SequenceNumber new_max) {
  WriterMutexLock l(&prepared_mu_);
  bool moved = false;
  while (!prepared_.empty() && prepared_.top() <= new_max) {
    const SequenceNumber top = prepared_.top();
    prepared_.pop();
    if (!prepared_removed_.empty() && prepared_removed_.top() == top) {
      prepared_removed_.pop();
      continue;
    }
    delayed_prepared_.insert(top);
    moved = true;
  }
  // Published before the maximum moves (release), read after it (acquire) by IsInSnapshot.
  if (moved) delayed_prepared_empty_.store(false, std::memory_order_release);
}

// ---- Advancing the maximum, and the snapshots it overtakes.

void WritePreparedVisibility::AdvanceMaxEvictedSeq(SequenceNumber prev_max,
                                                   SequenceNumber new_max) {
  if (new_max <= prev_max) return;
  // Announced before the prepared set is swept, so that a prepare added after the sweep
  // sees it (AddPrepared reads it under the same mutex).
  SequenceNumber future = future_max_evicted_seq_.load(std::memory_order_acquire);
  while (future < new_max && !future_max_evicted_seq_.compare_exchange_weak(
                                 future, new_max, std::memory_order_acq_rel)) {
  }
  DelayPreparedUpTo(new_max);
  if (hooks_.live_snapshots) UpdateSnapshots(hooks_.live_snapshots(new_max), new_max);
  SequenceNumber current = prev_max;
  while (current < new_max &&
         !max_evicted_seq_.compare_exchange_weak(current, new_max, std::memory_order_acq_rel)) {
  }
}

void WritePreparedVisibility::UpdateSnapshots(const std::vector<SequenceNumber>& snapshots,
                                              SequenceNumber version) {
  WriterMutexLock l(&snapshots_mu_);
  // Two advances may fetch their lists in one order and install them in the other; the
  // list of the larger maximum holds every snapshot the smaller one's does.
  if (version <= snapshots_version_) return;
  snapshots_version_ = version;
  // Ascending slots, each written before any larger one: a surviving snapshot only moves
  // to a lower slot, so a reader going from the top slot down meets it at one place or
  // the other.
  const size_t in_cache = std::min(snapshots.size(), snapshot_cache_size_);
  for (size_t i = 0; i < in_cache; i++)
    snapshot_cache_[i].store(snapshots[i], std::memory_order_release);
  snapshots_total_.store(snapshots.size(), std::memory_order_release);
  std::vector<SequenceNumber> old_list = std::move(snapshots_);
  snapshots_ = snapshots;
  WriterMutexLock ol(&old_commit_mu_);
  // Two snapshots may share a sequence: an entry goes only when no live one has it.
  for (SequenceNumber s : old_list) {
    if (!std::binary_search(snapshots.begin(), snapshots.end(), s)) old_commit_map_.erase(s);
  }
  // An empty entry still says "live": IsInSnapshot tells released snapshots by its absence.
  for (SequenceNumber s : snapshots) old_commit_map_[s];
  old_commit_map_empty_.store(old_commit_map_.empty(), std::memory_order_release);
}

void WritePreparedVisibility::CheckAgainstSnapshots(const CommitEntry& e) {
  const size_t total = snapshots_total_.load(std::memory_order_acquire);
  const size_t in_cache = std::min(total, snapshot_cache_size_);
  // The cache holds the smallest snapshots; if its largest is below the commit, larger
  // ones beyond the cache may be straddled too.
  bool search_beyond = false;
  for (size_t i = in_cache; i > 0; i--) {
    const SequenceNumber snap = snapshot_cache_[i - 1].load(std::memory_order_acquire);
    if (i == snapshot_cache_size_) search_beyond = snap < e.commit;
    if (!RecordIfStraddling(e, snap, /*next_is_larger=*/false)) break;
  }
  if (total <= snapshot_cache_size_ || !search_beyond) return;
  ReaderMutexLock l(&snapshots_mu_);
  for (size_t i = snapshot_cache_size_; i < snapshots_.size(); i++) {
    if (!RecordIfStraddling(e, snapshots_[i], /*next_is_larger=*/true)) break;
  }
}

bool WritePreparedVisibility::RecordIfStraddling(const CommitEntry& e, SequenceNumber snap,
                                                 bool next_is_larger) {
  // Committed at or before the snapshot: visible to it, nothing to keep. Smaller snapshots
  // may still be straddled; larger ones cannot.
  if (e.commit <= snap) return !next_is_larger;
  // Prepared after the snapshot: invisible to it anyway, and to every smaller one.
  if (snap < e.prep) return next_is_larger;
  WriterMutexLock l(&old_commit_mu_);
  std::vector<SequenceNumber>& preps = old_commit_map_[snap];
  auto at = std::lower_bound(preps.begin(), preps.end(), e.prep);
  if (at == preps.end() || *at != e.prep) preps.insert(at, e.prep);
  old_commit_map_empty_.store(false, std::memory_order_release);
  return true;
}

// ---- The question.

bool WritePreparedVisibility::IsInSnapshot(SequenceNumber prep_seq, SequenceNumber snapshot_seq,
                                           SequenceNumber min_uncommitted,
                                           bool* snap_released) const {
  // Sequence 0: a compaction output visible to every snapshot.
  if (prep_seq == 0) return true;
  if (snapshot_seq < prep_seq) return false;    // commit >= prepare > snapshot
  if (prep_seq < min_uncommitted) return true;  // committed before the snapshot was taken
  const size_t index = prep_seq & (commit_cache_size_ - 1);
  CommitEntry cached;
  SequenceNumber max_lb = 0;
  SequenceNumber max_ub = 0;
  // A commit of a delayed prepare lands in the cache before it leaves the delayed set, and
  // the two are read separately here: when the set was non-empty before the first cache
  // look, the cache is looked at again after the set. Any move of the maximum meanwhile
  // may have evicted or delayed what was looked for: start over.
  do {
    max_lb = max_evicted_seq_.load(std::memory_order_acquire);
    const bool delayed_was_empty = delayed_prepared_empty_.load(std::memory_order_acquire);
    if (test_before_cache_lookup_) test_before_cache_lookup_();
    if (LoadCommitEntry(index, &cached) && cached.prep == prep_seq) {
      return cached.commit <= snapshot_seq;
    }
    max_ub = max_evicted_seq_.load(std::memory_order_acquire);
    if (max_lb != max_ub) continue;
    // Neither in the cache nor ever evicted from it: still in flight.
    if (max_ub < prep_seq) return false;
    if (!delayed_was_empty) {
      if (test_before_delayed_lookup_) test_before_delayed_lookup_();
      ReaderMutexLock l(&prepared_mu_);
      if (delayed_prepared_.count(prep_seq) != 0) {
        auto it = delayed_prepared_commits_.find(prep_seq);
        return it != delayed_prepared_commits_.end() && it->second <= snapshot_seq;
      }
      if (LoadCommitEntry(index, &cached) && cached.prep == prep_seq) {
        return cached.commit <= snapshot_seq;
      }
      max_ub = max_evicted_seq_.load(std::memory_order_acquire);
    }
  } while (max_lb != max_ub);
  // Evicted, so committed at or below the maximum.
  if (max_ub <= snapshot_seq) return true;
  return InOldSnapshot(prep_seq, snapshot_seq, snap_released);
}

bool WritePreparedVisibility::InOldSnapshot(SequenceNumber prep_seq, SequenceNumber snapshot_seq,
                                            bool* snap_released) const {
  // The snapshot is at or below the maximum: an evicted commit may straddle it, and the
  // old-commit map says which did.
  if (!old_commit_map_empty_.load(std::memory_order_acquire)) {
    ReaderMutexLock l(&old_commit_mu_);
    auto it = old_commit_map_.find(snapshot_seq);
    if (it != old_commit_map_.end()) {
      return !std::binary_search(it->second.begin(), it->second.end(), prep_seq);
    }
  }
  // No entry: the snapshot is no longer live, and the answer cannot be known.
  if (snap_released != nullptr) *snap_released = true;
  return true;
}

// ---- For tests.

size_t WritePreparedVisibility::TEST_DelayedPreparedCount() const {
  ReaderMutexLock l(&prepared_mu_);
  return delayed_prepared_.size();
}

bool WritePreparedVisibility::TEST_InOldCommitMap(SequenceNumber snapshot_seq,
                                                  SequenceNumber prep_seq) const {
  ReaderMutexLock l(&old_commit_mu_);
  auto it = old_commit_map_.find(snapshot_seq);
  return it != old_commit_map_.end() &&
         std::binary_search(it->second.begin(), it->second.end(), prep_seq);
}

}  // namespace shale
