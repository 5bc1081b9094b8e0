// block_bench: the per-block work of an SST read, in memory.
//
//   BlockSeek     Seek to a random present key inside one data block of about block_size
//                 (4 KiB) bytes, by restart interval and value size.
//   IndexLookup   Seek in an index block (restart interval 1, shortened separator keys, as
//                 TableBuilder writes it) and decode the data block handle found there.
//   Crc32c        crc32c::Value over a buffer (the block trailer checksum).
//   BlockChecksum ComputeBlockChecksum over a buffer, for kCRC32c and kXXH3 (the default).
//   Compress, Decompress
//                 CompressBlock / DecompressBlock of data that compresses to about half, for
//                 each kind this build supports.
//
// The iterators are made once per run: the figures are the seek itself. A point lookup
// in a table also allocates one index and one data block iterator per call.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "microbench/bench_util.h"
#include "shale/comparator.h"
#include "shale/compression_type.h"
#include "table/block.h"
#include "table/block_buffers.h"
#include "table/block_builder.h"
#include "table/compression.h"
#include "table/format.h"
#include "util/crc32c.h"
#include "util/dbformat.h"

namespace shale::microbench {
namespace {

constexpr size_t kBlockSize = 4096;
// Seek targets cycle through a table of this many random picks.
constexpr size_t kTargetsLog2 = 12;

const InternalKeyComparator& Icmp() {
  static const InternalKeyComparator icmp(BytewiseComparator());
  return icmp;
}

std::string InternalKeyFor(uint64_t n, SequenceNumber seq, ValueType type) {
  std::string ikey;
  AppendInternalKey(&ikey, Key(n), seq, type);
  return ikey;
}

// A lookup key for user key Key(n): sorts before every entry of that user key.
std::string SeekKey(uint64_t n) { return InternalKeyFor(n, kMaxSequenceNumber, kValueTypeForSeek); }

// One Seek per iteration to a random one of lookups; check(iter, index in lookups) says
// whether the iterator landed on the right entry.
template <typename Check>
void SeekLoop(benchmark::State& state, InternalIterator* iter,
              const std::vector<std::string>& lookups, Check check) {
  const std::vector<uint32_t> picks =
      RandomIndexes(static_cast<uint32_t>(lookups.size()), kTargetsLog2, 11);
  const size_t mask = picks.size() - 1;
  size_t next = 0;
  uint64_t wrong = 0;
  for (auto _ : state) {
    const uint32_t target = picks[next++ & mask];
    iter->Seek(lookups[target]);
    wrong += check(iter, target) ? 0 : 1;
  }
  if (!CheckOk(state, iter->status(), "block iterator")) return;
  if (wrong != 0) Fail(state, std::to_string(wrong) + " seeks landed on the wrong entry");
  state.SetItemsProcessed(state.iterations());
}

// Args: restart interval, value size.
void BM_BlockSeek(benchmark::State& state) {
  const int restart_interval = static_cast<int>(state.range(0));
  const size_t value_size = static_cast<size_t>(state.range(1));
  Random rnd(5);
  const std::string value = CompressibleBytes(&rnd, value_size);
  BlockBuilder builder(restart_interval);
  std::vector<std::string> lookups;
  while (builder.CurrentSizeEstimate() < kBlockSize) {
    const uint64_t n = 2 * lookups.size();
    builder.Add(InternalKeyFor(n, 1000 + n, kTypeValue), value);
    lookups.push_back(SeekKey(n));
  }
  const std::string contents = builder.Finish().ToString();
  Block block{BlockContents(Slice(contents))};
  if (!CheckOk(state, block.status(), "Block")) return;
  std::unique_ptr<InternalIterator> iter(block.NewIterator(&Icmp(), 8));

  SeekLoop(state, iter.get(), lookups, [&](InternalIterator* it, uint32_t target) {
    return it->Valid() && ExtractUserKey(it->key()) == ExtractUserKey(lookups[target]);
  });
  state.counters["entries"] = static_cast<double>(lookups.size());
}

// Arg: data blocks the index covers (256: a 1 MiB file; 16384: a 64 MiB file).
void BM_IndexLookup(benchmark::State& state) {
  constexpr uint64_t kKeysPerBlock = 32;
  const uint64_t blocks = static_cast<uint64_t>(state.range(0));
  BlockBuilder builder(1);
  std::string handle;
  for (uint64_t b = 0; b < blocks; ++b) {
    // Block b holds Key(b * kKeysPerBlock) .. Key((b + 1) * kKeysPerBlock - 1).
    std::string separator = InternalKeyFor((b + 1) * kKeysPerBlock - 1, 1, kTypeValue);
    if (b + 1 < blocks) {
      Icmp().FindShortestSeparator(&separator,
                                   InternalKeyFor((b + 1) * kKeysPerBlock, 1, kTypeValue));
    }
    handle.clear();
    BlockHandle(b * kBlockSize, kBlockSize - kBlockTrailerSize).EncodeTo(&handle);
    builder.Add(separator, handle);
  }
  const std::string contents = builder.Finish().ToString();
  Block block{BlockContents(Slice(contents))};
  if (!CheckOk(state, block.status(), "Block")) return;
  std::unique_ptr<InternalIterator> iter(block.NewIterator(&Icmp(), 8));

  // Lookup i targets a key inside block i / 2 (its first key, or one in the middle).
  std::vector<std::string> lookups;
  for (uint64_t b = 0; b < blocks; ++b) {
    lookups.push_back(SeekKey(b * kKeysPerBlock));
    lookups.push_back(SeekKey(b * kKeysPerBlock + kKeysPerBlock / 2));
  }
  SeekLoop(state, iter.get(), lookups, [](InternalIterator* it, uint32_t target) {
    if (!it->Valid()) return false;
    BlockHandle found;
    Slice encoded = it->value();
    return found.DecodeFrom(&encoded).ok() && found.offset() == (target / 2) * kBlockSize;
  });
  state.counters["index_bytes"] = static_cast<double>(contents.size());
}

// Arg: buffer size.
void BM_Crc32c(benchmark::State& state) {
  const size_t size = static_cast<size_t>(state.range(0));
  Random rnd(9);
  const std::string data = CompressibleBytes(&rnd, size);
  state.SetLabel(crc32c::IsFastCrc32Supported() ? "sse4.2" : "table");
  for (auto _ : state) {
    benchmark::DoNotOptimize(crc32c::Value(data.data(), data.size()));
  }
  state.SetBytesProcessed(state.iterations() * size);
}

// Arg: buffer size.
void BM_BlockChecksum(benchmark::State& state, ChecksumType type) {
  const size_t size = static_cast<size_t>(state.range(0));
  Random rnd(9);
  const std::string data = CompressibleBytes(&rnd, size);
  for (auto _ : state) {
    benchmark::DoNotOptimize(ComputeBlockChecksum(type, data.data(), data.size(), 1));
  }
  state.SetBytesProcessed(state.iterations() * size);
}

// Arg: input size. Bytes processed are uncompressed bytes, both ways.
void BM_Compress(benchmark::State& state, CompressionType type) {
  const size_t size = static_cast<size_t>(state.range(0));
  Random rnd(10);
  const std::string data = CompressibleBytes(&rnd, size);
  std::string compressed;
  for (auto _ : state) {
    if (!CompressBlock(type, data, &compressed)) {
      Fail(state, "CompressBlock failed");
      break;
    }
    benchmark::DoNotOptimize(compressed.data());
  }
  state.SetBytesProcessed(state.iterations() * size);
  state.counters["ratio"] = static_cast<double>(compressed.size()) / size;
}

// Arg: the uncompressed size. Sets *data (from rnd) and its compressed form; false (the
// benchmark marked failed) if this build cannot compress it.
bool CompressedInput(benchmark::State& state, CompressionType type, Random* rnd, std::string* data,
                     std::string* compressed) {
  *data = CompressibleBytes(rnd, static_cast<size_t>(state.range(0)));
  if (CompressBlock(type, *data, compressed)) return true;
  Fail(state, "CompressBlock failed");
  return false;
}

void BM_Decompress(benchmark::State& state, CompressionType type) {
  const size_t size = static_cast<size_t>(state.range(0));
  Random rnd(10);
  std::string data;
  std::string compressed;
  if (!CompressedInput(state, type, &rnd, &data, &compressed)) return;
  std::unique_ptr<char[]> out;
  size_t out_size = 0;
  for (auto _ : state) {
    if (!CheckOk(state, DecompressBlock(type, compressed, &out, &out_size), "DecompressBlock")) {
      break;
    }
    benchmark::DoNotOptimize(out.get());
  }
  if (out != nullptr && Slice(out.get(), out_size) != Slice(data)) {
    Fail(state, "round trip changed the data");
  }
  state.SetBytesProcessed(state.iterations() * size);
  state.counters["ratio"] = static_cast<double>(compressed.size()) / size;
}

// As a block cache's miss: the output goes to a recycled buffer (block_buffers.h) that
// was evicted long ago, so is out of the CPU cache. 64 MiB of decompressed blocks stand
// for the cache; each iteration recycles one of them, in a random order fixed up front (as
// evicted blocks lie anywhere in memory, out of the hardware prefetcher's reach), and
// decompresses into it.
void BM_DecompressCold(benchmark::State& state, CompressionType type) {
  const size_t size = static_cast<size_t>(state.range(0));
  Random rnd(10);
  std::string data;
  std::string compressed;
  if (!CompressedInput(state, type, &rnd, &data, &compressed)) return;
  struct Held {
    std::unique_ptr<char[]> bytes;
    size_t capacity = 0;
  };
  std::vector<Held> ring((size_t{64} << 20) / size);
  size_t out_size = 0;
  auto decompress_into = [&](Held* h) {
    if (h->bytes != nullptr) RecycleBlockBuffer(std::move(h->bytes), h->capacity);
    return DecompressBlock(type, compressed, &h->bytes, &out_size, 0, &h->capacity);
  };
  for (Held& h : ring) {
    if (!CheckOk(state, decompress_into(&h), "DecompressBlock")) return;
  }
  std::vector<uint32_t> order(ring.size());
  for (uint32_t i = 0; i < order.size(); i++) order[i] = i;
  for (size_t i = order.size() - 1; i > 0; i--) {
    std::swap(order[i], order[rnd.Uniform(static_cast<uint32_t>(i + 1))]);
  }
  size_t next = 0;
  for (auto _ : state) {
    Held& h = ring[order[next]];
    next = next + 1 == order.size() ? 0 : next + 1;
    if (!CheckOk(state, decompress_into(&h), "DecompressBlock")) break;
    benchmark::DoNotOptimize(h.bytes.get());
  }
  if (Slice(ring[0].bytes.get(), out_size) != Slice(data)) {
    Fail(state, "round trip changed the data");
  }
  state.SetBytesProcessed(state.iterations() * size);
}

void Register() {
  benchmark::RegisterBenchmark("BlockSeek", BM_BlockSeek)
      ->ArgNames({"restart", "value"})
      ->ArgsProduct({{1, 16}, {16, 100}});
  benchmark::RegisterBenchmark("IndexLookup", BM_IndexLookup)
      ->ArgName("blocks")
      ->Arg(256)
      ->Arg(16384);
  benchmark::RegisterBenchmark("Crc32c", BM_Crc32c)
      ->ArgName("bytes")
      ->Arg(64)
      ->Arg(4096)
      ->Arg(65536);
  for (const auto& [type, name] : {std::pair{kCRC32c, "kCRC32c"}, std::pair{kXXH3, "kXXH3"}}) {
    benchmark::RegisterBenchmark((std::string("BlockChecksum/") + name).c_str(), BM_BlockChecksum,
                                 type)
        ->ArgName("bytes")
        ->Arg(64)
        ->Arg(4096)
        ->Arg(65536);
  }
  for (CompressionType type : {kSnappyCompression, kLZ4Compression, kZSTD}) {
    if (!CompressionTypeSupported(type)) continue;
    const std::string name = CompressionTypeToString(type);
    for (const char* what : {"Compress/", "Decompress/"}) {
      benchmark::RegisterBenchmark((what + name).c_str(),
                                   what[0] == 'C' ? BM_Compress : BM_Decompress, type)
          ->ArgName("bytes")
          ->Arg(4096)
          ->Arg(65536);
    }
    benchmark::RegisterBenchmark(("DecompressCold/" + name).c_str(), BM_DecompressCold, type)
        ->ArgName("bytes")
        ->Arg(4096)
        ->Arg(16384)
        ->Arg(65536);
  }
}

}  // namespace
}  // namespace shale::microbench

SHALE_MICROBENCH_MAIN_WITH(shale::microbench::Register)
