// Column families in the DB: Open with descriptors, creating and dropping families (each
// a MANIFEST edit, made with the write queue to the DB alone so that no write group sees
// the set of families change under it), the handles, and the DB methods that take several
// families at once. The per-family state is db/column_family.h; the set, and the view
// writers look memtables up in, db/column_family_set.h.
#include <algorithm>
#include <set>

#include "db/db_impl.h"
#include "db/filename.h"
#include "options/options_check.h"
#include "table/table_factory.h"
#include "util/logging.h"

namespace shale {

// ---- The DB methods with a default in terms of the others.

Status DB::Open(const DBOptions& db_options, const std::string& name,
                const std::vector<ColumnFamilyDescriptor>& column_families,
                std::vector<ColumnFamilyHandle*>* handles, DB** dbptr) {
  return DBImpl::Open(db_options, name, column_families, handles, /*seq_per_batch=*/false, dbptr);
}

Status DB::Open(const DBOptions& db_options, const std::string& name,
                const std::vector<ColumnFamilyDescriptor>& column_families,
                std::vector<ColumnFamilyHandle*>* handles, std::unique_ptr<DB>* dbptr) {
  DB* db = nullptr;
  Status s = Open(db_options, name, column_families, handles, &db);
  dbptr->reset(db);
  return s;
}

Status DB::ListColumnFamilies(const DBOptions& db_options, const std::string& name,
                              std::vector<std::string>* column_families) {
  Env* env = db_options.env != nullptr ? db_options.env : Env::Default();
  return VersionSet::ListColumnFamilies(env, name, column_families);
}

Status DB::CreateColumnFamilies(const ColumnFamilyOptions& options,
                                const std::vector<std::string>& column_family_names,
                                std::vector<ColumnFamilyHandle*>* handles) {
  handles->clear();
  for (const std::string& name : column_family_names) {
    ColumnFamilyHandle* handle = nullptr;
    Status s = CreateColumnFamily(options, name, &handle);
    if (!s.ok()) return s;
    handles->push_back(handle);
  }
  return Status::OK();
}

Status DB::CreateColumnFamilies(const std::vector<ColumnFamilyDescriptor>& column_families,
                                std::vector<ColumnFamilyHandle*>* handles) {
  handles->clear();
  for (const ColumnFamilyDescriptor& d : column_families) {
    ColumnFamilyHandle* handle = nullptr;
    Status s = CreateColumnFamily(d.options, d.name, &handle);
    if (!s.ok()) return s;
    handles->push_back(handle);
  }
  return Status::OK();
}

Status DB::DropColumnFamilies(const std::vector<ColumnFamilyHandle*>& column_families) {
  for (ColumnFamilyHandle* cf : column_families) {
    Status s = DropColumnFamily(cf);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status DB::DestroyColumnFamilyHandle(ColumnFamilyHandle* column_family) {
  if (column_family == nullptr) return Status::InvalidArgument("column family handle is null");
  if (column_family == DefaultColumnFamily()) {
    // RocksDB's answer: the DB owns that one.
    return Status::InvalidArgument("Cannot destroy the handle returned by DefaultColumnFamily()");
  }
  delete column_family;
  return Status::OK();
}

Status DB::Flush(const FlushOptions& options,
                 const std::vector<ColumnFamilyHandle*>& column_families) {
  for (ColumnFamilyHandle* cf : column_families) {
    Status s = Flush(options, cf);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

// ---- Creating and dropping.

Status DBImpl::FamilyOptions(const ColumnFamilyOptions& cf_options, Options* result) {
  if (Status s = CheckTableFactory(cf_options); !s.ok()) return s;
  *result = Options(*current_options_, cf_options);
  std::vector<std::string> clamped;
  Status s = SanitizeAndValidateAtOpen(result, &clamped);
  if (!s.ok()) return s;
  for (const std::string& line : clamped) SHALE_LOG_WARN(info_log_, "%s", line.c_str());
  // What SanitizeOptions fills in for the DB: the same Env and LOG.
  result->env = options_.env;
  result->info_log = options_.info_log;
  return Status::OK();
}

Status DBImpl::CreateFamily(const std::string& name, const Options& options,
                            ColumnFamilyHandle** handle) {
  if (families_.FindByName(name) != nullptr) {
    return Status::InvalidArgument("Column family already exists");
  }
  if (!bg_error_.ok()) return bg_error_;
  const uint32_t id = versions_->NewColumnFamilyId();
  ColumnFamilyData* cfd = families_.Create(id, name, options);
  HeldFor(cfd);
  VersionEdit edit;
  edit.SetColumnFamily(id);
  edit.AddColumnFamily(name);
  // Nothing of it is in an older WAL.
  edit.SetLogNumber(logfile_number_);
  const VersionSet::FamilySetup setup = cfd->version_setup();
  Status s = versions_->LogAndApply(&edit, &setup);
  if (!s.ok()) {
    cfd->SetDropped();  // never live; kept with the others until the DB goes
    return s;
  }
  MemTable* mem = NewMemTable(cfd);
  mem->SetLogNumber(logfile_number_);
  mem->SetEarliestSequence(pipeline_->LastAllocated() + 1);
  cfd->SwitchMemtable(mem);
  families_.MakeLive(cfd);
  InstallNewSuperVersion(cfd);
  families_.Publish();
  SHALE_LOG_INFO(info_log_, "Created column family [%s] (ID %u)", name.c_str(), id);
  if (handle != nullptr) *handle = new ColumnFamilyHandleImpl(cfd, this);
  return Status::OK();
}

Status DBImpl::CreateColumnFamily(const ColumnFamilyOptions& options, const std::string& name,
                                  ColumnFamilyHandle** handle) {
  if (handle == nullptr) return Status::InvalidArgument("handle is nullptr");
  *handle = nullptr;
  Options family;
  {
    DbLock l(this);
    Status s = FamilyOptions(options, &family);
    if (!s.ok()) return s;
  }
  // With the write queue alone, no group is between its check of the batch's families and
  // its inserts while the set changes.
  Status s = pipeline_->WithQueueAlone([&] {
    DbLock l(this);
    return CreateFamily(name, family, handle);
  });
  if (s.ok()) RecordOptions();
  return s;
}

void DBImpl::RecordOptions() {
  // As RocksDB without fail_if_options_file_error: a failure is logged, not returned.
  MutexLock f(&options_file_mutex_);
  DbLock l(this);
  WriteOptionsFile().PermitUncheckedError();
}

Status DBImpl::DropColumnFamily(ColumnFamilyHandle* cf) {
  if (cf == nullptr || !IsOwnFamily(cf)) {
    return Status::InvalidArgument("column family is not this DB's");
  }
  ColumnFamilyData* cfd = CfdOf(cf);
  if (cfd == default_cf_) return Status::InvalidArgument("Can't drop default column family");
  Status dropped = pipeline_->WithQueueAlone([&] {
    DbLock l(this);
    if (cfd->dropped()) return Status::InvalidArgument("Column family already dropped!");
    if (!bg_error_.ok()) return bg_error_;
    VersionEdit edit;
    edit.SetColumnFamily(cfd->id());
    edit.DropColumnFamily();
    Status s = versions_->LogAndApply(&edit);
    if (!s.ok()) return s;
    families_.Drop(cfd);
    SHALE_LOG_INFO(info_log_, "Dropped column family [%s] (ID %u)", cfd->name().c_str(), cfd->id());
    // Its stalls end with it, and a flush waiting on it stops waiting.
    RecalculateWriteStallConditions();
    bg_cv_.SignalAll();
    return Status::OK();
  });
  if (dropped.ok()) RecordOptions();
  return dropped;
}

// ---- Several families at once.

Status DBImpl::NewIterators(const ReadOptions& o, const std::vector<ColumnFamilyHandle*>& cfs,
                            std::vector<Iterator*>* iterators) {
  if (iterators == nullptr) return Status::InvalidArgument("iterators is nullptr");
  iterators->clear();
  for (ColumnFamilyHandle* cf : cfs) {
    if (!IsOwnFamily(cf)) return Status::InvalidArgument("column family is not this DB's");
  }
  // One sequence number for all: the caller's snapshot, or one held while they are made.
  ReadOptions ro = o;
  const Snapshot* own = ro.snapshot == nullptr ? GetSnapshot() : nullptr;
  if (own != nullptr) ro.snapshot = own;
  Status s;
  for (ColumnFamilyHandle* cf : cfs) {
    Iterator* it = NewIterator(ro, cf);
    s = it->status();
    if (!s.ok()) {
      delete it;
      break;
    }
    iterators->push_back(it);
  }
  if (own != nullptr) ReleaseSnapshot(own);
  if (!s.ok()) {
    for (Iterator* it : *iterators) delete it;
    iterators->clear();
  }
  return s;
}

}  // namespace shale
