// BlockBuilder + Block: round trips over many sizes and restart intervals, seeks in both
// directions against a std::map model, and malformed blocks (Corruption, never a crash).
#include "table/block.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "shale/comparator.h"
#include "table/block_builder.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/dbformat.h"
#include "util/random.h"

namespace shale {
namespace {

using Model = std::map<std::string, std::string>;

// Keys sharing prefixes of varied length, so prefix compression has work to do.
Model RandomModel(Random* rnd, size_t n) {
  Model m;
  while (m.size() < n) {
    std::string k = "key" + std::to_string(rnd->Uniform(4)) + "/" +
                    RandomString(rnd, rnd->Uniform(3)) + std::to_string(rnd->Uniform(100000));
    if (rnd->OneIn(10)) k = RandomBinaryString(rnd, rnd->Uniform(20));
    m[k] = RandomBinaryString(rnd, rnd->Skewed(8));
  }
  return m;
}

std::string Build(const Model& m, int restart_interval) {
  BlockBuilder b(restart_interval);
  for (const auto& [k, v] : m) b.Add(k, v);
  EXPECT_EQ(b.NumEntries(), m.size());
  const size_t estimate = b.CurrentSizeEstimate();
  std::string out = b.Finish().ToString();
  EXPECT_EQ(estimate, out.size());
  return out;
}

std::unique_ptr<InternalIterator> Iter(const Block& block) {
  return std::unique_ptr<InternalIterator>(block.NewIterator(BytewiseComparator()));
}

void CheckAgainstModel(const Model& m, const std::string& contents, Random* rnd) {
  Block block{BlockContents(Slice(contents))};
  ASSERT_OK(block.status());
  auto it = Iter(block);

  // Forward and backward full scans.
  auto mi = m.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++mi) {
    ASSERT_NE(mi, m.end());
    ASSERT_EQ(it->key().ToString(), mi->first);
    ASSERT_EQ(it->value().ToString(), mi->second);
  }
  ASSERT_EQ(mi, m.end());
  ASSERT_OK(it->status());
  auto ri = m.rbegin();
  for (it->SeekToLast(); it->Valid(); it->Prev(), ++ri) {
    ASSERT_NE(ri, m.rend());
    ASSERT_EQ(it->key().ToString(), ri->first);
  }
  ASSERT_EQ(ri, m.rend());
  ASSERT_OK(it->status());

  // Seeks to present keys, absent keys, and then a few steps in a random direction.
  std::vector<std::string> targets;
  for (const auto& [k, v] : m) {
    targets.push_back(k);
    targets.push_back(k + '\0');
    if (!k.empty()) targets.push_back(k.substr(0, k.size() - 1));
  }
  targets.push_back("");
  targets.push_back("\xff\xff\xff");
  for (const std::string& t : targets) {
    it->Seek(t);
    auto expect = m.lower_bound(t);
    ASSERT_EQ(it->Valid(), expect != m.end()) << t;
    if (expect != m.end()) {
      ASSERT_EQ(it->key().ToString(), expect->first);
    }

    it->SeekForPrev(t);
    auto up = m.upper_bound(t);
    const bool has_prev = up != m.begin();
    ASSERT_EQ(it->Valid(), has_prev) << t;
    if (!has_prev) continue;
    auto pos = std::prev(up);
    ASSERT_EQ(it->key().ToString(), pos->first);
    for (int step = 0; step < 5 && it->Valid(); step++) {
      if (rnd->OneIn(2)) {
        it->Next();
        ++pos;
      } else {
        it->Prev();
        pos = pos == m.begin() ? m.end() : std::prev(pos);
      }
      ASSERT_EQ(it->Valid(), pos != m.end());
      if (pos == m.end()) break;
      ASSERT_EQ(it->key().ToString(), pos->first);
      ASSERT_EQ(it->value().ToString(), pos->second);
    }
  }
  ASSERT_OK(it->status());
}

TEST(BlockTest, RoundTripSizesAndIntervals) {
  Random rnd(TestSeed());
  for (size_t n : {0, 1, 2, 3, 15, 16, 17, 33, 200, 1000}) {
    for (int interval : {1, 2, 3, 16, 100}) {
      SCOPED_TRACE("entries " + std::to_string(n) + " interval " + std::to_string(interval));
      Model m = RandomModel(&rnd, n);
      std::string contents = Build(m, interval);
      CheckAgainstModel(m, contents, &rnd);
    }
  }
}

TEST(BlockTest, PrefixCompressionShrinksSharedKeys) {
  Model m;
  for (int i = 0; i < 100; i++) m["a-long-common-prefix-" + std::to_string(1000 + i)] = "v";
  const std::string compressed = Build(m, 16);
  const std::string plain = Build(m, 1);
  EXPECT_LT(compressed.size(), plain.size() / 2);
}

// The iterator rebuilds keys in a buffer that holds short keys inline and moves to the heap
// for longer ones: keys from empty to several hundred bytes, sharing long prefixes across
// that boundary, read back the same in every direction.
TEST(BlockTest, KeysLongerThanTheInlineBuffer) {
  Random rnd(TestSeed());
  for (int interval : {1, 4, 16}) {
    SCOPED_TRACE("interval " + std::to_string(interval));
    Model m;
    const std::string prefix = RandomString(&rnd, 60);
    while (m.size() < 300) {
      const size_t len = rnd.Uniform(600);
      std::string k = len < prefix.size() ? prefix.substr(0, len)
                                          : prefix + RandomString(&rnd, len - prefix.size());
      m[k] = RandomBinaryString(&rnd, rnd.Uniform(10));
    }
    CheckAgainstModel(m, Build(m, interval), &rnd);
  }
}

// The iterator as a local value (as a point lookup uses it) over a malformed block is empty
// and reports the block's damage.
TEST(BlockTest, IteratorValueOverMalformedBlock) {
  std::string contents;
  PutFixed32(&contents, 0);  // zero restarts
  Block block{BlockContents(Slice(contents))};
  ASSERT_TRUE(block.status().IsCorruption());
  Block::Iter it(&block, BytewiseComparator(), 0);
  EXPECT_FALSE(it.Valid());
  EXPECT_TRUE(it.status().IsCorruption());
  it.SeekToFirst();
  EXPECT_FALSE(it.Valid());
  it.Seek("a");
  EXPECT_FALSE(it.Valid());
  it.SeekToLast();
  EXPECT_FALSE(it.Valid());
  EXPECT_TRUE(it.status().IsCorruption());
}

TEST(BlockTest, ResetStartsAnEmptyBlock) {
  BlockBuilder b(4);
  b.Add("x", "1");
  b.Finish();
  b.Reset();
  EXPECT_TRUE(b.empty());
  b.Add("a", "2");
  std::string contents = b.Finish().ToString();
  Block block{BlockContents(Slice(contents))};
  auto it = Iter(block);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "a");
  EXPECT_EQ(it->value().ToString(), "2");
  it->Next();
  EXPECT_FALSE(it->Valid());
}

// Block::New puts the object at the front of an allocation with room for it (one
// allocation per block read) and reads the same entries either way; a Block it places is
// freed with that allocation (the sanitizer builds check the pairing).
TEST(BlockTest, NewPlacesTheObjectInTheHeadroom) {
  BlockBuilder b(2);
  for (int i = 0; i < 20; i++) b.Add("key" + std::to_string(100 + i), "v" + std::to_string(i));
  const std::string bytes = b.Finish().ToString();
  for (size_t headroom : {size_t{0}, kBlockHeadroom / 2, kBlockHeadroom, kBlockHeadroom + 16}) {
    SCOPED_TRACE("headroom " + std::to_string(headroom));
    std::unique_ptr<char[]> mem(new char[headroom + bytes.size()]);
    memcpy(mem.get() + headroom, bytes.data(), bytes.size());
    const char* front = mem.get();
    std::unique_ptr<Block> block =
        Block::New(BlockContents(std::move(mem), bytes.size(), headroom), nullptr, 0);
    ASSERT_OK(block->status());
    EXPECT_EQ(reinterpret_cast<const char*>(block.get()) == front, headroom >= kBlockHeadroom);
    EXPECT_EQ(block->size(), bytes.size());
    auto it = Iter(*block);
    int n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), n++) {
      EXPECT_EQ(it->key().ToString(), "key" + std::to_string(100 + n));
      EXPECT_EQ(it->value().ToString(), "v" + std::to_string(n));
    }
    EXPECT_EQ(n, 20);
  }
}

TEST(BlockTest, ReverseComparator) {
  BlockBuilder b(2);
  std::vector<std::string> keys = {"z", "y", "m", "c", "b"};
  for (const auto& k : keys) b.Add(k, k + "v");
  std::string contents = b.Finish().ToString();
  Block block{BlockContents(Slice(contents))};
  std::unique_ptr<InternalIterator> it(block.NewIterator(ReverseBytewiseComparator()));
  it->Seek("n");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "m");
  it->SeekForPrev("n");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "y");
}

// The bytewise order under a comparator the block iterator does not recognize, so it takes
// the general path through the comparator's virtual calls.
class OpaqueBytewise final : public Comparator {
 public:
  const char* Name() const override { return "test.OpaqueBytewise"; }
  int Compare(const Slice& a, const Slice& b) const override {
    return BytewiseComparator()->Compare(a, b);
  }
  void FindShortestSeparator(std::string*, const Slice&) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

// Over internal keys with the bytewise user order, the iterator compares inline; Seek and
// SeekForPrev must land where the general path lands, for user keys that are prefixes of
// one another, bytes on both sides of 0x80, and one user key at many sequence numbers.
TEST(BlockTest, InlineInternalKeyOrderMatchesTheComparator) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Random rnd(seed);
  const char* const alphabet[] = {"", "a", "ab", "abc", "\x7f", "\x80", "\xff", "\xff\xff", "b"};
  OpaqueBytewise opaque;
  const InternalKeyComparator general(&opaque);
  const InternalKeyComparator inline_order(BytewiseComparator());
  std::vector<std::string> keys;
  for (const char* u : alphabet) {
    for (SequenceNumber seq : {1, 7, 100}) {
      std::string k;
      AppendInternalKey(&k, u, seq, kTypeValue);
      keys.push_back(k);
    }
  }
  std::sort(keys.begin(), keys.end(),
            [&](const std::string& a, const std::string& b) { return general.Compare(a, b) < 0; });
  for (int interval : {1, 2, 16}) {
    BlockBuilder b(interval);
    for (const auto& k : keys) b.Add(k, "v");
    const std::string contents = b.Finish().ToString();
    Block block{BlockContents(Slice(contents))};
    ASSERT_OK(block.status());
    std::unique_ptr<InternalIterator> fast(block.NewIterator(&inline_order, 8));
    std::unique_ptr<InternalIterator> slow(block.NewIterator(&general, 8));
    for (int i = 0; i < 500; i++) {
      std::string target;
      const std::string user = std::string(alphabet[rnd.Uniform(9)]) +
                               (rnd.OneIn(3) ? RandomBinaryString(&rnd, rnd.Uniform(3)) : "");
      AppendInternalKey(&target, user, rnd.Uniform(120), kTypeValue);
      // The model: the first key at or after target in the general order.
      const auto want = std::lower_bound(
          keys.begin(), keys.end(), target,
          [&](const std::string& a, const std::string& t) { return general.Compare(a, t) < 0; });
      fast->Seek(target);
      slow->Seek(target);
      ASSERT_EQ(fast->Valid(), want != keys.end()) << i;
      ASSERT_EQ(slow->Valid(), want != keys.end()) << i;
      if (want != keys.end()) {
        ASSERT_EQ(fast->key().ToString(), *want) << i;
        ASSERT_EQ(slow->key().ToString(), *want) << i;
      }
      fast->SeekForPrev(target);
      slow->SeekForPrev(target);
      ASSERT_EQ(fast->Valid(), slow->Valid()) << i;
      if (slow->Valid()) {
        ASSERT_EQ(fast->key().ToString(), slow->key().ToString()) << i;
      }
    }
  }
}

// With the restart-prefix summary (what a table's index keeps), Seek must land where the
// model says: keys whose first 8 bytes tie (longer keys sharing them, shorter keys that
// only differ by trailing zero bytes), keys shorter than 8 bytes, and targets before,
// between and after them all.
TEST(BlockTest, RestartPrefixSummaryKeepsSeekExact) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Random rnd(seed);
  const InternalKeyComparator icmp(BytewiseComparator());
  auto user_key = [&]() {
    switch (rnd.Uniform(4)) {
      case 0: return std::string("prefix01") + RandomBinaryString(&rnd, rnd.Uniform(4));
      case 1: return std::string("ab") + std::string(rnd.Uniform(7), '\0');
      case 2: return RandomBinaryString(&rnd, rnd.Uniform(10));
      default: return std::string(1 + rnd.Uniform(9), static_cast<char>(0xff));
    }
  };
  std::vector<std::string> keys;
  for (int i = 0; i < 300; i++) {
    std::string k;
    AppendInternalKey(&k, user_key(), rnd.Uniform(5), kTypeValue);
    keys.push_back(k);
  }
  auto less = [&](const std::string& a, const std::string& b) { return icmp.Compare(a, b) < 0; };
  std::sort(keys.begin(), keys.end(), less);
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (int interval : {1, 3}) {
    BlockBuilder b(interval);
    for (const auto& k : keys) b.Add(k, "v");
    const std::string contents = b.Finish().ToString();
    Block block{BlockContents(Slice(contents))};
    block.BuildRestartPrefixes();
    ASSERT_GT(block.restart_prefix_bytes(), 0u);
    std::unique_ptr<InternalIterator> it(block.NewIterator(&icmp, 8));
    for (int i = 0; i < 2000; i++) {
      std::string target;
      AppendInternalKey(&target, user_key(), rnd.Uniform(6), kTypeValue);
      const auto want = std::lower_bound(keys.begin(), keys.end(), target, less);
      it->Seek(target);
      ASSERT_OK(it->status());
      ASSERT_EQ(it->Valid(), want != keys.end()) << i;
      if (want != keys.end()) {
        ASSERT_EQ(it->key().ToString(), *want) << i;
      }
    }
  }
}

// A malformed restart entry leaves no summary (and the iterator reports the damage).
TEST(BlockTest, RestartPrefixSummarySkipsMalformedBlocks) {
  BlockBuilder b(1);
  std::string k;
  AppendInternalKey(&k, "key", 1, kTypeValue);
  b.Add(k, "v");
  std::string contents = b.Finish().ToString();
  contents[0] = '\x05';  // the first entry claims a shared prefix at a restart point
  Block block{BlockContents(Slice(contents))};
  block.BuildRestartPrefixes();
  EXPECT_EQ(block.restart_prefix_bytes(), 0u);
}

// Every positioning call on a block; returns the status seen (never crashes).
Status Exercise(const Block& block) {
  auto it = Iter(block);
  int steps = 0;
  for (it->SeekToFirst(); it->Valid() && steps < 10000; it->Next()) steps++;
  for (it->SeekToLast(); it->Valid() && steps < 20000; it->Prev()) steps++;
  for (const char* t : {"", "key1", "key2/", "zzz"}) {
    it->Seek(t);
    if (it->Valid()) {
      it->Prev();
      it->Next();
    }
    it->SeekForPrev(t);
    if (it->Valid()) it->Next();
  }
  Status s = it->status();
  if (!s.ok()) {
    EXPECT_FALSE(it->Valid());
  }
  return s;
}

TEST(BlockTest, MalformedTrailers) {
  auto expect_corrupt = [](const std::string& contents, const char* what) {
    Block block{BlockContents(Slice(contents))};
    EXPECT_TRUE(block.status().IsCorruption()) << what;
    Status s = Exercise(block);
    EXPECT_TRUE(s.IsCorruption()) << what << ": " << s.ToString();
  };
  expect_corrupt("", "empty");
  expect_corrupt("abc", "shorter than the restart count");

  std::string zero_restarts;
  PutFixed32(&zero_restarts, 0);
  expect_corrupt(zero_restarts, "zero restarts");

  std::string too_many;
  PutFixed32(&too_many, 0);
  PutFixed32(&too_many, 1000);
  expect_corrupt(too_many, "restart count beyond the block");

  std::string past_end;
  past_end.append("\x00\x01\x01kv", 5);
  PutFixed32(&past_end, 0);
  PutFixed32(&past_end, 6);  // beyond the entry area
  PutFixed32(&past_end, 2);
  expect_corrupt(past_end, "restart point past the entries");

  std::string huge_count("\x00\x01\x01kv", 5);
  PutFixed32(&huge_count, 0);
  PutFixed32(&huge_count, 0xffffffffu);
  expect_corrupt(huge_count, "restart count overflowing");
}

TEST(BlockTest, MalformedEntries) {
  auto entry_block = [](const std::string& entries) {
    std::string b = entries;
    PutFixed32(&b, 0);
    PutFixed32(&b, 1);
    return b;
  };
  auto expect_corrupt = [](const std::string& contents, const char* what) {
    Block block{BlockContents(Slice(contents))};
    ASSERT_OK(block.status());
    Status s = Exercise(block);
    EXPECT_TRUE(s.IsCorruption()) << what << ": " << s.ToString();
  };
  // shared > 0 at a restart point (there is no previous key).
  expect_corrupt(entry_block(std::string("\x02\x01\x01kv", 5)), "shared without a key");
  // Value length past the restart array.
  expect_corrupt(entry_block(std::string("\x00\x01\x7fkv", 5)), "value past the end");
  // Key length past the restart array.
  expect_corrupt(entry_block(std::string("\x00\x7f\x01kv", 5)), "key past the end");
  // A varint that never ends.
  expect_corrupt(entry_block(std::string("\x00\xff\xff\xff\xff\xff", 6)), "bad varint");
  // A second entry sharing more than the first key holds.
  expect_corrupt(entry_block(std::string("\x00\x01\x01kv\x05\x01\x01kv", 10)),
                 "shared longer than the previous key");
  // Truncated header at the end of the entries.
  expect_corrupt(entry_block(std::string("\x00\x01\x01kv\x00", 6)), "truncated header");
}

TEST(BlockTest, RandomDamageNeverCrashes) {
  Random rnd(TestSeed());
  Model m = RandomModel(&rnd, 300);
  const std::string good = Build(m, 4);
  int corrupt = 0;
  for (int trial = 0; trial < 2000; trial++) {
    std::string bad = good;
    const int kind = static_cast<int>(rnd.Uniform(3));
    if (kind == 0) {
      bad[rnd.Uniform(static_cast<uint32_t>(bad.size()))] ^=
          static_cast<char>(1 + rnd.Uniform(255));
    } else if (kind == 1) {
      for (int i = 0; i < 8; i++)
        bad[rnd.Uniform(static_cast<uint32_t>(bad.size()))] = static_cast<char>(rnd.Next());
    } else {
      bad.resize(rnd.Uniform(static_cast<uint32_t>(bad.size())));
    }
    // Bytes copied into an exact-size heap buffer so ASan sees any overrun.
    std::unique_ptr<char[]> buf(new char[bad.size() + 1]);
    memcpy(buf.get(), bad.data(), bad.size());
    Block block(BlockContents(std::move(buf), bad.size()));
    Status s = Exercise(block);
    ASSERT_TRUE(s.ok() || s.IsCorruption()) << s.ToString();
    if (!s.ok()) corrupt++;
  }
  EXPECT_GT(corrupt, 0);
}

TEST(BlockTest, KeysShorterThanTheMinimumAreCorruption) {
  BlockBuilder b(2);
  b.Add("12345678", "a");
  b.Add("123456789", "b");
  b.Add("1234567z", "c");
  b.Add("short", "d");  // bytewise order still holds: '1' < 's'
  std::string contents = b.Finish().ToString();
  Block block{BlockContents(Slice(contents))};
  std::unique_ptr<InternalIterator> it(block.NewIterator(BytewiseComparator(), 8));
  int seen = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) seen++;
  EXPECT_EQ(seen, 3);
  EXPECT_TRUE(it->status().IsCorruption());
  std::unique_ptr<InternalIterator> it2(block.NewIterator(BytewiseComparator(), 8));
  it2->Seek("zzzzzzzzz");  // the binary search meets the short restart key
  EXPECT_FALSE(it2->Valid());
  EXPECT_TRUE(it2->status().IsCorruption());
}

TEST(BlockTest, CorruptionNamesFileAndOffset) {
  std::string name = "000042.sst";
  std::string contents = "abc";
  Block block(BlockContents(Slice(contents)), &name, 4096);
  Status s = block.status();
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_NE(s.ToString().find("000042.sst"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("4096"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace shale
