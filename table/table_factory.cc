#include "table/table_factory.h"

namespace shale {

TableFactory* NewBlockBasedTableFactory(const BlockBasedTableOptions& table_options) {
  return new BlockBasedTableFactory(table_options);
}

}  // namespace shale
