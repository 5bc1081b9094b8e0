// The DB's flushes: Flush, scheduling, and the background loop that turns immutable
// memtables into L0 files (FlushJob), records them in the MANIFEST and drops the memtables,
// after which the WAL files that fed them may be deleted.
#include <cinttypes>
#include <utility>

#include "db/db_impl.h"
#include "db/flush_job.h"
#include "util/logging.h"
#include "util/statistics.h"

namespace shale {

Status DBImpl::Flush(const FlushOptions& o, ColumnFamilyHandle* cf) {
  return Flush(o, std::vector<ColumnFamilyHandle*>{cf});
}

Status DBImpl::Flush(const FlushOptions& o, const std::vector<ColumnFamilyHandle*>& cfs) {
  for (ColumnFamilyHandle* cf : cfs) {
    if (!IsOwnFamily(cf)) return Status::InvalidArgument("column family is not this DB's");
    if (CfdOf(cf)->dropped()) return Status::ColumnFamilyDropped(CfdOf(cf)->name());
  }
  for (ColumnFamilyHandle* cf : cfs) {
    Status s = SwitchMemtableForFlush(CfdOf(cf));
    if (!s.ok()) return s;
  }
  DbLock l(this);
  if (!o.wait) return bg_error_;
  for (ColumnFamilyHandle* cf : cfs) {
    Status s = WaitForFlushOf(CfdOf(cf));
    if (!s.ok()) return s;
  }
  // Writes made without the WAL are all in SST files once every family's are.
  bool all_flushed = true;
  for (const auto& [id, cfd] : families_.live()) {
    HeldFor(cfd);
    all_flushed = all_flushed && cfd->NothingUnflushed();
  }
  if (all_flushed) pipeline_->ClearUnpersisted();
  return Status::OK();
}

Status DBImpl::WaitForFlushOf(ColumnFamilyData* cfd) {
  HeldFor(cfd);
  while (!cfd->imm().empty() && bg_error_.ok() && !cfd->dropped()) {
    MaybeScheduleFlush();
    bg_cv_.Wait(&mutex_);
  }
  return bg_error_;
}

ColumnFamilyData* DBImpl::NextToFlush() {
  for (const auto& [id, cfd] : families_.live()) {
    HeldFor(cfd);
    if (!cfd->imm().empty()) return cfd;
  }
  return nullptr;
}

void DBImpl::SetSnapshotChecker(std::shared_ptr<const SnapshotChecker> checker) {
  DbLock l(this);
  snapshot_checker_ = std::move(checker);
}

JobSnapshotContext DBImpl::BeginJobSnapshots() {
  JobSnapshotContext ctx;
  ctx.checker = snapshot_checker_;
  // A WritePrepared DB without its checker yet (recovery, or just opened): what is
  // committed is unknown, so nothing may hide or drop anything.
  if (ctx.checker == nullptr && seq_per_batch_)
    ctx.checker = std::make_shared<KeepAllSnapshotChecker>();
  MutexLock snapshots_lock(&snapshots_mu_);
  if (ctx.checker != nullptr) {
    // Entries may commit while the job runs, and a snapshot taken meanwhile is not in its
    // list: judged by the latest state, a Delete committed after that snapshot would hide
    // the Put the snapshot still reads (RocksDB 4883). The job reads as of a snapshot of
    // its own instead, taken before the list so that the list holds it, and kept live
    // (the checker's owner must go on answering for it) until the job ends.
    // The bound is read first, so that it holds for the snapshot taken after it.
    const SequenceNumber min_uncommitted = ctx.checker->SmallestUncommitted();
    const SnapshotImpl* own = snapshots_.New(pipeline_->LastPublished());
    ctx.held = own;
    ctx.job_snapshot = own->GetSequenceNumber();
    if (min_uncommitted > 0) {
      ctx.checker = std::make_shared<JobSnapshotChecker>(std::move(ctx.checker), ctx.job_snapshot,
                                                         min_uncommitted);
    }
  }
  ctx.snapshots = snapshots_.GetAll();
  return ctx;
}

void DBImpl::EndJobSnapshots(JobSnapshotContext* ctx) {
  MutexLock snapshots_lock(&snapshots_mu_);
  if (ctx->held != nullptr) snapshots_.Delete(static_cast<const SnapshotImpl*>(ctx->held));
  ctx->held = nullptr;
}

void DBImpl::MaybeScheduleFlush() {
  if (scheduler_.flush_scheduled() || shutting_down_ || !bg_error_.ok()) return;
  if (NextToFlush() == nullptr) return;
  scheduler_.ScheduleFlush([this] { BackgroundFlush(); });
}

void DBImpl::BackgroundFlush() {
  DbLock l(this);
  // Flushes run one at a time; families take turns, the smallest id with work first.
  for (ColumnFamilyData* cfd = NextToFlush(); cfd != nullptr && bg_error_.ok();
       cfd = NextToFlush()) {
    Status s = FlushOldestImmutable(cfd);
    if (!s.ok()) {
      // The memtable stays in memory and its WAL on disk: nothing is lost, but the DB
      // refuses writes from now on with this error.
      RecordBackgroundError(s);
      break;
    }
    bg_cv_.SignalAll();
  }
  scheduler_.FlushCallDone();
  bg_cv_.SignalAll();
}

uint64_t DBImpl::MinLogWithUnflushedData(const MemTable* skip) {
  uint64_t min_log = logfile_number_;
  for (const auto& [id, cfd] : families_.live()) {
    HeldFor(cfd);
    for (const MemTable* m : cfd->imm()) {
      if (m != skip) {
        min_log = std::min(min_log, m->GetLogNumber());
        break;  // the oldest left: the others are newer
      }
    }
    if (!cfd->mem()->IsEmpty()) min_log = std::min(min_log, cfd->mem()->GetLogNumber());
  }
  return min_log;
}

Status DBImpl::FlushOldestImmutable(ColumnFamilyData* cfd) {
  HeldFor(cfd);
  MemTable* mem = cfd->imm().front();
  const uint64_t job_id = next_job_id_.fetch_add(1);
  const char* name = cfd->name().c_str();
  SHALE_LOG_INFO(info_log_,
                 "[%s] [JOB %" PRIu64 "] Flushing memtable of log %" PRIu64 ": %" PRIu64
                 " entries, %" PRIu64 " deletes, %zu bytes",
                 name, job_id, mem->GetLogNumber(), mem->num_entries(), mem->num_deletes(),
                 mem->ApproximateMemoryUsage());
  const uint64_t number = versions_->NewFileNumber();
  pending_outputs_.insert(number);
  // What the flush may drop depends on the snapshots live now; one taken later sees
  // nothing older than this memtable's newest entry (of those committed: see
  // BeginJobSnapshots).
  JobSnapshotContext snaps = BeginJobSnapshots();
  // The options as they are now (compression, ...), held for the job's life.
  const std::shared_ptr<const Options> job_options = cfd->current_options();
  FlushJob job(*job_options, dbname_, &cfd->internal_comparator(), cfd->table_cache(),
               db_dir_.get(), mem, snaps.snapshots, number);
  job.SetSnapshotChecker(snaps.checker.get(), snaps.job_snapshot);
  mem->Ref();
  scheduler_.BeginFlush();
  UnlockDb();  // the SST is written and synced without the DB mutex
  // The WALs left unsynced, this memtable's among them, are made durable first, as
  // RocksDB's flush does (db/closed_wals.h).
  Status s = pipeline_->SyncClosedWals();
  if (s.ok()) s = job.Run();
  LockDb();
  EndJobSnapshots(&snaps);
  scheduler_.EndFlush();
  mem->Unref();
  if (!s.ok()) {
    SHALE_LOG_ERROR(info_log_, "[%s] [JOB %" PRIu64 "] Flush failed: %s", name, job_id,
                    s.ToString().c_str());
    pending_outputs_.erase(number);
    return s;
  }

  if (cfd->dropped()) {
    // Dropped while the file was written: nothing records it, and the sweep deletes it.
    pending_outputs_.erase(number);
    return Status::OK();
  }
  VersionEdit edit;
  edit.SetColumnFamily(cfd->id());
  job.AddToEdit(&edit);
  // Once this memtable is in an SST, replay of this family may start at the WAL of its
  // next memtable, and recovery need not read WALs older than any family still needs.
  const MemTable* next_mem = cfd->imm().size() > 1 ? cfd->imm()[1] : cfd->mem();
  const uint64_t next_log = next_mem->GetLogNumber();
  edit.SetLogNumber(next_log);
  edit.SetPrevLogNumber(0);
  const uint64_t min_log = MinLogWithUnflushedData(mem);
  edit.SetMinLogNumberToKeep(options_.allow_2pc ? MinLogToKeepFor2PC(min_log, mem) : min_log);
  // The last sequence this flush makes durable: the one before the next memtable's first.
  // Writes published since went to newer memtables, and without the WAL a crash loses
  // them: the MANIFEST must not count them (RocksDB fixed the same in its PR 9305).
  const SequenceNumber next_first = next_mem->earliest_seqno();
  edit.SetLastSequence(next_first > 0 ? next_first - 1 : pipeline_->LastPublished());
  s = versions_->LogAndApply(&edit);
  pending_outputs_.erase(number);
  if (!s.ok() && cfd->dropped()) return Status::OK();  // dropped while waiting its turn
  if (!s.ok()) return s;
  const FileMetaData& meta = job.meta();
  LevelCompactionStats stats;
  stats.micros = job.elapsed_micros();
  stats.bytes_written = meta.file_size;
  stats.files_out = meta.file_size > 0 ? 1 : 0;
  stats.count = 1;
  stats.keys_in = mem->num_entries();
  if (cfd == default_cf_) internal_stats_->AddCompactionStats(0, stats);
  RecordTick(stats_, FLUSH_WRITE_BYTES, meta.file_size);
  RecordTimeToHistogram(stats_, FLUSH_TIME, stats.micros);
  Version* current = versions_->current(cfd->id());
  SHALE_LOG_INFO(info_log_,
                 "[%s] [JOB %" PRIu64 "] Level-0 flush table #%" PRIu64 ": %" PRIu64
                 " bytes, %" PRIu64 " entries, %" PRIu64 " micros, %" PRIu64 " cpu micros OK; %s",
                 name, job_id, number, meta.file_size, meta.num_entries, stats.micros,
                 job.cpu_micros(),
                 current->LevelSummary(cfd->picker()->ScoresOf(current).base_level).c_str());
  cfd->RemoveOldestImmutable(cfd->current_options()->write_buffer_size);
  InstallNewSuperVersion(cfd);
  RecalculateWriteStallConditions();
  MaybeScheduleCompaction();
  DeleteObsoleteFiles();
  return Status::OK();
}

}  // namespace shale
