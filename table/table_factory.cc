#include "table/table_factory.h"

#include "shale/cache.h"

namespace shale {

namespace {

constexpr size_t kDefaultBlockCacheCapacity = 8 << 20;

BlockBasedTableOptions Sanitize(BlockBasedTableOptions options) {
  if (options.no_block_cache) {
    options.block_cache.reset();
  } else if (options.block_cache == nullptr) {
    // A pool for index and filter blocks is not worth its cost in so small a cache.
    options.block_cache = NewLRUCache(kDefaultBlockCacheCapacity, -1, false, 0.0);
  }
  return options;
}

}  // namespace

BlockBasedTableFactory::BlockBasedTableFactory(const BlockBasedTableOptions& table_options)
    : table_options_(Sanitize(table_options)) {}

TableFactory* NewBlockBasedTableFactory(const BlockBasedTableOptions& table_options) {
  return new BlockBasedTableFactory(table_options);
}

}  // namespace shale
