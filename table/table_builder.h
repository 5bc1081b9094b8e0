// TableBuilder: writes one block-based table (SST file) from entries added in increasing
// internal-key order.
//
// Layout written: data blocks, filter block (when a filter policy is set,
// whole_key_filtering is on and skip_filters is off), index block, properties block, the
// range-deletion block (when range tombstones were added; RocksDB's "rocksdb.range_del":
// internal keys begin@seq of kTypeRangeDeletion with the end key as value, in internal-key
// order, one restart point per entry), metaindex block, footer (see format.h). Data and index
// blocks are compressed with options.compression when that saves at least 1/8; the other
// blocks are stored uncompressed.
//
// Thread safety: one thread at a time. The WritableFile is not owned, is appended to from
// offset 0, and is neither synced nor closed here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shale/compression_type.h"
#include "shale/env.h"
#include "shale/table.h"
#include "table/block_builder.h"
#include "table/compression.h"
#include "table/format.h"
#include "table/table_properties.h"
#include "util/dbformat.h"
#include "util/range_tombstone.h"

namespace shale {

class FilterBitsBuilder;

struct TableBuilderOptions {
  const InternalKeyComparator* icmp = nullptr;  // must outlive the builder
  BlockBasedTableOptions table_options;
  CompressionType compression = kNoCompression;
  std::string file_name;  // for messages
  // Level the file is written to, -1 when unknown. A filter policy may pick its filter by
  // it (NewRibbonFilterPolicy's bloom_before_level).
  int level_at_creation = -1;
  // The file is a memtable flush (level_at_creation 0); RocksDB's bloom_before_level
  // counts flushes as level -1.
  bool is_flush = false;
  // Write no filter block even when the table options ask for one
  // (optimize_filters_for_hits on the last level).
  bool skip_filters = false;
  // SstFileWriter's format version, recorded in the properties
  // (TableProperties::external_sst_file_version); 0 for the DB's own files.
  uint64_t external_file_version = 0;
};

class TableBuilder {
 public:
  // A compression or checksum type this build lacks puts the builder in a failed state
  // (status() NotSupported) from the start.
  TableBuilder(const TableBuilderOptions& options, WritableFile* file);
  // REQUIRES: Finish() or Abandon() was called.
  ~TableBuilder();
  TableBuilder(const TableBuilder&) = delete;
  TableBuilder& operator=(const TableBuilder&) = delete;

  // REQUIRES: internal_key sorts after every key added so far; Finish()/Abandon() not
  // called. A key out of order or shorter than 8 bytes fails the builder with
  // InvalidArgument instead of writing a broken file.
  void Add(const Slice& internal_key, const Slice& value);

  // Adds a range tombstone [begin, end)@seq to the range-deletion block, in any order
  // relative to Add and to each other (they are sorted at Finish). The caller makes the
  // file's boundaries cover it (RangeTombstoneBounds). An empty range is dropped.
  void AddRangeTombstone(const Slice& begin, const Slice& end, SequenceNumber seq);
  uint64_t NumRangeTombstones() const { return range_tombstones_.size(); }

  // The first error met (writing, or a bad Add), or OK.
  Status status() const { return status_; }

  // Writes the remaining blocks and the footer. No sync. REQUIRES: not called before.
  Status Finish();
  // Stops; the file's contents are to be thrown away by the caller.
  void Abandon();

  uint64_t NumEntries() const { return props_.num_entries; }
  // The table gets a filter block.
  bool WritesFilter() const { return filter_builder_ != nullptr; }
  // The last key added, valid until the next Add or the builder's destruction.
  // REQUIRES: NumEntries() > 0.
  Slice LastKey() const { return last_key_; }
  // Bytes written so far; the file's size after Finish().
  uint64_t FileSize() const { return offset_; }
  // Complete after Finish().
  const TableProperties& GetTableProperties() const { return props_; }

 private:
  // Writes the pending data block, if any, and remembers its handle for the index.
  void FlushDataBlock();
  // Whether the data block should end before this entry (RocksDB's cut by size).
  bool DataBlockAlmostFull(const Slice& key, const Slice& value) const;
  void AddPendingIndexEntry(const Slice* next_key);
  // Finishes block, compresses it when may_compress and worthwhile, writes it, resets it.
  void WriteBlock(BlockBuilder* block, bool may_compress, BlockHandle* handle);
  void WriteRawBlock(const Slice& contents, CompressionType type, BlockHandle* handle);

  const TableBuilderOptions options_;
  WritableFile* const file_;
  uint64_t offset_ = 0;
  Status status_;
  bool closed_ = false;

  BlockBuilder data_block_;
  BlockBuilder index_block_;
  std::string last_key_;   // the last key added
  std::string separator_;  // scratch for the index entry's shortened key
  // After a data block is written, its index entry waits for the next key, so that the
  // separator can be shortened to something between the two blocks.
  bool pending_index_entry_ = false;
  BlockHandle pending_handle_;
  std::unique_ptr<FilterBitsBuilder> filter_builder_;  // null when no filter is written
  BlockCompressor compressor_;                         // for data and index blocks
  TableProperties props_;
  std::vector<RangeTombstone> range_tombstones_;
};

}  // namespace shale
