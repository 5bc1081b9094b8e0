#include "db/write_thread.h"

#include <chrono>
#include <thread>

namespace shale {

namespace {

// A spin-loop hint: lets the sibling hyperthread run and saves power while spinning.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// A few microseconds of pauses (a pause takes 5-140 cycles, by CPU): long enough to catch
// a leader that finishes a small group, short enough to waste little when it does not.
constexpr int kSpinIterations = 200;
// Yields that each took longer than slow_yield_usec mean other threads want this CPU:
// after this many, blocking serves everyone better than yielding on.
constexpr int kMaxSlowYields = 3;

}  // namespace

size_t WriteThread::MaxSpinners() {
  const size_t cpus = std::thread::hardware_concurrency();
  return cpus > 1 ? cpus - 1 : 1;
}

uint8_t WriteThread::AwaitState(Writer* w, uint8_t goal_mask) {
  // Spinning pays only while a core is free for it: with more spinners than that, they
  // would take the CPU from the leader they wait for. The others go straight to yielding,
  // which hands the CPU over and gives up (blocks) once it sees the CPU is busy.
  const bool spin = spinners_.fetch_add(1, std::memory_order_relaxed) < max_spinners_;
  const uint8_t s = BusyAwaitState(w, goal_mask, spin);
  spinners_.fetch_sub(1, std::memory_order_relaxed);
  return (s & goal_mask) != 0 ? s : BlockingAwaitState(w, goal_mask);
}

uint8_t WriteThread::BusyAwaitState(Writer* w, uint8_t goal_mask, bool spin) {
  for (int i = 0; spin && i < kSpinIterations; i++) {
    const uint8_t s = w->state.load(std::memory_order_acquire);
    if ((s & goal_mask) != 0) return s;
    CpuRelax();
  }
  if (wait_.adaptive_yield && wait_.max_yield_usec > 0) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const auto max_yield = std::chrono::microseconds(wait_.max_yield_usec);
    const auto slow_yield = std::chrono::microseconds(wait_.slow_yield_usec);
    auto before = start;
    int slow_yields = 0;
    while (true) {
      std::this_thread::yield();
      const uint8_t s = w->state.load(std::memory_order_acquire);
      if ((s & goal_mask) != 0) return s;
      const auto now = Clock::now();
      if (now - before > slow_yield && ++slow_yields >= kMaxSlowYields) break;
      if (now - start > max_yield) break;
      before = now;
    }
  }
  return w->state.load(std::memory_order_acquire);
}

uint8_t WriteThread::BlockingAwaitState(Writer* w, uint8_t goal_mask) {
  MutexLock lock(&w->mu);
  uint8_t s = w->state.load(std::memory_order_acquire);
  // Announce the block with a CAS: either it wins, and a setter then sees kLockedWaiting
  // and wakes us under the mutex, or a setter's CAS won first and s holds the new state.
  if ((s & goal_mask) == 0 &&
      w->state.compare_exchange_strong(s, kLockedWaiting, std::memory_order_acq_rel)) {
    while (w->state.load(std::memory_order_relaxed) == kLockedWaiting) w->cv.Wait(&w->mu);
    s = w->state.load(std::memory_order_relaxed);
  }
  return s;
}

void WriteThread::SetState(Writer* w, uint8_t new_state) {
  uint8_t s = w->state.load(std::memory_order_acquire);
  if (s != kLockedWaiting &&
      w->state.compare_exchange_strong(s, new_state, std::memory_order_acq_rel)) {
    return;  // the writer was spinning or yielding: it sees the state without a wake-up
  }
  // It blocked (its CAS won): it waits on its condition variable, having released the
  // mutex, so taking the mutex here means it is already waiting or has not looked yet.
  MutexLock lock(&w->mu);
  w->state.store(new_state, std::memory_order_relaxed);
  w->cv.Signal();
}

uint8_t WriteThread::JoinBatchGroup(Writer* w) {
  bool leader;
  {
    MutexLock l(&queue_mu_);
    w->next = nullptr;
    if (queue_tail_ == nullptr) {
      queue_head_ = w;
    } else {
      queue_tail_->next = w;
    }
    queue_tail_ = w;
    leader = queue_head_ == w;
    queued_.fetch_add(1, std::memory_order_relaxed);
  }
  if (leader) {
    // Nobody else knows of w yet as a leader: no setter can race this store.
    w->state.store(kGroupLeader, std::memory_order_relaxed);
    return kGroupLeader;
  }
  const uint8_t state = AwaitState(w, kGroupLeader | kParallelMemtableWriter | kCompleted);
  w->handed_leadership = state == kGroupLeader;
  return state;
}

void WriteThread::AwaitCompanion(Writer* leader) {
  // Other threads are writing (see the caller), and one of them is likely preparing its
  // next batch right now. Without a short wait for it, two writers take turns leading
  // groups of one and never insert in parallel; with it, they share the group. Bounded,
  // and only when the queue is empty.
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::nanoseconds(companion_wait_nanos_);
  while (queued_.load(std::memory_order_relaxed) <= 1) {
    for (int i = 0; i < 8; i++) CpuRelax();
    if (Clock::now() >= deadline) break;
  }
}

void WriteThread::EnterAsBatchGroupLeader(Writer* leader, WriteGroup* group) {
  group->leader = leader;
  group->last = leader;
  group->size = 1;
  group->bytes = leader->batch == nullptr ? 0 : leader->batch->GetDataSize();
  group->pipelined = false;
  group->has_merge = leader->has_merge;
  group->next_in_memtable_queue = nullptr;
  group->batch_last = group;
  group->batch_size = 1;
  if (leader->batch == nullptr) return;
  // Wait for a companion when other threads are writing: this leader waited in the queue,
  // or the last group held several writers (which now all return at once, and the first
  // back finds the queue empty).
  if (companion_wait_nanos_ > 0 &&
      (leader->handed_leadership || last_group_shared_.load(std::memory_order_relaxed))) {
    AwaitCompanion(leader);
  }
  // A lone writer (the common single-threaded case) skips the scan and its lock; one that
  // queues meanwhile leads the next group.
  if (queued_.load(std::memory_order_relaxed) <= 1) {
    last_group_shared_.store(false, std::memory_order_relaxed);
    return;
  }
  size_t max_bytes = kMaxGroupBytes;
  if (group->bytes <= (128 << 10)) max_bytes = group->bytes + (128 << 10);

  MutexLock l(&queue_mu_);
  for (Writer* w = leader->next; w != nullptr; w = w->next) {
    if (w->batch == nullptr) break;
    if (w->sync && !leader->sync) break;
    if (w->disable_wal != leader->disable_wal) break;
    // Each writer gets the stall answer its own options ask for.
    if (w->no_slowdown != leader->no_slowdown) break;
    const size_t bytes = w->batch->GetDataSize();
    if (group->bytes + bytes > max_bytes) break;
    group->bytes += bytes;
    group->has_merge = group->has_merge || w->has_merge;
    group->last = w;
    group->size++;
  }
  group->batch_size = group->size;
  last_group_shared_.store(group->size > 1, std::memory_order_relaxed);
}

WriteThread::Writer* WriteThread::PopGroup(WriteGroup* group) {
  MutexLock l(&queue_mu_);
  queue_head_ = group->last->next;
  if (queue_head_ == nullptr) queue_tail_ = nullptr;
  queued_.fetch_sub(group->size, std::memory_order_relaxed);
  return queue_head_;
}

template <typename Fn>
void WriteThread::ForEachFollowerSafely(WriteGroup* group, Fn fn) {
  WriteGroup* const batch_last = group->batch_last;
  for (WriteGroup* g = group;;) {
    // Everything about g is read before fn may complete g's leader (g is on its stack),
    // and no link past the batch's end is read (a newer writer or group may be linking
    // itself there).
    WriteGroup* const g_next = g == batch_last ? nullptr : g->next_in_memtable_queue;
    Writer* const g_leader = g->leader;
    Writer* const g_last = g->last;
    if (g_leader != g_last) {
      for (Writer* w = g_leader->next;;) {
        Writer* const after = w == g_last ? nullptr : w->next;
        fn(w);  // w may return at once (unordered writes): its link was read first
        if (after == nullptr) break;
        w = after;
      }
    }
    if (g != group) fn(g_leader);
    if (g_next == nullptr) break;
    g = g_next;
  }
}

void WriteThread::LaunchParallelWriters(WriteGroup* group) {
  group->running.store(group->batch_size, std::memory_order_relaxed);
  group->leader->group = group;
  // The release in SetState publishes running, sequences and mem to each member.
  ForEachFollowerSafely(group, [group](Writer* w) {
    w->group = group;
    SetState(w, kParallelMemtableWriter);
  });
}

bool WriteThread::CompleteParallelWriter(Writer* w) {
  WriteGroup* group = w->group;
  // acq_rel: the last one sees every member's inserts before it publishes.
  if (group->running.fetch_sub(1, std::memory_order_acq_rel) != 1) {
    AwaitState(w, kCompleted);
    return false;
  }
  return true;
}

uint8_t WriteThread::EnterMemtableStage(WriteGroup* group) {
  group->pipelined = true;
  bool first;
  Writer* next;
  {
    // Leave the WAL queue and join the memtable queue in one step. Leave first: once the
    // group is in the memtable queue an earlier stage may take it along and complete its
    // members, whose Writers then vanish, so group->last must not be read after that. And
    // join before the next WAL leader can exist (even one that finds the queue empty and
    // leads at once): its group must queue behind this one.
    MutexLock l(&memtable_mu_);
    next = PopGroup(group);
    if (memtable_tail_ == nullptr) {
      memtable_head_ = group;
    } else {
      memtable_tail_->next_in_memtable_queue = group;
    }
    memtable_tail_ = group;
    first = memtable_head_ == group;
  }
  if (next != nullptr) SetState(next, kGroupLeader);
  // A group that found the memtable queue empty starts at once, alone: groups queued
  // behind it since take the next stage.
  if (first) return kMemtableWriterLeader;
  const uint8_t state =
      AwaitState(group->leader, kMemtableWriterLeader | kParallelMemtableWriter | kCompleted);
  if (state == kMemtableWriterLeader) GatherBatch(group);
  return state;
}

void WriteThread::GatherBatch(WriteGroup* group) {
  // Every group queued now joins this memtable stage: one handoff for all of them instead
  // of one per group.
  MutexLock l(&memtable_mu_);
  size_t members = 0;
  for (WriteGroup* g = group;; g = g->next_in_memtable_queue) {
    members += g->size;
    if (g == memtable_tail_) break;
  }
  group->batch_last = memtable_tail_;
  group->batch_size = members;
}

void WriteThread::ExitGroup(WriteGroup* group, Writer* self) {
  // Read first: once the leader is completed, the group is gone.
  Writer* const leader = group->leader;
  if (group->pipelined) {
    WriteGroup* next_group;
    {
      MutexLock l(&memtable_mu_);
      memtable_head_ = group->batch_last->next_in_memtable_queue;
      if (memtable_head_ == nullptr) {
        memtable_tail_ = nullptr;
        if (drain_waiters_.load() > 0) memtable_cv_.SignalAll();
      }
      next_group = memtable_head_;
    }
    if (next_group != nullptr) SetState(next_group->leader, kMemtableWriterLeader);
  } else {
    Writer* next = PopGroup(group);
    if (next != nullptr) SetState(next, kGroupLeader);
  }
  ForEachFollowerSafely(group, [self](Writer* w) {
    if (w != self) SetState(w, kCompleted);
  });
  if (self != leader) SetState(leader, kCompleted);
}

void WriteThread::ExitWalStage(WriteGroup* group) {
  Writer* next = PopGroup(group);
  if (next != nullptr) SetState(next, kGroupLeader);
}

void WriteThread::EndUnorderedInsert() {
  // seq_cst on both counters: either this sees the waiter, or the waiter sees zero.
  if (pending_inserts_.fetch_sub(1) == 1 && drain_waiters_.load() > 0) {
    MutexLock l(&memtable_mu_);
    memtable_cv_.SignalAll();
  }
}

void WriteThread::WaitForMemtableWriters() {
  drain_waiters_.fetch_add(1);
  {
    MutexLock l(&memtable_mu_);
    while (memtable_head_ != nullptr || pending_inserts_.load() != 0)
      memtable_cv_.Wait(&memtable_mu_);
  }
  drain_waiters_.fetch_sub(1);
}

size_t WriteThread::TEST_QueuedWriters() {
  MutexLock l(&queue_mu_);
  size_t n = 0;
  for (Writer* w = queue_head_; w != nullptr; w = w->next) n++;
  return n;
}

bool WriteThread::TEST_InQueue(const Writer* w) {
  MutexLock l(&queue_mu_);
  for (Writer* q = queue_head_; q != nullptr; q = q->next) {
    if (q == w) return true;
  }
  return false;
}

}  // namespace shale
