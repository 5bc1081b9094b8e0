// The backup directory's names and its meta files (include/shale/utilities/backup_engine.h
// draws the layout).
//
// A meta file is text, in RocksDB's schema 2 so that either engine reads the other's:
//   schema_version 2.1
//   <timestamp>
//   <sequence number>
//   metadata <app metadata in hex>        (only when there is some)
//   <number of files>
//   <file> crc32 <crc32c in decimal> size <bytes>     (one line per file)
// A file is named relative to the backup directory. Schema 1 (no version line, no sizes)
// is read too. Fields this reader does not know are skipped, unless their name starts
// with "ni::" (NotSupported), as RocksDB's reader does.
//
// Thread safety: pure functions, and WriteBackupMeta as thread-safe as the Env.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shale/env.h"
#include "shale/status.h"
#include "shale/utilities/backup_engine.h"

namespace shale {

inline constexpr char kBackupMetaDir[] = "meta";
inline constexpr char kBackupPrivateDir[] = "private";
inline constexpr char kBackupSharedDir[] = "shared";
inline constexpr char kBackupSharedChecksumDir[] = "shared_checksum";

struct BackupFile {
  // A schema-1 meta file records no sizes: Open takes them from the directory listing.
  static constexpr uint64_t kUnknownSize = UINT64_MAX;

  std::string name;  // relative to the backup directory
  uint64_t size = 0;
  uint32_t crc32c = 0;
};

struct BackupMeta {
  int64_t timestamp = 0;  // seconds since the epoch
  uint64_t sequence = 0;  // every write up to it is in the backup
  std::string app_metadata;
  std::vector<BackupFile> files;

  uint64_t TotalSize() const;
};

// "meta/<id>" and its staging name "meta/.<id>.tmp".
std::string BackupMetaName(BackupID id);
std::string BackupMetaTempName(BackupID id);
// "private/<id>".
std::string BackupPrivateDirName(BackupID id);
// The name of table file `number` under shared_checksum/: "<number>_<crc32c>_<size>.sst"
// with the number written as the DB writes it (six digits at least).
std::string SharedChecksumFileName(uint64_t number, uint32_t crc32c, uint64_t size);
// The name the DB gives the file a backup file holds ("shared_checksum/000012_7_9.sst" ->
// "000012.sst", "private/3/MANIFEST-000005" -> "MANIFEST-000005").
std::string DbFileNameOf(const std::string& backup_file);
// Whether name is a backup id written as Open lists them (decimal, no sign, no leading 0).
bool ParseBackupId(const std::string& name, BackupID* id);

// The meta file's text for meta, and back. Parse gives Corruption (naming `where`) for
// text that does not follow the format, NotSupported for a schema or field from a newer
// writer.
std::string EncodeBackupMeta(const BackupMeta& meta);
Status DecodeBackupMeta(const std::string& text, const std::string& where, BackupMeta* meta);

// Writes meta as backup_dir/meta/.<id>.tmp (synced when sync) and renames it to
// backup_dir/meta/<id>: the step that makes a backup exist.
Status WriteBackupMeta(Env* env, const std::string& backup_dir, BackupID id, const BackupMeta& meta,
                       bool sync);

}  // namespace shale
