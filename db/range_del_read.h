// How point lookups meet range tombstones. A lookup visits its sources newest first (the
// active memtable, the immutable ones, the L0 files, one file per deeper level) and carries
// the newest tombstone sequence covering its key that the read sees (seq <= its snapshot
// and, with a ReadCallback, visible to it): every entry of the key older than that
// sequence is deleted, in the source that holds the tombstone and in every older one,
// whose entries are all older than anything in a newer source. Each source's tombstones are
// asked once, before its entries (MemTable::Get and Version::Get take the running value as
// deleted_below), with one binary search over its fragmented list.
//
// Thread safety: as MemTable's readers.
#pragma once

#include <memory>

#include "memtable/memtable.h"
#include "util/range_tombstone.h"

namespace shale {

// The newest tombstone sequence of mem covering user_key that a read at seq (with callback,
// may be null) sees; 0 when none.
inline SequenceNumber CoveringTombstoneSeq(const MemTable* mem, const Slice& user_key,
                                           SequenceNumber seq, ReadCallback* callback) {
  if (!mem->HasRangeTombstones()) return 0;
  const std::shared_ptr<const FragmentedRangeTombstones> list = mem->RangeTombstones();
  return list == nullptr ? 0 : list->MaxCoveringSeq(user_key, seq, callback);
}

}  // namespace shale
