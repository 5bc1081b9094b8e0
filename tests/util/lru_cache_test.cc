// LRUCache: what only the LRU cache promises. The Cache contract it shares with the clock
// cache is checked on both in cache_test; here: eviction order, where released entries go,
// the high-priority pool, which entries a shrink keeps, the sharding defaults, and many
// threads with the pool in use.
#include "util/lru_cache.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "shale/cache.h"
#include "tests/testutil/test_util.h"
#include "tests/util/cache_fixture.h"
#include "util/random.h"

namespace shale::cache_test {
namespace {

class LRUCacheTest : public CacheFixture, public ::testing::Test {
 protected:
  void NewCache(size_t capacity, int shard_bits = 0, bool strict = false, double ratio = 0.0) {
    NewCacheFrom([&](size_t c, int b, bool st) { return NewLRUCache(c, b, st, ratio); }, capacity,
                 shard_bits, strict);
    lru_ = static_cast<LRUCache*>(cache_.get());
  }

  std::vector<int> LRUOrder() {
    std::vector<int> out;
    for (const std::string& k : lru_->TEST_LRUKeys(0)) out.push_back(DecodeKey(k));
    return out;
  }

  LRUCache* lru_ = nullptr;
};

TEST_F(LRUCacheTest, EvictsLeastRecentlyUsed) {
  NewCache(5);
  for (int i = 1; i <= 5; i++) ASSERT_OK(Insert(i, i * 10));
  EXPECT_EQ((std::vector<int>{1, 2, 3, 4, 5}), LRUOrder());
  // Touching 1 and 3 makes 2 the oldest.
  EXPECT_EQ(10, Lookup(1));
  EXPECT_EQ(30, Lookup(3));
  EXPECT_EQ((std::vector<int>{2, 4, 5, 1, 3}), LRUOrder());
  ASSERT_OK(Insert(6, 60));
  EXPECT_EQ(-1, Lookup(2));
  ASSERT_OK(Insert(7, 70));
  EXPECT_EQ(-1, Lookup(4));
  EXPECT_EQ(10, Lookup(1));
  EXPECT_EQ(30, Lookup(3));
  EXPECT_EQ(50, Lookup(5));
  ASSERT_EQ(2u, deleted_.size());
  EXPECT_EQ(2, deleted_[0].first);
  EXPECT_EQ(4, deleted_[1].first);
  EXPECT_EQ(5u, cache_->GetUsage());
}

TEST_F(LRUCacheTest, LastReleaseListsTheEntry) {
  NewCache(10);
  Cache::Handle* h = InsertAndHold(2, 20);
  EXPECT_EQ(0u, lru_->TEST_LRUEntries());
  EXPECT_FALSE(cache_->Release(h));
  EXPECT_EQ(1u, lru_->TEST_LRUEntries());
  EXPECT_EQ(20, Lookup(2));
}

TEST_F(LRUCacheTest, HighPriorityPoolRetention) {
  // Capacity 10, pool of 5.
  NewCache(10, 0, false, 0.5);
  for (int i = 0; i < 3; i++) ASSERT_OK(Insert(100 + i, i, 1, Cache::Priority::HIGH));
  EXPECT_EQ(3u, lru_->TEST_HighPriPoolUsage());
  // A flood of low-priority entries evicts only low-priority ones.
  for (int i = 0; i < 50; i++) ASSERT_OK(Insert(i, i, 1, Cache::Priority::LOW));
  for (int i = 0; i < 3; i++) EXPECT_EQ(i, Lookup(100 + i)) << i;
  EXPECT_EQ(10u, cache_->GetUsage());
  for (int i = 0; i < 43; i++) EXPECT_EQ(-1, Lookup(i)) << i;

  // More high-priority entries than the pool holds: the oldest ones slide down to the low
  // part and become evictable.
  NewCache(10, 0, false, 0.5);
  for (int i = 0; i < 8; i++) ASSERT_OK(Insert(100 + i, i, 1, Cache::Priority::HIGH));
  EXPECT_EQ(5u, lru_->TEST_HighPriPoolUsage());
  for (int i = 0; i < 5; i++) ASSERT_OK(Insert(i, i, 1, Cache::Priority::LOW));
  EXPECT_EQ(10u, cache_->GetUsage());
  // The three oldest high entries sat below the pool and went first.
  for (int i = 0; i < 3; i++) EXPECT_EQ(-1, Lookup(100 + i)) << i;
  for (int i = 3; i < 8; i++) EXPECT_EQ(i, Lookup(100 + i)) << i;

  // A low entry that is looked up again joins the pool.
  NewCache(10, 0, false, 0.5);
  ASSERT_OK(Insert(1, 1));
  EXPECT_EQ(0u, lru_->TEST_HighPriPoolUsage());
  EXPECT_EQ(1, Lookup(1));
  EXPECT_EQ(1u, lru_->TEST_HighPriPoolUsage());
  for (int i = 10; i < 40; i++) ASSERT_OK(Insert(i, i));
  EXPECT_EQ(1, Lookup(1));

  // With a ratio of 0 there is no pool: HIGH is plain LRU.
  NewCache(3, 0, false, 0.0);
  ASSERT_OK(Insert(1, 1, 1, Cache::Priority::HIGH));
  for (int i = 10; i < 13; i++) ASSERT_OK(Insert(i, i));
  EXPECT_EQ(-1, Lookup(1));
  EXPECT_EQ(0u, lru_->TEST_HighPriPoolUsage());
}

TEST_F(LRUCacheTest, ShrinkKeepsTheNewest) {
  NewCache(10);
  for (int i = 0; i < 10; i++) ASSERT_OK(Insert(i, i));
  cache_->SetCapacity(5);
  EXPECT_EQ(5u, cache_->GetUsage());
  EXPECT_EQ((std::vector<int>{5, 6, 7, 8, 9}), LRUOrder());
}

TEST_F(LRUCacheTest, ShardingDefaults) {
  EXPECT_EQ(0, LRUCache::DefaultShardBits(100));
  EXPECT_EQ(0, LRUCache::DefaultShardBits(512 * 1024));
  EXPECT_EQ(1, LRUCache::DefaultShardBits(1024 * 1024));
  EXPECT_EQ(4, LRUCache::DefaultShardBits(8 << 20));
  EXPECT_EQ(6, LRUCache::DefaultShardBits(size_t{1} << 40));
  auto c = NewLRUCache(8 << 20);
  ASSERT_NE(nullptr, c);
  EXPECT_EQ(4, static_cast<LRUCache*>(c.get())->GetNumShardBits());
  EXPECT_FALSE(c->HasStrictCapacityLimit());
  EXPECT_EQ(nullptr, NewLRUCache(100, 20));
  EXPECT_EQ(nullptr, NewLRUCache(100, 0, false, 1.5));
  LRUCacheOptions opts(1 << 20, 3, true, 0.2);
  auto d = NewLRUCache(opts);
  ASSERT_NE(nullptr, d);
  EXPECT_EQ(3, static_cast<LRUCache*>(d.get())->GetNumShardBits());
  EXPECT_TRUE(d->HasStrictCapacityLimit());

  // Many keys spread over the shards; the total obeys the capacity.
  NewCache(1000, 3);
  for (int i = 0; i < 5000; i++) ASSERT_OK(Insert(i, i));
  EXPECT_LE(cache_->GetUsage(), 1000u + 8);
  EXPECT_GT(cache_->GetUsage(), 800u);
}

TEST_F(LRUCacheTest, ManyThreadsWithThePool) {
  NewCache(2000, 4, false, 0.3);
  RunConcurrentOps(cache_.get(), TestSeed(), 16 * 3);
}

// The shard's hash table against a std::map, through growth and many removals. Hashes are
// drawn from a few values so that keys share home slots and probe runs wrap around the end
// of the table; removals by key and by entry both shift later slots back, and a lookup
// must still find every key that is left.
TEST(LRUHandleTableTest, AgreesWithAMap) {
  const uint64_t seed = TestSeed();
  Random rnd(static_cast<uint32_t>(seed));
  lru_internal::HandleTable table;
  std::map<std::string, lru_internal::LRUHandle*> model;
  std::vector<std::unique_ptr<char[]>> memory;
  auto make = [&](const std::string& key, uint32_t hash) {
    memory.emplace_back(new char[sizeof(lru_internal::LRUHandle) + key.size()]);
    auto* h = new (memory.back().get()) lru_internal::LRUHandle();
    h->key_length = key.size();
    h->hash = hash;
    std::memcpy(h->key_data(), key.data(), key.size());
    return h;
  };
  // Hashes agree with keys (a key always has the same hash), over few distinct values.
  auto hash_of = [](const std::string& key) {
    uint32_t h = 0;
    for (char c : key) h = h * 31 + static_cast<unsigned char>(c);
    return (h % 7) * 0x9e3779b9u + (h % 3 == 0 ? 15u : 0u);
  };
  for (int op = 0; op < 20000; op++) {
    std::string key = "k";
    key += std::to_string(rnd.Uniform(op < 10000 ? 400 : 60));
    const uint32_t hash = hash_of(key);
    switch (rnd.Uniform(4)) {
      case 0:
      case 1: {
        lru_internal::LRUHandle* h = make(key, hash);
        lru_internal::LRUHandle* old = table.Insert(h);
        auto it = model.find(key);
        ASSERT_EQ(old, it == model.end() ? nullptr : it->second) << "seed " << seed;
        model[key] = h;
        break;
      }
      case 2: {
        lru_internal::LRUHandle* got = table.Remove(key, hash);
        auto it = model.find(key);
        ASSERT_EQ(got, it == model.end() ? nullptr : it->second) << "seed " << seed;
        if (it != model.end()) model.erase(it);
        break;
      }
      default: {
        auto it = model.find(key);
        if (it == model.end()) break;
        table.RemoveEntry(it->second);
        model.erase(it);
        break;
      }
    }
    ASSERT_EQ(table.size(), model.size());
    if (op % 97 == 0) {
      for (const auto& [k, h] : model) ASSERT_EQ(table.Lookup(k, hash_of(k)), h) << "seed " << seed;
    }
    ASSERT_EQ(table.Lookup(key, hash), model.count(key) != 0 ? model[key] : nullptr);
  }
}

}  // namespace
}  // namespace shale::cache_test
