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
