// table_build_bench: the CPU work of writing one SST file, in memory, as flushes and
// compactions do it (issue 17).
//
//   TableBuild    TableBuilder::Add of 20,000 entries (keys of 16 bytes plus the 8-byte
//                 sequence and type, 400-byte values that compress to about half, as
//                 db_bench's fillrandom writes them) and Finish, into a file that only
//                 counts the bytes. Arguments: the compression type (0 none, 1 snappy,
//                 4 lz4, 7 zstd) and the filter (0 none, 1 Bloom, 2 Ribbon), both at 10
//                 bits per key. Bytes processed are the entries' raw key and value bytes.
//
// Run with --benchmark_repetitions=10 and read the coefficient of variation: the machine
// is shared.
#include <memory>
#include <string>
#include <vector>

#include "microbench/bench_util.h"
#include "shale/comparator.h"
#include "shale/env.h"
#include "shale/filter_policy.h"
#include "shale/table.h"
#include "table/compression.h"
#include "table/table_builder.h"
#include "util/dbformat.h"

namespace shale::microbench {
namespace {

constexpr int kEntries = 20000;
constexpr size_t kValueSize = 400;

// Keeps nothing: the figures are the builder's, not the file system's.
class CountingFile final : public WritableFile {
 public:
  Status Append(const Slice& data) override {
    size_ += data.size();
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  Status Close() override { return Status::OK(); }
  uint64_t GetFileSize() override { return size_; }
  uint64_t size() const { return size_; }

 private:
  uint64_t size_ = 0;
};

struct Input {
  std::vector<std::string> keys;    // internal keys, in order
  std::vector<std::string> values;  // a few distinct values, cycled
  uint64_t raw_bytes = 0;
};

const Input& Entries() {
  static const Input input = [] {
    Input in;
    Random rnd(17);
    for (int i = 0; i < 64; i++) in.values.push_back(CompressibleBytes(&rnd, kValueSize));
    for (int i = 0; i < kEntries; i++) {
      std::string ikey;
      // Every third key, so that neighbours share long prefixes as in a memtable flush.
      AppendInternalKey(&ikey, Key(static_cast<uint64_t>(i) * 3), 1000000 + i, kTypeValue);
      in.raw_bytes += ikey.size() + kValueSize;
      in.keys.push_back(std::move(ikey));
    }
    return in;
  }();
  return input;
}

void BM_TableBuild(benchmark::State& state) {
  const auto compression = static_cast<CompressionType>(state.range(0));
  const int filter = static_cast<int>(state.range(1));
  if (!CompressionTypeSupported(compression)) {
    state.SkipWithError("compression not supported by this build");
    return;
  }
  const InternalKeyComparator icmp(BytewiseComparator());
  TableBuilderOptions opts;
  opts.icmp = &icmp;
  opts.compression = compression;
  opts.level_at_creation = 1;
  if (filter == 1) opts.table_options.filter_policy.reset(NewBloomFilterPolicy(10));
  if (filter == 2) opts.table_options.filter_policy.reset(NewRibbonFilterPolicy(10));
  const Input& in = Entries();
  uint64_t file_size = 0;
  for (auto _ : state) {
    CountingFile file;
    TableBuilder builder(opts, &file);
    for (int i = 0; i < kEntries; i++) {
      builder.Add(in.keys[i], in.values[static_cast<size_t>(i) % in.values.size()]);
    }
    if (!CheckOk(state, builder.Finish(), "Finish")) break;
    file_size = file.size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in.raw_bytes));
  state.counters["file_ratio"] = static_cast<double>(file_size) / static_cast<double>(in.raw_bytes);
}

void Register() {
  benchmark::RegisterBenchmark("TableBuild", BM_TableBuild)
      ->ArgNames({"compression", "filter"})
      ->Args({kNoCompression, 1})
      ->Args({kNoCompression, 2})
      ->Args({kSnappyCompression, 1})
      ->Args({kLZ4Compression, 1})
      ->Args({kZSTD, 1})
      ->Unit(benchmark::kMillisecond);
}

}  // namespace
}  // namespace shale::microbench

SHALE_MICROBENCH_MAIN_WITH(shale::microbench::Register)
