// BackupEngine: backups of an open DB in a directory of their own, each restorable into an
// empty DB directory, as RocksDB's (utilities/backup_engine.h). Backups of one DB share the
// table files they have in common: a backup copies only what the earlier ones lack.
//
// The backup directory, as RocksDB lays it out (so that the tools that know it find their
// way):
//   meta/<id>                 one file per backup: its time, sequence number, metadata and
//                             files with their sizes and crc32c checksums. A backup exists
//                             when its meta file does: it is written as meta/.<id>.tmp and
//                             renamed into place once every file it names is durable.
//   shared_checksum/<n>_<crc32c>_<size>.sst
//                             table files shared between backups (share_table_files and
//                             share_files_with_checksum), one copy, kept while a backup
//                             names it.
//   shared/<n>.sst            the same without share_files_with_checksum (deprecated).
//   private/<id>/             everything else of one backup: MANIFEST, CURRENT, OPTIONS and
//                             the WALs (and the table files without share_table_files).
// A backup cut short (a crash, an error, StopBackup) leaves files no meta file names; the
// next CreateNewBackup, DeleteBackup, PurgeOldBackups or GarbageCollect of a writable
// engine deletes them. Older backups are never touched by a backup that fails.
//
// Thread safety: every method may be called from any thread. Reads (GetBackupInfo,
// VerifyBackup, Restore*) run concurrently with each other; a write (CreateNewBackup,
// DeleteBackup, PurgeOldBackups, GarbageCollect) waits for them and they for it. StopBackup
// never waits. One engine per backup directory at a time is the supported use; a read-only
// engine opened beside a writable one sees the backups as they were at its Open.
//
// Statuses are RocksDB's, returned as Status (shale has no IOStatus).
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "shale/env.h"
#include "shale/status.h"

namespace shale {

class DB;

struct BackupEngineOptions {
  // Where the backups live (created if missing). Must not be the DB directory itself.
  // Required.
  std::string backup_dir;

  // The Env for the backup directory's files; nullptr: the DB's Env (the one passed to
  // Open). Default: nullptr.
  Env* backup_env;

  // Share table files between backups, copying only the ones earlier backups lack.
  // false: each backup has its own copy of every file under private/<id>/.
  // Default: true.
  bool share_table_files;

  // Info and error messages go here when not nullptr. Default: nullptr.
  Logger* info_log;

  // Sync every file written and its directory before a backup or a restore is reported
  // done, so that a machine crash leaves it whole or absent. false: faster, and a crash
  // may leave a backup that reads as corrupted. Default: true.
  bool sync;

  // Delete every backup in backup_dir at Open. Default: false.
  bool destroy_old_data;

  // Back up the live WALs too. Without them a backup holds only what the table files hold
  // (use flush_before_backup, or keep the WALs yourself and restore with keep_log_files);
  // each WAL the DB needs is then backed up as an empty file, since shale's recovery
  // refuses a DB whose MANIFEST names a missing WAL. Default: true.
  bool backup_log_files;

  // Threads that copy and checksum files, at least 1. Default: 1.
  int max_background_operations = 1;

  // With share_table_files: name shared table files by their number, crc32c and size
  // (shared_checksum/), so that two different files with one number (from DBs with a
  // divergent history, say after a restore of an older backup) are both kept. false
  // (shared/<n>.sst) is deprecated, as in RocksDB: a second file with a number already
  // backed up is taken for the first (or refused as Corruption when their sizes differ).
  // Default: true.
  bool share_files_with_checksum;

  // CreateBackupOptions::progress_callback is called each time this many more bytes have
  // been copied. Default: 4 MiB.
  uint64_t callback_trigger_interval_size;

  // BackupEngineReadOnly::Open loads at most this many of the newest good backups (the
  // rest are not listed). A writable engine loads all of them. Default: INT_MAX.
  int max_valid_backups_to_open;

  explicit BackupEngineOptions(const std::string& _backup_dir, Env* _backup_env = nullptr,
                               bool _share_table_files = true, Logger* _info_log = nullptr,
                               bool _sync = true, bool _destroy_old_data = false,
                               bool _backup_log_files = true)
      : backup_dir(_backup_dir),
        backup_env(_backup_env),
        share_table_files(_share_table_files),
        info_log(_info_log),
        sync(_sync),
        destroy_old_data(_destroy_old_data),
        backup_log_files(_backup_log_files),
        share_files_with_checksum(true),
        callback_trigger_interval_size(4 * 1024 * 1024),
        max_valid_backups_to_open(INT_MAX) {}
};

struct CreateBackupOptions {
  // Flush every column family before the files are taken (always done with allow_2pc).
  // false: the WALs carry what the memtables hold. Default: false.
  bool flush_before_backup = false;

  // Called every callback_trigger_interval_size bytes copied, from the copying threads
  // (one call at a time). An exception it throws ends the backup with Aborted.
  std::function<void()> progress_callback = {};
};

struct RestoreOptions {
  // Keep the WAL files already in wal_dir (and db_dir) instead of deleting them before the
  // restore; meant for backups made without backup_log_files. Default: false.
  bool keep_log_files;

  explicit RestoreOptions(bool _keep_log_files = false) : keep_log_files(_keep_log_files) {}
};

using BackupID = uint32_t;

// One file of a backup, as GetBackupInfo(..., include_file_details=true) lists it.
struct BackupFileInfo {
  std::string relative_filename;  // relative to backup_dir, e.g. "private/3/CURRENT"
  std::string directory;          // backup_dir
  uint64_t file_number = 0;       // the DB file's number (0 for CURRENT)
  uint64_t size = 0;
};

struct BackupInfo {
  BackupID backup_id = 0U;
  // Creation time, seconds since the epoch.
  int64_t timestamp = 0;
  // The bytes of its files (shared ones counted in every backup naming them).
  uint64_t size = 0U;
  uint32_t number_files = 0U;
  // CreateNewBackupWithMetadata's app_metadata.
  std::string app_metadata;
  // Each file, with include_file_details.
  std::vector<BackupFileInfo> file_details;

  BackupInfo() {}
  explicit BackupInfo(BackupID _backup_id, int64_t _timestamp, uint64_t _size,
                      uint32_t _number_files, const std::string& _app_metadata)
      : backup_id(_backup_id),
        timestamp(_timestamp),
        size(_size),
        number_files(_number_files),
        app_metadata(_app_metadata) {}
};

// What both kinds of engine can do. Reads of the backup directory: several at once.
class BackupEngineReadOnlyBase {
 public:
  virtual ~BackupEngineReadOnlyBase() {}

  // The newest good backup; NotFound if there is none.
  virtual Status GetLatestBackupInfo(BackupInfo* backup_info,
                                     bool include_file_details = false) const = 0;
  // One backup; NotFound if there is no such backup, Corruption if it is corrupted.
  virtual Status GetBackupInfo(BackupID backup_id, BackupInfo* backup_info,
                               bool include_file_details = false) const = 0;
  // Every good backup, oldest first.
  virtual void GetBackupInfo(std::vector<BackupInfo>* backup_infos,
                             bool include_file_details = false) const = 0;
  // The backups found corrupted at Open (a meta file that does not parse, or names a file
  // that is missing or has another size).
  virtual void GetCorruptedBackups(std::vector<BackupID>* corrupt_backup_ids) const = 0;

  // Restores backup_id into db_dir (WALs into wal_dir), both created if missing. Every
  // file in them is deleted first, as RocksDB's restore does (the WALs are kept with
  // keep_log_files). Each file's crc32c is checked as it is copied: a damaged backup file
  // gives Corruption and leaves no CURRENT, so nothing half-restored opens. CURRENT is
  // written last, by a rename. NotFound for an unknown backup, the backup's Corruption for
  // a corrupted one.
  virtual Status RestoreDBFromBackup(const RestoreOptions& options, BackupID backup_id,
                                     const std::string& db_dir,
                                     const std::string& wal_dir) const = 0;
  virtual Status RestoreDBFromBackup(BackupID backup_id, const std::string& db_dir,
                                     const std::string& wal_dir,
                                     const RestoreOptions& options = RestoreOptions()) const {
    return RestoreDBFromBackup(options, backup_id, db_dir, wal_dir);
  }
  // The same for the newest good backup.
  virtual Status RestoreDBFromLatestBackup(const RestoreOptions& options, const std::string& db_dir,
                                           const std::string& wal_dir) const = 0;
  virtual Status RestoreDBFromLatestBackup(const std::string& db_dir, const std::string& wal_dir,
                                           const RestoreOptions& options = RestoreOptions()) const {
    return RestoreDBFromLatestBackup(options, db_dir, wal_dir);
  }

  // Checks that every file of backup_id exists with the size recorded (NotFound "File
  // missing", Corruption on a size mismatch) and, with verify_with_checksum, that its
  // crc32c is the one recorded (Corruption).
  virtual Status VerifyBackup(BackupID backup_id, bool verify_with_checksum = false) const = 0;
};

// What only a writable engine can do: add backups and collect garbage.
class BackupEngineAppendOnlyBase {
 public:
  virtual ~BackupEngineAppendOnlyBase() {}

  // Backs up db (a DB from DB::Open, or a StackableDB over one), which goes on serving
  // reads and writes meanwhile: the backup holds every write acknowledged before the call.
  // app_metadata (at most 1 MiB, else InvalidArgument) is kept with it. On success the new
  // backup's id goes to *new_backup_id when not null. Incomplete after StopBackup.
  virtual Status CreateNewBackupWithMetadata(const CreateBackupOptions& options, DB* db,
                                             const std::string& app_metadata,
                                             BackupID* new_backup_id = nullptr) = 0;
  virtual Status CreateNewBackupWithMetadata(
      DB* db, const std::string& app_metadata, bool flush_before_backup = false,
      std::function<void()> progress_callback = []() {}) {
    CreateBackupOptions options;
    options.flush_before_backup = flush_before_backup;
    options.progress_callback = progress_callback;
    return CreateNewBackupWithMetadata(options, db, app_metadata);
  }
  virtual Status CreateNewBackup(const CreateBackupOptions& options, DB* db,
                                 BackupID* new_backup_id = nullptr) {
    return CreateNewBackupWithMetadata(options, db, "", new_backup_id);
  }
  virtual Status CreateNewBackup(
      DB* db, bool flush_before_backup = false, std::function<void()> progress_callback = []() {}) {
    CreateBackupOptions options;
    options.flush_before_backup = flush_before_backup;
    options.progress_callback = progress_callback;
    return CreateNewBackup(options, db);
  }

  // Makes the backup under way (and every later one of this engine) stop as soon as it
  // can with Incomplete; returns at once. The stopped backup deletes what it wrote before
  // it returns (what a failure there leaves goes with the next engine's first write).
  virtual void StopBackup() = 0;

  // Deletes every file in the backup directory no backup names: what a backup or a
  // deletion cut short left. Files of corrupted backups are not protected.
  virtual Status GarbageCollect() = 0;
};

class BackupEngine : public BackupEngineReadOnlyBase, public BackupEngineAppendOnlyBase {
 public:
  virtual ~BackupEngine() {}

  // Opens (creating its directories) the backups in options.backup_dir. db_env is the
  // Env of the DBs backed up and restored. The options must be those every engine on this
  // directory used. A backup that reads as corrupted does not fail Open (see
  // GetCorruptedBackups); an I/O error does.
  static Status Open(const BackupEngineOptions& options, Env* db_env,
                     BackupEngine** backup_engine_ptr);
  static Status Open(Env* db_env, const BackupEngineOptions& options,
                     BackupEngine** backup_engine_ptr) {
    return BackupEngine::Open(options, db_env, backup_engine_ptr);
  }

  // Deletes the oldest good backups until num_backups_to_keep remain.
  virtual Status PurgeOldBackups(uint32_t num_backups_to_keep) = 0;
  // Deletes one backup (good or corrupted): its meta file first, then the files no other
  // backup names. NotFound if there is no such backup.
  virtual Status DeleteBackup(BackupID backup_id) = 0;
};

// An engine that only reads the backup directory (which must exist: NotFound otherwise).
// destroy_old_data gives InvalidArgument.
class BackupEngineReadOnly : public BackupEngineReadOnlyBase {
 public:
  virtual ~BackupEngineReadOnly() {}

  static Status Open(const BackupEngineOptions& options, Env* db_env,
                     BackupEngineReadOnly** backup_engine_ptr);
  static Status Open(Env* db_env, const BackupEngineOptions& options,
                     BackupEngineReadOnly** backup_engine_ptr) {
    return BackupEngineReadOnly::Open(options, db_env, backup_engine_ptr);
  }
};

}  // namespace shale
