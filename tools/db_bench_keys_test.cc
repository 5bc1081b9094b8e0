// db_bench's value generator against RocksDB 11.8.1's: the same seed, the same draws and the
// same bytes, so that both binaries write (and compress, and decompress) the same data; and
// the write loop's range deletions at RocksDB's points.
#include "tools/db_bench_keys.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace shale::tools {
namespace {

// The first 100 bytes of a value RocksDB 11.8.1's db_bench writes with --value_size=100
// and the default --compression_ratio=0.5, read back raw from its WAL: 50 random bytes
// drawn from Random(301).Uniform(127), then the same 50 again.
const std::vector<int> kRocksDbFirstPiece = {
    116, 16,  28,  60, 76, 72, 55, 3,   85, 7,  7,  29, 108, 114, 39, 6,  83,
    42,  56,  115, 33, 98, 66, 18, 34,  73, 99, 39, 88, 112, 108, 64, 20, 120,
    122, 125, 81,  62, 62, 6,  39, 121, 52, 27, 1,  23, 3,   123, 84, 9};

TEST(DbBenchValuesTest, FirstPieceIsRocksDbs) {
  RandomGenerator gen(0.5, 0);
  const Slice piece = gen.Generate(100);
  ASSERT_EQ(piece.size(), 100u);
  for (size_t i = 0; i < 100; i++) {
    EXPECT_EQ(static_cast<unsigned char>(piece.data()[i]), kRocksDbFirstPiece[i % 50])
        << "byte " << i;
  }
}

TEST(DbBenchValuesTest, EveryByteBelowCharMaxAndEveryPieceRepeatsItsPrefix) {
  for (double ratio : {0.25, 0.5, 1.0}) {
    RandomGenerator gen(ratio, 0);
    const size_t unique = static_cast<size_t>(100 * ratio);
    for (int piece_number = 0; piece_number < 1000; piece_number++) {
      const Slice piece = gen.Generate(100);
      for (size_t i = 0; i < 100; i++) {
        const auto byte = static_cast<unsigned char>(piece.data()[i]);
        ASSERT_LT(byte, 127) << "ratio " << ratio << " piece " << piece_number;
        ASSERT_EQ(piece.data()[i], piece.data()[i % unique])
            << "ratio " << ratio << " piece " << piece_number << " byte " << i;
      }
    }
  }
}

// RocksDB 11.8.1's write loop adds a range deletion after the put that makes num_written
// when num_written > before, (num_written - before) % per == 0 and (num_written - before)
// / per <= max.
TEST(DbBenchRangeTombstonesTest, DueEveryPerWritesAfterBeforeUpToMax) {
  std::vector<int64_t> due;
  for (int64_t n = 1; n <= 100; n++) {
    if (RangeTombstoneDue(n, 5, 10, 3)) due.push_back(n);
  }
  EXPECT_EQ(due, (std::vector<int64_t>{15, 25, 35}));
  due.clear();
  for (int64_t n = 1; n <= 100; n++) {
    if (RangeTombstoneDue(n, 0, 1, 4)) due.push_back(n);
  }
  EXPECT_EQ(due, (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(DbBenchRangeTombstonesTest, NeverWithoutAPeriodOrAMaximum) {
  for (int64_t n = 0; n <= 1000; n++) {
    ASSERT_FALSE(RangeTombstoneDue(n, 0, 0, 100)) << n;
    ASSERT_FALSE(RangeTombstoneDue(n, 0, 10, 0)) << n;
    ASSERT_FALSE(RangeTombstoneDue(n, 2000, 10, 100)) << n;
  }
}

}  // namespace
}  // namespace shale::tools
