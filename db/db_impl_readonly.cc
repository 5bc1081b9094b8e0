// DB::OpenForReadOnly, and the loading of a directory's state that read-only and secondary
// instances share (db/db_impl_readonly.h).
#include "db/db_impl_readonly.h"

#include <algorithm>
#include <set>

#include "db/filename.h"
#include "db/log_reader.h"
#include "util/logging.h"

namespace shale {

namespace {

// Whether the directory holds a WAL file with data in it (error_if_wal_file_exists; an
// empty one is tolerated, as RocksDB's). A WAL's size does not say: the writer allocates
// it ahead in windows whose zeroed tail reads as the end of the log. So each is read up to
// its first record.
Status CheckNoWalData(Env* env, const std::string& dbname) {
  std::vector<std::string> children;
  Status s = env->GetChildren(dbname, &children);
  if (!s.ok()) return s;
  for (const std::string& name : children) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(name, &number, &type) || type != kWalFile) continue;
    const std::string fname = dbname + "/" + name;
    std::unique_ptr<SequentialFile> file;
    s = env->NewSequentialFile(fname, &file, EnvOptions());
    if (!s.ok()) return s;
    log::Reader reader(std::move(file), nullptr, /*checksum=*/true, number, fname);
    Slice record;
    std::string scratch;
    if (reader.ReadRecord(&record, &scratch)) {
      return Status::Corruption(
          "The db was opened in readonly mode with error_if_wal_file_exists flag but a "
          "non-empty WAL file already exists");
    }
  }
  return Status::OK();
}

}  // namespace

DBImplReadOnly::DBImplReadOnly(const Options& options, const std::string& dbname,
                               const char* refusal)
    : DBImpl(options, dbname, /*seq_per_batch=*/false, /*read_only=*/true), refusal_(refusal) {}

Status DBImplReadOnly::CheckDbExists(const DBOptions& db_options, const std::string& dbname,
                                     const std::vector<ColumnFamilyDescriptor>& column_families,
                                     bool may_create_dir, std::vector<ColumnFamilyHandle*>* handles,
                                     Options* checked, std::map<std::string, Options>* others,
                                     std::vector<std::string>* clamped) {
  Status s = CheckOpenArguments(db_options, column_families, handles, checked, others, clamped);
  if (!s.ok()) return s;
  // The DB must exist; nothing is created but, with create_if_missing, its directory.
  Env* env = checked->env != nullptr ? checked->env : Env::Default();
  if (may_create_dir && checked->create_if_missing) {
    s = env->CreateDirIfMissing(dbname);
    if (!s.ok()) return s;
  }
  std::string current;
  return ReadFileToString(env, CurrentFileName(dbname), &current);
}

Status DBImplReadOnly::Open(const DBOptions& db_options, const std::string& dbname,
                            const std::vector<ColumnFamilyDescriptor>& column_families,
                            std::vector<ColumnFamilyHandle*>* handles,
                            bool error_if_wal_file_exists, DB** dbptr) {
  *dbptr = nullptr;
  Options checked;
  std::map<std::string, Options> others;
  std::vector<std::string> clamped;
  Status s = CheckDbExists(db_options, dbname, column_families, /*may_create_dir=*/true, handles,
                           &checked, &others, &clamped);
  if (!s.ok()) return s;
  std::unique_ptr<DBImplReadOnly> impl(
      new DBImplReadOnly(checked, dbname, "Not supported operation in read only mode."));
  for (const std::string& line : clamped) SHALE_LOG_WARN(impl->info_log_, "%s", line.c_str());
  return OpenInstance(std::move(impl), column_families, others, error_if_wal_file_exists, handles,
                      dbptr);
}

Status DBImplReadOnly::OpenInstance(std::unique_ptr<DBImplReadOnly> impl,
                                    const std::vector<ColumnFamilyDescriptor>& column_families,
                                    const std::map<std::string, Options>& others,
                                    bool error_if_wal_file_exists,
                                    std::vector<ColumnFamilyHandle*>* handles, DB** dbptr) {
  impl->LogOptionsAtOpen();
  {
    DbLock l(impl.get());
    for (const auto& [name, family] : others) {
      // The DB's options as sanitized (its Env), with the family's own.
      impl->open_families_.emplace(
          name, Options(impl->options_, static_cast<const ColumnFamilyOptions&>(family)));
    }
  }
  Status s;
  if (error_if_wal_file_exists) s = CheckNoWalData(impl->env_, impl->dbname_);
  if (s.ok()) s = impl->LoadState(/*first=*/true, /*writer_may_run=*/false);
  if (!s.ok()) {
    SHALE_LOG_ERROR(impl->info_log_, "DB::OpenForReadOnly failed: %s", s.ToString().c_str());
    return s;
  }
  {
    DbLock l(impl.get());
    impl->StartStatsDump();
    for (const ColumnFamilyDescriptor& d : column_families) {
      handles->push_back(
          new ColumnFamilyHandleImpl(impl->families_.FindByName(d.name), impl.get()));
    }
  }
  SHALE_LOG_INFO(impl->info_log_, "Opened %s read-only", impl->dbname_.c_str());
  *dbptr = impl.release();
  return s;
}

Status DBImplReadOnly::LoadState(bool first, bool writer_may_run) {
  DbLock l(this);
  Status s;
  if (first) {
    s = RecoverVersions(/*all_families=*/false);
    // create_missing_column_families creates nothing here.
    for (const auto& [name, family_options] : open_families_) {
      if (s.ok() && families_.FindByName(name) == nullptr) {
        s = Status::InvalidArgument("Column family not found: " + name);
      }
    }
  } else {
    // The families this instance has, by id: one the primary dropped and made again is
    // another family, which a secondary ignores as it ignores every new one (RocksDB's).
    s = versions_->Recover(
        [this](uint32_t id, const std::string& name) -> std::optional<VersionSet::FamilySetup> {
          AssertDbMutexHeld();  // as in the enclosing function
          ColumnFamilyData* cfd = families_.Find(id);
          if (cfd == nullptr || cfd->name() != name) return std::nullopt;
          return cfd->version_setup();
        },
        /*all_families=*/false);
    if (s.ok()) {
      for (const auto& [id, cfd] : std::map<uint32_t, ColumnFamilyData*>(families_.live())) {
        if (!versions_->HasFamily(id)) families_.Drop(cfd);
      }
      // With max_open_files = -1 every table file of the state is opened now, as RocksDB's
      // secondary does, so that a view never holds one it cannot read: a file the
      // primary deleted meanwhile fails this load, which is tried again.
      s = versions_->VerifyFilesExist(/*open_tables=*/options_.max_open_files == -1);
    }
  }
  std::vector<uint64_t> logs;
  uint64_t oldest_wal = 0;
  if (s.ok()) s = WalsToReplay(&logs, &oldest_wal);
  // A writer deletes a WAL once a MANIFEST edit moved past it: if that happened after the
  // MANIFEST was read, the WAL's records are in a table file this state does not list.
  if (s.ok() && writer_may_run && oldest_wal != 0 && (logs.empty() || logs.front() != oldest_wal)) {
    s = Status::TryAgain(LogFileName(dbname_, oldest_wal), "deleted since the MANIFEST was read");
  }
  std::map<uint32_t, VersionEdit> unused;  // nothing is flushed
  std::map<uint32_t, MemTable*> mems;      // referenced
  SequenceNumber last = versions_->LastSequence();
  if (s.ok()) s = RecoverLogFiles(logs, oldest_wal, &unused, &last, &mems);
  if (!s.ok()) return s;
  // A later load never moves the sequence back: snapshots taken meanwhile stay valid.
  last = std::max(last, pipeline_->LastPublished());
  pipeline_->SetLastSequence(last);
  versions_->SetLastSequence(last);
  for (const auto& [id, cfd] : families_.live()) {
    HeldFor(cfd);
    auto it = mems.find(id);
    MemTable* mem = it != mems.end() ? it->second : NewMemTable(cfd);
    cfd->SwitchMemtable(mem);
    if (it != mems.end()) {
      mem->Unref();  // RecoverLogFiles' reference: the family holds its own now
      mems.erase(it);
    }
    // The memtables of the previous load: their data is in the new one or in table files.
    const size_t write_buffer_size = cfd->current_options()->write_buffer_size;
    while (!cfd->imm().empty()) cfd->RemoveOldestImmutable(write_buffer_size);
    InstallNewSuperVersion(cfd);
  }
  for (auto& [id, mem] : mems) mem->Unref();  // of a family dropped meanwhile
  families_.Publish();
  // The table files no view lists any more (a primary compacted them away since an earlier
  // load, and the views that read them are gone) are closed; the others stay open.
  std::set<uint64_t> live;
  versions_->AddLiveFiles(&live);
  for (uint64_t number : tables_seen_) {
    if (live.count(number) > 0) continue;
    for (const auto& cfd : families_.all()) cfd->table_cache()->Evict(number);
  }
  tables_seen_ = std::move(live);
  return Status::OK();
}

// ---- DB's read-only openings.

Status DB::OpenForReadOnly(const Options& options, const std::string& name, DB** dbptr,
                           bool error_if_wal_file_exists) {
  std::vector<ColumnFamilyHandle*> handles;
  Status s = DBImplReadOnly::Open(DBOptions(options), name,
                                  {{kDefaultColumnFamilyName, ColumnFamilyOptions(options)}},
                                  &handles, error_if_wal_file_exists, dbptr);
  for (ColumnFamilyHandle* h : handles) delete h;  // the DB's own default handle serves
  return s;
}

Status DB::OpenForReadOnly(const Options& options, const std::string& name,
                           std::unique_ptr<DB>* dbptr, bool error_if_wal_file_exists) {
  DB* db = nullptr;
  Status s = OpenForReadOnly(options, name, &db, error_if_wal_file_exists);
  dbptr->reset(db);
  return s;
}

Status DB::OpenForReadOnly(const DBOptions& db_options, const std::string& name,
                           const std::vector<ColumnFamilyDescriptor>& column_families,
                           std::vector<ColumnFamilyHandle*>* handles, DB** dbptr,
                           bool error_if_wal_file_exists) {
  return DBImplReadOnly::Open(db_options, name, column_families, handles, error_if_wal_file_exists,
                              dbptr);
}

Status DB::OpenForReadOnly(const DBOptions& db_options, const std::string& name,
                           const std::vector<ColumnFamilyDescriptor>& column_families,
                           std::vector<ColumnFamilyHandle*>* handles, std::unique_ptr<DB>* dbptr,
                           bool error_if_wal_file_exists) {
  DB* db = nullptr;
  Status s =
      OpenForReadOnly(db_options, name, column_families, handles, &db, error_if_wal_file_exists);
  dbptr->reset(db);
  return s;
}

}  // namespace shale
