// The data block hash index: a small hash table appended to a data block that maps a user
// key to the restart interval holding it, so that a point lookup decodes one interval
// instead of binary-searching the restart points (BlockBasedTableOptions::
// data_block_index_type = kDataBlockBinaryAndHash). Only data blocks carry one; index,
// metaindex and properties blocks never do, and a Seek never uses it.
//
// Layout of a data block with the index (block_builder.h gives the rest):
//
//   entries | fixed32 restarts... | uint8 buckets[B] | fixed16 B | fixed32 footer
//
// The footer is the number of restarts with its top bit set. Blocks without the index
// (every block written before this option existed, and every block written with
// kDataBlockBinarySearch) end in the plain restart count, whose top bit is clear, so they
// read as before. A bucket holds the restart interval of the keys that hash to it, or
// kHashNoEntry (no key does) or kHashCollision (keys of two intervals do, or one user key
// spans two intervals). Restart intervals are numbered in one byte, so a block with more
// than kMaxRestartsForHashIndex restarts is written without the index.
//
// Keys are user keys: the builder is given internal keys and hashes them without their
// 8-byte trailer, so every version of a user key lands in one bucket. The reader may use
// the index only when equal user keys are equal bytes (bytewise comparators).
//
// Thread safety: a builder belongs to one thread; a parsed DataBlockHashIndex is immutable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "shale/slice.h"

namespace shale {

constexpr uint8_t kHashNoEntry = 255;
constexpr uint8_t kHashCollision = 254;
constexpr uint32_t kMaxRestartsForHashIndex = 253;
// The footer bit that says the block carries the index.
constexpr uint32_t kHashIndexFooterBit = 1u << 31;

class DataBlockHashIndexBuilder {
 public:
  // util_ratio: keys per bucket; at or below 0 it is taken as 0.75 (RocksDB's default).
  explicit DataBlockHashIndexBuilder(double util_ratio);

  // Records user_key as living in restart interval restart_index.
  void Add(const Slice& user_key, size_t restart_index);
  // False once a restart index beyond what a bucket can hold was added: the block is then
  // written without the index.
  bool Valid() const { return valid_; }
  // Bytes Finish would append.
  size_t EstimateSize() const;
  // Appends the buckets and their count. REQUIRES: Valid().
  void Finish(std::string* buffer) const;
  void Reset();

 private:
  size_t NumBuckets() const;

  double buckets_per_key_;
  bool valid_ = true;
  std::vector<std::pair<uint32_t, uint8_t>> hashes_;  // (hash of user key, restart)
};

// The bucket a user key hashes to among num_buckets.
uint16_t HashIndexBucket(const Slice& user_key, uint16_t num_buckets);

class DataBlockHashIndex {
 public:
  DataBlockHashIndex() = default;

  // Parses the index that ends at data + end (where the block footer starts), for a block
  // of num_restarts restarts. On success *index_start is where the buckets begin (the end
  // of the restart array) and true is returned; false (and nothing set) when the bucket
  // count does not fit in the block or a bucket names a restart interval the block lacks.
  bool Init(const char* data, size_t end, uint32_t num_restarts, size_t* index_start);

  bool present() const { return num_buckets_ != 0; }
  // The restart interval for user_key, kHashNoEntry or kHashCollision. REQUIRES: present().
  uint8_t Lookup(const Slice& user_key) const {
    return static_cast<uint8_t>(buckets_[HashIndexBucket(user_key, num_buckets_)]);
  }

 private:
  const char* buckets_ = nullptr;
  uint16_t num_buckets_ = 0;
};

}  // namespace shale
