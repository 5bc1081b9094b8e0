// WriteThread: the queue every write passes through. It forms groups of concurrent writers
// so that one leader writes the whole group to the WAL as one record, syncs at most once
// and assigns the group consecutive sequence numbers; then either the leader inserts the
// group into the memtable or every member inserts its own batch in parallel.
//
// Protocol (the write pipeline drives it: db/write_pipeline.h, which queues PendingWrites,
// db/pending_write.h, Writers with what the pipeline decided about each write):
// - Every writer calls JoinBatchGroup. It returns the state the writer was handed:
//   kGroupLeader (lead the next group), kParallelMemtableWriter (a leader assigned this
//   writer's sequence and asks it to insert its own batch), or kCompleted (a leader or a
//   group member finished the write; Writer::status is final).
// - A leader calls EnterAsBatchGroupLeader to gather the writers queued behind it that may
//   share its WAL record, does the WAL work, then ends the group one of three ways:
//   * ExitGroup (ordered writes: the group leaves the queue only after its memtable
//     inserts, so groups publish in order; also a group whose WAL write failed);
//   * EnterMemtableStage (pipelined writes: the group leaves the WAL queue at once, so the
//     next group's WAL write overlaps this group's inserts, and waits its turn in a second,
//     memtable queue, which keeps publication in order);
//   * ExitWalStage (unordered writes: the group leaves the queue with nothing more to do
//     together, and LaunchParallelWriters sends each member to insert and return).
// - LaunchParallelWriters hands each member kParallelMemtableWriter; each member calls
//   CompleteParallelWriter after its insert, and the one that finishes last gets true and
//   must publish the group's sequence and call ExitGroup.
// - A writer with batch == nullptr asks for the queue alone (a memtable switch for Flush):
//   it is never grouped with others, and leaves through ExitWalStage.
//
// Waiting: a writer waits for its state to change by spinning briefly, then (with adaptive
// yield) yielding the CPU for up to max_yield_usec, then blocking on its own condition
// variable. At most one waiter per core but one spins, so that spinners never crowd out
// the leader they wait for; the others start with yielding. The common handoff, a leader
// completing followers that are still spinning or yielding, costs no system call.
//
// Thread safety: every method is thread-safe. The queues are guarded by their own mutexes
// (held for a few pointer updates), never by the DB mutex. A Writer and a WriteGroup live
// on their owners' stacks: no method touches a writer after handing it kCompleted, and a
// group's leader returns only after every member is done with the group.
#pragma once

#include <atomic>
#include <cstdint>

#include "shale/status.h"
#include "shale/types.h"
#include "shale/write_batch.h"
#include "util/mutexlock.h"
#include "util/thread_annotations.h"

namespace shale {

class WriteThread {
 public:
  // A writer's state: one bit each, so that a wait can name several goals.
  enum State : uint8_t {
    kInit = 1,                    // queued
    kGroupLeader = 2,             // leads the next WAL group
    kMemtableWriterLeader = 4,    // pipelined: its group may start its memtable inserts
    kParallelMemtableWriter = 8,  // insert your own batch, then CompleteParallelWriter
    kCompleted = 16,              // done: status is final
    kLockedWaiting = 32,          // blocked on its condition variable (internal)
  };

  struct WriteGroup;

  struct Writer {
    // Set by the writer before JoinBatchGroup, read-only afterwards.
    WriteBatch* batch = nullptr;  // nullptr: exclusive use of the queue, no batch
    bool sync = false;
    bool disable_wal = false;
    bool no_slowdown = false;
    bool has_merge = false;  // the batch holds a Merge: its group inserts serially
    // Set by the leader before it hands the writer a new state.
    SequenceNumber sequence = 0;  // the batch's first sequence number
    WriteGroup* group = nullptr;  // set while a group's memtable stage runs
    Status status;
    bool handed_leadership = false;  // led after waiting in the queue (set by the writer)

    Writer() = default;
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;

   private:
    friend class WriteThread;
    Writer* next = nullptr;  // the next newer writer in the queue; guarded by queue_mu_
    std::atomic<uint8_t> state{kInit};
    Mutex mu;  // with cv: a blocked waiter's wake-up
    CondVar cv{&mu};
  };

  // A leader and the contiguous run of writers behind it, leader..last. Its memtable stage
  // covers a batch of groups: this one alone, or (pipelined) this one and the groups queued
  // behind it in the memtable queue when it came to lead, this..batch_last.
  struct WriteGroup {
    Writer* leader = nullptr;
    Writer* last = nullptr;
    size_t size = 0;
    size_t bytes = 0;        // of the batches
    bool has_merge = false;  // a member's batch holds a Merge
    SequenceNumber last_sequence = 0;
    bool pipelined = false;                        // leaves through the memtable queue
    WriteGroup* next_in_memtable_queue = nullptr;  // guarded by memtable_mu_
    // Set on the batch's first group by its memtable leader.
    WriteGroup* batch_last = nullptr;
    size_t batch_size = 0;           // members of all the batch's groups
    std::atomic<size_t> running{0};  // members still inserting in parallel

    // Calls fn(Writer*) for each member, leader first. fn must not complete a member.
    template <typename Fn>
    void ForEach(Fn fn) const {
      for (Writer* w = leader;; w = w->next) {
        fn(w);
        if (w == last) break;
      }
    }
    // The same over every group of the batch this group begins.
    template <typename Fn>
    void ForEachInBatch(Fn fn) const {
      for (const WriteGroup* g = this;; g = g->next_in_memtable_queue) {
        g->ForEach(fn);
        if (g == batch_last) break;
      }
    }
    bool BatchHasMerge() const {
      bool merge = false;
      for (const WriteGroup* g = this;; g = g->next_in_memtable_queue) {
        merge = merge || g->has_merge;
        if (g == batch_last) break;
      }
      return merge;
    }
  };

  // How a waiting writer passes the time (Options: enable_write_thread_adaptive_yield,
  // write_thread_max_yield_usec, write_thread_slow_yield_usec).
  struct WaitOptions {
    bool adaptive_yield = true;
    uint64_t max_yield_usec = 100;
    uint64_t slow_yield_usec = 3;
  };

  // Groups stop growing past this many bytes of batches (1 MiB, smaller when the leader's
  // batch is small so a small write is not delayed behind big ones).
  static constexpr size_t kMaxGroupBytes = 1 << 20;

  // How long the DB's leaders wait for a companion writer before forming a group, when
  // other threads are writing (see AwaitCompanion).
  static constexpr int64_t kCompanionWaitNanos = 3000;

  WriteThread() : WriteThread(WaitOptions{}) {}
  // companion_wait_nanos > 0: a leader waits up to that long for a companion when other
  // threads are writing (ordered writes, where a group holds the queue through its
  // inserts, so that writers share groups and insert in parallel).
  explicit WriteThread(const WaitOptions& wait, int64_t companion_wait_nanos = 0)
      : wait_(wait), companion_wait_nanos_(companion_wait_nanos) {}
  WriteThread(const WriteThread&) = delete;
  WriteThread& operator=(const WriteThread&) = delete;

  // Queues w and waits until it leads, is asked to insert in parallel, or is completed.
  // Returns that state.
  uint8_t JoinBatchGroup(Writer* w);

  // REQUIRES: leader holds kGroupLeader. Fills *group with the leader and the writers queued
  // behind it that may share its WAL record: a batch (not an exclusive writer), the same
  // disable_wal and no_slowdown, no sync writer behind a non-sync leader, within the byte
  // budget. An exclusive leader forms a group of one.
  void EnterAsBatchGroupLeader(Writer* leader, WriteGroup* group);

  // REQUIRES: the batch's sequences are assigned (Writer::sequence, last_sequence), and
  // whatever else the members need to insert.
  // Hands every member of the batch group begins kParallelMemtableWriter but its leader,
  // which inserts its own batch without waiting for a state.
  void LaunchParallelWriters(WriteGroup* group);
  // Called by each member of a parallel batch after its insert. Returns true for the last
  // one, which must publish and call ExitGroup(w->group, w); the others wait here until
  // completed.
  bool CompleteParallelWriter(Writer* w);

  // Pipelined writes: the group leaves the WAL queue (handing it to the next leader) and
  // joins the memtable queue. Returns, for the group's leader:
  // - kMemtableWriterLeader: lead the memtable stage of the batch this group begins (the
  //   group and those queued behind it now; batch_last and batch_size are set);
  // - kParallelMemtableWriter: an earlier batch took the group along: insert the leader's
  //   own batch and CompleteParallelWriter, as a member of leader->group;
  // - kCompleted: an earlier batch took the group along and inserted it.
  // Batches insert, publish and complete in WAL order.
  uint8_t EnterMemtableStage(WriteGroup* group);

  // Ends the batch group begins, its memtable stage done, called by its leader or by the
  // member that finished last (`self`): its groups leave their queue (the WAL queue, or the
  // memtable queue when pipelined), the next leader is woken, and every member other than
  // self is completed, group's leader last. Members' statuses must be set.
  void ExitGroup(WriteGroup* group, Writer* self);

  // The group leaves the WAL queue and the next leader is woken; its members are not
  // completed (unordered writes: each completes itself after its insert).
  void ExitWalStage(WriteGroup* group);

  // Unordered writes: count inserts that run after their group left the queue.
  void BeginUnorderedInserts(size_t n) { pending_inserts_.fetch_add(n); }
  void EndUnorderedInsert();

  // REQUIRES: the caller leads the WAL queue (so no new memtable work can start). Returns
  // once no group is in its memtable stage and no unordered insert is pending: the active
  // memtable may then be switched. Blocks; for the rare memtable switch.
  void WaitForMemtableWriters();

  // Writers in the WAL queue, the leader included.
  size_t TEST_QueuedWriters();
  // Whether w is still linked into the WAL queue.
  bool TEST_InQueue(const Writer* w);

 private:
  // Waits until w's state has a bit of goal_mask; returns the state.
  uint8_t AwaitState(Writer* w, uint8_t goal_mask);
  // Spins (if spin), then yields; returns the state, which may not have reached goal_mask.
  uint8_t BusyAwaitState(Writer* w, uint8_t goal_mask, bool spin);
  uint8_t BlockingAwaitState(Writer* w, uint8_t goal_mask);
  // Hands w a new state, waking it if it blocked. The caller must not touch w afterwards
  // when the state is kCompleted (w's owner may return at once).
  static void SetState(Writer* w, uint8_t new_state);
  // Removes leader..last from the front of the WAL queue; returns the new front (or null).
  Writer* PopGroup(WriteGroup* group);
  // Makes group's batch every group queued from it to the memtable queue's tail.
  void GatherBatch(WriteGroup* group);
  // Calls fn(w) for every member of the batch group begins but its leader, reading each
  // link before fn runs (fn may complete w) and never past the batch's last member.
  template <typename Fn>
  static void ForEachFollowerSafely(WriteGroup* group, Fn fn);

  static size_t MaxSpinners();
  void AwaitCompanion(Writer* leader);

  const WaitOptions wait_;
  const int64_t companion_wait_nanos_;
  std::atomic<size_t> queued_{0};  // writers in the WAL queue (a hint, read unlocked)
  // Whether the last group formed held more than one writer (a hint for AwaitCompanion).
  std::atomic<bool> last_group_shared_{false};
  // Writers busy waiting now, and how many of them may spin (one per core but one).
  std::atomic<size_t> spinners_{0};
  const size_t max_spinners_ = MaxSpinners();

  Mutex queue_mu_;
  Writer* queue_head_ GUARDED_BY(queue_mu_) = nullptr;  // the leader
  Writer* queue_tail_ GUARDED_BY(queue_mu_) = nullptr;  // the newest writer

  // Pipelined writes' memtable queue, and the waits of WaitForMemtableWriters. Taken
  // before queue_mu_ when both are held (EnterMemtableStage).
  Mutex memtable_mu_ ACQUIRED_BEFORE(queue_mu_);
  CondVar memtable_cv_{&memtable_mu_};  // signalled when the memtable work drains
  WriteGroup* memtable_head_ GUARDED_BY(memtable_mu_) = nullptr;
  WriteGroup* memtable_tail_ GUARDED_BY(memtable_mu_) = nullptr;
  std::atomic<size_t> pending_inserts_{0};  // unordered inserts not finished
  std::atomic<int> drain_waiters_{0};       // threads in WaitForMemtableWriters
};

}  // namespace shale
