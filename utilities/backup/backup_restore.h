// Reading a backup back: its restore into a DB directory, and its verification in place.
// Both trust nothing but the meta file: every file's size and crc32c are checked against
// it, so that a damaged backup is reported (Corruption, naming the file), never restored.
//
// A restore, in order:
//   1. db_dir and wal_dir are created if missing; every file in them (and WALs too unless
//      keep_log_files) is deleted, as RocksDB's restore does, so no file of another DB is
//      mixed with the backup's.
//   2. Each file is copied to its DB name (WALs into wal_dir), checksummed on the way;
//      CURRENT is copied as CURRENT.tmp.
//   3. With sync, the files and the directories are synced; then CURRENT.tmp is renamed to
//      CURRENT (and db_dir synced again). Until that rename the directory holds no DB, so a
//      restore that fails or is cut short never leaves a DB that opens half restored.
//
// Thread safety: as thread-safe as the Envs; the copies run on the pool.
#pragma once

#include <string>

#include "shale/env.h"
#include "shale/status.h"
#include "shale/utilities/backup_engine.h"
#include "util/thread_pool.h"
#include "utilities/backup/backup_meta.h"

namespace shale {

struct BackupReadContext {
  Env* db_env = nullptr;
  Env* backup_env = nullptr;
  std::string backup_dir;
  bool sync = true;
  ThreadPool* pool = nullptr;
};

Status RestoreBackupFiles(const BackupReadContext& context, const BackupMeta& meta,
                          const RestoreOptions& options, const std::string& db_dir,
                          const std::string& wal_dir);

// NotFound "File missing: <path>" for a file that is gone, Corruption for a size (or, with
// verify_with_checksum, crc32c) that is not the one recorded.
Status VerifyBackupFiles(const BackupReadContext& context, const BackupMeta& meta,
                         bool verify_with_checksum);

}  // namespace shale
