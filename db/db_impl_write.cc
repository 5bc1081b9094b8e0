// The write path: group commit through the WriteThread, WAL append and sync, memtable
// insert, sequence publication, and memtable switching when the active one fills.
#include <algorithm>

#include "db/db_impl.h"
#include "db/filename.h"
#include "db/write_batch_internal.h"
#include "util/statistics.h"

namespace shale {

Status DBImpl::WriteImpl(const WriteOptions& o, WriteBatch* batch) {
  if (o.sync && o.disableWAL) {
    return Status::InvalidArgument("Sync writes has to enable WAL.");
  }
  if (batch != nullptr && WriteBatchInternal::Count(batch) == 0) {
    // Nothing to apply; still validate that the batch is well formed.
    return batch->GetDataSize() >= WriteBatchInternal::kHeader
               ? Status::OK()
               : Status::Corruption("malformed WriteBatch (too small)");
  }

  StopWatch write_timer(env_, stats_, DB_WRITE);
  WriteThread::Writer w;
  w.batch = batch;
  w.sync = o.sync;
  w.disable_wal = o.disableWAL;
  w.no_slowdown = o.no_slowdown;
  if (!write_thread_.JoinBatchGroup(&w)) return w.status;

  // This thread leads a group: it alone touches the WAL and allocates sequences.
  Status s;
  {
    MutexLock l(&mutex_);
    s = MakeRoomForWrite(batch == nullptr, batch == nullptr ? 0 : batch->GetDataSize(),
                         o.no_slowdown);
  }

  std::vector<WriteThread::Writer*> group;
  write_thread_.BuildBatchGroup(&w, &group);
  if (s.ok() && batch != nullptr) {
    // One batch for the group: the leader's own when alone, else a concatenation.
    WriteBatch merged;
    WriteBatch* to_write = batch;
    if (group.size() > 1) {
      to_write = &merged;
      for (WriteThread::Writer* member : group) {
        s = WriteBatchInternal::Append(&merged, member->batch);
        if (!s.ok()) break;
      }
    }
    const SequenceNumber first = last_allocated_ + 1;
    const uint32_t count = WriteBatchInternal::Count(to_write);
    if (s.ok()) {
      WriteBatchInternal::SetSequence(to_write, first);
      InternalStats& stats = *internal_stats_;
      stats.writes.fetch_add(group.size(), std::memory_order_relaxed);
      stats.keys_written.fetch_add(count, std::memory_order_relaxed);
      stats.bytes_written.fetch_add(to_write->GetDataSize(), std::memory_order_relaxed);
      stats.write_done_by_self.fetch_add(1, std::memory_order_relaxed);
      stats.write_done_by_other.fetch_add(group.size() - 1, std::memory_order_relaxed);
      RecordTick(stats_, NUMBER_KEYS_WRITTEN, count);
      RecordTick(stats_, BYTES_WRITTEN, to_write->GetDataSize());
      RecordTick(stats_, WRITE_DONE_BY_SELF);
      RecordTick(stats_, WRITE_DONE_BY_OTHER, group.size() - 1);
      RecordInHistogram(stats_, BYTES_PER_WRITE, to_write->GetDataSize());
      if (!o.disableWAL) {
        const Slice record = WriteBatchInternal::Contents(to_write);
        s = log_->AddRecord(record);
        stats.write_with_wal.fetch_add(group.size(), std::memory_order_relaxed);
        stats.wal_bytes.fetch_add(record.size(), std::memory_order_relaxed);
        RecordTick(stats_, WRITE_WITH_WAL, group.size());
        RecordTick(stats_, WAL_FILE_BYTES, record.size());
        bool sync = false;
        for (WriteThread::Writer* member : group) sync |= member->sync;
        if (s.ok() && sync) {
          StopWatch sync_timer(env_, stats_, WAL_FILE_SYNC_MICROS);
          s = log_->Sync(options_.use_fsync);
          stats.wal_syncs.fetch_add(1, std::memory_order_relaxed);
          RecordTick(stats_, WAL_FILE_SYNCED);
        }
        if (!s.ok()) {
          // A WAL write that failed may have left a partial record: no later write may be
          // acknowledged on top of it.
          MutexLock l(&mutex_);
          RecordBackgroundError(s);
        }
      }
    }
    if (s.ok()) {
      last_allocated_ += count;
      MemTable* mem = default_cf_->mem();  // stable: only the leader switches it
      s = WriteBatchInternal::InsertInto(to_write, mem, /*concurrent=*/false, this);
      if (!s.ok()) {
        MutexLock l(&mutex_);
        RecordBackgroundError(s);
      } else {
        last_published_.store(last_allocated_, std::memory_order_release);
      }
      if (o.disableWAL) {
        MutexLock l(&mutex_);
        has_unpersisted_data_ = true;
      }
    }
  }
  for (WriteThread::Writer* member : group) member->status = s;
  write_thread_.ExitAsBatchGroupLeader(group);
  return s;
}

Status DBImpl::MakeRoomForWrite(bool force, uint64_t write_bytes, bool no_slowdown) {
  bool delayed = false;  // a write is slowed at most once
  while (true) {
    if (!bg_error_.ok()) return bg_error_;
    if (shutting_down_ && !force) return Status::ShutdownInProgress();
    ColumnFamilyData* cfd = default_cf_.get();
    const auto state = write_controller_.state();
    if (!force && state == WriteController::State::kDelayed && !delayed) {
      if (no_slowdown) return Status::Incomplete("Write stall");
      delayed = true;
      const uint64_t delay = write_controller_.GetDelay(env_->NowMicros(), write_bytes);
      if (delay > 0) {
        // The leader sleeps without the mutex; its group waits behind it, which is the
        // point of a slowdown.
        mutex_.Unlock();
        env_->SleepForMicroseconds(static_cast<int>(std::min<uint64_t>(delay, 1000000)));
        mutex_.Lock();
        write_controller_.AddStallMicros(write_controller_.cause(), false, delay);
        RecordTick(stats_, STALL_MICROS, delay);
        RecordTimeToHistogram(stats_, WRITE_STALL, delay);
      }
      continue;
    }
    if (!force && state == WriteController::State::kStopped) {
      if (no_slowdown) return Status::Incomplete("Write stall");
      const uint64_t start = env_->NowMicros();
      MaybeScheduleFlush();
      MaybeScheduleCompaction();
      bg_cv_.Wait();
      const uint64_t stalled = env_->NowMicros() - start;
      write_controller_.AddStallMicros(write_controller_.cause(), true, stalled);
      RecordTick(stats_, STALL_MICROS, stalled);
      RecordTimeToHistogram(stats_, WRITE_STALL, stalled);
      continue;
    }
    if (!force && !cfd->mem()->ShouldFlush()) return Status::OK();
    if (force && cfd->mem()->IsEmpty()) return Status::OK();
    if (static_cast<int>(cfd->imm().size()) >= options_.max_write_buffer_number - 1) {
      // Every memtable is full: wait for a flush (a write stop).
      if (no_slowdown && !force) return Status::Incomplete("Write stall");
      const uint64_t start = env_->NowMicros();
      MaybeScheduleFlush();
      bg_cv_.Wait();
      const uint64_t stalled = env_->NowMicros() - start;
      write_controller_.AddStallMicros(WriteController::kMemtableLimit, true, stalled);
      RecordTick(stats_, STALL_MICROS, stalled);
      RecordTimeToHistogram(stats_, WRITE_STALL, stalled);
      RecordInHistogram(stats_, STALL_MEMTABLE_COMPACTION_COUNT, 1);
      continue;
    }
    Status s = SwitchMemtable();
    if (!s.ok()) return s;
    MaybeScheduleFlush();
    return Status::OK();
  }
}

void DBImpl::RecalculateWriteStallConditions() {
  Version* current = versions_->current();
  if (write_controller_.Update(current->NumFiles(0), current->EstimatedCompactionNeededBytes(),
                               !options_.disable_auto_compactions)) {
    bg_cv_.SignalAll();  // stopped writers re-check
  }
}

Status DBImpl::SwitchMemtable() {
  // Creating the new WAL file is I/O under the mutex; it happens once per memtable.
  const uint64_t new_log_number = versions_->NewFileNumber();
  std::unique_ptr<WritableFile> file;
  EnvOptions env_options;
  env_options.writable_file_max_buffer_size = options_.writable_file_max_buffer_size;
  Status s = env_->NewWritableFile(LogFileName(dbname_, new_log_number), &file, env_options);
  if (s.ok() && db_dir_ != nullptr) {
    // The new WAL's directory entry must be durable before a synced write relies on it.
    s = db_dir_->Fsync();
  }
  if (!s.ok()) {
    RecordBackgroundError(s);
    return s;
  }
  if (log_ != nullptr) {
    // A later sync=true write syncs only the new WAL, yet promises every earlier write
    // too: make the old WAL's records durable before leaving it.
    Status close = log_->has_unsynced_records() ? log_->Sync(options_.use_fsync) : Status::OK();
    if (close.ok()) close = log_->Close();
    if (!close.ok()) {
      RecordBackgroundError(close);
      return close;
    }
  }
  log_ = std::make_unique<log::Writer>(std::move(file), new_log_number);
  logfile_number_ = new_log_number;
  auto* mem = new MemTable(default_cf_->internal_comparator(), options_.write_buffer_size,
                         options_.arena_block_size, options_.memtable_huge_page_size);
  mem->SetLogNumber(new_log_number);
  default_cf_->SwitchMemtable(mem);
  InstallNewSuperVersion();
  return Status::OK();
}

}  // namespace shale
