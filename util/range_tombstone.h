// Range tombstones and their fragmented view.
//
// A range tombstone [begin, end)@seq (DB::DeleteRange) deletes every entry of a user key k
// with begin <= k < end and a sequence number below seq. Tombstones overlap freely as
// written; a reader wants to ask "is k covered at my snapshot, and by which sequence?"
// with one binary search. FragmentedRangeTombstones answers it: the tombstones are cut at
// every begin and end key into fragments that do not overlap, sorted by begin, each
// holding the sequence numbers (newest first, no repeats) of every tombstone spanning it.
//
//   written:   [a, e)@5   [c, g)@3   [c, d)@9
//   fragments: [a, c){5}  [c, d){9,5,3}  [d, e){5,3}  [e, g){3}
//
// Where the tombstones come from: the memtable keeps them as entries of their own
// (internal key begin@seq of type kTypeRangeDeletion, value end), and a table file in its
// range-deletion block in the same form; FromIterator reads either.
//
// It lives in util/ because the memtable and the table layers both serve tombstones and
// neither may include the other; the DB above combines them.
//
// Thread safety: immutable after construction; any thread may query it at any time.
// Invariants: fragments are non-empty (begin < end), sorted, disjoint; each holds at least
// one sequence number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shale/comparator.h"
#include "shale/slice.h"
#include "shale/status.h"
#include "shale/types.h"
#include "util/internal_iterator.h"
#include "util/read_callback.h"

namespace shale {

struct RangeTombstone {
  std::string begin;  // inclusive
  std::string end;    // exclusive
  SequenceNumber seq = 0;
};

class FragmentedRangeTombstones {
 public:
  struct Fragment {
    Slice begin;  // inclusive
    Slice end;    // exclusive
    // The sequence numbers of the tombstones spanning the fragment are
    // seqs()[first_seq .. last_seq), newest first.
    size_t first_seq = 0;
    size_t last_seq = 0;
  };

  // Fragments `tombstones` (any order) under the user comparator ucmp, which must outlive
  // the object. An empty range (begin >= end) deletes nothing and is dropped.
  // snapshots (ascending, may be empty): when given, a fragment keeps of the sequence
  // numbers between two consecutive snapshots only the newest, which hides the same keys
  // from every reader (compaction uses it); without, every sequence number is kept.
  FragmentedRangeTombstones(std::vector<RangeTombstone> tombstones, const Comparator* ucmp,
                            const std::vector<SequenceNumber>& snapshots = {});
  // Fragments point into keys_: not copyable or movable.
  FragmentedRangeTombstones(const FragmentedRangeTombstones&) = delete;
  FragmentedRangeTombstones& operator=(const FragmentedRangeTombstones&) = delete;

  // Reads every entry of it (internal key begin@seq of kTypeRangeDeletion, value end) and
  // fragments them. Corruption if a key is not a range deletion's internal key, or the
  // iterator's own error.
  static Status FromIterator(InternalIterator* it, const Comparator* ucmp,
                             std::unique_ptr<FragmentedRangeTombstones>* result);

  bool empty() const { return fragments_.empty(); }
  size_t size() const { return fragments_.size(); }
  const Fragment& fragment(size_t i) const { return fragments_[i]; }
  const std::vector<SequenceNumber>& seqs() const { return seqs_; }
  const Comparator* comparator() const { return ucmp_; }
  // The largest sequence number of any tombstone; 0 when empty.
  SequenceNumber max_seq() const { return max_seq_; }

  // The index of the first fragment that ends after user_key: the one covering user_key
  // when its begin is <= user_key, else the next one after it. size() when none.
  size_t FindFragment(const Slice& user_key) const;

  // Whether fragment i covers user_key.
  bool FragmentCovers(size_t i, const Slice& user_key) const {
    return i < fragments_.size() && ucmp_->Compare(fragments_[i].begin, user_key) <= 0 &&
           ucmp_->Compare(user_key, fragments_[i].end) < 0;
  }

  // The newest sequence number of fragment i that a read at `snapshot` sees (seq <=
  // snapshot and, with a callback, callback->IsVisible(seq)); 0 when it sees none.
  SequenceNumber VisibleSeq(size_t i, SequenceNumber snapshot,
                            ReadCallback* callback = nullptr) const;

  // The newest sequence number of a tombstone covering user_key that a read at snapshot
  // sees (as VisibleSeq); 0 when none does. An entry of user_key at sequence s is deleted
  // for that read if s < the result.
  SequenceNumber MaxCoveringSeq(const Slice& user_key, SequenceNumber snapshot,
                                ReadCallback* callback = nullptr) const {
    size_t i = FindFragment(user_key);
    return FragmentCovers(i, user_key) ? VisibleSeq(i, snapshot, callback) : 0;
  }

  // The tombstones as fragments, one RangeTombstone per fragment and sequence number, in
  // fragment order and newest first within a fragment (a flush or compaction writes these).
  std::vector<RangeTombstone> ToTombstones() const;

  // Memory the object holds, for accounting.
  size_t ApproximateMemoryUsage() const;

 private:
  const Comparator* ucmp_;
  std::vector<std::string> keys_;  // every begin and end key, sorted, distinct
  std::vector<Fragment> fragments_;
  std::vector<SequenceNumber> seqs_;
  SequenceNumber max_seq_ = 0;
};

}  // namespace shale
