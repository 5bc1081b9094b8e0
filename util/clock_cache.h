// ClockCache: the lock-free implementation of Cache (shale/cache.h) that NewHyperClockCache
// returns. No mutex is taken by Lookup, Release, Ref, Insert or Erase.
//
// Each shard is a fixed-size open-addressing table of slots, sized at construction from its
// capacity and the estimated charge of an entry (table size: the next power of two at or
// above entries / 0.7; at most 84% of the slots may be occupied). A key's 64-bit hash picks
// the shard (top bits), a home slot and an odd probe step. Every slot carries one atomic
// word, `meta`:
//
//   bits 0-1  state: kEmpty, kConstruction (one thread owns the slot's fields exclusively),
//             kVisible (in the table; lookups may find it), kInvisible (erased or replaced,
//             still referenced by handles; lookups skip it)
//   bits 2-3  clock countdown: set by insertion (HIGH 3, LOW 2, BOTTOM 1) and to 3 by a hit,
//             lowered by one each time the clock hand passes an unreferenced entry; the hand
//             evicts an unreferenced visible entry whose countdown is 0
//   bits 4-   references held by handles
//
// Every change of state is one compare-and-swap of meta, so "the last reference goes" and
// "the entry is freed" cannot be split by another thread: Release of the last reference to
// an invisible entry moves it straight to kConstruction, and eviction claims only entries
// with no reference. A slot's other fields are written only by the thread holding it in
// kConstruction and published by the release store that makes it visible; a reader reads
// them only after its compare-and-swap has taken a reference (an acquire on the same
// word), so they never race.
//
// Probing: an insert that passes over an occupied slot increments that slot's
// `displacements`; freeing an entry decrements them along its path again. A lookup stops at
// the first slot with no displacements, as no key's probe went past it. Under concurrent
// inserts a lookup may miss an entry that is being published; that is a cache miss, never a
// wrong answer.
//
// Differences from RocksDB's HyperClockCache, which this follows in idea: keys may have any
// length (up to 24 bytes stored in the slot, longer ones on the heap); when the table is
// full and nothing can be evicted, an Insert with a handle and no strict limit gets a
// "standalone" entry outside the table (freed at its last Release), as RocksDB does; a
// re-insert of a present key makes the older entry invisible, as the LRU cache replaces it.
//
// Thread safety: as Cache.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "shale/cache.h"

namespace shale {

namespace clock_internal {

struct Slot {
  static constexpr size_t kInlineKey = 24;

  std::atomic<uint64_t> meta{0};
  std::atomic<uint32_t> displacements{0};
  // Owned by whoever holds the slot in kConstruction; read-only while referenced.
  bool standalone = false;
  uint32_t key_size = 0;
  uint64_t hash = 0;
  size_t charge = 0;
  void* value = nullptr;
  Cache::DeleterFn deleter = nullptr;
  std::unique_ptr<char[]> heap_key;  // keys longer than kInlineKey
  char inline_key[kInlineKey];

  const char* key_data() const { return heap_key != nullptr ? heap_key.get() : inline_key; }
};

class alignas(64) ClockShard {
 public:
  ClockShard() = default;
  ~ClockShard();
  ClockShard(const ClockShard&) = delete;
  ClockShard& operator=(const ClockShard&) = delete;

  // Called once, before any other method.
  void Init(size_t capacity, size_t estimated_entry_charge, bool strict_capacity_limit);

  Status Insert(const Slice& key, uint64_t hash, void* value, size_t charge,
                Cache::DeleterFn deleter, Slot** handle, Cache::Priority priority);
  Slot* Lookup(const Slice& key, uint64_t hash);
  void Ref(Slot* slot);
  bool Release(Slot* slot, bool erase_if_last_ref);
  void Erase(const Slice& key, uint64_t hash);
  void SetCapacity(size_t capacity);
  void SetStrictCapacityLimit(bool strict);
  void EraseUnRefEntries();

  size_t GetUsage() const { return usage_.load(std::memory_order_relaxed); }
  // Visits every slot (taking a reference to each referenced entry to read its charge):
  // no counter of pinned charge is kept, since every lookup and release would update it
  // from every thread.
  size_t GetPinnedUsage();
  size_t TableSize() const { return size_t{1} << length_bits_; }
  size_t OccupancyLimit() const { return occupancy_limit_; }

 private:
  size_t Home(uint64_t hash) const { return hash & mask_; }
  size_t Step(uint64_t hash) const { return ((hash >> 32) | 1) & mask_; }
  // Takes a reference to a visible slot; false if it is not visible (any more).
  bool TryAcquire(Slot* slot);
  bool Matches(const Slot* slot, const Slice& key, uint64_t hash) const;
  // Frees an entry whose slot this thread holds in kConstruction: runs the deleter, undoes
  // the probe displacements and empties the slot (or deletes a standalone one).
  void Free(Slot* slot);
  // Moves the clock hand, evicting unreferenced entries, until `bytes` of charge and
  // `slots` slots are freed or every entry was passed by the hand four times.
  void Evict(size_t bytes, size_t slots);
  // Makes every visible entry for key invisible (freeing those not referenced).
  void EraseKey(const Slice& key, uint64_t hash);
  bool OverCapacity(size_t extra) const;

  std::unique_ptr<Slot[]> slots_;
  int length_bits_ = 0;
  size_t mask_ = 0;
  size_t occupancy_limit_ = 0;
  std::atomic<size_t> capacity_{0};
  std::atomic<bool> strict_capacity_limit_{false};
  std::atomic<size_t> usage_{0};
  std::atomic<size_t> standalone_usage_{0};  // charge of the entries outside the table
  std::atomic<size_t> occupancy_{0};
  std::atomic<uint64_t> clock_hand_{0};
};

}  // namespace clock_internal

class ClockCache final : public Cache {
 public:
  // REQUIRES: 0 <= num_shard_bits < 20 (resolve -1 first), estimated_entry_charge > 0.
  ClockCache(size_t capacity, size_t estimated_entry_charge, int num_shard_bits,
             bool strict_capacity_limit);
  ~ClockCache() override;

  // One shard per 32 MiB of capacity (a lock-free shard needs no splitting to avoid lock
  // contention), as a power of two, at most 2^6.
  static int DefaultShardBits(size_t capacity);

  const char* Name() const override { return "HyperClockCache"; }
  Status Insert(const Slice& key, void* value, size_t charge, DeleterFn deleter,
                Handle** handle = nullptr, Priority priority = Priority::LOW) override;
  Handle* Lookup(const Slice& key, Statistics* stats = nullptr) override;
  bool Ref(Handle* handle) override;
  bool Release(Handle* handle, bool erase_if_last_ref = false) override;
  void* Value(Handle* handle) override;
  void Erase(const Slice& key) override;
  uint64_t NewId() override;
  void SetCapacity(size_t capacity) override;
  void SetStrictCapacityLimit(bool strict_capacity_limit) override;
  bool HasStrictCapacityLimit() const override;
  size_t GetCapacity() const override;
  size_t GetUsage() const override;
  size_t GetUsage(Handle* handle) const override;
  size_t GetPinnedUsage() const override;
  size_t GetCharge(Handle* handle) const override;
  DeleterFn GetDeleter(Handle* handle) const override;
  void EraseUnRefEntries() override;

  int GetNumShardBits() const { return num_shard_bits_; }
  // Slots of one shard's table, and how many of them may be occupied.
  size_t TEST_TableSize() const { return shards_[0].TableSize(); }
  size_t TEST_OccupancyLimit() const { return shards_[0].OccupancyLimit(); }

 private:
  clock_internal::ClockShard& ShardFor(uint64_t hash) const;
  size_t PerShardCapacity(size_t capacity) const;

  const int num_shard_bits_;
  const int num_shards_;
  std::unique_ptr<clock_internal::ClockShard[]> shards_;
  std::atomic<size_t> capacity_;
  std::atomic<bool> strict_capacity_limit_;
  std::atomic<uint64_t> last_id_{0};
};

}  // namespace shale
