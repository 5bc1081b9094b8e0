// A single sorted view over several InternalIterators (memtables, L0 files, levels).
//
// Order: internal key order (InternalKeyComparator); an internal key present in more than
// one child comes once per child, ordered by child index (children[0] first going
// forward, last going backward). Both directions work, switching at any point, with Seek,
// SeekForPrev, SeekToFirst and SeekToLast.
//
// Errors: a child that stops with a non-OK status makes the merged iterator invalid;
// status() is the first such error seen since the last Seek*/SeekTo* call, which
// re-examines every child.
//
// Thread safety: one thread at a time, like every InternalIterator. key() and value()
// point into the current child and live until the merged iterator moves.
#pragma once

#include "util/dbformat.h"
#include "util/internal_iterator.h"

namespace shale {

// Takes ownership of children[0..n-1] (not of the array). With n == 0 returns an empty
// iterator; with n == 1 returns children[0] itself. `cmp` must outlive the result, which
// the caller owns.
InternalIterator* NewMergingIterator(const InternalKeyComparator* cmp, InternalIterator** children,
                                     int n);

}  // namespace shale
