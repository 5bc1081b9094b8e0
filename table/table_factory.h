// BlockBasedTableFactory: the TableFactory that NewBlockBasedTableFactory returns; it carries
// the BlockBasedTableOptions into ColumnFamilyOptions::table_factory, where the DB reads
// them back (a TableFactory whose Name() is "BlockBasedTable" is one of these).
//
// Thread safety: immutable after construction.
#pragma once

#include "shale/table.h"

namespace shale {

class BlockBasedTableFactory final : public TableFactory {
 public:
  explicit BlockBasedTableFactory(const BlockBasedTableOptions& table_options)
      : table_options_(table_options) {}
  static constexpr const char* kClassName = "BlockBasedTable";
  const char* Name() const override { return kClassName; }
  const BlockBasedTableOptions& table_options() const { return table_options_; }

 private:
  const BlockBasedTableOptions table_options_;
};

}  // namespace shale
