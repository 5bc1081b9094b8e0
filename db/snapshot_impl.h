// SnapshotImpl and SnapshotList: the live snapshots, oldest first. Flush and compaction
// ask for them to know which old versions must be kept.
//
// Thread safety: none of its own. The DB's list is GUARDED_BY its mutex (db/db_impl.h), so
// the compiler checks every use; a SnapshotImpl's sequence never changes.
#pragma once

#include <cassert>
#include <vector>

#include "shale/snapshot.h"
#include "shale/types.h"

namespace shale {

class SnapshotImpl final : public Snapshot {
 public:
  explicit SnapshotImpl(SequenceNumber seq, SequenceNumber min_uncommitted = kMinUnCommittedSeq)
      : sequence_(seq), min_uncommitted_(min_uncommitted) {}
  SequenceNumber GetSequenceNumber() const override { return sequence_; }
  // WritePrepared: every write below it was committed when the snapshot was taken, so a
  // read at it needs to ask about none of them (kMinUnCommittedSeq: unknown).
  SequenceNumber min_uncommitted() const { return min_uncommitted_; }

 private:
  friend class SnapshotList;
  ~SnapshotImpl() override = default;

  const SequenceNumber sequence_;
  const SequenceNumber min_uncommitted_;
  SnapshotImpl* prev_ = nullptr;
  SnapshotImpl* next_ = nullptr;
};

class SnapshotList {
 public:
  SnapshotList() : head_(0) { head_.prev_ = head_.next_ = &head_; }
  ~SnapshotList() { assert(empty()); }
  SnapshotList(const SnapshotList&) = delete;
  SnapshotList& operator=(const SnapshotList&) = delete;

  bool empty() const { return head_.next_ == &head_; }
  SequenceNumber oldest() const { return head_.next_->sequence_; }

  // REQUIRES: seq is at least the newest snapshot's sequence.
  SnapshotImpl* New(SequenceNumber seq, SequenceNumber min_uncommitted = kMinUnCommittedSeq) {
    auto* s = new SnapshotImpl(seq, min_uncommitted);
    s->next_ = &head_;
    s->prev_ = head_.prev_;
    s->prev_->next_ = s;
    s->next_->prev_ = s;
    return s;
  }
  void Delete(const SnapshotImpl* s) {
    s->prev_->next_ = s->next_;
    s->next_->prev_ = s->prev_;
    delete s;
  }
  // Sequences of every live snapshot, ascending.
  std::vector<SequenceNumber> GetAll() const {
    std::vector<SequenceNumber> result;
    for (const SnapshotImpl* s = head_.next_; s != &head_; s = s->next_) {
      result.push_back(s->sequence_);
    }
    return result;
  }

 private:
  SnapshotImpl head_;  // dummy head of a circular list
};

}  // namespace shale
