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
  // Recorded in each SST file's properties (TableProperties::filter_policy_name).
  virtual const char* Name() const = 0;
  // Names the family of filters whose bytes this policy can read: the SST file's metaindex
  // entry carries it, and a reader consults a filter only under its own policy's
  // compatibility name. The built-in Bloom and Ribbon policies share one (their filters are
  // self-describing), so either reads files written by the other.
  virtual const char* CompatibilityName() const { return Name(); }
  // Bits of filter per key this policy aims at (for Ribbon: the Bloom equivalent).
  virtual double GetBitsPerKey() const = 0;
};

// A full-file Bloom filter, every probe of a key within one 64-byte cache line. About
// 1% false positives at 10 bits per key. use_block_based_builder is accepted for source
// compatibility and ignored (the old block-based format is not written). bits_per_key is
// clamped to [1, 100].
const FilterPolicy* NewBloomFilterPolicy(double bits_per_key, bool use_block_based_builder = false);

// A Standard Ribbon filter with the false-positive rate of NewBloomFilterPolicy(
// bloom_equivalent_bits_per_key) in about 30% less space. Building one costs several
// times the CPU of a Bloom filter (and about 40 bytes of temporary memory per key);
// queries stay fast. If building fails (rare; several hash seeds are tried) or the key
// set is so small that a Bloom filter would be smaller, the file gets a Bloom filter of
// the same false-positive rate instead; readers tell the two apart from the bytes.
//
// bloom_before_level, as in RocksDB: files for levels numerically below it get a Bloom
// filter (cheaper to build for short-lived data), the others Ribbon. Flushes count as
// level -1 and files of unknown level as the bottommost. So -1 means Ribbon everywhere,
// the default 0 means Bloom for flushes and Ribbon for every compaction output, and
// INT_MAX means Bloom everywhere.
const FilterPolicy* NewRibbonFilterPolicy(double bloom_equivalent_bits_per_key,
                                          int bloom_before_level = 0);

}  // namespace shale
