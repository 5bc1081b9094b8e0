#include "utilities/backup/backup_restore.h"

#include <cinttypes>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "db/filename.h"
#include "utilities/backup/backup_copy.h"

namespace shale {

namespace {

std::string Hex(uint32_t crc) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%08" PRIX32, crc);
  return buf;
}

// Deletes the files of dir (its subdirectories stay), keeping the WALs when keep_wals.
// Errors are ignored, as RocksDB's restore ignores them: a file that stays is overwritten
// or, being no file of the backup's, harmless to the restored DB.
void DeleteChildren(Env* env, const std::string& dir, bool keep_wals) {
  std::vector<std::string> children;
  if (!env->GetChildren(dir, &children).ok()) return;
  for (const std::string& child : children) {
    if (child == "." || child == "..") continue;
    uint64_t number = 0;
    FileType type;
    if (keep_wals && ParseFileName(child, &number, &type) && type == kWalFile) continue;
    env->DeleteFile(dir + "/" + child).PermitUncheckedError();
  }
}

Status Mismatch(const std::string& what, const std::string& path, const BackupFile& file,
                const FileDigest& found) {
  if (found.size != file.size) {
    return Status::Corruption(what + ": File size mismatch for " + path +
                              ": Expected file size is " + std::to_string(file.size) +
                              " while found file size is " + std::to_string(found.size));
  }
  return Status::Corruption(what + ": Checksum mismatch for " + path +
                            ". Expected: " + Hex(file.crc32c) + ", got: " + Hex(found.crc32c));
}

}  // namespace

Status RestoreBackupFiles(const BackupReadContext& context, const BackupMeta& meta,
                          const RestoreOptions& options, const std::string& db_dir,
                          const std::string& wal_dir) {
  Env* const env = context.db_env;
  const std::string current = CurrentFileName(db_dir);
  const std::string current_temp = current + ".tmp";
  bool has_current = false;
  std::vector<std::function<Status()>> jobs;
  for (const BackupFile& file : meta.files) {
    const std::string db_name = DbFileNameOf(file.name);
    uint64_t number = 0;
    FileType type;
    if (!ParseFileName(db_name, &number, &type)) {
      return Status::Corruption("Backup corrupted: Fail to parse filename " + db_name);
    }
    std::string dst = (type == kWalFile ? wal_dir : db_dir) + "/" + db_name;
    if (type == kCurrentFile) {
      dst = current_temp;
      has_current = true;
    }
    const std::string src = context.backup_dir + "/" + file.name;
    const bool empty_wal = type == kWalFile && file.size == 0;
    jobs.push_back([&context, &file, src, dst, empty_wal] {
      // An empty WAL adds nothing to a WAL of that name kept by keep_log_files.
      if (empty_wal && context.db_env->FileExists(dst).ok()) return Status::OK();
      FileDigest found;
      Status s = CopyFileWithChecksum(context.backup_env, src, context.db_env, dst, kWholeFile,
                                      context.sync, /*progress=*/nullptr, &found);
      if (!s.ok()) return s;
      if (found.size != file.size || found.crc32c != file.crc32c) {
        return Mismatch("While restoring " + src + " -> " + dst, src, file, found);
      }
      return Status::OK();
    });
  }
  if (!has_current) return Status::Corruption("Backup corrupted: it has no CURRENT file");

  // Only now, with every name known good, is anything in the target touched.
  env->CreateDirIfMissing(db_dir).PermitUncheckedError();
  env->CreateDirIfMissing(wal_dir).PermitUncheckedError();
  if (options.keep_log_files) {
    DeleteChildren(env, db_dir, /*keep_wals=*/true);
  } else {
    DeleteChildren(env, wal_dir, /*keep_wals=*/false);
    DeleteChildren(env, db_dir, /*keep_wals=*/false);
  }
  Status s = JobRunner(context.pool).RunAll(std::move(jobs));
  if (s.ok() && context.sync) s = SyncDirectory(env, db_dir);
  if (s.ok() && context.sync && wal_dir != db_dir) s = SyncDirectory(env, wal_dir);
  if (s.ok()) s = env->RenameFile(current_temp, current);
  if (s.ok() && context.sync) s = SyncDirectory(env, db_dir);
  if (!s.ok()) env->DeleteFile(current_temp).PermitUncheckedError();
  return s;
}

Status VerifyBackupFiles(const BackupReadContext& context, const BackupMeta& meta,
                         bool verify_with_checksum) {
  std::vector<std::function<Status()>> jobs;
  for (const BackupFile& file : meta.files) {
    const std::string path = context.backup_dir + "/" + file.name;
    uint64_t size = 0;
    Status s = context.backup_env->GetFileSize(path, &size);
    if (s.IsNotFound() || (!s.ok() && context.backup_env->FileExists(path).IsNotFound())) {
      return Status::NotFound("File missing: " + path);
    }
    if (!s.ok()) return s;
    if (size != file.size) {
      return Mismatch("File corrupted", path, file, FileDigest{size, file.crc32c});
    }
    if (!verify_with_checksum) continue;
    jobs.push_back([&context, &file, path] {
      FileDigest found;
      Status st = ChecksumFile(context.backup_env, path, kWholeFile, nullptr, &found);
      if (st.ok() && (found.size != file.size || found.crc32c != file.crc32c)) {
        st = Mismatch("File corrupted", path, file, found);
      }
      return st;
    });
  }
  return JobRunner(context.pool).RunAll(std::move(jobs));
}

}  // namespace shale
