// Reader threads sharing a block cache far smaller than the table: nearly every Get misses,
// reads a block into a buffer and evicts another thread's block, so block buffers cross
// threads (read in one, freed into another's recycled buffers, reused there). Every answer
// must equal the model, under each compression; the ThreadSanitizer build checks the
// hand-overs. Randomized: prints its seed, replay with SHALE_TEST_SEED.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "shale/cache.h"
#include "shale/compression_type.h"
#include "shale/db.h"
#include "shale/table.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

class DBConcurrentReadsTest : public DBTestBase,
                              public testing::WithParamInterface<CompressionType> {
 protected:
  DBConcurrentReadsTest() : DBTestBase("db_concurrent_reads") {}
};

TEST_P(DBConcurrentReadsTest, ReadersEvictingEachOthersBlocksReadTheModel) {
  if (!CompressionTypeSupported(GetParam())) GTEST_SKIP() << "compression not in this build";
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Random rnd(seed);
  options_.stats_dump_period_sec = 0;
  options_.compression = GetParam();
  BlockBasedTableOptions t;
  t.block_size = 1024;
  t.block_cache = NewLRUCache(16 << 10, /*num_shard_bits=*/0);  // a dozen blocks
  options_.table_factory.reset(NewBlockBasedTableFactory(t));
  Open();

  std::map<std::string, std::string> model;
  constexpr int kKeys = 2000;
  for (int i = 0; i < kKeys; i++) {
    char key[16];
    snprintf(key, sizeof(key), "key%06d", i);
    // Sizes vary, so blocks do too (and a recycled buffer fits some reads, not others);
    // half-repeated bytes compress.
    std::string value = RandomString(&rnd, 20 + rnd.Uniform(200)) + std::string(50, 'v');
    if (i % 7 == 0) continue;  // absent keys
    ASSERT_OK(Put(key, value));
    model[key] = value;
  }
  ASSERT_OK(Flush());

  constexpr int kThreads = 4;
  constexpr int kGetsPerThread = 3000;
  std::atomic<int> wrong{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < kThreads; r++) {
    const uint64_t thread_seed = seed + 1 + r;
    readers.emplace_back([&, thread_seed] {
      Random trnd(thread_seed);
      std::string value;
      for (int i = 0; i < kGetsPerThread; i++) {
        char key[16];
        snprintf(key, sizeof(key), "key%06d", static_cast<int>(trnd.Uniform(kKeys)));
        const Status s = db_->Get(ReadOptions(), key, &value);
        const auto want = model.find(key);
        const bool right = want == model.end() ? s.IsNotFound() : s.ok() && value == want->second;
        if (!right) wrong.fetch_add(1);
      }
    });
  }
  for (auto& th : readers) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Compressions, DBConcurrentReadsTest,
                         testing::Values(kNoCompression, kSnappyCompression, kLZ4Compression,
                                         kZSTD),
                         [](const testing::TestParamInfo<CompressionType>& info) {
                           return std::string(CompressionTypeToString(info.param));
                         });

}  // namespace
}  // namespace shale
