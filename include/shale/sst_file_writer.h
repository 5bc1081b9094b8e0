// SstFileWriter: writes a table (SST) file outside any DB, from keys given in order, for a
// later bulk load into a DB (RocksDB's class, the calls shale has).
//
// Every entry gets sequence number 0: an ingestion gives the whole file one sequence
// number of its own (the global sequence number RocksDB speaks of), so the file carries
// none. The file is written with the table options (options.table_factory, which must be
// the block-based one), the comparator and the compression of the Options given, and is
// synced on Finish.
//
// Errors: a call before Open, or after Finish or a failure, gives InvalidArgument; a key
// not strictly after the one before it (by options.comparator; Put, Merge and Delete
// alike) gives InvalidArgument and fails the writer: Finish then returns that error and
// removes the file, as it does a file with no entries. A writer destroyed before Finish
// removes its file too, so only a finished file is ever left.
//
// Thread safety: one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "shale/env.h"
#include "shale/options.h"
#include "shale/slice.h"
#include "shale/status.h"
#include "shale/types.h"

namespace shale {

// What Finish tells about the file it wrote.
struct ExternalSstFileInfo {
  ExternalSstFileInfo() = default;
  ExternalSstFileInfo(const std::string& _file_path, const std::string& _smallest_key,
                      const std::string& _largest_key, SequenceNumber _sequence_number,
                      uint64_t _file_size, uint64_t _num_entries, int32_t _version)
      : file_path(_file_path),
        smallest_key(_smallest_key),
        largest_key(_largest_key),
        sequence_number(_sequence_number),
        file_size(_file_size),
        num_entries(_num_entries),
        version(_version) {}

  std::string file_path;
  std::string smallest_key;            // the smallest user key in the file
  std::string largest_key;             // the largest user key in the file
  SequenceNumber sequence_number = 0;  // of every entry: 0 until an ingestion assigns one
  uint64_t file_size = 0;              // bytes
  uint64_t num_entries = 0;
  int32_t version = 0;  // the external file format: 2, as RocksDB's writer makes
};

class SstFileWriter {
 public:
  // options is copied; its env, comparator and table factory must outlive the writer.
  SstFileWriter(const EnvOptions& env_options, const Options& options);
  ~SstFileWriter();
  SstFileWriter(const SstFileWriter&) = delete;
  SstFileWriter& operator=(const SstFileWriter&) = delete;

  // Creates (or truncates) file_path for writing. NotSupported for a table factory other
  // than the block-based one; InvalidArgument if a file is already open.
  Status Open(const std::string& file_path);

  // REQUIRES for each: user_key sorts after every key added before (see the top).
  Status Put(const Slice& user_key, const Slice& value);
  // A merge operand; the DB it is ingested into folds it with its merge operator.
  Status Merge(const Slice& user_key, const Slice& value);
  Status Delete(const Slice& user_key);

  // Writes the rest of the file, syncs and closes it. file_info (may be null) describes
  // it. InvalidArgument "Cannot create sst file with no entries" when nothing was added,
  // and the file is removed.
  Status Finish(ExternalSstFileInfo* file_info = nullptr);

  // The bytes written so far; the file's size after Finish.
  uint64_t FileSize();

  // The external file format version this writer makes.
  static constexpr int32_t kVersion = 2;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace shale
