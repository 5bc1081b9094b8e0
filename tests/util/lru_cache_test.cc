// LRUCache: eviction order, charge-based capacity, the strict limit (Incomplete), the
// high-priority pool, handles keeping entries alive past eviction and erasure, Erase,
// SetCapacity, usage accounting, sharding defaults, and concurrent use.
#include "util/lru_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "shale/cache.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/random.h"

namespace shale {
namespace {

std::string Key(int k) {
  std::string s;
  PutFixed32(&s, static_cast<uint32_t>(k));
  return s;
}

int DecodeKey(const Slice& k) { return static_cast<int>(DecodeFixed32(k.data())); }

// Records every deletion so tests can see what was freed and when.
std::vector<std::pair<int, int>>* deleted = nullptr;

void RecordingDeleter(const Slice& key, void* value) {
  deleted->emplace_back(DecodeKey(key), static_cast<int>(reinterpret_cast<intptr_t>(value)));
}

void* EncodeValue(int v) { return reinterpret_cast<void*>(static_cast<intptr_t>(v)); }
int DecodeValue(void* v) { return static_cast<int>(reinterpret_cast<intptr_t>(v)); }

class LRUCacheTest : public ::testing::Test {
 protected:
  LRUCacheTest() { deleted = &deleted_; }
  ~LRUCacheTest() override {
    cache_.reset();
    deleted = nullptr;
  }

  void NewCache(size_t capacity, int shard_bits = 0, bool strict = false, double ratio = 0.0) {
    cache_ = NewLRUCache(capacity, shard_bits, strict, ratio);
    ASSERT_NE(cache_, nullptr);
    lru_ = static_cast<LRUCache*>(cache_.get());
  }

  // -1 when missing.
  int Lookup(int key) {
    Cache::Handle* h = cache_->Lookup(Key(key));
    if (h == nullptr) return -1;
    const int v = DecodeValue(cache_->Value(h));
    cache_->Release(h);
    return v;
  }

  Status Insert(int key, int value, size_t charge = 1, Cache::Priority pri = Cache::Priority::LOW) {
    return cache_->Insert(Key(key), EncodeValue(value), charge, &RecordingDeleter, nullptr, pri);
  }

  Cache::Handle* InsertAndHold(int key, int value, size_t charge = 1,
                               Cache::Priority pri = Cache::Priority::LOW) {
    Cache::Handle* h = nullptr;
    Status s = cache_->Insert(Key(key), EncodeValue(value), charge, &RecordingDeleter, &h, pri);
    EXPECT_OK(s);
    return h;
  }

  std::vector<int> LRUOrder() {
    std::vector<int> out;
    for (const std::string& k : lru_->TEST_LRUKeys(0)) out.push_back(DecodeKey(k));
    return out;
  }

  std::vector<std::pair<int, int>> deleted_;
  std::shared_ptr<Cache> cache_;
  LRUCache* lru_ = nullptr;
};

TEST_F(LRUCacheTest, HitAndMiss) {
  NewCache(100);
  EXPECT_EQ(-1, Lookup(100));
  ASSERT_OK(Insert(100, 101));
  EXPECT_EQ(101, Lookup(100));
  EXPECT_EQ(-1, Lookup(200));
  ASSERT_OK(Insert(200, 201));
  EXPECT_EQ(101, Lookup(100));
  EXPECT_EQ(201, Lookup(200));
  // Replacing frees the old value at once when nobody holds it.
  ASSERT_OK(Insert(100, 102));
  EXPECT_EQ(102, Lookup(100));
  ASSERT_EQ(1u, deleted_.size());
  EXPECT_EQ(100, deleted_[0].first);
  EXPECT_EQ(101, deleted_[0].second);
  EXPECT_STREQ("LRUCache", cache_->Name());
}

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

TEST_F(LRUCacheTest, ChargeBasedCapacity) {
  NewCache(100);
  ASSERT_OK(Insert(1, 1, 40));
  ASSERT_OK(Insert(2, 2, 40));
  EXPECT_EQ(80u, cache_->GetUsage());
  // 30 more does not fit: the oldest (40) goes.
  ASSERT_OK(Insert(3, 3, 30));
  EXPECT_EQ(-1, Lookup(1));
  EXPECT_EQ(70u, cache_->GetUsage());
  // Bigger than the whole cache and not held: dropped at once, as if evicted.
  ASSERT_OK(Insert(4, 4, 1000));
  EXPECT_EQ(-1, Lookup(4));
  bool freed4 = false;
  for (const auto& d : deleted_) freed4 |= d.first == 4;
  EXPECT_TRUE(freed4);
  // The attempt evicted everything unpinned first.
  EXPECT_EQ(0u, cache_->GetUsage());
}

TEST_F(LRUCacheTest, HandlesKeepEntriesAlive) {
  NewCache(2);
  Cache::Handle* h1 = InsertAndHold(1, 10);
  ASSERT_NE(nullptr, h1);
  EXPECT_EQ(1u, cache_->GetPinnedUsage());
  ASSERT_OK(Insert(2, 20));
  ASSERT_OK(Insert(3, 30));  // evicts 2, not the pinned 1
  EXPECT_EQ(-1, Lookup(2));
  EXPECT_EQ(10, Lookup(1));
  ASSERT_OK(Insert(4, 40));  // evicts 3
  EXPECT_EQ(-1, Lookup(3));
  EXPECT_EQ(10, DecodeValue(cache_->Value(h1)));

  // Erasing a held entry detaches it; its memory lives (and counts) until released.
  cache_->Erase(Key(1));
  EXPECT_EQ(-1, Lookup(1));
  for (const auto& d : deleted_) EXPECT_NE(1, d.first);
  EXPECT_EQ(10, DecodeValue(cache_->Value(h1)));
  EXPECT_EQ(2u, cache_->GetUsage());
  EXPECT_EQ(1u, cache_->GetPinnedUsage());
  EXPECT_TRUE(cache_->Release(h1));
  EXPECT_EQ(1, deleted_.back().first);
  EXPECT_EQ(1u, cache_->GetUsage());
  EXPECT_EQ(0u, cache_->GetPinnedUsage());

  // A replaced entry that is held is freed on its last release, not before.
  Cache::Handle* h4 = cache_->Lookup(Key(4));
  ASSERT_NE(nullptr, h4);
  ASSERT_OK(Insert(4, 41));
  EXPECT_EQ(41, Lookup(4));
  EXPECT_EQ(40, DecodeValue(cache_->Value(h4)));
  const size_t before = deleted_.size();
  EXPECT_TRUE(cache_->Release(h4));
  ASSERT_EQ(before + 1, deleted_.size());
  EXPECT_EQ(40, deleted_.back().second);
}

TEST_F(LRUCacheTest, RefAndEraseIfLastRef) {
  NewCache(10);
  Cache::Handle* h = InsertAndHold(1, 10);
  ASSERT_TRUE(cache_->Ref(h));
  EXPECT_FALSE(cache_->Release(h, /*erase_if_last_ref=*/true));  // one ref left
  EXPECT_EQ(10, Lookup(1));
  EXPECT_TRUE(cache_->Release(h, /*erase_if_last_ref=*/true));
  EXPECT_EQ(-1, Lookup(1));
  EXPECT_EQ(0u, cache_->GetUsage());
  // Without erase, the last release puts it back in the LRU list.
  h = InsertAndHold(2, 20);
  EXPECT_FALSE(cache_->Release(h));
  EXPECT_EQ(20, Lookup(2));
  EXPECT_EQ(1u, lru_->TEST_LRUEntries());
}

TEST_F(LRUCacheTest, StrictCapacityLimit) {
  NewCache(5, 0, /*strict=*/true);
  EXPECT_TRUE(cache_->HasStrictCapacityLimit());
  std::vector<Cache::Handle*> handles;
  for (int i = 0; i < 5; i++) handles.push_back(InsertAndHold(i, i));
  EXPECT_EQ(5u, cache_->GetPinnedUsage());
  // Full of pinned entries: an insert asking for a handle fails and keeps nothing.
  Cache::Handle* h = reinterpret_cast<Cache::Handle*>(0x1);
  Status s = cache_->Insert(Key(10), EncodeValue(10), 1, &RecordingDeleter, &h);
  EXPECT_TRUE(s.IsIncomplete()) << s.ToString();
  EXPECT_EQ("Result incomplete: Insert failed due to LRU cache being full.", s.ToString());
  EXPECT_EQ(nullptr, h);
  EXPECT_TRUE(deleted_.empty());  // the caller still owns the value
  EXPECT_EQ(5u, cache_->GetUsage());
  // Without a handle it "succeeds" and the value is released at once.
  ASSERT_OK(Insert(11, 11));
  EXPECT_EQ(-1, Lookup(11));
  ASSERT_EQ(1u, deleted_.size());
  EXPECT_EQ(11, deleted_[0].first);
  // Releasing one makes room.
  cache_->Release(handles.back());
  handles.pop_back();
  Cache::Handle* h12 = InsertAndHold(12, 12);
  ASSERT_NE(nullptr, h12);
  handles.push_back(h12);
  for (Cache::Handle* x : handles) cache_->Release(x);
  EXPECT_EQ(0u, cache_->GetPinnedUsage());

  // Without the strict limit the same situation overcommits.
  NewCache(2, 0, /*strict=*/false);
  Cache::Handle* a = InsertAndHold(1, 1);
  Cache::Handle* b = InsertAndHold(2, 2);
  Cache::Handle* c = InsertAndHold(3, 3);
  ASSERT_NE(nullptr, c);
  EXPECT_EQ(3u, cache_->GetUsage());
  cache_->SetStrictCapacityLimit(true);
  Cache::Handle* d = nullptr;
  EXPECT_TRUE(cache_->Insert(Key(4), EncodeValue(4), 1, &RecordingDeleter, &d).IsIncomplete());
  // Over capacity, released entries are freed instead of listed.
  EXPECT_TRUE(cache_->Release(c));
  EXPECT_EQ(-1, Lookup(3));
  cache_->Release(a);
  cache_->Release(b);
  EXPECT_EQ(2u, cache_->GetUsage());
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

TEST_F(LRUCacheTest, EraseAndEraseUnRefEntries) {
  NewCache(100);
  ASSERT_OK(Insert(1, 10));
  ASSERT_OK(Insert(2, 20));
  cache_->Erase(Key(1));
  cache_->Erase(Key(99));  // absent: nothing happens
  EXPECT_EQ(-1, Lookup(1));
  EXPECT_EQ(20, Lookup(2));
  ASSERT_EQ(1u, deleted_.size());
  EXPECT_EQ(1, deleted_[0].first);

  Cache::Handle* h = InsertAndHold(3, 30);
  ASSERT_OK(Insert(4, 40));
  cache_->EraseUnRefEntries();
  EXPECT_EQ(-1, Lookup(2));
  EXPECT_EQ(-1, Lookup(4));
  EXPECT_EQ(30, Lookup(3));  // held entries stay
  EXPECT_EQ(1u, cache_->GetUsage());
  cache_->Release(h);
  EXPECT_EQ(30, Lookup(3));
}

TEST_F(LRUCacheTest, SetCapacityShrinks) {
  NewCache(10);
  std::vector<Cache::Handle*> held;
  for (int i = 0; i < 10; i++) {
    if (i < 3) {
      held.push_back(InsertAndHold(i, i));
    } else {
      ASSERT_OK(Insert(i, i));
    }
  }
  EXPECT_EQ(10u, cache_->GetUsage());
  cache_->SetCapacity(5);
  EXPECT_EQ(5u, cache_->GetCapacity());
  EXPECT_EQ(5u, cache_->GetUsage());
  EXPECT_EQ(3u, cache_->GetPinnedUsage());
  // The newest unpinned ones survive.
  EXPECT_EQ(-1, Lookup(3));
  EXPECT_EQ(9, Lookup(9));
  EXPECT_EQ(8, Lookup(8));
  // Shrinking below the pinned usage keeps the pinned entries.
  cache_->SetCapacity(1);
  EXPECT_EQ(3u, cache_->GetUsage());
  for (Cache::Handle* h : held) cache_->Release(h);
  // Releases over capacity free entries until the usage is back under it.
  EXPECT_LE(cache_->GetUsage(), 1u);
  cache_->SetCapacity(100);
  ASSERT_OK(Insert(50, 50));
  EXPECT_EQ(50, Lookup(50));
}

TEST_F(LRUCacheTest, UsageAndCharges) {
  NewCache(1000, 2);
  Cache::Handle* h = InsertAndHold(1, 1, 123);
  EXPECT_EQ(123u, cache_->GetCharge(h));
  EXPECT_EQ(123u, cache_->GetUsage(h));
  EXPECT_EQ(&RecordingDeleter, cache_->GetDeleter(h));
  ASSERT_OK(Insert(2, 2, 77));
  EXPECT_EQ(200u, cache_->GetUsage());
  EXPECT_EQ(123u, cache_->GetPinnedUsage());
  cache_->Release(h);
  EXPECT_EQ(0u, cache_->GetPinnedUsage());
  EXPECT_EQ(200u, cache_->GetUsage());
  EXPECT_EQ(1000u, cache_->GetCapacity());
  const uint64_t a = cache_->NewId();
  const uint64_t b = cache_->NewId();
  EXPECT_NE(a, b);
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

TEST_F(LRUCacheTest, ConcurrentInsertLookupRelease) {
  const uint64_t seed = TestSeed();
  NewCache(2000, 4, false, 0.3);
  std::atomic<int> alive_values{0};
  struct Counted {
    std::atomic<int>* alive;
    int key;
  };
  auto deleter = [](const Slice& key, void* value) {
    auto* c = static_cast<Counted*>(value);
    EXPECT_EQ(c->key, DecodeKey(key));
    c->alive->fetch_sub(1);
    delete c;
  };
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; t++) {
    threads.emplace_back([&, t] {
      Random rnd(static_cast<uint32_t>(seed + t));
      std::vector<Cache::Handle*> held;
      for (int i = 0; i < 20000; i++) {
        const int k = static_cast<int>(rnd.Uniform(4000));
        const int op = static_cast<int>(rnd.Uniform(10));
        if (op < 4) {
          auto* v = new Counted{&alive_values, k};
          alive_values.fetch_add(1);
          Cache::Handle* h = nullptr;
          Status s =
              cache_->Insert(Key(k), v, 1 + rnd.Uniform(3), deleter, rnd.OneIn(3) ? &h : nullptr,
                             rnd.OneIn(4) ? Cache::Priority::HIGH : Cache::Priority::LOW);
          if (!s.ok()) failed = true;
          if (h != nullptr) held.push_back(h);
        } else if (op < 8) {
          Cache::Handle* h = cache_->Lookup(Key(k));
          if (h != nullptr) {
            if (static_cast<Counted*>(cache_->Value(h))->key != k) failed = true;
            held.push_back(h);
          }
        } else if (op < 9) {
          cache_->Erase(Key(k));
        }
        if (held.size() > 8 || (op == 9 && !held.empty())) {
          const size_t idx = rnd.Uniform(static_cast<uint32_t>(held.size()));
          cache_->Release(held[idx]);
          held.erase(held.begin() + static_cast<std::ptrdiff_t>(idx));
        }
      }
      for (Cache::Handle* h : held) cache_->Release(h);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_FALSE(failed.load());
  EXPECT_EQ(0u, cache_->GetPinnedUsage());
  EXPECT_LE(cache_->GetUsage(), cache_->GetCapacity() + 16 * 3);
  cache_->EraseUnRefEntries();
  EXPECT_EQ(0u, cache_->GetUsage());
  EXPECT_EQ(0, alive_values.load());
}

TEST_F(LRUCacheTest, DestructionFreesEverything) {
  NewCache(100, 1);
  for (int i = 0; i < 20; i++) ASSERT_OK(Insert(i, i));
  cache_.reset();
  EXPECT_EQ(20u, deleted_.size());
}

}  // namespace
}  // namespace shale
