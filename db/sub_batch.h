// SubBatchSplitter: how a batch is numbered when the DB gives one sequence number per
// sub-batch instead of one per record (seq_per_batch, the WritePrepared write policy: the
// commit cache then holds one entry per sub-batch, not one per key).
//
// All records of a sub-batch share its sequence number, so no key may appear twice in
// one: a record whose key the current sub-batch already holds starts the next sub-batch.
// The writer counts sub-batches with this rule before the write (to allocate numbers),
// and the memtable inserter and WAL recovery apply the same rule to the same records, so
// all three number every record alike. Keys are compared byte for byte whatever their
// column family (a key repeated in another family also starts a sub-batch: one number more,
// never a collision). A batch takes at least one sequence number, even with no records: a
// commit marker is a write of its own.
//
// The current sub-batch's keys are kept in a small array, each with a fingerprint that
// most comparisons stop at, and a 64-bit mask of them that most new keys stop at; past
// kInline keys they move to a hash set. (A hash set for
// every batch cost about 4% of a WritePrepared write of 8 records: a node allocation per
// key.)
//
// Thread safety: one walk over one batch; the keys it holds point into that batch, which
// must outlive the walk.
#pragma once

#include <cstdint>
#include <cstring>
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
    const uint64_t fp = Fingerprint(k);
    const uint64_t bit = MaskBit(fp);
    // The common case, inline: a key whose mask bit is clear, with room in the array
    // (which also means the hash set is not in use). The rest is out of line, so that
    // this stays a few instructions in the caller's loop.
    if ((seen_mask_ & bit) == 0 && inline_count_ < kInline) {
      keys_[inline_count_] = k;
      fingerprints_[inline_count_++] = fp;
      seen_mask_ |= bit;
      return false;
    }
    return StartsNewSlow(k, fp);
  }

  // Sub-batches so far (1 before any record).
  uint64_t sub_batches() const { return sub_batches_; }

 private:
  static constexpr size_t kInline = 32;

  // Equal keys have equal fingerprints: the length and the first and last 8 bytes.
  static uint64_t Fingerprint(std::string_view k) {
    uint64_t head = 0;
    uint64_t tail = 0;
    if (k.size() >= 8) {
      std::memcpy(&head, k.data(), 8);
      std::memcpy(&tail, k.data() + k.size() - 8, 8);
    } else {
      std::memcpy(&head, k.data(), k.size());
    }
    return (head * 0x9E3779B97F4A7C15ull) ^ tail ^ k.size();
  }
  // One bit of 64 per inline key, picked by its fingerprint: a key whose bit is clear is
  // not among them, and most keys of a batch with distinct keys skip the scan that way.
  static uint64_t MaskBit(uint64_t fp) {
    return uint64_t{1} << ((fp * 0x9E3779B97F4A7C15ull) >> 58);
  }
  // StartsNew for a key that may be in the current sub-batch, or one that does not fit
  // in the array.
  [[gnu::noinline]] bool StartsNewSlow(std::string_view k, uint64_t fp) {
    const bool repeated = Contains(k, fp);
    if (repeated) {
      inline_count_ = 0;
      seen_mask_ = 0;
      large_.clear();
      sub_batches_++;
    }
    Add(k, fp);
    return repeated;
  }
  bool Contains(std::string_view k, uint64_t fp) const {
    if (!large_.empty()) return large_.count(k) != 0;
    if ((seen_mask_ & MaskBit(fp)) == 0) return false;
    for (size_t i = 0; i < inline_count_; i++) {
      if (fingerprints_[i] == fp && keys_[i] == k) return true;
    }
    return false;
  }
  void Add(std::string_view k, uint64_t fp) {
    if (large_.empty() && inline_count_ < kInline) {
      keys_[inline_count_] = k;
      fingerprints_[inline_count_++] = fp;
      seen_mask_ |= MaskBit(fp);
      return;
    }
    if (large_.empty()) large_.insert(keys_, keys_ + inline_count_);
    large_.insert(k);
  }

  uint64_t sub_batches_ = 1;
  size_t inline_count_ = 0;
  uint64_t seen_mask_ = 0;  // the MaskBit of every inline key
  std::string_view keys_[kInline];
  uint64_t fingerprints_[kInline];
  std::unordered_set<std::string_view> large_;  // the keys, once more than kInline
};

}  // namespace shale
