// TableProperties: what a table file records about itself in its properties block (sizes,
// counts, and the names of the comparator, filter policy and compression it was written
// with), and the encoding of that block.
//
// The block is a BlockBuilder block (restart interval 1, bytewise-ordered names): numbers
// as varint64 values, names as raw bytes. Names a reader does not know are ignored, so
// later versions may add properties.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <string>

#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

struct TableProperties {
  uint64_t data_size = 0;  // data blocks with their trailers
  uint64_t index_size = 0;
  uint64_t filter_size = 0;
  uint64_t raw_key_size = 0;    // internal keys as added
  uint64_t raw_value_size = 0;  // values as added
  uint64_t num_data_blocks = 0;
  uint64_t num_entries = 0;
  uint64_t num_deletions = 0;  // deletions and single deletions
  uint64_t num_merge_operands = 0;
  // Range tombstones in the range-deletion block.
  uint64_t num_range_deletions = 0;
  std::string comparator_name;     // the user comparator's Name()
  std::string filter_policy_name;  // empty when the file has no filter
  std::string compression_name;
  // The format version of a file SstFileWriter made for ingestion (RocksDB's
  // rocksdb.external_sst_file.version): its entries all carry sequence number 0 and a DB
  // reads them with the one the ingestion assigned. 0: a file the DB wrote itself.
  uint64_t external_sst_file_version = 0;

  std::string ToString() const;
};

// The contents of a properties block (without trailer) for props.
std::string EncodeTableProperties(const TableProperties& props);

// Parses a properties block's contents (as EncodeTableProperties made them). Corruption
// if the block or a number in it is malformed; file_name and block_offset label it.
Status DecodeTableProperties(const Slice& contents, const std::string* file_name,
                             uint64_t block_offset, TableProperties* props);

}  // namespace shale
