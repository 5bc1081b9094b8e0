// FilterPolicy: how SST files summarize their keys so that a read can skip a file that
// cannot hold the key. Set it in BlockBasedTableOptions::filter_policy.
//
// Thread safety: a FilterPolicy is immutable and shared by every reader and writer.
#pragma once

#include <memory>

namespace shale {

class FilterPolicy {
 public:
  virtual ~FilterPolicy() = default;
  // Persisted in each SST file's metaindex; a reader ignores a filter of another name.
  virtual const char* Name() const = 0;
  // Bits of filter per key this policy aims at.
  virtual double GetBitsPerKey() const = 0;
};

// A full-file Bloom filter, every probe of a key within one 64-byte cache line. About
// 1% false positives at 10 bits per key. use_block_based_builder is accepted for source
// compatibility and ignored (the old block-based format is not written).
const FilterPolicy* NewBloomFilterPolicy(double bits_per_key, bool use_block_based_builder = false);

}  // namespace shale
