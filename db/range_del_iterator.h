// RangeDelIterator: one source of a DB iterator (a memtable, an L0 file, a level) with the
// entries that range tombstones delete taken out, so that the merge above it and the
// DBIter never see them.
//
// A source is given two fragmented tombstone lists, both already seen through the read's
// snapshot and visibility callback (FragmentedRangeTombstones::VisibleSeq):
//  - `newer` (given as up to two lists, which together hold them: the memtables' and the
//    newer files', each made once and shared by every iterator that reads through them):
//    the tombstones of every newer source. Each of them is newer than every entry
//    here (sources hold disjoint, ordered sequence ranges), so an entry under any visible
//    one is deleted, and so is the whole run of entries up to the fragment's end: the
//    iterator seeks past the fragment (forward) or before its begin (backward) in one step,
//    however many keys the run holds.
//  - `own`: this source's tombstones, which delete only the entries here older than them;
//    those are stepped over one by one (in a flushed or compacted file the tombstone and
//    the keys it deleted no longer share a source).
//
// Thread safety: one thread, as any InternalIterator. The lists are shared and immutable;
// the callback must outlive the iterator.
#pragma once

#include <memory>
#include <vector>

#include "shale/comparator.h"
#include "util/internal_iterator.h"
#include "util/range_tombstone.h"
#include "util/read_callback.h"

namespace shale {

// Wraps source (owned). newer, newer2 and own may be null (nothing to apply): with all null
// the source itself is returned.
InternalIterator* NewRangeDelIterator(InternalIterator* source,
                                      std::shared_ptr<const FragmentedRangeTombstones> newer,
                                      std::shared_ptr<const FragmentedRangeTombstones> newer2,
                                      std::shared_ptr<const FragmentedRangeTombstones> own,
                                      SequenceNumber snapshot, ReadCallback* callback);

// For a flush or compaction: wraps source (owned; read forward only) so that it drops each
// entry that no reader can see any more because a tombstone of `tombstones` covers it: one
// newer than the entry with no snapshot (snapshots, ascending) at or above the entry and
// below the tombstone. The compaction iterator above then never folds a newer merge operand
// onto such an entry, nor keeps it. Every other entry passes. tombstones null or empty: the
// source itself is returned.
InternalIterator* NewCoveredEntryDropper(InternalIterator* source,
                                         const FragmentedRangeTombstones* tombstones,
                                         const std::vector<SequenceNumber>& snapshots);

// The union of a and b (either may be null; null when both are), fragmented again.
std::shared_ptr<const FragmentedRangeTombstones> MergeRangeTombstones(
    const std::shared_ptr<const FragmentedRangeTombstones>& a,
    const std::shared_ptr<const FragmentedRangeTombstones>& b, const Comparator* ucmp);

}  // namespace shale
