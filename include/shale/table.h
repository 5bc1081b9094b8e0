// Table (SST file) format options, and the factory that carries them into Options.
//
// The block-based table: data blocks of prefix-compressed keys with restart points, an
// index block, an optional full-file filter, a properties block, a metaindex and a footer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "shale/filter_policy.h"

namespace shale {

class Cache;

enum ChecksumType : char {
  kNoChecksum = 0x0,
  kCRC32c = 0x1,
  kxxHash = 0x2,
  kxxHash64 = 0x3,
  kXXH3 = 0x4,
};

struct BlockBasedTableOptions {
  // Checksum stored in every block trailer. Default: kXXH3, as in RocksDB 7.
  ChecksumType checksum = kXXH3;
  // Uncompressed size of a data block that the builder aims at. Default: 4 KiB.
  size_t block_size = 4 * 1024;
  // Keys between restart points of prefix compression in data blocks. Default: 16.
  int block_restart_interval = 16;
  // The same for the index block. Default: 1.
  int index_block_restart_interval = 1;

  // How a point lookup finds a key inside a data block.
  enum DataBlockIndexType : char {
    // Binary search over the block's restart points.
    kDataBlockBinarySearch = 0,
    // Also a hash table from user keys to restart intervals, appended to each data block
    // (unless it has more than 253 restart points), which Get uses to decode only one
    // interval, and to answer not-found at once when the first key after the one sought
    // is another user key. Costs about 1 / data_block_hash_table_util_ratio bytes per key.
    // Iterators still binary-search. Files written either way are read by either setting;
    // a build of shale from before this option reads neither kind of block written with
    // the hash (Corruption). Used by Get only with a comparator under which equal keys are
    // equal bytes (BytewiseComparator and ReverseBytewiseComparator).
    kDataBlockBinaryAndHash = 1,
  };
  // Default: kDataBlockBinarySearch.
  DataBlockIndexType data_block_index_type = kDataBlockBinarySearch;
  // With kDataBlockBinaryAndHash: keys per hash bucket (a lower ratio means more buckets,
  // fewer collisions and a larger block); at or below 0 it is taken as 0.75. Default: 0.75.
  double data_block_hash_table_util_ratio = 0.75;
  // Cache of uncompressed blocks shared by the tables that use these options. nullptr (the
  // default) gives each factory an 8 MiB LRU cache of its own, as RocksDB 7.8 does, unless
  // no_block_cache is set.
  std::shared_ptr<Cache> block_cache;
  // Read blocks without any cache. Default: false.
  bool no_block_cache = false;
  // Keep index and filter blocks in the block cache (counted against its capacity) instead
  // of in each open table. Default: false.
  bool cache_index_and_filter_blocks = false;
  // With cache_index_and_filter_blocks: put them in the cache's high-priority pool.
  // Default: true.
  bool cache_index_and_filter_blocks_with_high_priority = true;
  // With cache_index_and_filter_blocks: L0 files keep theirs pinned. Default: false.
  bool pin_l0_filter_and_index_blocks_in_cache = false;
  // A filter per file, or none (nullptr, the default).
  std::shared_ptr<const FilterPolicy> filter_policy;
  // Put whole keys into the filter. Default: true.
  bool whole_key_filtering = true;
  // After compressing a block, decompress it and compare with the input. Default: false.
  bool verify_compression = false;
  // The format version written. This build writes 5 only: Open refuses another value
  // with InvalidArgument. Default: 5.
  uint32_t format_version = 5;
};

// Makes SST files; carried in ColumnFamilyOptions::table_factory.
class TableFactory {
 public:
  virtual ~TableFactory() = default;
  virtual const char* Name() const = 0;
};

TableFactory* NewBlockBasedTableFactory(
    const BlockBasedTableOptions& table_options = BlockBasedTableOptions());

}  // namespace shale
