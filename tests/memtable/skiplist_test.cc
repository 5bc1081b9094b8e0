// SkipList against a std::set model, serialized and concurrent inserts, and readers running
// while writers insert.
#include "memtable/skiplist.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "memtable/concurrent_arena.h"
#include "tests/testutil/test_util.h"
#include "util/arena.h"
#include "util/random.h"

namespace shale {
namespace {

using Key = uint64_t;

Key Decode(const char* p) {
  Key k;
  memcpy(&k, p, sizeof(k));
  return k;
}

// Without a Prefix: serialized inserts search as readers do.
struct PlainCmp {
  int operator()(const char* a, const char* b) const {
    Key x = Decode(a), y = Decode(b);
    return x < y ? -1 : (x > y ? 1 : 0);
  }
};

// With a coarse Prefix that eight neighbouring keys share, so that serialized inserts
// meet both kinds of step: prefixes that decide, and equal ones that need a comparison.
struct KeyCmp : PlainCmp {
  uint64_t Prefix(const char* k) const { return Decode(k) >> 3; }
};

// Keys used as search targets live outside the list.
struct Target {
  explicit Target(Key k) { memcpy(buf, &k, sizeof(k)); }
  char buf[sizeof(Key)];
};

template <typename List>
bool InsertKey(List* list, Key k, bool concurrent) {
  char* buf = list->AllocateKey(sizeof(Key));
  memcpy(buf, &k, sizeof(k));
  return concurrent ? list->InsertConcurrently(buf) : list->Insert(buf);
}

// keys[0..n) through the batch Insert or InsertConcurrently.
template <typename List>
void InsertRun(List* list, const Key* keys, size_t n, bool concurrent, bool* inserted) {
  std::vector<const char*> bufs;
  for (size_t j = 0; j < n; j++) {
    char* buf = list->AllocateKey(sizeof(Key));
    memcpy(buf, &keys[j], sizeof(Key));
    bufs.push_back(buf);
  }
  if (concurrent) {
    list->InsertConcurrently(bufs.data(), n, inserted);
  } else {
    list->Insert(bufs.data(), n, inserted);
  }
}

template <typename List>
void CheckAgainstModel(const List& list, const std::set<Key>& model, Key range, Random* rnd) {
  typename List::Iterator it(&list);
  // Full scans both ways.
  std::vector<Key> forward;
  for (it.SeekToFirst(); it.Valid(); it.Next()) forward.push_back(Decode(it.key()));
  ASSERT_EQ(forward, std::vector<Key>(model.begin(), model.end()));
  std::vector<Key> backward;
  for (it.SeekToLast(); it.Valid(); it.Prev()) backward.push_back(Decode(it.key()));
  ASSERT_EQ(backward, std::vector<Key>(model.rbegin(), model.rend()));

  for (Key k = 0; k < range; k++) {
    ASSERT_EQ(list.Contains(Target(k).buf), model.count(k) == 1) << k;
  }
  for (int i = 0; i < 1000; i++) {
    Key k = rnd->Uniform(static_cast<uint32_t>(range + 2));
    auto lb = model.lower_bound(k);
    it.Seek(Target(k).buf);
    if (lb == model.end()) {
      ASSERT_FALSE(it.Valid()) << "Seek " << k;
    } else {
      ASSERT_TRUE(it.Valid()) << "Seek " << k;
      ASSERT_EQ(Decode(it.key()), *lb);
    }
    auto ub = model.upper_bound(k);
    it.SeekForPrev(Target(k).buf);
    if (ub == model.begin()) {
      ASSERT_FALSE(it.Valid()) << "SeekForPrev " << k;
    } else {
      ASSERT_TRUE(it.Valid()) << "SeekForPrev " << k;
      ASSERT_EQ(Decode(it.key()), *std::prev(ub));
    }
    // A few random steps either way from the SeekForPrev position.
    auto pos = ub == model.begin() ? model.end() : std::prev(ub);
    for (int step = 0; step < 5 && it.Valid(); step++) {
      if (rnd->OneIn(2)) {
        it.Next();
        ++pos;
      } else {
        it.Prev();
        pos = pos == model.begin() ? model.end() : std::prev(pos);
      }
      ASSERT_EQ(it.Valid(), pos != model.end());
      if (it.Valid()) {
        ASSERT_EQ(Decode(it.key()), *pos);
      }
    }
  }
}

TEST(SkipListTest, Empty) {
  Arena arena;
  SkipList<KeyCmp, Arena> list(KeyCmp(), &arena);
  EXPECT_FALSE(list.Contains(Target(10).buf));
  SkipList<KeyCmp, Arena>::Iterator it(&list);
  EXPECT_FALSE(it.Valid());
  it.SeekToFirst();
  EXPECT_FALSE(it.Valid());
  it.SeekToLast();
  EXPECT_FALSE(it.Valid());
  it.Seek(Target(100).buf);
  EXPECT_FALSE(it.Valid());
  it.SeekForPrev(Target(100).buf);
  EXPECT_FALSE(it.Valid());
}

TEST(SkipListTest, SingleKeyBoundaries) {
  Arena arena;
  SkipList<KeyCmp, Arena> list(KeyCmp(), &arena);
  ASSERT_TRUE(InsertKey(&list, 50, false));
  SkipList<KeyCmp, Arena>::Iterator it(&list);
  it.Seek(Target(50).buf);
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(Decode(it.key()), 50u);
  it.Prev();
  EXPECT_FALSE(it.Valid());
  it.Seek(Target(51).buf);
  EXPECT_FALSE(it.Valid());
  it.SeekForPrev(Target(49).buf);
  EXPECT_FALSE(it.Valid());
  it.SeekForPrev(Target(1000).buf);
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(Decode(it.key()), 50u);
  it.Next();
  EXPECT_FALSE(it.Valid());
}

template <typename Alloc, typename Cmp = KeyCmp>
void RunModelTest(bool concurrent_api) {
  Random rnd(TestSeed());
  const Key kRange = 5000;
  Alloc arena;
  SkipList<Cmp, Alloc> list(Cmp(), &arena);
  std::set<Key> model;
  for (int i = 0; i < 3000; i++) {
    Key k = rnd.Uniform(kRange);
    bool fresh = model.insert(k).second;
    ASSERT_EQ(InsertKey(&list, k, concurrent_api), fresh) << "key " << k;
    if (i % 1000 == 999) CheckAgainstModel(list, model, kRange, &rnd);
  }
  CheckAgainstModel(list, model, kRange, &rnd);
}

TEST(SkipListTest, ModelSerializedInsertArena) { RunModelTest<Arena>(false); }
TEST(SkipListTest, ModelSerializedInsertConcurrentArena) { RunModelTest<ConcurrentArena>(false); }
TEST(SkipListTest, ModelInsertConcurrentlySingleThread) { RunModelTest<ConcurrentArena>(true); }
TEST(SkipListTest, ModelSerializedInsertWithoutPrefixes) {
  RunModelTest<ConcurrentArena, PlainCmp>(false);
}

// The batch InsertConcurrently (or the serialized batch Insert) against a model: batches
// of 1 to 3 groups, their keys clustered (so that a key's splice goes stale by an earlier
// one of its own group), spread, or ascending (Insert's hint path), repeating each other
// within a batch and keys already present; one-key Inserts between batches, which must
// not trust a hint the batches left stale. Each key's inserted flag must say whether the
// model took it, the first of equal keys winning.
template <typename Cmp>
void RunBatchModelTest(bool concurrent) {
  Random rnd(TestSeed());
  const Key kRange = 20000;
  ConcurrentArena arena;
  SkipList<Cmp, ConcurrentArena> list(Cmp(), &arena);
  constexpr size_t kGroup = SkipList<Cmp, ConcurrentArena>::kGroup;
  std::set<Key> model;
  for (int batch = 0; batch < 600; batch++) {
    const size_t n = 1 + rnd.Uniform(3 * kGroup);
    const Key base = rnd.Uniform(kRange);
    const int kind = static_cast<int>(rnd.Uniform(3));
    std::vector<Key> keys;
    for (size_t i = 0; i < n; i++) {
      Key k;
      if (!keys.empty() && rnd.OneIn(8)) {
        k = keys[rnd.Uniform(static_cast<uint32_t>(keys.size()))];
      } else if (kind == 0) {
        k = base + rnd.Uniform(3 * kGroup);
      } else if (kind == 1) {
        k = base + 2 * i;
      } else {
        k = rnd.Uniform(kRange);
      }
      keys.push_back(k);
    }
    std::unique_ptr<bool[]> inserted(new bool[n]);
    InsertRun(&list, keys.data(), n, concurrent, inserted.get());
    for (size_t i = 0; i < n; i++) {
      ASSERT_EQ(inserted[i], model.insert(keys[i]).second) << "batch " << batch << " key " << i;
    }
    if (!concurrent && rnd.OneIn(2)) {
      // Just after the batch's last key, where a stale hint would put it.
      const Key k = keys.back() + 1;
      ASSERT_EQ(InsertKey(&list, k, false), model.insert(k).second) << "batch " << batch;
    }
    if (batch % 200 == 199) CheckAgainstModel(list, model, kRange + 3 * kGroup, &rnd);
  }
  CheckAgainstModel(list, model, kRange + 3 * kGroup, &rnd);
}

TEST(SkipListTest, BatchInsertMatchesModel) { RunBatchModelTest<KeyCmp>(true); }
TEST(SkipListTest, BatchInsertWithoutPrefixesMatchesModel) { RunBatchModelTest<PlainCmp>(true); }
TEST(SkipListTest, SerializedBatchInsertMatchesModel) { RunBatchModelTest<KeyCmp>(false); }
TEST(SkipListTest, SerializedBatchInsertWithoutPrefixesMatchesModel) {
  RunBatchModelTest<PlainCmp>(false);
}

// Long forward scans go in batches of segments walked side by side (cut and resumed at a
// cap): with every cap, a scan from SeekToFirst returns the model's keys in order,
// KeyAhead agrees with what Next returns later, and a Prev, Seek or SeekToFirst in the
// middle of a batch continues exactly as a plain cursor would.
TEST(SkipListTest, BatchedForwardScansMatchModel) {
  const uint64_t seed = TestSeed();
  Random rnd(static_cast<uint32_t>(seed));
  ConcurrentArena arena;
  SkipList<KeyCmp, ConcurrentArena> list(KeyCmp(), &arena);
  std::set<Key> model;
  for (int i = 0; i < 5000; i++) {
    const Key k = rnd.Uniform(100000);
    if (model.insert(k).second) ASSERT_TRUE(InsertKey(&list, k, false));
  }
  const std::vector<Key> keys(model.begin(), model.end());
  for (size_t cap : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{32}}) {
    SCOPED_TRACE("cap " + std::to_string(cap));
    SkipList<KeyCmp, ConcurrentArena>::Iterator it(&list);
    it.TEST_SetSegmentCap(cap);
    std::vector<Key> got;
    std::vector<std::pair<size_t, Key>> promised;  // (index, key) KeyAhead announced
    for (it.SeekToFirst(); it.Valid(); it.Next()) {
      got.push_back(Decode(it.key()));
      const size_t ahead = 1 + rnd.Uniform(12);
      if (const char* k = it.KeyAhead(ahead))
        promised.emplace_back(got.size() - 1 + ahead, Decode(k));
    }
    ASSERT_EQ(keys, got);
    ASSERT_FALSE(promised.empty()) << "the scan never went in batches";
    for (const auto& [index, key] : promised) {
      ASSERT_LT(index, keys.size());
      ASSERT_EQ(keys[index], key) << "KeyAhead at " << index;
    }
    // Leave a batch at random points in every way a cursor can.
    for (int round = 0; round < 200; round++) {
      const size_t steps = rnd.Uniform(static_cast<uint32_t>(keys.size()));
      it.SeekToFirst();
      for (size_t i = 0; i < steps; i++) it.Next();
      ASSERT_TRUE(it.Valid());
      ASSERT_EQ(keys[steps], Decode(it.key()));
      switch (rnd.Uniform(3)) {
        case 0:
          it.Prev();
          ASSERT_EQ(steps > 0, it.Valid());
          if (steps > 0) ASSERT_EQ(keys[steps - 1], Decode(it.key()));
          break;
        case 1: {
          const Key target = rnd.Uniform(100002);
          it.Seek(Target(target).buf);
          auto lb = model.lower_bound(target);
          ASSERT_EQ(lb != model.end(), it.Valid());
          if (it.Valid()) ASSERT_EQ(*lb, Decode(it.key()));
          break;
        }
        default: it.SeekToFirst(); ASSERT_EQ(keys[0], Decode(it.key()));
      }
      // And walking on from there stays right.
      if (it.Valid()) {
        const Key at = Decode(it.key());
        size_t pos =
            static_cast<size_t>(std::lower_bound(keys.begin(), keys.end(), at) - keys.begin());
        for (int i = 0; i < 40 && it.Valid(); i++, pos++) {
          ASSERT_EQ(keys[pos], Decode(it.key()));
          it.Next();
        }
      }
    }
  }
}

TEST(SkipListTest, SequentialAndReverseOrderInserts) {
  for (bool concurrent : {false, true}) {
    ConcurrentArena arena;
    SkipList<KeyCmp, ConcurrentArena> list(KeyCmp(), &arena);
    std::set<Key> model;
    for (Key k = 0; k < 2000; k++) {
      Key key = k % 2 == 0 ? k : 100000 - k;  // interleaves ascending and descending runs
      ASSERT_TRUE(InsertKey(&list, key, concurrent));
      model.insert(key);
    }
    Random rnd(TestSeed() + 1);
    CheckAgainstModel(list, model, 100001, &rnd);
  }
}

// Readers scan and seek while one writer inserts a random permutation. Every key
// published before a scan starts must be found by it, and scans must be strictly sorted.
// `batch`: the writer inserts runs of 1 to 20 keys with the batch Insert or
// InsertConcurrently (a run is published once the call returns).
void RunReadersDuringInserts(bool concurrent_api, bool batch = false) {
  const uint64_t seed = TestSeed();
  const Key kNum = 20000;
  ConcurrentArena arena;
  SkipList<KeyCmp, ConcurrentArena> list(KeyCmp(), &arena);
  std::vector<Key> order(kNum);
  for (Key k = 0; k < kNum; k++) order[k] = k * 3;  // gaps so seeks can miss
  Random shuffle(seed);
  for (size_t i = order.size() - 1; i > 0; i--) {
    std::swap(order[i], order[shuffle.Uniform(static_cast<uint32_t>(i + 1))]);
  }
  std::atomic<size_t> published{0};
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::atomic<uint64_t> checks{0};
  std::atomic<int> started{0};

  auto reader = [&](uint64_t reader_seed) {
    Random rnd(reader_seed);
    SkipList<KeyCmp, ConcurrentArena>::Iterator it(&list);
    started++;
    // At least one pass, even when the writer is done before this thread gets a core.
    bool last = false;
    while (!last) {
      last = done.load(std::memory_order_acquire);
      const size_t n = published.load(std::memory_order_acquire);
      std::vector<Key> must(order.begin(), order.begin() + n);
      std::sort(must.begin(), must.end());
      size_t next_needed = 0;
      bool first = true;
      Key prev = 0;
      for (it.SeekToFirst(); it.Valid(); it.Next()) {
        Key k = Decode(it.key());
        if ((!first && k <= prev) || k % 3 != 0 || k >= kNum * 3) failures++;
        while (next_needed < must.size() && must[next_needed] < k) {
          failures++;  // a published key was skipped
          next_needed++;
        }
        if (next_needed < must.size() && must[next_needed] == k) next_needed++;
        prev = k;
        first = false;
      }
      if (next_needed != must.size()) failures++;
      for (int i = 0; i < 50 && n > 0; i++) {
        Key k = order[rnd.Uniform(static_cast<uint32_t>(n))];
        it.Seek(Target(k).buf);
        if (!it.Valid() || Decode(it.key()) != k) failures++;
        it.SeekForPrev(Target(k + 1).buf);
        if (!it.Valid() || Decode(it.key()) != k) failures++;
        if (!list.Contains(Target(k).buf)) failures++;
        // A seek to any key lands at or after it, and never past a published key.
        const Key t = rnd.Uniform(static_cast<uint32_t>(kNum * 3 + 3));
        const auto lb = std::lower_bound(must.begin(), must.end(), t);
        it.Seek(Target(t).buf);
        if (it.Valid() ? (Decode(it.key()) < t || (lb != must.end() && Decode(it.key()) > *lb))
                       : lb != must.end()) {
          failures++;
        }
      }
      checks++;
    }
  };

  std::vector<std::thread> readers;
  for (int r = 0; r < 2; r++) readers.emplace_back(reader, seed + 100 + r);
  // The readers run during the inserts, not only after them.
  while (started.load() < 2) std::this_thread::yield();
  Random runs(seed + 7);
  for (size_t i = 0; i < order.size();) {
    if (!batch) {
      ASSERT_TRUE(InsertKey(&list, order[i], concurrent_api));
      published.store(++i, std::memory_order_release);
      if (i % 2000 == 0) std::this_thread::yield();
      continue;
    }
    const size_t n = std::min<size_t>(1 + runs.Uniform(20), order.size() - i);
    bool inserted[20];
    InsertRun(&list, &order[i], n, concurrent_api, inserted);
    for (size_t j = 0; j < n; j++) ASSERT_TRUE(inserted[j]);
    i += n;
    published.store(i, std::memory_order_release);
    if (runs.OneIn(200)) std::this_thread::yield();
  }
  done.store(true, std::memory_order_release);
  for (auto& t : readers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(checks.load(), 0u);
}

TEST(SkipListTest, ReadersDuringSerializedInserts) { RunReadersDuringInserts(false); }
TEST(SkipListTest, ReadersDuringConcurrentApiInserts) { RunReadersDuringInserts(true); }
TEST(SkipListTest, ReadersDuringSerializedBatchInserts) { RunReadersDuringInserts(false, true); }
TEST(SkipListTest, ReadersDuringConcurrentBatchInserts) { RunReadersDuringInserts(true, true); }

// Several threads insert at once: some keys are theirs alone, some are contended by all
// threads and must be accepted exactly once. `batched`: each thread inserts runs of 1 to
// 20 keys with the batch InsertConcurrently.
void RunConcurrentInserters(bool batched) {
  const uint64_t seed = TestSeed();
  const int kThreads = 4;
  const Key kPerThread = 5000;
  const Key kShared = 2000;
  ConcurrentArena arena;
  SkipList<KeyCmp, ConcurrentArena> list(KeyCmp(), &arena);
  std::atomic<uint64_t> shared_wins{0};
  std::atomic<int> own_failures{0};
  std::atomic<bool> go{false};
  std::atomic<bool> done{false};
  std::atomic<int> order_failures{0};

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      Random rnd(seed + t);
      std::vector<Key> keys;
      for (Key i = 0; i < kPerThread; i++) keys.push_back(1000000 + i * kThreads + t);
      for (Key i = 0; i < kShared; i++) keys.push_back(i);
      for (size_t i = keys.size() - 1; i > 0; i--) {
        std::swap(keys[i], keys[rnd.Uniform(static_cast<uint32_t>(i + 1))]);
      }
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      auto count = [&](Key k, bool ok) {
        if (k < kShared) {
          if (ok) shared_wins++;
        } else if (!ok) {
          own_failures++;
        }
      };
      for (size_t i = 0; i < keys.size();) {
        if (!batched) {
          count(keys[i], InsertKey(&list, keys[i], true));
          i++;
          continue;
        }
        const size_t n = std::min<size_t>(1 + rnd.Uniform(20), keys.size() - i);
        bool inserted[20];
        InsertRun(&list, &keys[i], n, true, inserted);
        for (size_t j = 0; j < n; j++) count(keys[i + j], inserted[j]);
        i += n;
      }
    });
  }
  std::thread reader([&] {
    SkipList<KeyCmp, ConcurrentArena>::Iterator it(&list);
    while (!done.load(std::memory_order_acquire)) {
      bool first = true;
      Key prev = 0;
      for (it.SeekToFirst(); it.Valid(); it.Next()) {
        Key k = Decode(it.key());
        if (!first && k <= prev) order_failures++;
        prev = k;
        first = false;
      }
    }
  });
  go.store(true, std::memory_order_release);
  for (auto& t : threads) t.join();
  done.store(true, std::memory_order_release);
  reader.join();

  EXPECT_EQ(own_failures.load(), 0);
  EXPECT_EQ(order_failures.load(), 0);
  EXPECT_EQ(shared_wins.load(), kShared);
  std::set<Key> model;
  for (Key i = 0; i < kShared; i++) model.insert(i);
  for (Key i = 0; i < kPerThread * kThreads; i++) model.insert(1000000 + i);
  SkipList<KeyCmp, ConcurrentArena>::Iterator it(&list);
  std::vector<Key> got;
  for (it.SeekToFirst(); it.Valid(); it.Next()) got.push_back(Decode(it.key()));
  ASSERT_EQ(got, std::vector<Key>(model.begin(), model.end()));
  std::vector<Key> back;
  for (it.SeekToLast(); it.Valid(); it.Prev()) back.push_back(Decode(it.key()));
  ASSERT_EQ(back, std::vector<Key>(model.rbegin(), model.rend()));
  for (Key k : model) ASSERT_TRUE(list.Contains(Target(k).buf)) << k;
}

TEST(SkipListTest, ConcurrentInserters) { RunConcurrentInserters(false); }
TEST(SkipListTest, ConcurrentBatchInserters) { RunConcurrentInserters(true); }

// Counts its calls, to see how much searching an insert does.
struct CountingCmp {
  size_t* calls;
  int operator()(const char* a, const char* b) const {
    ++*calls;
    return PlainCmp()(a, b);
  }
};
// The same with an exact prefix (the key itself).
struct CountingPrefixCmp : CountingCmp {
  uint64_t Prefix(const char* k) const { return Decode(k); }
};

// Searches in a list whose comparator gives prefixes compare keys only on level 0 (a few
// a search); above it the prefixes kept beside the pointers decide. Without them a search
// compares about two keys a level. Both for serialized inserts and for lookups.
TEST(SkipListTest, PrefixesSpareComparisons) {
  const uint64_t seed = TestSeed();
  const int kNum = 50000;
  const Key kRange = 200000;
  size_t plain_calls = 0;
  size_t prefix_calls = 0;
  Arena plain_arena;
  Arena prefix_arena;
  SkipList<CountingCmp, Arena> plain(CountingCmp{&plain_calls}, &plain_arena);
  SkipList<CountingPrefixCmp, Arena> prefixed(CountingPrefixCmp{{&prefix_calls}}, &prefix_arena);
  Random rnd(static_cast<uint32_t>(seed));
  std::set<Key> model;
  for (int i = 0; i < kNum; i++) {
    const Key k = rnd.Uniform(kRange);
    const bool fresh = model.insert(k).second;
    ASSERT_EQ(InsertKey(&plain, k, false), fresh);
    ASSERT_EQ(InsertKey(&prefixed, k, false), fresh);
  }
  EXPECT_GT(plain_calls, size_t{20} * kNum) << "inserts without prefixes";
  EXPECT_LT(prefix_calls, size_t{8} * kNum) << "inserts with prefixes";
  plain_calls = 0;
  prefix_calls = 0;
  for (int i = 0; i < kNum; i++) {
    const Key k = rnd.Uniform(kRange);
    ASSERT_EQ(plain.Contains(Target(k).buf), model.count(k) == 1) << k;
    ASSERT_EQ(prefixed.Contains(Target(k).buf), model.count(k) == 1) << k;
  }
  EXPECT_GT(plain_calls, size_t{20} * kNum) << "lookups without prefixes";
  EXPECT_LT(prefix_calls, size_t{8} * kNum) << "lookups with prefixes";
  CheckAgainstModel(prefixed, model, kRange, &rnd);
}

// Serialized inserts in ascending order start from the previous insert's splice: a
// comparison or two each, where a search from the head takes about 2 log2(n).
TEST(SkipListTest, AscendingInsertsCompareLittle) {
  size_t calls = 0;
  Arena arena;
  SkipList<CountingCmp, Arena> list(CountingCmp{&calls}, &arena);
  const Key kNum = 100000;
  for (Key k = 0; k < kNum; k++) ASSERT_TRUE(InsertKey(&list, k * 2, false));
  EXPECT_LE(calls, 2 * kNum) << "comparisons for " << kNum << " ascending inserts";
  // A duplicate of the last key and one just behind it are still found by a search.
  EXPECT_FALSE(InsertKey(&list, (kNum - 1) * 2, false));
  ASSERT_TRUE(InsertKey(&list, (kNum - 1) * 2 - 1, false));
  EXPECT_FALSE(InsertKey(&list, 1000, false));
  ASSERT_TRUE(InsertKey(&list, 1001, false));
  ASSERT_TRUE(InsertKey(&list, 1003, false));
  std::set<Key> model;
  for (Key k = 0; k < kNum; k++) model.insert(k * 2);
  model.insert({(kNum - 1) * 2 - 1, 1001, 1003});
  Random rnd(TestSeed());
  CheckAgainstModel(list, model, kNum * 2 + 2, &rnd);
}

// Phases of serialized inserts (ascending runs from a random start, descending runs,
// random keys, duplicates) alternate with phases of InsertConcurrently from two threads,
// some landing right around the last serialized key: the splice the serialized inserts
// keep between calls goes stale in those phases and must not be trusted then.
TEST(SkipListTest, SerializedRunsBetweenConcurrentPhases) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  const Key kRange = 40000;
  ConcurrentArena arena;
  SkipList<KeyCmp, ConcurrentArena> list(KeyCmp(), &arena);
  std::set<Key> model;
  Key last = kRange / 2;
  for (int phase = 0; phase < 100; phase++) {
    const int kind = static_cast<int>(rnd.Uniform(4));
    Key start = rnd.OneIn(2) ? last : rnd.Uniform(kRange);
    for (int i = 0; i < 200; i++) {
      Key k;
      switch (kind) {
        case 0: k = start + i; break;
        case 1: k = start >= static_cast<Key>(i) ? start - i : kRange + i; break;
        case 2: k = rnd.Uniform(kRange); break;
        default: k = rnd.OneIn(2) ? last : last + 1; break;
      }
      const bool fresh = model.insert(k).second;
      ASSERT_EQ(InsertKey(&list, k, false), fresh) << "phase " << phase << " key " << k;
      last = k;
    }
    // Two threads at once, from just after `last` on (between it and its successor, where
    // the next serialized key is likely to go), and at random.
    std::vector<std::vector<Key>> added(2);
    std::vector<std::thread> threads;
    const Key near = last;
    for (int t = 0; t < 2; t++) {
      threads.emplace_back([&, t] {
        Random trnd(seed + 1000 * phase + t);
        for (int i = 0; i < 100; i++) {
          Key k = i % 2 == 0 ? near + 1 + 2 * i + t : trnd.Uniform(kRange);
          if (InsertKey(&list, k, true)) added[t].push_back(k);
        }
      });
    }
    for (auto& th : threads) th.join();
    for (const auto& v : added) {
      for (Key k : v) ASSERT_TRUE(model.insert(k).second) << "accepted twice: " << k;
    }
  }
  CheckAgainstModel(list, model, kRange + 400, &rnd);
}

// Threads sharing shards (more threads than shards) allocate at once: every allocation
// is their own, none overlaps another (each is filled with its owner's byte and checked
// after all are done), and the accounting adds up.
TEST(SkipListTest, ConcurrentArenaThreadsGetDisjointMemory) {
  const uint64_t seed = TestSeed();
  ConcurrentArena arena;
  const int kThreads = 6;
  const int kAllocs = 20000;
  struct Piece {
    char* p;
    size_t n;
  };
  std::vector<std::vector<Piece>> pieces(kThreads);
  std::vector<size_t> asked(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      Random rnd(seed + t);
      for (int i = 0; i < kAllocs; i++) {
        const size_t n = 1 + rnd.Uniform(rnd.OneIn(50) ? 3000 : 120);
        char* p = rnd.OneIn(2) ? arena.AllocateAligned(n) : arena.Allocate(n);
        memset(p, 'a' + t, n);
        pieces[t].push_back({p, n});
        asked[t] += n;
      }
    });
  }
  for (auto& th : threads) th.join();
  size_t total = 0;
  for (int t = 0; t < kThreads; t++) {
    total += asked[t];
    for (const Piece& piece : pieces[t]) {
      for (size_t i = 0; i < piece.n; i++) {
        ASSERT_EQ(piece.p[i], 'a' + t) << "thread " << t << " byte " << i;
      }
    }
  }
  EXPECT_GE(arena.AllocatedBytes(), total);
  EXPECT_LT(arena.AllocatedBytes(), total + kThreads * kAllocs * ConcurrentArena::kAlignment);
}

TEST(SkipListTest, ConcurrentArenaAlignmentAndAccounting) {
  ConcurrentArena arena;
  EXPECT_EQ(arena.AllocatedBytes(), 0u);
  size_t asked = 0;
  for (size_t n : {1, 3, 8, 17, 100, 1000, 2000, 5000, 70000}) {
    char* p = arena.AllocateAligned(n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % ConcurrentArena::kAlignment, 0u) << n;
    memset(p, 0xab, n);  // ASan flags an allocation shorter than asked
    asked += n;
    char* q = arena.Allocate(n);
    memset(q, 0xcd, n);
    asked += n;
  }
  EXPECT_GE(arena.AllocatedBytes(), asked);
  EXPECT_LT(arena.AllocatedBytes(), asked + 200);
  EXPECT_GE(arena.MemoryUsage(), arena.AllocatedBytes());
}

}  // namespace
}  // namespace shale
