// SubBatchSplitter: how a batch is numbered when the DB gives one sequence number per
// sub-batch instead of one per record (seq_per_batch, the WritePrepared write policy: the
// commit cache then holds one entry per sub-batch, not one per key).
//
// All records of a sub-batch share its sequence number, so no key may appear twice in
// one: a record whose key the current sub-batch already holds starts the next sub-batch.
// The writer counts sub-batches with this rule before the write (to allocate numbers),
// and the memtable inserter and WAL recovery apply the same rule to the same records, so
// all three number every record alike. Keys are compared byte for byte (there is one
// column family). A batch takes at least one sequence number, even with no records: a
// commit marker is a write of its own.
//
// Thread safety: one walk over one batch; the keys it holds point into that batch, which
// must outlive the walk.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_set>

#include "shale/slice.h"

namespace shale {

class SubBatchSplitter {
 public:
  // Called with each record's key in batch order. Returns true when key starts a new
  // sub-batch (the caller moves to the next sequence number before using it).
  bool StartsNew(const Slice& key) {
    const std::string_view k(key.data(), key.size());
    if (records_++ == 0) {
      first_ = k;  // the common one-record batch builds no set
      return false;
    }
    if (keys_.empty()) keys_.insert(first_);
    if (keys_.insert(k).second) return false;
    keys_.clear();
    keys_.insert(k);
    sub_batches_++;
    return true;
  }

  // Sub-batches so far (1 before any record).
  uint64_t sub_batches() const { return sub_batches_; }

 private:
  uint64_t records_ = 0;
  uint64_t sub_batches_ = 1;
  std::string_view first_;
  std::unordered_set<std::string_view> keys_;
};

}  // namespace shale
