// The index of a WriteBatchWithIndex: one entry per indexed record, ordered by column family
// id, then by key (the family's comparator: the index comparator for the default family, the
// comparator of the handle first written through for another) and, within a key, by the
// record's position in the batch, so the records of a key run oldest to newest. Entries
// hold offsets into the batch's bytes, never pointers: the batch's string moves when it
// grows.
//
// Invariant: every entry's key and value ranges lie inside the batch's bytes and name the
// record it was made from (or, with overwrite_key, the key's newest non-Merge record: the
// value range and type are updated in place; the key range, which orders the entry, stays).
// A family's comparator, once set, never changes (the entries are ordered by it).
// Thread safety: none; the owning WriteBatchWithIndex has one user at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "shale/comparator.h"
#include "shale/merge_operator.h"
#include "shale/slice.h"
#include "shale/utilities/write_batch_with_index.h"
#include "shale/write_batch.h"

namespace shale {
namespace wbwi {

struct IndexEntry {
  uint32_t cf;        // the column family id
  size_t key_offset;  // also the order of the entry among a key's entries
  uint32_t key_size;
  // Mutable: overwrite_key updates them in place, which leaves the order unchanged.
  mutable size_t value_offset;
  mutable uint32_t value_size;
  mutable WriteType type;
};

// A key of family cf to search for: entries of `key` are ordered around `order` (0:
// before all of them, SIZE_MAX: after all of them). edge < 0 stands before every entry of
// the family, edge > 0 after every one (key and order unused).
struct IndexProbe {
  uint32_t cf;
  Slice key;
  size_t order;
  int edge = 0;
};

// The comparator of each column family the index has met.
class FamilyComparators {
 public:
  explicit FamilyComparators(const Comparator* default_cmp) : default_(default_cmp) {}
  const Comparator* Get(uint32_t cf) const {
    if (cf == 0) return default_;
    for (const auto& [id, cmp] : others_) {
      if (id == cf) return cmp;
    }
    return default_;
  }
  // Sets cf's comparator unless it has one (the default family keeps the index's).
  void SetIfAbsent(uint32_t cf, const Comparator* cmp) {
    if (cf == 0 || cmp == nullptr) return;
    for (const auto& entry : others_) {
      if (entry.first == cf) return;
    }
    others_.emplace_back(cf, cmp);
  }

 private:
  const Comparator* const default_;
  // Few families per batch: a linear search beats a map's node chasing.
  std::vector<std::pair<uint32_t, const Comparator*>> others_;
};

class IndexOrder {
 public:
  using is_transparent = void;
  IndexOrder(const WriteBatch* batch, const FamilyComparators* cmps) : batch_(batch), cmps_(cmps) {}

  bool operator()(const IndexEntry& a, const IndexEntry& b) const {
    if (a.cf != b.cf) return a.cf < b.cf;
    return Less(a.cf, Key(a), a.key_offset, Key(b), b.key_offset);
  }
  bool operator()(const IndexEntry& a, const IndexProbe& b) const {
    if (a.cf != b.cf) return a.cf < b.cf;
    if (b.edge != 0) return b.edge > 0;
    return Less(a.cf, Key(a), a.key_offset, b.key, b.order);
  }
  bool operator()(const IndexProbe& a, const IndexEntry& b) const {
    if (a.cf != b.cf) return a.cf < b.cf;
    if (a.edge != 0) return a.edge < 0;
    return Less(a.cf, a.key, a.order, Key(b), b.key_offset);
  }

  Slice Key(const IndexEntry& e) const {
    return Slice(batch_->Data().data() + e.key_offset, e.key_size);
  }

 private:
  bool Less(uint32_t cf, const Slice& ka, size_t oa, const Slice& kb, size_t ob) const {
    const int c = cmps_->Get(cf)->Compare(ka, kb);
    return c < 0 || (c == 0 && oa < ob);
  }
  const WriteBatch* batch_;
  const FamilyComparators* cmps_;
};

using Index = std::set<IndexEntry, IndexOrder>;

// The batch and its index; the state of a WriteBatchWithIndex.
class BatchIndex {
 public:
  BatchIndex(const Comparator* cmp, size_t reserved_bytes, bool overwrite_key);

  WriteBatch* batch() { return &batch_; }
  const WriteBatch& batch() const { return batch_; }
  const Index& index() const { return index_; }
  // Family cf's comparator (the index's for a family never named by a handle).
  const Comparator* comparator(uint32_t cf) const { return cmps_.Get(cf); }
  // Gives family cf the comparator cmp, unless it has one already.
  void SetComparator(uint32_t cf, const Comparator* cmp) { cmps_.SetIfAbsent(cf, cmp); }

  Slice Key(const IndexEntry& e) const { return index_.key_comp().Key(e); }
  Slice Value(const IndexEntry& e) const {
    return Slice(batch_.Data().data() + e.value_offset, e.value_size);
  }
  WriteEntry Entry(const IndexEntry& e) const { return WriteEntry{e.type, Key(e), Value(e)}; }

  // Indexes the record of family cf just appended to the batch (its key and value end the
  // batch).
  void AddLast(uint32_t cf, WriteType type, const Slice& key, const Slice& value);
  // Indexes a record whose key and value are ranges of the batch's bytes.
  void Add(uint32_t cf, WriteType type, size_t key_offset, size_t key_size, size_t value_offset,
           size_t value_size);
  // Rebuilds the index from the batch's records (after a rollback or Clear).
  Status Rebuild();

  // The newest entry of family cf's key, or index().end().
  Index::const_iterator Newest(uint32_t cf, const Slice& key) const;
  // The newest entry of the key of `it` (which must be valid).
  Index::const_iterator NewestOfKey(Index::const_iterator it) const;
  // Whether two entries are of the same family and key.
  bool SameKey(const IndexEntry& a, const IndexEntry& b) const {
    return a.cf == b.cf && comparator(a.cf)->Compare(Key(a), Key(b)) == 0;
  }
  // it, or index().end() when it is not an entry of family cf.
  Index::const_iterator InFamily(uint32_t cf, Index::const_iterator it) const {
    return it == index_.end() || it->cf != cf ? index_.end() : it;
  }
  // The entry before it within family cf, or index().end().
  Index::const_iterator PrevInFamily(uint32_t cf, Index::const_iterator it) const {
    return it == index_.begin() ? index_.end() : InFamily(cf, std::prev(it));
  }
  // The first and the last entry of family cf, or index().end().
  Index::const_iterator FamilyFirst(uint32_t cf) const {
    return InFamily(cf, index_.lower_bound(IndexProbe{cf, Slice(), 0, -1}));
  }
  Index::const_iterator FamilyLast(uint32_t cf) const {
    return PrevInFamily(cf, index_.lower_bound(IndexProbe{cf, Slice(), 0, +1}));
  }

 private:
  FamilyComparators cmps_;
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
// Both see family cf's entries only.
WBWIIterator* NewIndexIterator(const BatchIndex* bi, uint32_t cf, const Status& status);
Iterator* NewBaseDeltaIterator(const BatchIndex* bi, uint32_t cf, Iterator* base,
                               const Slice* lower_bound, const Slice* upper_bound,
                               const MergeOperator* merge_operator);

}  // namespace wbwi
}  // namespace shale
