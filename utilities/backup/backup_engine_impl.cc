#include "utilities/backup/backup_engine_impl.h"

#include <algorithm>
#include <cinttypes>

#include "db/filename.h"
#include "util/logging.h"

namespace shale {

namespace {

constexpr size_t kMaxAppMetadataSize = 1024 * 1024;

bool IsShared(const std::string& name) {
  return name.rfind(std::string(kBackupSharedDir) + "/", 0) == 0 ||
         name.rfind(std::string(kBackupSharedChecksumDir) + "/", 0) == 0;
}

}  // namespace

BackupEngineImpl::BackupEngineImpl(const BackupEngineOptions& options, Env* db_env, bool read_only)
    : options_(options),
      db_env_(db_env),
      backup_env_(options.backup_env != nullptr ? options.backup_env : db_env),
      read_only_(read_only) {
  while (options_.backup_dir.size() > 1 && options_.backup_dir.back() == '/') {
    options_.backup_dir.pop_back();
  }
  // As RocksDB's: sharing by checksum means nothing without sharing.
  if (!options_.share_table_files) options_.share_files_with_checksum = false;
  if (!read_only_) options_.max_valid_backups_to_open = INT_MAX;
}

BackupEngineImpl::~BackupEngineImpl() { pool_.reset(); }

BackupReadContext BackupEngineImpl::ReadContext() const {
  BackupReadContext context;
  context.db_env = db_env_;
  context.backup_env = backup_env_;
  context.backup_dir = options_.backup_dir;
  context.sync = options_.sync;
  context.pool = pool_.get();
  return context;
}

Status BackupEngineImpl::Open() {
  WriterMutexLock l(&mu_);
  if (options_.backup_dir.empty()) {
    return Status::InvalidArgument("BackupEngineOptions::backup_dir is empty");
  }
  pool_ = std::make_unique<ThreadPool>(std::max(1, options_.max_background_operations),
                                       "backup_engine");
  const std::string meta_dir = Path(kBackupMetaDir);
  if (!read_only_) {
    might_need_gc_ = true;  // a crash before this engine may have left files behind
    std::vector<std::string> dirs = {options_.backup_dir, Path(kBackupPrivateDir), meta_dir};
    if (options_.share_table_files) {
      dirs.push_back(
          Path(options_.share_files_with_checksum ? kBackupSharedChecksumDir : kBackupSharedDir));
    }
    for (const std::string& dir : dirs) {
      Status s = backup_env_->CreateDirIfMissing(dir);
      if (!s.ok()) return s;
    }
  }
  std::vector<std::string> children;
  Status s = backup_env_->GetChildren(meta_dir, &children);
  if (!s.ok()) {
    return backup_env_->FileExists(meta_dir).IsNotFound()
               ? Status::NotFound(meta_dir + " is missing")
               : s;
  }
  std::vector<BackupID> ids;
  for (const std::string& child : children) {
    BackupID id = 0;
    if (ParseBackupId(child, &id)) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  if (!ids.empty()) latest_backup_id_ = ids.back();

  if (options_.destroy_old_data) {
    Info(options_.info_log, "Backup engine: deleting every backup (destroy_old_data)");
    for (BackupID id : ids) {
      s = backup_env_->DeleteFile(Path(BackupMetaName(id)));
      if (!s.ok()) return s;
    }
    latest_backup_id_ = 0;
    return GarbageCollectLocked();
  }

  // The sizes of the files on disk, by name relative to the backup directory.
  std::unordered_map<std::string, uint64_t> sizes;
  auto list = [&](const std::string& relative_dir) -> Status {
    std::vector<std::string> names;
    Status st = backup_env_->GetChildren(Path(relative_dir), &names);
    if (!st.ok())
      return backup_env_->FileExists(Path(relative_dir)).IsNotFound() ? Status::OK() : st;
    for (const std::string& name : names) {
      const std::string relative = relative_dir + "/" + name;
      uint64_t size = 0;
      if (backup_env_->GetFileSize(Path(relative), &size).ok()) sizes[relative] = size;
    }
    return Status::OK();
  };
  s = list(kBackupSharedDir);
  if (s.ok()) s = list(kBackupSharedChecksumDir);
  if (!s.ok()) return s;
  int to_open = options_.max_valid_backups_to_open;
  for (auto it = ids.rbegin(); it != ids.rend() && to_open > 0; ++it) {
    BackupMeta meta;
    s = list(BackupPrivateDirName(*it));
    if (s.ok()) s = LoadBackup(*it, sizes, &meta);
    if (s.ok()) s = Reference(meta);
    if (s.IsCorruption() || s.IsNotSupported()) {
      Warn(options_.info_log, "Backup %" PRIu32 " corrupted -- %s", *it, s.ToString().c_str());
      corrupt_.emplace(*it, s);
      continue;
    }
    if (!s.ok()) return s;
    backups_.emplace(*it, std::move(meta));
    to_open--;
  }
  Info(options_.info_log, "Backup engine opened: %zu backups, %zu corrupted, latest %" PRIu32,
       backups_.size(), corrupt_.size(), latest_backup_id_);
  return Status::OK();
}

Status BackupEngineImpl::LoadBackup(BackupID id,
                                    const std::unordered_map<std::string, uint64_t>& sizes,
                                    BackupMeta* meta) const {
  const std::string path = Path(BackupMetaName(id));
  std::string text;
  Status s = ReadFileToString(backup_env_, path, &text);
  if (s.ok()) s = DecodeBackupMeta(text, path, meta);
  if (!s.ok()) return s;
  for (BackupFile& file : meta->files) {
    auto it = sizes.find(file.name);
    if (it == sizes.end()) {
      return Status::Corruption("Pathname in meta file not found on disk: " + Path(file.name));
    }
    if (file.size == BackupFile::kUnknownSize) file.size = it->second;
    if (file.size != it->second) {
      return Status::Corruption("For file " + file.name + " expected size " +
                                std::to_string(file.size) + " but found size " +
                                std::to_string(it->second));
    }
  }
  return Status::OK();
}

Status BackupEngineImpl::Reference(const BackupMeta& meta) {
  for (const BackupFile& file : meta.files) {
    auto it = files_.find(file.name);
    if (it != files_.end() &&
        (it->second.digest.size != file.size || it->second.digest.crc32c != file.crc32c)) {
      return Status::Corruption("Backups disagree on the size or checksum of " + file.name);
    }
  }
  for (const BackupFile& file : meta.files) {
    FileRef& ref = files_[file.name];
    ref.digest = FileDigest{file.size, file.crc32c};
    ref.refs++;
  }
  return Status::OK();
}

void BackupEngineImpl::FillInfo(BackupID id, const BackupMeta& meta, bool details,
                                BackupInfo* info) const {
  *info = BackupInfo(id, meta.timestamp, meta.TotalSize(), static_cast<uint32_t>(meta.files.size()),
                     meta.app_metadata);
  if (!details) return;
  for (const BackupFile& file : meta.files) {
    BackupFileInfo& detail = info->file_details.emplace_back();
    detail.relative_filename = file.name;
    detail.directory = options_.backup_dir;
    detail.size = file.size;
    FileType type;
    if (!ParseFileName(DbFileNameOf(file.name), &detail.file_number, &type)) detail.file_number = 0;
  }
}

Status BackupEngineImpl::GetLatestBackupInfo(BackupInfo* info, bool details) const {
  ReaderMutexLock l(&mu_);
  if (backups_.empty()) return Status::NotFound("Backup not found");
  FillInfo(backups_.rbegin()->first, backups_.rbegin()->second, details, info);
  return Status::OK();
}

Status BackupEngineImpl::GetBackupInfo(BackupID id, BackupInfo* info, bool details) const {
  ReaderMutexLock l(&mu_);
  auto corrupt = corrupt_.find(id);
  if (corrupt != corrupt_.end()) return Status::Corruption(corrupt->second.ToString());
  auto it = backups_.find(id);
  if (it == backups_.end()) return Status::NotFound("Backup not found");
  FillInfo(id, it->second, details, info);
  return Status::OK();
}

void BackupEngineImpl::GetBackupInfos(std::vector<BackupInfo>* infos, bool details) const {
  ReaderMutexLock l(&mu_);
  infos->clear();
  for (const auto& [id, meta] : backups_) FillInfo(id, meta, details, &infos->emplace_back());
}

void BackupEngineImpl::GetCorruptedBackups(std::vector<BackupID>* ids) const {
  ReaderMutexLock l(&mu_);
  ids->clear();
  for (const auto& entry : corrupt_) ids->push_back(entry.first);
}

Status BackupEngineImpl::Restore(const RestoreOptions& options, bool latest, BackupID id,
                                 const std::string& db_dir, const std::string& wal_dir) const {
  ReaderMutexLock l(&mu_);
  if (latest) {
    if (backups_.empty()) return Status::NotFound("Backup not found");
    id = backups_.rbegin()->first;
  }
  auto corrupt = corrupt_.find(id);
  if (corrupt != corrupt_.end()) return corrupt->second;
  auto it = backups_.find(id);
  if (it == backups_.end()) return Status::NotFound("Backup not found");
  Info(options_.info_log, "Restoring backup %" PRIu32 " to %s", id, db_dir.c_str());
  Status s = RestoreBackupFiles(ReadContext(), it->second, options, db_dir, wal_dir);
  Info(options_.info_log, "Restoring backup %" PRIu32 " done -- %s", id, s.ToString().c_str());
  return s;
}

Status BackupEngineImpl::Verify(BackupID id, bool verify_with_checksum) const {
  ReaderMutexLock l(&mu_);
  auto corrupt = corrupt_.find(id);
  if (corrupt != corrupt_.end()) return corrupt->second;
  auto it = backups_.find(id);
  if (it == backups_.end()) return Status::NotFound();
  return VerifyBackupFiles(ReadContext(), it->second, verify_with_checksum);
}

Status BackupEngineImpl::CreateNewBackup(const CreateBackupOptions& options, DB* db,
                                         const std::string& app_metadata, BackupID* new_id) {
  if (stop_.load(std::memory_order_relaxed)) return Status::Incomplete("Backup stopped");
  if (app_metadata.size() > kMaxAppMetadataSize) {
    return Status::InvalidArgument("App metadata too large");
  }
  if (db == nullptr) return Status::InvalidArgument("no DB to back up");
  WriterMutexLock l(&mu_);
  if (latest_backup_id_ == UINT32_MAX) return Status::NotSupported("No backup id left");
  const BackupID id = latest_backup_id_ + 1;
  const std::string private_dir = Path(BackupPrivateDirName(id));
  if (might_need_gc_ || backup_env_->FileExists(private_dir).ok()) {
    // A failure here matters only if it left the new backup's directory behind.
    GarbageCollectLocked().PermitUncheckedError();
  }
  Status s = backup_env_->CreateDir(private_dir);
  if (!s.ok()) return s;

  const uint64_t start = backup_env_->NowMicros();
  BackupMeta meta;
  meta.timestamp = static_cast<int64_t>(db_env_->NowMicros() / 1000000);
  meta.app_metadata = app_metadata;
  SharedFileIndex existing;
  for (const auto& [name, ref] : files_) {
    if (IsShared(name)) existing.emplace(name, ref.digest);
  }
  BackupJobContext context;
  context.db_env = db_env_;
  context.backup_env = backup_env_;
  context.options = &options_;
  context.pool = pool_.get();
  context.stop = &stop_;
  s = BackupJob(context, id, &existing).Run(db, options, &meta);
  if (s.ok()) s = WriteBackupMeta(backup_env_, options_.backup_dir, id, meta, options_.sync);
  if (s.ok() && options_.sync) {
    s = SyncDirectory(backup_env_, Path(kBackupMetaDir));
    if (s.ok()) s = SyncDirectory(backup_env_, Path(kBackupPrivateDir));
    if (s.ok()) s = SyncDirectory(backup_env_, options_.backup_dir);
  }
  if (s.ok()) s = Reference(meta);
  if (!s.ok()) {
    Warn(options_.info_log, "Backup %" PRIu32 " failed -- %s", id, s.ToString().c_str());
    backup_env_->DeleteFile(Path(BackupMetaName(id))).PermitUncheckedError();
    might_need_gc_ = true;
    GarbageCollectLocked().PermitUncheckedError();
    return s;
  }
  latest_backup_id_ = id;
  Info(options_.info_log,
       "Backup %" PRIu32 " done: %zu files, %" PRIu64 " bytes, %" PRIu64 " microseconds", id,
       meta.files.size(), meta.TotalSize(), backup_env_->NowMicros() - start);
  backups_.emplace(id, std::move(meta));
  if (new_id != nullptr) *new_id = id;
  return Status::OK();
}

Status BackupEngineImpl::DeleteBackup(BackupID id) {
  WriterMutexLock l(&mu_);
  Status s = DeleteBackupLocked(id);
  if (might_need_gc_) {
    Status collected = GarbageCollectLocked();
    if (s.ok()) s = collected;
  }
  return s;
}

Status BackupEngineImpl::PurgeOldBackups(uint32_t num_backups_to_keep) {
  WriterMutexLock l(&mu_);
  Status overall;
  std::vector<BackupID> to_delete;
  for (const auto& entry : backups_) {
    if (backups_.size() - to_delete.size() <= num_backups_to_keep) break;
    to_delete.push_back(entry.first);
  }
  for (BackupID id : to_delete) {
    Status s = DeleteBackupLocked(id);
    if (overall.ok()) overall = s;
  }
  if (might_need_gc_) {
    Status s = GarbageCollectLocked();
    if (overall.ok()) overall = s;
  }
  return overall;
}

Status BackupEngineImpl::GarbageCollect() {
  WriterMutexLock l(&mu_);
  return GarbageCollectLocked();
}

Status BackupEngineImpl::DeleteBackupLocked(BackupID id) {
  auto it = backups_.find(id);
  auto corrupt = corrupt_.find(id);
  if (it == backups_.end() && corrupt == corrupt_.end()) {
    return Status::NotFound("Backup not found");
  }
  // The meta file first: once it is gone, no backup names what follows.
  Status s = backup_env_->DeleteFile(Path(BackupMetaName(id)));
  if (!s.ok() && !s.IsNotFound()) return s;
  if (options_.sync) {
    s = SyncDirectory(backup_env_, Path(kBackupMetaDir));
    if (!s.ok()) return s;
  }
  Info(options_.info_log, "Deleted backup %" PRIu32, id);
  if (it == backups_.end()) {
    corrupt_.erase(corrupt);
    might_need_gc_ = true;  // its files were never counted
  } else {
    for (const BackupFile& file : it->second.files) {
      auto ref = files_.find(file.name);
      if (ref == files_.end() || --ref->second.refs > 0) continue;
      files_.erase(ref);
      if (!backup_env_->DeleteFile(Path(file.name)).ok()) might_need_gc_ = true;
    }
    backups_.erase(it);
  }
  if (!backup_env_->DeleteDir(Path(BackupPrivateDirName(id))).ok()) might_need_gc_ = true;
  return Status::OK();
}

Status BackupEngineImpl::DeleteDirectory(const std::string& dir) const {
  std::vector<std::string> children;
  Status s = backup_env_->GetChildren(dir, &children);
  for (const std::string& child : children) {
    Status deleted = backup_env_->DeleteFile(dir + "/" + child);
    if (s.ok()) s = deleted;
  }
  Status removed = backup_env_->DeleteDir(dir);
  return s.ok() ? removed : s;
}

Status BackupEngineImpl::GarbageCollectLocked() {
  Status overall;  // the first failure; any failure leaves garbage for the next time
  auto note = [&overall](const Status& s) {
    if (!s.ok() && overall.ok()) overall = s;
  };
  for (const char* dir : {kBackupSharedDir, kBackupSharedChecksumDir}) {
    if (backup_env_->FileExists(Path(dir)).IsNotFound()) continue;
    std::vector<std::string> children;
    Status s = backup_env_->GetChildren(Path(dir), &children);
    note(s);
    for (const std::string& child : children) {
      const std::string name = std::string(dir) + "/" + child;
      if (files_.count(name) > 0) continue;
      note(backup_env_->DeleteFile(Path(name)));
    }
  }
  std::vector<std::string> children;
  note(backup_env_->GetChildren(Path(kBackupPrivateDir), &children));
  for (const std::string& child : children) {
    BackupID id = 0;
    if (ParseBackupId(child, &id) && backups_.count(id) > 0) continue;
    note(DeleteDirectory(Path(std::string(kBackupPrivateDir) + "/" + child)));
  }
  // Meta files written but never renamed into place.
  children.clear();
  note(backup_env_->GetChildren(Path(kBackupMetaDir), &children));
  for (const std::string& child : children) {
    BackupID id = 0;
    if (!ParseBackupId(child, &id))
      note(backup_env_->DeleteFile(Path(std::string(kBackupMetaDir) + "/" + child)));
  }
  might_need_gc_ = !overall.ok();
  return overall;
}

}  // namespace shale
