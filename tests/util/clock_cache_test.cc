// ClockCache (NewHyperClockCache): what only the clock cache promises. The Cache contract
// it shares with the LRU cache is checked on both in cache_test; here: eviction by
// countdown and priority, a full table (standalone entries, refusals), long keys, the
// sharding and table-size defaults, and many threads on a table small enough to be full
// all the time (run under ThreadSanitizer in CI).
#include "util/clock_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "shale/cache.h"
#include "tests/util/cache_fixture.h"

namespace shale::cache_test {
namespace {

class ClockCacheTest : public CacheFixture, public ::testing::Test {
 protected:
  // Entries of charge 1 unless a test says otherwise, so the estimate is 1.
  void NewCache(size_t capacity, int shard_bits = 0, bool strict = false,
                size_t estimated_entry_charge = 1) {
    NewCacheFrom([&](size_t c, int b,
                     bool st) { return NewHyperClockCache(c, estimated_entry_charge, b, st); },
                 capacity, shard_bits, strict);
  }
};

TEST_F(ClockCacheTest, EvictsEntriesNotUsedSinceTheHandPassed) {
  NewCache(5);
  for (int i = 1; i <= 5; i++) ASSERT_OK(Insert(i, i * 10));
  // Hits restore the countdown of 1 and 3; the others keep the one insertion gave them.
  EXPECT_EQ(10, Lookup(1));
  EXPECT_EQ(30, Lookup(3));
  ASSERT_OK(Insert(6, 60));
  ASSERT_OK(Insert(7, 70));
  EXPECT_EQ(10, Lookup(1));
  EXPECT_EQ(30, Lookup(3));
  ASSERT_EQ(2u, deleted_.size());
  for (const auto& d : deleted_) EXPECT_TRUE(d.first == 2 || d.first == 4 || d.first == 5);
  EXPECT_EQ(5u, cache_->GetUsage());
}

TEST_F(ClockCacheTest, PriorityOrdersEviction) {
  NewCache(3);
  ASSERT_OK(Insert(1, 1, 1, Cache::Priority::HIGH));
  ASSERT_OK(Insert(2, 2, 1, Cache::Priority::LOW));
  ASSERT_OK(Insert(3, 3, 1, Cache::Priority::BOTTOM));
  ASSERT_OK(Insert(4, 4));
  ASSERT_EQ(1u, deleted_.size());
  EXPECT_EQ(3, deleted_[0].first);
  ASSERT_OK(Insert(5, 5));
  ASSERT_EQ(2u, deleted_.size());
  EXPECT_EQ(2, deleted_[1].first);
  EXPECT_EQ(1, Lookup(1));
}

TEST_F(ClockCacheTest, FullTableGivesStandaloneEntries) {
  // Capacity for 2 entries of the estimated charge: 4 slots, 3 of them usable.
  NewCache(100, 0, false, /*estimated_entry_charge=*/50);
  auto* clock = static_cast<ClockCache*>(cache_.get());
  ASSERT_EQ(4u, clock->TEST_TableSize());
  ASSERT_EQ(3u, clock->TEST_OccupancyLimit());
  std::vector<Cache::Handle*> held;
  for (int i = 0; i < 3; i++) held.push_back(InsertAndHold(i, i));
  // No slot and nothing evictable: a held entry outside the table.
  Cache::Handle* extra = InsertAndHold(3, 3);
  ASSERT_NE(nullptr, extra);
  EXPECT_EQ(3, DecodeValue(cache_->Value(extra)));
  EXPECT_EQ(-1, Lookup(3));
  EXPECT_EQ(4u, cache_->GetUsage());
  EXPECT_EQ(4u, cache_->GetPinnedUsage());
  EXPECT_TRUE(cache_->Release(extra));
  EXPECT_TRUE(WasDeleted(3));
  // Without a handle: dropped at once. With the strict limit: refused.
  ASSERT_OK(Insert(4, 4));
  EXPECT_TRUE(WasDeleted(4));
  cache_->SetStrictCapacityLimit(true);
  Cache::Handle* h = nullptr;
  EXPECT_TRUE(cache_->Insert(Key(5), EncodeValue(5), 1, &RecordingDeleter, &h).IsIncomplete());
  EXPECT_FALSE(WasDeleted(5));
  // Once a slot is unpinned the next insert takes it.
  cache_->Release(held.back());
  held.pop_back();
  ASSERT_OK(Insert(6, 6));
  EXPECT_EQ(6, Lookup(6));
  for (Cache::Handle* x : held) cache_->Release(x);
  EXPECT_EQ(3u, cache_->GetUsage());
  EXPECT_EQ(0u, cache_->GetPinnedUsage());
}

TEST_F(ClockCacheTest, LongKeys) {
  NewCache(100);
  const std::string a(100, 'a');
  const std::string b = a + "b";
  ASSERT_OK(cache_->Insert(a, EncodeValue(1), 1, nullptr));
  ASSERT_OK(cache_->Insert(b, EncodeValue(2), 1, nullptr));
  for (const auto& [key, value] : {std::pair<std::string, int>{a, 1}, {b, 2}}) {
    Cache::Handle* h = cache_->Lookup(key);
    ASSERT_NE(nullptr, h);
    EXPECT_EQ(value, DecodeValue(cache_->Value(h)));
    cache_->Release(h);
  }
  EXPECT_EQ(nullptr, cache_->Lookup(std::string(99, 'a')));
  ASSERT_OK(cache_->Insert("", EncodeValue(3), 1, nullptr));
  Cache::Handle* h = cache_->Lookup("");
  ASSERT_NE(nullptr, h);
  cache_->Release(h);
}

TEST_F(ClockCacheTest, ShardingDefaultsAndOptions) {
  EXPECT_EQ(0, ClockCache::DefaultShardBits(100));
  EXPECT_EQ(0, ClockCache::DefaultShardBits(32 << 20));
  EXPECT_EQ(1, ClockCache::DefaultShardBits(64 << 20));
  EXPECT_EQ(6, ClockCache::DefaultShardBits(size_t{1} << 40));
  EXPECT_EQ(nullptr, NewHyperClockCache(100, 1, 20));
  HyperClockCacheOptions opts(1 << 20, 0, 2, true);
  auto c = opts.MakeSharedCache();
  ASSERT_NE(nullptr, c);
  auto* clock = static_cast<ClockCache*>(c.get());
  EXPECT_EQ(2, clock->GetNumShardBits());
  EXPECT_TRUE(c->HasStrictCapacityLimit());
  // 0 stands for 4 KiB entries: 256 KiB a shard is 64 of them, at a load of 0.7 128 slots.
  EXPECT_EQ(128u, clock->TEST_TableSize());
  EXPECT_EQ(107u, clock->TEST_OccupancyLimit());

  // Many keys spread over the shards; the total obeys the capacity.
  NewCache(1000, 3);
  for (int i = 0; i < 5000; i++) ASSERT_OK(Insert(i, i));
  EXPECT_LE(cache_->GetUsage(), 1000u);
  EXPECT_GT(cache_->GetUsage(), 700u);
}

// The shared workload of cache_test on a table of 32 slots a shard for about 50 entries
// of charge 1 to 3: inserts find it full, take standalone entries and evict all the time.
TEST_F(ClockCacheTest, ManyThreadsOnAFullTable) {
  NewCache(2000, 2, false, /*estimated_entry_charge=*/40);
  ASSERT_EQ(32u, static_cast<ClockCache*>(cache_.get())->TEST_TableSize());
  RunConcurrentOps(cache_.get(), TestSeed(), 8 * 8 * 3);
}

}  // namespace
}  // namespace shale::cache_test
