// MemTable: point lookups over versions, snapshots and visibility callbacks, iteration over
// internal keys against a std::map model, memory accounting, concurrent Adds.
#include "memtable/memtable.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "shale/comparator.h"
#include "tests/testutil/test_util.h"
#include "util/dbformat.h"
#include "util/random.h"

namespace shale {
namespace {

// Builds prefix + decimal n. (Avoids GCC 12's false -Wrestrict on literal + to_string.)
std::string Cat(const char* prefix, uint64_t n) {
  std::string s(prefix);
  s.append(std::to_string(n));
  return s;
}

struct Unreffer {
  void operator()(MemTable* m) const { m->Unref(); }
};
using MemPtr = std::unique_ptr<MemTable, Unreffer>;

MemPtr NewMem(const InternalKeyComparator& icmp, size_t write_buffer_size = 4 << 20) {
  MemTable* m = new MemTable(icmp, write_buffer_size);
  m->Ref();
  return MemPtr(m);
}

struct GetResult {
  bool found = false;
  Status status;
  std::string value;
  SequenceNumber seq = 0;
};

GetResult DoGet(MemTable* mem, const std::string& key, SequenceNumber snapshot,
                ReadCallback* callback = nullptr) {
  GetResult r;
  LookupKey lkey(key, snapshot);
  r.value = "untouched";
  r.seq = 12345;
  r.found = mem->Get(lkey, &r.value, &r.status, &r.seq, callback);
  return r;
}

class HideSeqs : public ReadCallback {
 public:
  explicit HideSeqs(std::set<SequenceNumber> hidden) : hidden_(std::move(hidden)) {}
  bool IsVisibleFullCheck(SequenceNumber seq) override { return hidden_.count(seq) == 0; }

 private:
  std::set<SequenceNumber> hidden_;
};

class MemTableTest : public ::testing::Test {
 protected:
  InternalKeyComparator icmp_{BytewiseComparator()};
};

TEST_F(MemTableTest, EmptyTable) {
  MemPtr mem = NewMem(icmp_);
  EXPECT_TRUE(mem->IsEmpty());
  EXPECT_EQ(mem->num_entries(), 0u);
  EXPECT_EQ(mem->num_deletes(), 0u);
  EXPECT_EQ(mem->first_seqno(), kMaxSequenceNumber);
  EXPECT_FALSE(mem->ShouldFlush());
  GetResult r = DoGet(mem.get(), "a", kMaxSequenceNumber);
  EXPECT_FALSE(r.found);
  EXPECT_EQ(r.value, "untouched");
  EXPECT_EQ(r.seq, 12345u);
  std::unique_ptr<InternalIterator> it(mem->NewIterator());
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  it->Seek(InternalKey("a", 5, kValueTypeForSeek).Encode());
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev(InternalKey("a", 5, kValueTypeForSeek).Encode());
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
}

TEST_F(MemTableTest, PutGetAndNeighbours) {
  MemPtr mem = NewMem(icmp_);
  mem->Add(10, kTypeValue, "b", "vb");
  mem->Add(11, kTypeValue, "ab", "vab");
  mem->Add(12, kTypeValue, "a", "va");
  mem->Add(13, kTypeValue, "", "empty-key");
  mem->Add(14, kTypeValue, "c", "");

  GetResult r = DoGet(mem.get(), "a", 100);
  ASSERT_TRUE(r.found);
  EXPECT_TRUE(r.status.ok());
  EXPECT_EQ(r.value, "va");
  EXPECT_EQ(r.seq, 12u);
  r = DoGet(mem.get(), "ab", 100);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.value, "vab");
  r = DoGet(mem.get(), "", 100);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.value, "empty-key");
  r = DoGet(mem.get(), "c", 100);
  ASSERT_TRUE(r.found);
  EXPECT_TRUE(r.status.ok());
  EXPECT_EQ(r.value, "");
  EXPECT_EQ(r.seq, 14u);

  // Keys that are prefixes or extensions of present keys, or absent, are not found.
  for (const char* k : {"aa", "abc", "bb", "0", "d"}) {
    EXPECT_FALSE(DoGet(mem.get(), k, 100).found) << k;
  }
  // A snapshot before the write does not see it.
  EXPECT_FALSE(DoGet(mem.get(), "a", 11).found);
  EXPECT_TRUE(DoGet(mem.get(), "a", 12).found);
  EXPECT_EQ(mem->num_entries(), 5u);
  EXPECT_EQ(mem->first_seqno(), 10u);
}

TEST_F(MemTableTest, VersionsAtEverySnapshot) {
  MemPtr mem = NewMem(icmp_);
  // Added out of order: the memtable orders by sequence, not by arrival.
  mem->Add(7, kTypeValue, "k", "v7");
  mem->Add(1, kTypeValue, "k", "v1");
  mem->Add(5, kTypeDeletion, "k", "");
  mem->Add(3, kTypeValue, "k", "v3");
  mem->Add(9, kTypeSingleDeletion, "k", "");
  mem->Add(11, kTypeMerge, "k", "operand");
  mem->Add(4, kTypeValue, "other", "x");

  struct Expect {
    bool found;
    int code;  // 0 ok, 1 not found, 2 not supported
    const char* value;
    SequenceNumber seq;
  };
  const Expect expected[] = {
      {false, 0, "", 0},  {true, 0, "v1", 1}, {true, 0, "v1", 1}, {true, 0, "v3", 3},
      {true, 0, "v3", 3}, {true, 1, "", 5},   {true, 1, "", 5},   {true, 0, "v7", 7},
      {true, 0, "v7", 7}, {true, 1, "", 9},   {true, 1, "", 9},   {true, 2, "", 11},
      {true, 2, "", 11},
  };
  for (SequenceNumber snap = 0; snap <= 12; snap++) {
    SCOPED_TRACE(Cat("snapshot ", snap));
    const Expect& e = expected[snap];
    GetResult r = DoGet(mem.get(), "k", snap);
    ASSERT_EQ(r.found, e.found);
    if (!e.found) continue;
    EXPECT_EQ(r.seq, e.seq);
    switch (e.code) {
      case 0:
        EXPECT_TRUE(r.status.ok()) << r.status.ToString();
        EXPECT_EQ(r.value, e.value);
        break;
      case 1: EXPECT_TRUE(r.status.IsNotFound()) << r.status.ToString(); break;
      case 2: EXPECT_TRUE(r.status.IsNotSupported()) << r.status.ToString(); break;
    }
  }
  EXPECT_EQ(mem->num_entries(), 7u);
  EXPECT_EQ(mem->num_deletes(), 2u);
  EXPECT_EQ(mem->first_seqno(), 1u);
}

TEST_F(MemTableTest, ReadCallbackHidesSequences) {
  MemPtr mem = NewMem(icmp_);
  mem->Add(1, kTypeValue, "k", "v1");
  mem->Add(3, kTypeValue, "k", "v3");
  mem->Add(5, kTypeDeletion, "k", "");
  mem->Add(7, kTypeValue, "k", "v7");
  mem->Add(8, kTypeValue, "l", "l8");

  HideSeqs hide7({7});
  GetResult r = DoGet(mem.get(), "k", 100, &hide7);
  ASSERT_TRUE(r.found);
  EXPECT_TRUE(r.status.IsNotFound());
  EXPECT_EQ(r.seq, 5u);

  HideSeqs hide57({5, 7});
  r = DoGet(mem.get(), "k", 100, &hide57);
  ASSERT_TRUE(r.found);
  EXPECT_TRUE(r.status.ok());
  EXPECT_EQ(r.value, "v3");
  EXPECT_EQ(r.seq, 3u);

  // The snapshot bound still applies on top of the callback.
  r = DoGet(mem.get(), "k", 4, &hide57);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.value, "v3");
  HideSeqs hide3({3});
  r = DoGet(mem.get(), "k", 4, &hide3);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.value, "v1");

  // Hiding every version of k must not fall through to the next user key.
  HideSeqs hide_all_k({1, 3, 5, 7});
  r = DoGet(mem.get(), "k", 100, &hide_all_k);
  EXPECT_FALSE(r.found);
  EXPECT_EQ(r.value, "untouched");
  r = DoGet(mem.get(), "l", 100, &hide_all_k);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.value, "l8");
}

TEST_F(MemTableTest, DuplicateEntryIsDropped) {
  MemPtr mem = NewMem(icmp_);
  mem->Add(5, kTypeValue, "k", "first");
  mem->Add(5, kTypeValue, "k", "second");
  EXPECT_EQ(mem->num_entries(), 1u);
  GetResult r = DoGet(mem.get(), "k", 5);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.value, "first");
  // Same sequence, different type, is a distinct internal key.
  mem->Add(5, kTypeMerge, "k", "m");
  EXPECT_EQ(mem->num_entries(), 2u);
}

// GroupAdder, on either insert path: entries are readable once their group is linked (at
// the Add that fills a group, at Flush, at destruction), duplicates are dropped with the
// first staying, and the counts and the first sequence cover every linked entry.
class MemTableGroupAdderTest : public MemTableTest, public ::testing::WithParamInterface<bool> {};

TEST_P(MemTableGroupAdderTest, LinksGroupsAndCounts) {
  MemPtr mem = NewMem(icmp_);
  constexpr size_t kGroup = MemTable::GroupAdder::kGroup;
  {
    MemTable::GroupAdder adder(mem.get(), /*allow_concurrent=*/GetParam());
    for (size_t i = 0; i + 1 < kGroup; i++) {
      adder.Add(100 + i, i % 3 == 0 ? kTypeDeletion : kTypeValue, Cat("k", i), Cat("v", i));
    }
    EXPECT_FALSE(DoGet(mem.get(), "k1", 1000).found) << "linked before its group";
    EXPECT_EQ(mem->num_entries(), 0u);
    adder.Add(50, kTypeValue, "k1", "older");  // fills the group
    EXPECT_EQ(mem->num_entries(), kGroup);
    EXPECT_EQ(mem->first_seqno(), 50u);
    GetResult r = DoGet(mem.get(), "k1", 1000);
    ASSERT_TRUE(r.found);
    EXPECT_EQ(r.value, "v1");
    EXPECT_EQ(DoGet(mem.get(), "k1", 60).value, "older");
    // A duplicate within a group, and of an entry linked earlier: the first stays.
    adder.Add(200, kTypeValue, "d", "first");
    adder.Add(200, kTypeValue, "d", "second");
    adder.Add(101, kTypeValue, "k1", "again");
    adder.Flush();
    EXPECT_EQ(DoGet(mem.get(), "d", 200).value, "first");
    EXPECT_EQ(DoGet(mem.get(), "k1", 101).value, "v1");
    EXPECT_EQ(mem->num_entries(), kGroup + 1);
    adder.Add(300, kTypeSingleDeletion, "s", "");
  }
  EXPECT_EQ(mem->num_entries(), kGroup + 2);
  EXPECT_EQ(mem->num_deletes(), 1 + (kGroup - 2) / 3 + 1);
  GetResult r = DoGet(mem.get(), "s", 300);
  ASSERT_TRUE(r.found);
  EXPECT_TRUE(r.status.IsNotFound());
}

INSTANTIATE_TEST_SUITE_P(Paths, MemTableGroupAdderTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Concurrent" : "Serialized";
                         });

TEST_F(MemTableTest, LargeValuesAndKeys) {
  MemPtr mem = NewMem(icmp_);
  Random rnd(TestSeed());
  std::map<std::string, std::string> model;
  for (int i = 0; i < 50; i++) {
    std::string key(1 + rnd.Uniform(3000), static_cast<char>('a' + i % 26));
    key += std::to_string(i);
    std::string value(rnd.Uniform(100000), static_cast<char>(rnd.Uniform(256)));
    mem->Add(i + 1, kTypeValue, key, value);
    model[key] = value;
  }
  for (const auto& [k, v] : model) {
    GetResult r = DoGet(mem.get(), k, kMaxSequenceNumber);
    ASSERT_TRUE(r.found);
    ASSERT_EQ(r.value, v);
  }
}

// Orders internal keys exactly as the memtable must.
struct ModelLess {
  const InternalKeyComparator* icmp;
  bool operator()(const std::string& a, const std::string& b) const {
    return icmp->Compare(a, b) < 0;
  }
};

TEST_F(MemTableTest, IteratorMatchesModel) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  MemPtr mem = NewMem(icmp_);
  std::map<std::string, std::string, ModelLess> model(ModelLess{&icmp_});
  const ValueType kTypes[] = {kTypeValue, kTypeDeletion, kTypeSingleDeletion, kTypeMerge};
  auto random_user_key = [&] { return Cat("key", rnd.Uniform(300)); };
  for (int i = 0; i < 2000; i++) {
    std::string ukey = random_user_key();
    SequenceNumber seq = 1 + rnd.Uniform(5000);
    ValueType type = kTypes[rnd.Uniform(4)];
    std::string value = type == kTypeDeletion ? "" : Cat("v", i);
    std::string ikey = InternalKey(ukey, seq, type).Encode().ToString();
    if (model.count(ikey) != 0) continue;
    model[ikey] = value;
    mem->Add(seq, type, ukey, value);
  }
  ASSERT_EQ(mem->num_entries(), model.size());

  std::unique_ptr<InternalIterator> it(mem->NewIterator());
  EXPECT_TRUE(it->IsKeyPinned());
  EXPECT_TRUE(it->IsValuePinned());
  auto it_model = model.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++it_model) {
    ASSERT_NE(it_model, model.end());
    ASSERT_EQ(it->key().ToString(), it_model->first);
    ASSERT_EQ(it->value().ToString(), it_model->second);
  }
  ASSERT_EQ(it_model, model.end());
  auto rit_model = model.rbegin();
  for (it->SeekToLast(); it->Valid(); it->Prev(), ++rit_model) {
    ASSERT_NE(rit_model, model.rend());
    ASSERT_EQ(it->key().ToString(), rit_model->first);
  }
  ASSERT_EQ(rit_model, model.rend());

  for (int i = 0; i < 2000; i++) {
    // Targets: random user keys (present or not) with random sequence and type.
    std::string ukey = rnd.OneIn(10) ? "zzz" : random_user_key();
    if (rnd.OneIn(10)) ukey = "a";
    ValueType type = rnd.OneIn(2) ? kValueTypeForSeek : kTypes[rnd.Uniform(4)];
    const InternalKey target_key(ukey, rnd.Uniform(5002), type);
    const std::string target = target_key.Encode().ToString();
    SCOPED_TRACE(Cat("seed ", seed) + " target " + target_key.DebugString());

    auto lb = model.lower_bound(target);
    it->Seek(target);
    ASSERT_EQ(it->Valid(), lb != model.end());
    if (it->Valid()) {
      ASSERT_EQ(it->key().ToString(), lb->first);
    }

    auto ub = model.upper_bound(target);
    auto pos = ub == model.begin() ? model.end() : std::prev(ub);
    it->SeekForPrev(target);
    ASSERT_EQ(it->Valid(), pos != model.end());
    if (!it->Valid()) continue;
    ASSERT_EQ(it->key().ToString(), pos->first);
    // Random walk with direction changes.
    for (int step = 0; step < 8 && it->Valid(); step++) {
      if (rnd.OneIn(2)) {
        it->Next();
        ++pos;
      } else {
        it->Prev();
        pos = pos == model.begin() ? model.end() : std::prev(pos);
      }
      ASSERT_EQ(it->Valid(), pos != model.end());
      if (it->Valid()) {
        ASSERT_EQ(it->key().ToString(), pos->first);
        ASSERT_EQ(it->value().ToString(), pos->second);
      }
    }
  }
}

TEST_F(MemTableTest, IteratorKeysStayPinnedAcrossAdds) {
  MemPtr mem = NewMem(icmp_);
  mem->Add(1, kTypeValue, "m", "vm");
  std::unique_ptr<InternalIterator> it(mem->NewIterator());
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  Slice k = it->key();
  Slice v = it->value();
  for (int i = 0; i < 5000; i++) {
    mem->Add(i + 2, kTypeValue, Cat("k", i), std::string(100, 'x'));
  }
  it->Next();  // the slices must outlive movement of the iterator
  EXPECT_EQ(k.ToString(), InternalKey("m", 1, kTypeValue).Encode().ToString());
  EXPECT_EQ(v.ToString(), "vm");
  // An iterator made before later Adds sees them (nothing is copied at creation).
  it->Seek(InternalKey("k42", kMaxSequenceNumber, kValueTypeForSeek).Encode());
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(ExtractUserKey(it->key()).ToString(), "k42");
}

TEST_F(MemTableTest, ReverseComparatorOrder) {
  InternalKeyComparator rev(ReverseBytewiseComparator());
  MemPtr mem = NewMem(rev);
  mem->Add(1, kTypeValue, "a", "1");
  mem->Add(2, kTypeValue, "c", "2");
  mem->Add(3, kTypeValue, "b", "3");
  mem->Add(4, kTypeValue, "b", "4");
  std::unique_ptr<InternalIterator> it(mem->NewIterator());
  std::vector<std::string> got;
  for (it->SeekToFirst(); it->Valid(); it->Next()) got.push_back(it->value().ToString());
  EXPECT_EQ(got, (std::vector<std::string>{"2", "4", "3", "1"}));
  GetResult r = DoGet(mem.get(), "b", 3);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.value, "3");
}

// The index orders entries by their first eight user-key bytes before reading the
// entries: keys that end inside those bytes, zero bytes (which the padding also uses),
// bytes above 0x7f and keys that tie on all eight must still come out in the comparator's
// order, and every one must be found.
TEST_F(MemTableTest, IndexPrefixesKeepTheComparatorsOrder) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  const char kBytes[] = {'\0', '\1', 'a', '\x7f', '\x80', '\xff'};
  for (const Comparator* ucmp : {BytewiseComparator(), ReverseBytewiseComparator()}) {
    SCOPED_TRACE(Cat("seed ", seed) + " comparator " + ucmp->Name());
    InternalKeyComparator icmp(ucmp);
    MemPtr mem = NewMem(icmp);
    std::map<std::string, std::string, ModelLess> model(ModelLess{&icmp});
    std::map<std::string, std::string> newest;  // user key -> its newest value
    for (SequenceNumber seq = 1; seq <= 3000; seq++) {
      std::string ukey;
      const size_t len = rnd.Uniform(13);  // 0..12: inside, at and past the prefix
      for (size_t i = 0; i < len; i++) ukey.push_back(kBytes[rnd.Uniform(sizeof(kBytes))]);
      const std::string value = Cat("v", seq);
      model[InternalKey(ukey, seq, kTypeValue).Encode().ToString()] = value;
      newest[ukey] = value;
      mem->Add(seq, kTypeValue, ukey, value);
    }
    std::unique_ptr<InternalIterator> it(mem->NewIterator());
    auto m = model.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
      ASSERT_NE(m, model.end());
      ASSERT_EQ(it->key().ToString(), m->first);
    }
    ASSERT_EQ(m, model.end());
    for (const auto& [ukey, value] : newest) {
      GetResult r = DoGet(mem.get(), ukey, kMaxSequenceNumber);
      ASSERT_TRUE(r.found);
      ASSERT_EQ(r.value, value);
      // Seek lands on the user key's newest entry.
      it->Seek(InternalKey(ukey, kMaxSequenceNumber, kValueTypeForSeek).Encode());
      ASSERT_TRUE(it->Valid());
      ASSERT_EQ(ExtractUserKey(it->key()).ToString(), ukey);
      ASSERT_EQ(it->value().ToString(), value);
    }
  }
}

TEST_F(MemTableTest, MemoryUsageAndShouldFlush) {
  const size_t kWriteBuffer = 256 << 10;
  MemPtr mem = NewMem(icmp_, kWriteBuffer);
  EXPECT_FALSE(mem->ShouldFlush());
  size_t added = 0;
  size_t prev_usage = mem->ApproximateMemoryUsage();
  int i = 0;
  while (!mem->ShouldFlush()) {
    std::string key = Cat("key", i);
    std::string value(100, 'v');
    mem->Add(++i, kTypeValue, key, value);
    added += key.size() + 8 + value.size();
    size_t usage = mem->ApproximateMemoryUsage();
    ASSERT_GE(usage, prev_usage);  // never shrinks
    prev_usage = usage;
    ASSERT_LT(added, 4 * kWriteBuffer) << "ShouldFlush never turned true";
  }
  // It flushes once about write_buffer_size of entries (plus index overhead) is in.
  EXPECT_GE(added, kWriteBuffer / 2);
  EXPECT_LE(added, kWriteBuffer);
  EXPECT_GE(mem->ApproximateMemoryUsage(), kWriteBuffer);
  EXPECT_LT(mem->ApproximateMemoryUsage(), 2 * kWriteBuffer);
  EXPECT_EQ(mem->num_entries(), static_cast<uint64_t>(i));

  // A write buffer smaller than one arena block still flushes by content, not by block.
  MemPtr small = NewMem(icmp_, 4096);
  small->Add(1, kTypeValue, "k", "v");
  EXPECT_FALSE(small->ShouldFlush());
  small->Add(2, kTypeValue, "big", std::string(5000, 'x'));
  EXPECT_TRUE(small->ShouldFlush());
}

TEST_F(MemTableTest, LogNumberAndRefcount) {
  MemTable* mem = new MemTable(icmp_, 1 << 20);
  mem->Ref();
  mem->Ref();
  EXPECT_EQ(mem->GetLogNumber(), 0u);
  mem->SetLogNumber(42);
  EXPECT_EQ(mem->GetLogNumber(), 42u);
  mem->Add(1, kTypeValue, "k", "v");
  mem->Unref();
  // Still alive: one reference left (ASan would flag a use after free).
  EXPECT_TRUE(DoGet(mem, "k", 1).found);
  mem->Unref();  // deleted here; LeakSanitizer flags it if not
}

TEST_F(MemTableTest, ConcurrentAddsWithReaders) {
  const uint64_t seed = TestSeed();
  const int kThreads = 4;
  const int kPerThread = 5000;
  MemPtr mem = NewMem(icmp_, 64 << 20);
  std::atomic<bool> go{false};
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::atomic<uint64_t> reads{0};

  // Thread t writes keys "t<t>-<i>" at sequence t + i * kThreads + 1, plus a second version
  // of every tenth key, and a shared key "hot" at each of its sequences divisible by 7.
  auto seq_of = [&](int t, int i) { return static_cast<SequenceNumber>(t + i * kThreads + 1); };
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; t++) {
    writers.emplace_back([&, t] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      for (int i = 0; i < kPerThread; i++) {
        std::string key = Cat("t", t) + Cat("-", i);
        SequenceNumber seq = seq_of(t, i);
        mem->Add(seq, kTypeValue, key, Cat("v", seq), true);
        if (seq % 7 == 0) mem->Add(seq, kTypeValue, "hot", std::to_string(seq), true);
        if (i % 10 == 0) {
          mem->Add(seq + 1000000, kTypeDeletion, key, "", true);
        }
      }
    });
  }
  std::thread reader([&] {
    Random rnd(seed);
    // At least one read even when a loaded machine runs the writers to the end first.
    do {
      int t = rnd.Uniform(kThreads);
      int i = rnd.Uniform(kPerThread);
      std::string key = Cat("t", t) + Cat("-", i);
      GetResult r = DoGet(mem.get(), key, 999999);
      // Either not yet written or exactly the value written.
      if (r.found && (!r.status.ok() || r.value != Cat("v", seq_of(t, i)))) {
        failures++;
      }
      reads++;
    } while (!done.load(std::memory_order_acquire));
  });
  go.store(true, std::memory_order_release);
  for (auto& w : writers) w.join();
  done.store(true, std::memory_order_release);
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(reads.load(), 0u);

  uint64_t hot = 0;
  SequenceNumber max_hot = 0;
  for (int t = 0; t < kThreads; t++) {
    for (int i = 0; i < kPerThread; i++) {
      if (seq_of(t, i) % 7 == 0) {
        hot++;
        max_hot = std::max(max_hot, seq_of(t, i));
      }
    }
  }
  const uint64_t deletes = kThreads * ((kPerThread + 9) / 10);
  EXPECT_EQ(mem->num_entries(), kThreads * kPerThread + hot + deletes);
  EXPECT_EQ(mem->num_deletes(), deletes);
  EXPECT_EQ(mem->first_seqno(), 1u);

  for (int t = 0; t < kThreads; t++) {
    for (int i = 0; i < kPerThread; i++) {
      std::string key = Cat("t", t) + Cat("-", i);
      GetResult r = DoGet(mem.get(), key, kMaxSequenceNumber);
      ASSERT_TRUE(r.found) << key;
      if (i % 10 == 0) {
        ASSERT_TRUE(r.status.IsNotFound()) << key;
      } else {
        ASSERT_EQ(r.value, Cat("v", seq_of(t, i))) << key;
      }
    }
  }
  GetResult r = DoGet(mem.get(), "hot", kMaxSequenceNumber);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.value, std::to_string(max_hot));

  // Iteration sees every entry in internal-key order.
  std::unique_ptr<InternalIterator> it(mem->NewIterator());
  uint64_t count = 0;
  std::string prev;
  for (it->SeekToFirst(); it->Valid(); it->Next(), count++) {
    if (count > 0) {
      ASSERT_LT(icmp_.Compare(prev, it->key()), 0);
    }
    prev = it->key().ToString();
  }
  EXPECT_EQ(count, mem->num_entries());
}

// The filter of key hashes: every key added is found, and most keys never added are
// answered without a search (MayContain false).
TEST_F(MemTableTest, FilterAnswersForAbsentKeys) {
  MemPtr mem = NewMem(icmp_);  // 4 MiB of write buffer: a 64 KiB filter
  const int kKeys = 20000;
  for (int i = 0; i < kKeys; i++) {
    mem->Add(i + 1, i % 5 == 0 ? kTypeDeletion : kTypeValue, Cat("key", i), Cat("v", i));
  }
  for (int i = 0; i < kKeys; i++) {
    ASSERT_TRUE(mem->MayContain(Cat("key", i))) << i;
    GetResult r = DoGet(mem.get(), Cat("key", i), kMaxSequenceNumber);
    ASSERT_TRUE(r.found) << i;
    EXPECT_EQ(r.status.ok(), i % 5 != 0) << i;
  }
  int rejected = 0;
  for (int i = kKeys; i < 2 * kKeys; i++) {
    rejected += !mem->MayContain(Cat("key", i));
    ASSERT_FALSE(DoGet(mem.get(), Cat("key", i), kMaxSequenceNumber).found) << i;
  }
  // About 26 bits a key here: well under 1% false positives.
  EXPECT_GT(rejected, kKeys * 98 / 100);
  EXPECT_EQ(mem->CountSuccessiveMergeEntries(Cat("key", kKeys + 1), 10), 0u);
}

// A comparator under which keys of different bytes can be equal keeps no filter: a hash of
// the bytes would miss the equal key stored under other bytes.
TEST_F(MemTableTest, CaseInsensitiveComparatorFindsEqualKeysWithoutAFilter) {
  class CaseInsensitive final : public Comparator {
   public:
    const char* Name() const override { return "test.CaseInsensitive"; }
    int Compare(const Slice& a, const Slice& b) const override {
      const size_t n = std::min(a.size(), b.size());
      for (size_t i = 0; i < n; i++) {
        const int x = std::tolower(static_cast<unsigned char>(a[i]));
        const int y = std::tolower(static_cast<unsigned char>(b[i]));
        if (x != y) return x < y ? -1 : 1;
      }
      return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
    }
    void FindShortestSeparator(std::string*, const Slice&) const override {}
    void FindShortSuccessor(std::string*) const override {}
  };
  static const CaseInsensitive kCmp;
  EXPECT_TRUE(kCmp.CanKeysWithDifferentByteContentsBeEqual());
  EXPECT_FALSE(BytewiseComparator()->CanKeysWithDifferentByteContentsBeEqual());
  EXPECT_FALSE(ReverseBytewiseComparator()->CanKeysWithDifferentByteContentsBeEqual());
  InternalKeyComparator icmp(&kCmp);
  MemPtr mem = NewMem(icmp);
  for (int i = 0; i < 1000; i++) mem->Add(i + 1, kTypeValue, Cat("Key", i), Cat("v", i));
  for (int i = 0; i < 1000; i++) {
    GetResult r = DoGet(mem.get(), Cat("KEY", i), kMaxSequenceNumber);
    ASSERT_TRUE(r.found) << i;
    EXPECT_EQ(r.value, Cat("v", i));
  }
}

// Writers add keys concurrently and publish, with a release store, how far each has got;
// a reader that acquires that mark must find every key up to it, as a DB reader must find
// every entry below the last sequence it acquired. A concurrent Add that left the filter
// without the key's bits fails here.
TEST_F(MemTableTest, PublishedKeysAreFoundWhileOthersAreAdded) {
  const uint64_t seed = TestSeed();
  const int kThreads = 3;
  const int kPerThread = 20000;
  MemPtr mem = NewMem(icmp_, 16 << 20);
  std::atomic<int> published[kThreads];
  for (auto& p : published) p.store(-1);
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::atomic<uint64_t> checks{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; t++) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; i++) {
        mem->Add(static_cast<SequenceNumber>(i * kThreads + t + 1), kTypeValue,
                 Cat("w", t) + Cat("-", i), "v", true);
        published[t].store(i, std::memory_order_release);
      }
    });
  }
  std::thread reader([&] {
    Random rnd(seed);
    do {
      const int t = static_cast<int>(rnd.Uniform(kThreads));
      const int last = published[t].load(std::memory_order_acquire);
      if (last < 0) continue;
      // The newest published key most of the time: the one most likely to race its insert.
      const int i = rnd.OneIn(2) ? last : static_cast<int>(rnd.Uniform(last + 1));
      if (!DoGet(mem.get(), Cat("w", t) + Cat("-", i), kMaxSequenceNumber).found) failures++;
      checks++;
    } while (!done.load(std::memory_order_acquire));
  });
  for (auto& w : writers) w.join();
  done.store(true, std::memory_order_release);
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(checks.load(), 0u);
}

}  // namespace
}  // namespace shale
