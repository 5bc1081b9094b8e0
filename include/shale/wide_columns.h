// Wide columns: the name-value pairs of a RocksDB wide-column entity. shale stores no
// entities; the types exist so that interfaces taking them (CompactionFilter::FilterV3)
// keep RocksDB's signatures. A plain value is an entity with one column named
// kDefaultWideColumnName.
#pragma once

#include <utility>
#include <vector>

#include "shale/slice.h"

namespace shale {

// One column: views of its name and value (owned by whoever made the column).
class WideColumn {
 public:
  WideColumn() = default;
  WideColumn(const Slice& name, const Slice& value) : name_(name), value_(value) {}

  const Slice& name() const { return name_; }
  const Slice& value() const { return value_; }

 private:
  Slice name_;
  Slice value_;
};

using WideColumns = std::vector<WideColumn>;

// The name of the column a plain value is seen as: empty.
inline const Slice kDefaultWideColumnName;

}  // namespace shale
