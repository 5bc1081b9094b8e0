// Cache: a charge-bounded map from byte-string keys to opaque values, shared by many threads,
// with reference-counted handles. The block cache of block-based tables is one of these
// (BlockBasedTableOptions::block_cache); NewLRUCache makes the standard implementation and
// NewHyperClockCache a lock-free one.
//
// Contract:
// - Every entry has a charge (its cost against the capacity, usually its size in bytes).
//   GetUsage() is the sum of the charges of every entry the cache still holds memory for:
//   entries in the cache plus erased or replaced entries that a handle still references.
//   GetPinnedUsage() is the part of it referenced by handles.
// - Insert and Lookup may hand back a Handle that references the entry; a referenced entry is
//   never freed (eviction, Erase or replacement only detach it from the cache), and every
//   Handle obtained must be passed to Release exactly once (or once more per Ref).
// - When an entry is freed its deleter runs (outside the cache's locks) with its key and
//   value. The deleter must not call back into the same cache shard synchronously in a way
//   that waits on another thread holding it; calling the cache's public methods is fine.
// - Usage may exceed the capacity without a strict limit when everything is referenced;
//   with SetStrictCapacityLimit(true) an Insert asking for a handle that cannot fit fails
//   with Status::Incomplete, and the caller keeps ownership of the value (no deleter runs).
//   An Insert without a handle that cannot fit succeeds as if the entry had been evicted at
//   once: the deleter runs before Insert returns.
//
// Thread safety: every method may be called concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

class Statistics;

class Cache {
 public:
  // Where an entry enters the eviction order. HIGH entries live in the high-priority pool
  // (a high_pri_pool_ratio share of the capacity) and are evicted only after the rest; LOW
  // entries enter below that pool and move into it once looked up again. BOTTOM behaves as
  // LOW (there is no separate low-priority pool in this build).
  enum class Priority { HIGH, LOW, BOTTOM };

  // An opaque reference to an entry.
  struct Handle {};

  using DeleterFn = void (*)(const Slice& key, void* value);

  Cache() = default;
  virtual ~Cache() = default;
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  virtual const char* Name() const = 0;

  // Maps key to value, replacing (detaching) an older entry for key. With handle non-null
  // *handle references the new entry on success (and is nullptr on failure); release it
  // when done. Incomplete("Insert failed due to LRU cache being full.") under a strict
  // limit when referenced entries leave no room.
  virtual Status Insert(const Slice& key, void* value, size_t charge, DeleterFn deleter,
                        Handle** handle = nullptr, Priority priority = Priority::LOW) = 0;

  // A handle to key's entry, or nullptr. stats is accepted for RocksDB's signature; this
  // cache records no tickers itself (its users do).
  virtual Handle* Lookup(const Slice& key, Statistics* stats = nullptr) = 0;

  // One more reference to a handle the caller already holds. Always true here.
  virtual bool Ref(Handle* handle) = 0;

  // Drops one reference. With erase_if_last_ref, an entry left unreferenced is also removed
  // from the cache. True if the entry was freed.
  virtual bool Release(Handle* handle, bool erase_if_last_ref = false) = 0;

  // The value of a referenced entry.
  virtual void* Value(Handle* handle) = 0;

  // Removes key's entry from the cache; it is freed once no handle references it.
  virtual void Erase(const Slice& key) = 0;

  // A new id, unique within this cache, for clients that share the cache to partition the
  // key space (a prefix of their keys).
  virtual uint64_t NewId() = 0;

  // Changes the capacity, evicting unreferenced entries to fit it.
  virtual void SetCapacity(size_t capacity) = 0;
  virtual void SetStrictCapacityLimit(bool strict_capacity_limit) = 0;
  virtual bool HasStrictCapacityLimit() const = 0;
  virtual size_t GetCapacity() const = 0;

  virtual size_t GetUsage() const = 0;
  // The charge of one referenced entry.
  virtual size_t GetUsage(Handle* handle) const = 0;
  virtual size_t GetPinnedUsage() const = 0;
  virtual size_t GetCharge(Handle* handle) const = 0;
  virtual DeleterFn GetDeleter(Handle* handle) const = 0;

  // Frees every entry that no handle references.
  virtual void EraseUnRefEntries() = 0;
};

// A sharded LRU cache of capacity bytes: 2^num_shard_bits shards (a key's hash picks one),
// each with capacity / shards of the total, its own lock, hash table and LRU list.
// num_shard_bits < 0 picks one shard per 512 KiB of capacity, at most 64 shards.
// high_pri_pool_ratio in [0, 1] is the share of each shard reserved for HIGH-priority
// (and re-referenced) entries. Returns nullptr for num_shard_bits >= 20 or a ratio outside
// [0, 1].
std::shared_ptr<Cache> NewLRUCache(size_t capacity, int num_shard_bits = -1,
                                   bool strict_capacity_limit = false,
                                   double high_pri_pool_ratio = 0.5);

struct LRUCacheOptions {
  size_t capacity = 0;
  int num_shard_bits = -1;
  bool strict_capacity_limit = false;
  double high_pri_pool_ratio = 0.5;

  LRUCacheOptions() = default;
  LRUCacheOptions(size_t cap, int bits, bool strict, double high_pri_ratio)
      : capacity(cap),
        num_shard_bits(bits),
        strict_capacity_limit(strict),
        high_pri_pool_ratio(high_pri_ratio) {}
};

std::shared_ptr<Cache> NewLRUCache(const LRUCacheOptions& options);

// A clock cache with lock-free Lookup, Insert, Release and Erase (RocksDB's
// HyperClockCache): each shard is a fixed-size open-addressing table of entries, and an
// entry's reference count, state and clock countdown live in one atomic word. Eviction
// passes a clock hand over the table and takes unreferenced entries that were not used
// since it last passed (HIGH-priority entries survive three passes, LOW two, BOTTOM one; a
// lookup restores three). It honours the Cache contract above like the LRU cache, with no
// high-priority pool.
struct HyperClockCacheOptions {
  // Total charge the cache holds.
  size_t capacity = 0;
  // The average charge expected per entry, which sizes each shard's table once, at
  // construction (entries beyond what the table holds evict others even below the
  // capacity; entries larger than the estimate leave slots unused). For a block cache,
  // the block_size. 0 stands for 4 KiB, the default block_size: unlike RocksDB, whose 0
  // picks a table that grows at run time, shale's table never grows.
  size_t estimated_entry_charge = 0;
  // 2^num_shard_bits shards; -1 (the default) picks one shard per 32 MiB of capacity, at
  // most 64. Must be below 20.
  int num_shard_bits = -1;
  // Fail (Incomplete) an Insert asking for a handle when referenced entries fill the
  // capacity or the table. Default: false.
  bool strict_capacity_limit = false;

  HyperClockCacheOptions(size_t _capacity, size_t _estimated_entry_charge, int _num_shard_bits = -1,
                         bool _strict_capacity_limit = false)
      : capacity(_capacity),
        estimated_entry_charge(_estimated_entry_charge),
        num_shard_bits(_num_shard_bits),
        strict_capacity_limit(_strict_capacity_limit) {}

  // The cache these options describe, or nullptr for num_shard_bits >= 20.
  std::shared_ptr<Cache> MakeSharedCache() const;
};

// As HyperClockCacheOptions(...).MakeSharedCache().
std::shared_ptr<Cache> NewHyperClockCache(size_t capacity, size_t estimated_entry_charge,
                                          int num_shard_bits = -1,
                                          bool strict_capacity_limit = false);

}  // namespace shale
