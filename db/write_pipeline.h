// WritePipeline: everything a write passes through between the API call and its return:
// the write queues, the WAL writer and its locks, the sequence counters, the group's WAL
// record, the WALs left unsynced at a switch, and the WALs kept for prepared transactions.
// DBImpl holds one and forwards every write to it; the memtables, the write stalls and the
// background error stay the DB's, reached through Host.
//
// One entry: Write takes a plain write, a transaction's prepare, commit or rollback, and a
// WAL-only marker alike. Classify checks the batch against what its origin may carry and
// settles what the write takes (sequence numbers, memtable or not, its transaction parts);
// the write mode, chosen once at construction, then routes it:
//
//   ordered (default)  a group leaves the queue after its inserts and its publication, so
//                      groups publish in WAL order;
//   pipelined          a group leaves the WAL queue after its WAL write and waits its turn
//                      in the memtable queue: the next group's WAL write overlaps its
//                      inserts, and publication stays in order;
//   unordered          the group publishes right after its WAL write and leaves; each
//                      writer then inserts its own batch alone (options.h says what readers
//                      may see meanwhile);
//   WAL-only queue     two_write_queues: writes with nothing for the memtable take a second
//                      queue and share only the WAL (log_mutex_) and the numbering
//                      (alloc_mutex_) with the first.
//
// Sequence numbers. last_allocated is advanced by a WAL leader (with two queues under
// alloc_mutex_, inside log_mutex_ when the write is logged, so that WAL order is sequence
// order); last_published by the batch of groups that finishes its inserts (ordered,
// pipelined), by the WAL stage (unordered), or by the second queue (WritePrepared with two
// queues, where only commits publish).
//
// Thread roles and what each may touch (the WAL leader's is a capability the compiler
// checks, wal_leader_):
//   any writer      Write, WriteNumberOnly: queues itself and waits for its state.
//   WAL leader      the leader of the main queue's group: makes room (Host), builds the
//                   group's record in group_batch_, appends and syncs the WAL, numbers the
//                   group. Only it switches the WAL (SwitchWal, through Host's memtable
//                   switch) and reads the active memtable without the DB mutex.
//   WAL-only leader the second queue's leader: appends under log_mutex_ beside the WAL
//                   leader; never switches the WAL.
//   memtable leader the leader of a batch of groups' memtable stage: launches the members'
//                   parallel inserts or inserts them in turn, and with the last insert
//                   publishes (ordered, pipelined).
//   exclusive       WithQueueAlone: holds the main queue with no batch (a forced memtable
//                   switch for Flush).
//   the DB          Open (StartWal, SetLastSequence before any writer), flush (SyncClosedWals),
//                   Close (CloseWals after the last writer), readers (LastPublished).
//
// Locks: log_mutex_, then alloc_mutex_ (ACQUIRED_AFTER). Neither is ever held with the DB
// mutex: Host is called with none of them held, and SwitchWal is called without the DB
// mutex. A pre-release callback may run under alloc_mutex_ (db/pre_release_callback.h),
// so it may take only leaf locks (the snapshot list's, DBForTransactions::SnapshotsUpTo).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "db/closed_wals.h"
#include "db/db_for_transactions.h"
#include "db/log_writer.h"
#include "db/pending_write.h"
#include "db/prepared_logs.h"
#include "db/write_thread.h"
#include "shale/options.h"
#include "util/mutexlock.h"
#include "util/thread_annotations.h"

namespace shale {

class ColumnFamilyMemTables;
class InternalStats;
class MemTable;
class MergeFolder;
class Statistics;

// A thread role as a capability, so that the compiler checks what only the role's holder may
// do: a thread that has come to hold the role (WriteThread handed it kGroupLeader) says so
// with AssertHeld, and the analysis then lets it call what REQUIRES the role and touch what
// is GUARDED_BY it, for the rest of that function. Nothing is locked: the queue protocol
// is what makes the role exclusive.
class CAPABILITY("role") ThreadRole {
 public:
  void AssertHeld() const ASSERT_CAPABILITY(this) {}
};

class WritePipeline {
 public:
  // What the pipeline needs of the DB it serves. Called by the WAL leader, with none of
  // the pipeline's locks held.
  class Host {
   public:
    // Whether MakeRoomForWrite may have anything to do: a background error, a close, a
    // write stall, or a full active memtable (read without the DB mutex; a change seen one
    // group late is as if that group had come first).
    virtual bool MayNeedRoom() = 0;
    // Takes the DB mutex and makes room for a group of write_bytes (switching the memtable
    // and the WAL when full, delaying or stopping for a stall): OK, the background error,
    // ShutdownInProgress, or Incomplete for a stalled no_slowdown write.
    virtual Status MakeRoomForWrite(uint64_t write_bytes, bool no_slowdown) = 0;
    // The default family's active memtable, which only the WAL leader replaces: stable for
    // the caller.
    virtual MemTable* ActiveMemtable() = 0;
    // The other families' memtables, for checking and inserting batches (any thread).
    virtual ColumnFamilyMemTables* FamilyMemtables() = 0;
    // A write failed where a later write must not be acknowledged (the WAL may hold part
    // of its record, or a memtable part of its batch): the DB's background error.
    virtual void SetBackgroundError(const Status& s) = 0;
    // The background error, once HasBackgroundError said there is one.
    virtual Status BackgroundError() = 0;
    virtual bool HasBackgroundError() = 0;

   protected:
    ~Host() = default;
  };

  // Where a write comes from decides what its batch may hold: a user's write no
  // transaction markers, a transaction's write (DBForTransactions) markers and the
  // TxnWrite parts.
  enum class Origin { kUser, kTransaction };

  // options: as opened (write modes, two_write_queues, allow_2pc, use_fsync, env); stats and
  // internal_stats may be null / must outlive the pipeline; folder (may be null) folds
  // successive merges at insert. seq_per_batch: WritePrepared's numbering.
  WritePipeline(const Options& options, bool seq_per_batch, Host* host, MergeFolder* folder,
                InternalStats* internal_stats, Statistics* stats);
  WritePipeline(const WritePipeline&) = delete;
  WritePipeline& operator=(const WritePipeline&) = delete;

  // ---- Writes.
  // The one entry. t: the transaction parts (DBForTransactions::TxnWrite; for a user's
  // write only wal_only counts: a batch without keys that must go to the WAL alone). Sets
  // *t.log_used and *t.seq_used when given.
  Status Write(const WriteOptions& o, WriteBatch* batch, const DBForTransactions::TxnWrite& t,
               Origin origin);
  // DBForTransactions::WriteNumberOnly.
  Status WriteNumberOnly(PreReleaseCallback* pre_release);
  // Runs fn as the main queue's only writer (no batch, no group): no WAL leader runs
  // meanwhile. fn may call SwitchWal and WaitForMemtableWriters.
  Status WithQueueAlone(const std::function<Status()>& fn);
  // REQUIRES: the caller is the WAL leader or WithQueueAlone's fn. Returns once no group
  // is in its memtable stage and no unordered insert is pending.
  void WaitForMemtableWriters() { write_thread_.WaitForMemtableWriters(); }

  // ---- The WAL.
  // Open, before any writer: file (number `number`) is the WAL writes go to.
  void StartWal(std::unique_ptr<WritableFile> file, uint64_t number);
  // REQUIRES: the caller is the WAL leader (or WithQueueAlone's fn), and holds no DB
  // mutex. Makes file (number `number`, fresh and empty) the WAL: the old one is closed, or
  // kept unsynced in the closed WALs when it holds unsynced records, and the new one
  // names it and its size as its predecessor (recovery's check for a lost tail).
  Status SwitchWal(std::unique_ptr<WritableFile> file, uint64_t number)
      EXCLUDES(log_mutex_, alloc_mutex_);
  // Makes the WALs left unsynced at switches durable (a flush, before its file counts).
  Status SyncClosedWals() { return closed_wals_.SyncAll(use_fsync_); }
  // Close, after the last writer: closes the WAL and the unsynced ones.
  Status CloseWals();
  // Writes made with disableWAL since ClearUnpersisted (Flush clears it when the
  // memtable they went to is flushed).
  bool has_unpersisted_data() const {
    return has_unpersisted_data_.load(std::memory_order_relaxed);
  }
  void ClearUnpersisted() { has_unpersisted_data_.store(false, std::memory_order_relaxed); }

  // ---- Two-phase commit: the WALs holding unresolved prepares.
  PreparedLogs& prepared_logs() { return prepared_logs_; }

  // ---- Sequences.
  // Open, before any writer: the last sequence recovery found.
  void SetLastSequence(SequenceNumber seq);
  SequenceNumber LastPublished() const { return last_published_.load(std::memory_order_acquire); }
  // REQUIRES: the caller is the WAL leader (every number handed out is inserted).
  SequenceNumber LastAllocated() const { return last_allocated_.load(std::memory_order_relaxed); }
  // Numbers for data that reaches the DB without the WAL (an ingested file). REQUIRES for
  // both: the caller is WithQueueAlone's fn, after WaitForMemtableWriters, with one write
  // queue (no two_write_queues: the second one numbers on its own), so that every number
  // taken so far is published and nobody else takes one meanwhile.
  // The next number, which no write has taken.
  SequenceNumber NextSequenceAlone() const {
    return last_allocated_.load(std::memory_order_relaxed) + 1;
  }
  // Takes and publishes every number up to last (once the data is in place).
  void PublishAlone(SequenceNumber last);

  // ---- Tests.
  // Called at the start of every memtable insert, on the inserting thread. Set before
  // writes start.
  void TEST_SetBeforeMemtableInsert(std::function<void()> hook) {
    test_before_insert_ = std::move(hook);
  }

 private:
  // The mode's route for a classified write that reaches the main queue.
  using Route = Status (WritePipeline::*)(PendingWrite* w);
  // When the pre-release callbacks of a group with two queues run: as its numbers are
  // taken (main queue: no commit numbered later can publish first) or after its append
  // (WAL-only queue: a commit counts once its marker is logged).
  enum class PreReleaseAt { kAllocation, kAfterAppend };

  // Checks batch for origin and fills w's classification; *nothing: the write has nothing
  // to do and succeeds as it is.
  Status Classify(const WriteOptions& o, WriteBatch* batch, const DBForTransactions::TxnWrite& t,
                  Origin origin, PendingWrite* w, bool* nothing) const;

  // The routes (write_pipeline.cc).
  Status RunOrdered(PendingWrite* w);
  Status RunPipelined(PendingWrite* w);
  Status RunUnordered(PendingWrite* w);
  Status RunWalOnly(PendingWrite* w);  // two_write_queues (write_pipeline_wal.cc)
  // The start the ordered and pipelined routes share: queues w; if it comes to lead, forms
  // its group and runs the WAL stage, and returns true. Otherwise (w was a member, was
  // completed, or its group failed) returns false with w's outcome in *outcome.
  bool LeadWalStage(PendingWrite* w, WriteThread::WriteGroup* group, Status* outcome);
  // A member asked to insert its own batch: inserts, and finishes the batch of groups if
  // it is the last to.
  Status InsertAsMember(PendingWrite* w);
  // The group failed before its inserts: every member gets s, the group leaves the queue.
  Status FailGroup(WriteThread::WriteGroup* group, PendingWrite* leader, const Status& s);
  // Leads the memtable stage of the batch group begins: parallel inserts, or each member
  // in turn (one with a Merge inserts serially: a Merge reads the memtable).
  Status LeadMemtableStage(WriteThread::WriteGroup* group, PendingWrite* w);
  void InsertOwnBatch(PendingWrite* w, bool concurrent);
  // Publishes the batch of groups group begins (its inserts done) and ends it.
  void FinishGroup(WriteThread::WriteGroup* group, WriteThread::Writer* self);

  // The WAL stage (write_pipeline_wal.cc). The leader's part before the memtable: makes
  // room, forms the group, logs it (one WAL record, one sync), and assigns each member its
  // sequence and memtable. On error the group is formed but nothing of it is logged or
  // allocated.
  Status WalStage(PendingWrite* leader, WriteThread::WriteGroup* group) REQUIRES(wal_leader_);
  // The group's one WAL record: the leader's batch alone, else the members' concatenated
  // into scratch. Null when the group skips the WAL, or with seq_per_batch (each writer
  // logs its own).
  WriteBatch* GroupRecord(WriteThread::WriteGroup* group, WriteBatch* scratch) const;
  // Numbers the group from last_allocated + 1, logs it unless its WAL is off, syncs if
  // asked, allocates the count numbers, tells each member its WAL (counting a prepare's)
  // and runs the pre-release callbacks. The one-queue form numbers, logs, and only then
  // allocates, so that a failed append consumes no number.
  Status LogAndAllocateOneQueue(WriteThread::WriteGroup* group, WriteBatch* record, uint64_t count)
      REQUIRES(wal_leader_) EXCLUDES(log_mutex_, alloc_mutex_);
  Status LogAndAllocateTwoQueues(WriteThread::WriteGroup* group, WriteBatch* record, uint64_t count,
                                 PreReleaseAt when) EXCLUDES(log_mutex_, alloc_mutex_);
  // The main queue's WAL leader with two queues: LogAndAllocateTwoQueues(kAllocation).
  Status LogAndAllocateMainOfTwo(WriteThread::WriteGroup* group, WriteBatch* record, uint64_t count)
      REQUIRES(wal_leader_) EXCLUDES(log_mutex_, alloc_mutex_);
  SequenceNumber NumberGroup(WriteThread::WriteGroup* group);
  SequenceNumber AllocateShared(WriteThread::WriteGroup* group, uint64_t count)
      REQUIRES(alloc_mutex_);
  Status AppendGroup(WriteThread::WriteGroup* group, WriteBatch* record, SequenceNumber first);
  void NoteLogged(WriteThread::WriteGroup* group, uint64_t log_number);
  void RunPreRelease(WriteThread::WriteGroup* group, uint64_t log_number);
  void CountGroup(const WriteThread::WriteGroup& group, uint64_t keys);

  Host* const host_;
  Env* const env_;
  MergeFolder* const folder_;
  InternalStats* const internal_stats_;
  Statistics* const stats_;
  const bool seq_per_batch_;
  // WritePrepared with two queues: only the second queue's commits publish.
  const bool main_queue_publishes_;
  const bool allow_2pc_;
  const bool use_fsync_;
  const bool parallel_inserts_;  // allow_concurrent_memtable_write
  // Chosen at construction from the write mode.
  const Route main_route_;
  const Route wal_only_route_;  // RunWalOnly with two queues, else the main route
  // How the main queue's WAL leader logs and numbers a group: LogAndAllocateOneQueue, or
  // LogAndAllocateMainOfTwo with two queues.
  using LogRoute = Status (WritePipeline::*)(WriteThread::WriteGroup* group, WriteBatch* record,
                                             uint64_t count);
  const LogRoute log_main_;

  WriteThread write_thread_;
  WriteThread wal_only_thread_;  // two_write_queues
  // The main queue's WAL leader (the thread roles above): held by the writer that
  // write_thread_ made a group's leader, until its group leaves the WAL queue.
  ThreadRole wal_leader_;

  // The WAL: appended by the main queue's WAL leader, under log_mutex_ when two queues
  // append; replaced by SwitchWal under log_mutex_.
  Mutex log_mutex_;
  std::unique_ptr<log::Writer> log_;
  ClosedWals closed_wals_;  // WALs switched away from unsynced (db/closed_wals.h)
  WriteBatch group_batch_ GUARDED_BY(wal_leader_);  // the WAL leader's group record

  // Numbers handed out and published (see the top). alloc_mutex_ is taken inside
  // log_mutex_ by a logged write of two queues.
  Mutex alloc_mutex_ ACQUIRED_AFTER(log_mutex_);
  std::atomic<SequenceNumber> last_allocated_{0};
  std::atomic<SequenceNumber> last_published_{0};
  // Writers in RunWalOnly, from entry until their status is final (after their group
  // published): while there are none, WriteNumberOnly may number and publish on its own.
  std::atomic<uint64_t> wal_only_writers_{0};

  PreparedLogs prepared_logs_;
  std::atomic<bool> has_unpersisted_data_{false};
  std::function<void()> test_before_insert_;
};

}  // namespace shale
