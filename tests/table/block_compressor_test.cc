// BlockCompressor: one compressor reused for many blocks must give blocks that each
// decompress alone, whatever it compressed before; DecompressBlock from many threads.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "table/compression.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

std::vector<CompressionType> CompressingTypes() {
  std::vector<CompressionType> r;
  for (CompressionType t : {kSnappyCompression, kLZ4Compression, kZSTD}) {
    if (CompressionTypeSupported(t)) r.push_back(t);
  }
  return r;
}

// Text that compresses, drawn from a small vocabulary so that consecutive blocks share
// long runs: a compressor that kept the previous block as a dictionary would refer to it,
// and such a block would not decompress alone.
std::string Words(Random* rnd, size_t len) {
  static const char* const kWords[] = {"alpha ", "bravo ",   "charlie ", "delta ",
                                       "echo ",  "foxtrot ", "golf ",    "hotel-india-juliett "};
  std::string s;
  while (s.size() < len) {
    s += kWords[rnd->Uniform(8)];
    if (rnd->OneIn(4)) s += std::to_string(rnd->Uniform(1000));
  }
  s.resize(len);
  return s;
}

TEST(BlockCompressorTest, ReusedCompressorWritesBlocksThatStandAlone) {
  Random rnd(TestSeed());
  for (CompressionType t : CompressingTypes()) {
    SCOPED_TRACE(CompressionTypeToString(t));
    BlockCompressor compressor(t);
    // Two buffers in turn: each block sits where the one before the last did, and its
    // neighbour in time holds similar text at another address.
    std::string buffers[2];
    for (int i = 0; i < 300; i++) {
      std::string& block = buffers[i % 2];
      const size_t len = rnd.OneIn(10) ? rnd.Uniform(70000) : 3000 + rnd.Uniform(2000);
      block = Words(&rnd, len);
      Slice compressed;
      ASSERT_TRUE(compressor.Compress(block, &compressed)) << "block " << i;
      if (len >= 4096) {
        EXPECT_LT(compressed.size(), len / 2) << "block " << i;
      }
      std::unique_ptr<char[]> out;
      size_t out_size = 0;
      ASSERT_OK(DecompressBlock(t, compressed, &out, &out_size)) << "block " << i;
      ASSERT_EQ(Slice(out.get(), out_size), Slice(block)) << "block " << i;
    }
  }
}

TEST(BlockCompressorTest, OutputStaysValidUntilTheNextCall) {
  Random rnd(TestSeed());
  for (CompressionType t : CompressingTypes()) {
    SCOPED_TRACE(CompressionTypeToString(t));
    BlockCompressor compressor(t);
    // A small block after a large one reuses the large buffer; a large one after it must
    // grow the buffer rather than overrun it (ASan checks).
    for (size_t len : {100000, 10, 0, 200000, 4096}) {
      const std::string block = Words(&rnd, len);
      Slice compressed;
      ASSERT_TRUE(compressor.Compress(block, &compressed));
      std::string via_function;
      ASSERT_TRUE(CompressBlock(t, block, &via_function));
      std::unique_ptr<char[]> a;
      std::unique_ptr<char[]> b;
      size_t a_size = 0;
      size_t b_size = 0;
      ASSERT_OK(DecompressBlock(t, compressed, &a, &a_size));
      ASSERT_OK(DecompressBlock(t, via_function, &b, &b_size));
      EXPECT_EQ(Slice(a.get(), a_size), Slice(block));
      EXPECT_EQ(Slice(b.get(), b_size), Slice(block));
    }
  }
}

// DecompressBlock keeps library state per thread (zstd's context): threads decompressing at
// once, with damaged input among the good, must each get their own blocks back.
TEST(BlockCompressorTest, ThreadsDecompressAtOnce) {
  const uint64_t seed = TestSeed();
  for (CompressionType t : CompressingTypes()) {
    SCOPED_TRACE(CompressionTypeToString(t));
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int id = 0; id < 4; id++) {
      threads.emplace_back([&, id] {
        Random rnd(static_cast<uint32_t>(seed + id));
        std::vector<std::string> blocks;
        std::vector<std::string> compressed;
        for (int i = 0; i < 8; i++) {
          blocks.push_back(Words(&rnd, 2000 + rnd.Uniform(6000)));
          compressed.emplace_back();
          if (!CompressBlock(t, blocks.back(), &compressed.back())) wrong++;
        }
        std::unique_ptr<char[]> out;
        size_t out_size = 0;
        for (int i = 0; i < 2000; i++) {
          const size_t which = rnd.Uniform(8);
          if (rnd.OneIn(5)) {
            std::string bad = compressed[which];
            bad[rnd.Uniform(static_cast<uint32_t>(bad.size()))] ^= 0x5a;
            DecompressBlock(t, bad, &out, &out_size).PermitUncheckedError();
            continue;
          }
          if (!DecompressBlock(t, compressed[which], &out, &out_size).ok() ||
              Slice(out.get(), out_size) != Slice(blocks[which])) {
            wrong++;
          }
        }
      });
    }
    for (std::thread& th : threads) th.join();
    EXPECT_EQ(0, wrong.load());
  }
}

// Blocks of up to 32 KiB are decompressed through a per-thread staging buffer and copied
// into place; larger ones straight into place. Both sides of that limit, with and without
// headroom and recycled buffers, must give the block back exactly where it belongs.
TEST(BlockCompressorTest, BlocksAroundTheStagingLimitComeBackWhole) {
  const uint64_t seed = TestSeed();
  Random rnd(static_cast<uint32_t>(seed));
  for (CompressionType t : CompressingTypes()) {
    SCOPED_TRACE(CompressionTypeToString(t));
    for (size_t len :
         {size_t{1}, size_t{4096}, size_t{32767}, size_t{32768}, size_t{32769}, size_t{100000}}) {
      SCOPED_TRACE(len);
      const std::string block = Words(&rnd, len);
      std::string compressed;
      ASSERT_TRUE(CompressBlock(t, block, &compressed));
      for (size_t headroom : {size_t{0}, size_t{48}}) {
        for (bool recycled : {false, true}) {
          std::unique_ptr<char[]> out;
          size_t out_size = 0;
          size_t capacity = 0;
          ASSERT_OK(DecompressBlock(t, compressed, &out, &out_size, headroom,
                                    recycled ? &capacity : nullptr));
          ASSERT_EQ(block.size(), out_size);
          EXPECT_EQ(Slice(block), Slice(out.get() + headroom, out_size));
          if (recycled) EXPECT_GE(capacity, headroom + out_size);
        }
      }
    }
  }
}

TEST(BlockCompressorTest, RefusesWhatCompressBlockRefuses) {
  Slice out;
  BlockCompressor none(kNoCompression);
  EXPECT_FALSE(none.Compress("data", &out));
  BlockCompressor zlib(kZlibCompression);
  EXPECT_FALSE(zlib.Compress("data", &out));
}

}  // namespace
}  // namespace shale
