#include "util/lru_cache.h"

#include <cassert>
#include <cstdlib>
#include <cstring>
#include <new>

#include "util/hash.h"

namespace shale {
namespace lru_internal {

namespace {

LRUHandle* NewHandle(const Slice& key, uint32_t hash, void* value, size_t charge,
                     Cache::DeleterFn deleter) {
  void* mem = ::operator new(sizeof(LRUHandle) + key.size());
  auto* e = new (mem) LRUHandle();
  e->value = value;
  e->deleter = deleter;
  e->next = nullptr;
  e->prev = nullptr;
  e->charge = charge;
  e->key_length = key.size();
  e->refs = 0;
  e->hash = hash;
  e->in_cache = false;
  e->high_pri = false;
  e->in_high_pool = false;
  e->has_hit = false;
  if (!key.empty()) std::memcpy(e->key_data(), key.data(), key.size());
  return e;
}

// Frees the handle's memory without running its deleter.
void FreeHandleMemory(LRUHandle* e) {
  e->~LRUHandle();
  ::operator delete(e);
}

}  // namespace

// ---- HandleTable ----

namespace {
constexpr uint32_t kMinTableLength = 16;
}  // namespace

HandleTable::HandleTable() { Resize(kMinTableLength); }

HandleTable::~HandleTable() {
  delete[] tags_;
  delete[] handles_;
}

uint32_t HandleTable::FindSlot(const Slice& key, uint32_t tag) const {
  const uint32_t mask = length_ - 1;
  uint32_t i = tag & mask;
  // Never endless: at most half the slots are full.
  while (tags_[i] != 0 && (tags_[i] != tag || key != handles_[i]->key())) i = (i + 1) & mask;
  return i;
}

LRUHandle* HandleTable::Lookup(const Slice& key, uint32_t hash) {
  const uint32_t i = FindSlot(key, Tag(hash));
  return tags_[i] != 0 ? handles_[i] : nullptr;
}

LRUHandle* HandleTable::Insert(LRUHandle* h) {
  const uint32_t tag = Tag(h->hash);
  const uint32_t i = FindSlot(h->key(), tag);
  LRUHandle* old = tags_[i] != 0 ? handles_[i] : nullptr;
  tags_[i] = tag;
  handles_[i] = h;
  if (old == nullptr && ++elems_ > length_ / 2) Resize(length_ * 2);
  return old;
}

LRUHandle* HandleTable::Remove(const Slice& key, uint32_t hash) {
  const uint32_t i = FindSlot(key, Tag(hash));
  if (tags_[i] == 0) return nullptr;
  LRUHandle* result = handles_[i];
  EraseSlot(i);
  return result;
}

void HandleTable::RemoveEntry(LRUHandle* h) {
  const uint32_t tag = Tag(h->hash);
  const uint32_t mask = length_ - 1;
  uint32_t i = tag & mask;
  while (tags_[i] != tag || handles_[i] != h) {
    assert(tags_[i] != 0);
    i = (i + 1) & mask;
  }
  EraseSlot(i);
}

void HandleTable::EraseSlot(uint32_t i) {
  // Backward shift: an entry after the hole moves into it unless its home slot lies
  // (cyclically) after the hole and at or before the entry, where a probe for it starts
  // past the hole anyway.
  const uint32_t mask = length_ - 1;
  uint32_t j = i;
  for (;;) {
    j = (j + 1) & mask;
    if (tags_[j] == 0) break;
    const uint32_t home = tags_[j] & mask;
    const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (stays) continue;
    tags_[i] = tags_[j];
    handles_[i] = handles_[j];
    i = j;
  }
  tags_[i] = 0;
  handles_[i] = nullptr;
  --elems_;
}

void HandleTable::Resize(uint32_t new_length) {
  uint32_t* old_tags = tags_;
  LRUHandle** old_handles = handles_;
  const uint32_t old_length = length_;
  tags_ = new uint32_t[new_length]();
  handles_ = new LRUHandle*[new_length]();
  length_ = new_length;
  const uint32_t mask = new_length - 1;
  for (uint32_t k = 0; k < old_length; k++) {
    if (old_tags[k] == 0) continue;
    uint32_t i = old_tags[k] & mask;
    while (tags_[i] != 0) i = (i + 1) & mask;
    tags_[i] = old_tags[k];
    handles_[i] = old_handles[k];
  }
  delete[] old_tags;
  delete[] old_handles;
}

// ---- LRUCacheShard ----

LRUCacheShard::LRUCacheShard() {
  lru_.next = &lru_;
  lru_.prev = &lru_;
  lru_low_pri_ = &lru_;
}

LRUCacheShard::~LRUCacheShard() {
  // Users must have released every handle; whatever is still in the table is freed here.
  LRUHandle* chain = nullptr;
  {
    MutexLock l(&mu_);
    while (lru_.next != &lru_) {
      LRUHandle* e = lru_.next;
      LRURemove(e);
      table_.RemoveEntry(e);
      e->in_cache = false;
      usage_ -= e->charge;
      e->next = chain;
      chain = e;
    }
  }
  FreeChain(chain);
}

void LRUCacheShard::Configure(size_t capacity, bool strict_capacity_limit,
                              double high_pri_pool_ratio) {
  MutexLock l(&mu_);
  capacity_ = capacity;
  strict_capacity_limit_ = strict_capacity_limit;
  high_pri_pool_ratio_ = high_pri_pool_ratio;
  high_pri_pool_capacity_ =
      static_cast<size_t>(static_cast<double>(capacity) * high_pri_pool_ratio);
}

void LRUCacheShard::FreeChain(LRUHandle* chain) {
  while (chain != nullptr) {
    LRUHandle* next = chain->next;
    if (chain->deleter != nullptr) (*chain->deleter)(chain->key(), chain->value);
    FreeHandleMemory(chain);
    chain = next;
  }
}

void LRUCacheShard::LRURemove(LRUHandle* e) {
  if (lru_low_pri_ == e) lru_low_pri_ = e->prev;
  e->next->prev = e->prev;
  e->prev->next = e->next;
  e->next = e->prev = nullptr;
  lru_usage_ -= e->charge;
  if (e->in_high_pool) {
    high_pri_pool_usage_ -= e->charge;
    e->in_high_pool = false;
  }
}

void LRUCacheShard::LRUInsert(LRUHandle* e) {
  if (high_pri_pool_ratio_ > 0 && (e->high_pri || e->has_hit)) {
    // Newest end of the list: the top of the high-priority pool.
    e->next = &lru_;
    e->prev = lru_.prev;
    e->prev->next = e;
    lru_.prev = e;
    e->in_high_pool = true;
    high_pri_pool_usage_ += e->charge;
    lru_usage_ += e->charge;
    MaintainPoolSize();
  } else {
    // Just below the pool: the newest of the low part.
    e->next = lru_low_pri_->next;
    e->prev = lru_low_pri_;
    e->next->prev = e;
    lru_low_pri_->next = e;
    lru_low_pri_ = e;
    e->in_high_pool = false;
    lru_usage_ += e->charge;
  }
}

void LRUCacheShard::MaintainPoolSize() {
  // The oldest entries of the pool fall out of it into the low part.
  while (high_pri_pool_usage_ > high_pri_pool_capacity_ && lru_low_pri_->next != &lru_) {
    lru_low_pri_ = lru_low_pri_->next;
    lru_low_pri_->in_high_pool = false;
    high_pri_pool_usage_ -= lru_low_pri_->charge;
  }
}

void LRUCacheShard::EvictFromLRU(size_t charge, LRUHandle** to_free) {
  while ((usage_ + charge > capacity_ || usage_ + charge < usage_) && lru_.next != &lru_) {
    LRUHandle* old = lru_.next;
    LRURemove(old);
    table_.RemoveEntry(old);
    old->in_cache = false;
    usage_ -= old->charge;
    old->next = *to_free;
    *to_free = old;
  }
}

// A full shard evicts its oldest entry on (nearly) every Insert, and every line that
// eviction touches has gone cold since the entry was last used: its list neighbour, its
// table slot and the value its deleter frees (a block's header). After an eviction the new
// oldest entry is the old one's neighbour, whose line the eviction just wrote: reading it
// is cheap, and its lines can load before the next Insert evicts it. Prefetches never
// fault, so a value that is not a pointer does no harm.
void LRUCacheShard::PrefetchNextVictim() const {
  const LRUHandle* v = lru_.next;
  if (v == &lru_) return;
  __builtin_prefetch(v->next);
  __builtin_prefetch(v->value);
  table_.PrefetchSlots(v->hash);
}

Status LRUCacheShard::Insert(const Slice& key, uint32_t hash, void* value, size_t charge,
                             Cache::DeleterFn deleter, LRUHandle** handle,
                             Cache::Priority priority) {
  LRUHandle* e = NewHandle(key, hash, value, charge, deleter);
  e->high_pri = priority == Cache::Priority::HIGH;
  e->refs = handle != nullptr ? 1 : 0;
  e->in_cache = true;
  LRUHandle* to_free = nullptr;
  Status s;
  {
    MutexLock l(&mu_);
    EvictFromLRU(charge, &to_free);
    if (usage_ + charge > capacity_ && (strict_capacity_limit_ || handle == nullptr)) {
      e->in_cache = false;
      if (handle == nullptr) {
        // As if inserted and evicted at once: the value is released like an evicted one.
        e->next = to_free;
        to_free = e;
      } else {
        FreeHandleMemory(e);
        *handle = nullptr;
        s = Status::Incomplete("Insert failed due to LRU cache being full.");
      }
    } else {
      LRUHandle* old = table_.Insert(e);
      usage_ += charge;
      if (old != nullptr) {
        old->in_cache = false;
        if (old->refs == 0) {
          LRURemove(old);
          usage_ -= old->charge;
          old->next = to_free;
          to_free = old;
        }
      }
      if (handle == nullptr) {
        LRUInsert(e);
      } else {
        *handle = e;
      }
    }
    if (to_free != nullptr) PrefetchNextVictim();
  }
  FreeChain(to_free);
  return s;
}

LRUHandle* LRUCacheShard::Lookup(const Slice& key, uint32_t hash) {
  MutexLock l(&mu_);
  LRUHandle* e = table_.Lookup(key, hash);
  if (e != nullptr) {
    if (e->refs == 0) LRURemove(e);
    e->refs++;
    e->has_hit = true;
  }
  return e;
}

void LRUCacheShard::Ref(LRUHandle* e) {
  MutexLock l(&mu_);
  assert(e->refs > 0);
  e->refs++;
}

bool LRUCacheShard::Release(LRUHandle* e, bool erase_if_last_ref) {
  if (e == nullptr) return false;
  bool last_reference = false;
  {
    MutexLock l(&mu_);
    assert(e->refs > 0);
    if (--e->refs == 0) {
      if (e->in_cache) {
        if (usage_ > capacity_ || erase_if_last_ref) {
          // Over capacity (only possible without a strict limit) or asked to: drop it
          // rather than list it.
          table_.RemoveEntry(e);
          e->in_cache = false;
        } else {
          LRUInsert(e);
        }
      }
      if (!e->in_cache) {
        usage_ -= e->charge;
        last_reference = true;
      }
    }
  }
  if (last_reference) {
    e->next = nullptr;
    FreeChain(e);
  }
  return last_reference;
}

void LRUCacheShard::Erase(const Slice& key, uint32_t hash) {
  LRUHandle* to_free = nullptr;
  {
    MutexLock l(&mu_);
    LRUHandle* e = table_.Remove(key, hash);
    if (e != nullptr) {
      e->in_cache = false;
      if (e->refs == 0) {
        LRURemove(e);
        usage_ -= e->charge;
        e->next = nullptr;
        to_free = e;
      }
    }
  }
  FreeChain(to_free);
}

void LRUCacheShard::SetCapacity(size_t capacity) {
  LRUHandle* to_free = nullptr;
  {
    MutexLock l(&mu_);
    capacity_ = capacity;
    high_pri_pool_capacity_ =
        static_cast<size_t>(static_cast<double>(capacity) * high_pri_pool_ratio_);
    EvictFromLRU(0, &to_free);
    MaintainPoolSize();
  }
  FreeChain(to_free);
}

void LRUCacheShard::SetStrictCapacityLimit(bool strict) {
  MutexLock l(&mu_);
  strict_capacity_limit_ = strict;
}

void LRUCacheShard::EraseUnRefEntries() {
  LRUHandle* to_free = nullptr;
  {
    MutexLock l(&mu_);
    while (lru_.next != &lru_) {
      LRUHandle* old = lru_.next;
      LRURemove(old);
      table_.RemoveEntry(old);
      old->in_cache = false;
      usage_ -= old->charge;
      old->next = to_free;
      to_free = old;
    }
  }
  FreeChain(to_free);
}

size_t LRUCacheShard::GetUsage() const {
  MutexLock l(&mu_);
  return usage_;
}

size_t LRUCacheShard::GetPinnedUsage() const {
  MutexLock l(&mu_);
  return usage_ - lru_usage_;
}

size_t LRUCacheShard::TEST_HighPriPoolUsage() const {
  MutexLock l(&mu_);
  return high_pri_pool_usage_;
}

size_t LRUCacheShard::TEST_LRUEntries() const {
  MutexLock l(&mu_);
  size_t n = 0;
  for (const LRUHandle* e = lru_.next; e != &lru_; e = e->next) n++;
  return n;
}

void LRUCacheShard::TEST_LRUKeys(std::vector<std::string>* keys) const {
  MutexLock l(&mu_);
  for (const LRUHandle* e = lru_.next; e != &lru_; e = e->next) {
    keys->push_back(e->key().ToString());
  }
}

}  // namespace lru_internal

// ---- LRUCache ----

using lru_internal::LRUCacheShard;
using lru_internal::LRUHandle;

namespace {

constexpr size_t kMinShardSize = 512 * 1024;
constexpr int kMaxDefaultShardBits = 6;

LRUHandle* AsEntry(Cache::Handle* h) { return reinterpret_cast<LRUHandle*>(h); }

}  // namespace

int LRUCache::DefaultShardBits(size_t capacity) {
  int bits = 0;
  size_t shards = capacity / kMinShardSize;
  while ((shards >>= 1) != 0) {
    if (++bits >= kMaxDefaultShardBits) return bits;
  }
  return bits;
}

LRUCache::LRUCache(size_t capacity, int num_shard_bits, bool strict_capacity_limit,
                   double high_pri_pool_ratio)
    : num_shard_bits_(num_shard_bits),
      num_shards_(1 << num_shard_bits),
      shards_(new LRUCacheShard[static_cast<size_t>(1) << num_shard_bits]),
      capacity_(capacity),
      strict_capacity_limit_(strict_capacity_limit) {
  const size_t per_shard = PerShardCapacity(capacity);
  for (int i = 0; i < num_shards_; i++) {
    shards_[i].Configure(per_shard, strict_capacity_limit, high_pri_pool_ratio);
  }
}

LRUCache::~LRUCache() = default;

size_t LRUCache::PerShardCapacity(size_t capacity) const {
  const auto n = static_cast<size_t>(num_shards_);
  return capacity / n + (capacity % n != 0 ? 1 : 0);
}

uint32_t LRUCache::HashKey(const Slice& key) const {
  return static_cast<uint32_t>(Hash64(key.data(), key.size()));
}

LRUCacheShard& LRUCache::ShardFor(uint32_t hash) const {
  // The top bits pick the shard; the table buckets use the low bits.
  const uint32_t index = num_shard_bits_ > 0 ? hash >> (32 - num_shard_bits_) : 0;
  return shards_[index];
}

Status LRUCache::Insert(const Slice& key, void* value, size_t charge, DeleterFn deleter,
                        Handle** handle, Priority priority) {
  const uint32_t hash = HashKey(key);
  return ShardFor(hash).Insert(key, hash, value, charge, deleter,
                               reinterpret_cast<LRUHandle**>(handle), priority);
}

Cache::Handle* LRUCache::Lookup(const Slice& key, Statistics* /*stats*/) {
  const uint32_t hash = HashKey(key);
  return reinterpret_cast<Handle*>(ShardFor(hash).Lookup(key, hash));
}

bool LRUCache::Ref(Handle* handle) {
  LRUHandle* e = AsEntry(handle);
  ShardFor(e->hash).Ref(e);
  return true;
}

bool LRUCache::Release(Handle* handle, bool erase_if_last_ref) {
  if (handle == nullptr) return false;
  LRUHandle* e = AsEntry(handle);
  return ShardFor(e->hash).Release(e, erase_if_last_ref);
}

void* LRUCache::Value(Handle* handle) { return AsEntry(handle)->value; }

void LRUCache::Erase(const Slice& key) {
  const uint32_t hash = HashKey(key);
  ShardFor(hash).Erase(key, hash);
}

uint64_t LRUCache::NewId() { return last_id_.fetch_add(1, std::memory_order_relaxed) + 1; }

void LRUCache::SetCapacity(size_t capacity) {
  MutexLock l(&capacity_mu_);
  const size_t per_shard = PerShardCapacity(capacity);
  for (int i = 0; i < num_shards_; i++) shards_[i].SetCapacity(per_shard);
  capacity_.store(capacity, std::memory_order_relaxed);
}

void LRUCache::SetStrictCapacityLimit(bool strict_capacity_limit) {
  MutexLock l(&capacity_mu_);
  for (int i = 0; i < num_shards_; i++) shards_[i].SetStrictCapacityLimit(strict_capacity_limit);
  strict_capacity_limit_.store(strict_capacity_limit, std::memory_order_relaxed);
}

bool LRUCache::HasStrictCapacityLimit() const {
  return strict_capacity_limit_.load(std::memory_order_relaxed);
}

size_t LRUCache::GetCapacity() const { return capacity_.load(std::memory_order_relaxed); }

size_t LRUCache::GetUsage() const {
  size_t total = 0;
  for (int i = 0; i < num_shards_; i++) total += shards_[i].GetUsage();
  return total;
}

// The charge is fixed at insertion and the handle keeps the entry alive: no lock needed.
size_t LRUCache::GetUsage(Handle* handle) const { return AsEntry(handle)->charge; }

size_t LRUCache::GetPinnedUsage() const {
  size_t total = 0;
  for (int i = 0; i < num_shards_; i++) total += shards_[i].GetPinnedUsage();
  return total;
}

size_t LRUCache::GetCharge(Handle* handle) const { return AsEntry(handle)->charge; }

Cache::DeleterFn LRUCache::GetDeleter(Handle* handle) const { return AsEntry(handle)->deleter; }

void LRUCache::EraseUnRefEntries() {
  for (int i = 0; i < num_shards_; i++) shards_[i].EraseUnRefEntries();
}

size_t LRUCache::TEST_HighPriPoolUsage() const {
  size_t total = 0;
  for (int i = 0; i < num_shards_; i++) total += shards_[i].TEST_HighPriPoolUsage();
  return total;
}

size_t LRUCache::TEST_LRUEntries() const {
  size_t total = 0;
  for (int i = 0; i < num_shards_; i++) total += shards_[i].TEST_LRUEntries();
  return total;
}

std::vector<std::string> LRUCache::TEST_LRUKeys(int shard) const {
  std::vector<std::string> keys;
  shards_[shard].TEST_LRUKeys(&keys);
  return keys;
}

std::shared_ptr<Cache> NewLRUCache(size_t capacity, int num_shard_bits, bool strict_capacity_limit,
                                   double high_pri_pool_ratio) {
  if (num_shard_bits >= 20) return nullptr;
  if (!(high_pri_pool_ratio >= 0.0 && high_pri_pool_ratio <= 1.0)) return nullptr;
  if (num_shard_bits < 0) num_shard_bits = LRUCache::DefaultShardBits(capacity);
  return std::make_shared<LRUCache>(capacity, num_shard_bits, strict_capacity_limit,
                                    high_pri_pool_ratio);
}

std::shared_ptr<Cache> NewLRUCache(const LRUCacheOptions& options) {
  return NewLRUCache(options.capacity, options.num_shard_bits, options.strict_capacity_limit,
                     options.high_pri_pool_ratio);
}

}  // namespace shale
