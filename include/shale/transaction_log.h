// The WAL files of an open DB, as DB::GetSortedWalFiles and DB::GetCurrentWalFile describe
// them (RocksDB's names; "transaction log" is RocksDB's old word for the WAL).
//
// A WalFile is a description taken at the call: the file may grow (the current WAL) or be
// deleted (once every memtable it fed is flushed) afterwards, unless file deletions are
// disabled (DB::DisableFileDeletions).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shale/types.h"

namespace shale {

class WalFile;
using VectorWalPtr = std::vector<std::unique_ptr<WalFile>>;
using VectorLogPtr = VectorWalPtr;  // RocksDB's older name

// Where a WAL file lives. shale keeps no archive (it has no WAL_ttl_seconds or
// WAL_size_limit_MB): every file listed is kAliveLogFile, in the DB directory.
enum WalFileType { kArchivedLogFile = 0, kAliveLogFile = 1 };

class WalFile {
 public:
  WalFile() = default;
  virtual ~WalFile() = default;
  // The name relative to the DB directory, with a leading slash: "/000007.log".
  virtual std::string PathName() const = 0;
  // The file's number; a larger number is a later WAL.
  virtual uint64_t LogNumber() const = 0;
  virtual WalFileType Type() const = 0;
  // The sequence number of the file's first write batch: 0 for an empty file, and always 0
  // from GetCurrentWalFile (as RocksDB's, which does not read the file for it).
  virtual SequenceNumber StartSequence() const = 0;
  // The file's size in bytes when it was listed.
  virtual uint64_t SizeFileBytes() const = 0;
};
using LogFile = WalFile;  // RocksDB's older name

}  // namespace shale
