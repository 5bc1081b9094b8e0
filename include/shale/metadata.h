// The shape of an open DB's files, as DB::GetLiveFilesMetaData and
// DB::GetColumnFamilyMetaData describe it (RocksDB's structs, with the fields shale fills).
//
// Each struct is a copy taken under the DB mutex at the call: it does not change when later
// flushes and compactions do, and the files it names may be deleted afterwards unless file
// deletions are disabled (DB::DisableFileDeletions).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shale/types.h"

namespace shale {

// One live table (SST) file.
struct SstFileMetaData {
  // The file's name in its directory ("000012.sst"), and that directory (the DB's).
  std::string relative_filename;
  std::string directory;
  // RocksDB's older spellings of the two: "/000012.sst" and the directory.
  std::string name;
  std::string db_path;
  uint64_t file_number = 0;
  uint64_t size = 0;  // bytes
  SequenceNumber smallest_seqno = 0;
  SequenceNumber largest_seqno = 0;
  // The smallest and largest user keys in the file.
  std::string smallestkey;
  std::string largestkey;
  // The same bounds as internal keys (user key, then 8 bytes of sequence and type).
  std::string smallest;
  std::string largest;
  // Always 0: shale does not sample reads.
  uint64_t num_reads_sampled = 0;
  // Whether a running compaction reads the file.
  bool being_compacted = false;
  uint64_t num_entries = 0;
  uint64_t num_deletions = 0;
};

// A live table file, with where it sits.
struct LiveFileMetaData : SstFileMetaData {
  std::string column_family_name;
  int level = 0;
};

// One level of a column family: its files, L0's newest first, deeper levels by key.
struct LevelMetaData {
  LevelMetaData(int _level, uint64_t _size, std::vector<SstFileMetaData>&& _files)
      : level(_level), size(_size), files(std::move(_files)) {}
  const int level;
  const uint64_t size;  // the bytes of its files
  const std::vector<SstFileMetaData> files;
};

// A column family's tree: every level (empty ones too, up to num_levels).
struct ColumnFamilyMetaData {
  uint64_t size = 0;      // the bytes of all its files
  size_t file_count = 0;  // the number of its files
  std::string name;
  std::vector<LevelMetaData> levels;
};

}  // namespace shale
