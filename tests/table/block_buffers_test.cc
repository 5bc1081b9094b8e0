// The per-thread recycled block buffers (table/block_buffers.h): what is kept and reused,
// the limits, and the path a block read from a file takes through them: ReadBlock,
// Block::New, the cache's charge and the buffer going back when the block is deleted.
#include "table/block_buffers.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "table/block.h"
#include "table/block_builder.h"
#include "table/compression.h"
#include "table/format.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"

namespace shale {
namespace {

// Each test starts from nothing kept in this thread.
void Drain() { TEST_FreeKeptBlockBuffers(); }

#define SKIP_UNLESS_KEPT() \
  if (!kBlockBuffersKept) GTEST_SKIP() << "AddressSanitizer build: no buffer is kept"

TEST(BlockBuffersTest, AKeptBufferServesASlightlySmallerRequest) {
  SKIP_UNLESS_KEPT();
  Drain();
  BlockBuffer a = AllocateBlockBuffer(4600);
  ASSERT_NE(a.bytes, nullptr);
  EXPECT_EQ(a.capacity, 4600u);
  char* const p = a.bytes.get();
  RecycleBlockBuffer(std::move(a.bytes), a.capacity);
  EXPECT_EQ(TEST_KeptBlockBuffers(), 1u);
  EXPECT_EQ(TEST_KeptBlockBufferBytes(), 4600u);

  // Too large, and more than 1/16 smaller: neither takes the kept one.
  BlockBuffer larger = AllocateBlockBuffer(4601);
  EXPECT_NE(larger.bytes.get(), p);
  EXPECT_EQ(larger.capacity, 4601u);
  BlockBuffer much_smaller = AllocateBlockBuffer(4000);
  EXPECT_NE(much_smaller.bytes.get(), p);
  EXPECT_EQ(TEST_KeptBlockBuffers(), 1u);

  // Within 1/16: the kept buffer, with its whole capacity.
  BlockBuffer reused = AllocateBlockBuffer(4400);
  EXPECT_EQ(reused.bytes.get(), p);
  EXPECT_EQ(reused.capacity, 4600u);
  EXPECT_EQ(TEST_KeptBlockBuffers(), 0u);
  EXPECT_EQ(TEST_KeptBlockBufferBytes(), 0u);
}

TEST(BlockBuffersTest, TheBestFitIsTaken) {
  SKIP_UNLESS_KEPT();
  Drain();
  std::vector<BlockBuffer> held;
  for (size_t n : {4300u, 4100u, 4200u}) held.push_back(AllocateBlockBuffer(n));
  for (BlockBuffer& b : held) RecycleBlockBuffer(std::move(b.bytes), b.capacity);
  EXPECT_EQ(AllocateBlockBuffer(4150).capacity, 4200u);
  EXPECT_EQ(AllocateBlockBuffer(4050).capacity, 4100u);
  EXPECT_EQ(AllocateBlockBuffer(4050).capacity, 4300u);
  EXPECT_EQ(TEST_KeptBlockBuffers(), 0u);
}

TEST(BlockBuffersTest, AThreadKeepsAtMostItsLimits) {
  SKIP_UNLESS_KEPT();
  Drain();
  for (size_t i = 0; i < kMaxKeptBuffers + 3; i++) {
    BlockBuffer b = AllocateBlockBuffer(1000 + i);
    RecycleBlockBuffer(std::move(b.bytes), b.capacity);
  }
  EXPECT_EQ(TEST_KeptBlockBuffers(), kMaxKeptBuffers);
  Drain();
  const size_t big = kMaxKeptBytes / 3 + 1;
  for (int i = 0; i < 3; i++) {
    BlockBuffer b = AllocateBlockBuffer(big + i * 8192);
    RecycleBlockBuffer(std::move(b.bytes), b.capacity);
  }
  EXPECT_EQ(TEST_KeptBlockBuffers(), 2u);
  EXPECT_LE(TEST_KeptBlockBufferBytes(), kMaxKeptBytes);
  Drain();
  BlockBuffer huge = AllocateBlockBuffer(kMaxKeptBytes + 1);
  RecycleBlockBuffer(std::move(huge.bytes), huge.capacity);
  EXPECT_EQ(TEST_KeptBlockBuffers(), 0u);
}

// Pools are per thread: another thread's kept buffer is not this one's, and a thread that
// ends with buffers kept frees them (the sanitizer builds' leak check sees it).
TEST(BlockBuffersTest, EachThreadHasItsOwnPool) {
  SKIP_UNLESS_KEPT();
  Drain();
  size_t other_kept = 0;
  std::thread t([&] {
    BlockBuffer b = AllocateBlockBuffer(4096);
    RecycleBlockBuffer(std::move(b.bytes), b.capacity);
    other_kept = TEST_KeptBlockBuffers();
  });
  t.join();
  EXPECT_EQ(other_kept, 1u);
  EXPECT_EQ(TEST_KeptBlockBuffers(), 0u);

  // A buffer allocated here and recycled there is kept there.
  BlockBuffer b = AllocateBlockBuffer(4096);
  std::thread u([&] {
    RecycleBlockBuffer(std::move(b.bytes), b.capacity);
    other_kept = TEST_KeptBlockBuffers();
  });
  u.join();
  EXPECT_EQ(other_kept, 1u);
  EXPECT_EQ(TEST_KeptBlockBuffers(), 0u);
}

// A data block read from a real file with headroom: Block::New places the object in the
// buffer, the cache is charged the buffer's capacity, deleting the block keeps the buffer,
// and the next read of a block of about that size reuses it, for every compression.
TEST(BlockBuffersTest, ADeletedBlockLendsItsBufferToTheNextRead) {
  SKIP_UNLESS_KEPT();
  TempDirectory dir("block_buffers_test");
  BlockBuilder builder(16);
  for (int i = 0; i < 100; i++) {
    builder.Add("key" + std::to_string(1000 + i), std::string(30, static_cast<char>('a' + i % 26)));
  }
  const std::string raw = builder.Finish().ToString();
  for (CompressionType t : {kNoCompression, kSnappyCompression, kLZ4Compression, kZSTD}) {
    if (!CompressionTypeSupported(t)) continue;
    SCOPED_TRACE(CompressionTypeToString(t));
    std::string stored = raw;
    if (t != kNoCompression) ASSERT_TRUE(CompressBlock(t, raw, &stored));
    std::string file_bytes = stored;
    file_bytes.push_back(static_cast<char>(t));
    PutFixed32(&file_bytes,
               ComputeBlockChecksum(kCRC32c, stored.data(), stored.size(), static_cast<char>(t)));
    const std::string path = dir.File(std::string("block.") + CompressionTypeToString(t));
    ASSERT_OK(WriteStringToFile(Env::Default(), file_bytes, path));
    std::unique_ptr<RandomAccessFile> file;
    ASSERT_OK(Env::Default()->NewRandomAccessFile(path, &file, EnvOptions()));
    BlockReadSource source;
    source.file = file.get();
    source.file_size = file_bytes.size();
    source.checksum_type = kCRC32c;
    source.expect_compressed = t != kNoCompression;

    Drain();
    const char* first_front = nullptr;
    for (int round = 0; round < 3; round++) {
      BlockContents contents;
      ASSERT_OK(ReadBlock(source, BlockHandle(0, stored.size()), true, &contents, kBlockHeadroom));
      EXPECT_EQ(TEST_KeptBlockBuffers(), 0u);
      EXPECT_GE(contents.capacity, kBlockHeadroom + raw.size());
      const size_t capacity = contents.capacity;
      std::unique_ptr<Block> block = Block::New(std::move(contents), nullptr, 0);
      ASSERT_OK(block->status());
      const char* front = reinterpret_cast<const char*>(block.get());
      if (round == 0) {
        first_front = front;
      } else {
        EXPECT_EQ(front, first_front) << "round " << round << " did not reuse the buffer";
      }
      EXPECT_EQ(block->memory_usage(), capacity);
      std::unique_ptr<InternalIterator> it(block->NewIterator(BytewiseComparator()));
      int n = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
      EXPECT_EQ(n, 100);
      it.reset();
      block.reset();
      EXPECT_EQ(TEST_KeptBlockBuffers(), 1u);
      EXPECT_EQ(TEST_KeptBlockBufferBytes(), capacity);
    }
  }
  Drain();
}

// Without headroom (an index or filter block), or a Block not placed in its buffer, the
// pool is left alone.
TEST(BlockBuffersTest, BlocksNotPlacedAreFreedNotKept) {
  Drain();
  BlockBuilder builder(16);
  builder.Add("a", "1");
  const std::string raw = builder.Finish().ToString();
  std::unique_ptr<char[]> mem(new char[raw.size()]);
  memcpy(mem.get(), raw.data(), raw.size());
  std::unique_ptr<Block> block =
      Block::New(BlockContents(std::move(mem), raw.size(), 0), nullptr, 0);
  EXPECT_EQ(block->memory_usage(), raw.size() + sizeof(Block));
  block.reset();
  EXPECT_EQ(TEST_KeptBlockBuffers(), 0u);
}

}  // namespace
}  // namespace shale
