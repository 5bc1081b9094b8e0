// BlockBasedTableFactory: the TableFactory that NewBlockBasedTableFactory returns; it carries
// the BlockBasedTableOptions into ColumnFamilyOptions::table_factory, where the DB reads
// them back (a TableFactory whose Name() is "BlockBasedTable" is one of these).
//
// Construction settles the block cache as RocksDB 7.8 does: with no_block_cache the cache is
// dropped; otherwise a null block_cache becomes a new 8 MiB LRU cache (no high-priority
// pool) owned by this factory's options, so every table opened with them shares it.
//
// Thread safety: immutable after construction.
#pragma once

#include "shale/table.h"

namespace shale {

class BlockBasedTableFactory final : public TableFactory {
 public:
  explicit BlockBasedTableFactory(const BlockBasedTableOptions& table_options);
  static constexpr const char* kClassName = "BlockBasedTable";
  const char* Name() const override { return kClassName; }
  const BlockBasedTableOptions& table_options() const { return table_options_; }

 private:
  const BlockBasedTableOptions table_options_;
};

}  // namespace shale
