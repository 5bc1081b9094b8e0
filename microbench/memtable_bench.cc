// memtable_bench: the cost of one memtable insert, which bounds every write workload
// (profiles of fillrandom and fillbatch_2t put the skip list's insert at 60-70% of the time).
// Each iteration fills a fresh memtable with state.range(0) entries of a 16-byte key and a
// 100-byte value, as db_bench's defaults; the keys are drawn before timing starts, in random
// order (fillrandom) or ascending (fillseq). Items/s is inserts per second; the lookup
// benchmark then times point lookups of present keys in the filled memtable, and the scan
// benchmark a flush's walk over it.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "memtable/memtable.h"
#include "microbench/bench_util.h"
#include "shale/comparator.h"
#include "util/coding.h"
#include "util/dbformat.h"
#include "util/random.h"

namespace shale::microbench {
namespace {

constexpr size_t kKeySize = 16;
constexpr size_t kValueSize = 100;
constexpr size_t kWriteBufferSize = size_t{256} << 20;  // large enough never to fill

// Keys as db_bench makes them: the number big-endian in the first eight bytes, then zeros.
std::vector<std::string> MakeKeys(size_t n, bool random_order) {
  std::vector<std::string> keys(n, std::string(kKeySize, '\0'));
  for (size_t i = 0; i < n; i++) {
    const uint64_t k = __builtin_bswap64(i);
    memcpy(keys[i].data(), &k, sizeof(k));
  }
  if (random_order) {
    Random rnd(301);
    for (size_t i = n; i > 1; i--)
      std::swap(keys[i - 1], keys[rnd.Uniform(static_cast<uint32_t>(i))]);
  }
  return keys;
}

MemTable* Fill(const std::vector<std::string>& keys, const std::string& value) {
  auto* mem = new MemTable(InternalKeyComparator(BytewiseComparator()), kWriteBufferSize);
  mem->Ref();
  SequenceNumber seq = 1;
  for (const std::string& k : keys) mem->Add(seq++, kTypeValue, k, value);
  return mem;
}

void Insert(benchmark::State& state, bool random_order) {
  const auto keys = MakeKeys(static_cast<size_t>(state.range(0)), random_order);
  const std::string value(kValueSize, 'v');
  for (auto _ : state) {
    MemTable* mem = Fill(keys, value);
    state.PauseTiming();
    mem->Unref();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
void BM_MemTableInsertRandom(benchmark::State& state) { Insert(state, true); }
void BM_MemTableInsertSequential(benchmark::State& state) { Insert(state, false); }

// Keys from one thread on either insert path, each entry on its own (Add) or through
// MemTable::GroupAdder, which links a WriteBatch's entries in groups whose skip-list
// searches overlap (and ascending groups one by one, by the serialized insert's hint).
void InsertPath(benchmark::State& state, bool concurrent, bool grouped, bool random_order = true) {
  const auto keys = MakeKeys(static_cast<size_t>(state.range(0)), random_order);
  const std::string value(kValueSize, 'v');
  for (auto _ : state) {
    auto* mem = new MemTable(InternalKeyComparator(BytewiseComparator()), kWriteBufferSize);
    mem->Ref();
    SequenceNumber seq = 1;
    if (grouped) {
      MemTable::GroupAdder adder(mem, concurrent);
      for (const std::string& k : keys) adder.Add(seq++, kTypeValue, k, value);
    } else {
      for (const std::string& k : keys) mem->Add(seq++, kTypeValue, k, value, concurrent);
    }
    state.PauseTiming();
    if (mem->num_entries() != keys.size()) Fail(state, "an entry was not linked");
    mem->Unref();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
void BM_MemTableInsertRandomGrouped(benchmark::State& state) { InsertPath(state, false, true); }
void BM_MemTableInsertSequentialGrouped(benchmark::State& state) {
  InsertPath(state, false, true, false);
}
void BM_MemTableInsertConcurrentOneByOne(benchmark::State& state) {
  InsertPath(state, true, false);
}
void BM_MemTableInsertConcurrentGrouped(benchmark::State& state) { InsertPath(state, true, true); }

// Times Gets of `keys` in turn on mem (then unreferenced); each must find a live value
// (present) or nothing.
void GetLoop(benchmark::State& state, MemTable* mem, const std::vector<std::string>& keys,
             bool present) {
  size_t i = 0;
  std::string value;
  for (auto _ : state) {
    LookupKey lkey(keys[i], kMaxSequenceNumber);
    Status s;
    SequenceNumber seq;
    const bool found = mem->Get(lkey, &value, &s, &seq) && s.ok();
    if (found != present) {
      Fail(state, present ? "a present key was not found" : "an absent key was found");
      break;
    }
    if (++i == keys.size()) i = 0;
  }
  mem->Unref();
  state.SetItemsProcessed(state.iterations());
}

void BM_MemTableGetRandom(benchmark::State& state) {
  const auto keys = MakeKeys(static_cast<size_t>(state.range(0)), true);
  GetLoop(state, Fill(keys, std::string(kValueSize, 'v')), keys, true);
}

// Point lookups of keys the memtable lacks (the odd key numbers; the even ones are in), the
// common case for every memtable but the one holding a key: the filter of key hashes answers
// most without a skip-list search.
void BM_MemTableGetAbsent(benchmark::State& state) {
  const auto keys = MakeKeys(2 * static_cast<size_t>(state.range(0)), true);
  std::vector<std::string> present;
  std::vector<std::string> absent;
  for (const std::string& k : keys) {
    uint64_t num;
    memcpy(&num, k.data(), sizeof(num));
    (__builtin_bswap64(num) % 2 == 0 ? present : absent).push_back(k);
  }
  GetLoop(state, Fill(present, std::string(kValueSize, 'v')), absent, false);
}

// Point lookups on a memtable nothing was added to: what every Get of a DB that takes no
// writes asks first.
void BM_MemTableGetEmpty(benchmark::State& state) {
  const auto keys = MakeKeys(static_cast<size_t>(state.range(0)), true);
  GetLoop(state, Fill({}, std::string()), keys, false);
}

// A full forward scan reading every key and value, as a flush walks a memtable filled in
// random order (its entries then lie far apart in the arena). Items/s is entries per second.
void BM_MemTableScanRandomFilled(benchmark::State& state) {
  const auto keys = MakeKeys(static_cast<size_t>(state.range(0)), true);
  MemTable* mem = Fill(keys, std::string(kValueSize, 'v'));
  size_t bytes = 0;
  for (auto _ : state) {
    std::unique_ptr<InternalIterator> it(mem->NewIterator());
    size_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), n++) {
      bytes += it->key().size() + it->value().size();
    }
    if (n != keys.size()) {
      Fail(state, "the scan missed entries");
      break;
    }
  }
  benchmark::DoNotOptimize(bytes);
  mem->Unref();
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

BENCHMARK(BM_MemTableInsertRandom)->Arg(1 << 16)->Arg(1 << 19)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MemTableInsertSequential)->Arg(1 << 19)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MemTableInsertRandomGrouped)->Arg(1 << 19)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MemTableInsertSequentialGrouped)->Arg(1 << 19)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MemTableInsertConcurrentOneByOne)->Arg(1 << 19)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MemTableInsertConcurrentGrouped)->Arg(1 << 19)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MemTableGetRandom)->Arg(1 << 19);
BENCHMARK(BM_MemTableGetAbsent)->Arg(1 << 19);
BENCHMARK(BM_MemTableGetEmpty)->Arg(1 << 19);
BENCHMARK(BM_MemTableScanRandomFilled)->Arg(1 << 19)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace shale::microbench

SHALE_MICROBENCH_MAIN();
