// WritePipeline's entry, its routes per write mode, and the memtable stage. The WAL stage
// and the WAL-only queue are in write_pipeline_wal.cc.
#include "db/write_pipeline.h"

#include "db/merge_folder.h"
#include "db/write_batch_internal.h"
#include "memtable/memtable.h"
#include "util/statistics.h"

namespace shale {

using Writer = WriteThread::Writer;
using WriteGroup = WriteThread::WriteGroup;
using TxnWrite = DBForTransactions::TxnWrite;

namespace {

WriteThread::WaitOptions WaitOptionsOf(const Options& o) {
  WriteThread::WaitOptions wait;
  wait.adaptive_yield = o.enable_write_thread_adaptive_yield;
  wait.max_yield_usec = o.write_thread_max_yield_usec;
  wait.slow_yield_usec = o.write_thread_slow_yield_usec;
  return wait;
}

}  // namespace

WritePipeline::WritePipeline(const Options& options, bool seq_per_batch, Host* host,
                             MergeFolder* folder, InternalStats* internal_stats, Statistics* stats)
    : host_(host),
      env_(options.env),
      folder_(folder),
      internal_stats_(internal_stats),
      stats_(stats),
      seq_per_batch_(seq_per_batch),
      main_queue_publishes_(!(seq_per_batch && options.two_write_queues)),
      allow_2pc_(options.allow_2pc),
      use_fsync_(options.use_fsync),
      parallel_inserts_(options.allow_concurrent_memtable_write),
      main_route_(options.unordered_write          ? &WritePipeline::RunUnordered
                  : options.enable_pipelined_write ? &WritePipeline::RunPipelined
                                                   : &WritePipeline::RunOrdered),
      wal_only_route_(options.two_write_queues ? &WritePipeline::RunWalOnly : main_route_),
      log_main_(options.two_write_queues ? &WritePipeline::LogAndAllocateMainOfTwo
                                         : &WritePipeline::LogAndAllocateOneQueue),
      // Ordered writes hold the queue through their inserts: a leader waits a moment for
      // a companion, so that writers share groups and insert in parallel.
      write_thread_(WaitOptionsOf(options),
                    !options.enable_pipelined_write && !options.unordered_write
                        ? WriteThread::kCompanionWaitNanos
                        : 0),
      wal_only_thread_(WaitOptionsOf(options)) {}

// ---- The entry.

Status WritePipeline::Classify(const WriteOptions& o, WriteBatch* batch, const TxnWrite& t,
                               Origin origin, PendingWrite* w, bool* nothing) const {
  *nothing = false;
  if (batch == nullptr) return Status::InvalidArgument("Batch is nullptr!");
  w->batch = batch;
  w->wal_only = t.wal_only;
  const bool txn = origin == Origin::kTransaction;
  // A malformed batch fails here, for its own writer only, before it reaches the WAL.
  uint64_t sub_batches = 0;
  Status s = WriteBatchInternal::ValidateForWrite(batch, host_->FamilyMemtables(),
                                                  /*txn_markers=*/txn, &w->has_merge,
                                                  seq_per_batch_ ? &sub_batches : nullptr,
                                                  txn ? &w->prepares : nullptr, &w->commits);
  if (!s.ok()) return s;
  const uint64_t count = WriteBatchInternal::Count(batch);
  if (!txn) {
    if (t.wal_only) {
      if (count != 0) return Status::InvalidArgument("a WAL-only write may hold no keys");
    } else if (count == 0) {
      // Nothing to apply. PutLogData blobs are for the WAL's readers: they go to the WAL
      // alone (as RocksDB's do), unless the write skips the WAL.
      if (WriteBatchInternal::ByteSize(batch) <= WriteBatchInternal::kHeader || o.disableWAL) {
        *nothing = true;
        return Status::OK();
      }
      w->wal_only = true;
    }
    w->keys = w->wal_only ? 0 : count;
    w->seq_count = seq_per_batch_ ? sub_batches : w->keys;
    return Status::OK();
  }

  w->pre_release = t.pre_release;
  if (w->prepares && !allow_2pc_) {
    return Status::NotSupported("a prepared transaction needs allow_2pc (TransactionDB)");
  }
  if (seq_per_batch_) {
    // WritePrepared: a prepare's records go to the memtable at once; a commit inserts
    // nothing more; every write takes a number per sub-batch, a marker one.
    if (t.txn_batch != nullptr) {
      return Status::NotSupported("a WritePrepared commit inserts no prepared records");
    }
    if (t.wal_only && count != 0) {
      return Status::InvalidArgument("a write that inserts nothing may hold no keys");
    }
    w->keys = t.wal_only ? 0 : count;
    w->seq_count = sub_batches;
    // A commit's or rollback's records keep the prepare's WAL until their memtable is
    // flushed: before that, a power loss may take them while the prepare is in a table.
    if (!t.wal_only) w->prep_log = t.prep_log;
    return Status::OK();
  }
  if (t.wal_only) {
    if (t.txn_batch != nullptr) return Status::InvalidArgument("a WAL-only write inserts nothing");
    if (count != 0 && !w->prepares) {
      return Status::InvalidArgument("a WAL-only write holds keys only in a prepared section");
    }
    return Status::OK();
  }
  if (w->prepares) return Status::InvalidArgument("a prepared section is written WAL-only");
  w->keys = count;
  if (t.txn_batch != nullptr) {
    bool txn_merge = false;
    s = WriteBatchInternal::ValidateForWrite(t.txn_batch, host_->FamilyMemtables(),
                                             /*txn_markers=*/false, &txn_merge);
    if (!s.ok()) return s;
    w->has_merge = w->has_merge || txn_merge;
    w->txn_batch = t.txn_batch;
    w->prep_log = t.prep_log;
    w->keys += WriteBatchInternal::Count(t.txn_batch);
  }
  w->seq_count = w->keys;
  return Status::OK();
}

Status WritePipeline::Write(const WriteOptions& o, WriteBatch* batch, const TxnWrite& t,
                            Origin origin) {
  PendingWrite w;
  bool nothing = false;
  Status s = Classify(o, batch, t, origin, &w, &nothing);
  if (!s.ok() || nothing) return s;
  if (o.sync && o.disableWAL) return Status::InvalidArgument("Sync writes has to enable WAL.");
  if (w.wal_only && o.disableWAL && w.seq_count == 0) {
    // Only a write that takes a number has a use without the WAL.
    return Status::InvalidArgument("a WAL-only write needs the WAL");
  }
  if ((w.txn_batch != nullptr || w.commits) && o.disableWAL) {
    // The commit marker is what makes the prepared records part of the DB at recovery.
    return Status::InvalidArgument("a commit of a prepared transaction needs the WAL");
  }
  w.sync = o.sync;
  w.disable_wal = o.disableWAL;
  w.no_slowdown = o.no_slowdown;
  s = w.wal_only ? (this->*wal_only_route_)(&w) : (this->*main_route_)(&w);
  if (t.log_used != nullptr) *t.log_used = w.log_used;
  if (t.seq_used != nullptr) *t.seq_used = w.seq_count == 0 ? LastPublished() : w.sequence;
  return s;
}

Status WritePipeline::WriteNumberOnly(PreReleaseCallback* pre_release) {
  // The second queue publishes (WritePrepared with two queues), one group at a time, each
  // group after its callbacks ran. Numbering, the callback and the publication in one hold
  // of alloc_mutex_ keep that order while no group is between its numbering and its
  // publication, that is while no writer is in RunWalOnly: the increment of one that
  // numbered before this hold is seen through the mutex, and one that left published
  // first (acquire). Every smaller number of the main queue had its callback run in that
  // queue's own hold of alloc_mutex_.
  if (!main_queue_publishes_ && !host_->HasBackgroundError()) {
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
  // Only a write that takes a number has a use without the WAL.
  if (!seq_per_batch_) return Status::InvalidArgument("a WAL-only write needs the WAL");
  // Through the queue: an empty batch that takes one number, without the WAL.
  WriteBatch empty;
  PendingWrite w;
  w.batch = &empty;
  w.wal_only = true;
  w.disable_wal = true;
  w.seq_count = 1;
  w.pre_release = pre_release;
  return (this->*wal_only_route_)(&w);
}

Status WritePipeline::WithQueueAlone(const std::function<Status()>& fn) {
  // An exclusive writer (no batch) is never grouped, and so always comes to lead.
  PendingWrite w;
  write_thread_.JoinBatchGroup(&w);
  WriteGroup group;
  write_thread_.EnterAsBatchGroupLeader(&w, &group);
  Status s = fn();
  write_thread_.ExitWalStage(&group);
  return s;
}

// ---- The routes.

bool WritePipeline::LeadWalStage(PendingWrite* w, WriteGroup* group, Status* outcome) {
  const uint8_t state = write_thread_.JoinBatchGroup(w);
  if (state == WriteThread::kParallelMemtableWriter) {
    *outcome = InsertAsMember(w);
    return false;
  }
  if (state == WriteThread::kCompleted) {
    *outcome = w->status;
    return false;
  }
  // This thread leads a group: it alone touches the WAL queue's state.
  wal_leader_.AssertHeld();
  Status s = WalStage(w, group);
  if (!s.ok()) {
    *outcome = FailGroup(group, w, s);
    return false;
  }
  return true;
}

Status WritePipeline::RunOrdered(PendingWrite* w) {
  StopWatch write_timer(env_, stats_, DB_WRITE);
  WriteGroup group;
  Status outcome;
  if (!LeadWalStage(w, &group, &outcome)) return outcome;
  return LeadMemtableStage(&group, w);
}

Status WritePipeline::RunPipelined(PendingWrite* w) {
  StopWatch write_timer(env_, stats_, DB_WRITE);
  WriteGroup group;
  Status outcome;
  if (!LeadWalStage(w, &group, &outcome)) return outcome;
  const uint8_t stage = write_thread_.EnterMemtableStage(&group);
  // An earlier group's memtable stage may have taken this one along.
  if (stage == WriteThread::kParallelMemtableWriter) return InsertAsMember(w);
  if (stage == WriteThread::kCompleted) return w->status;
  return LeadMemtableStage(&group, w);
}

Status WritePipeline::RunUnordered(PendingWrite* w) {
  StopWatch write_timer(env_, stats_, DB_WRITE);
  const uint8_t state = write_thread_.JoinBatchGroup(w);
  if (state == WriteThread::kParallelMemtableWriter) {
    // The leader published this write and counted it as pending: insert, then uncount.
    InsertOwnBatch(w, /*concurrent=*/true);
    write_thread_.EndUnorderedInsert();
    return w->status;
  }
  if (state == WriteThread::kCompleted) return w->status;
  wal_leader_.AssertHeld();
  WriteGroup group;
  Status s = WalStage(w, &group);
  if (!s.ok()) return FailGroup(&group, w, s);
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

Status WritePipeline::FailGroup(WriteGroup* group, PendingWrite* leader, const Status& s) {
  group->ForEach([&](Writer* m) { m->status = s; });
  write_thread_.ExitGroup(group, leader);
  return s;
}

// ---- The memtable stage.

Status WritePipeline::InsertAsMember(PendingWrite* w) {
  InsertOwnBatch(w, /*concurrent=*/true);
  if (write_thread_.CompleteParallelWriter(w)) FinishGroup(w->group, w);
  return w->status;
}

Status WritePipeline::LeadMemtableStage(WriteGroup* group, PendingWrite* w) {
  // This thread leads the memtable stage of its group (and, pipelined, of the groups it
  // took along). A Merge reads the memtable (max_successive_merges) and orders itself
  // against other writes to its key: a batch with one inserts serially, as RocksDB's does.
  if (parallel_inserts_ && group->batch_size > 1 && !group->BatchHasMerge()) {
    write_thread_.LaunchParallelWriters(group);  // sets w->group
    return InsertAsMember(w);
  }
  // One inserter at a time: serial inserts never overlap concurrent ones, since batches
  // take their memtable stage in turn.
  group->ForEachInBatch(
      [&](Writer* m) { InsertOwnBatch(PendingWrite::Of(m), /*concurrent=*/false); });
  FinishGroup(group, w);
  return w->status;
}

void WritePipeline::InsertOwnBatch(PendingWrite* w, bool concurrent) {
  if (w->wal_only) return;  // logged only (a prepare or a marker)
  if (test_before_insert_) test_before_insert_();
  w->status = WriteBatchInternal::InsertInto(
      w->batch, w->sequence, w->mem, host_->FamilyMemtables(), concurrent,
      seq_per_batch_ ? w->seq_count : 0, folder_, seq_per_batch_ ? w->prep_log : 0);
  if (w->status.ok() && w->txn_batch != nullptr) {
    // Before the commit returns and the prepare is resolved: its WAL then stays until
    // every memtable the prepared records go to (one per family) is flushed.
    w->status = WriteBatchInternal::InsertInto(
        w->txn_batch, w->sequence + WriteBatchInternal::Count(w->batch), w->mem,
        host_->FamilyMemtables(), concurrent, /*sub_batches=*/0, folder_, w->prep_log);
  }
}

void WritePipeline::FinishGroup(WriteGroup* group, Writer* self) {
  // Every insert of the batch is done, and (batches finishing in WAL order) every earlier
  // batch's: its sequences may become visible.
  Status failed;
  group->ForEachInBatch([&](Writer* m) {
    if (failed.ok() && !m->status.ok()) failed = m->status;
  });
  if (!failed.ok()) {
    host_->SetBackgroundError(failed);
  } else if (main_queue_publishes_) {
    last_published_.store(group->batch_last->last_sequence, std::memory_order_release);
  }
  write_thread_.ExitGroup(group, self);
}

}  // namespace shale
