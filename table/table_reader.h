// TableReader: opens a block-based table (SST file) written by TableBuilder and serves
// iterators and point lookups over it.
//
// Open reads and checks the footer, the metaindex, the properties, the index block and
// (when the options name the same filter policy the file was written with) the filter;
// those stay in memory for the reader's life. Data blocks are read from the file on each
// use, their checksums verified per ReadOptions::verify_checksums.
//
// Thread safety: after Open every method may be called from many threads at once.
// Iterators belong to one thread each and must not outlive the reader.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "shale/env.h"
#include "shale/options.h"
#include "shale/table.h"
#include "table/block.h"
#include "table/format.h"
#include "table/table_properties.h"
#include "util/dbformat.h"
#include "util/internal_iterator.h"

namespace shale {

class FilterBitsReader;

struct TableReaderOptions {
  const InternalKeyComparator* icmp = nullptr;  // must outlive the reader
  BlockBasedTableOptions table_options;
  std::string file_name;  // for messages
  // Verify the checksums of the blocks read at Open (metaindex, properties, index,
  // filter). The footer is always checked.
  bool verify_checksums_on_open = true;
};

class TableReader {
 public:
  // Corruption (naming the file and offset) for a file that is too short, has a bad
  // footer or magic number, or a damaged metaindex/properties/index block;
  // InvalidArgument if the file was written with another comparator.
  static Status Open(const TableReaderOptions& options, std::unique_ptr<RandomAccessFile>&& file,
                     uint64_t file_size, std::unique_ptr<TableReader>* reader);

  ~TableReader();
  TableReader(const TableReader&) = delete;
  TableReader& operator=(const TableReader&) = delete;

  // Over every entry of the file, in internal-key order. Caller owns the iterator; the
  // reader must outlive it.
  InternalIterator* NewIterator(const ReadOptions& read_options);

  // Point lookup: if the filter (asked with the user key of ikey, when whole-key
  // filtering and a filter exist) says no, returns OK without calling handle. Otherwise
  // seeks to the first entry >= ikey and calls handle(arg, entry_ikey, entry_value) for
  // each following entry while handle returns true. The slices passed are valid only
  // during the call. Block errors (checksum, malformed block) are returned.
  using GetHandler = bool (*)(void* arg, const Slice& ikey, const Slice& value);
  Status Get(const ReadOptions& read_options, const Slice& ikey, void* arg, GetHandler handle);

  const TableProperties& GetTableProperties() const { return props_; }

  // Approximately where in the file the data for ikey begins: the offset of the data
  // block that would hold it, or the size of all data blocks if ikey is past the last key.
  uint64_t ApproximateOffsetOf(const Slice& ikey) const;

  // Whether the filter says ikey's user key may be present (true without a filter).
  bool KeyMayMatch(const Slice& ikey) const;

 private:
  class BlockIterState;

  TableReader(const TableReaderOptions& options, std::unique_ptr<RandomAccessFile>&& file,
              uint64_t file_size);
  Status ReadMetaBlocks();
  Status ReadBlockAt(const BlockHandle& handle, bool verify, BlockContents* contents) const;
  // An iterator over the data block an index value names; its status says why if it
  // cannot be read.
  InternalIterator* NewDataBlockIterator(const ReadOptions& read_options,
                                         const Slice& index_value) const;

  const TableReaderOptions options_;
  const std::unique_ptr<RandomAccessFile> file_;
  const uint64_t file_size_;
  Footer footer_;
  TableProperties props_;
  std::unique_ptr<Block> index_block_;
  BlockContents filter_contents_;             // the bytes filter_ reads
  std::unique_ptr<FilterBitsReader> filter_;  // null: no usable filter
};

}  // namespace shale
