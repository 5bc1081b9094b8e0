// The DB's flushes: Flush, scheduling, and the background loop that turns immutable
// memtables into L0 files (FlushJob), records them in the MANIFEST and drops the memtables,
// after which the WAL files that fed them may be deleted.
#include <algorithm>
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
  std::vector<ColumnFamilyData*> cfds;
  for (ColumnFamilyHandle* cf : cfs) cfds.push_back(CfdOf(cf));
  Status switched = SwitchMemtablesForFlush(cfds);
  if (!switched.ok()) return switched;
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

Status DBImpl::FlushLiveFamilies(bool only_with_writes) {
  std::vector<ColumnFamilyHandleImpl> handles = LiveFamilyHandles(only_with_writes);
  std::vector<ColumnFamilyHandle*> cfs;
  for (ColumnFamilyHandleImpl& h : handles) cfs.push_back(&h);
  return Flush(FlushOptions(), cfs);
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
  if (read_only_) return;
  if (scheduler_.flush_scheduled() || shutting_down_ || !bg_error_.ok()) return;
  if (NextToFlush() == nullptr) return;
  scheduler_.ScheduleFlush([this] { BackgroundFlush(); });
}

void DBImpl::BackgroundFlush() {
  DbLock l(this);
  // Flushes run one at a time; families take turns, the smallest id with work first.
  for (FlushPick pick = PickFlush(); !pick.empty() && bg_error_.ok(); pick = PickFlush()) {
    Status s = FlushImmutables(pick);
    if (!s.ok()) {
      // The memtables stay in memory and their WALs on disk: nothing is lost, but the DB
      // refuses writes from now on with this error.
      RecordBackgroundError(s);
      break;
    }
    bg_cv_.SignalAll();
  }
  scheduler_.FlushCallDone();
  bg_cv_.SignalAll();
}

DBImpl::FlushPick DBImpl::PickFlush() {
  FlushPick pick;
  if (!options_.atomic_flush) {
    ColumnFamilyData* cfd = NextToFlush();
    if (cfd != nullptr) {
      HeldFor(cfd);
      pick.push_back({cfd, {cfd->imm().front()}});
    }
    return pick;
  }
  // Every switch took every family with data at once (MakeRoomForWrite), so the immutable
  // memtables of all families together hold every write below one sequence number: flushed
  // and recorded together, the families stay consistent with each other without a WAL.
  for (const auto& [id, cfd] : families_.live()) {
    HeldFor(cfd);
    if (!cfd->imm().empty()) pick.push_back({cfd, cfd->imm()});
  }
  return pick;
}

uint64_t DBImpl::MinLogWithUnflushedData(const std::vector<const MemTable*>& flushed) {
  uint64_t min_log = logfile_number_;
  for (const auto& [id, cfd] : families_.live()) {
    HeldFor(cfd);
    for (const MemTable* m : cfd->imm()) {
      if (std::find(flushed.begin(), flushed.end(), m) == flushed.end()) {
        min_log = std::min(min_log, m->GetLogNumber());
        break;  // the oldest left: the others are newer
      }
    }
    if (!cfd->mem()->IsEmpty()) min_log = std::min(min_log, cfd->mem()->GetLogNumber());
  }
  return min_log;
}

// One memtable's part of a flush.
struct DBImpl::FlushUnit {
  ColumnFamilyData* cfd;
  MemTable* mem;
  uint64_t job_id;
  uint64_t number;                         // the L0 file's
  std::shared_ptr<const Options> options;  // as they are now (compression, ...), for the job
  std::unique_ptr<FlushJob> job;
};

Status DBImpl::FlushImmutables(const FlushPick& pick) {
  std::vector<FlushUnit> units;
  std::vector<const MemTable*> flushed;
  for (const auto& [cfd, mems] : pick) {
    HeldFor(cfd);
    for (MemTable* mem : mems) {
      FlushUnit u{cfd,
                  mem,
                  next_job_id_.fetch_add(1),
                  versions_->NewFileNumber(),
                  cfd->current_options(),
                  nullptr};
      SHALE_LOG_INFO(info_log_,
                     "[%s] [JOB %" PRIu64 "] Flushing memtable of log %" PRIu64 ": %" PRIu64
                     " entries, %" PRIu64 " deletes, %zu bytes%s",
                     cfd->name().c_str(), u.job_id, mem->GetLogNumber(), mem->num_entries(),
                     mem->num_deletes(), mem->ApproximateMemoryUsage(),
                     options_.atomic_flush ? " (atomic flush)" : "");
      pending_outputs_.insert(u.number);
      mem->Ref();
      flushed.push_back(mem);
      units.push_back(std::move(u));
    }
  }
  // What the flush may drop depends on the snapshots live now; one taken later sees
  // nothing older than these memtables' newest entries (of those committed: see
  // BeginJobSnapshots).
  JobSnapshotContext snaps = BeginJobSnapshots();
  for (FlushUnit& u : units) {
    u.job = std::make_unique<FlushJob>(*u.options, dbname_, &u.cfd->internal_comparator(),
                                       u.cfd->table_cache(), db_dir_.get(), u.mem, snaps.snapshots,
                                       u.number);
    u.job->SetSnapshotChecker(snaps.checker.get(), snaps.job_snapshot);
    u.job->SetColumnFamilyId(u.cfd->id());
  }
  scheduler_.BeginFlush();
  UnlockDb();  // the SSTs are written and synced without the DB mutex
  // The WALs left unsynced, these memtables' among them, are made durable first, as
  // RocksDB's flush does (db/closed_wals.h).
  Status s = pipeline_->SyncClosedWals();
  for (FlushUnit& u : units) {
    if (s.ok()) s = u.job->Run();
  }
  LockDb();
  EndJobSnapshots(&snaps);
  scheduler_.EndFlush();
  // The memtables stay referenced by their families (or by us, if dropped meanwhile) until
  // the end.
  auto release = [&units, this] {
    AssertDbMutexHeld();
    for (FlushUnit& u : units) {
      pending_outputs_.erase(u.number);
      u.mem->Unref();
    }
  };
  if (!s.ok()) {
    SHALE_LOG_ERROR(info_log_, "[%s] [JOB %" PRIu64 "] Flush failed: %s",
                    units.front().cfd->name().c_str(), units.front().job_id, s.ToString().c_str());
    release();
    return s;
  }

  // One edit per family still live (a dropped family's files are recorded nowhere, and the
  // sweep deletes them). A family dropped while the edits wait their turn makes the group
  // fail before any I/O: it is made again without that family.
  const uint64_t min_log = MinLogWithUnflushedData(flushed);
  const uint64_t min_keep = options_.allow_2pc ? MinLogToKeepFor2PC(min_log, flushed) : min_log;
  std::vector<VersionEdit> edits;
  std::vector<VersionEdit*> group;
  std::vector<bool> recorded(pick.size());
  while (true) {
    edits.clear();
    group.clear();
    edits.reserve(pick.size());
    for (size_t i = 0; i < pick.size(); i++) {
      const auto& [cfd, mems] = pick[i];
      HeldFor(cfd);
      recorded[i] = !cfd->dropped() && versions_->HasFamily(cfd->id());
      if (!recorded[i]) continue;
      VersionEdit& edit = edits.emplace_back();
      edit.SetColumnFamily(cfd->id());
      for (const FlushUnit& u : units) {
        if (u.cfd == cfd) u.job->AddToEdit(&edit);
      }
      // Once these memtables are in SSTs, replay of this family may start at the WAL of its
      // next memtable, and recovery need not read WALs older than any family still needs.
      const MemTable* next_mem =
          cfd->imm().size() > mems.size() ? cfd->imm()[mems.size()] : cfd->mem();
      edit.SetLogNumber(next_mem->GetLogNumber());
      edit.SetPrevLogNumber(0);
      edit.SetMinLogNumberToKeep(min_keep);
      // The last sequence this flush makes durable: the one before the next memtable's
      // first. Writes published since went to newer memtables, and without the WAL a crash
      // loses them: the MANIFEST must not count them (RocksDB fixed the same in its PR 9305).
      const SequenceNumber next_first = next_mem->earliest_seqno();
      edit.SetLastSequence(next_first > 0 ? next_first - 1 : pipeline_->LastPublished());
    }
    for (VersionEdit& e : edits) group.push_back(&e);
    if (group.empty()) {
      s = Status::OK();  // every family of the flush was dropped: nothing to record
      break;
    }
    s = versions_->LogAndApply(group);
    if (s.ok() || !s.IsInvalidArgument()) break;
    const bool all_live = std::all_of(group.begin(), group.end(), [this](const VersionEdit* e) {
      AssertDbMutexHeld();
      return versions_->HasFamily(e->column_family());
    });
    if (all_live) break;  // not a drop: a real error
  }
  if (!s.ok()) {
    release();
    return s;
  }
  for (size_t i = 0; i < pick.size(); i++) {
    const auto& [cfd, mems] = pick[i];
    HeldFor(cfd);
    if (!recorded[i]) continue;
    for (const FlushUnit& u : units) {
      if (u.cfd != cfd) continue;
      const FileMetaData& meta = u.job->meta();
      LevelCompactionStats stats;
      stats.micros = u.job->elapsed_micros();
      stats.bytes_written = meta.file_size;
      stats.files_out = meta.file_size > 0 ? 1 : 0;
      stats.count = 1;
      stats.keys_in = u.mem->num_entries();
      internal_stats_->AddCompactionStats(cfd->id(), 0, stats);
      RecordTick(stats_, FLUSH_WRITE_BYTES, meta.file_size);
      RecordTimeToHistogram(stats_, FLUSH_TIME, stats.micros);
      Version* current = versions_->current(cfd->id());
      SHALE_LOG_INFO(info_log_,
                     "[%s] [JOB %" PRIu64 "] Level-0 flush table #%" PRIu64 ": %" PRIu64
                     " bytes, %" PRIu64 " entries, %" PRIu64 " micros, %" PRIu64
                     " cpu micros OK; %s",
                     cfd->name().c_str(), u.job_id, u.number, meta.file_size, meta.num_entries,
                     stats.micros, u.job->cpu_micros(),
                     current->LevelSummary(cfd->picker()->ScoresOf(current).base_level).c_str());
    }
    // Flushes run one at a time and switches only append: these are still the oldest.
    for (size_t n = 0; n < mems.size(); n++) {
      cfd->RemoveOldestImmutable(cfd->current_options()->write_buffer_size);
    }
    InstallNewSuperVersion(cfd);
  }
  release();
  RecalculateWriteStallConditions();
  MaybeScheduleCompaction();
  DeleteObsoleteFiles();
  return Status::OK();
}

}  // namespace shale
