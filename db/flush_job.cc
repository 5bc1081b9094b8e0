// Flush: background turning of immutable memtables into L0 SST files, recorded in the
// MANIFEST, after which the WAL files that fed them are deleted.
#include <cinttypes>

#include "db/compaction_iterator.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "table/table_builder.h"
#include "table/table_factory.h"
#include "util/logging.h"
#include "util/statistics.h"

namespace shale {

Status DBImpl::Flush(const FlushOptions& o, ColumnFamilyHandle*) {
  Status s = SwitchMemtableForFlush();
  if (!s.ok()) return s;
  MutexLock l(&mutex_);
  if (!o.wait) return bg_error_;
  while (!default_cf_->imm().empty() && bg_error_.ok()) {
    MaybeScheduleFlush();
    bg_cv_.Wait();
  }
  if (bg_error_.ok() && default_cf_->mem()->IsEmpty()) has_unpersisted_data_ = false;
  return bg_error_;
}

void DBImpl::MaybeScheduleFlush() {
  if (flush_scheduled_ || shutting_down_ || !bg_error_.ok()) return;
  if (default_cf_->imm().empty()) return;
  flush_scheduled_ = true;
  flush_pool_->Schedule([this] { BackgroundFlush(); });
}

void DBImpl::BackgroundFlush() {
  MutexLock l(&mutex_);
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
  flush_scheduled_ = false;
  bg_cv_.SignalAll();
}

Status DBImpl::FlushOldestImmutable() {
  MemTable* mem = default_cf_->imm().front();
  FileMetaData meta;
  const uint64_t start = env_->NowMicros();
  const uint64_t job = next_job_id_.fetch_add(1);
  SHALE_LOG_INFO(info_log_,
                 "[default] [JOB %" PRIu64 "] Flushing memtable of log %" PRIu64
                 ": %" PRIu64 " entries, %" PRIu64 " deletes, %zu bytes",
                 job, mem->GetLogNumber(), mem->num_entries(), mem->num_deletes(),
                 mem->ApproximateMemoryUsage());
  running_flushes_++;
  Status s = WriteLevel0Table(mem, &meta);
  running_flushes_--;
  if (!s.ok()) {
    SHALE_LOG_ERROR(info_log_, "[default] [JOB %" PRIu64 "] Flush failed: %s", job,
                    s.ToString().c_str());
    pending_outputs_.erase(meta.number);
    return s;
  }

  VersionEdit edit;
  if (meta.file_size > 0) edit.AddFile(0, meta);
  // Once this memtable is in an SST, replay may start at the WAL of the next memtable.
  const uint64_t next_log = default_cf_->imm().size() > 1 ? default_cf_->imm()[1]->GetLogNumber()
                                                          : default_cf_->mem()->GetLogNumber();
  edit.SetLogNumber(next_log);
  edit.SetPrevLogNumber(0);
  edit.SetLastSequence(last_published_.load(std::memory_order_acquire));
  s = versions_->LogAndApply(&edit, &mutex_);
  pending_outputs_.erase(meta.number);
  if (!s.ok()) return s;
  LevelCompactionStats stats;
  stats.micros = env_->NowMicros() - start;
  stats.bytes_written = meta.file_size;
  stats.files_out = meta.file_size > 0 ? 1 : 0;
  stats.count = 1;
  stats.keys_in = mem->num_entries();
  internal_stats_->AddCompactionStats(0, stats);
  RecordTick(stats_, FLUSH_WRITE_BYTES, meta.file_size);
  RecordTimeToHistogram(stats_, FLUSH_TIME, stats.micros);
  SHALE_LOG_INFO(info_log_,
                 "[default] [JOB %" PRIu64 "] Level-0 flush table #%" PRIu64 ": %" PRIu64
                 " bytes, %" PRIu64 " entries, %" PRIu64 " micros OK; %s",
                 job, meta.number, meta.file_size, meta.num_entries, stats.micros,
                 versions_->current()->LevelSummary().c_str());
  default_cf_->RemoveOldestImmutable();
  InstallNewSuperVersion();
  RecalculateWriteStallConditions();
  MaybeScheduleCompaction();
  DeleteObsoleteFiles();
  return Status::OK();
}

Status DBImpl::WriteLevel0Table(MemTable* mem, FileMetaData* meta) {
  meta->number = versions_->NewFileNumber();
  pending_outputs_.insert(meta->number);
  mem->Ref();
  // What the flush may drop: versions hidden from every live snapshot, and Puts cancelled
  // by their SingleDelete.
  const std::vector<SequenceNumber> snapshots = snapshots_.GetAll();
  const std::string fname = TableFileName(dbname_, meta->number);
  const auto* factory = static_cast<const BlockBasedTableFactory*>(options_.table_factory.get());

  mutex_.Unlock();  // the SST is written and synced without the DB mutex
  Status s;
  {
    std::unique_ptr<InternalIterator> iter(mem->NewIterator());
    iter->SeekToFirst();
    if (iter->Valid()) {
      std::unique_ptr<WritableFile> file;
      EnvOptions env_options;
      env_options.use_direct_writes = options_.use_direct_io_for_flush_and_compaction;
      env_options.writable_file_max_buffer_size = options_.writable_file_max_buffer_size;
      s = env_->NewWritableFile(fname, &file, env_options);
      if (s.ok()) {
        TableBuilderOptions tbo;
        tbo.icmp = &default_cf_->internal_comparator();
        tbo.table_options = factory->table_options();
        tbo.compression = options_.compression;
        tbo.file_name = fname;
        tbo.level_at_creation = 0;
        tbo.is_flush = true;
        TableBuilder builder(tbo, file.get());
        meta->smallest_seqno = kMaxSequenceNumber;
        meta->largest_seqno = 0;
        CompactionIterator c_iter(iter.get(), default_cf_->user_comparator(), snapshots,
                                  /*compaction=*/nullptr, /*end_user_key=*/nullptr,
                                  options_.merge_operator.get(), info_log_, stats_);
        for (c_iter.SeekToFirst(); c_iter.Valid(); c_iter.Next()) {
          const Slice key = c_iter.key();
          const SequenceNumber seq = c_iter.ikey().sequence;
          if (!meta->smallest.Valid()) meta->smallest.DecodeFrom(key);
          meta->smallest_seqno = std::min(meta->smallest_seqno, seq);
          meta->largest_seqno = std::max(meta->largest_seqno, seq);
          meta->largest.DecodeFrom(key);
          builder.Add(key, c_iter.value());
        }
        s = c_iter.status();
        if (s.ok() && builder.NumEntries() == 0) {
          // Everything cancelled out: no file at all.
          builder.Abandon();
          file->Close().PermitUncheckedError();
          env_->DeleteFile(fname).PermitUncheckedError();
          meta->file_size = 0;
          mutex_.Lock();
          mem->Unref();
          return Status::OK();
        }
        if (s.ok()) {
          s = builder.Finish();
        } else {
          builder.Abandon();
        }
        if (s.ok()) {
          meta->file_size = builder.FileSize();
          meta->num_entries = builder.NumEntries();
          meta->num_deletions = builder.GetTableProperties().num_deletions;
          s = options_.use_fsync ? file->Fsync() : file->Sync();
        }
        if (s.ok()) s = file->Close();
        // The directory entry must be durable before the MANIFEST names the file.
        if (s.ok() && db_dir_ != nullptr) s = db_dir_->Fsync();
      }
      if (!s.ok()) env_->DeleteFile(fname).PermitUncheckedError();
    }
  }
  mutex_.Lock();
  mem->Unref();
  return s;
}

}  // namespace shale
