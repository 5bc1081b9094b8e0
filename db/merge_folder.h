// MergeFolder: what the memtable inserter asks before it adds a Merge operand, so that a key
// with many operands on top of it in the memtable gets a Put instead
// (ColumnFamilyOptions::max_successive_merges). The DB implements it (db_impl_merge.cc) and
// hands it to WriteBatchInternal::InsertInto; the batch code knows nothing else of the DB.
//
// Thread safety: called by every inserting thread at once (concurrent memtable writes); an
// implementation reads the memtable and the tree beneath it without the DB mutex.
#pragma once

#include <cstdint>
#include <string>

#include "shale/slice.h"
#include "shale/types.h"

namespace shale {

class MemTable;

class MergeFolder {
 public:
  // Before operand is added for key at sequence seq to mem, column family
  // column_family's active memtable: when mem already holds that family's configured
  // number of operands on top of key, computes the value key would have with operand
  // applied (reading everything below seq) into *merged and returns true; the caller then
  // writes that as a Put at seq instead. Otherwise false.
  virtual bool FoldSuccessiveMerges(uint32_t column_family, MemTable* mem, const Slice& key,
                                    SequenceNumber seq, const Slice& operand,
                                    std::string* merged) = 0;

 protected:
  ~MergeFolder() = default;
};

}  // namespace shale
