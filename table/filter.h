// Filters that SST files carry so a point lookup can skip a file that cannot hold its key.
//
// A FilterBitsBuilder collects the keys of one file and serializes a filter over them; a
// FilterBitsReader answers "may this key be in the set?" over those bytes. The serialized
// form is self-describing (a trailer names the format and its parameters), so a reader needs
// only the bytes, never the policy that wrote them.
//
// Thread safety: a builder is used by one thread. A reader is immutable after construction
// and may be shared by any number of threads.
// Invariant: a reader never gives a false negative for a key its builder was given; bytes it
// cannot understand give a reader that answers true for everything.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "shale/filter_policy.h"
#include "shale/slice.h"

namespace shale {

class FilterBitsBuilder {
 public:
  virtual ~FilterBitsBuilder();
  // Consecutive duplicate keys are added once (keys usually arrive sorted).
  virtual void AddKey(const Slice& key) = 0;
  virtual size_t NumAdded() const = 0;
  // Serializes the filter over every key added and resets the builder to empty.
  virtual std::string Finish() = 0;
};

class FilterBitsReader {
 public:
  virtual ~FilterBitsReader();
  virtual bool MayMatch(const Slice& key) const = 0;
};

// What the table being written is for; a policy may choose its filter by it.
struct FilterBuildingContext {
  // Level the file is written to; -1 when unknown (treated as the bottommost).
  int level_at_creation = -1;
  // A memtable flush (counted as level -1 by RibbonFilterPolicy's bloom_before_level).
  bool is_flush = false;
};

// A builder for `policy`, or nullptr if the policy was not made by NewBloomFilterPolicy
// or NewRibbonFilterPolicy.
std::unique_ptr<FilterBitsBuilder> NewFilterBitsBuilder(const FilterPolicy& policy,
                                                        const FilterBuildingContext& context);
inline std::unique_ptr<FilterBitsBuilder> NewFilterBitsBuilder(const FilterPolicy& policy) {
  return NewFilterBitsBuilder(policy, FilterBuildingContext());
}

// The parameters of a policy made by NewBloomFilterPolicy (*ribbon false) or
// NewRibbonFilterPolicy (*ribbon true, with its bloom_before_level), for writing it into an
// OPTIONS file; false for any other policy.
bool DescribeBuiltinFilterPolicy(const FilterPolicy& policy, bool* ribbon, int* bloom_before_level);

// The false-positive rate a cache-local Bloom filter reaches at this density, in theory
// (keys fall on 512-bit lines at random); what a Ribbon policy aims at.
double CacheLocalBloomFpRate(double bits_per_key);

// A reader over bytes that FilterBitsBuilder::Finish() produced. It points into `contents`,
// which must outlive it. Bytes it cannot understand give a reader that always says true.
std::unique_ptr<FilterBitsReader> NewFilterBitsReader(const Slice& contents);

}  // namespace shale
