// DB::OpenAsSecondary and TryCatchUpWithPrimary (db/db_impl_secondary.h).
#include "db/db_impl_secondary.h"

#include "db/filename.h"
#include "util/logging.h"

namespace shale {

Status DBImplSecondary::Open(const DBOptions& db_options, const std::string& dbname,
                             const std::string& secondary_path,
                             const std::vector<ColumnFamilyDescriptor>& column_families,
                             std::vector<ColumnFamilyHandle*>* handles, DB** dbptr) {
  *dbptr = nullptr;
  Options checked;
  std::map<std::string, Options> others;
  std::vector<std::string> clamped;
  Status s = CheckDbExists(db_options, dbname, column_families, /*may_create_dir=*/false, handles,
                           &checked, &others, &clamped);
  if (!s.ok()) return s;
  Env* env = checked.env != nullptr ? checked.env : Env::Default();
  if (checked.info_log == nullptr) {
    s = env->CreateDirIfMissing(secondary_path);
    if (!s.ok()) return s;
    checked.info_log = SanitizeOptions(secondary_path, checked).info_log;
  }
  // The newest WAL is being written: its last record may be incomplete, which is where
  // the log ends for now, not damage.
  checked.wal_recovery_mode = WALRecoveryMode::kPointInTimeRecovery;
  if (checked.max_open_files != -1) {
    SHALE_LOG_WARN(checked.info_log.get(),
                   "max_open_files is %d: a table file the primary deletes after it was "
                   "evicted from the table cache reads as IOError until "
                   "TryCatchUpWithPrimary; -1 keeps every file open",
                   checked.max_open_files);
  }
  std::unique_ptr<DBImplReadOnly> impl(new DBImplSecondary(checked, dbname));
  for (const std::string& line : clamped)
    SHALE_LOG_WARN(checked.info_log.get(), "%s", line.c_str());
  s = OpenInstance(std::move(impl), column_families, others, /*error_if_wal_file_exists=*/false,
                   handles, dbptr);
  if (s.ok()) s = (*dbptr)->TryCatchUpWithPrimary();
  if (!s.ok() && *dbptr != nullptr) {
    for (ColumnFamilyHandle* h : *handles) delete h;
    handles->clear();
    delete *dbptr;
    *dbptr = nullptr;
  }
  return s;
}

Status DBImplSecondary::TryCatchUpWithPrimary() {
  Status s;
  for (int attempt = 1; attempt <= kCatchUpAttempts; attempt++) {
    s = LoadState(/*first=*/false, /*writer_may_run=*/true);
    if (s.ok()) break;
    SHALE_LOG_INFO(info_log(), "Catching up with the primary, attempt %d: %s", attempt,
                   s.ToString().c_str());
  }
  return s;
}

// ---- DB's secondary openings.

Status DB::OpenAsSecondary(const Options& options, const std::string& name,
                           const std::string& secondary_path, DB** dbptr) {
  std::vector<ColumnFamilyHandle*> handles;
  Status s = DBImplSecondary::Open(DBOptions(options), name, secondary_path,
                                   {{kDefaultColumnFamilyName, ColumnFamilyOptions(options)}},
                                   &handles, dbptr);
  for (ColumnFamilyHandle* h : handles) delete h;  // the DB's own default handle serves
  return s;
}

Status DB::OpenAsSecondary(const Options& options, const std::string& name,
                           const std::string& secondary_path, std::unique_ptr<DB>* dbptr) {
  DB* db = nullptr;
  Status s = OpenAsSecondary(options, name, secondary_path, &db);
  dbptr->reset(db);
  return s;
}

Status DB::OpenAsSecondary(const DBOptions& db_options, const std::string& name,
                           const std::string& secondary_path,
                           const std::vector<ColumnFamilyDescriptor>& column_families,
                           std::vector<ColumnFamilyHandle*>* handles, DB** dbptr) {
  return DBImplSecondary::Open(db_options, name, secondary_path, column_families, handles, dbptr);
}

Status DB::OpenAsSecondary(const DBOptions& db_options, const std::string& name,
                           const std::string& secondary_path,
                           const std::vector<ColumnFamilyDescriptor>& column_families,
                           std::vector<ColumnFamilyHandle*>* handles, std::unique_ptr<DB>* dbptr) {
  DB* db = nullptr;
  Status s = OpenAsSecondary(db_options, name, secondary_path, column_families, handles, &db);
  dbptr->reset(db);
  return s;
}

}  // namespace shale
