// WritePipeline's WAL stage: making room, forming and logging a group, numbering it; the
// WAL-only queue of two_write_queues; and the WAL's own life (start, switch, close).
#include <utility>

#include "db/internal_stats.h"
#include "db/write_batch_internal.h"
#include "db/write_pipeline.h"
#include "memtable/memtable.h"
#include "util/statistics.h"

namespace shale {

using Writer = WriteThread::Writer;
using WriteGroup = WriteThread::WriteGroup;

// ---- The WAL stage of the main queue.

Status WritePipeline::WalStage(PendingWrite* leader, WriteGroup* group) {
  Status s;
  // Most writes find room: no error, no stall, and a memtable that is not full. The WAL
  // leader (the only thread that switches memtables) checks that without the DB mutex,
  // and takes the mutex only for what needs it.
  if (host_->MayNeedRoom()) {
    s = host_->MakeRoomForWrite(leader->batch->GetDataSize(), leader->no_slowdown);
  }
  // A group shares the leader's disable_wal: its writes reach only the memtable.
  if (s.ok() && leader->disable_wal && !has_unpersisted_data()) {
    has_unpersisted_data_.store(true, std::memory_order_relaxed);
  }
  write_thread_.EnterAsBatchGroupLeader(leader, group);
  if (!s.ok()) {
    if (s.IsIncomplete()) RecordTick(stats_, WRITE_TIMEDOUT, group->size);
    return s;
  }

  uint64_t count = 0;
  uint64_t keys = 0;
  group->ForEach([&](Writer* m) {
    count += PendingWrite::Of(m)->seq_count;
    keys += PendingWrite::Of(m)->keys;
  });
  CountGroup(*group, keys);
  WriteBatch* record = GroupRecord(group, &group_batch_);
  // The memtable these writes go to is settled (only this thread switches it); a write of
  // one Put starts loading the memtable filter's line now, behind the WAL write.
  MemTable* mem = host_->ActiveMemtable();
  if (mem->has_filter()) {
    group->ForEach([&](Writer* m) {
      if (m->batch != nullptr && !PendingWrite::Of(m)->wal_only) {
        WriteBatchInternal::PrefetchForInsert(m->batch, mem);
      }
    });
  }
  s = (this->*log_main_)(group, record, count);
  if (!leader->disable_wal) {
    internal_stats_->write_with_wal.fetch_add(group->size, std::memory_order_relaxed);
    RecordTick(stats_, WRITE_WITH_WAL, group->size);
  }
  if (!s.ok()) {
    // The WAL may hold a partial record: nothing after it may be acknowledged.
    host_->SetBackgroundError(s);
    return s;
  }
  // Only a WAL leader switches memtables, and it first waits for every group's inserts:
  // the active memtable stays the one these sequences go to until they are in.
  group->ForEach([&](Writer* m) { PendingWrite::Of(m)->mem = mem; });
  return Status::OK();
}

void WritePipeline::CountGroup(const WriteGroup& group, uint64_t keys) {
  InternalStats& stats = *internal_stats_;
  stats.writes.fetch_add(group.size, std::memory_order_relaxed);
  stats.keys_written.fetch_add(keys, std::memory_order_relaxed);
  stats.bytes_written.fetch_add(group.bytes, std::memory_order_relaxed);
  stats.write_done_by_self.fetch_add(1, std::memory_order_relaxed);
  stats.write_done_by_other.fetch_add(group.size - 1, std::memory_order_relaxed);
  RecordTick(stats_, NUMBER_KEYS_WRITTEN, keys);
  RecordTick(stats_, BYTES_WRITTEN, group.bytes);
  RecordTick(stats_, WRITE_DONE_BY_SELF);
  if (group.size > 1) RecordTick(stats_, WRITE_DONE_BY_OTHER, group.size - 1);
  RecordInHistogram(stats_, BYTES_PER_WRITE, group.bytes);
}

WriteBatch* WritePipeline::GroupRecord(WriteGroup* group, WriteBatch* scratch) const {
  // Numbered per sub-batch, a concatenation would hide where each writer's numbering
  // starts (recovery recounts sub-batches from it): each writer logs its own record.
  if (group->leader->disable_wal || seq_per_batch_) return nullptr;
  if (group->size == 1) return group->leader->batch;
  // The scratch batch keeps its capacity from group to group; validated batches append
  // without failing.
  scratch->Clear();
  group->ForEach(
      [&](Writer* m) { WriteBatchInternal::Append(scratch, m->batch).PermitUncheckedError(); });
  return scratch;
}

// ---- Numbering and logging.

Status WritePipeline::LogAndAllocateOneQueue(WriteGroup* group, WriteBatch* record,
                                             uint64_t count) {
  // The queue's WAL leader is the only appender and the only allocator: it numbers, logs,
  // and only then takes the numbers, so that a failed append consumes none.
  const bool wal = !group->leader->disable_wal;
  const SequenceNumber first = NumberGroup(group);
  const uint64_t log_number = wal ? log_->log_number() : 0;
  Status s = wal ? AppendGroup(group, record, first) : Status::OK();
  if (!s.ok()) return s;
  if (count > 0) last_allocated_.store(first + count - 1, std::memory_order_relaxed);
  NoteLogged(group, log_number);
  RunPreRelease(group, log_number);
  return s;
}

Status WritePipeline::LogAndAllocateMainOfTwo(WriteGroup* group, WriteBatch* record,
                                              uint64_t count) {
  return LogAndAllocateTwoQueues(group, record, count, PreReleaseAt::kAllocation);
}

Status WritePipeline::LogAndAllocateTwoQueues(WriteGroup* group, WriteBatch* record, uint64_t count,
                                              PreReleaseAt when) {
  // Numbers are taken under alloc_mutex_; a logged write takes them inside log_mutex_ and
  // appends before letting go of it, so that WAL order stays sequence order. A write that
  // skips the WAL (WritePrepared's number-only commits) takes alloc_mutex_ alone and never
  // waits for another group's WAL write.
  //
  // Only the second queue publishes while the main queue allocates (with WritePrepared),
  // so the main queue's callbacks (a prepare put in flight) run with its numbers taken, in
  // the same hold of alloc_mutex_ (kAllocation): no commit numbered after them can be
  // published first. They run before the append, and a failed append leaves such a
  // prepare in flight: hidden, as a write that failed must be. The second queue's
  // callbacks run after its append (kAfterAppend: a commit is recorded once its marker is
  // logged); its groups go one at a time.
  const bool at_allocation = when == PreReleaseAt::kAllocation;
  if (group->leader->disable_wal) {
    {
      MutexLock alloc_lock(&alloc_mutex_);
      AllocateShared(group, count);
      if (at_allocation) RunPreRelease(group, 0);
    }
    NoteLogged(group, 0);
    if (!at_allocation) RunPreRelease(group, 0);
    return Status::OK();
  }
  MutexLock log_lock(&log_mutex_);
  const uint64_t log_number = log_->log_number();
  SequenceNumber first;
  {
    MutexLock alloc_lock(&alloc_mutex_);
    first = AllocateShared(group, count);
    if (at_allocation) RunPreRelease(group, log_number);
  }
  Status s = AppendGroup(group, record, first);
  if (!s.ok()) return s;
  NoteLogged(group, log_number);
  if (!at_allocation) RunPreRelease(group, log_number);
  return s;
}

SequenceNumber WritePipeline::NumberGroup(WriteGroup* group) {
  const SequenceNumber first = last_allocated_.load(std::memory_order_relaxed) + 1;
  SequenceNumber next = first;
  group->ForEach([&](Writer* m) {
    m->sequence = next;
    next += PendingWrite::Of(m)->seq_count;
  });
  group->last_sequence = next - 1;
  return first;
}

SequenceNumber WritePipeline::AllocateShared(WriteGroup* group, uint64_t count) {
  const SequenceNumber first = NumberGroup(group);
  if (count > 0) last_allocated_.store(first + count - 1, std::memory_order_relaxed);
  return first;
}

Status WritePipeline::AppendGroup(WriteGroup* group, WriteBatch* record, SequenceNumber first) {
  Status s;
  size_t logged = 0;
  auto append = [&](WriteBatch* batch, SequenceNumber seq, bool flush) {
    WriteBatchInternal::SetSequence(batch, seq);
    const Slice contents = WriteBatchInternal::Contents(batch);
    logged += contents.size();
    return log_->AddRecord(contents, flush);
  };
  if (record != nullptr) {
    s = append(record, first, /*flush=*/true);
  } else {
    // Each writer logs its own record (GroupRecord), and the group's records reach the OS
    // together, with the last one's.
    group->ForEach([&](Writer* m) {
      if (s.ok()) s = append(m->batch, m->sequence, /*flush=*/m == group->last);
    });
  }
  if (logged > 0) {
    internal_stats_->wal_bytes.fetch_add(logged, std::memory_order_relaxed);
    RecordTick(stats_, WAL_FILE_BYTES, logged);
  }
  if (s.ok() && group->leader->sync) {
    StopWatch sync_timer(env_, stats_, WAL_FILE_SYNC_MICROS);
    // The writes before this one in WALs left unsynced are promised too.
    s = closed_wals_.SyncAll(use_fsync_);
    if (s.ok()) s = log_->Sync(use_fsync_);
    internal_stats_->wal_syncs.fetch_add(1, std::memory_order_relaxed);
    RecordTick(stats_, WAL_FILE_SYNCED);
  }
  return s;
}

void WritePipeline::NoteLogged(WriteGroup* group, uint64_t log_number) {
  // A prepare's WAL is kept from here on: no WAL switch (which needs the main queue, or
  // log_mutex_) can retire it before it is counted.
  group->ForEach([&](Writer* m) {
    PendingWrite* w = PendingWrite::Of(m);
    w->log_used = log_number;
    if (log_number != 0 && w->prepares) prepared_logs_.Add(log_number);
  });
}

void WritePipeline::RunPreRelease(WriteGroup* group, uint64_t log_number) {
  group->ForEach([&](Writer* m) {
    PendingWrite* w = PendingWrite::Of(m);
    if (w->pre_release != nullptr) w->pre_release->Callback(w->sequence, w->seq_count, log_number);
  });
}

// ---- The WAL-only queue (two_write_queues).

Status WritePipeline::RunWalOnly(PendingWrite* w) {
  StopWatch write_timer(env_, stats_, DB_WRITE);
  // Counted until this writer's status is final, which is after its group published.
  wal_only_writers_.fetch_add(1, std::memory_order_relaxed);
  struct Uncount {
    std::atomic<uint64_t>* writers;
    ~Uncount() { writers->fetch_sub(1, std::memory_order_release); }
  } uncount{&wal_only_writers_};
  if (wal_only_thread_.JoinBatchGroup(w) == WriteThread::kCompleted) return w->status;
  WriteGroup group;
  wal_only_thread_.EnterAsBatchGroupLeader(w, &group);
  Status s;
  if (host_->HasBackgroundError()) s = host_->BackgroundError();
  if (s.ok()) {
    uint64_t count = 0;  // numbered per sub-batch, a commit takes one; else none
    group.ForEach([&](Writer* m) { count += PendingWrite::Of(m)->seq_count; });
    WriteBatch scratch;
    s = LogAndAllocateTwoQueues(&group, GroupRecord(&group, &scratch), count,
                                PreReleaseAt::kAfterAppend);
    if (!s.ok()) {
      host_->SetBackgroundError(s);
    } else if (!main_queue_publishes_) {
      // WritePrepared with two queues: the commits publish, in the order they were
      // numbered (one group at a time), their callbacks having run.
      last_published_.store(group.last_sequence, std::memory_order_release);
    }
  }
  group.ForEach([&](Writer* m) { m->status = s; });
  wal_only_thread_.ExitGroup(&group, w);
  return s;
}

// ---- The WAL's life.

void WritePipeline::StartWal(std::unique_ptr<WritableFile> file, uint64_t number) {
  MutexLock log_lock(&log_mutex_);
  log_ = std::make_unique<log::Writer>(std::move(file), number);
}

Status WritePipeline::SwitchWal(std::unique_ptr<WritableFile> file, uint64_t number) {
  // The WAL-only queue may be appending to the old WAL: the swap takes log_mutex_. As the
  // main queue's WAL leader, the caller keeps the main queue's writers out meanwhile.
  MutexLock log_lock(&log_mutex_);
  uint64_t old_number = 0;
  uint64_t old_size = 0;
  Status s;
  if (log_ != nullptr) {
    old_number = log_->log_number();
    old_size = log_->file()->GetFileSize();
    // Not synced here, where every writer would wait for it: by the flush, or by a
    // sync=true write first (db/closed_wals.h). The new WAL names it and its size, so
    // that recovery can tell when a power loss kept the new one and cut the old one.
    if (log_->has_unsynced_records()) {
      closed_wals_.Add(std::move(log_));
    } else {
      s = log_->Close();
    }
  }
  if (!s.ok()) return s;
  log_ = std::make_unique<log::Writer>(std::move(file), number);
  if (old_number != 0) s = log_->AddPredecessor(old_number, old_size);
  return s;
}

Status WritePipeline::CloseWals() {
  Status result;
  {
    MutexLock log_lock(&log_mutex_);
    if (log_ != nullptr) {
      result = log_->Close();
      log_.reset();
    }
  }
  Status closed = closed_wals_.CloseAll();
  return result.ok() ? closed : result;
}

void WritePipeline::PublishAlone(SequenceNumber last) {
  MutexLock l(&alloc_mutex_);
  last_allocated_.store(last, std::memory_order_relaxed);
  last_published_.store(last, std::memory_order_release);
}

void WritePipeline::SetLastSequence(SequenceNumber seq) {
  last_allocated_.store(seq, std::memory_order_relaxed);
  last_published_.store(seq, std::memory_order_release);
}

}  // namespace shale
