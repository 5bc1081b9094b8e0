// CacheFixture: what the cache suites share (cache_test, lru_cache_test, clock_cache_test):
// a cache made by a factory under test, int keys encoded as 4 bytes, int values carried in
// the value pointer, and a deleter that records every freed (key, value) pair in order.
//
// One test thread at a time uses the recording deleter (the concurrent tests bring their
// own).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "shale/cache.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/random.h"

namespace shale::cache_test {

inline std::string Key(int k) {
  std::string s;
  PutFixed32(&s, static_cast<uint32_t>(k));
  return s;
}

inline int DecodeKey(const Slice& k) { return static_cast<int>(DecodeFixed32(k.data())); }

inline void* EncodeValue(int v) { return reinterpret_cast<void*>(static_cast<intptr_t>(v)); }
inline int DecodeValue(void* v) { return static_cast<int>(reinterpret_cast<intptr_t>(v)); }

// Where RecordingDeleter records; set by the fixture for the test's life.
inline std::vector<std::pair<int, int>>* deleted = nullptr;

inline void RecordingDeleter(const Slice& key, void* value) {
  deleted->emplace_back(DecodeKey(key), DecodeValue(value));
}

// capacity, shard bits, strict limit -> a cache (nullptr fails the test).
using CacheFactory = std::function<std::shared_ptr<Cache>(size_t, int, bool)>;

class CacheFixture {
 protected:
  CacheFixture() { deleted = &deleted_; }
  ~CacheFixture() {
    cache_.reset();
    deleted = nullptr;
  }

  void NewCacheFrom(const CacheFactory& factory, size_t capacity, int shard_bits, bool strict) {
    cache_.reset();
    cache_ = factory(capacity, shard_bits, strict);
    ASSERT_NE(cache_, nullptr);
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

  bool WasDeleted(int key) const {
    return std::any_of(deleted_.begin(), deleted_.end(),
                       [key](const auto& d) { return d.first == key; });
  }

  std::vector<std::pair<int, int>> deleted_;
  std::shared_ptr<Cache> cache_;
};

// Eight threads insert (with and without handles, every priority), look up, take extra
// references, release (sometimes erasing) and erase 4,000 keys on `cache`, checking each
// looked-up value's key; at the end nothing is pinned, and after EraseUnRefEntries nothing
// is used and every value was deleted exactly once. The usage may end above the capacity
// by `usage_slack`.
inline void RunConcurrentOps(Cache* cache, uint64_t seed, size_t usage_slack) {
  struct Counted {
    std::atomic<int>* alive;
    int key;
  };
  std::atomic<int> alive_values{0};
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
        const int op = static_cast<int>(rnd.Uniform(12));
        if (op < 4) {
          auto* v = new Counted{&alive_values, k};
          alive_values.fetch_add(1);
          Cache::Handle* h = nullptr;
          const auto pri = static_cast<Cache::Priority>(rnd.Uniform(3));
          Status s = cache->Insert(Key(k), v, 1 + rnd.Uniform(3), deleter,
                                   rnd.OneIn(3) ? &h : nullptr, pri);
          if (!s.ok()) failed = true;
          if (h != nullptr) held.push_back(h);
        } else if (op < 8) {
          Cache::Handle* h = cache->Lookup(Key(k));
          if (h != nullptr) {
            if (static_cast<Counted*>(cache->Value(h))->key != k) failed = true;
            held.push_back(h);
            if (op == 7 && cache->Ref(h)) held.push_back(h);
          }
        } else if (op < 9) {
          cache->Erase(Key(k));
        }
        if (held.size() > 8 || (op >= 9 && !held.empty())) {
          const size_t idx = rnd.Uniform(static_cast<uint32_t>(held.size()));
          cache->Release(held[idx], /*erase_if_last_ref=*/op == 11);
          held.erase(held.begin() + static_cast<std::ptrdiff_t>(idx));
        }
      }
      for (Cache::Handle* h : held) cache->Release(h);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_FALSE(failed.load());
  EXPECT_EQ(0u, cache->GetPinnedUsage());
  EXPECT_LE(cache->GetUsage(), cache->GetCapacity() + usage_slack);
  cache->EraseUnRefEntries();
  EXPECT_EQ(0u, cache->GetUsage());
  EXPECT_EQ(0, alive_values.load());
}

}  // namespace shale::cache_test
