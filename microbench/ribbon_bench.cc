// ribbon_bench: the SST filters, Bloom (NewBloomFilterPolicy) against Standard Ribbon
// (NewRibbonFilterPolicy), through the internal builder and reader that table files use.
//
// For each policy and bits-per-key setting: building a filter over kNumKeys sorted keys
// (items = keys added), and queries of keys that were added (hit) or not (miss). Every
// benchmark also reports what the filter costs and buys:
//   bits_per_key  filter bytes * 8 / keys, as built
//   fp_rate       share of kNumKeys absent keys the filter lets through
//   fp_target     the cache-local Bloom rate at the nominal bits per key, what both aim at
// A filter is built once per process for the counters and the query benchmarks.
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "microbench/bench_util.h"
#include "shale/filter_policy.h"
#include "table/filter.h"
#include "table/ribbon.h"

namespace shale::microbench {
namespace {

constexpr size_t kNumKeys = 1000000;
// Queries cycle through this many keys drawn at random, kept apart from the key arrays so
// that the filter, not the key array, decides what stays in the CPU caches.
constexpr size_t kQueryLog2 = 16;

enum Kind { kBloom, kRibbon };

const char* KindName(Kind kind) { return kind == kBloom ? "Bloom" : "Ribbon"; }

std::unique_ptr<const FilterPolicy> MakePolicy(Kind kind, double bits_per_key) {
  // bloom_before_level -1: Ribbon for every level, flushes too.
  return std::unique_ptr<const FilterPolicy>(kind == kBloom
                                                 ? NewBloomFilterPolicy(bits_per_key)
                                                 : NewRibbonFilterPolicy(bits_per_key, -1));
}

// Key(2 * i) are the members, Key(2 * i + 1) the absent keys, i < kNumKeys.
const std::string& Members() {
  static const std::string keys = KeyArray(0, 2, kNumKeys);
  return keys;
}
const std::string& Absent() {
  static const std::string keys = KeyArray(1, 2, kNumKeys);
  return keys;
}
Slice KeyAt(const std::string& keys, size_t i) {
  return Slice(keys.data() + i * kKeySize, kKeySize);
}

// Serializes a filter of `policy` over every member; empty after Fail.
std::string BuildFilter(benchmark::State& state, const FilterPolicy& policy) {
  std::unique_ptr<FilterBitsBuilder> builder = NewFilterBitsBuilder(policy);
  if (builder == nullptr) {
    Fail(state, std::string("no builder for ") + policy.Name());
    return std::string();
  }
  const std::string& keys = Members();
  for (size_t i = 0; i < kNumKeys; ++i) builder->AddKey(KeyAt(keys, i));
  return builder->Finish();
}

struct Built {
  std::string bytes;
  std::unique_ptr<FilterBitsReader> reader;
  double fp_rate = 0;
};

// The filter for (kind, bits_per_key), built and checked on first use; nullptr after Fail.
const Built* GetBuilt(benchmark::State& state, Kind kind, double bits_per_key) {
  static std::map<std::pair<Kind, double>, std::unique_ptr<Built>> cache;
  std::unique_ptr<Built>& slot = cache[{kind, bits_per_key}];
  if (slot != nullptr) return slot.get();

  auto built = std::make_unique<Built>();
  built->bytes = BuildFilter(state, *MakePolicy(kind, bits_per_key));
  if (built->bytes.size() < 8) {
    Fail(state, "filter too short");
    return nullptr;
  }
  // The format id opens the last 8 bytes of either format; a Ribbon build that fell back
  // to Bloom would measure the wrong thing.
  const bool is_ribbon =
      static_cast<uint8_t>(built->bytes[built->bytes.size() - 8]) == ribbon::kFormatStandardRibbon;
  if (is_ribbon != (kind == kRibbon)) {
    Fail(state, std::string(KindName(kind)) + " policy built another format");
    return nullptr;
  }
  built->reader = NewFilterBitsReader(built->bytes);
  size_t false_positives = 0;
  for (size_t i = 0; i < kNumKeys; ++i) {
    if (!built->reader->MayMatch(KeyAt(Members(), i))) {
      Fail(state, "false negative");
      return nullptr;
    }
    if (built->reader->MayMatch(KeyAt(Absent(), i))) ++false_positives;
  }
  built->fp_rate = static_cast<double>(false_positives) / kNumKeys;
  slot = std::move(built);
  return slot.get();
}

void SetFilterCounters(benchmark::State& state, const Built& built, double bits_per_key) {
  state.counters["bits_per_key"] = static_cast<double>(built.bytes.size()) * 8 / kNumKeys;
  state.counters["fp_rate"] = built.fp_rate;
  state.counters["fp_target"] = CacheLocalBloomFpRate(bits_per_key);
}

// Each iteration: a new builder, kNumKeys sorted keys added, Finish.
void BM_Build(benchmark::State& state, Kind kind, double bits_per_key) {
  const Built* built = GetBuilt(state, kind, bits_per_key);
  if (built == nullptr) return;
  std::unique_ptr<const FilterPolicy> policy = MakePolicy(kind, bits_per_key);
  for (auto _ : state) {
    std::string bytes = BuildFilter(state, *policy);
    if (bytes.empty()) break;
    benchmark::DoNotOptimize(bytes.data());
  }
  state.SetItemsProcessed(state.iterations() * kNumKeys);
  SetFilterCounters(state, *built, bits_per_key);
  state.counters["time_per_key"] = benchmark::Counter(
      kNumKeys, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// One MayMatch per iteration, of a member (hit) or an absent key (miss).
void BM_Query(benchmark::State& state, Kind kind, double bits_per_key, bool hit) {
  const Built* built = GetBuilt(state, kind, bits_per_key);
  if (built == nullptr) return;
  const std::string& source = hit ? Members() : Absent();
  std::string queries;
  for (uint32_t i : RandomIndexes(kNumKeys, kQueryLog2, 7)) {
    queries.append(KeyAt(source, i).data(), kKeySize);
  }
  const size_t mask = (size_t{1} << kQueryLog2) - 1;
  const FilterBitsReader& reader = *built->reader;
  size_t next = 0;
  uint64_t matches = 0;
  for (auto _ : state) {
    matches += reader.MayMatch(KeyAt(queries, next++ & mask)) ? 1 : 0;
  }
  if (hit && matches != static_cast<uint64_t>(state.iterations())) {
    Fail(state, "false negative");
  }
  state.SetItemsProcessed(state.iterations());
  SetFilterCounters(state, *built, bits_per_key);
}

void Register() {
  for (Kind kind : {kBloom, kRibbon}) {
    for (double bits : {5.0, 10.0, 15.0, 20.0}) {
      const std::string suffix =
          std::string(KindName(kind)) + "/bits_per_key:" + std::to_string(static_cast<int>(bits));
      benchmark::RegisterBenchmark(("Build/" + suffix).c_str(), BM_Build, kind, bits)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("QueryHit/" + suffix).c_str(), BM_Query, kind, bits, true);
      benchmark::RegisterBenchmark(("QueryMiss/" + suffix).c_str(), BM_Query, kind, bits, false);
    }
  }
}

}  // namespace
}  // namespace shale::microbench

SHALE_MICROBENCH_MAIN_WITH(shale::microbench::Register)
