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

// About a microsecond or two of pauses: long enough to catch a leader that finishes a
// small group, short enough to waste little when it does not.
constexpr int kSpinIterations = 200;
// Yields that each took longer than slow_yield_usec mean other threads want this CPU:
// after this many, blocking serves everyone better than yielding on.
constexpr int kMaxSlowYields = 3;

}  // namespace

uint8_t WriteThread::AwaitState(Writer* w, uint8_t goal_mask) {
  for (int i = 0; i < kSpinIterations; i++) {
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
  return BlockingAwaitState(w, goal_mask);
}

uint8_t WriteThread::BlockingAwaitState(Writer* w, uint8_t goal_mask) {
  std::unique_lock<std::mutex> lock(w->mu);
  uint8_t s = w->state.load(std::memory_order_acquire);
  // Announce the block with a CAS: either it wins, and a setter then sees kLockedWaiting
  // and wakes us under the mutex, or a setter's CAS won first and s holds the new state.
  if ((s & goal_mask) == 0 &&
      w->state.compare_exchange_strong(s, kLockedWaiting, std::memory_order_acq_rel)) {
    w->cv.wait(lock, [w] { return w->state.load(std::memory_order_relaxed) != kLockedWaiting; });
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
  std::lock_guard<std::mutex> lock(w->mu);
  w->state.store(new_state, std::memory_order_relaxed);
  w->cv.notify_one();
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
  }
  if (leader) {
    // Nobody else knows of w yet as a leader: no setter can race this store.
    w->state.store(kGroupLeader, std::memory_order_relaxed);
    return kGroupLeader;
  }
  return AwaitState(w, kGroupLeader | kParallelMemtableWriter | kCompleted);
}

void WriteThread::EnterAsBatchGroupLeader(Writer* leader, WriteGroup* group) {
  group->leader = leader;
  group->last = leader;
  group->size = 1;
  group->bytes = leader->batch == nullptr ? 0 : leader->batch->GetDataSize();
  group->pipelined = false;
  if (leader->batch == nullptr) return;
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
    group->last = w;
    group->size++;
  }
}

WriteThread::Writer* WriteThread::PopGroup(WriteGroup* group) {
  MutexLock l(&queue_mu_);
  queue_head_ = group->last->next;
  if (queue_head_ == nullptr) queue_tail_ = nullptr;
  return queue_head_;
}

void WriteThread::LaunchParallelWriters(WriteGroup* group) {
  group->running.store(group->size, std::memory_order_relaxed);
  group->leader->group = group;
  if (group->leader == group->last) return;
  // The release in SetState publishes running, sequences and mem to each member. A member
  // may return as soon as it has its state (unordered writes): read its link first, and
  // never the last member's (a newer writer may be linking itself there).
  Writer* const last = group->last;
  for (Writer* w = group->leader->next;;) {
    Writer* const after = w == last ? nullptr : w->next;
    w->group = group;
    SetState(w, kParallelMemtableWriter);
    if (after == nullptr) break;
    w = after;
  }
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

void WriteThread::EnterMemtableStage(WriteGroup* group) {
  group->pipelined = true;
  group->next_in_memtable_queue = nullptr;
  bool first;
  {
    // Join the memtable queue before the next WAL leader can exist: it must queue behind.
    MutexLock l(&memtable_mu_);
    if (memtable_tail_ == nullptr) {
      memtable_head_ = group;
    } else {
      memtable_tail_->next_in_memtable_queue = group;
    }
    memtable_tail_ = group;
    first = memtable_head_ == group;
  }
  Writer* next = PopGroup(group);
  if (next != nullptr) SetState(next, kGroupLeader);
  if (!first) AwaitState(group->leader, kMemtableWriterLeader);
}

void WriteThread::ExitGroup(WriteGroup* group, Writer* self) {
  // Read everything first: once the leader is completed, the group is gone.
  Writer* const leader = group->leader;
  Writer* const last = group->last;
  if (group->pipelined) {
    WriteGroup* next_group;
    {
      MutexLock l(&memtable_mu_);
      memtable_head_ = group->next_in_memtable_queue;
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
  if (leader != last) {
    for (Writer* w = leader->next;;) {
      Writer* const after = w == last ? nullptr : w->next;
      if (w != self) SetState(w, kCompleted);
      if (after == nullptr) break;
      w = after;
    }
  }
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
    while (memtable_head_ != nullptr || pending_inserts_.load() != 0) memtable_cv_.Wait();
  }
  drain_waiters_.fetch_sub(1);
}

size_t WriteThread::TEST_QueuedWriters() {
  MutexLock l(&queue_mu_);
  size_t n = 0;
  for (Writer* w = queue_head_; w != nullptr; w = w->next) n++;
  return n;
}

}  // namespace shale
