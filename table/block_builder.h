// BlockBuilder: lays out one block (data, index, metaindex or properties) of a table.
//
// Entries are sorted; each key is stored as the length it shares with the previous key plus
// the rest ("prefix compression"). Every block_restart_interval entries a key is stored
// whole and its offset is recorded as a restart point, so a reader can binary-search the
// restart points and decode from there.
//
//   entry:   varint32 shared | varint32 non_shared | varint32 value_length |
//            key[shared..] (non_shared bytes) | value
//   trailer: fixed32 restart offsets... | fixed32 number of restarts (at least 1)
//
// A data block built with the hash index carries it between the restart offsets and the
// count, and sets the count's top bit (data_block_hash_index.h).
//
// Thread safety: one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shale/slice.h"
#include "table/data_block_hash_index.h"

namespace shale {

class BlockBuilder {
 public:
  // REQUIRES: restart_interval >= 1 (smaller values are treated as 1). With hash_index
  // the block also gets the data block hash index at util_ratio keys per bucket (unless it
  // has too many restarts for one); its keys must then be internal keys.
  explicit BlockBuilder(int restart_interval, bool hash_index = false, double util_ratio = 0.75);
  BlockBuilder(const BlockBuilder&) = delete;
  BlockBuilder& operator=(const BlockBuilder&) = delete;

  // Starts a new, empty block.
  void Reset();

  // REQUIRES: Finish() not called since Reset(); key sorts after every key added so far
  // (under the comparator the block will be read with).
  void Add(const Slice& key, const Slice& value);

  // Appends the restart array and returns the whole block, valid until Reset() or the
  // builder is destroyed.
  Slice Finish();

  // Size of the block if Finish() were called now.
  size_t CurrentSizeEstimate() const;
  // At least the size the block would have after Add(key, value): the key counted whole,
  // as if it shared no prefix.
  size_t SizeEstimateAfter(const Slice& key, const Slice& value) const;
  bool empty() const { return num_entries_ == 0; }
  size_t NumEntries() const { return num_entries_; }

 private:
  const int restart_interval_;
  std::string buffer_;
  std::vector<uint32_t> restarts_;  // offsets of restart points; restarts_[0] == 0
  int counter_ = 0;                 // entries since the last restart
  size_t num_entries_ = 0;
  bool finished_ = false;
  std::string last_key_;
  std::unique_ptr<DataBlockHashIndexBuilder> hash_index_;  // null without the hash index
};

}  // namespace shale
