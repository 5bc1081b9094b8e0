// BackupEngineImpl: what both public engines (include/shale/utilities/backup_engine.h) are
// made of: the backups of one directory as its meta files describe them, and the
// reference counts that decide when a file may go.
//
// State, loaded at Open and kept in step with the directory by every write:
//   backups_   the good backups, by id, each with its meta file's contents;
//   corrupt_   the backups whose meta file did not load, with why;
//   files_     every file a good backup names, with how many name it. A file leaves the
//              directory only when its count falls to zero, after the meta files that
//              named it are gone.
// Order of a write, so that a crash at any point leaves every backup that existed before
// it whole: a new backup's files first (durable), then its meta file (renamed into
// place); a deletion's meta file first, then the files it alone named. What a crash
// leaves between the two steps is named by no meta file and goes at the next garbage
// collection (the first write of an engine opened later runs one).
//
// Thread safety: mu_ is held shared by reads and exclusive by writes, for their whole
// length (a restore reads the meta it restores while no write can change it). stop_ is
// read by running copies without the lock.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "shale/utilities/backup_engine.h"
#include "util/mutexlock.h"
#include "util/thread_pool.h"
#include "utilities/backup/backup_job.h"
#include "utilities/backup/backup_meta.h"
#include "utilities/backup/backup_restore.h"

namespace shale {

class BackupEngineImpl {
 public:
  BackupEngineImpl(const BackupEngineOptions& options, Env* db_env, bool read_only);
  ~BackupEngineImpl();

  // Creates the directories (writable engines), loads the meta files, or with
  // destroy_old_data deletes every backup.
  Status Open() EXCLUDES(mu_);

  // ---- Reads.
  Status GetLatestBackupInfo(BackupInfo* info, bool details) const EXCLUDES(mu_);
  Status GetBackupInfo(BackupID id, BackupInfo* info, bool details) const EXCLUDES(mu_);
  void GetBackupInfos(std::vector<BackupInfo>* infos, bool details) const EXCLUDES(mu_);
  void GetCorruptedBackups(std::vector<BackupID>* ids) const EXCLUDES(mu_);
  // latest: restore the newest good backup, ignoring id.
  Status Restore(const RestoreOptions& options, bool latest, BackupID id, const std::string& db_dir,
                 const std::string& wal_dir) const EXCLUDES(mu_);
  Status Verify(BackupID id, bool verify_with_checksum) const EXCLUDES(mu_);

  // ---- Writes. REQUIRES: a writable engine.
  Status CreateNewBackup(const CreateBackupOptions& options, DB* db,
                         const std::string& app_metadata, BackupID* new_id) EXCLUDES(mu_);
  Status DeleteBackup(BackupID id) EXCLUDES(mu_);
  Status PurgeOldBackups(uint32_t num_backups_to_keep) EXCLUDES(mu_);
  Status GarbageCollect() EXCLUDES(mu_);
  void StopBackup() { stop_.store(true, std::memory_order_relaxed); }

 private:
  struct FileRef {
    FileDigest digest;
    int refs = 0;
  };

  std::string Path(const std::string& relative) const {
    return options_.backup_dir + "/" + relative;
  }
  BackupReadContext ReadContext() const;
  // Loads meta/<id>, checking each file it names against sizes (path -> bytes, from the
  // directory listings). Corruption or NotSupported mark the backup corrupted.
  Status LoadBackup(BackupID id, const std::unordered_map<std::string, uint64_t>& sizes,
                    BackupMeta* meta) const;
  // Adds meta's files to files_ (a file named twice must agree in size and checksum).
  Status Reference(const BackupMeta& meta) REQUIRES(mu_);
  // Deletes one backup without collecting garbage afterwards.
  Status DeleteBackupLocked(BackupID id) REQUIRES(mu_);
  Status GarbageCollectLocked() REQUIRES(mu_);
  // Deletes the files of a private directory and the directory.
  Status DeleteDirectory(const std::string& dir) const;
  void FillInfo(BackupID id, const BackupMeta& meta, bool details, BackupInfo* info) const;

  BackupEngineOptions options_;
  Env* const db_env_;
  Env* const backup_env_;
  const bool read_only_;
  std::atomic<bool> stop_{false};
  std::unique_ptr<ThreadPool> pool_;

  mutable SharedMutex mu_;
  std::map<BackupID, BackupMeta> backups_ GUARDED_BY(mu_);
  std::map<BackupID, Status> corrupt_ GUARDED_BY(mu_);
  std::unordered_map<std::string, FileRef> files_ GUARDED_BY(mu_);
  // The highest id a meta file had at Open or a backup took since; ids are not reused
  // while the engine is open.
  BackupID latest_backup_id_ GUARDED_BY(mu_) = 0;
  // Files no backup names may be present (a crash or an error before this engine): the
  // next write collects them.
  bool might_need_gc_ GUARDED_BY(mu_) = false;
};

}  // namespace shale
