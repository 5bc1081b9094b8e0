// db_bench's backup and restore, as RocksDB 11.8.1's: backup makes one backup of the DB in
// --backup_dir (default <db>/backup), deleting the backups there first
// (destroy_old_data), and checks that exactly one is listed; restore restores the latest
// backup of --backup_dir into --restore_dir (default <db>/restore), WALs included. Each
// prints the paths as RocksDB's does and counts one operation of the backup's bytes, so
// the result line gives MB/s. RocksDB's backup_rate_limit and restore_rate_limit flags are
// absent: shale has no rate limiter.
#include <gflags/gflags.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "shale/utilities/backup_engine.h"
#include "tools/db_bench.h"
#include "tools/db_bench_flags.h"

DEFINE_string(backup_dir, "", "If not empty string, use the given dir for backup.");
DEFINE_string(restore_dir, "", "If not empty string, use the given dir for restore.");

namespace shale::tools {

namespace {

std::string BackupDir() {
  return FLAGS_backup_dir.empty() ? FLAGS_db + "/backup" : FLAGS_backup_dir;
}
std::string RestoreDir() {
  return FLAGS_restore_dir.empty() ? FLAGS_db + "/restore" : FLAGS_restore_dir;
}

}  // namespace

void Benchmark::Backup(ThreadState* thread) {
  if (thread->tid > 0) return;
  fprintf(stdout, "Backup path: [%s]\n", BackupDir().c_str());
  BackupEngineOptions engine_options(BackupDir());
  engine_options.destroy_old_data = true;
  BackupEngine* raw = nullptr;
  Status s = BackupEngine::Open(engine_options, options_.env, &raw);
  if (!s.ok()) Fail("BackupEngine::Open", s);
  std::unique_ptr<BackupEngine> engine(raw);
  s = engine->CreateNewBackup(db_.get());
  if (!s.ok()) Fail("CreateNewBackup", s);
  std::vector<BackupInfo> infos;
  engine->GetBackupInfo(&infos);
  if (infos.size() != 1) {
    Fail("backup",
         Status::Corruption("expected one backup, found " + std::to_string(infos.size())));
  }
  thread->stats.FinishedOps(1, OpType::kWrite);
  thread->stats.AddBytes(static_cast<int64_t>(infos[0].size));
}

void Benchmark::Restore(ThreadState* thread) {
  if (thread->tid > 0) return;
  fprintf(stdout, "Backup path: [%s]\nRestore path: [%s]\n", BackupDir().c_str(),
          RestoreDir().c_str());
  BackupEngineReadOnly* raw = nullptr;
  Status s = BackupEngineReadOnly::Open(BackupEngineOptions(BackupDir()), options_.env, &raw);
  if (!s.ok()) Fail("BackupEngineReadOnly::Open", s);
  std::unique_ptr<BackupEngineReadOnly> engine(raw);
  BackupInfo info;
  s = engine->GetLatestBackupInfo(&info);
  if (s.ok()) s = engine->RestoreDBFromLatestBackup(RestoreDir(), RestoreDir());
  if (!s.ok()) Fail("RestoreDBFromLatestBackup", s);
  thread->stats.FinishedOps(1, OpType::kWrite);
  thread->stats.AddBytes(static_cast<int64_t>(info.size));
}

}  // namespace shale::tools
