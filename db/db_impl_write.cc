// The write path: validation, group commit through the WriteThread, WAL append and sync,
// sequence assignment, memtable inserts (by the leader, or by every writer in parallel),
// publication, and memtable switching when the active one fills. Four modes share it:
//
//   ordered (default)  a group leaves the queue after its inserts and its publication, so
//                      groups publish in WAL order;
//   pipelined          a group leaves the WAL queue after its WAL write and waits its turn
//                      in the memtable queue: the next group's WAL write overlaps its
//                      inserts, and publication stays in order;
//   unordered          the group publishes right after its WAL write and leaves; each
//                      writer then inserts its own batch alone (options.h says what readers
//                      may see meanwhile);
//   WAL only           two_write_queues: batches with no records for the memtable take a
//                      second queue and share only the WAL (under log_mutex_) and the
//                      numbering (under alloc_mutex_) with the first.
//
// Sequence numbers: last_allocated_ is advanced by the WAL stage (with two queues under
// alloc_mutex_, inside log_mutex_ when the batch is logged, so WAL order is sequence order);
// last_published_ by the group that finishes its inserts (ordered, pipelined), by the WAL
// stage (unordered), or by the second queue's commits (WritePrepared with two queues).
#include <algorithm>

#include "db/db_impl.h"
#include "db/filename.h"
#include "db/write_batch_internal.h"
#include "util/statistics.h"

namespace shale {

// ---- The public writes: each builds a batch and goes through WriteImpl.

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

using Writer = WriteThread::Writer;
using WriteGroup = WriteThread::WriteGroup;

Status DBImpl::WriteImpl(const WriteOptions& o, WriteBatch* batch, bool disable_memtable) {
  Writer w;
  w.batch = batch;
  w.wal_only = disable_memtable;
  // A malformed batch fails here, for its own writer only, before it reaches the WAL.
  uint64_t sub_batches = 0;
  Status s = WriteBatchInternal::ValidateForWrite(batch, /*txn_markers=*/false, &w.has_merge,
                                                  seq_per_batch_ ? &sub_batches : nullptr);
  if (!s.ok()) return s;
  if (disable_memtable) {
    if (WriteBatchInternal::Count(batch) != 0) {
      return Status::InvalidArgument("a WAL-only write may hold no keys");
    }
  } else if (WriteBatchInternal::Count(batch) == 0) {
    // Nothing to apply. PutLogData blobs are for the WAL's readers: they go to the WAL
    // alone (as RocksDB's do), unless the write skips the WAL.
    if (WriteBatchInternal::ByteSize(batch) <= WriteBatchInternal::kHeader || o.disableWAL) {
      return Status::OK();
    }
    w.wal_only = true;
  }
  w.keys = w.wal_only ? 0 : WriteBatchInternal::Count(batch);
  w.seq_count = seq_per_batch_ ? sub_batches : w.keys;
  return RunWriter(o, &w);
}

Status DBImpl::WriteTxn(const WriteOptions& o, WriteBatch* batch, const TxnWrite& t) {
  if (batch == nullptr) return Status::InvalidArgument("Batch is nullptr!");
  Writer w;
  w.batch = batch;
  w.wal_only = t.wal_only;
  w.pre_release = t.pre_release;
  uint64_t sub_batches = 0;
  Status s =
      WriteBatchInternal::ValidateForWrite(batch, /*txn_markers=*/true, &w.has_merge,
                                           seq_per_batch_ ? &sub_batches : nullptr, &w.prepares);
  if (!s.ok()) return s;
  if (w.prepares && !options_.allow_2pc) {
    return Status::NotSupported("a prepared transaction needs allow_2pc (TransactionDB)");
  }
  if (seq_per_batch_) {
    // WritePrepared: a prepare's records go to the memtable at once; a commit inserts
    // nothing more; every write takes a number per sub-batch, a marker one.
    if (t.txn_batch != nullptr) {
      return Status::NotSupported("a WritePrepared commit inserts no prepared records");
    }
    if (t.wal_only && WriteBatchInternal::Count(batch) != 0) {
      return Status::InvalidArgument("a write that inserts nothing may hold no keys");
    }
    w.keys = t.wal_only ? 0 : WriteBatchInternal::Count(batch);
    w.seq_count = sub_batches;
  } else if (t.wal_only) {
    if (t.txn_batch != nullptr) return Status::InvalidArgument("a WAL-only write inserts nothing");
    if (WriteBatchInternal::Count(batch) != 0 && !w.prepares) {
      return Status::InvalidArgument("a WAL-only write holds keys only in a prepared section");
    }
  } else {
    if (w.prepares) return Status::InvalidArgument("a prepared section is written WAL-only");
    w.keys = WriteBatchInternal::Count(batch);
    if (t.txn_batch != nullptr) {
      bool txn_merge = false;
      s = WriteBatchInternal::ValidateForWrite(t.txn_batch, /*txn_markers=*/false, &txn_merge);
      if (!s.ok()) return s;
      w.has_merge = w.has_merge || txn_merge;
      w.txn_batch = t.txn_batch;
      w.prep_log = t.prep_log;
      w.keys += WriteBatchInternal::Count(t.txn_batch);
    }
    w.seq_count = w.keys;
  }
  s = RunWriter(o, &w);
  if (t.log_used != nullptr) *t.log_used = w.log_used;
  if (t.seq_used != nullptr) {
    *t.seq_used = w.seq_count == 0 ? last_published_.load(std::memory_order_acquire) : w.sequence;
  }
  return s;
}

Status DBImpl::RunWriter(const WriteOptions& o, Writer* writer) {
  if (o.sync && o.disableWAL) {
    return Status::InvalidArgument("Sync writes has to enable WAL.");
  }
  Writer& w = *writer;
  w.sync = o.sync;
  w.disable_wal = o.disableWAL;
  w.no_slowdown = o.no_slowdown;
  Status s;
  if (w.wal_only) {
    // Only a write that takes a number has a use without the WAL.
    if (o.disableWAL && w.seq_count == 0) {
      return Status::InvalidArgument("a WAL-only write needs the WAL");
    }
    if (options_.two_write_queues) return WriteWalOnly(&w);
  } else if (w.txn_batch != nullptr && o.disableWAL) {
    // The commit marker is what makes the prepared records part of the DB at recovery.
    return Status::InvalidArgument("a commit of a prepared transaction needs the WAL");
  }

  StopWatch write_timer(env_, stats_, DB_WRITE);
  if (options_.unordered_write) return UnorderedWriteImpl(&w);
  const uint8_t state = write_thread_.JoinBatchGroup(&w);
  if (state == WriteThread::kParallelMemtableWriter) {
    InsertOwnBatch(&w, /*concurrent=*/true);
    if (write_thread_.CompleteParallelWriter(&w)) FinishGroup(w.group, &w);
    return w.status;
  }
  if (state == WriteThread::kCompleted) return w.status;

  // This thread leads a group: it alone touches the WAL queue's state.
  WriteGroup group;
  s = WalStage(&w, &group);
  if (!s.ok()) {
    group.ForEach([&](Writer* m) { m->status = s; });
    write_thread_.ExitGroup(&group, &w);
    return s;
  }
  if (options_.enable_pipelined_write) {
    const uint8_t stage = write_thread_.EnterMemtableStage(&group);
    if (stage == WriteThread::kParallelMemtableWriter) {
      // An earlier group's memtable stage took this one along.
      InsertOwnBatch(&w, /*concurrent=*/true);
      if (write_thread_.CompleteParallelWriter(&w)) FinishGroup(w.group, &w);
      return w.status;
    }
    if (stage == WriteThread::kCompleted) return w.status;
  }
  // This thread leads the memtable stage of its group (and, pipelined, of the groups it
  // took along). A Merge reads the memtable (max_successive_merges) and orders itself
  // against other writes to its key: a batch with one inserts serially, as RocksDB's does.
  if (options_.allow_concurrent_memtable_write && group.batch_size > 1 && !group.BatchHasMerge()) {
    write_thread_.LaunchParallelWriters(&group);
    InsertOwnBatch(&w, /*concurrent=*/true);
    if (write_thread_.CompleteParallelWriter(&w)) FinishGroup(&group, &w);
  } else {
    // One inserter at a time: serial inserts never overlap concurrent ones, since batches
    // take their memtable stage in turn.
    group.ForEachInBatch([&](Writer* m) { InsertOwnBatch(m, /*concurrent=*/false); });
    FinishGroup(&group, &w);
  }
  return w.status;
}

Status DBImpl::UnorderedWriteImpl(Writer* w) {
  const uint8_t state = write_thread_.JoinBatchGroup(w);
  if (state == WriteThread::kParallelMemtableWriter) {
    // The leader published this write and counted it as pending: insert, then uncount.
    InsertOwnBatch(w, /*concurrent=*/true);
    write_thread_.EndUnorderedInsert();
    return w->status;
  }
  if (state == WriteThread::kCompleted) return w->status;

  WriteGroup group;
  Status s = WalStage(w, &group);
  if (!s.ok()) {
    group.ForEach([&](Writer* m) { m->status = s; });
    write_thread_.ExitGroup(&group, w);
    return s;
  }
  // Visible before the inserts are done: unordered_write's trade (options.h). Counted as
  // pending first, so a memtable switch after this group waits for the inserts. (With
  // WritePrepared, the second queue's commits publish, once the inserts are done.)
  if (main_queue_publishes_) last_published_.store(group.last_sequence, std::memory_order_release);
  write_thread_.BeginUnorderedInserts(group.size);
  write_thread_.ExitWalStage(&group);
  write_thread_.LaunchParallelWriters(&group);
  InsertOwnBatch(w, /*concurrent=*/true);
  write_thread_.EndUnorderedInsert();
  return w->status;
}

Status DBImpl::WalStage(Writer* leader, WriteGroup* group) {
  Status s;
  // Most writes find room: no error, no stall, and a memtable that is not full. The WAL
  // leader (the only thread that switches memtables) checks that without the DB mutex, as
  // MakeRoomForWrite would find it, and takes the mutex only for what needs it.
  if (has_bg_error_.load(std::memory_order_acquire) ||
      shutting_down_.load(std::memory_order_relaxed) ||
      StallStateWithoutMutex() != WriteController::State::kNormal ||
      default_cf_->mem_for_wal_leader()->ShouldFlush()) {
    DbLock l(this);
    s = MakeRoomForWrite(/*force=*/false, leader->batch->GetDataSize(), leader->no_slowdown);
  }
  // A group shares the leader's disable_wal: its writes reach only the memtable.
  if (s.ok() && leader->disable_wal && !has_unpersisted_data_.load(std::memory_order_relaxed)) {
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
    count += m->seq_count;
    keys += m->keys;
  });

  InternalStats& stats = *internal_stats_;
  stats.writes.fetch_add(group->size, std::memory_order_relaxed);
  stats.keys_written.fetch_add(keys, std::memory_order_relaxed);
  stats.bytes_written.fetch_add(group->bytes, std::memory_order_relaxed);
  stats.write_done_by_self.fetch_add(1, std::memory_order_relaxed);
  stats.write_done_by_other.fetch_add(group->size - 1, std::memory_order_relaxed);
  RecordTick(stats_, NUMBER_KEYS_WRITTEN, keys);
  RecordTick(stats_, BYTES_WRITTEN, group->bytes);
  RecordTick(stats_, WRITE_DONE_BY_SELF);
  if (group->size > 1) RecordTick(stats_, WRITE_DONE_BY_OTHER, group->size - 1);
  RecordInHistogram(stats_, BYTES_PER_WRITE, group->bytes);

  // One WAL record for the group: the leader's batch when alone, else a concatenation
  // (group_batch_ belongs to the WAL leader of the main queue; it keeps its capacity).
  // Numbered per sub-batch, each writer logs its own record (see LogAndAllocate).
  WriteBatch* record = nullptr;
  if (!leader->disable_wal && !seq_per_batch_) {
    record = leader->batch;
    if (group->size > 1) {
      record = &group_batch_;
      record->Clear();
      // Validated batches: Append cannot fail.
      group->ForEach(
          [&](Writer* m) { WriteBatchInternal::Append(record, m->batch).PermitUncheckedError(); });
    }
  }
  // The memtable these writes go to is settled (only this thread switches it); a write of
  // one Put starts loading the memtable filter's line now, behind the WAL write.
  const MemTable* next_mem = default_cf_->mem_for_wal_leader();
  if (next_mem->has_filter()) {
    group->ForEach([&](Writer* m) {
      if (m->batch != nullptr && !m->wal_only) {
        WriteBatchInternal::PrefetchForInsert(m->batch, next_mem);
      }
    });
  }
  s = LogAndAllocate(group, record, count, /*main_queue=*/true);
  if (!leader->disable_wal) {
    stats.write_with_wal.fetch_add(group->size, std::memory_order_relaxed);
    RecordTick(stats_, WRITE_WITH_WAL, group->size);
  }
  if (!s.ok()) {
    // The WAL may hold a partial record: nothing after it may be acknowledged.
    DbLock l(this);
    RecordBackgroundError(s);
    return s;
  }

  // Only a WAL leader switches memtables, and it first waits for every group's inserts:
  // the active memtable stays the one these sequences go to until they are in.
  MemTable* mem = default_cf_->mem_for_wal_leader();
  group->ForEach([&](Writer* m) { m->mem = mem; });
  return Status::OK();
}

Status DBImpl::LogAndAllocate(WriteGroup* group, WriteBatch* record, uint64_t count,
                              bool main_queue) {
  const bool wal = !group->leader->disable_wal;
  // With one queue, its WAL leader is the only appender and the only allocator: it numbers,
  // logs, and only then takes the numbers, so that a failed append consumes none.
  if (!options_.two_write_queues) {
    const SequenceNumber first = NumberGroup(group);
    const uint64_t log_number = wal ? log_->log_number() : 0;
    Status s = wal ? AppendGroup(group, record, first) : Status::OK();
    if (!s.ok()) return s;
    if (count > 0) last_allocated_.store(first + count - 1, std::memory_order_relaxed);
    NoteLogged(group, log_number);
    RunPreRelease(group, log_number);
    return s;
  }
  // Two queues. Numbers are taken under alloc_mutex_; a logged write takes them inside
  // log_mutex_ and appends before letting go of it, so that WAL order stays sequence order.
  // A write that skips the WAL (WritePrepared's number-only commits) takes alloc_mutex_
  // alone and never waits for another group's WAL write.
  //
  // Only the second queue publishes while the main queue allocates (with WritePrepared),
  // so the main queue's callbacks (a prepare put in flight) run with its numbers taken, in
  // the same hold of alloc_mutex_: no commit numbered after them can be published first.
  // They run before the append, and a failed append leaves such a prepare in flight:
  // hidden, as a write that failed must be. The second queue's callbacks run after its
  // append (a commit is recorded once its marker is logged); its groups go one at a time.
  if (!wal) {
    {
      MutexLock alloc_lock(&alloc_mutex_);
      AllocateShared(group, count);
      if (main_queue) RunPreRelease(group, 0);
    }
    NoteLogged(group, 0);
    if (!main_queue) RunPreRelease(group, 0);
    return Status::OK();
  }
  MutexLock log_lock(&log_mutex_);
  const uint64_t log_number = log_->log_number();
  SequenceNumber first;
  {
    MutexLock alloc_lock(&alloc_mutex_);
    first = AllocateShared(group, count);
    if (main_queue) RunPreRelease(group, log_number);
  }
  Status s = AppendGroup(group, record, first);
  if (!s.ok()) return s;
  NoteLogged(group, log_number);
  if (!main_queue) RunPreRelease(group, log_number);
  return s;
}

SequenceNumber DBImpl::NumberGroup(WriteGroup* group) {
  const SequenceNumber first = last_allocated_.load(std::memory_order_relaxed) + 1;
  SequenceNumber next = first;
  group->ForEach([&](Writer* m) {
    m->sequence = next;
    next += m->seq_count;
  });
  group->last_sequence = next - 1;
  return first;
}

SequenceNumber DBImpl::AllocateShared(WriteGroup* group, uint64_t count) {
  const SequenceNumber first = NumberGroup(group);
  if (count > 0) last_allocated_.store(first + count - 1, std::memory_order_relaxed);
  return first;
}

Status DBImpl::AppendGroup(WriteGroup* group, WriteBatch* record, SequenceNumber first) {
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
    // Numbered per sub-batch, a concatenation would hide where each writer's numbering
    // starts (recovery recounts sub-batches from it): each writer logs its own record,
    // and the group's records reach the OS together, with the last one's.
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
    s = closed_wals_.SyncAll(options_.use_fsync);
    if (s.ok()) s = log_->Sync(options_.use_fsync);
    internal_stats_->wal_syncs.fetch_add(1, std::memory_order_relaxed);
    RecordTick(stats_, WAL_FILE_SYNCED);
  }
  return s;
}

void DBImpl::NoteLogged(WriteGroup* group, uint64_t log_number) {
  // A prepare's WAL is kept from here on: no memtable switch (which needs the main queue,
  // or log_mutex_) can retire it before it is counted.
  group->ForEach([&](Writer* m) {
    m->log_used = log_number;
    if (log_number != 0 && m->prepares) prepared_logs_.Add(log_number);
  });
}

void DBImpl::RunPreRelease(WriteGroup* group, uint64_t log_number) {
  group->ForEach([&](Writer* m) {
    if (m->pre_release != nullptr) m->pre_release->Callback(m->sequence, m->seq_count, log_number);
  });
}

void DBImpl::InsertOwnBatch(Writer* w, bool concurrent) {
  if (w->wal_only) return;  // logged only (a prepare or a marker)
  if (test_before_insert_) test_before_insert_();
  w->status = WriteBatchInternal::InsertInto(w->batch, w->sequence, w->mem, concurrent,
                                             seq_per_batch_ ? w->seq_count : 0, this);
  if (w->status.ok() && w->txn_batch != nullptr) {
    // Before the commit returns and the prepare is resolved: its WAL then stays until this
    // memtable is flushed.
    w->mem->RefLogContainingPrepSection(w->prep_log);
    w->status = WriteBatchInternal::InsertInto(w->txn_batch,
                                               w->sequence + WriteBatchInternal::Count(w->batch),
                                               w->mem, concurrent, /*sub_batches=*/0, this);
  }
}

void DBImpl::FinishGroup(WriteGroup* group, Writer* self) {
  // Every insert of the batch is done, and (batches finishing in WAL order) every earlier
  // batch's: its sequences may become visible.
  Status failed;
  group->ForEachInBatch([&](Writer* m) {
    if (failed.ok() && !m->status.ok()) failed = m->status;
  });
  if (!failed.ok()) {
    DbLock l(this);
    RecordBackgroundError(failed);
  } else if (main_queue_publishes_) {
    last_published_.store(group->batch_last->last_sequence, std::memory_order_release);
  }
  write_thread_.ExitGroup(group, self);
}

Status DBImpl::WriteNumberOnly(PreReleaseCallback* pre_release) {
  // The second queue publishes (WritePrepared with two queues), one group at a time, each
  // group after its callbacks ran. Numbering, the callback and the publication in one hold
  // of alloc_mutex_ keep that order while no group is between its numbering and its
  // publication, that is while no writer is in WriteWalOnly: the increment of one that
  // numbered before this hold is seen through the mutex, and one that left published
  // first (acquire). Every smaller number of the main queue had its callback run in that
  // queue's own hold of alloc_mutex_.
  if (!main_queue_publishes_ && !has_bg_error_.load(std::memory_order_acquire)) {
    StopWatch write_timer(env_, stats_, DB_WRITE);
    MutexLock alloc_lock(&alloc_mutex_);
    if (wal_only_writers_.load(std::memory_order_acquire) == 0) {
      const SequenceNumber seq = last_allocated_.load(std::memory_order_relaxed) + 1;
      last_allocated_.store(seq, std::memory_order_relaxed);
      if (pre_release != nullptr) pre_release->Callback(seq, 1, 0);
      last_published_.store(seq, std::memory_order_release);
      return Status::OK();
    }
  }
  WriteBatch empty;
  WriteOptions number_only;
  number_only.disableWAL = true;
  TxnWrite t;
  t.wal_only = true;
  t.pre_release = pre_release;
  return WriteTxn(number_only, &empty, t);
}

Status DBImpl::WriteWalOnly(Writer* w) {
  StopWatch write_timer(env_, stats_, DB_WRITE);
  // Counted until this writer's status is final, which is after its group published.
  wal_only_writers_.fetch_add(1, std::memory_order_relaxed);
  struct Uncount {
    std::atomic<uint64_t>* writers;
    ~Uncount() { writers->fetch_sub(1, std::memory_order_release); }
  } uncount{&wal_only_writers_};
  if (nonmem_write_thread_.JoinBatchGroup(w) == WriteThread::kCompleted) return w->status;
  WriteGroup group;
  nonmem_write_thread_.EnterAsBatchGroupLeader(w, &group);
  Status s;
  if (has_bg_error_.load(std::memory_order_acquire)) {
    DbLock l(this);
    s = bg_error_;
  }
  if (s.ok()) {
    uint64_t count = 0;  // numbered per sub-batch, a commit takes one; else none
    group.ForEach([&](Writer* m) { count += m->seq_count; });
    WriteBatch merged;
    WriteBatch* record = nullptr;
    if (!w->disable_wal && !seq_per_batch_) {
      record = w->batch;
      if (group.size > 1) {
        record = &merged;
        group.ForEach([&](Writer* m) {
          WriteBatchInternal::Append(record, m->batch).PermitUncheckedError();
        });
      }
    }
    s = LogAndAllocate(&group, record, count, /*main_queue=*/false);
    if (!s.ok()) {
      DbLock l(this);
      RecordBackgroundError(s);
    } else if (!main_queue_publishes_) {
      // WritePrepared with two queues: the commits publish, in the order they were
      // numbered (one group at a time), their callbacks having run.
      last_published_.store(group.last_sequence, std::memory_order_release);
    }
  }
  group.ForEach([&](Writer* m) { m->status = s; });
  nonmem_write_thread_.ExitGroup(&group, w);
  return s;
}

Status DBImpl::SwitchMemtableForFlush() {
  // Switching needs the WAL queue to itself: join it as an exclusive writer, which is
  // never grouped and so always comes to lead.
  Writer w;
  write_thread_.JoinBatchGroup(&w);
  WriteGroup group;
  write_thread_.EnterAsBatchGroupLeader(&w, &group);
  Status s;
  {
    DbLock l(this);
    s = MakeRoomForWrite(/*force=*/true, 0, /*no_slowdown=*/false);
  }
  write_thread_.ExitWalStage(&group);
  return s;
}

Status DBImpl::MakeRoomForWrite(bool force, uint64_t write_bytes, bool no_slowdown) {
  bool delayed = false;  // a write is slowed at most once
  while (true) {
    if (!bg_error_.ok()) return bg_error_;
    if (shutting_down_ && !force) return Status::ShutdownInProgress();
    const auto state = write_controller_.state();
    if (!force && state == WriteController::State::kDelayed && !delayed) {
      if (no_slowdown) return Status::Incomplete("Write stall");
      delayed = true;
      const uint64_t delay = write_controller_.GetDelay(env_->NowMicros(), write_bytes);
      if (delay > 0) {
        // The leader sleeps without the mutex; its group waits behind it, which is the
        // point of a slowdown.
        UnlockDb();
        env_->SleepForMicroseconds(static_cast<int>(std::min<uint64_t>(delay, 1000000)));
        LockDb();
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
      bg_cv_.Wait(&mutex_);
      const uint64_t stalled = env_->NowMicros() - start;
      write_controller_.AddStallMicros(write_controller_.cause(), true, stalled);
      RecordTick(stats_, STALL_MICROS, stalled);
      RecordTimeToHistogram(stats_, WRITE_STALL, stalled);
      continue;
    }
    if (!force && !default_cf_->mem()->ShouldFlush()) return Status::OK();
    if (force && default_cf_->mem()->IsEmpty()) return Status::OK();
    if (static_cast<int>(default_cf_->imm().size()) >=
        current_options_->max_write_buffer_number - 1) {
      // Every memtable is full: wait for a flush (a write stop).
      if (no_slowdown && !force) return Status::Incomplete("Write stall");
      const uint64_t start = env_->NowMicros();
      MaybeScheduleFlush();
      bg_cv_.Wait(&mutex_);
      const uint64_t stalled = env_->NowMicros() - start;
      write_controller_.AddStallMicros(WriteController::kMemtableLimit, true, stalled);
      RecordTick(stats_, STALL_MICROS, stalled);
      RecordTimeToHistogram(stats_, WRITE_STALL, stalled);
      RecordInHistogram(stats_, STALL_MEMTABLE_COMPACTION_COUNT, 1);
      continue;
    }
    // Inserts of earlier groups (pipelined) or of unordered writers may still go to the
    // active memtable: it becomes immutable, and may be flushed, only once they are in.
    // The wait needs no DB mutex, and as WAL leader this thread keeps new ones out.
    UnlockDb();
    write_thread_.WaitForMemtableWriters();
    LockDb();
    if (!bg_error_.ok()) return bg_error_;
    Status s = SwitchMemtable();
    if (!s.ok()) return s;
    MaybeScheduleFlush();
    return Status::OK();
  }
}

void DBImpl::RecalculateWriteStallConditions() {
  Version* current = versions_->current();
  if (write_controller_.Update(current->NumFiles(0), EstimatePendingCompactionBytes(),
                               !current_options_->disable_auto_compactions)) {
    bg_cv_.SignalAll();  // stopped writers re-check
  }
}

MemTable* DBImpl::NewMemTable() {
  // A memtable filter costs each write a cache line and spares each Get of a key the
  // memtable lacks a skip-list search of some twenty. The memtable being replaced tells
  // whether Gets are coming: a filter if they reached it at least once per
  // kEntriesPerGetForFilter entries, so a DB only written to drops it from its second
  // memtable on. With no memtable before (at open), one: a reader of a freshly opened DB
  // may never fill the first memtable, and a writer pays for one memtable only.
  const MemTable* old = default_cf_->mem();
  const bool with_filter =
      old == nullptr ||
      old->SampledGets() * MemTable::kGetSample * kEntriesPerGetForFilter >= old->num_entries();
  return new MemTable(default_cf_->internal_comparator(), current_options_->write_buffer_size,
                      current_options_->arena_block_size, current_options_->memtable_huge_page_size,
                      memtable_blocks_, with_filter);
}

Status DBImpl::SwitchMemtable() {
  // Creating the new WAL file is I/O under the mutex; it happens once per memtable.
  const uint64_t new_log_number = versions_->NewFileNumber();
  std::unique_ptr<WritableFile> file;
  Status s = env_->NewWritableFile(LogFileName(dbname_, new_log_number), &file,
                                   log::WalFileOptions(options_));
  if (s.ok() && db_dir_ != nullptr) {
    // The new WAL's directory entry must be durable before a synced write relies on it.
    s = db_dir_->Fsync();
  }
  if (!s.ok()) {
    RecordBackgroundError(s);
    return s;
  }
  // The WAL-only queue (two_write_queues) may be appending to the old WAL: the swap takes
  // log_mutex_, and not under the DB mutex, because a writer holding log_mutex_ may take
  // the DB mutex (a WritePrepared commit's callback fetching the snapshots). The order is
  // log_mutex_, then the DB mutex. As the main queue's WAL leader, this thread keeps the
  // main queue's writers out meanwhile.
  Status close;
  UnlockDb();
  {
    MutexLock log_lock(&log_mutex_);
    uint64_t old_number = 0;
    uint64_t old_size = 0;
    if (log_ != nullptr) {
      old_number = log_->log_number();
      old_size = log_->file()->GetFileSize();
      // Not synced here, where every writer would wait for it: by the flush, or by a
      // sync=true write first (db/closed_wals.h). The new WAL names it and its size, so
      // that recovery can tell when a power loss kept the new one and cut the old one.
      if (log_->has_unsynced_records()) {
        closed_wals_.Add(std::move(log_));
      } else {
        close = log_->Close();
      }
    }
    if (close.ok()) {
      log_ = std::make_unique<log::Writer>(std::move(file), new_log_number);
      if (old_number != 0) close = log_->AddPredecessor(old_number, old_size);
    }
  }
  LockDb();
  if (!close.ok()) {
    RecordBackgroundError(close);
    return close;
  }
  logfile_number_ = new_log_number;
  // The sizes in effect now: a SetOptions since the last switch applies from here.
  MemTable* mem = NewMemTable();
  mem->SetLogNumber(new_log_number);
  // The WAL leader switches with every earlier write allocated and inserted.
  mem->SetEarliestSequence(last_allocated_.load(std::memory_order_relaxed) + 1);
  default_cf_->SwitchMemtable(mem);
  default_cf_->TrimHistory(current_options_->write_buffer_size);
  InstallNewSuperVersion();
  return Status::OK();
}

}  // namespace shale
