// Opening a DB: the options it runs with (checked by the option tables, plus the write-mode
// combinations Open refuses), lock, create or recover the MANIFEST, replay the WAL files newer than
// the MANIFEST's log number into L0 files, and start a fresh WAL; DestroyDB.
#include <algorithm>
#include <cinttypes>

#include "db/db_impl.h"
#include "db/filename.h"
#include "db/flush_job.h"
#include "db/log_reader.h"
#include "db/write_batch_internal.h"
#include "options/options_check.h"
#include "table/table_factory.h"
#include "util/logging.h"

namespace shale {

namespace {

// The info LOG in the DB directory, unless the caller gave one. An older LOG is moved
// aside to LOG.old.<micros>. The directory is created only when the DB may be.
std::shared_ptr<Logger> OpenInfoLog(Env* env, const std::string& dbname, const Options& o) {
  if (!env->FileExists(dbname).ok()) {
    if (!o.create_if_missing || !env->CreateDirIfMissing(dbname).ok()) return nullptr;
  }
  const std::string fname = InfoLogFileName(dbname);
  if (env->FileExists(fname).ok()) {
    env->RenameFile(fname, OldInfoLogFileName(dbname, env->NowMicros())).PermitUncheckedError();
  }
  std::shared_ptr<Logger> logger;
  if (!env->NewLogger(fname, &logger).ok()) return nullptr;  // run without a LOG
  logger->SetInfoLogLevel(o.info_log_level);
  return logger;
}

// The write-mode combinations RocksDB refuses, with its codes and messages.
Status ValidateWriteModes(const Options& o) {
  if (o.unordered_write && !o.allow_concurrent_memtable_write) {
    return Status::InvalidArgument(
        "unordered_write is incompatible with !allow_concurrent_memtable_write");
  }
  if (o.unordered_write && o.enable_pipelined_write) {
    return Status::InvalidArgument("unordered_write is incompatible with enable_pipelined_write");
  }
  if (o.two_write_queues && o.enable_pipelined_write) {
    // RocksDB answers this on every write; refusing the DB at Open says it once.
    return Status::NotSupported("pipelined_writes is not compatible with concurrent prepares");
  }
  if (o.allow_mmap_reads && o.use_direct_reads) {
    return Status::NotSupported("allow_mmap_reads cannot be combined with use_direct_reads");
  }
  return Status::OK();
}

}  // namespace

Status CheckTableFactory(const ColumnFamilyOptions& o) {
  if (o.table_factory != nullptr &&
      std::string(o.table_factory->Name()) != BlockBasedTableFactory::kClassName) {
    return Status::NotSupported("table factory", o.table_factory->Name());
  }
  return Status::OK();
}

Options SanitizeOptions(const std::string& dbname, const Options& src, bool read_only) {
  Options result = src;
  if (result.env == nullptr) result.env = Env::Default();
  if (result.info_log == nullptr && !read_only) {
    result.info_log = OpenInfoLog(result.env, dbname, result);
  }
  return result;
}

Status DBImpl::NewDB() {
  VersionEdit edit;
  edit.SetComparatorName(options_.comparator->Name());
  edit.SetLogNumber(0);
  edit.SetNextFile(2);
  edit.SetLastSequence(0);
  const std::string manifest = DescriptorFileName(dbname_, 1);
  std::unique_ptr<WritableFile> file;
  Status s = env_->NewWritableFile(manifest, &file, EnvOptions());
  if (!s.ok()) return s;
  {
    log::Writer log(std::move(file), 0);
    std::string record;
    edit.EncodeTo(&record);
    s = log.AddRecord(record);
    if (s.ok()) s = log.Sync(options_.use_fsync);
    Status c = log.Close();
    if (s.ok()) s = c;
  }
  if (s.ok()) s = SetCurrentFile(env_, dbname_, 1, db_dir_.get());
  // Only a MANIFEST that CURRENT cannot name is garbage: after a rename whose directory
  // sync failed, deleting it would leave a CURRENT that every later Open rejects.
  if (!s.ok() && !CurrentMayName(env_, dbname_, 1)) {
    env_->DeleteFile(manifest).PermitUncheckedError();
  }
  return s;
}

Status DBImpl::Recover() {
  Status s = env_->CreateDirIfMissing(dbname_);
  if (!s.ok()) return s;
  s = env_->LockFile(LockFileName(dbname_), &db_lock_);
  if (!s.ok()) return s;
  s = env_->NewDirectory(dbname_, &db_dir_);
  if (!s.ok()) return s;

  s = env_->FileExists(CurrentFileName(dbname_));
  if (s.IsNotFound()) {
    if (!options_.create_if_missing) {
      return Status::InvalidArgument(CurrentFileName(dbname_),
                                     "does not exist (create_if_missing is false)");
    }
    s = NewDB();
    if (!s.ok()) return s;
  } else if (!s.ok()) {
    return s;
  } else if (options_.error_if_exists) {
    return Status::InvalidArgument(dbname_, "exists (error_if_exists is true)");
  }

  s = RecoverVersions(/*all_families=*/true);
  if (!s.ok()) return s;
  std::vector<uint64_t> logs;
  uint64_t oldest_wal = 0;
  s = WalsToReplay(&logs, &oldest_wal);
  if (!s.ok()) return s;

  std::map<uint32_t, VersionEdit> edits;
  SequenceNumber max_sequence = versions_->LastSequence();
  s = RecoverLogFiles(logs, oldest_wal, &edits, &max_sequence);
  if (!s.ok()) return s;
  pipeline_->SetLastSequence(max_sequence);
  versions_->SetLastSequence(max_sequence);

  // Start the fresh WAL now and commit the replayed files with it in one edit: until that
  // edit is durable, a crash replays the same WALs again.
  logfile_number_ = versions_->NewFileNumber();
  std::unique_ptr<WritableFile> file;
  s = env_->NewWritableFile(LogFileName(dbname_, logfile_number_), &file,
                            log::WalFileOptions(options_));
  if (!s.ok()) return s;
  s = db_dir_->Fsync();
  if (!s.ok()) return s;
  pipeline_->StartWal(std::move(file), logfile_number_);
  // Every family's edit (its replayed files, and its log number moved to the new WAL);
  // the default family's last, with the oldest WAL still needed: until it is durable, a
  // crash replays the same WALs again.
  for (const auto& [id, cfd] : families_.live()) {
    if (id == 0) continue;
    VersionEdit& e = edits[id];
    e.SetColumnFamily(id);
    e.SetLogNumber(logfile_number_);
    e.SetLastSequence(max_sequence);
    s = versions_->LogAndApply(&e);
    if (!s.ok()) return s;
  }
  VersionEdit& edit = edits[0];
  edit.SetLogNumber(logfile_number_);
  edit.SetPrevLogNumber(0);
  edit.SetMinLogNumberToKeep(logfile_number_);
  // The recovered prepared transactions keep their WALs; without allow_2pc none is left.
  if (options_.allow_2pc || versions_->MinLogNumberToKeep() != 0) {
    uint64_t keep = logfile_number_;
    for (const auto& [name, txn] : recovered_txns_) {
      pipeline_->prepared_logs().Add(txn.log_number);
      keep = std::min(keep, txn.log_number);
    }
    edit.SetMinLogNumberToKeep(keep);
  }
  edit.SetLastSequence(max_sequence);
  s = versions_->LogAndApply(&edit);
  return s;
}

Status DBImpl::RecoverVersions(bool all_families) {
  Status s = versions_->Recover(
      [this](uint32_t id, const std::string& name) {
        AssertDbMutexHeld();  // Recover runs under it (the analysis does not enter lambdas)
        return SetUpRecoveredFamily(id, name);
      },
      all_families);
  if (!s.ok()) return s;
  // Families the MANIFEST created and later dropped got a ColumnFamilyData on the way.
  for (const auto& [id, cfd] : std::map<uint32_t, ColumnFamilyData*>(families_.live())) {
    if (!versions_->HasFamily(id)) families_.Drop(cfd);
  }
  for (const auto& [name, family_options] : open_families_) {
    if (families_.FindByName(name) == nullptr && !options_.create_missing_column_families) {
      return Status::InvalidArgument("Column family not found: " + name);
    }
  }
  // A MANIFEST naming a file that is gone means lost data: refuse to open. paranoid_checks
  // promises more: every table's footer and meta blocks are read and verified here too.
  return versions_->VerifyFilesExist(/*open_tables=*/options_.paranoid_checks);
}

Status DBImpl::WalsToReplay(std::vector<uint64_t>* logs, uint64_t* oldest_wal) {
  // The MANIFEST's log number names the oldest WAL recovery needs, and a WAL is deleted
  // only after a durable edit moved that number past it. So a missing one means the
  // MANIFEST lost its latest edits: damage in its last record that reads like the torn
  // tail of a crash. Opening would show an older state as if it were the latest.
  *oldest_wal = versions_->MinLogNumberToKeep() != 0 ? versions_->MinLogNumberToKeep()
                                                     : versions_->LogNumber();
  if (options_.paranoid_checks && *oldest_wal != 0) {
    const std::string wal = LogFileName(dbname_, *oldest_wal);
    if (env_->FileExists(wal).IsNotFound()) {
      return Status::Corruption(wal,
                                "WAL named by the MANIFEST is missing (the MANIFEST may "
                                "have lost its last edits)");
    }
  }
  // Every WAL at least as new as that one, oldest first: from the oldest WAL a family
  // still needed (or, with two-phase commit, a prepared transaction) when the last flush
  // was recorded; each family takes records only from its own log number on.
  std::vector<std::string> children;
  Status s = env_->GetChildren(dbname_, &children);
  if (!s.ok()) return s;
  logs->clear();
  for (const std::string& name : children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type)) {
      versions_->MarkFileNumberUsed(number);
      if (type == kWalFile && number >= *oldest_wal) logs->push_back(number);
    }
  }
  std::sort(logs->begin(), logs->end());
  return Status::OK();
}

namespace {

// Collects what the log reader reports; recovery decides per WALRecoveryMode.
struct LogReporter : public log::Reporter {
  Status status;    // the first damage seen
  Status io_error;  // a failure to read at all: fails recovery in every mode
  void Corruption(size_t /*bytes*/, const Status& s) override {
    if (!s.IsCorruption()) {
      if (io_error.ok()) io_error = s;
    } else if (status.ok()) {
      status = s;
    }
  }
};

}  // namespace

std::optional<VersionSet::FamilySetup> DBImpl::SetUpRecoveredFamily(uint32_t id,
                                                                    const std::string& name) {
  auto it = open_families_.find(name);
  if (it == open_families_.end()) return std::nullopt;
  // Recovery runs before anything walks the families: live at once (FinishOpen gives it
  // its memtable).
  ColumnFamilyData* cfd = families_.Create(id, name, it->second);
  families_.MakeLive(cfd);
  return cfd->version_setup();
}

Status DBImpl::FlushRecoveredMemtable(ColumnFamilyData* cfd, MemTable* mem, VersionEdit* edit) {
  HeldFor(cfd);
  const uint64_t number = versions_->NewFileNumber();
  pending_outputs_.insert(number);
  const std::shared_ptr<const Options> job_options = cfd->current_options();
  JobSnapshotContext snaps = BeginJobSnapshots();  // prepared data may be unresolved
  FlushJob job(*job_options, dbname_, &cfd->internal_comparator(), cfd->table_cache(),
               db_dir_.get(), mem, snaps.snapshots, number);
  job.SetSnapshotChecker(snaps.checker.get(), snaps.job_snapshot);
  job.SetColumnFamilyId(cfd->id());
  job.SetReason(TableFileCreationReason::kRecovery);
  UnlockDb();  // the SST is written without the DB mutex, as a background flush's
  Status s = job.Run();
  LockDb();
  EndJobSnapshots(&snaps);
  // Nothing sweeps files before Open ends, and the edit is applied before it does.
  pending_outputs_.erase(number);
  if (s.ok()) job.AddToEdit(edit);
  mem->Unref();
  return s;
}

namespace {

// The families' memtables during WAL replay: made when a family's first record comes.
class RecoveryMemtables final : public ReplayTargets {
 public:
  RecoveryMemtables(std::function<bool(uint32_t)> knows,
                    std::function<MemTable*(uint32_t, uint64_t)> find)
      : knows_(std::move(knows)), find_(std::move(find)) {}
  bool Knows(uint32_t cf) const override { return knows_(cf); }
  MemTable* For(uint32_t cf, uint64_t log) override { return find_(cf, log); }

 private:
  const std::function<bool(uint32_t)> knows_;
  const std::function<MemTable*(uint32_t, uint64_t)> find_;
};

}  // namespace

Status DBImpl::RecoverLogFiles(const std::vector<uint64_t>& logs, uint64_t oldest_wal,
                               std::map<uint32_t, VersionEdit>* edits, SequenceNumber* max_sequence,
                               std::map<uint32_t, MemTable*>* kept) {
  const WALRecoveryMode mode = options_.wal_recovery_mode;
  // The oldest WAL with records to replay: with two-phase commit, the oldest family log
  // number (older WALs are read for prepared sections and markers only); otherwise the
  // oldest WAL read, the one recorded with the last flush (a family with nothing unflushed
  // may have an older log number on record: its WALs were free to go).
  const uint64_t min_data_log =
      options_.allow_2pc ? versions_->LogNumber() : std::max(versions_->LogNumber(), oldest_wal);
  WalReplayer replayer(options_.allow_2pc, seq_per_batch_, min_data_log);
  std::map<uint32_t, MemTable*> mems;  // referenced
  RecoveryMemtables targets(
      [this](uint32_t cf) {
        AssertDbMutexHeld();  // as in the enclosing function
        return cf <= versions_->MaxColumnFamily();
      },
      [this, &mems](uint32_t cf, uint64_t log) -> MemTable* {
        AssertDbMutexHeld();
        ColumnFamilyData* cfd = families_.Find(cf);
        // A dropped family, or one whose files hold everything up to a newer WAL.
        if (cfd == nullptr || log < versions_->LogNumber(cf)) return nullptr;
        MemTable*& mem = mems[cf];
        if (mem == nullptr) {
          mem = NewMemTable(cfd);
          mem->Ref();
        }
        return mem;
      });
  Status s;
  // kPointInTimeRecovery: after damage (a corrupted record, or an incomplete one at the
  // end of a log that is not the newest), the next log is replayed only if its first batch
  // continues the sequence right after the last one replayed; otherwise it could leave a
  // hole, and replay stops there, keeping the consistent prefix.
  bool stop_replay = false;
  bool after_damage = false;
  // The last data log replayed, and where its last whole record ended.
  uint64_t prev_log = 0;
  uint64_t prev_log_end = 0;
  // Flushes the replayed memtables (the full ones only, unless all).
  auto flush_mems = [&](bool all) -> Status {
    AssertDbMutexHeld();  // as in the enclosing function (the analysis does not enter lambdas)
    if (kept != nullptr) return Status::OK();  // a read-only instance keeps them all
    Status fs;
    for (auto it = mems.begin(); it != mems.end();) {
      if (!all && !it->second->ShouldFlush()) {
        ++it;
        continue;
      }
      if (fs.ok()) {
        fs = FlushRecoveredMemtable(families_.Find(it->first), it->second, &(*edits)[it->first]);
      } else {
        it->second->Unref();
      }
      it = mems.erase(it);
    }
    return fs;
  };

  for (uint64_t log_number : logs) {
    if (stop_replay) break;
    // A WAL older than the MANIFEST's log number is read only for two-phase commit's
    // prepared sections and markers: sequence continuity is not checked across it.
    const bool data_log = replayer.AppliesRecordsOf(log_number);
    const std::string fname = LogFileName(dbname_, log_number);
    std::unique_ptr<SequentialFile> file;
    s = env_->NewSequentialFile(fname, &file, EnvOptions());
    if (!s.ok()) return s;
    LogReporter reporter;
    log::Reader reader(std::move(file), &reporter, /*checksum=*/true, log_number, fname);
    std::string scratch;
    Slice record;
    WriteBatch batch;
    const bool skip_damage = mode == WALRecoveryMode::kSkipAnyCorruptedRecords;
    bool first_record = true;
    while (reader.ReadRecord(&record, &scratch, mode)) {
      if (!reporter.status.ok()) {
        // Damage lies before this record: only the salvage mode goes on past it.
        if (!skip_damage) break;
        reporter.status = Status::OK();
      }
      if (first_record && data_log && !skip_damage) {
        first_record = false;
        s = CheckPredecessor(reader, min_data_log, prev_log, prev_log_end, &stop_replay);
        if (!s.ok() || stop_replay) break;
      }
      if (record.size() < WriteBatchInternal::kHeader) {
        reporter.Corruption(record.size(),
                            Status::Corruption(fname, "log record too small for a batch"));
        if (skip_damage) continue;
        break;
      }
      s = WriteBatchInternal::SetContents(&batch, record);
      if (!s.ok()) {
        reporter.Corruption(record.size(), Status::Corruption(fname, s.ToString()));
        s = Status::OK();
        if (skip_damage) continue;
        break;
      }
      if (after_damage && data_log) {
        if (WriteBatchInternal::Sequence(&batch) != *max_sequence + 1) {
          SHALE_LOG_WARN(info_log_,
                         "Point-in-time recovery stops at %s: its first batch (sequence %" PRIu64
                         ") does not follow the last one replayed (%" PRIu64
                         ") after damage in the log before it",
                         fname.c_str(), WriteBatchInternal::Sequence(&batch), *max_sequence);
          stop_replay = true;
          break;
        }
        after_damage = false;
      }
      SequenceNumber next_seq;
      s = replayer.Apply(batch, log_number, &targets, &next_seq);
      if (s.IsNotSupported()) break;  // a prepared transaction: not damage, fails the open
      if (!s.ok()) {
        reporter.Corruption(record.size(), Status::Corruption(fname, s.ToString()));
        s = Status::OK();
        if (skip_damage) continue;
        break;
      }
      // The numbers records took (a prepare takes none, a commit's prepared records theirs).
      if (next_seq > WriteBatchInternal::Sequence(&batch)) {
        *max_sequence = std::max(*max_sequence, next_seq - 1);
      }
      s = flush_mems(/*all=*/false);
      if (!s.ok()) break;
    }
    if (s.ok() && !reporter.io_error.ok()) s = reporter.io_error;
    if (!s.ok()) break;  // an I/O error or a failed flush: recovery fails in every mode
    if (stop_replay) break;
    if (data_log) {
      prev_log = log_number;
      prev_log_end = reader.LastRecordEnd();
    }
    if (mode == WALRecoveryMode::kPointInTimeRecovery && reader.EndedInTornRecord() && data_log) {
      after_damage = true;
    }
    if (!reporter.status.ok()) {
      switch (mode) {
        case WALRecoveryMode::kSkipAnyCorruptedRecords:
          // The reader skipped what it could; a batch that failed to decode is dropped.
          s = Status::OK();
          break;
        case WALRecoveryMode::kPointInTimeRecovery:
          // Keep the consistent prefix before the damage; later logs only if they continue
          // it without a gap.
          s = Status::OK();
          if (data_log) after_damage = true;
          break;
        case WALRecoveryMode::kTolerateCorruptedTailRecords:
        case WALRecoveryMode::kAbsoluteConsistency: s = reporter.status; break;
      }
    }
    if (!s.ok()) break;
  }
  if (s.ok()) {
    s = flush_mems(/*all=*/true);
  }
  if (s.ok() && kept != nullptr) {
    *kept = std::move(mems);
  } else if (!s.ok()) {
    for (auto& [cf, mem] : mems) mem->Unref();
  }
  if (s.ok()) recovered_txns_ = replayer.TakePrepared();
  return s;
}

Status DBImpl::CheckPredecessor(const log::Reader& reader, uint64_t min_data_log, uint64_t prev_log,
                                uint64_t prev_log_end, bool* stop_replay) {
  // A WAL the DB switched to names the one before it and that one's size (log_format.h).
  // A power loss may keep the newer WAL's bytes and cut the older one short (the DB does
  // not sync a WAL when it leaves it): replaying the newer one then would leave a hole.
  const log::Reader::Predecessor* p = reader.predecessor();
  if (p == nullptr || p->log_number < min_data_log) return Status::OK();
  if (p->log_number == prev_log && prev_log_end >= p->size) return Status::OK();
  const std::string what =
      p->log_number == prev_log
          ? "WAL " + std::to_string(prev_log) + " ends at " + std::to_string(prev_log_end) +
                " bytes; " + reader.file_name() + " records it at " + std::to_string(p->size)
          : reader.file_name() + " follows WAL " + std::to_string(p->log_number) +
                ", which was not replayed";
  if (options_.wal_recovery_mode == WALRecoveryMode::kAbsoluteConsistency) {
    return Status::Corruption("a WAL lost its tail", what);
  }
  // kPointInTimeRecovery and kTolerateCorruptedTailRecords: the history ends where the
  // older WAL does.
  SHALE_LOG_WARN(info_log_, "Recovery stops before %s: %s", reader.file_name().c_str(),
                 what.c_str());
  *stop_replay = true;
  return Status::OK();
}

Status DBImpl::FinishOpen() {
  for (const auto& [id, cfd] : families_.live()) {
    HeldFor(cfd);
    MemTable* mem = NewMemTable(cfd);
    mem->SetLogNumber(logfile_number_);
    mem->SetEarliestSequence(pipeline_->LastAllocated() + 1);
    cfd->SwitchMemtable(mem);
    InstallNewSuperVersion(cfd);
  }
  families_.Publish();
  RecalculateWriteStallConditions();
  DeleteObsoleteFiles();
  MaybeScheduleCompaction();
  return Status::OK();
}

Status DB::Open(const Options& options, const std::string& name, std::unique_ptr<DB>* dbptr) {
  DB* db = nullptr;
  Status s = Open(options, name, &db);
  dbptr->reset(db);
  return s;
}

Status DB::Open(const Options& options, const std::string& name, DB** dbptr) {
  return DBImpl::Open(options, name, /*seq_per_batch=*/false, dbptr);
}

Status DBImpl::Open(const Options& options, const std::string& name, bool seq_per_batch,
                    DB** dbptr) {
  std::vector<ColumnFamilyHandle*> handles;
  Status s =
      Open(options, name, {{kDefaultColumnFamilyName, options}}, &handles, seq_per_batch, dbptr);
  for (ColumnFamilyHandle* h : handles) delete h;  // the DB's own default handle serves
  return s;
}

Status DBImpl::CheckOpenArguments(const DBOptions& db_options,
                                  const std::vector<ColumnFamilyDescriptor>& column_families,
                                  std::vector<ColumnFamilyHandle*>* handles, Options* checked,
                                  std::map<std::string, Options>* others,
                                  std::vector<std::string>* clamped) {
  if (handles == nullptr) return Status::InvalidArgument("handles is nullptr");
  handles->clear();
  const ColumnFamilyDescriptor* default_desc = nullptr;
  std::set<std::string> names;
  for (const ColumnFamilyDescriptor& d : column_families) {
    if (!names.insert(d.name).second) {
      return Status::InvalidArgument("Duplicate column family name: " + d.name);
    }
    if (d.name == kDefaultColumnFamilyName) default_desc = &d;
    if (Status s = CheckTableFactory(d.options); !s.ok()) return s;
  }
  if (default_desc == nullptr) {
    return Status::InvalidArgument("Default column family not specified");
  }
  // Bounds, clamps and the rules between options come from the option tables
  // (options/options_check.h); the write modes RocksDB refuses together are checked here.
  *checked = Options(db_options, default_desc->options);
  if (Status s = SanitizeAndValidateAtOpen(checked, clamped); !s.ok()) return s;
  if (Status s = ValidateWriteModes(*checked); !s.ok()) return s;
  for (const ColumnFamilyDescriptor& d : column_families) {
    if (&d == default_desc) continue;
    Options family(*checked, d.options);
    if (Status s = SanitizeAndValidateAtOpen(&family, clamped); !s.ok()) return s;
    others->emplace(d.name, family);
  }
  return Status::OK();
}

Status DBImpl::Open(const DBOptions& db_options, const std::string& dbname,
                    const std::vector<ColumnFamilyDescriptor>& column_families,
                    std::vector<ColumnFamilyHandle*>* handles, bool seq_per_batch, DB** dbptr) {
  *dbptr = nullptr;
  Options checked;
  std::map<std::string, Options> others;
  std::vector<std::string> clamped;
  if (Status s =
          CheckOpenArguments(db_options, column_families, handles, &checked, &others, &clamped);
      !s.ok()) {
    return s;
  }
  auto impl = std::make_unique<DBImpl>(checked, dbname, seq_per_batch);
  impl->LogOptionsAtOpen();
  for (const std::string& line : clamped) SHALE_LOG_WARN(impl->info_log_, "%s", line.c_str());
  Status s;
  {
    DBImpl::DbLock l(impl.get());
    for (auto& [name, family] : others) {
      // The DB's options as sanitized (its Env and LOG), with the family's own.
      impl->open_families_.emplace(
          name, Options(impl->options_, static_cast<const ColumnFamilyOptions&>(family)));
    }
    s = impl->Recover();
    if (s.ok()) s = impl->FinishOpen();
    // The families Open names that the DB lacks (create_missing_column_families).
    // In the descriptors' order, so that ids follow it as RocksDB's do.
    for (const ColumnFamilyDescriptor& d : column_families) {
      if (!s.ok()) break;
      if (impl->families_.FindByName(d.name) == nullptr) {
        s = impl->CreateFamily(d.name, impl->open_families_.at(d.name), nullptr);
      }
    }
  }
  if (!s.ok()) {
    SHALE_LOG_ERROR(impl->info_log_, "DB::Open failed: %s", s.ToString().c_str());
    return s;
  }
  SHALE_LOG_INFO(impl->info_log_, "DB::Open done: %s", dbname.c_str());
  {
    MutexLock f(&impl->options_file_mutex_);
    DBImpl::DbLock l(impl.get());
    // As RocksDB without fail_if_options_file_error: a DB that cannot record its options
    // (logged) still opens.
    impl->WriteOptionsFile().PermitUncheckedError();
    impl->StartStatsDump();
    for (const ColumnFamilyDescriptor& d : column_families) {
      handles->push_back(
          new ColumnFamilyHandleImpl(impl->families_.FindByName(d.name), impl.get()));
    }
  }
  *dbptr = impl.release();
  return s;
}

Status DestroyDB(const std::string& dbname, const Options& options) {
  Env* env = options.env != nullptr ? options.env : Env::Default();
  std::vector<std::string> children;
  Status s = env->GetChildren(dbname, &children);
  if (!s.ok()) return Status::OK();  // nothing to destroy
  FileLock* lock;
  const std::string lockname = LockFileName(dbname);
  s = env->LockFile(lockname, &lock);
  if (!s.ok()) return s;
  for (const std::string& name : children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type) && type != kDBLockFile) {
      Status del = env->DeleteFile(dbname + "/" + name);
      if (s.ok() && !del.ok()) s = del;
    }
  }
  env->UnlockFile(lock).PermitUncheckedError();
  env->DeleteFile(lockname).PermitUncheckedError();
  env->DeleteDir(dbname).PermitUncheckedError();  // fails if other files remain: fine
  return s;
}

}  // namespace shale
