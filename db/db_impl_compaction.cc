// Background compaction in the DB: scheduling picked compactions on the compaction pool,
// running them (or trivially moving a file) and installing the result; manual
// CompactRange; WaitForCompact.
#include <algorithm>

#include "db/compaction_job.h"
#include "db/compaction_picker.h"
#include "db/db_impl.h"

namespace shale {

bool DBImpl::FamilyNeedsCompaction(ColumnFamilyData* cfd) {
  HeldFor(cfd);
  if (cfd->current_options()->disable_auto_compactions) return false;
  if (tree_version_ == cfd->nothing_to_pick_at) return false;  // a pick found nothing here
  return cfd->picker()->NeedsCompaction(versions_->current(cfd->id()));
}

void DBImpl::MaybeScheduleCompaction() {
  if (read_only_) return;
  if (shutting_down_ || !bg_error_.ok() || manual_compactions_waiting_ > 0) return;
  if (!scheduler_.CanScheduleCompaction()) return;
  for (const auto& [id, cfd] : families_.live()) {
    if (FamilyNeedsCompaction(cfd)) {
      scheduler_.ScheduleCompaction([this] { BackgroundCompactionCall(); });
      return;
    }
  }
}

void DBImpl::BackgroundCompactionCall() {
  DbLock l(this);
  bool picked = false;
  if (!shutting_down_ && bg_error_.ok() && manual_compactions_waiting_ == 0) {
    // Families take turns: the first one at or after the last pick's that has work.
    ColumnFamilyData* cfd = nullptr;
    const auto& live = families_.live();
    for (auto it = live.lower_bound(next_compaction_family_); cfd == nullptr && it != live.end();
         ++it) {
      if (FamilyNeedsCompaction(it->second)) cfd = it->second;
    }
    for (auto it = live.begin(); cfd == nullptr && it != live.end(); ++it) {
      if (FamilyNeedsCompaction(it->second)) cfd = it->second;
    }
    std::unique_ptr<Compaction> c;
    if (cfd != nullptr) {
      HeldFor(cfd);
      next_compaction_family_ = cfd->id() + 1;
      c = cfd->picker()->PickCompaction(versions_->current(cfd->id()));
      if (c == nullptr) cfd->nothing_to_pick_at = tree_version_;
    }
    if (c != nullptr) {
      picked = true;
      Status s = RunCompaction(cfd, c.get(), /*max_subcompactions=*/0);
      // Releases the picker's hold and the input Version, under the mutex; only then are
      // the input files unreferenced and the sweep can delete them.
      c.reset();
      // The error first: a MANIFEST whose append reached the disk but whose sync failed
      // may name the outputs, so after a failure nothing may be swept.
      if (!s.ok() && !s.IsShutdownInProgress() && !s.IsColumnFamilyDropped()) {
        RecordBackgroundError(s);
      }
      DeleteObsoleteFiles();
    }
  }
  scheduler_.CompactionCallDone();
  // Another job may be possible now; when nothing could be picked, wait for the next
  // flush or compaction to change the tree instead of spinning.
  if (picked) MaybeScheduleCompaction();
  bg_cv_.SignalAll();
}

Status DBImpl::RunCompaction(ColumnFamilyData* cfd, Compaction* c, uint32_t max_subcompactions) {
  HeldFor(cfd);
  scheduler_.BeginCompaction();
  const uint64_t start = env_->NowMicros();
  LevelCompactionStats stats;
  VersionEdit edit;
  edit.SetColumnFamily(cfd->id());
  Status s;
  if (c->IsTrivialMove()) {
    c->AddTrivialMoveEdit(&edit);
    s = versions_->LogAndApply(&edit);
    if (!s.ok() && cfd->dropped()) s = Status::ColumnFamilyDropped(cfd->name());
    stats.bytes_moved = c->TotalInputBytes();
    stats.count = 1;
  } else {
    if (max_subcompactions > 0) c->set_max_subcompactions(max_subcompactions);
    std::vector<uint64_t> outputs;
    // The options as they are now, held for the job's life (SetOptions may replace them).
    const std::shared_ptr<const Options> job_options = cfd->current_options();
    JobSnapshotContext snaps = BeginJobSnapshots();
    CompactionJob job(
        *job_options, dbname_, c, cfd->table_cache(), &cfd->internal_comparator(), snaps.snapshots,
        [this] { return versions_->NewFileNumber(); },
        [this, &outputs](uint64_t number) {
          DbLock lock(this);
          pending_outputs_.insert(number);
          outputs.push_back(number);
        },
        db_dir_.get());
    job.SetShuttingDown(&shutting_down_);
    job.SetJobId(next_job_id_.fetch_add(1));
    job.SetColumnFamilyId(cfd->id());
    job.SetSnapshotChecker(snaps.checker.get(), snaps.job_snapshot);
    UnlockDb();  // the job reads and writes SST files without the DB mutex
    s = job.Run();
    LockDb();
    EndJobSnapshots(&snaps);
    if (s.ok() && cfd->dropped()) {
      // Dropped while the job ran: its outputs are recorded nowhere and swept.
      s = Status::ColumnFamilyDropped(cfd->name());
    } else if (s.ok()) {
      job.AddToEdit(&edit);
      s = versions_->LogAndApply(&edit);
      // The MANIFEST may name the outputs now even though the edit failed (a failed sync
      // after a good append): error mode, which stops every sweep, must begin before they
      // leave pending_outputs_. A family dropped meanwhile refused the edit before any I/O.
      if (!s.ok() && cfd->dropped()) {
        s = Status::ColumnFamilyDropped(cfd->name());
      } else if (!s.ok()) {
        RecordBackgroundError(s);
      }
    }
    for (uint64_t number : outputs) pending_outputs_.erase(number);
    const CompactionJobStats& js = job.stats();
    for (size_t i = 0; i < c->num_input_levels(); i++) {
      for (const auto& f : c->inputs(i)) {
        if (c->level(i) == c->output_level()) {
          stats.bytes_read_output += f->file_size;
        } else {
          stats.bytes_read_non_output += f->file_size;
        }
      }
    }
    stats.bytes_written = js.total_output_bytes;
    stats.files_in = js.num_input_files;
    stats.files_out = js.num_output_files;
    stats.keys_in = js.iter.num_input_records;
    stats.keys_dropped = js.iter.num_input_records - js.iter.num_output_records;
    stats.count = 1;
  }
  stats.micros = env_->NowMicros() - start;
  cfd->picker()->ReleaseCompaction(c);
  internal_stats_->AddCompactionStats(cfd->id(), c->output_level(), stats);
  InstallNewSuperVersion(cfd);
  RecalculateWriteStallConditions();
  scheduler_.EndCompaction();
  return s;
}

Status DBImpl::CompactRange(const CompactRangeOptions& o, ColumnFamilyHandle* cf,
                            const Slice* begin, const Slice* end) {
  if (!IsOwnFamily(cf)) return Status::InvalidArgument("column family is not this DB's");
  ColumnFamilyData* cfd = CfdOf(cf);
  const Options& family = cfd->options();
  // A level kept for ingest_behind is never compacted into, nor out of.
  const int levels = CompactionLevels(family, family.num_levels);
  if (o.target_level >= levels) {
    return Status::InvalidArgument("target_level beyond num_levels");
  }
  // Data still in memtables is part of the range: flush it first. Switching the memtable
  // means entering the write thread, whose leader may be a writer stopped by a write stall
  // that only this compaction can clear: with an empty active memtable, only wait for the
  // immutable ones instead.
  bool active_empty;
  {
    DbLock l(this);
    HeldFor(cfd);
    if (cfd->dropped()) return Status::ColumnFamilyDropped(cfd->name());
    active_empty = cfd->mem()->IsEmpty();
  }
  Status s;
  if (!active_empty && options_.atomic_flush) {
    // As RocksDB's: every family with data flushes with this one, so that the families
    // stay consistent with each other without the WAL.
    s = FlushLiveFamilies(/*only_with_writes=*/true);
  } else if (!active_empty) {
    s = Flush(FlushOptions(), cf);
  }
  if (!s.ok()) return s;

  DbLock l(this);
  HeldFor(cfd);
  s = WaitForFlushOf(cfd);
  if (!s.ok()) return s;
  // exclusive_manual_compaction (the default, as in RocksDB): automatic compactions step
  // aside; wait for the running ones, start no new ones. Otherwise they go on alongside and
  // the picker keeps them apart (a chunk whose files a running compaction holds waits for
  // it). Moving the result to another level needs the tree to itself either way.
  const bool exclusive = o.exclusive_manual_compaction || o.change_level;
  if (exclusive) {
    manual_compactions_waiting_++;
    while (scheduler_.compactions_scheduled() > 0 && bg_error_.ok()) bg_cv_.Wait(&mutex_);
  }
  s = bg_error_;

  const InternalKey begin_key =
      begin != nullptr ? InternalKey(*begin, kMaxSequenceNumber, kValueTypeForSeek) : InternalKey();
  const InternalKey end_key =
      end != nullptr ? InternalKey(*end, 0, static_cast<ValueType>(0)) : InternalKey();
  const InternalKey* b = begin != nullptr ? &begin_key : nullptr;
  const InternalKey* e = end != nullptr ? &end_key : nullptr;

  // The deepest level holding data in the range.
  int last = -1;
  if (Version* current = versions_->current(cfd->id()); current != nullptr) {
    for (int level = 0; level < levels; level++) {
      if (current->OverlapInLevel(level, begin, end)) last = level;
    }
  }
  int final_level = last;
  for (int level = 0; s.ok() && level <= last; level++) {
    int output;
    if (level == last && level > 0) {
      // The bottommost level: rewrite it in place only when asked to, or by default when
      // the family has a compaction filter to run over it (see BottommostLevelCompaction).
      const auto mode = o.bottommost_level_compaction;
      const bool rewrite =
          mode == BottommostLevelCompaction::kForce ||
          mode == BottommostLevelCompaction::kForceOptimized ||
          (mode == BottommostLevelCompaction::kIfHaveCompactionFilter &&
           (family.compaction_filter != nullptr || family.compaction_filter_factory != nullptr));
      if (!rewrite) break;
      output = level;
    } else {
      Version* current = versions_->current(cfd->id());
      if (current == nullptr) break;  // dropped meanwhile
      output = level == 0 ? cfd->picker()->ScoresOf(current).base_level : level + 1;
      if (output >= levels) break;
    }
    s = RunManualCompaction(cfd, level, output, b, e, o.max_subcompactions);
    final_level = output;
  }
  if (s.ok() && o.change_level && final_level > 0) {
    s = RefitLevel(cfd, final_level, o.target_level);
  }
  if (exclusive) manual_compactions_waiting_--;
  MaybeScheduleCompaction();
  bg_cv_.SignalAll();
  return s;
}

Status DBImpl::RunManualCompaction(ColumnFamilyData* cfd, int input_level, int output_level,
                                   const InternalKey* begin, const InternalKey* end,
                                   uint32_t max_subcompactions) {
  HeldFor(cfd);
  InternalKey next_begin;
  const InternalKey* b = begin;
  while (true) {
    if (!bg_error_.ok()) return bg_error_;
    if (shutting_down_) return Status::ShutdownInProgress();
    Version* current = versions_->current(cfd->id());
    if (current == nullptr) return Status::ColumnFamilyDropped(cfd->name());
    InternalKey end_storage;
    InternalKey* compaction_end = &end_storage;
    bool conflict = false;
    std::unique_ptr<Compaction> c = cfd->picker()->CompactRange(current, input_level, output_level,
                                                                b, end, &compaction_end, &conflict);
    if (c == nullptr) {
      if (!conflict) return Status::OK();
      bg_cv_.Wait(&mutex_);  // a running compaction holds a needed file
      continue;
    }
    Status s = RunCompaction(cfd, c.get(), max_subcompactions);
    c.reset();  // unrefs the input Version: its files may go now
    // As in BackgroundCompactionCall: record a failure before any sweep.
    if (!s.ok() && s.IsColumnFamilyDropped()) return s;
    if (!s.ok()) {
      RecordBackgroundError(s);
      return s;
    }
    DeleteObsoleteFiles();
    if (compaction_end == nullptr) return Status::OK();
    // Continue right after the chunk's largest key.
    next_begin = InternalKey(compaction_end->user_key(), 0, static_cast<ValueType>(0));
    if (compaction_end->Valid()) {
      ParsedInternalKey parsed;
      if (ParseInternalKey(compaction_end->Encode(), &parsed).ok()) {
        // The key just after `largest` in internal order.
        next_begin = parsed.sequence > 0
                         ? InternalKey(parsed.user_key, parsed.sequence - 1, kValueTypeForSeek)
                         : InternalKey(parsed.user_key, 0, static_cast<ValueType>(0));
      }
    }
    b = &next_begin;
  }
}

Status DBImpl::RefitLevel(ColumnFamilyData* cfd, int level, int target_level) {
  HeldFor(cfd);
  Version* current = versions_->current(cfd->id());
  if (current == nullptr) return Status::ColumnFamilyDropped(cfd->name());
  for (int other = 0; other < current->NumLevels(); other++) {
    if (other != level && current->NumFiles(other) > 0) {
      return Status::NotSupported("change_level: other levels still hold data");
    }
  }
  uint64_t bytes = current->NumLevelBytes(level);
  int to = target_level;
  if (to < 0) {
    // The smallest level that can hold the data, as RocksDB picks it.
    to = level;
    for (int l = level - 1; l >= 1; l--) {
      if (cfd->picker()->ScoresOf(current).level_max_bytes[l] < bytes) break;
      to = l;
    }
  }
  if (to == level) return Status::OK();
  VersionEdit edit;
  edit.SetColumnFamily(cfd->id());
  for (const auto& f : current->files(level)) {
    edit.DeleteFile(level, f->number);
    edit.AddFile(to, *f);
  }
  Status s = versions_->LogAndApply(&edit);
  if (s.ok()) {
    InstallNewSuperVersion(cfd);
    RecalculateWriteStallConditions();
  }
  return s;
}

Status DBImpl::WaitForCompact(const WaitForCompactOptions& o) {
  if (o.flush) {
    // As in CompactRange; the loop below waits for the immutable memtables either way.
    // All families in one call (with atomic_flush, flushed together); again without a
    // family dropped meanwhile.
    Status s;
    do {
      s = FlushLiveFamilies(/*only_with_writes=*/true);
    } while (s.IsColumnFamilyDropped());
    if (!s.ok()) return s;
  }
  DbLock l(this);
  while (bg_error_.ok() && !shutting_down_) {
    MaybeScheduleFlush();
    MaybeScheduleCompaction();
    bool more = !scheduler_.Idle() || NextToFlush() != nullptr;
    for (const auto& [id, cfd] : families_.live()) more = more || FamilyNeedsCompaction(cfd);
    if (!more) break;
    bg_cv_.Wait(&mutex_);
  }
  if (shutting_down_) return Status::ShutdownInProgress();
  // A reader that held an old Version while the last job swept kept that Version's files;
  // nothing sweeps when the reader lets go, so sweep again before saying all is done.
  DeleteObsoleteFiles();
  return bg_error_;
}

}  // namespace shale
