// WriteThread: forms groups of concurrent writers so that one leader writes the whole
// group to the WAL as one record, syncs at most once, and assigns the group consecutive
// sequence numbers.
//
// Protocol: every writer calls JoinBatchGroup. It returns once the writer is the leader of
// the queue's front (true), or once a leader has completed the writer's batch (false, with
// Writer::status set). The leader calls BuildBatchGroup, does the work, then
// ExitAsBatchGroupLeader, which completes the followers and wakes the next leader.
// A writer with batch == nullptr asks for exclusive access (memtable switch, flush) and is
// never grouped with others.
//
// Thread safety: all methods are thread-safe; the queue is guarded by the thread's own
// mutex, never the DB mutex, so writers queue without contending with readers.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <vector>

#include "shale/status.h"
#include "shale/types.h"
#include "shale/write_batch.h"

namespace shale {

class WriteThread {
 public:
  struct Writer {
    WriteBatch* batch = nullptr;  // nullptr: exclusive access, no batch
    bool sync = false;
    bool disable_wal = false;
    bool no_slowdown = false;
    // Set by the leader before completing the writer.
    Status status;
    bool done = false;
    std::condition_variable cv;
  };

  // Groups stop growing past this many bytes of batches (1 MiB, smaller when the leader's
  // batch is small so a small write is not delayed behind big ones).
  static constexpr size_t kMaxGroupBytes = 1 << 20;

  WriteThread() = default;
  WriteThread(const WriteThread&) = delete;
  WriteThread& operator=(const WriteThread&) = delete;

  // Returns true if w is now the leader; false if a leader completed w.
  bool JoinBatchGroup(Writer* w);
  // REQUIRES: leader is the leader. Fills *group with the leader followed by the writers
  // queued behind it that may share its WAL record: same disable_wal, no sync follower
  // behind a non-sync leader, no exclusive writer, within the byte budget.
  void BuildBatchGroup(Writer* leader, std::vector<Writer*>* group);
  // REQUIRES: group is what BuildBatchGroup returned. Completes every follower with its
  // status (followers' statuses must be set), pops the group and wakes the next leader.
  void ExitAsBatchGroupLeader(const std::vector<Writer*>& group);

 private:
  std::mutex mu_;
  std::deque<Writer*> queue_;  // guarded by mu_; front is the leader
};

}  // namespace shale
