// The public engines (include/shale/utilities/backup_engine.h) over BackupEngineImpl: the
// read calls both have, the write calls only the writable one has.
#include "shale/utilities/backup_engine.h"

#include <memory>

#include "utilities/backup/backup_engine_impl.h"

namespace shale {

namespace {

template <class Base>
class ReadCalls : public Base {
 public:
  ReadCalls(const BackupEngineOptions& options, Env* db_env, bool read_only)
      : impl_(options, db_env, read_only) {}

  using Base::GetBackupInfo;
  using Base::RestoreDBFromBackup;
  using Base::RestoreDBFromLatestBackup;

  Status GetLatestBackupInfo(BackupInfo* backup_info, bool include_file_details) const override {
    return impl_.GetLatestBackupInfo(backup_info, include_file_details);
  }
  Status GetBackupInfo(BackupID backup_id, BackupInfo* backup_info,
                       bool include_file_details) const override {
    return impl_.GetBackupInfo(backup_id, backup_info, include_file_details);
  }
  void GetBackupInfo(std::vector<BackupInfo>* backup_infos,
                     bool include_file_details) const override {
    impl_.GetBackupInfos(backup_infos, include_file_details);
  }
  void GetCorruptedBackups(std::vector<BackupID>* corrupt_backup_ids) const override {
    impl_.GetCorruptedBackups(corrupt_backup_ids);
  }
  Status RestoreDBFromBackup(const RestoreOptions& options, BackupID backup_id,
                             const std::string& db_dir, const std::string& wal_dir) const override {
    return impl_.Restore(options, /*latest=*/false, backup_id, db_dir, wal_dir);
  }
  Status RestoreDBFromLatestBackup(const RestoreOptions& options, const std::string& db_dir,
                                   const std::string& wal_dir) const override {
    return impl_.Restore(options, /*latest=*/true, 0, db_dir, wal_dir);
  }
  Status VerifyBackup(BackupID backup_id, bool verify_with_checksum) const override {
    return impl_.Verify(backup_id, verify_with_checksum);
  }

  Status Open() { return impl_.Open(); }

 protected:
  BackupEngineImpl impl_;
};

class WritableBackupEngine final : public ReadCalls<BackupEngine> {
 public:
  WritableBackupEngine(const BackupEngineOptions& options, Env* db_env)
      : ReadCalls(options, db_env, /*read_only=*/false) {}

  using BackupEngine::CreateNewBackup;
  using BackupEngine::CreateNewBackupWithMetadata;

  Status CreateNewBackupWithMetadata(const CreateBackupOptions& options, DB* db,
                                     const std::string& app_metadata,
                                     BackupID* new_backup_id) override {
    return impl_.CreateNewBackup(options, db, app_metadata, new_backup_id);
  }
  void StopBackup() override { impl_.StopBackup(); }
  Status GarbageCollect() override { return impl_.GarbageCollect(); }
  Status PurgeOldBackups(uint32_t num_backups_to_keep) override {
    return impl_.PurgeOldBackups(num_backups_to_keep);
  }
  Status DeleteBackup(BackupID backup_id) override { return impl_.DeleteBackup(backup_id); }
};

class ReadOnlyBackupEngine final : public ReadCalls<BackupEngineReadOnly> {
 public:
  ReadOnlyBackupEngine(const BackupEngineOptions& options, Env* db_env)
      : ReadCalls(options, db_env, /*read_only=*/true) {}
};

template <class Engine, class Interface>
Status OpenEngine(const BackupEngineOptions& options, Env* db_env, Interface** engine_ptr) {
  *engine_ptr = nullptr;
  if (db_env == nullptr) return Status::InvalidArgument("BackupEngine needs the DB's Env");
  auto engine = std::make_unique<Engine>(options, db_env);
  Status s = engine->Open();
  if (!s.ok()) return s;
  *engine_ptr = engine.release();
  return Status::OK();
}

}  // namespace

Status BackupEngine::Open(const BackupEngineOptions& options, Env* db_env,
                          BackupEngine** backup_engine_ptr) {
  return OpenEngine<WritableBackupEngine>(options, db_env, backup_engine_ptr);
}

Status BackupEngineReadOnly::Open(const BackupEngineOptions& options, Env* db_env,
                                  BackupEngineReadOnly** backup_engine_ptr) {
  if (options.destroy_old_data) {
    *backup_engine_ptr = nullptr;
    return Status::InvalidArgument("Can't destroy old data with ReadOnly BackupEngine");
  }
  return OpenEngine<ReadOnlyBackupEngine>(options, db_env, backup_engine_ptr);
}

}  // namespace shale
