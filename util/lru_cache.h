// LRUCache: the sharded LRU implementation of Cache (shale/cache.h) that NewLRUCache returns.
//
// Each shard owns a mutex, an open-addressing hash table and a circular LRU list of the entries
// that are in the cache and unreferenced (only those can be evicted). The list runs from
// the oldest entry to the newest; its newest part is the high-priority pool, holding HIGH
// entries and entries that were looked up again, up to high_pri_pool_ratio of the shard's
// capacity; what overflows the pool slides down into the low part, and eviction takes the
// oldest entries of the low part first.
//
// Invariants per shard (under its mutex): an entry is in the table iff in_cache; it is in the
// LRU list iff in_cache && refs == 0; usage counts every entry not yet freed (in the cache
// or referenced); lru_usage counts the listed ones; high_pri_pool_usage the listed ones in
// the pool. Deleters run after the mutex is released.
//
// Thread safety: as Cache. The TEST_ accessors take the shard locks.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shale/cache.h"
#include "util/mutexlock.h"
#include "util/thread_annotations.h"

namespace shale {

namespace lru_internal {

// One entry; the key bytes follow the struct in the same allocation.
struct LRUHandle {
  void* value;
  Cache::DeleterFn deleter;
  LRUHandle* next;  // LRU list: towards newer entries; also chains entries to free
  LRUHandle* prev;  // LRU list: towards older entries
  size_t charge;
  size_t key_length;
  uint32_t refs;  // handles held by users
  uint32_t hash;
  bool in_cache;      // reachable through the table
  bool high_pri;      // inserted with Priority::HIGH
  bool in_high_pool;  // listed within the high-priority pool
  bool has_hit;       // looked up at least once since insertion

  char* key_data() { return reinterpret_cast<char*>(this) + sizeof(LRUHandle); }
  const char* key_data() const { return reinterpret_cast<const char*>(this) + sizeof(LRUHandle); }
  Slice key() const { return Slice(key_data(), key_length); }
};

// Open-addressing hash table of LRUHandle* with linear probing, kept at most half full.
// The slots are two parallel arrays: a tag per slot (the entry's hash, 0 for empty) and
// the entry. A probe reads the dense tag array (sixteen slots to a cache line, eight bytes
// per entry at worst, as a chained table's bucket array) and touches an entry only when
// its tag matches: a miss, and the removal of an evicted entry (found by pointer), cost
// about one cache line instead of a bucket and a chain of entries spread over the heap.
// Removal shifts later slots of the probe run back (no tombstones), so runs stay short.
class HandleTable {
 public:
  HandleTable();
  ~HandleTable();
  HandleTable(const HandleTable&) = delete;
  HandleTable& operator=(const HandleTable&) = delete;

  LRUHandle* Lookup(const Slice& key, uint32_t hash);
  // Inserts h and returns the entry it replaces (same key), or nullptr.
  LRUHandle* Insert(LRUHandle* h);
  LRUHandle* Remove(const Slice& key, uint32_t hash);
  // Removes h itself. REQUIRES: h is in the table.
  void RemoveEntry(LRUHandle* h);
  // Starts loading the slots a lookup or removal of an entry with this hash reads first.
  void PrefetchSlots(uint32_t hash) const {
    const uint32_t i = Tag(hash) & (length_ - 1);
    __builtin_prefetch(&tags_[i]);
    __builtin_prefetch(&handles_[i]);
  }
  size_t size() const { return elems_; }

 private:
  // The tag stored for a hash: never 0, which marks an empty slot. Home slots are
  // computed from tags, so equal tags share a probe run.
  static uint32_t Tag(uint32_t hash) { return hash == 0 ? 1 : hash; }
  // The slot holding key, or the empty slot that ends its probe run.
  uint32_t FindSlot(const Slice& key, uint32_t tag) const;
  void EraseSlot(uint32_t i);
  void Resize(uint32_t new_length);

  uint32_t length_ = 0;  // a power of two
  uint32_t elems_ = 0;
  uint32_t* tags_ = nullptr;
  LRUHandle** handles_ = nullptr;
};

class alignas(64) LRUCacheShard {
 public:
  LRUCacheShard();
  ~LRUCacheShard();
  LRUCacheShard(const LRUCacheShard&) = delete;
  LRUCacheShard& operator=(const LRUCacheShard&) = delete;

  void Configure(size_t capacity, bool strict_capacity_limit, double high_pri_pool_ratio);

  Status Insert(const Slice& key, uint32_t hash, void* value, size_t charge,
                Cache::DeleterFn deleter, LRUHandle** handle, Cache::Priority priority);
  LRUHandle* Lookup(const Slice& key, uint32_t hash);
  void Ref(LRUHandle* e);
  bool Release(LRUHandle* e, bool erase_if_last_ref);
  void Erase(const Slice& key, uint32_t hash);
  void SetCapacity(size_t capacity);
  void SetStrictCapacityLimit(bool strict);
  void EraseUnRefEntries();

  size_t GetUsage() const;
  size_t GetPinnedUsage() const;
  size_t TEST_HighPriPoolUsage() const;
  size_t TEST_LRUEntries() const;
  // Keys of the listed entries, oldest first.
  void TEST_LRUKeys(std::vector<std::string>* keys) const;

 private:
  void LRURemove(LRUHandle* e) REQUIRES(mu_);
  void LRUInsert(LRUHandle* e) REQUIRES(mu_);
  void MaintainPoolSize() REQUIRES(mu_);
  // Evicts listed entries, oldest first, until usage + charge fits the capacity or none is
  // left; the evicted ones are chained through `next` onto *to_free.
  void EvictFromLRU(size_t charge, LRUHandle** to_free) REQUIRES(mu_);
  // Starts loading what evicting the oldest entry will touch; see the definition.
  void PrefetchNextVictim() const REQUIRES(mu_);
  static void FreeChain(LRUHandle* chain);

  mutable Mutex mu_;
  size_t capacity_ GUARDED_BY(mu_) = 0;
  size_t high_pri_pool_capacity_ GUARDED_BY(mu_) = 0;
  double high_pri_pool_ratio_ GUARDED_BY(mu_) = 0;
  bool strict_capacity_limit_ GUARDED_BY(mu_) = false;
  size_t usage_ GUARDED_BY(mu_) = 0;
  size_t lru_usage_ GUARDED_BY(mu_) = 0;
  size_t high_pri_pool_usage_ GUARDED_BY(mu_) = 0;
  // Dummy head: lru_.next is the oldest listed entry, lru_.prev the newest.
  LRUHandle lru_ GUARDED_BY(mu_);
  // The newest entry below the high-priority pool (&lru_ when there is none).
  LRUHandle* lru_low_pri_ GUARDED_BY(mu_);
  HandleTable table_ GUARDED_BY(mu_);
};

}  // namespace lru_internal

class LRUCache final : public Cache {
 public:
  // REQUIRES: 0 <= num_shard_bits < 20 (resolve -1 first), 0 <= high_pri_pool_ratio <= 1.
  LRUCache(size_t capacity, int num_shard_bits, bool strict_capacity_limit,
           double high_pri_pool_ratio);
  ~LRUCache() override;

  // One shard per 512 KiB of capacity, as a power of two, at most 2^6.
  static int DefaultShardBits(size_t capacity);

  const char* Name() const override { return "LRUCache"; }
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
  // Summed over shards.
  size_t TEST_HighPriPoolUsage() const;
  size_t TEST_LRUEntries() const;
  // The listed keys of shard i, oldest first.
  std::vector<std::string> TEST_LRUKeys(int shard) const;

 private:
  uint32_t HashKey(const Slice& key) const;
  lru_internal::LRUCacheShard& ShardFor(uint32_t hash) const;
  size_t PerShardCapacity(size_t capacity) const;

  const int num_shard_bits_;
  const int num_shards_;
  std::unique_ptr<lru_internal::LRUCacheShard[]> shards_;
  mutable Mutex capacity_mu_;  // serializes SetCapacity / SetStrictCapacityLimit
  std::atomic<size_t> capacity_;
  std::atomic<bool> strict_capacity_limit_;
  std::atomic<uint64_t> last_id_{0};
};

}  // namespace shale
