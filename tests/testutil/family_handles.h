// Helpers for tests of column families: a merge operator that shows every operand it
// applied, and the handles of a DB opened with several families, released before the DB.
#pragma once

#include <string>
#include <vector>

#include "shale/db.h"
#include "shale/merge_operator.h"

namespace shale {

// "a" then "b" merged: "a,b". An operand applied twice (or lost) shows in the result.
class JoinOperator : public AssociativeMergeOperator {
 public:
  bool Merge(const Slice&, const Slice* existing, const Slice& value, std::string* out,
             Logger*) const override {
    if (existing != nullptr) *out = existing->ToString() + ",";
    out->append(value.data(), value.size());
    return true;
  }
  const char* Name() const override { return "JoinOperator"; }
};

// Releases handles through db (DestroyColumnFamilyHandle), or deletes them when db is
// null, and empties the vector.
inline void ReleaseHandles(DB* db, std::vector<ColumnFamilyHandle*>* handles) {
  for (ColumnFamilyHandle* h : *handles) {
    if (db != nullptr) {
      db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
    } else {
      delete h;
    }
  }
  handles->clear();
}

}  // namespace shale
