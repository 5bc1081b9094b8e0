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

Status DBImpl::Flush(const FlushOptions& o, ColumnFamilyHandle*) {
  Status s = SwitchMemtableForFlush();
  if (!s.ok()) return s;
  DbLock l(this);
  if (!o.wait) return bg_error_;
  while (!default_cf_->imm().empty() && bg_error_.ok()) {
    MaybeScheduleFlush();
    bg_cv_.Wait(&mutex_);
  }
  if (bg_error_.ok() && default_cf_->mem()->IsEmpty()) pipeline_->ClearUnpersisted();
  return bg_error_;
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
  if (default_cf_->imm().empty()) return;
  scheduler_.ScheduleFlush([this] { BackgroundFlush(); });
}

void DBImpl::BackgroundFlush() {
  DbLock l(this);
  while (!default_cf_->imm().empty() && bg_error_.ok()) {
    Status s = FlushOldestImmutable();
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

Status DBImpl::FlushOldestImmutable() {
  MemTable* mem = default_cf_->imm().front();
  const uint64_t job_id = next_job_id_.fetch_add(1);
  SHALE_LOG_INFO(info_log_,
                 "[default] [JOB %" PRIu64 "] Flushing memtable of log %" PRIu64 ": %" PRIu64
                 " entries, %" PRIu64 " deletes, %zu bytes",
                 job_id, mem->GetLogNumber(), mem->num_entries(), mem->num_deletes(),
                 mem->ApproximateMemoryUsage());
  const uint64_t number = versions_->NewFileNumber();
  pending_outputs_.insert(number);
  // What the flush may drop depends on the snapshots live now; one taken later sees
  // nothing older than this memtable's newest entry (of those committed: see
  // BeginJobSnapshots).
  JobSnapshotContext snaps = BeginJobSnapshots();
  // The options as they are now (compression, ...), held for the job's life.
  const std::shared_ptr<const Options> job_options = current_options_;
  FlushJob job(*job_options, dbname_, &default_cf_->internal_comparator(), table_cache_.get(),
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
    SHALE_LOG_ERROR(info_log_, "[default] [JOB %" PRIu64 "] Flush failed: %s", job_id,
                    s.ToString().c_str());
    pending_outputs_.erase(number);
    return s;
  }

  VersionEdit edit;
  job.AddToEdit(&edit);
  // Once this memtable is in an SST, replay may start at the WAL of the next memtable.
  const MemTable* next_mem =
      default_cf_->imm().size() > 1 ? default_cf_->imm()[1] : default_cf_->mem();
  const uint64_t next_log = next_mem->GetLogNumber();
  edit.SetLogNumber(next_log);
  edit.SetPrevLogNumber(0);
  if (options_.allow_2pc) edit.SetMinLogNumberToKeep(MinLogToKeepFor2PC(next_log, mem));
  // The last sequence this flush makes durable: the one before the next memtable's first.
  // Writes published since went to newer memtables, and without the WAL a crash loses
  // them: the MANIFEST must not count them (RocksDB fixed the same in its PR 9305).
  const SequenceNumber next_first = next_mem->earliest_seqno();
  edit.SetLastSequence(next_first > 0 ? next_first - 1 : pipeline_->LastPublished());
  s = versions_->LogAndApply(&edit);
  pending_outputs_.erase(number);
  if (!s.ok()) return s;
  const FileMetaData& meta = job.meta();
  LevelCompactionStats stats;
  stats.micros = job.elapsed_micros();
  stats.bytes_written = meta.file_size;
  stats.files_out = meta.file_size > 0 ? 1 : 0;
  stats.count = 1;
  stats.keys_in = mem->num_entries();
  internal_stats_->AddCompactionStats(0, stats);
  RecordTick(stats_, FLUSH_WRITE_BYTES, meta.file_size);
  RecordTimeToHistogram(stats_, FLUSH_TIME, stats.micros);
  SHALE_LOG_INFO(info_log_,
                 "[default] [JOB %" PRIu64 "] Level-0 flush table #%" PRIu64 ": %" PRIu64
                 " bytes, %" PRIu64 " entries, %" PRIu64 " micros, %" PRIu64 " cpu micros OK; %s",
                 job_id, number, meta.file_size, meta.num_entries, stats.micros, job.cpu_micros(),
                 versions_->current()
                     ->LevelSummary(picker_->ScoresOf(versions_->current()).base_level)
                     .c_str());
  default_cf_->RemoveOldestImmutable(current_options_->write_buffer_size);
  InstallNewSuperVersion();
  RecalculateWriteStallConditions();
  MaybeScheduleCompaction();
  DeleteObsoleteFiles();
  return Status::OK();
}

}  // namespace shale
