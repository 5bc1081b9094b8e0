// DBImpl's life and bookkeeping: construction, Close, the SuperVersion readers pin,
// background errors and the sweep of obsolete files. The rest of DBImpl is cut along the
// data flow: db_impl_write.cc (writes), db_impl_read.cc, db_impl_merge.cc and
// db_impl_multiget.cc (reads), db_impl_flush.cc and db_impl_compaction.cc (background
// work), db_impl_open.cc (open and recovery), db_impl_files.cc (the DB's files for
// copies: live files, metadata, WALs, the file-deletion count), db_properties.cc,
// db_info_log.cc and db_debug.cc.
#include "db/db_impl.h"

#include <algorithm>

#include "db/filename.h"
#include "table/table_factory.h"
#include "util/logging.h"

namespace shale {

const std::string kDefaultColumnFamilyName("default");

DB::~DB() = default;

DBImpl::DBImpl(const Options& options, const std::string& dbname, bool seq_per_batch,
               bool read_only)
    : dbname_(dbname),
      options_(SanitizeOptions(dbname, options, read_only)),
      env_(options_.env),
      scheduler_(CompactionThreads(options_)),
      seq_per_batch_(seq_per_batch),
      read_only_(read_only),
      memtable_blocks_(std::make_shared<ArenaBlockPool>(options_.write_buffer_size)) {
  stats_ = options_.statistics.get();
  info_log_ = options_.info_log.get();
  current_options_ = std::make_shared<const Options>(options_);
  write_buffer_manager_ = options_.write_buffer_manager;
  if (write_buffer_manager_ == nullptr && options_.db_write_buffer_size > 0) {
    write_buffer_manager_ = std::make_shared<WriteBufferManager>(options_.db_write_buffer_size);
  }
  {
    DbLock l(this);
    default_cf_ = families_.Create(0, kDefaultColumnFamilyName, options_);
    families_.MakeLive(default_cf_);
    default_cf_->SetCurrentOptions(current_options_);
  }
  default_cf_handle_ = std::make_unique<ColumnFamilyHandleImpl>(default_cf_, this);
  versions_ =
      std::make_unique<VersionSet>(dbname_, &default_cf_->options(), default_cf_->table_cache(),
                                   &default_cf_->internal_comparator(), &mutex_);
  internal_stats_ = std::make_unique<InternalStats>(env_->NowMicros(), &mutex_);
  WritePipeline::Host* host = this;  // a private base: the pipeline is all that sees it
  pipeline_ = std::make_unique<WritePipeline>(options_, seq_per_batch, host, this,
                                              internal_stats_.get(), stats_);
}

DBImpl::~DBImpl() { CloseImpl().PermitUncheckedError(); }

Status DBImpl::Close() { return CloseImpl(); }

void DBImpl::StopBackgroundThreads() {
  // Idle was seen under the mutex with shutting_down_ set: nothing schedules any more, and
  // Stop touches no state the mutex guards (BackgroundScheduler's contract).
  scheduler_.Stop();
}

Status DBImpl::CloseImpl() {
  if (closed_) return Status::OK();
  closed_ = true;
  Status result;
  if (db_lock_ != nullptr) {
    // Writes made without the WAL live only in the memtable: flush them so Close loses
    // nothing, as RocksDB does unless avoid_flush_during_shutdown is set.
    bool flush_needed;
    {
      DbLock l(this);
      flush_needed = pipeline_->has_unpersisted_data() && bg_error_.ok();
    }
    if (flush_needed) {
      result = FlushLiveFamilies(/*only_with_writes=*/false);
    }
  }
  {
    DbLock l(this);
    shutting_down_.store(true);
    stats_dump_cv_.SignalAll();
    while (!scheduler_.Idle()) bg_cv_.Wait(&mutex_);
    if (result.ok() && !bg_error_.ok()) result = bg_error_;
  }
  if (stats_dump_thread_.joinable()) stats_dump_thread_.join();
  StopBackgroundThreads();
  Status closed = pipeline_->CloseWals();
  if (result.ok()) result = closed;
  {
    // Drop the read view, and every reader thread's cached reference, before the
    // Versions it pins.
    DbLock l(this);
    for (const auto& cfd : families_.all()) {
      HeldFor(cfd.get());
      cfd->InstallSuperVersion(nullptr);
    }
  }
  if (db_lock_ != nullptr) {
    env_->UnlockFile(db_lock_).PermitUncheckedError();
    db_lock_ = nullptr;
  }
  SHALE_LOG_INFO(info_log_, "DB closed: %s", result.ToString().c_str());
  if (info_log_ != nullptr) info_log_->Flush();
  return result;
}

Options DBImpl::GetOptions(ColumnFamilyHandle* cf) const {
  if (!IsOwnFamily(cf)) return Options();
  ColumnFamilyData* cfd = CfdOf(cf);
  DbLock l(this);
  HeldFor(cfd);
  return *cfd->current_options();
}

DBOptions DBImpl::GetDBOptions() const {
  DbLock l(this);
  return *current_options_;
}

std::vector<ColumnFamilyHandleImpl> DBImpl::LiveFamilyHandles(bool only_with_writes) {
  std::vector<ColumnFamilyHandleImpl> handles;
  DbLock l(this);
  for (const auto& [id, cfd] : families_.live()) {
    HeldFor(cfd);
    if (!only_with_writes || !cfd->mem()->IsEmpty()) handles.emplace_back(cfd, this);
  }
  return handles;
}

int DBImpl::TEST_NumImmutableMemtables(ColumnFamilyHandle* cf) {
  ColumnFamilyData* cfd = CfdOf(cf);
  DbLock l(this);
  HeldFor(cfd);
  return static_cast<int>(cfd->imm().size());
}

bool DBImpl::TEST_ActiveMemtableHasFilter() {
  DbLock l(this);
  return default_cf_->mem()->has_filter();
}

// ---- Bookkeeping.

void DBImpl::InstallNewSuperVersion(ColumnFamilyData* cfd) {
  HeldFor(cfd);
  tree_version_++;
  Version* current = versions_->current(cfd->id());
  if (current == nullptr) return;  // dropped: its view stays as it was
  current->Ref();
  auto* raw = new SuperVersion;
  raw->mem = cfd->mem();
  raw->mem->Ref();
  for (auto it = cfd->imm().rbegin(); it != cfd->imm().rend(); ++it) {
    (*it)->Ref();
    raw->imm.push_back(*it);
  }
  for (MemTable* m : cfd->history()) {
    m->Ref();
    raw->history.push_back(m);
  }
  raw->current = current;
  // The old view is dropped by its last reader; Version and MemTable references are
  // thread-safe, so that may happen on any thread without the DB mutex.
  cfd->InstallSuperVersion(raw);
}

std::vector<double> DBImpl::ScoresPerLevel(ColumnFamilyData* cfd) {
  HeldFor(cfd);
  return cfd->picker()->ScoresOf(versions_->current(cfd->id())).score;
}

uint64_t DBImpl::EstimatePendingCompactionBytes(ColumnFamilyData* cfd) {
  HeldFor(cfd);
  Version* current = versions_->current(cfd->id());
  if (current == nullptr) return 0;
  return cfd->picker()->ScoresOf(current).estimated_compaction_needed_bytes;
}

LevelScores DBImpl::TEST_LevelScores() {
  DbLock l(this);
  return default_cf_->picker()->ScoresOf(versions_->current());
}

bool DBImpl::BlockCacheUsage(uint64_t* value) const {
  if (options_.table_factory == nullptr ||
      std::string(options_.table_factory->Name()) != BlockBasedTableFactory::kClassName) {
    return false;
  }
  const auto* factory = static_cast<const BlockBasedTableFactory*>(options_.table_factory.get());
  const std::shared_ptr<Cache>& cache = factory->table_options().block_cache;
  if (cache == nullptr) return false;  // no_block_cache
  *value = cache->GetUsage();
  return true;
}

void DBImpl::RecordBackgroundError(const Status& s) {
  if (bg_error_.ok() && !s.ok()) {
    bg_error_ = s;
    has_bg_error_.store(true, std::memory_order_release);
    bg_cv_.SignalAll();
  }
}

void DBImpl::DeleteObsoleteFiles() {
  if (read_only_) return;       // the files are another instance's, or nobody's to delete
  if (!bg_error_.ok()) return;  // the state of the files may be unknown
  // DisableFileDeletions (db_impl_files.cc); the EnableFileDeletions that ends it sweeps.
  if (file_deletions_disabled_ > 0) return;
  std::set<uint64_t> live = pending_outputs_;
  versions_->AddLiveFiles(&live);
  // Only WALs the MANIFEST says recovery no longer reads: the oldest a family still needed,
  // or a prepared transaction's, when the last flush or recovery was recorded.
  const uint64_t min_log = versions_->MinLogNumberToKeep() != 0 ? versions_->MinLogNumberToKeep()
                                                                : versions_->LogNumber();
  const uint64_t manifest = versions_->ManifestFileNumber();

  std::vector<std::string> children;
  if (!env_->GetChildren(dbname_, &children).ok()) return;
  std::vector<std::string> to_delete;
  for (const std::string& name : children) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(name, &number, &type)) continue;
    bool keep = true;
    switch (type) {
      case kWalFile: keep = number >= min_log || number == logfile_number_; break;
      case kDescriptorFile: keep = number >= manifest; break;
      case kTableFile: keep = live.count(number) > 0; break;
      // A temp file numbered past the live MANIFEST may be a CURRENT switch in progress.
      case kTempFile: keep = number >= manifest || live.count(number) > 0; break;
      default: keep = true;
    }
    if (!keep) {
      to_delete.push_back(name);
      if (type == kTableFile) {
        for (const auto& cfd : families_.all()) cfd->table_cache()->Evict(number);
      }
    }
  }
  // Deleting is I/O: do it without the mutex. The files are unreachable by now.
  sweeps_deleting_++;
  UnlockDb();
  for (const std::string& name : to_delete) {
    env_->DeleteFile(dbname_ + "/" + name).PermitUncheckedError();
  }
  LockDb();
  if (--sweeps_deleting_ == 0) bg_cv_.SignalAll();
}

}  // namespace shale
