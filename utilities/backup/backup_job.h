// BackupJob: the file work of one CreateNewBackup. It takes one consistent cut of the DB's
// files (db/live_files.h, the cut Checkpoint takes), copies into the backup directory what
// earlier backups do not already hold, and describes the result as a BackupMeta, which the
// engine then writes to make the backup exist. The job itself makes nothing visible.
//
// Where each file goes:
//   - table files, with share_table_files: shared_checksum/<n>_<crc32c>_<size>.sst (or
//     shared/<n>.sst without share_files_with_checksum). A name an earlier backup holds is
//     reused without a copy; a new one is copied to a ".tmp" name and renamed, so a shared
//     name only ever holds a whole file.
//   - everything else, and table files without share_table_files: private/<id>/, under the
//     DB's own names. The MANIFEST and the WALs are copied up to their lengths at the cut
//     (the newest WAL cut back to a whole record); CURRENT is written to name the cut's
//     MANIFEST (the DB's may already name a newer one). Without backup_log_files each WAL
//     is an empty file of its name.
// File deletions in the DB are disabled from before the cut until every copy is done, so
// that no file the cut names is deleted meanwhile.
//
// A table file's checksum and size decide its shared name. When an earlier backup holds a
// file of the same number and size, the file is read once to checksum it and copied only
// if the name differs; otherwise it is copied straight away, checksummed on the way.
//
// With options.sync every file written is synced, then the directories that received
// them, before Run returns OK.
//
// Thread safety: Run is called once, from one thread; the copies run on the pool.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "shale/env.h"
#include "shale/status.h"
#include "shale/utilities/backup_engine.h"
#include "util/thread_pool.h"
#include "utilities/backup/backup_copy.h"
#include "utilities/backup/backup_meta.h"

namespace shale {

// The shared files earlier backups name, by their name relative to the backup directory.
using SharedFileIndex = std::unordered_map<std::string, FileDigest>;

struct BackupJobContext {
  Env* db_env = nullptr;
  Env* backup_env = nullptr;
  const BackupEngineOptions* options = nullptr;
  ThreadPool* pool = nullptr;
  const std::atomic<bool>* stop = nullptr;  // StopBackup's flag
};

class BackupJob {
 public:
  // REQUIRES: private/<id> exists and is empty; existing outlives the job.
  BackupJob(const BackupJobContext& context, BackupID id, const SharedFileIndex* existing);

  // Copies db's files and fills meta->sequence and meta->files. On failure the files it
  // wrote are left for the engine's garbage collection.
  Status Run(DB* db, const CreateBackupOptions& options, BackupMeta* meta);

 private:
  struct Plan;
  Status CopyCut(DB* db, const CreateBackupOptions& options, BackupMeta* meta);
  Status SyncDirectories();

  const BackupJobContext context_;
  const BackupID id_;
  const SharedFileIndex* const existing_;
};

}  // namespace shale
