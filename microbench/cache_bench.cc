// cache_bench: the two block caches, the sharded LRU cache (NewLRUCache, `lru`) and the
// lock-free clock cache (NewHyperClockCache, `hyper_clock`, its table sized for 4 KiB
// entries), used as table readers use them: 16-byte keys (a reader id and a block offset),
// 4 KiB charges, low priority. With 1, 2, 4 and 8 threads sharing one cache; one thread in
// CPU time, more in wall time (their total rate).
//
//   Lookup        Lookup + Release of a present key; the cache has room for twice its
//                 entries (keys hash unevenly over the shards), so nothing is evicted.
//   Insert        Insert without a handle into a full cache, keys from a space 4x the
//                 capacity: most inserts evict, some replace.
//   LookupInsert  The read path's pattern: Lookup, and on a miss Insert (with a handle)
//                 and Release, keys from a space 2x the capacity (about half hit).
//
// Values are dummies with an empty deleter, so the figures are the cache's own work.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "microbench/bench_util.h"
#include "shale/cache.h"
#include "util/coding.h"

namespace shale::microbench {
namespace {

constexpr size_t kCharge = 4096;
// 32 MiB: 64 shards by the LRU default rule, one for the clock cache (one per 32 MiB).
constexpr size_t kCapacityEntries = 8192;
constexpr size_t kCapacity = kCapacityEntries * kCharge;
constexpr size_t kPicksLog2 = 16;

void NoopDeleter(const Slice& /*key*/, void* /*value*/) {}

int dummy_value;

struct CacheKey {
  char bytes[16];
  explicit CacheKey(uint64_t n) {
    EncodeFixed64(bytes, 0x5ea1eULL);
    EncodeFixed64(bytes + 8, n * kCharge);
  }
  Slice slice() const { return Slice(bytes, sizeof(bytes)); }
};

enum class Kind { kLRU, kHyperClock };

// A cache for one benchmark, shared by its threads and its runs, holding keys
// 0 .. fill - 1 when made.
std::shared_ptr<Cache> MakeCache(Kind kind, size_t capacity, size_t fill) {
  std::shared_ptr<Cache> cache =
      kind == Kind::kLRU ? NewLRUCache(capacity) : NewHyperClockCache(capacity, kCharge);
  for (uint64_t n = 0; n < fill; ++n) {
    (void)cache->Insert(CacheKey(n).slice(), &dummy_value, kCharge, NoopDeleter);
  }
  return cache;
}

// Calls op(key) once per iteration, keys drawn at random below key_space (a different
// draw per thread); op returns false after Fail.
template <typename Op>
void KeyLoop(benchmark::State& state, size_t key_space, Op op) {
  const std::vector<uint32_t> picks =
      RandomIndexes(static_cast<uint32_t>(key_space), kPicksLog2, 100 + state.thread_index());
  const size_t mask = picks.size() - 1;
  size_t next = 0;
  for (auto _ : state) {
    if (!op(CacheKey(picks[next++ & mask]))) break;
  }
  state.SetItemsProcessed(state.iterations());
}

template <Kind kind>
void BM_Lookup(benchmark::State& state) {
  static const std::shared_ptr<Cache> cache = MakeCache(kind, 2 * kCapacity, kCapacityEntries);
  KeyLoop(state, kCapacityEntries, [&](const CacheKey& key) {
    Cache::Handle* h = cache->Lookup(key.slice());
    if (h == nullptr) {
      Fail(state, "a lookup of a present key missed");
      return false;
    }
    cache->Release(h);
    return true;
  });
}

template <Kind kind>
void BM_Insert(benchmark::State& state) {
  static const std::shared_ptr<Cache> cache = MakeCache(kind, kCapacity, kCapacityEntries);
  KeyLoop(state, 4 * kCapacityEntries, [&](const CacheKey& key) {
    return CheckOk(state, cache->Insert(key.slice(), &dummy_value, kCharge, NoopDeleter), "Insert");
  });
}

template <Kind kind>
void BM_LookupInsert(benchmark::State& state) {
  static const std::shared_ptr<Cache> cache = MakeCache(kind, kCapacity, kCapacityEntries);
  uint64_t hits = 0;
  KeyLoop(state, 2 * kCapacityEntries, [&](const CacheKey& key) {
    Cache::Handle* h = cache->Lookup(key.slice());
    if (h != nullptr) {
      ++hits;
    } else if (!CheckOk(state, cache->Insert(key.slice(), &dummy_value, kCharge, NoopDeleter, &h),
                        "Insert")) {
      return false;
    }
    cache->Release(h);
    return true;
  });
  if (state.iterations() > 0) {
    state.counters["hit_rate"] =
        benchmark::Counter(static_cast<double>(hits) / static_cast<double>(state.iterations()),
                           benchmark::Counter::kAvgThreads);
  }
}

// One thread in CPU time; more threads in wall time, as their total rate is the point.
void Register() {
  using Fn = void (*)(benchmark::State&);
  const std::pair<const char*, Fn> benches[] = {
      {"Lookup/lru", BM_Lookup<Kind::kLRU>},
      {"Lookup/hyper_clock", BM_Lookup<Kind::kHyperClock>},
      {"Insert/lru", BM_Insert<Kind::kLRU>},
      {"Insert/hyper_clock", BM_Insert<Kind::kHyperClock>},
      {"LookupInsert/lru", BM_LookupInsert<Kind::kLRU>},
      {"LookupInsert/hyper_clock", BM_LookupInsert<Kind::kHyperClock>}};
  for (const auto& [name, fn] : benches) {
    benchmark::RegisterBenchmark(name, fn)->Threads(1);
    for (int threads : {2, 4, 8}) {
      benchmark::RegisterBenchmark(name, fn)->Threads(threads)->UseRealTime();
    }
  }
}

}  // namespace
}  // namespace shale::microbench

SHALE_MICROBENCH_MAIN_WITH(shale::microbench::Register)
