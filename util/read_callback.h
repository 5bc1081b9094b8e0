// ReadCallback: the visibility hook every read path takes (RocksDB's shape). A read at
// snapshot S sees an entry at sequence `seq` only if seq <= S and, when a callback is given,
// IsVisible(seq) is true. WritePrepared transactions use it to hide data that was written
// to the memtable at Prepare but is not committed as of the read; plain reads pass nullptr
// and pay one pointer test per entry.
//
// The callback carries two bounds so that most entries are decided without the virtual
// call:
//   max_visible_seq  nothing above it is visible (the read's snapshot). A read that has no
//                    snapshot learns its sequence only when it takes its view: DBImpl calls
//                    Refresh(view sequence) then, before any entry is checked, so a callback
//                    built for such a read may start at kMaxSequenceNumber.
//   min_uncommitted  everything below it is visible (every prepare below it was committed
//                    before the snapshot was taken). kMinUnCommittedSeq (1) when unknown:
//                    then only sequence 0 skips the full check.
// Entries between the bounds go to IsVisibleFullCheck.
//
// Invariants: min_uncommitted >= kMinUnCommittedSeq, and the read checks seq <= S before it
// asks, with S <= max_visible_seq. So the answer for an entry never changes during a read.
//
// Thread safety: one read at a time, on the reading thread (an iterator's callback moves
// with the iterator). Ownership: the caller's for Get, MultiGet and GetMergeOperands (it
// must outlive the call); an iterator made with one owns it (DBImpl::NewIteratorWithCallback).
#pragma once

#include "shale/types.h"
#include "util/dbformat.h"

namespace shale {

class ReadCallback {
 public:
  explicit ReadCallback(SequenceNumber max_visible_seq = kMaxSequenceNumber,
                        SequenceNumber min_uncommitted = kMinUnCommittedSeq)
      : max_visible_seq_(max_visible_seq),
        min_uncommitted_(min_uncommitted < kMinUnCommittedSeq ? kMinUnCommittedSeq
                                                              : min_uncommitted) {}
  virtual ~ReadCallback() = default;

  // Whether data written at `seq` is visible to this read: the bounds first (inline, no
  // virtual call), then the full check.
  bool IsVisible(SequenceNumber seq) {
    if (seq < min_uncommitted_) return true;  // sequence 0 (bottommost data) included
    if (seq > max_visible_seq_) return false;
    return IsVisibleFullCheck(seq);
  }

  // The full decision for min_uncommitted <= seq <= max_visible_seq (a WritePrepared DB
  // asks its commit cache whether seq was committed as of max_visible_seq()).
  virtual bool IsVisibleFullCheck(SequenceNumber seq) = 0;

  // Called once per read that has no snapshot, with the sequence of the view it took,
  // before any entry is checked. Never called with a snapshot: the caller set the bound.
  virtual void Refresh(SequenceNumber seq) { max_visible_seq_ = seq; }

  SequenceNumber max_visible_seq() const { return max_visible_seq_; }
  SequenceNumber min_uncommitted() const { return min_uncommitted_; }

 protected:
  SequenceNumber max_visible_seq_;
  const SequenceNumber min_uncommitted_;
};

}  // namespace shale
