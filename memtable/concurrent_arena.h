// ConcurrentArena: a thread-safe bump allocator for the memtable, so that several writers
// can insert into one skip list at once (allow_concurrent_memtable_write).
//
// Memory comes from one util/Arena (guarded by a mutex) in small chunks; each thread bumps
// through the chunk of its own shard, so writers on different cores rarely meet on a lock.
// A shard's lock is a spin lock: it guards a few instructions, and a pthread mutex's
// lock and unlock (two atomic read-modify-writes and two calls) for each of the two
// allocations of every memtable entry showed in a fillseq profile.
// Allocations too big for a chunk go straight to the shared arena.
//
// Thread safety: every method may be called from any thread at any time.
// Ownership: all memory handed out lives until the ConcurrentArena is destroyed.
// Alignment: AllocateAligned returns memory aligned to kAlignment (enough for pointers and
// 64-bit atomics), Allocate returns unaligned memory.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>

#include "util/arena.h"
#include "util/mutexlock.h"
#include "util/thread_annotations.h"

namespace shale {

// Guards a shard: taken and released without a call, one atomic exchange to take it and a
// plain store to release it. A waiter spins on a read (not a write) of the flag and gives
// its core away after a while, for a holder that is refilling the chunk from the shared
// arena (a fresh block may page-fault) or was preempted.
class CAPABILITY("mutex") ArenaSpinLock {
 public:
  void Lock() ACQUIRE() {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      for (int spins = 0; locked_.load(std::memory_order_relaxed); spins++) {
        if (spins >= kSpinsBeforeYield) std::this_thread::yield();
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
  }
  void Unlock() RELEASE() { locked_.store(false, std::memory_order_release); }

 private:
  static constexpr int kSpinsBeforeYield = 100;
  std::atomic<bool> locked_{false};
};

class ConcurrentArena {
 public:
  static constexpr size_t kAlignment = alignof(void*);
  // Bytes a shard takes from the shared arena at a time.
  static constexpr size_t kChunkSize = 4096;

  // block_size, huge_page_size and pool: those of the underlying Arena.
  explicit ConcurrentArena(size_t block_size = Arena::kDefaultBlockSize, size_t huge_page_size = 0,
                           std::shared_ptr<ArenaBlockPool> pool = nullptr)
      : num_shards_(ShardCountForThisMachine()),
        shards_(new Shard[num_shards_]),
        arena_(block_size, huge_page_size, std::move(pool)) {}
  ConcurrentArena(const ConcurrentArena&) = delete;
  ConcurrentArena& operator=(const ConcurrentArena&) = delete;

  char* Allocate(size_t bytes) { return AllocateImpl(bytes, /*aligned=*/false); }
  char* AllocateAligned(size_t bytes) { return AllocateImpl(bytes, /*aligned=*/true); }

  // Bytes held from the system, including chunk tails not handed out yet.
  // Arena::MemoryUsage is an atomic read, safe without arena_mu_.
  size_t MemoryUsage() const NO_THREAD_SAFETY_ANALYSIS { return arena_.MemoryUsage(); }

  // Bytes handed out by Allocate*, counting alignment padding. Approximate while other
  // threads allocate.
  size_t AllocatedBytes() const {
    size_t total = direct_bytes_.load(std::memory_order_relaxed);
    for (size_t i = 0; i < num_shards_; i++) {
      total += shards_[i].allocated.load(std::memory_order_relaxed);
    }
    return total;
  }

 private:
  struct alignas(64) Shard {
    ArenaSpinLock mu;
    char* ptr GUARDED_BY(mu) = nullptr;
    size_t remaining GUARDED_BY(mu) = 0;
    std::atomic<size_t> allocated{0};  // written under mu, read by AllocatedBytes()
  };

  static size_t ShardCountForThisMachine() {
    size_t cpus = std::thread::hardware_concurrency();
    size_t n = 1;
    while (n < cpus && n < 16) n <<= 1;
    return n;
  }

  // Threads get shards round-robin in the order they first allocate from any arena.
  static size_t ThisThreadIndex() {
    static std::atomic<size_t> next_index{0};
    thread_local size_t index = next_index.fetch_add(1, std::memory_order_relaxed);
    return index;
  }

  char* AllocateImpl(size_t bytes, bool aligned) {
    if (bytes > kChunkSize / 4) {
      // Large entries would waste much of a chunk's tail; give them exact space.
      MutexLock lock(&arena_mu_);
      direct_bytes_.fetch_add(bytes, std::memory_order_relaxed);
      return aligned ? arena_.AllocateAligned(bytes) : arena_.Allocate(bytes);
    }
    Shard& shard = shards_[ThisThreadIndex() & (num_shards_ - 1)];
    shard.mu.Lock();  // released before the one return below
    size_t pad = 0;
    if (aligned) {
      size_t mod = reinterpret_cast<uintptr_t>(shard.ptr) & (kAlignment - 1);
      pad = mod == 0 ? 0 : kAlignment - mod;
    }
    if (bytes + pad > shard.remaining) {
      // The old tail is abandoned: at most a quarter chunk, since bytes <= kChunkSize / 4.
      {
        MutexLock arena_lock(&arena_mu_);
        shard.ptr = arena_.AllocateAligned(kChunkSize);
      }
      shard.remaining = kChunkSize;
      pad = 0;
    }
    char* result = shard.ptr + pad;
    shard.ptr += bytes + pad;
    shard.remaining -= bytes + pad;
    shard.allocated.store(shard.allocated.load(std::memory_order_relaxed) + bytes + pad,
                          std::memory_order_relaxed);
    shard.mu.Unlock();
    return result;
  }

  const size_t num_shards_;  // a power of two
  std::unique_ptr<Shard[]> shards_;
  Mutex arena_mu_;
  Arena arena_ GUARDED_BY(arena_mu_);
  std::atomic<size_t> direct_bytes_{0};
};

}  // namespace shale
