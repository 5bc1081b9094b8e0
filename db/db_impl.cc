#include "db/db_impl.h"

#include <algorithm>

#include "db/db_iter.h"
#include "db/filename.h"
#include "db/merge_helper.h"
#include "db/write_batch_internal.h"
#include "table/merging_iterator.h"
#include "table/table_factory.h"
#include "util/logging.h"
#include "util/statistics.h"

namespace shale {

const std::string kDefaultColumnFamilyName("default");

DB::~DB() = default;

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

Options SanitizeOptions(const std::string& dbname, const Options& src) {
  Options result = src;
  if (result.env == nullptr) result.env = Env::Default();
  if (result.info_log == nullptr) result.info_log = OpenInfoLog(result.env, dbname, result);
  if (result.comparator == nullptr) result.comparator = BytewiseComparator();
  result.max_write_buffer_number = std::max(result.max_write_buffer_number, 2);
  result.write_buffer_size = std::clamp<size_t>(result.write_buffer_size, 4 << 10, 64ull << 30);
  result.max_background_jobs = std::max(result.max_background_jobs, 1);
  if (result.table_factory == nullptr) result.table_factory.reset(NewBlockBasedTableFactory());
  // stop >= slowdown >= compaction trigger >= 1, as RocksDB enforces: an L0 stop below the
  // compaction trigger would stop writes with nothing to clear it.
  int& trigger = result.level0_file_num_compaction_trigger;
  int& slowdown = result.level0_slowdown_writes_trigger;
  int& stop = result.level0_stop_writes_trigger;
  const int given[] = {stop, slowdown, trigger};
  trigger = std::max(trigger, 1);
  slowdown = std::max(slowdown, trigger);
  stop = std::max(stop, slowdown);
  if (stop != given[0] || slowdown != given[1] || trigger != given[2]) {
    SHALE_LOG_WARN(result.info_log.get(),
                   "level0 stop/slowdown/compaction triggers %d/%d/%d raised to %d/%d/%d "
                   "(each must be at least the next, and the compaction trigger at least 1)",
                   given[0], given[1], given[2], stop, slowdown, trigger);
  }
  return result;
}

WriteThread::WaitOptions WaitOptionsOf(const Options& o) {
  WriteThread::WaitOptions wait;
  wait.adaptive_yield = o.enable_write_thread_adaptive_yield;
  wait.max_yield_usec = o.write_thread_max_yield_usec;
  wait.slow_yield_usec = o.write_thread_slow_yield_usec;
  return wait;
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
  if (o.unordered_write && o.max_successive_merges != 0) {
    return Status::InvalidArgument(
        "max_successive_merges > 0 is incompatible with unordered_write");
  }
  if (o.two_write_queues && o.enable_pipelined_write) {
    // RocksDB answers this on every write; refusing the DB at Open says it once.
    return Status::NotSupported("pipelined_writes is not compatible with concurrent prepares");
  }
  return Status::OK();
}

// Compaction threads: RocksDB's split of max_background_jobs, a quarter (at least one) for
// flushes and the rest for compactions, unless the deprecated per-kind limits are both
// given. Flushes run one at a time whatever their share (see BackgroundScheduler).
int MaxCompactions(const Options& o) {
  if (o.max_background_flushes > 0 && o.max_background_compactions > 0) {
    return o.max_background_compactions;
  }
  const int flushes = std::max(1, o.max_background_jobs / 4);
  return std::max(1, o.max_background_jobs - flushes);
}

}  // namespace

DBImpl::DBImpl(const Options& options, const std::string& dbname)
    : dbname_(dbname),
      options_(SanitizeOptions(dbname, options)),
      env_(options_.env),
      scheduler_(MaxCompactions(options_)),
      write_thread_(
          WaitOptionsOf(options_),
          /*companion_wait=*/!options_.enable_pipelined_write && !options_.unordered_write),
      nonmem_write_thread_(WaitOptionsOf(options_)) {
  stats_ = options_.statistics.get();
  info_log_ = options_.info_log.get();
  default_cf_ = std::make_unique<ColumnFamilyData>(0, kDefaultColumnFamilyName, options_);
  default_cf_handle_ = std::make_unique<ColumnFamilyHandleImpl>(default_cf_.get());
  table_cache_ = std::make_unique<TableCache>(
      dbname_, options_, &default_cf_->internal_comparator(), options_.max_open_files);
  versions_ = std::make_unique<VersionSet>(dbname_, &options_, table_cache_.get(),
                                           &default_cf_->internal_comparator());
  picker_ = std::make_unique<CompactionPicker>(options_, &default_cf_->internal_comparator());
  internal_stats_ = std::make_unique<InternalStats>(options_.num_levels, env_->NowMicros());
}

DBImpl::~DBImpl() { CloseImpl().PermitUncheckedError(); }

Status DBImpl::Close() { return CloseImpl(); }

Status DBImpl::CloseImpl() {
  if (closed_) return Status::OK();
  closed_ = true;
  Status result;
  if (db_lock_ != nullptr) {
    // Writes made without the WAL live only in the memtable: flush them so Close loses
    // nothing, as RocksDB does unless avoid_flush_during_shutdown is set.
    bool flush_needed;
    {
      MutexLock l(&mutex_);
      flush_needed = has_unpersisted_data_ && bg_error_.ok();
    }
    if (flush_needed) result = Flush(FlushOptions(), DefaultColumnFamily());
  }
  {
    MutexLock l(&mutex_);
    shutting_down_ = true;
    shutting_down_flag_.store(true);
    stats_dump_cv_.SignalAll();
    while (!scheduler_.Idle()) bg_cv_.Wait();
    if (result.ok() && !bg_error_.ok()) result = bg_error_;
  }
  if (stats_dump_thread_.joinable()) stats_dump_thread_.join();
  // Idle was seen under the mutex with shutting_down_ set: nothing schedules any more.
  scheduler_.Stop();
  if (log_ != nullptr) {
    Status s = log_->Close();
    if (result.ok()) result = s;
    log_.reset();
  }
  {
    // Drop the read view before the Versions it pins.
    std::shared_ptr<SuperVersion> old = default_cf_->InstallSuperVersion(nullptr);
    old.reset();
  }
  if (db_lock_ != nullptr) {
    env_->UnlockFile(db_lock_).PermitUncheckedError();
    db_lock_ = nullptr;
  }
  SHALE_LOG_INFO(info_log_, "DB closed: %s", result.ToString().c_str());
  if (info_log_ != nullptr) info_log_->Flush();
  return result;
}

// ---- Writes: each builds a batch and goes through WriteImpl (db_impl_write.cc).

Status DBImpl::Put(const WriteOptions& o, ColumnFamilyHandle* cf, const Slice& key,
                   const Slice& value) {
  WriteBatch batch(key.size() + value.size() + 24);
  Status s = batch.Put(cf, key, value);
  if (!s.ok()) return s;
  return WriteImpl(o, &batch);
}

Status DBImpl::Delete(const WriteOptions& o, ColumnFamilyHandle* cf, const Slice& key) {
  WriteBatch batch(key.size() + 24);
  Status s = batch.Delete(cf, key);
  if (!s.ok()) return s;
  return WriteImpl(o, &batch);
}

Status DBImpl::SingleDelete(const WriteOptions& o, ColumnFamilyHandle* cf, const Slice& key) {
  WriteBatch batch(key.size() + 24);
  Status s = batch.SingleDelete(cf, key);
  if (!s.ok()) return s;
  return WriteImpl(o, &batch);
}

Status DBImpl::Merge(const WriteOptions& o, ColumnFamilyHandle* cf, const Slice& key,
                     const Slice& value) {
  if (options_.merge_operator == nullptr) {
    return Status::NotSupported("Provide a merge_operator when opening DB");
  }
  WriteBatch batch(key.size() + value.size() + 24);
  Status s = batch.Merge(cf, key, value);
  if (!s.ok()) return s;
  return WriteImpl(o, &batch);
}

Status DBImpl::Write(const WriteOptions& o, WriteBatch* updates) {
  if (updates == nullptr) return Status::InvalidArgument("Batch is nullptr!");
  return WriteImpl(o, updates);
}

// ---- Reads.

namespace {
// REQUIRES: cf is null or one of ours.
ColumnFamilyData* CfdOf(ColumnFamilyHandle* cf, ColumnFamilyData* def) {
  return cf == nullptr ? def : static_cast<ColumnFamilyHandleImpl*>(cf)->cfd();
}
}  // namespace

std::shared_ptr<SuperVersion> DBImpl::AcquireReadView(const ReadOptions& o, ColumnFamilyData* cfd,
                                                      SequenceNumber* seq) {
  *seq = o.snapshot != nullptr ? o.snapshot->GetSequenceNumber()
                               : last_published_.load(std::memory_order_acquire);
  return cfd->GetSuperVersion();
}

Status DBImpl::Get(const ReadOptions& o, ColumnFamilyHandle* cf, const Slice& key,
                   PinnableSlice* value) {
  ColumnFamilyData* cfd = CfdOf(cf, default_cf_.get());
  SequenceNumber seq;
  std::shared_ptr<SuperVersion> sv = AcquireReadView(o, cfd, &seq);
  if (sv == nullptr) return Status::ShutdownInProgress();
  StopWatch timer(env_, stats_, DB_GET);
  int level = -2;
  Status s = GetFromView(o, cfd, sv.get(), seq, nullptr, key, value, &level);
  RecordGetStats(level, s, *value);
  return s;
}

Status DBImpl::GetFromView(const ReadOptions& o, ColumnFamilyData* cfd, SuperVersion* sv,
                           SequenceNumber seq, ReadCallback* callback, const Slice& key,
                           PinnableSlice* value, int* found_level) {
  value->Reset();  // drops what a previous read pinned into it
  std::string* dst = value->GetSelf();
  const MergeOperator* merge_op = cfd->options().merge_operator.get();
  if (merge_op == nullptr) {
    // The first operand met ends the lookup with NotSupported. A value found in a file
    // stays in its block, pinned by *value, instead of being copied.
    Status s = LookupKeyIn(o, sv, key, seq, dst, nullptr, value, found_level, callback);
    if (s.ok() && !value->IsPinned()) value->PinSelf();
    return s;
  }
  MergeContext mc;  // memtable operands are referenced: sv keeps the memtables alive
  mc.merge_operator = merge_op;
  Status s = LookupKeyIn(o, sv, key, seq, dst, &mc, nullptr, found_level, callback);
  if (mc.empty() || !(s.ok() || s.IsNotFound() || s.IsMergeInProgress())) {
    if (s.ok()) value->PinSelf();
    return s;
  }
  std::string merged;
  const Slice base(*dst);
  s = FullMergeOperands(merge_op, key, s.ok() ? &base : nullptr, mc.GetOperands(), &merged,
                        info_log_);
  if (!s.ok()) {
    RecordTick(stats_, NUMBER_MERGE_FAILURES);
    return s;
  }
  dst->swap(merged);
  value->PinSelf();
  return s;
}

void DBImpl::RecordLookupLevel(int level) {
  if (stats_ == nullptr) return;
  stats_->recordTick(level == -1 ? MEMTABLE_HIT : MEMTABLE_MISS);
  if (level == 0) stats_->recordTick(GET_HIT_L0);
  if (level == 1) stats_->recordTick(GET_HIT_L1);
  if (level >= 2) stats_->recordTick(GET_HIT_L2_AND_UP);
}

void DBImpl::RecordGetStats(int level, const Status& s, const Slice& value) {
  if (stats_ == nullptr) return;
  stats_->recordTick(NUMBER_KEYS_READ);
  RecordLookupLevel(level);
  if (s.ok()) {
    stats_->recordTick(BYTES_READ, value.size());
    stats_->recordInHistogram(BYTES_PER_READ, value.size());
  }
}

Iterator* DBImpl::NewIterator(const ReadOptions& o, ColumnFamilyHandle* cf) {
  ColumnFamilyData* cfd = CfdOf(cf, default_cf_.get());
  SequenceNumber seq;
  std::shared_ptr<SuperVersion> sv = AcquireReadView(o, cfd, &seq);
  if (sv == nullptr) return NewErrorIterator(Status::ShutdownInProgress());
  std::vector<InternalIterator*> children;
  children.push_back(sv->mem->NewIterator());
  for (MemTable* m : sv->imm) children.push_back(m->NewIterator());
  sv->current->AddIterators(o, &children);
  InternalIterator* merged = NewMergingIterator(&cfd->internal_comparator(), children.data(),
                                                static_cast<int>(children.size()));
  Iterator* iter =
      NewDBIterator(o, cfd->user_comparator(), merged, seq, nullptr, kDefaultMaxSequentialSkip,
                    cfd->options().merge_operator.get(), info_log_, stats_);
  // The iterator keeps the view (and so its memtables and files) alive until deleted.
  auto* pinned = new std::shared_ptr<SuperVersion>(std::move(sv));
  iter->RegisterCleanup(
      [](void* arg1, void* arg2) {
        auto* view = static_cast<std::shared_ptr<SuperVersion>*>(arg1);
        static_cast<DBImpl*>(arg2)->ReleaseIteratorView(view);
      },
      pinned, this);
  return iter;
}

void DBImpl::ReleaseIteratorView(std::shared_ptr<SuperVersion>* view) {
  // The last holder of an outdated view frees the files only it kept: delete them now, as
  // RocksDB does when an iterator goes, rather than at the next flush or compaction.
  const bool last_holder = view->use_count() == 1;
  Version* const held = (*view)->current;
  delete view;
  if (!last_holder) return;
  MutexLock l(&mutex_);
  if (versions_->current() != held && !shutting_down_) DeleteObsoleteFiles();
}

const Snapshot* DBImpl::GetSnapshot() {
  MutexLock l(&mutex_);
  return snapshots_.New(last_published_.load(std::memory_order_acquire));
}

void DBImpl::ReleaseSnapshot(const Snapshot* snapshot) {
  if (snapshot == nullptr) return;
  MutexLock l(&mutex_);
  snapshots_.Delete(static_cast<const SnapshotImpl*>(snapshot));
}

Options DBImpl::GetOptions(ColumnFamilyHandle* cf) const {
  return CfdOf(cf, default_cf_.get())->options();
}

int DBImpl::TEST_NumImmutableMemtables() {
  MutexLock l(&mutex_);
  return static_cast<int>(default_cf_->imm().size());
}

// ---- Bookkeeping.

void DBImpl::InstallNewSuperVersion() {
  tree_version_++;
  ColumnFamilyData* cfd = default_cf_.get();
  Version* current = versions_->current();
  current->Ref();
  auto* raw = new SuperVersion;
  raw->mem = cfd->mem();
  raw->mem->Ref();
  for (auto it = cfd->imm().rbegin(); it != cfd->imm().rend(); ++it) {
    (*it)->Ref();
    raw->imm.push_back(*it);
  }
  raw->current = current;
  // The old view is dropped by its last reader; Version and MemTable references are
  // thread-safe, so that may happen on any thread without the DB mutex.
  cfd->InstallSuperVersion(std::shared_ptr<SuperVersion>(raw));
}

std::vector<double> DBImpl::LevelScores() {
  Version* current = versions_->current();
  std::vector<double> scores(current->NumLevels(), 0.0);
  for (int level = 0; level < current->NumLevels(); level++) {
    scores[level] = current->LevelScore(level);
  }
  return scores;
}

uint64_t DBImpl::EstimatePendingCompactionBytes() {
  return versions_->current()->EstimatedCompactionNeededBytes();
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
    bg_cv_.SignalAll();
  }
}

void DBImpl::DeleteObsoleteFiles() {
  if (!bg_error_.ok()) return;  // the state of the files may be unknown
  std::set<uint64_t> live = pending_outputs_;
  versions_->AddLiveFiles(&live);
  const uint64_t min_log = default_cf_->MinLogNumberToKeep();
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
      if (type == kTableFile) table_cache_->Evict(number);
    }
  }
  // Deleting is I/O: do it without the mutex. The files are unreachable by now.
  mutex_.Unlock();
  for (const std::string& name : to_delete) {
    env_->DeleteFile(dbname_ + "/" + name).PermitUncheckedError();
  }
  mutex_.Lock();
}

// ---- Open and destroy.

Status DB::Open(const Options& options, const std::string& name, std::unique_ptr<DB>* dbptr) {
  DB* db = nullptr;
  Status s = Open(options, name, &db);
  dbptr->reset(db);
  return s;
}

Status DB::Open(const Options& options, const std::string& name, DB** dbptr) {
  *dbptr = nullptr;
  if (options.manual_wal_flush) return Status::NotSupported("manual_wal_flush");
  if (Status s = ValidateWriteModes(options); !s.ok()) return s;
  if (!CompressionTypeSupported(options.compression)) {
    return Status::InvalidArgument("Compression type ",
                                   CompressionTypeToString(options.compression) +
                                       std::string(" is not linked with the binary."));
  }
  if (options.table_factory != nullptr &&
      std::string(options.table_factory->Name()) != "BlockBasedTable") {
    return Status::NotSupported("table factory", options.table_factory->Name());
  }
  auto impl = std::make_unique<DBImpl>(options, name);
  impl->LogOptionsAtOpen();
  Status s;
  {
    MutexLock l(&impl->mutex_);
    s = impl->Recover();
    if (s.ok()) s = impl->FinishOpen();
  }
  if (!s.ok()) {
    SHALE_LOG_ERROR(impl->info_log_, "DB::Open failed: %s", s.ToString().c_str());
    return s;
  }
  SHALE_LOG_INFO(impl->info_log_, "DB::Open done: %s", name.c_str());
  impl->StartStatsDump();
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
