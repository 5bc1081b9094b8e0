// DBIter: turns a stream of internal keys (many versions per user key, tombstones, entries
// newer than the read's snapshot) into the user's view: each live user key once, with the
// value of its newest entry that the read may see.
//
// Visibility: an entry is visible when its sequence is <= `sequence` and the ReadCallback
// (may be null) accepts it. The newest visible entry of a user key decides: a Put shows the
// key, a Delete or SingleDelete hides it, a Merge operand shows the key with the operands
// down to the next visible Put or tombstone folded by the merge operator, in either
// direction (without an operator it stops the iterator with NotSupported; an operator that
// fails stops it with Corruption). ShouldMerge is not consulted here. Keys outside
// [iterate_lower_bound, iterate_upper_bound) are never returned, whichever way the
// iterator moves or seeks.
//
// Thread safety: one thread at a time, like every Iterator. The DBIter owns the internal
// iterator; the comparator, callback and bound Slices must outlive it. key() and value()
// stay valid until the next call that moves the iterator.
//
// Errors: a key that does not parse as an internal key gives Corruption; an error of the
// internal iterator is passed through by status(). Either makes Valid() false. Every seek
// clears an earlier error of the DBIter itself.
#pragma once

#include <cstdint>

#include "shale/comparator.h"
#include "shale/iterator.h"
#include "shale/merge_operator.h"
#include "shale/options.h"
#include "util/dbformat.h"
#include "util/internal_iterator.h"
#include "util/read_callback.h"

namespace shale {

class Statistics;

// After this many consecutive entries of one user key are stepped over, the iterator seeks
// past them instead (RocksDB's max_sequential_skip_in_iterations default).
inline constexpr uint64_t kDefaultMaxSequentialSkip = 8;

// Takes ownership of internal_iter. The result is owned by the caller. merge_operator and
// logger (for the operator's messages) may be null and must outlive the iterator.
Iterator* NewDBIterator(const ReadOptions& read_options, const Comparator* user_cmp,
                        InternalIterator* internal_iter, SequenceNumber sequence,
                        ReadCallback* callback,
                        uint64_t max_sequential_skip = kDefaultMaxSequentialSkip,
                        const MergeOperator* merge_operator = nullptr, Logger* logger = nullptr,
                        Statistics* stats = nullptr);

}  // namespace shale
