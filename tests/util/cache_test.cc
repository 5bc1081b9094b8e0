// The Cache contract (shale/cache.h), checked on both implementations: hits, misses and
// replacement, charge-based capacity, handles keeping entries alive past eviction, erasure
// and replacement, Ref and erase_if_last_ref, the strict limit (Incomplete, the caller
// keeping its value), Erase and EraseUnRefEntries, SetCapacity, usage and pinned usage,
// freeing at destruction, and eight threads at once. What only one of them promises
// (eviction order, the high-priority pool, the clock table) is in lru_cache_test and
// clock_cache_test.
#include "shale/cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/util/cache_fixture.h"

namespace shale::cache_test {
namespace {

struct CacheKind {
  const char* name;
  CacheFactory factory;
};

const CacheKind kKinds[] = {
    {"LRUCache", [](size_t capacity, int bits,
                    bool strict) { return NewLRUCache(capacity, bits, strict, 0.0); }},
    // Entries of charge 1 in most tests, so the table is sized for those.
    {"HyperClockCache", [](size_t capacity, int bits,
                           bool strict) { return NewHyperClockCache(capacity, 1, bits, strict); }},
};

class CacheTest : public CacheFixture, public ::testing::TestWithParam<CacheKind> {
 protected:
  void NewCache(size_t capacity, int shard_bits = 0, bool strict = false) {
    NewCacheFrom(GetParam().factory, capacity, shard_bits, strict);
  }
};

TEST_P(CacheTest, HitAndMiss) {
  NewCache(100);
  EXPECT_STREQ(GetParam().name, cache_->Name());
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
  EXPECT_EQ(2u, cache_->GetUsage());
}

TEST_P(CacheTest, ChargeBasedCapacity) {
  NewCache(100);
  ASSERT_OK(Insert(1, 1, 40));
  ASSERT_OK(Insert(2, 2, 40));
  EXPECT_EQ(80u, cache_->GetUsage());
  // 30 more does not fit: one of the two goes.
  ASSERT_OK(Insert(3, 3, 30));
  EXPECT_EQ(70u, cache_->GetUsage());
  EXPECT_EQ(1, (Lookup(1) == -1) + (Lookup(2) == -1));
  // Bigger than the whole cache and not held: dropped at once, as if evicted.
  ASSERT_OK(Insert(4, 4, 1000));
  EXPECT_EQ(-1, Lookup(4));
  EXPECT_TRUE(WasDeleted(4));
  // The attempt evicted everything unpinned first.
  EXPECT_EQ(0u, cache_->GetUsage());
}

TEST_P(CacheTest, HandlesKeepEntriesAlive) {
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
  EXPECT_FALSE(WasDeleted(1));
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

TEST_P(CacheTest, RefAndEraseIfLastRef) {
  NewCache(10);
  Cache::Handle* h = InsertAndHold(1, 10);
  ASSERT_TRUE(cache_->Ref(h));
  EXPECT_FALSE(cache_->Release(h, /*erase_if_last_ref=*/true));  // one ref left
  EXPECT_EQ(10, Lookup(1));
  EXPECT_TRUE(cache_->Release(h, /*erase_if_last_ref=*/true));
  EXPECT_EQ(-1, Lookup(1));
  EXPECT_EQ(0u, cache_->GetUsage());
  // Without erase, the last release leaves it in the cache.
  h = InsertAndHold(2, 20);
  EXPECT_FALSE(cache_->Release(h));
  EXPECT_EQ(20, Lookup(2));
}

TEST_P(CacheTest, StrictCapacityLimit) {
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
  EXPECT_TRUE(cache_->HasStrictCapacityLimit());
  Cache::Handle* d = nullptr;
  EXPECT_TRUE(cache_->Insert(Key(4), EncodeValue(4), 1, &RecordingDeleter, &d).IsIncomplete());
  // Over capacity, released entries are freed instead of kept.
  EXPECT_TRUE(cache_->Release(c));
  EXPECT_EQ(-1, Lookup(3));
  cache_->Release(a);
  cache_->Release(b);
  EXPECT_EQ(2u, cache_->GetUsage());
}

TEST_P(CacheTest, EraseAndEraseUnRefEntries) {
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

TEST_P(CacheTest, SetCapacityShrinks) {
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
  for (int i = 0; i < 3; i++) EXPECT_EQ(i, DecodeValue(cache_->Value(held[i])));
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

TEST_P(CacheTest, UsageAndCharges) {
  NewCache(1000, 2);
  Cache::Handle* h = InsertAndHold(1, 1, 123);
  EXPECT_EQ(123u, cache_->GetCharge(h));
  EXPECT_EQ(123u, cache_->GetUsage(h));
  EXPECT_EQ(&RecordingDeleter, cache_->GetDeleter(h));
  ASSERT_OK(Insert(2, 2, 77));
  EXPECT_EQ(200u, cache_->GetUsage());
  EXPECT_EQ(123u, cache_->GetPinnedUsage());
  // A second reference pins nothing more; the last release unpins.
  ASSERT_TRUE(cache_->Ref(h));
  EXPECT_FALSE(cache_->Release(h));
  EXPECT_EQ(123u, cache_->GetPinnedUsage());
  cache_->Release(h);
  EXPECT_EQ(0u, cache_->GetPinnedUsage());
  EXPECT_EQ(200u, cache_->GetUsage());
  EXPECT_EQ(1000u, cache_->GetCapacity());
  EXPECT_NE(cache_->NewId(), cache_->NewId());
}

TEST_P(CacheTest, ManyThreads) {
  NewCache(2000, 2);
  // A release frees its entry only if the usage is over the capacity when it looks, so
  // racing inserts with handles can leave up to a few held charges more.
  RunConcurrentOps(cache_.get(), TestSeed(), 8 * 8 * 3);
}

TEST_P(CacheTest, DestructionFreesEverything) {
  NewCache(100, 1);
  for (int i = 0; i < 20; i++) ASSERT_OK(Insert(i, i));
  cache_.reset();
  EXPECT_EQ(20u, deleted_.size());
}

INSTANTIATE_TEST_SUITE_P(Kinds, CacheTest, ::testing::ValuesIn(kKinds),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace shale::cache_test
