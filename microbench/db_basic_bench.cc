// db_basic_bench: whole-DB operations through the public API, one cost at a time.
//
// Reads run against DBs built once per process and shared by every run (auto compaction
// off, block cache large enough for everything, warmed), so they measure CPU work on
// cached data, not I/O. Writes run against a fresh DB per run; the timer stops every
// kBytesBetweenFlushes of writes to flush and wait for compaction, so no run pays for a
// memtable switch or competes with background work on the timed path.
//
// Keys are microbench::Key(2 * i) for i < kNumKeys; Key(2 * i + 1) are the misses, inside
// every file's key range, so only a filter (or a block read) can answer them.
//
// Merge cases: Merge writes 8-byte uint64add counters like a Put; GetMergeOperands reads
// keys that each hold kOperandsPerKey operands (in the memtable, or in one last-level
// file), with an operator that never combines operands, so they stay apart through flush
// and compaction.
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "microbench/bench_util.h"
#include "shale/cache.h"
#include "shale/db.h"
#include "shale/filter_policy.h"
#include "shale/merge_operator.h"
#include "shale/options.h"
#include "shale/table.h"
#include "shale/utilities/merge_operators.h"
#include "shale/write_batch.h"

namespace shale::microbench {
namespace {

constexpr uint32_t kNumKeys = 100000;
constexpr size_t kValueSize = 100;
constexpr size_t kBytesBetweenFlushes = 16 << 20;
constexpr int kL0Files = 4;

Options BaseOptions(bool filter) {
  Options options;
  options.create_if_missing = true;
  BlockBasedTableOptions table;
  table.block_cache = NewLRUCache(256 << 20);
  if (filter) table.filter_policy.reset(NewBloomFilterPolicy(10));
  options.table_factory.reset(NewBlockBasedTableFactory(table));
  return options;
}

const std::string& Value() {
  static const std::string value = [] {
    Random rnd(17);
    return CompressibleBytes(&rnd, kValueSize);
  }();
  return value;
}

bool GetCount(benchmark::State& state, DB* db, const std::string& property, uint64_t* n) {
  if (db->GetIntProperty(property, n)) return true;
  Fail(state, "property " + property + " missing");
  return false;
}

// Puts Key(2 * i) for every i < num_keys with i % parts == part, without the WAL.
bool FillPart(benchmark::State& state, DB* db, int part, int parts, uint32_t num_keys = kNumKeys) {
  WriteOptions wo;
  wo.disableWAL = true;
  for (uint32_t i = part; i < num_keys; i += parts) {
    if (!CheckOk(state, db->Put(wo, Key(2 * uint64_t{i}), Value()), "fill Put")) return false;
  }
  return true;
}

// Where the keys of a read DB live.
enum Where : int64_t { kMemtable = 0, kLevel0 = 1, kLastLevel = 2 };

const char* WhereName(int64_t where) {
  switch (where) {
    case kMemtable: return "memtable";
    case kLevel0: return "L0";
    default: return "last_level";
  }
}

bool BuildReadDB(benchmark::State& state, DB* db, int64_t where, int num_levels) {
  if (where == kMemtable) return FillPart(state, db, 0, 1);
  // kL0Files overlapping files, each holding every kL0Files-th key.
  for (int f = 0; f < kL0Files; ++f) {
    if (!FillPart(state, db, f, kL0Files)) return false;
    if (!CheckOk(state, db->Flush(FlushOptions()), "Flush")) return false;
  }
  if (where == kLastLevel) {
    CompactRangeOptions cro;
    cro.change_level = true;
    cro.target_level = num_levels - 1;
    cro.bottommost_level_compaction = BottommostLevelCompaction::kForce;
    if (!CheckOk(state, db->CompactRange(cro, nullptr, nullptr), "CompactRange")) return false;
  }
  const int want_level = where == kLevel0 ? 0 : num_levels - 1;
  for (int level = 0; level < num_levels; ++level) {
    uint64_t files = 0;
    if (!GetCount(state, db, DB::Properties::kNumFilesAtLevelPrefix + std::to_string(level),
                  &files)) {
      return false;
    }
    if ((level == want_level) != (files > 0)) {
      Fail(state, std::string("unexpected shape: ") + std::to_string(files) + " files at L" +
                      std::to_string(level) + " for a " + WhereName(where) + " DB");
      return false;
    }
  }
  // Warm the block cache: every data block is read once.
  std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions()));
  uint64_t seen = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++seen;
  if (!CheckOk(state, it->status(), "warming scan")) return false;
  if (seen != kNumKeys) {
    Fail(state, "warming scan saw " + std::to_string(seen) + " keys");
    return false;
  }
  return true;
}

// A DB shared by every run of the benchmarks that name it: opened in BenchDir(name) with
// options and filled by build on first use, closed at exit; nullptr after Fail. Benchmark
// threads may call it at once (the first builds while the others wait).
DB* SharedDB(benchmark::State& state, const std::string& name, const Options& options,
             const std::function<bool(DB*)>& build) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<DB>> dbs;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = dbs[name];
  if (slot != nullptr) return slot.get();
  if (dbs.size() == 1) Cleanups().push_back([] { dbs.clear(); });
  std::unique_ptr<DB> db;
  if (!CheckOk(state, DB::Open(options, BenchDir(name), &db), "DB::Open")) return nullptr;
  if (!build(db.get())) return nullptr;
  slot = std::move(db);
  return slot.get();
}

// The read DB for (where, filter), auto compaction off.
DB* ReadDB(benchmark::State& state, int64_t where, bool filter) {
  Options options = BaseOptions(filter);
  options.disable_auto_compactions = true;
  return SharedDB(
      state, std::string("read_") + WhereName(where) + (filter ? "_filter" : "_nofilter"), options,
      [&](DB* db) { return BuildReadDB(state, db, where, options.num_levels); });
}

// ---- Reads

// One Get of a random present (hit) or absent key per iteration. filter: the SST files
// have a 10 bits/key Bloom filter. Threads share the DB and draw different keys.
void BM_Get(benchmark::State& state, int64_t where, bool hit, bool filter) {
  DB* db = ReadDB(state, where, filter);
  if (db == nullptr) return;
  const std::vector<uint32_t> targets = RandomIndexes(kNumKeys, 16, 42 + state.thread_index());
  const ReadOptions ro;
  PinnableSlice value;
  char key[kKeySize];
  size_t next = 0;
  uint64_t found = 0;
  for (auto _ : state) {
    FormatKey(2 * uint64_t{targets[next++ & (targets.size() - 1)]} + (hit ? 0 : 1), key);
    value.Reset();
    Status s = db->Get(ro, db->DefaultColumnFamily(), Slice(key, kKeySize), &value);
    if (s.ok()) {
      ++found;
    } else if (!s.IsNotFound()) {
      CheckOk(state, s, "Get");
      break;
    }
  }
  if (found != (hit ? static_cast<uint64_t>(state.iterations()) : 0)) {
    Fail(state, "Get found " + std::to_string(found) + " of " + std::to_string(state.iterations()) +
                    (hit ? " present" : " absent") + " keys");
  }
  state.SetItemsProcessed(state.iterations());
}

// Arg: N. Each iteration: NewIterator, Seek to a random present key, Next N times.
void BM_IteratorSeekNext(benchmark::State& state, int64_t where) {
  const int64_t nexts = state.range(0);
  DB* db = ReadDB(state, where, true);
  if (db == nullptr) return;
  const std::vector<uint32_t> targets = RandomIndexes(kNumKeys - nexts - 1, 16, 43);
  const ReadOptions ro;
  char key[kKeySize];
  size_t next = 0;
  uint64_t bytes = 0;
  for (auto _ : state) {
    FormatKey(2 * uint64_t{targets[next++ & (targets.size() - 1)]}, key);
    std::unique_ptr<Iterator> it(db->NewIterator(ro));
    it->Seek(Slice(key, kKeySize));
    for (int64_t i = 0; i < nexts && it->Valid(); ++i) {
      bytes += it->key().size() + it->value().size();
      it->Next();
    }
    if (!it->Valid()) {
      CheckOk(state, it->status(), "iterator");
      if (it->status().ok()) Fail(state, "iterator ran out of keys");
      break;
    }
    benchmark::DoNotOptimize(it->value().data());
  }
  state.SetItemsProcessed(state.iterations() * (nexts + 1));
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["seeks"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// ---- Writes

// A fresh, empty DB for one run, destroyed when the run ends, and how to write to it.
class WriteDB {
 public:
  WriteDB(benchmark::State& state, const char* name, const Options& options, bool wal)
      : state_(state), options_(options) {
    write_options_.disableWAL = !wal;
    static int runs = 0;
    dir_ = BenchDir(std::string(name) + "_" + std::to_string(runs++));
    ok_ = CheckOk(state, DB::Open(options_, dir_, &db_), "DB::Open");
  }
  ~WriteDB() {
    if (db_ != nullptr) {
      Status s = db_->Close();
      if (ok_) CheckOk(state_, s, "Close");
      db_.reset();
    }
    (void)DestroyDB(dir_, options_);
  }
  bool ok() const { return ok_; }
  DB* db() const { return db_.get(); }
  const WriteOptions& wo() const { return write_options_; }

  // Counts bytes written; past kBytesBetweenFlushes, flushes and waits for compaction with
  // the timer stopped. False after Fail.
  bool Wrote(size_t bytes) {
    pending_ += bytes;
    if (pending_ < kBytesBetweenFlushes) return true;
    pending_ = 0;
    state_.PauseTiming();
    ok_ = CheckOk(state_, db_->Flush(FlushOptions()), "Flush") &&
          CheckOk(state_, db_->WaitForCompact(WaitForCompactOptions()), "WaitForCompact");
    state_.ResumeTiming();
    return ok_;
  }

 private:
  benchmark::State& state_;
  Options options_;
  WriteOptions write_options_;
  std::string dir_;
  std::unique_ptr<DB> db_;
  bool ok_ = false;
  size_t pending_ = 0;
};

// One Put of a random key per iteration.
void BM_Put(benchmark::State& state, bool wal) {
  WriteDB w(state, "put", BaseOptions(true), wal);
  if (!w.ok()) return;
  Random rnd(301);
  char key[kKeySize];
  for (auto _ : state) {
    FormatKey(rnd.Next(), key);
    if (!CheckOk(state, w.db()->Put(w.wo(), Slice(key, kKeySize), Value()), "Put")) break;
    if (!w.Wrote(kKeySize + kValueSize)) break;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * (kKeySize + kValueSize));
}

// Arg: batch size. One DB::Write of a batch of random keys per iteration; the batch is
// filled on the timed path, as an application would.
void BM_WriteBatch(benchmark::State& state, bool wal) {
  const int64_t batch_size = state.range(0);
  WriteDB w(state, "write_batch", BaseOptions(true), wal);
  if (!w.ok()) return;
  Random rnd(302);
  char key[kKeySize];
  WriteBatch batch;
  for (auto _ : state) {
    batch.Clear();
    bool ok = true;
    for (int64_t i = 0; i < batch_size && ok; ++i) {
      FormatKey(rnd.Next(), key);
      ok = CheckOk(state, batch.Put(Slice(key, kKeySize), Value()), "WriteBatch::Put");
    }
    if (!ok || !CheckOk(state, w.db()->Write(w.wo(), &batch), "Write")) break;
    if (!w.Wrote(batch_size * (kKeySize + kValueSize))) break;
  }
  state.SetItemsProcessed(state.iterations() * batch_size);
  state.SetBytesProcessed(state.iterations() * batch_size * (kKeySize + kValueSize));
}

// Arg: L0 files in the DB. Each iteration opens the DB and closes it.
void BM_Open(benchmark::State& state) {
  const int64_t files = state.range(0);
  Options options = BaseOptions(true);
  options.disable_auto_compactions = true;
  const std::string dir = BenchDir("open_" + std::to_string(files));
  {
    std::unique_ptr<DB> db;
    if (!CheckOk(state, DB::Open(options, dir, &db), "DB::Open")) return;
    for (int64_t f = 0; f < files; ++f) {
      if (!FillPart(state, db.get(), static_cast<int>(f), static_cast<int>(files)) ||
          !CheckOk(state, db->Flush(FlushOptions()), "Flush")) {
        return;
      }
    }
    if (!CheckOk(state, db->Close(), "Close")) return;
  }
  options.create_if_missing = false;
  for (auto _ : state) {
    std::unique_ptr<DB> db;
    if (!CheckOk(state, DB::Open(options, dir, &db), "DB::Open")) break;
    if (!CheckOk(state, db->Close(), "Close")) break;
  }
  state.SetItemsProcessed(state.iterations());
  (void)DestroyDB(dir, options);
}

// Each iteration (timed part): Flush of a memtable holding kFlushKeys random keys.
void BM_Flush(benchmark::State& state) {
  constexpr uint32_t kFlushKeys = 20000;
  WriteDB w(state, "flush", BaseOptions(true), false);
  if (!w.ok()) return;
  Random rnd(303);
  char key[kKeySize];
  for (auto _ : state) {
    state.PauseTiming();
    bool ok = CheckOk(state, w.db()->WaitForCompact(WaitForCompactOptions()), "WaitForCompact");
    for (uint32_t i = 0; i < kFlushKeys && ok; ++i) {
      FormatKey(rnd.Next(), key);
      ok = CheckOk(state, w.db()->Put(w.wo(), Slice(key, kKeySize), Value()), "Put");
    }
    state.ResumeTiming();
    if (!ok || !CheckOk(state, w.db()->Flush(FlushOptions()), "Flush")) break;
  }
  state.SetItemsProcessed(state.iterations() * kFlushKeys);
  state.SetBytesProcessed(state.iterations() * kFlushKeys * (kKeySize + kValueSize));
}

// Each iteration (timed part): CompactRange over the whole DB, which holds kL0Files L0
// files covering kCompactKeys keys and an L1 holding the previous version of each.
void BM_CompactRange(benchmark::State& state) {
  constexpr uint32_t kCompactKeys = 40000;
  Options options = BaseOptions(true);
  options.disable_auto_compactions = true;
  WriteDB w(state, "compact", options, false);
  if (!w.ok()) return;
  uint64_t input_bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    bool ok = true;
    for (int f = 0; f < kL0Files && ok; ++f) {
      ok = FillPart(state, w.db(), f, kL0Files, kCompactKeys) &&
           CheckOk(state, w.db()->Flush(FlushOptions()), "Flush");
    }
    uint64_t size = 0;
    ok = ok && GetCount(state, w.db(), DB::Properties::kTotalSstFilesSize, &size);
    input_bytes += size;
    state.ResumeTiming();
    if (!ok || !CheckOk(state, w.db()->CompactRange(CompactRangeOptions(), nullptr, nullptr),
                        "CompactRange")) {
      break;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(input_bytes));
  state.SetItemsProcessed(state.iterations() * kCompactKeys);
}

// ---- Merge

// One Merge of an 8-byte little-endian 1 into a random one of kNumKeys counters per
// iteration (uint64add). After the run the counters must add up to the iterations.
void BM_Merge(benchmark::State& state, bool wal) {
  Options options = BaseOptions(true);
  options.merge_operator = MergeOperators::CreateUInt64AddOperator();
  WriteDB w(state, "merge", options, wal);
  if (!w.ok()) return;
  char one[8] = {1, 0, 0, 0, 0, 0, 0, 0};
  const std::vector<uint32_t> targets = RandomIndexes(kNumKeys, 16, 304);
  size_t next = 0;
  char key[kKeySize];
  for (auto _ : state) {
    FormatKey(targets[next++ & (targets.size() - 1)], key);
    if (!CheckOk(state, w.db()->Merge(w.wo(), Slice(key, kKeySize), Slice(one, 8)), "Merge")) {
      break;
    }
    if (!w.Wrote(kKeySize + sizeof(one))) break;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * (kKeySize + sizeof(one)));
  if (ErrorSeen().load()) return;
  std::unique_ptr<Iterator> it(w.db()->NewIterator(ReadOptions()));
  uint64_t total = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    uint64_t n = 0;
    if (it->value().size() == sizeof(n)) memcpy(&n, it->value().data(), sizeof(n));
    total += n;
  }
  if (!CheckOk(state, it->status(), "counter scan")) return;
  if (total != static_cast<uint64_t>(state.iterations())) {
    Fail(state, "counters add up to " + std::to_string(total) + " after " +
                    std::to_string(state.iterations()) + " merges");
  }
}

constexpr int kOperandsPerKey = 100;

// Keeps every operand: FullMergeV2 joins them, and it has no PartialMerge, so flush and
// compaction cannot combine operands that have no base value beneath them.
class KeepOperands : public MergeOperator {
 public:
  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    if (in.existing_value != nullptr) out->new_value.assign(in.existing_value->ToStringView());
    for (const Slice& op : in.operand_list) out->new_value.append(op.ToStringView());
    return true;
  }
  const char* Name() const override { return "KeepOperands"; }
};

// Keys with kOperandsPerKey operands of operand_bytes each: 1000 keys of 8-byte operands,
// 200 keys of larger ones (2 KiB: 40 MiB in all, so that it fits the memtable).
uint32_t OperandKeys(int64_t operand_bytes) { return operand_bytes <= 64 ? 1000 : 200; }

bool BuildOperandDB(benchmark::State& state, DB* db, int64_t where, int64_t operand_bytes,
                    int num_levels) {
  Random rnd(305);
  const std::string operand = CompressibleBytes(&rnd, static_cast<size_t>(operand_bytes));
  WriteOptions wo;
  wo.disableWAL = true;
  const uint32_t keys = OperandKeys(operand_bytes);
  // Round by round, so that a key's operands are spread through the memtable and files.
  for (int round = 0; round < kOperandsPerKey; ++round) {
    for (uint32_t k = 0; k < keys; ++k) {
      if (!CheckOk(state, db->Merge(wo, Key(k), operand), "fill Merge")) return false;
    }
  }
  if (where == kMemtable) {
    uint64_t files = 0;
    if (!GetCount(state, db, DB::Properties::kNumFilesAtLevelPrefix + std::string("0"), &files)) {
      return false;
    }
    if (files != 0) Fail(state, "the operands did not stay in the memtable");
    return files == 0;
  }
  CompactRangeOptions cro;
  cro.change_level = true;
  cro.target_level = num_levels - 1;
  cro.bottommost_level_compaction = BottommostLevelCompaction::kForce;
  if (!CheckOk(state, db->Flush(FlushOptions()), "Flush") ||
      !CheckOk(state, db->CompactRange(cro, nullptr, nullptr), "CompactRange")) {
    return false;
  }
  uint64_t files = 0;
  const std::string last = DB::Properties::kNumFilesAtLevelPrefix + std::to_string(num_levels - 1);
  if (!GetCount(state, db, last, &files)) return false;
  if (files == 0) {
    Fail(state, "the operands did not reach the last level");
    return false;
  }
  return true;
}

// The DB of operands for (where, operand_bytes), auto compaction off.
DB* OperandDB(benchmark::State& state, int64_t where, int64_t operand_bytes) {
  Options options = BaseOptions(true);
  options.disable_auto_compactions = true;
  options.merge_operator = std::make_shared<KeepOperands>();
  return SharedDB(
      state, std::string("operands_") + WhereName(where) + "_" + std::to_string(operand_bytes),
      options,
      [&](DB* db) { return BuildOperandDB(state, db, where, operand_bytes, options.num_levels); });
}

// Arg: operand size. One GetMergeOperands of all kOperandsPerKey operands of a random key
// per iteration, the slices Reset() afterwards (items: calls; bytes: operand bytes).
void BM_GetMergeOperands(benchmark::State& state, int64_t where) {
  const int64_t operand_bytes = state.range(0);
  DB* db = OperandDB(state, where, operand_bytes);
  if (db == nullptr) return;
  const std::vector<uint32_t> targets =
      RandomIndexes(OperandKeys(operand_bytes), 16, 44 + state.thread_index());
  const ReadOptions ro;
  std::vector<PinnableSlice> operands(kOperandsPerKey);
  GetMergeOperandsOptions options;
  options.expected_max_number_of_operands = kOperandsPerKey;
  char key[kKeySize];
  size_t next = 0;
  for (auto _ : state) {
    FormatKey(targets[next++ & (targets.size() - 1)], key);
    int count = 0;
    Status s = db->GetMergeOperands(ro, db->DefaultColumnFamily(), Slice(key, kKeySize),
                                    operands.data(), &options, &count);
    if (!CheckOk(state, s, "GetMergeOperands")) break;
    if (count != kOperandsPerKey ||
        operands[count - 1].size() != static_cast<size_t>(operand_bytes)) {
      Fail(state, "GetMergeOperands returned " + std::to_string(count) + " operands");
      break;
    }
    benchmark::DoNotOptimize(operands[count - 1].data());
    for (PinnableSlice& op : operands) op.Reset();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * kOperandsPerKey * operand_bytes);
}

void Register() {
  using benchmark::RegisterBenchmark;
  RegisterBenchmark("Get/memtable/hit", BM_Get, kMemtable, true, true);
  for (int64_t where : {kLevel0, kLastLevel}) {
    const std::string prefix = std::string("Get/") + WhereName(where);
    RegisterBenchmark((prefix + "/hit").c_str(), BM_Get, where, true, true);
    RegisterBenchmark((prefix + "/miss/bloom10").c_str(), BM_Get, where, false, true);
    RegisterBenchmark((prefix + "/miss/no_filter").c_str(), BM_Get, where, false, false);
  }
  // Readers in parallel: what the SuperVersion pinning and the block cache cost when
  // shared (wall time, total rate).
  RegisterBenchmark("Get/memtable/hit", BM_Get, kMemtable, true, true)->Threads(2)->UseRealTime();
  RegisterBenchmark("Get/last_level/hit", BM_Get, kLastLevel, true, true)
      ->Threads(2)
      ->UseRealTime();
  for (int64_t where : {kMemtable, kLevel0, kLastLevel}) {
    RegisterBenchmark((std::string("IterSeekNext/") + WhereName(where)).c_str(),
                      BM_IteratorSeekNext, where)
        ->ArgName("next")
        ->Arg(1)
        ->Arg(10)
        ->Arg(100);
  }
  RegisterBenchmark("Put/wal", BM_Put, true);
  RegisterBenchmark("Put/no_wal", BM_Put, false);
  for (bool wal : {true, false}) {
    RegisterBenchmark(wal ? "WriteBatch/wal" : "WriteBatch/no_wal", BM_WriteBatch, wal)
        ->ArgName("batch")
        ->Arg(8)
        ->Arg(64);
  }
  RegisterBenchmark("Merge/uint64add/wal", BM_Merge, true);
  RegisterBenchmark("Merge/uint64add/no_wal", BM_Merge, false);
  for (int64_t where : {kMemtable, kLastLevel}) {
    const std::string name = std::string("GetMergeOperands/") + WhereName(where);
    RegisterBenchmark(name.c_str(), BM_GetMergeOperands, where)
        ->ArgName("operand_bytes")
        ->Arg(8)
        ->Arg(2048);
    // Two readers of one DB (wall time, total rate): the large operands are pinned in the
    // memtable or the block cache rather than copied, which is what threads contend on.
    RegisterBenchmark(name.c_str(), BM_GetMergeOperands, where)
        ->ArgName("operand_bytes")
        ->Arg(8)
        ->Arg(2048)
        ->Threads(2)
        ->UseRealTime();
  }
  RegisterBenchmark("Open", BM_Open)
      ->ArgName("files")
      ->Arg(0)
      ->Arg(8)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  RegisterBenchmark("Flush", BM_Flush)->Unit(benchmark::kMillisecond)->UseRealTime();
  RegisterBenchmark("CompactRange", BM_CompactRange)->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace
}  // namespace shale::microbench

SHALE_MICROBENCH_MAIN_WITH(shale::microbench::Register)
