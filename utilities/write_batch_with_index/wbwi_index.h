// The index of a WriteBatchWithIndex: one entry per indexed record, ordered by key (the
// index comparator) and, within a key, by the record's position in the batch, so the
// records of a key run oldest to newest. Entries hold offsets into the batch's bytes, never
// pointers: the batch's string moves when it grows.
//
// Invariant: every entry's key and value ranges lie inside the batch's bytes and name the
// record it was made from (or, with overwrite_key, the key's newest non-Merge record: the
// value range and type are updated in place; the key range, which orders the entry, stays).
// Thread safety: none; the owning WriteBatchWithIndex has one user at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "shale/comparator.h"
#include "shale/merge_operator.h"
#include "shale/slice.h"
#include "shale/utilities/write_batch_with_index.h"
#include "shale/write_batch.h"

namespace shale {
namespace wbwi {

struct IndexEntry {
  size_t key_offset;  // also the order of the entry among a key's entries
  uint32_t key_size;
  // Mutable: overwrite_key updates them in place, which leaves the order unchanged.
  mutable size_t value_offset;
  mutable uint32_t value_size;
  mutable WriteType type;
};

// A key to search for: entries of `key` are ordered around `order` (0: before all of
// them, SIZE_MAX: after all of them).
struct IndexProbe {
  Slice key;
  size_t order;
};

class IndexOrder {
 public:
  using is_transparent = void;
  IndexOrder(const WriteBatch* batch, const Comparator* cmp) : batch_(batch), cmp_(cmp) {}

  bool operator()(const IndexEntry& a, const IndexEntry& b) const {
    return Less(Key(a), a.key_offset, Key(b), b.key_offset);
  }
  bool operator()(const IndexEntry& a, const IndexProbe& b) const {
    return Less(Key(a), a.key_offset, b.key, b.order);
  }
  bool operator()(const IndexProbe& a, const IndexEntry& b) const {
    return Less(a.key, a.order, Key(b), b.key_offset);
  }

  Slice Key(const IndexEntry& e) const {
    return Slice(batch_->Data().data() + e.key_offset, e.key_size);
  }
  const Comparator* comparator() const { return cmp_; }

 private:
  bool Less(const Slice& ka, size_t oa, const Slice& kb, size_t ob) const {
    const int c = cmp_->Compare(ka, kb);
    return c < 0 || (c == 0 && oa < ob);
  }
  const WriteBatch* batch_;
  const Comparator* cmp_;
};

using Index = std::set<IndexEntry, IndexOrder>;

// The batch and its index; the state of a WriteBatchWithIndex.
class BatchIndex {
 public:
  BatchIndex(const Comparator* cmp, size_t reserved_bytes, bool overwrite_key);

  WriteBatch* batch() { return &batch_; }
  const WriteBatch& batch() const { return batch_; }
  const Index& index() const { return index_; }
  const Comparator* comparator() const { return cmp_; }

  Slice Key(const IndexEntry& e) const { return index_.key_comp().Key(e); }
  Slice Value(const IndexEntry& e) const {
    return Slice(batch_.Data().data() + e.value_offset, e.value_size);
  }
  WriteEntry Entry(const IndexEntry& e) const { return WriteEntry{e.type, Key(e), Value(e)}; }

  // Indexes the record just appended to the batch (its key and value end the batch).
  void AddLast(WriteType type, const Slice& key, const Slice& value);
  // Indexes a record whose key and value are ranges of the batch's bytes.
  void Add(WriteType type, size_t key_offset, size_t key_size, size_t value_offset,
           size_t value_size);
  // Rebuilds the index from the batch's records (after a rollback or Clear).
  Status Rebuild();

  // The newest entry of key, or index().end().
  Index::const_iterator Newest(const Slice& key) const;
  // The newest entry of the key of `it` (which must be valid).
  Index::const_iterator NewestOfKey(Index::const_iterator it) const;

 private:
  const Comparator* const cmp_;
  const bool overwrite_key_;
  WriteBatch batch_;
  Index index_;
};

// What the batch alone says about a key.
enum class Lookup {
  kNotFound,         // no record of the key
  kFound,            // a Put; Merge operands may sit on top
  kDeleted,          // a Delete or SingleDelete; Merge operands may sit on top
  kMergeInProgress,  // only Merge operands
};

// Reads the key whose newest entry is `newest` (index().end(): kNotFound): *value is the
// Put's value (kFound), *operands the Merge operands above the Put or Delete, or all of
// them, oldest first. The slices point into the batch.
Lookup LookupKey(const BatchIndex& bi, Index::const_iterator newest, Slice* value,
                 std::vector<Slice>* operands);

// An iterator over the index alone, and the batch laid over a base iterator (Merge
// operands folded by merge_operator; null: a key with operands stops the iterator with
// NotSupported).
WBWIIterator* NewIndexIterator(const BatchIndex* bi, const Status& status);
Iterator* NewBaseDeltaIterator(const BatchIndex* bi, Iterator* base, const Slice* lower_bound,
                               const Slice* upper_bound, const MergeOperator* merge_operator);

}  // namespace wbwi
}  // namespace shale
