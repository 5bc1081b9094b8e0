// Helpers for tests of column families: a merge operator that shows every operand it
// applied, the handles of a DB opened with several families, released before the DB, and
// a reopen with families.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "shale/db.h"
#include "shale/merge_operator.h"
#include "tests/testutil/fault_injection_env.h"

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

// A power loss: the file system stops, *db closes (its handles released first) failing
// every write, and what was not synced is lost; then the file system works again.
inline Status CloseInAPowerLoss(FaultInjectionTestEnv* env,
                                std::vector<ColumnFamilyHandle*>* handles,
                                std::unique_ptr<DB>* db) {
  env->SetFilesystemActive(false);
  ReleaseHandles(db->get(), handles);
  db->reset();
  Status s = env->SimulatePowerLoss();
  env->SetFilesystemActive(true);
  return s;
}

// Closes *db (its handles released first) and opens dbname with the families `descs`
// names, returning DB::Open's status.
inline Status ReopenWithFamilies(const DBOptions& options, const std::string& dbname,
                                 const std::vector<ColumnFamilyDescriptor>& descs,
                                 std::vector<ColumnFamilyHandle*>* handles,
                                 std::unique_ptr<DB>* db) {
  ReleaseHandles(db->get(), handles);
  db->reset();
  DB* opened = nullptr;
  Status s = DB::Open(options, dbname, descs, handles, &opened);
  db->reset(opened);
  return s;
}

}  // namespace shale
