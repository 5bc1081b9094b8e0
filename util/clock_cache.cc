#include "util/clock_cache.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "util/hash.h"

namespace shale {
namespace clock_internal {

namespace {

constexpr uint64_t kStateMask = 3;
constexpr uint64_t kEmpty = 0;
constexpr uint64_t kConstruction = 1;
constexpr uint64_t kVisible = 2;
constexpr uint64_t kInvisible = 3;
constexpr int kClockShift = 2;
constexpr uint64_t kClockMask = uint64_t{3} << kClockShift;
constexpr uint64_t kMaxCountdown = 3;
constexpr int kRefShift = 4;
constexpr uint64_t kRefOne = uint64_t{1} << kRefShift;

// Past this, a shard's table stops growing with capacity / estimated_entry_charge (a huge
// capacity with a tiny estimate would otherwise allocate gigabytes of slots up front).
constexpr int kMaxLengthBits = 20;
// Slots visited per step of the clock hand: one atomic add moves it over several.
constexpr size_t kHandBatch = 4;

uint64_t State(uint64_t meta) { return meta & kStateMask; }
uint64_t Refs(uint64_t meta) { return meta >> kRefShift; }
uint64_t Countdown(uint64_t meta) { return (meta & kClockMask) >> kClockShift; }

uint64_t InitialCountdown(Cache::Priority priority) {
  switch (priority) {
    case Cache::Priority::HIGH: return 3;
    case Cache::Priority::LOW: return 2;
    case Cache::Priority::BOTTOM: return 1;
  }
  return 2;
}

// Fills the fields of a slot this thread owns exclusively.
void FillSlot(Slot* s, const Slice& key, uint64_t hash, void* value, size_t charge,
              Cache::DeleterFn deleter, bool standalone) {
  s->standalone = standalone;
  s->key_size = static_cast<uint32_t>(key.size());
  s->hash = hash;
  s->charge = charge;
  s->value = value;
  s->deleter = deleter;
  if (key.size() > Slot::kInlineKey) {
    s->heap_key.reset(new char[key.size()]);
    std::memcpy(s->heap_key.get(), key.data(), key.size());
  } else {
    s->heap_key.reset();
    if (!key.empty()) std::memcpy(s->inline_key, key.data(), key.size());
  }
}

}  // namespace

ClockShard::~ClockShard() {
  // Users must have released every handle; what is still visible is freed here.
  for (size_t i = 0; slots_ != nullptr && i < TableSize(); ++i) {
    Slot* s = &slots_[i];
    uint64_t m = s->meta.load(std::memory_order_acquire);
    if (State(m) == kVisible && Refs(m) == 0 &&
        s->meta.compare_exchange_strong(m, kConstruction, std::memory_order_acq_rel)) {
      Free(s);
    }
  }
}

void ClockShard::Init(size_t capacity, size_t estimated_entry_charge, bool strict_capacity_limit) {
  assert(estimated_entry_charge > 0);
  const size_t entries = std::max<size_t>(1, capacity / estimated_entry_charge);
  // A load factor of 0.7 at the estimated number of entries keeps probe sequences short.
  const double wanted = static_cast<double>(entries) / 0.7;
  int bits = 2;
  while (bits < kMaxLengthBits && static_cast<double>(size_t{1} << bits) < wanted) ++bits;
  length_bits_ = bits;
  mask_ = (size_t{1} << bits) - 1;
  occupancy_limit_ = std::max<size_t>(1, TableSize() * 84 / 100);
  slots_.reset(new Slot[TableSize()]);
  capacity_.store(capacity, std::memory_order_relaxed);
  strict_capacity_limit_.store(strict_capacity_limit, std::memory_order_relaxed);
}

bool ClockShard::OverCapacity(size_t extra) const {
  return usage_.load(std::memory_order_relaxed) + extra > capacity_.load(std::memory_order_relaxed);
}

bool ClockShard::TryAcquire(Slot* s) {
  uint64_t m = s->meta.load(std::memory_order_acquire);
  while (State(m) == kVisible) {
    if (s->meta.compare_exchange_weak(m, m + kRefOne, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
      return true;
    }
  }
  return false;
}

bool ClockShard::Matches(const Slot* s, const Slice& key, uint64_t hash) const {
  return s->hash == hash && s->key_size == key.size() &&
         std::memcmp(s->key_data(), key.data(), key.size()) == 0;
}

void ClockShard::Free(Slot* s) {
  if (s->deleter != nullptr) (*s->deleter)(Slice(s->key_data(), s->key_size), s->value);
  usage_.fetch_sub(s->charge, std::memory_order_relaxed);
  if (s->standalone) {
    standalone_usage_.fetch_sub(s->charge, std::memory_order_relaxed);
    delete s;
    return;
  }
  // Undo the displacements its insert left on the slots it probed past.
  const size_t target = static_cast<size_t>(s - slots_.get());
  const size_t step = Step(s->hash);
  for (size_t pos = Home(s->hash); pos != target; pos = (pos + step) & mask_) {
    slots_[pos].displacements.fetch_sub(1, std::memory_order_relaxed);
  }
  s->heap_key.reset();
  s->value = nullptr;
  s->deleter = nullptr;
  occupancy_.fetch_sub(1, std::memory_order_relaxed);
  s->meta.store(kEmpty, std::memory_order_release);
}

void ClockShard::Evict(size_t bytes, size_t slots) {
  // Four passes of the hand bring any unreferenced entry's countdown from 3 to 0.
  const size_t max_steps = 4 * TableSize() / kHandBatch + 1;
  size_t freed_slots = 0;
  for (size_t step = 0; step < max_steps; ++step) {
    if (freed_slots >= slots && (bytes == 0 || !OverCapacity(0))) return;
    const uint64_t first = clock_hand_.fetch_add(kHandBatch, std::memory_order_relaxed);
    for (size_t i = 0; i < kHandBatch; ++i) {
      Slot* s = &slots_[(first + i) & mask_];
      uint64_t m = s->meta.load(std::memory_order_acquire);
      if (State(m) != kVisible || Refs(m) != 0) continue;
      if (Countdown(m) > 0) {
        // A failed exchange means someone used the entry meanwhile: leave it be.
        s->meta.compare_exchange_strong(m, m - (uint64_t{1} << kClockShift),
                                        std::memory_order_acq_rel);
        continue;
      }
      if (s->meta.compare_exchange_strong(m, kConstruction, std::memory_order_acq_rel)) {
        Free(s);
        ++freed_slots;
      }
    }
  }
}

Status ClockShard::Insert(const Slice& key, uint64_t hash, void* value, size_t charge,
                          Cache::DeleterFn deleter, Slot** handle, Cache::Priority priority) {
  const bool strict = strict_capacity_limit_.load(std::memory_order_relaxed);
  // The charge is counted first, so that concurrent inserts see each other's.
  usage_.fetch_add(charge, std::memory_order_relaxed);
  if (OverCapacity(0)) Evict(/*bytes=*/1, 0);
  bool admit = !OverCapacity(0) || (!strict && handle != nullptr);
  bool in_table = false;
  if (admit) {
    if (occupancy_.fetch_add(1, std::memory_order_relaxed) < occupancy_limit_) {
      in_table = true;
    } else {
      occupancy_.fetch_sub(1, std::memory_order_relaxed);
      Evict(0, 1);
      in_table = occupancy_.fetch_add(1, std::memory_order_relaxed) < occupancy_limit_;
      if (!in_table) occupancy_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  Slot* placed = nullptr;
  if (in_table) {
    EraseKey(key, hash);
    // The first empty slot along the probe sequence; the ones passed get a displacement.
    size_t pos = Home(hash);
    const size_t step = Step(hash);
    size_t probes = 0;
    for (; probes <= mask_; ++probes, pos = (pos + step) & mask_) {
      Slot* s = &slots_[pos];
      uint64_t expected = kEmpty;
      if (s->meta.compare_exchange_strong(expected, kConstruction, std::memory_order_acq_rel)) {
        placed = s;
        break;
      }
      s->displacements.fetch_add(1, std::memory_order_relaxed);
    }
    if (placed == nullptr) {
      // Only when concurrent inserts filled every slot despite the occupancy limit.
      pos = Home(hash);
      for (size_t i = 0; i < probes; ++i, pos = (pos + step) & mask_) {
        slots_[pos].displacements.fetch_sub(1, std::memory_order_relaxed);
      }
      occupancy_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  if (placed != nullptr) {
    FillSlot(placed, key, hash, value, charge, deleter, /*standalone=*/false);
    const uint64_t refs = handle != nullptr ? kRefOne : 0;
    if (handle != nullptr) *handle = placed;
    placed->meta.store(kVisible | (InitialCountdown(priority) << kClockShift) | refs,
                       std::memory_order_release);
    return Status::OK();
  }
  if (handle != nullptr && !strict) {
    // No room in the table: an entry outside it that lives as long as its handles.
    auto* s = new Slot;
    FillSlot(s, key, hash, value, charge, deleter, /*standalone=*/true);
    s->meta.store(kInvisible | kRefOne, std::memory_order_release);
    standalone_usage_.fetch_add(charge, std::memory_order_relaxed);
    *handle = s;
    return Status::OK();
  }
  usage_.fetch_sub(charge, std::memory_order_relaxed);
  if (handle == nullptr) {
    // As if inserted and evicted at once.
    if (deleter != nullptr) (*deleter)(key, value);
    return Status::OK();
  }
  *handle = nullptr;
  return Status::Incomplete("Insert failed due to LRU cache being full.");
}

Slot* ClockShard::Lookup(const Slice& key, uint64_t hash) {
  size_t pos = Home(hash);
  const size_t step = Step(hash);
  for (size_t probes = 0; probes <= mask_; ++probes, pos = (pos + step) & mask_) {
    Slot* s = &slots_[pos];
    if (TryAcquire(s)) {
      if (Matches(s, key, hash)) {
        // A hit restarts the countdown (one more RMW only when the hand had lowered it).
        if (Countdown(s->meta.load(std::memory_order_relaxed)) < kMaxCountdown) {
          s->meta.fetch_or(kClockMask, std::memory_order_relaxed);
        }
        return s;
      }
      Release(s, /*erase_if_last_ref=*/false);
    }
    if (s->displacements.load(std::memory_order_relaxed) == 0) break;
  }
  return nullptr;
}

void ClockShard::Ref(Slot* s) {
  // The caller holds a reference, so the slot cannot be freed or reused meanwhile.
  s->meta.fetch_add(kRefOne, std::memory_order_relaxed);
}

bool ClockShard::Release(Slot* s, bool erase_if_last_ref) {
  uint64_t m = s->meta.load(std::memory_order_acquire);
  for (;;) {
    assert(Refs(m) > 0);
    const bool last = Refs(m) == 1;
    if (last && (State(m) == kInvisible || erase_if_last_ref || OverCapacity(0))) {
      // The last reference goes and the entry is freed in one step: nobody can take a new
      // reference in between.
      if (s->meta.compare_exchange_weak(m, kConstruction, std::memory_order_acq_rel,
                                        std::memory_order_acquire)) {
        Free(s);
        return true;
      }
      continue;
    }
    if (s->meta.compare_exchange_weak(m, m - kRefOne, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
      return false;
    }
  }
}

void ClockShard::EraseKey(const Slice& key, uint64_t hash) {
  size_t pos = Home(hash);
  const size_t step = Step(hash);
  for (size_t probes = 0; probes <= mask_; ++probes, pos = (pos + step) & mask_) {
    Slot* s = &slots_[pos];
    if (TryAcquire(s)) {
      // Holding a reference, the state is visible or invisible: setting the low bit makes
      // it invisible either way. Our Release then frees it if nobody else holds it.
      if (Matches(s, key, hash)) s->meta.fetch_or(kInvisible, std::memory_order_acq_rel);
      Release(s, /*erase_if_last_ref=*/false);
    }
    if (s->displacements.load(std::memory_order_relaxed) == 0) break;
  }
}

void ClockShard::Erase(const Slice& key, uint64_t hash) { EraseKey(key, hash); }

void ClockShard::SetCapacity(size_t capacity) {
  capacity_.store(capacity, std::memory_order_relaxed);
  if (OverCapacity(0)) Evict(/*bytes=*/1, 0);
}

void ClockShard::SetStrictCapacityLimit(bool strict) {
  strict_capacity_limit_.store(strict, std::memory_order_relaxed);
}

size_t ClockShard::GetPinnedUsage() {
  // Standalone entries are referenced for their whole life.
  size_t total = standalone_usage_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < TableSize(); ++i) {
    Slot* s = &slots_[i];
    uint64_t m = s->meta.load(std::memory_order_acquire);
    // Only visible and invisible entries have references; one more makes the charge safe
    // to read, and our release frees the entry if its holders let go meanwhile.
    while (Refs(m) > 0) {
      if (s->meta.compare_exchange_weak(m, m + kRefOne, std::memory_order_acq_rel,
                                        std::memory_order_acquire)) {
        total += s->charge;
        Release(s, /*erase_if_last_ref=*/false);
        break;
      }
    }
  }
  return total;
}

void ClockShard::EraseUnRefEntries() {
  for (size_t i = 0; i < TableSize(); ++i) {
    Slot* s = &slots_[i];
    uint64_t m = s->meta.load(std::memory_order_acquire);
    if (State(m) == kVisible && Refs(m) == 0 &&
        s->meta.compare_exchange_strong(m, kConstruction, std::memory_order_acq_rel)) {
      Free(s);
    }
  }
}

}  // namespace clock_internal

// ---- ClockCache ----

using clock_internal::ClockShard;
using clock_internal::Slot;

namespace {

constexpr size_t kMinShardSize = 32 * 1024 * 1024;
constexpr int kMaxDefaultShardBits = 6;
// What estimated_entry_charge = 0 stands for: the default block_size (see cache.h).
constexpr size_t kDefaultHyperClockEntryCharge = 4 * 1024;

Slot* AsSlot(Cache::Handle* h) { return reinterpret_cast<Slot*>(h); }

}  // namespace

int ClockCache::DefaultShardBits(size_t capacity) {
  int bits = 0;
  size_t shards = capacity / kMinShardSize;
  while ((shards >>= 1) != 0) {
    if (++bits >= kMaxDefaultShardBits) return bits;
  }
  return bits;
}

ClockCache::ClockCache(size_t capacity, size_t estimated_entry_charge, int num_shard_bits,
                       bool strict_capacity_limit)
    : num_shard_bits_(num_shard_bits),
      num_shards_(1 << num_shard_bits),
      shards_(new ClockShard[static_cast<size_t>(1) << num_shard_bits]),
      capacity_(capacity),
      strict_capacity_limit_(strict_capacity_limit) {
  const size_t per_shard = PerShardCapacity(capacity);
  for (int i = 0; i < num_shards_; i++) {
    shards_[i].Init(per_shard, estimated_entry_charge, strict_capacity_limit);
  }
}

ClockCache::~ClockCache() = default;

size_t ClockCache::PerShardCapacity(size_t capacity) const {
  const auto n = static_cast<size_t>(num_shards_);
  return capacity / n + (capacity % n != 0 ? 1 : 0);
}

ClockShard& ClockCache::ShardFor(uint64_t hash) const {
  // The top bits pick the shard; the low bits pick the home slot.
  const size_t index = num_shard_bits_ > 0 ? hash >> (64 - num_shard_bits_) : 0;
  return shards_[index];
}

Status ClockCache::Insert(const Slice& key, void* value, size_t charge, DeleterFn deleter,
                          Handle** handle, Priority priority) {
  const uint64_t hash = Hash64(key);
  return ShardFor(hash).Insert(key, hash, value, charge, deleter, reinterpret_cast<Slot**>(handle),
                               priority);
}

Cache::Handle* ClockCache::Lookup(const Slice& key, Statistics* /*stats*/) {
  const uint64_t hash = Hash64(key);
  return reinterpret_cast<Handle*>(ShardFor(hash).Lookup(key, hash));
}

bool ClockCache::Ref(Handle* handle) {
  ShardFor(AsSlot(handle)->hash).Ref(AsSlot(handle));
  return true;
}

bool ClockCache::Release(Handle* handle, bool erase_if_last_ref) {
  if (handle == nullptr) return false;
  Slot* s = AsSlot(handle);
  return ShardFor(s->hash).Release(s, erase_if_last_ref);
}

void* ClockCache::Value(Handle* handle) { return AsSlot(handle)->value; }

void ClockCache::Erase(const Slice& key) {
  const uint64_t hash = Hash64(key);
  ShardFor(hash).Erase(key, hash);
}

uint64_t ClockCache::NewId() { return last_id_.fetch_add(1, std::memory_order_relaxed) + 1; }

void ClockCache::SetCapacity(size_t capacity) {
  const size_t per_shard = PerShardCapacity(capacity);
  for (int i = 0; i < num_shards_; i++) shards_[i].SetCapacity(per_shard);
  capacity_.store(capacity, std::memory_order_relaxed);
}

void ClockCache::SetStrictCapacityLimit(bool strict_capacity_limit) {
  for (int i = 0; i < num_shards_; i++) shards_[i].SetStrictCapacityLimit(strict_capacity_limit);
  strict_capacity_limit_.store(strict_capacity_limit, std::memory_order_relaxed);
}

bool ClockCache::HasStrictCapacityLimit() const {
  return strict_capacity_limit_.load(std::memory_order_relaxed);
}

size_t ClockCache::GetCapacity() const { return capacity_.load(std::memory_order_relaxed); }

size_t ClockCache::GetUsage() const {
  size_t total = 0;
  for (int i = 0; i < num_shards_; i++) total += shards_[i].GetUsage();
  return total;
}

size_t ClockCache::GetUsage(Handle* handle) const { return AsSlot(handle)->charge; }

size_t ClockCache::GetPinnedUsage() const {
  size_t total = 0;
  for (int i = 0; i < num_shards_; i++) total += shards_[i].GetPinnedUsage();
  return total;
}

size_t ClockCache::GetCharge(Handle* handle) const { return AsSlot(handle)->charge; }

Cache::DeleterFn ClockCache::GetDeleter(Handle* handle) const { return AsSlot(handle)->deleter; }

void ClockCache::EraseUnRefEntries() {
  for (int i = 0; i < num_shards_; i++) shards_[i].EraseUnRefEntries();
}

std::shared_ptr<Cache> NewHyperClockCache(size_t capacity, size_t estimated_entry_charge,
                                          int num_shard_bits, bool strict_capacity_limit) {
  if (num_shard_bits >= 20) return nullptr;
  if (estimated_entry_charge == 0) estimated_entry_charge = kDefaultHyperClockEntryCharge;
  if (num_shard_bits < 0) num_shard_bits = ClockCache::DefaultShardBits(capacity);
  return std::make_shared<ClockCache>(capacity, estimated_entry_charge, num_shard_bits,
                                      strict_capacity_limit);
}

std::shared_ptr<Cache> HyperClockCacheOptions::MakeSharedCache() const {
  return NewHyperClockCache(capacity, estimated_entry_charge, num_shard_bits,
                            strict_capacity_limit);
}

}  // namespace shale
