// SnapshotChecker: which snapshots see an entry, for a flush or compaction over data that
// may be written before it commits (WritePrepared transactions write at Prepare and
// commit later). Without one, an entry at sequence s is seen by every snapshot >= s; with
// one, the checker says, and an entry no snapshot and not even the latest state sees
// (prepared, not committed) is kept unchanged and hides nothing (db/compaction_iterator.h).
//
// Thread safety: called from the flush or compaction thread, concurrently with writers
// committing; an answer for a given (seq, snapshot) never changes while the snapshot is
// live.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "shale/snapshot.h"
#include "shale/types.h"
#include "util/dbformat.h"

namespace shale {

class SnapshotChecker {
 public:
  enum class Result {
    kInSnapshot,
    kNotInSnapshot,
    // The snapshot was released meanwhile: nobody reads at it any more, so the entry
    // counts as seen by it.
    kSnapshotReleased,
  };

  virtual ~SnapshotChecker() = default;
  // Whether data written at seq is visible at snapshot_seq; kMaxSequenceNumber asks about
  // the latest state (committed at all).
  virtual Result CheckInSnapshot(SequenceNumber seq, SequenceNumber snapshot_seq) const = 0;
  // A bound read before a snapshot is taken: every entry below it is then committed as of
  // that snapshot. 0: nothing is known.
  virtual SequenceNumber SmallestUncommitted() const { return 0; }
};

// A job's checker: answers for the job's own snapshot from the bound read before it was
// taken (SmallestUncommitted) where it can, and asks the DB's checker otherwise. With no
// other snapshot live, a flush then looks up no entry older than the oldest transaction
// still in flight.
class JobSnapshotChecker final : public SnapshotChecker {
 public:
  JobSnapshotChecker(std::shared_ptr<const SnapshotChecker> checker, SequenceNumber job_snapshot,
                     SequenceNumber min_uncommitted)
      : checker_(std::move(checker)),
        job_snapshot_(job_snapshot),
        min_uncommitted_(min_uncommitted) {}
  Result CheckInSnapshot(SequenceNumber seq, SequenceNumber snapshot_seq) const override {
    if (snapshot_seq == job_snapshot_ && seq < min_uncommitted_) return Result::kInSnapshot;
    return checker_->CheckInSnapshot(seq, snapshot_seq);
  }

 private:
  const std::shared_ptr<const SnapshotChecker> checker_;
  const SequenceNumber job_snapshot_;
  const SequenceNumber min_uncommitted_;
};

// Sees no entry committed, so a job keeps every entry unchanged. For a WritePrepared DB
// (seq_per_batch) whose transaction layer has not installed its checker yet: the flushes
// of WAL recovery hold prepared data no commit has resolved (RocksDB's
// DisableGCSnapshotChecker plays this part).
class KeepAllSnapshotChecker final : public SnapshotChecker {
 public:
  Result CheckInSnapshot(SequenceNumber, SequenceNumber) const override {
    return Result::kNotInSnapshot;
  }
};

// What one flush or compaction judges visibility by, fixed when it starts (DBImpl fills it
// under its mutex and releases `held` when the job ends). With a checker the job holds a
// snapshot of its own, job_snapshot, one of `snapshots`: what it does not see counts as
// uncommitted, and while it is held it is a live snapshot for the checker's owner too.
struct JobSnapshotContext {
  std::vector<SequenceNumber> snapshots;           // ascending, the job's own included
  std::shared_ptr<const SnapshotChecker> checker;  // null: every entry is committed
  SequenceNumber job_snapshot = kMaxSequenceNumber;
  const Snapshot* held = nullptr;  // the job's own snapshot, or null
};

}  // namespace shale
