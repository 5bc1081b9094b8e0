// The util basics: coding, crc32c, Hash64, Status texts, Slice and PinnableSlice, Cleanable, Arena,
// internal keys (dbformat) and the built-in comparators.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "shale/cleanable.h"
#include "shale/comparator.h"
#include "shale/slice.h"
#include "shale/status.h"
#include "tests/testutil/test_util.h"
#include "util/arena.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/dbformat.h"
#include "util/hash.h"
#include "util/random.h"

namespace shale {
namespace {

// --- coding ------------------------------------------------------------------------------

TEST(CodingTest, Fixed) {
  std::string s;
  for (uint32_t v = 0; v < 100000; v += 997) PutFixed32(&s, v);
  PutFixed64(&s, 0x0123456789abcdefull);
  ASSERT_EQ(std::string("\xef\xcd\xab\x89\x67\x45\x23\x01", 8), s.substr(s.size() - 8));
  Slice in(s);
  for (uint32_t v = 0; v < 100000; v += 997) {
    uint32_t got;
    ASSERT_TRUE(GetFixed32(&in, &got));
    ASSERT_EQ(v, got);
  }
  uint64_t v64;
  ASSERT_TRUE(GetFixed64(&in, &v64));
  ASSERT_EQ(0x0123456789abcdefull, v64);
  ASSERT_TRUE(in.empty());
  uint32_t v32;
  Slice short_input("abc");
  ASSERT_FALSE(GetFixed32(&short_input, &v32));
  ASSERT_FALSE(GetFixed64(&short_input, &v64));
  ASSERT_EQ(3u, short_input.size());
  char buf[2];
  EncodeFixed16(buf, 0xbeef);
  ASSERT_EQ(0xbeef, DecodeFixed16(buf));
}

TEST(CodingTest, Varint32RoundTrip) {
  std::string s;
  std::vector<uint32_t> values;
  for (uint32_t i = 0; i < 32 * 32; i++) values.push_back((i / 32) << (i % 32));
  values.push_back(0xffffffffu);
  for (uint32_t v : values) PutVarint32(&s, v);
  Slice in(s);
  for (uint32_t v : values) {
    const size_t before = in.size();
    uint32_t got;
    ASSERT_TRUE(GetVarint32(&in, &got));
    ASSERT_EQ(v, got);
    ASSERT_EQ(static_cast<size_t>(VarintLength(v)), before - in.size());
  }
  ASSERT_TRUE(in.empty());
  ASSERT_EQ(5, VarintLength(0xffffffffu));
}

TEST(CodingTest, Varint64RoundTrip) {
  std::vector<uint64_t> values = {0, 100, ~0ull, ~0ull - 1};
  for (int k = 0; k < 64; k++) {
    const uint64_t power = 1ull << k;
    values.push_back(power);
    values.push_back(power - 1);
    values.push_back(power + 1);
  }
  std::string s;
  for (uint64_t v : values) PutVarint64(&s, v);
  Slice in(s);
  for (uint64_t v : values) {
    uint64_t got;
    ASSERT_TRUE(GetVarint64(&in, &got));
    ASSERT_EQ(v, got);
  }
  ASSERT_TRUE(in.empty());
  ASSERT_EQ(kMaxVarint64Length, VarintLength(~0ull));
}

TEST(CodingTest, MalformedVarints) {
  uint32_t v32 = 7;
  uint64_t v64 = 7;
  // Truncated: every prefix of a multi-byte varint fails and leaves the input alone.
  std::string s;
  PutVarint32(&s, 0xffffffffu);
  for (size_t len = 0; len < s.size(); len++) {
    Slice in(s.data(), len);
    ASSERT_FALSE(GetVarint32(&in, &v32)) << len;
    ASSERT_EQ(len, in.size());
    ASSERT_EQ(nullptr, GetVarint32Ptr(s.data(), s.data() + len, &v32));
  }
  s.clear();
  PutVarint64(&s, ~0ull);
  for (size_t len = 0; len < s.size(); len++) {
    Slice in(s.data(), len);
    ASSERT_FALSE(GetVarint64(&in, &v64)) << len;
  }
  // Too long: continuation bits beyond the widest encoding.
  std::string overlong32(6, '\x80');
  overlong32.back() = '\x01';
  Slice in32(overlong32);
  ASSERT_FALSE(GetVarint32(&in32, &v32));
  std::string overlong64(11, '\xff');
  overlong64.back() = '\x01';
  Slice in64(overlong64);
  ASSERT_FALSE(GetVarint64(&in64, &v64));
  ASSERT_EQ(7u, v32);  // untouched on failure
  ASSERT_EQ(7u, v64);
}

TEST(CodingTest, LengthPrefixedSlice) {
  std::string s;
  PutLengthPrefixedSlice(&s, Slice(""));
  PutLengthPrefixedSlice(&s, Slice("foo"));
  PutLengthPrefixedSlice(&s, Slice(std::string(200, 'x')));
  Slice in(s), v;
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &v));
  ASSERT_EQ("", v.ToString());
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &v));
  ASSERT_EQ("foo", v.ToString());
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &v));
  ASSERT_EQ(std::string(200, 'x'), v.ToString());
  ASSERT_FALSE(GetLengthPrefixedSlice(&in, &v));
  Slice truncated(
      "\x05"
      "abc");  // says 5, holds 3
  ASSERT_FALSE(GetLengthPrefixedSlice(&truncated, &v));
}

// --- crc32c ------------------------------------------------------------------------------

// Bit at a time, straight from the definition: the independent reference.
uint32_t ReferenceCrc32c(const std::string& data) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : data) {
    c ^= b;
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
  }
  return ~c;
}

TEST(Crc32cTest, KnownVectors) {
  std::string buf(32, '\0');
  ASSERT_EQ(0x8a9136aau, crc32c::Value(buf.data(), buf.size()));
  buf.assign(32, '\xff');
  ASSERT_EQ(0x62a8ab43u, crc32c::Value(buf.data(), buf.size()));
  for (int i = 0; i < 32; i++) buf[i] = static_cast<char>(i);
  ASSERT_EQ(0x46dd794eu, crc32c::Value(buf.data(), buf.size()));
  for (int i = 0; i < 32; i++) buf[i] = static_cast<char>(31 - i);
  ASSERT_EQ(0x113fdb5cu, crc32c::Value(buf.data(), buf.size()));
  ASSERT_EQ(0xe3069283u, crc32c::Value("123456789", 9));
  ASSERT_EQ(0u, crc32c::Value("", 0));
}

// Whichever path Extend takes (hardware or table), every split of a buffer and every
// alignment must give the definition's value.
TEST(Crc32cTest, ExtendOverSplitsMatchesReference) {
  Random rnd(TestSeed());
  fprintf(stderr, "hardware crc32c: %d\n", crc32c::IsFastCrc32Supported());
  for (int iter = 0; iter < 50; iter++) {
    const std::string data = RandomBinaryString(&rnd, rnd.Uniform(300));
    const uint32_t want = ReferenceCrc32c(data);
    ASSERT_EQ(want, crc32c::Value(data.data(), data.size()));
    for (size_t split = 0; split <= data.size(); split += 1 + rnd.Uniform(7)) {
      uint32_t c = crc32c::Value(data.data(), split);
      c = crc32c::Extend(c, data.data() + split, data.size() - split);
      ASSERT_EQ(want, c) << "split at " << split;
    }
    // Unaligned starts.
    std::string padded = "xyz" + data;
    ASSERT_EQ(want, crc32c::Value(padded.data() + 3, data.size()));
  }
  ASSERT_NE(crc32c::Value("a", 1), crc32c::Value("foo", 3));
}

TEST(Crc32cTest, Mask) {
  const uint32_t crc = crc32c::Value("foo", 3);
  ASSERT_NE(crc, crc32c::Mask(crc));
  ASSERT_NE(crc, crc32c::Mask(crc32c::Mask(crc)));
  ASSERT_EQ(crc, crc32c::Unmask(crc32c::Mask(crc)));
  ASSERT_EQ(crc, crc32c::Unmask(crc32c::Unmask(crc32c::Mask(crc32c::Mask(crc)))));
}

// --- Hash64 ------------------------------------------------------------------------------

// Hash64 takes libxxhash's run-time dispatch for long inputs (util/hash.cc): at every
// length across the switch, at unaligned starts and with several seeds, it must give what
// the library's plain XXH3_64bits_withSeed gives, or checksums and filters written by
// one build would not be read by another.
TEST(Hash64Test, AgreesWithTheLibraryAtEveryLength) {
  Random rnd(TestSeed());
  const std::string data = RandomBinaryString(&rnd, 20000);
  // XXH3's published value for empty input and seed 0.
  ASSERT_EQ(0x2D06800538D394C2ull, Hash64("", 0, 0));
  for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{0x9e3779b97f4a7c15}}) {
    for (size_t n = 0; n < data.size() - 8; n = n < 1100 ? n + 1 : n * 9 / 8) {
      const size_t start = n % 7;
      ASSERT_EQ(XXH3_64bits_withSeed(data.data() + start, n, seed),
                Hash64(data.data() + start, n, seed))
          << "length " << n << " seed " << seed;
    }
  }
}

// --- Status ------------------------------------------------------------------------------

TEST(StatusTest, ToStringTexts) {
  EXPECT_EQ("OK", Status::OK().ToString());
  EXPECT_EQ("NotFound: ", Status::NotFound().ToString());
  EXPECT_EQ("NotFound: key", Status::NotFound("key").ToString());
  EXPECT_EQ("Corruption: bad block: 000012.sst",
            Status::Corruption("bad block", "000012.sst").ToString());
  EXPECT_EQ("Not implemented: x", Status::NotSupported("x").ToString());
  EXPECT_EQ("Invalid argument: x", Status::InvalidArgument("x").ToString());
  EXPECT_EQ("IO error: x", Status::IOError("x").ToString());
  EXPECT_EQ("Merge in progress: x", Status::MergeInProgress("x").ToString());
  EXPECT_EQ("Result incomplete: x", Status::Incomplete("x").ToString());
  EXPECT_EQ("Shutdown in progress: x", Status::ShutdownInProgress("x").ToString());
  EXPECT_EQ("Operation timed out: x", Status::TimedOut("x").ToString());
  EXPECT_EQ("Operation aborted: x", Status::Aborted("x").ToString());
  EXPECT_EQ("Resource busy: x", Status::Busy("x").ToString());
  EXPECT_EQ("Operation expired: x", Status::Expired("x").ToString());
  EXPECT_EQ("Operation failed. Try again.: x", Status::TryAgain("x").ToString());
  EXPECT_EQ("IO error: No space left on device", Status::NoSpace().ToString());
  EXPECT_EQ("IO error: No space left on device: f", Status::NoSpace("f").ToString());
  EXPECT_EQ("IO error: No such file or directory: open: /db/CURRENT",
            Status::PathNotFound("open", "/db/CURRENT").ToString());
}

TEST(StatusTest, PredicatesCopyAndMove) {
  Status s = Status::PathNotFound("gone");
  EXPECT_TRUE(s.IsIOError());
  EXPECT_TRUE(s.IsPathNotFound());
  EXPECT_FALSE(s.IsNotFound());
  EXPECT_FALSE(s.IsNoSpace());
  EXPECT_TRUE(Status::NotFound(Status::kPathNotFound).IsPathNotFound());
  EXPECT_TRUE(Status::NoSpace().IsNoSpace());
  EXPECT_STREQ("gone", s.getState());
  EXPECT_EQ(nullptr, Status::IOError().getState());

  Status copy = s;
  EXPECT_EQ(s.ToString(), copy.ToString());
  EXPECT_TRUE(copy == s);
  EXPECT_TRUE(copy != Status::IOError("gone"));  // same code, other subcode
  Status moved = std::move(copy);
  EXPECT_EQ("IO error: No such file or directory: gone", moved.ToString());
  copy = Status::OK();
  EXPECT_TRUE(copy.ok());
  copy = moved;
  Status& alias = copy;
  copy = alias;  // self-assignment keeps the message
  EXPECT_STREQ("gone", copy.getState());

  Status hard(Status::Corruption("c"), Status::kHardError);
  EXPECT_EQ(Status::kHardError, hard.severity());
  EXPECT_TRUE(hard.IsCorruption());
  EXPECT_EQ(Status::kHardError, Status(hard).severity());
  EXPECT_EQ(Status::kNoError, Status::Corruption("c").severity());
}

// --- Slice -------------------------------------------------------------------------------

TEST(SliceTest, Basics) {
  Slice empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(0, empty.compare(Slice("")));
  Slice s("hello world");
  EXPECT_EQ(11u, s.size());
  EXPECT_EQ('w', s[6]);
  EXPECT_TRUE(s.starts_with("hello"));
  EXPECT_TRUE(s.starts_with(""));
  EXPECT_FALSE(s.starts_with("world"));
  EXPECT_TRUE(s.ends_with("world"));
  EXPECT_FALSE(s.ends_with("hello world!"));
  EXPECT_EQ(6u, s.difference_offset(Slice("hello there")));
  EXPECT_EQ(0u, s.difference_offset(Slice("")));
  Slice t = s;
  t.remove_prefix(6);
  EXPECT_EQ("world", t.ToString());
  t.remove_suffix(2);
  EXPECT_EQ("wor", t.ToStringView());
  EXPECT_EQ("776F72", t.ToString(true));
  EXPECT_EQ(Slice(std::string_view("wor")), t);
  EXPECT_NE(Slice("wo"), t);
  t.clear();
  EXPECT_TRUE(t.empty());
}

TEST(SliceTest, CompareIsUnsignedAndLengthAware) {
  EXPECT_LT(Slice("a").compare(Slice("b")), 0);
  EXPECT_GT(Slice("b").compare(Slice("a")), 0);
  EXPECT_LT(Slice("a").compare(Slice("ab")), 0);
  EXPECT_GT(Slice("ab").compare(Slice("a")), 0);
  EXPECT_EQ(0, Slice("ab").compare(Slice("ab")));
  EXPECT_GT(Slice("\xff").compare(Slice("\x01")), 0);
  EXPECT_EQ(Slice(std::string("a\0b", 3)), Slice(std::string("a\0b", 3)));
  EXPECT_NE(Slice(std::string("a\0b", 3)), Slice(std::string("a\0c", 3)));
}

// --- Cleanable and PinnableSlice ----------------------------------------------------------

void Increment(void* arg1, void* arg2) {
  ++*static_cast<int*>(arg1);
  if (arg2 != nullptr) ++*static_cast<int*>(arg2);
}

TEST(CleanableTest, RunsEveryCleanupOnce) {
  int a = 0, b = 0;
  {
    Cleanable c;
    EXPECT_FALSE(c.HasCleanups());
    c.RegisterCleanup(nullptr, &a, nullptr);  // ignored
    EXPECT_FALSE(c.HasCleanups());
    c.RegisterCleanup(Increment, &a, nullptr);
    c.RegisterCleanup(Increment, &a, &b);
    c.RegisterCleanup(Increment, &b, nullptr);
    EXPECT_TRUE(c.HasCleanups());
  }
  EXPECT_EQ(2, a);
  EXPECT_EQ(2, b);

  a = 0;
  Cleanable r;
  r.RegisterCleanup(Increment, &a, nullptr);
  r.Reset();
  EXPECT_EQ(1, a);
  EXPECT_FALSE(r.HasCleanups());
  r.Reset();
  EXPECT_EQ(1, a);
}

TEST(CleanableTest, DelegationMovesEveryCleanup) {
  for (int from_count = 0; from_count < 4; from_count++) {
    for (int to_count = 0; to_count < 3; to_count++) {
      int from_runs = 0, to_runs = 0;
      {
        Cleanable to;
        for (int i = 0; i < to_count; i++) to.RegisterCleanup(Increment, &to_runs, nullptr);
        {
          Cleanable from;
          for (int i = 0; i < from_count; i++) from.RegisterCleanup(Increment, &from_runs, nullptr);
          from.DelegateCleanupsTo(&to);
          EXPECT_FALSE(from.HasCleanups());
        }
        EXPECT_EQ(0, from_runs) << from_count << " -> " << to_count;
      }
      EXPECT_EQ(from_count, from_runs);
      EXPECT_EQ(to_count, to_runs);
    }
  }
}

TEST(CleanableTest, Move) {
  int runs = 0;
  {
    Cleanable a;
    a.RegisterCleanup(Increment, &runs, nullptr);
    a.RegisterCleanup(Increment, &runs, nullptr);
    Cleanable b(std::move(a));
    EXPECT_FALSE(a.HasCleanups());  // NOLINT(bugprone-use-after-move): moved-from is empty
    Cleanable c;
    int other = 0;
    c.RegisterCleanup(Increment, &other, nullptr);
    c = std::move(b);
    EXPECT_EQ(1, other);  // c's own cleanup ran when it was overwritten
    EXPECT_EQ(0, runs);
  }
  EXPECT_EQ(2, runs);
}

TEST(PinnableSliceTest, PinSelfCopies) {
  PinnableSlice p;
  std::string src = "value";
  p.PinSelf(src);
  src[0] = 'X';
  EXPECT_EQ("value", p.ToString());
  EXPECT_FALSE(p.IsPinned());
  p.remove_suffix(2);
  EXPECT_EQ("val", p.ToString());
  EXPECT_EQ("val", *p.GetSelf());
  p.Reset();
  EXPECT_TRUE(p.empty());

  std::string external;
  PinnableSlice q(&external);
  q.GetSelf()->assign("written by the callee");
  q.PinSelf();
  EXPECT_EQ("written by the callee", q.ToString());
  EXPECT_EQ(external.data(), q.data());
}

TEST(PinnableSliceTest, PinSliceRunsCleanupAtReset) {
  int released = 0;
  const std::string block = "block contents";
  PinnableSlice p;
  p.PinSlice(Slice(block).ToStringView().substr(6), Increment, &released, nullptr);
  EXPECT_TRUE(p.IsPinned());
  EXPECT_EQ(block.data() + 6, p.data());  // no copy
  p.remove_suffix(4);
  EXPECT_EQ("contents", Slice(block).ToStringView().substr(6));
  EXPECT_EQ("cont", p.ToString());
  EXPECT_EQ(0, released);
  p.Reset();
  EXPECT_EQ(1, released);
  EXPECT_FALSE(p.IsPinned());
  p.PinSelf("again");  // reusable after Reset
  EXPECT_EQ("again", p.ToString());
}

TEST(PinnableSliceTest, PinSliceTakesOverCleanable) {
  int released = 0;
  {
    PinnableSlice p;
    {
      Cleanable iter;  // say, an iterator holding a cache handle
      iter.RegisterCleanup(Increment, &released, nullptr);
      iter.RegisterCleanup(Increment, &released, nullptr);
      p.PinSlice("v", &iter);
    }
    EXPECT_EQ(0, released);
  }
  EXPECT_EQ(2, released);
}

TEST(PinnableSliceTest, Move) {
  int released = 0;
  {
    PinnableSlice a;
    a.PinSlice("pinned", Increment, &released, nullptr);
    PinnableSlice b(std::move(a));
    EXPECT_EQ("pinned", b.ToString());
    EXPECT_TRUE(b.IsPinned());
    EXPECT_FALSE(a.IsPinned());  // NOLINT(bugprone-use-after-move)
    EXPECT_TRUE(a.empty());      // NOLINT(bugprone-use-after-move)
    PinnableSlice c;
    c = std::move(b);
    EXPECT_EQ(0, released);
    EXPECT_EQ("pinned", c.ToString());
  }
  EXPECT_EQ(1, released);

  for (const std::string& v : {std::string("short"), std::string(1000, 'L')}) {
    PinnableSlice a;
    a.PinSelf(v);
    PinnableSlice b(std::move(a));
    EXPECT_EQ(v, b.ToString());
    EXPECT_EQ(b.GetSelf()->data(), b.data());  // points into its own buffer
    PinnableSlice c;
    c.PinSelf("overwritten");
    c = std::move(b);
    EXPECT_EQ(v, c.ToString());
  }
}

TEST(PinnableSliceTest, RemovePrefixOfOwnedValue) {
  PinnableSlice a;
  a.PinSelf("0123456789");
  a.remove_prefix(3);
  EXPECT_EQ("3456789", a.ToString());
  a.remove_suffix(2);
  EXPECT_EQ("34567", a.ToString());
  PinnableSlice b(std::move(a));
  EXPECT_EQ("34567", b.ToString());

  PinnableSlice p;
  p.PinSlice("0123456789", nullptr);
  p.remove_prefix(3);
  p.remove_suffix(2);
  EXPECT_EQ("34567", p.ToString());
  PinnableSlice q(std::move(p));
  EXPECT_EQ("34567", q.ToString());
}

// --- Arena -------------------------------------------------------------------------------

TEST(ArenaTest, AllocationsHoldTheirBytes) {
  Arena arena;
  EXPECT_EQ(0u, arena.MemoryUsage());
  Random rnd(TestSeed());
  std::vector<std::pair<char*, size_t>> allocated;
  size_t bytes = 0;
  for (int i = 0; i < 2000; i++) {
    size_t n = i % 100 == 0 ? 1 + rnd.Uniform(20000) : 1 + rnd.Skewed(10);
    char* p = rnd.OneIn(3) ? arena.AllocateAligned(n) : arena.Allocate(n);
    for (size_t k = 0; k < n; k++) p[k] = static_cast<char>(i % 256);
    allocated.emplace_back(p, n);
    bytes += n;
    ASSERT_GE(arena.MemoryUsage(), bytes);
  }
  for (size_t i = 0; i < allocated.size(); i++) {
    auto [p, n] = allocated[i];
    for (size_t k = 0; k < n; k++) ASSERT_EQ(static_cast<char>(i % 256), p[k]) << i;
  }
  EXPECT_LE(arena.MemoryUsage(), bytes * 2 + 10 * Arena::kDefaultBlockSize);
}

TEST(ArenaTest, AlignedIsAligned) {
  Arena arena;
  for (int i = 0; i < 1000; i++) {
    arena.Allocate(1 + i % 7);  // disturb the alignment
    char* p = arena.AllocateAligned(1 + i % 33);
    ASSERT_EQ(0u, reinterpret_cast<uintptr_t>(p) % alignof(std::max_align_t));
  }
}

TEST(ArenaTest, BlockSizeFollowsTheOptionOrTheWriteBuffer) {
  // 0: an eighth of the write buffer, in whole 4 KiB pages, at most one huge page.
  EXPECT_EQ(8u << 20 >> 3, Arena::BlockSizeFor(0, 8 << 20));
  EXPECT_EQ(Arena::kHugePageSize, Arena::BlockSizeFor(0, 64 << 20));
  EXPECT_EQ(Arena::kHugePageSize, Arena::BlockSizeFor(0, 1ull << 34));
  EXPECT_EQ(Arena::kMinBlockSize, Arena::BlockSizeFor(0, 4 << 10));
  EXPECT_EQ(12288u, Arena::BlockSizeFor(0, 80000));  // 10000 rounded up to 3 pages
  // An explicit size wins, rounded up to a page.
  EXPECT_EQ(8192u, Arena::BlockSizeFor(5000, 64 << 20));
  EXPECT_EQ(4u << 20, Arena::BlockSizeFor(4 << 20, 1 << 20));
  EXPECT_EQ(Arena::kMinBlockSize, Arena::BlockSizeFor(1, 64 << 20));
}

TEST(ArenaTest, BlocksHaveTheConfiguredSize) {
  Arena arena(64 << 10);
  EXPECT_EQ(64u << 10, arena.block_size());
  arena.Allocate(100);
  const size_t one_block = arena.MemoryUsage();
  EXPECT_GE(one_block, 64u << 10);
  EXPECT_LT(one_block, (64u << 10) + 1024);
  // Filling the first block takes a second one of the same size.
  for (int i = 0; i < 700; i++) arena.Allocate(100);
  EXPECT_EQ(2 * one_block, arena.MemoryUsage());
  // An object over a quarter of a block that does not fit the current block's tail gets a
  // block of its own, sized to it; the tail stays in use for small objects.
  for (int i = 0; i < 560; i++) arena.Allocate(100);  // 1260 allocations: 126000 bytes
  arena.Allocate(20 << 10);
  EXPECT_GE(arena.MemoryUsage(), 2 * one_block + (20 << 10));
  EXPECT_LT(arena.MemoryUsage(), 2 * one_block + (21 << 10));
  arena.Allocate(100);
  EXPECT_LT(arena.MemoryUsage(), 2 * one_block + (21 << 10));
}

// A dead arena's full-size blocks go to its pool, up to the pool's budget, and the next
// arena of that block size starts from them; other sizes and over-budget blocks are freed.
TEST(ArenaTest, PoolReusesBlocksWithinItsBudget) {
  constexpr size_t kBlock = 64 << 10;
  constexpr size_t kQuarter = kBlock / 4;  // the largest object that shares a block
  auto pool = std::make_shared<ArenaBlockPool>(2 * kBlock);
  std::set<char*> old_blocks;
  {
    Arena arena(kBlock, 0, pool);
    for (int i = 0; i < 12; i++) {
      char* p = arena.Allocate(kQuarter);
      memset(p, 'x', kQuarter);
      if (i % 4 == 0) old_blocks.insert(p);  // each block's first object is its start
    }
    old_blocks.insert(arena.Allocate(kBlock));  // a block of its own, also kBlock bytes
    EXPECT_EQ(0u, pool->kept_bytes());
  }
  // Four blocks of kBlock bytes died; the budget keeps two.
  EXPECT_EQ(2 * kBlock, pool->kept_bytes());
  {
    Arena other_size(2 * kBlock, 0, pool);
    other_size.Allocate(100);
    EXPECT_EQ(2 * kBlock, pool->kept_bytes()) << "a block of another size was handed out";
  }
  EXPECT_EQ(2 * kBlock, pool->kept_bytes()) << "the budget was exceeded";
  Arena next(kBlock, 0, pool);
  char* a = next.Allocate(kQuarter);
  EXPECT_EQ(kBlock, pool->kept_bytes());
  for (int i = 0; i < 3; i++) next.Allocate(kQuarter);
  char* b = next.Allocate(kQuarter);
  EXPECT_EQ(0u, pool->kept_bytes());
  for (int i = 0; i < 4; i++) next.Allocate(kQuarter);  // the pool is empty: a new block
  EXPECT_EQ(0u, pool->kept_bytes());
  EXPECT_EQ(1u, old_blocks.count(a));
  EXPECT_EQ(1u, old_blocks.count(b));
}

TEST(ArenaTest, HugePageBlocksAreAlignedToHugePages) {
  Arena arena(Arena::kHugePageSize);
  char* first = arena.AllocateAligned(64);
  EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(first) % Arena::kHugePageSize);
  // The whole block is usable.
  std::vector<char*> all;
  for (size_t i = 0; i < Arena::kHugePageSize / 4096 - 1; i++) {
    char* p = arena.Allocate(4096);
    memset(p, static_cast<int>(i), 4096);
    all.push_back(p);
  }
  for (size_t i = 0; i < all.size(); i++) ASSERT_EQ(static_cast<char>(i), all[i][4095]) << i;
  EXPECT_LT(arena.MemoryUsage(), 2 * Arena::kHugePageSize);
}

TEST(ArenaTest, ReservedHugePagesFallBackToOrdinaryMemory) {
  // Asks for blocks from reserved huge pages; where the system has none (the usual case,
  // nr_hugepages = 0) the blocks come from ordinary memory. Either way they work and are
  // counted.
  Arena arena(Arena::kHugePageSize, Arena::kHugePageSize);
  size_t bytes = 0;
  for (int i = 0; i < 3000; i++) {
    char* p = arena.Allocate(1000);
    memset(p, i & 0xff, 1000);
    bytes += 1000;
  }
  EXPECT_GE(arena.MemoryUsage(), bytes);
  EXPECT_LE(arena.MemoryUsage(), bytes + 2 * Arena::kHugePageSize);
}

// --- dbformat ----------------------------------------------------------------------------

TEST(DbFormatTest, InternalKeyEncodingAndParse) {
  const std::vector<std::string> keys = {"", "k", "hello", std::string(300, 'z')};
  const std::vector<SequenceNumber> seqs = {0, 1, 100, (1ull << 32) + 5, kMaxSequenceNumber};
  for (const auto& k : keys) {
    for (SequenceNumber seq : seqs) {
      for (ValueType t : {kTypeValue, kTypeDeletion, kTypeSingleDeletion, kTypeMerge}) {
        const std::string ikey = IKey(k, seq, t);
        ASSERT_EQ(k.size() + 8, ikey.size());
        ParsedInternalKey parsed;
        ASSERT_OK(ParseInternalKey(ikey, &parsed));
        ASSERT_EQ(k, parsed.user_key.ToString());
        ASSERT_EQ(seq, parsed.sequence);
        ASSERT_EQ(t, parsed.type);
        ASSERT_EQ(k, ExtractUserKey(ikey).ToString());
        ASSERT_EQ(seq, ExtractSequence(ikey));
        ASSERT_EQ(t, ExtractValueType(ikey));
      }
    }
  }
}

TEST(DbFormatTest, ParseInternalKeyRejectsCorruption) {
  ParsedInternalKey parsed;
  Status s = ParseInternalKey(Slice("short"), &parsed);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  ASSERT_TRUE(ParseInternalKey(Slice(""), &parsed).IsCorruption());
  std::string bad = "user";
  PutFixed64(&bad, PackSequenceAndType(5, static_cast<ValueType>(0x55)));
  s = ParseInternalKey(bad, &parsed);
  ASSERT_TRUE(s.IsCorruption());
  ASSERT_NE(std::string::npos, s.ToString().find("unknown value type")) << s.ToString();
  // kTypeLogData only lives in WAL batches.
  ASSERT_TRUE(ParseInternalKey(IKey("k", 1, kTypeLogData), &parsed).IsCorruption());
}

TEST(DbFormatTest, InternalKeyOrder) {
  InternalKeyComparator icmp(BytewiseComparator());
  // Already in the expected order: user key ascending, then newest first.
  const std::vector<std::string> ordered = {
      IKey("a", kMaxSequenceNumber, kTypeValue),
      IKey("a", 100, kTypeValue),
      IKey("a", 100, kTypeDeletion),
      IKey("a", 1, kTypeMerge),
      IKey("a", 0, kTypeValue),
      IKey("ab", 200, kTypeValue),
      IKey("b", 300, kTypeValue),
      IKey("\xff", 0, kTypeDeletion),
  };
  for (size_t i = 0; i < ordered.size(); i++) {
    for (size_t j = 0; j < ordered.size(); j++) {
      const int want = i < j ? -1 : (i > j ? 1 : 0);
      const int got = icmp.Compare(ordered[i], ordered[j]);
      ASSERT_EQ(want, got < 0 ? -1 : (got > 0 ? 1 : 0)) << i << " vs " << j;
      ParsedInternalKey pi, pj;
      ASSERT_OK(ParseInternalKey(ordered[i], &pi));
      ASSERT_OK(ParseInternalKey(ordered[j], &pj));
      const int pgot = icmp.Compare(pi, pj);
      ASSERT_EQ(want, pgot < 0 ? -1 : (pgot > 0 ? 1 : 0)) << i << " vs " << j;
    }
  }
  // A seek key sorts before every entry of its user key at that sequence.
  ASSERT_LT(icmp.Compare(IKey("a", 100, kValueTypeForSeek), IKey("a", 100, kTypeValue)), 0);
  ASSERT_EQ(std::string("rocksdb.InternalKeyComparator:leveldb.BytewiseComparator"), icmp.Name());

  InternalKeyComparator rcmp(ReverseBytewiseComparator());
  ASSERT_GT(rcmp.Compare(IKey("a", 1, kTypeValue), IKey("b", 1, kTypeValue)), 0);
  ASSERT_LT(rcmp.Compare(IKey("a", 2, kTypeValue), IKey("a", 1, kTypeValue)), 0);
}

TEST(DbFormatTest, FindShortestSeparatorAndSuccessor) {
  InternalKeyComparator icmp(BytewiseComparator());
  auto shorten = [&](const std::string& s, const std::string& l) {
    std::string r = s;
    icmp.FindShortestSeparator(&r, l);
    return r;
  };
  // Shortened to a user key physically between, with the earliest possible sequence.
  ASSERT_EQ(IKey("g", kMaxSequenceNumber, kValueTypeForSeek),
            shorten(IKey("foo", 100, kTypeValue), IKey("hello", 200, kTypeValue)));
  // Same user key, one a prefix of the other, or misordered: unchanged.
  ASSERT_EQ(IKey("foo", 100, kTypeValue),
            shorten(IKey("foo", 100, kTypeValue), IKey("foo", 99, kTypeValue)));
  ASSERT_EQ(IKey("foo", 100, kTypeValue),
            shorten(IKey("foo", 100, kTypeValue), IKey("foobar", 200, kTypeValue)));
  ASSERT_EQ(IKey("foobar", 100, kTypeValue),
            shorten(IKey("foobar", 100, kTypeValue), IKey("foo", 200, kTypeValue)));
  ASSERT_EQ(IKey("foo", 100, kTypeValue),
            shorten(IKey("foo", 100, kTypeValue), IKey("fop", 200, kTypeValue)));

  std::string k = IKey("foo", 100, kTypeValue);
  icmp.FindShortSuccessor(&k);
  ASSERT_EQ(IKey("g", kMaxSequenceNumber, kValueTypeForSeek), k);
  k = IKey("\xff\xff", 100, kTypeValue);
  icmp.FindShortSuccessor(&k);
  ASSERT_EQ(IKey("\xff\xff", 100, kTypeValue), k);

  // Random pairs: the result always lies in [start, limit).
  Random rnd(TestSeed());
  for (int i = 0; i < 2000; i++) {
    std::string a = IKey(RandomBinaryString(&rnd, rnd.Uniform(6)), rnd.Uniform(1000), kTypeValue);
    std::string b = IKey(RandomBinaryString(&rnd, rnd.Uniform(6)), rnd.Uniform(1000), kTypeValue);
    if (icmp.Compare(a, b) > 0) std::swap(a, b);
    if (icmp.Compare(a, b) == 0) continue;
    std::string r = a;
    icmp.FindShortestSeparator(&r, b);
    ASSERT_LE(icmp.Compare(a, r), 0);
    ASSERT_LT(icmp.Compare(r, b), 0);
    ASSERT_LE(r.size(), a.size());
    std::string succ = a;
    icmp.FindShortSuccessor(&succ);
    ASSERT_LE(icmp.Compare(a, succ), 0);
  }
}

TEST(DbFormatTest, LookupKey) {
  for (size_t len : {0, 5, 191, 192, 500}) {
    const std::string user_key(len, 'u');
    LookupKey lk(user_key, 77);
    ASSERT_EQ(user_key, lk.user_key().ToString());
    ASSERT_EQ(IKey(user_key, 77, kValueTypeForSeek), lk.internal_key().ToString());
    Slice mk = lk.memtable_key();
    uint32_t ilen;
    ASSERT_TRUE(GetVarint32(&mk, &ilen));
    ASSERT_EQ(len + 8, ilen);
    ASSERT_EQ(lk.internal_key(), mk);
  }
}

TEST(DbFormatTest, InternalKeyClassAndDebugString) {
  InternalKey k("user", 5, kTypeValue);
  ASSERT_TRUE(k.Valid());
  ASSERT_EQ("user", k.user_key().ToString());
  ASSERT_EQ("'user' seq:5, type:1", k.DebugString());
  InternalKey copy;
  ASSERT_FALSE(copy.Valid());
  ASSERT_TRUE(copy.DecodeFrom(k.Encode()));
  ASSERT_EQ(k.Encode(), copy.Encode());
  ParsedInternalKey p("other", 9, kTypeDeletion);
  copy.SetFrom(p);
  ASSERT_EQ(IKey("other", 9, kTypeDeletion), copy.Encode().ToString());
  copy.Clear();
  ASSERT_FALSE(copy.DecodeFrom(Slice()));
  InternalKey bad;
  ASSERT_TRUE(bad.DecodeFrom(Slice("nonsense")));
  ASSERT_EQ(0u, bad.DebugString().find("(bad)"));
}

// --- comparators -------------------------------------------------------------------------

TEST(ComparatorTest, Bytewise) {
  const Comparator* c = BytewiseComparator();
  ASSERT_STREQ("leveldb.BytewiseComparator", c->Name());
  ASSERT_EQ(c, BytewiseComparator());
  ASSERT_LT(c->Compare("a", "b"), 0);
  ASSERT_LT(c->Compare("", "a"), 0);
  ASSERT_LT(c->Compare("\x01", "\xff"), 0);  // unsigned bytes
  ASSERT_EQ(0, c->Compare("abc", "abc"));
  ASSERT_TRUE(c->Equal("abc", "abc"));
  ASSERT_FALSE(c->Equal("abc", "abd"));

  auto sep = [c](std::string s, const std::string& l) {
    c->FindShortestSeparator(&s, l);
    return s;
  };
  ASSERT_EQ("abd", sep("abcd", "abzz"));
  ASSERT_EQ("abc", sep("abc", "abd"));  // no room between c and d
  ASSERT_EQ("ab", sep("ab", "abc"));    // prefix
  ASSERT_EQ("abc", sep("abc", "ab"));   // limit is a prefix
  ASSERT_EQ(
      "a\xff"
      "x",
      sep("a\xff"
          "x",
          "b"));  // 0xff cannot be incremented
  ASSERT_EQ("b", sep("a\xff"
                     "x",
                     "c"));

  auto succ = [c](std::string s) {
    c->FindShortSuccessor(&s);
    return s;
  };
  ASSERT_EQ("b", succ("abc"));
  ASSERT_EQ(
      "\xff\xff"
      "b",
      succ("\xff\xff"
           "a\xff"));
  ASSERT_EQ("\xff\xff", succ("\xff\xff"));
  ASSERT_EQ("", succ(""));
}

TEST(ComparatorTest, ReverseBytewise) {
  const Comparator* c = ReverseBytewiseComparator();
  ASSERT_STREQ("rocksdb.ReverseBytewiseComparator", c->Name());
  ASSERT_GT(c->Compare("a", "b"), 0);
  ASSERT_GT(c->Compare("", "a"), 0);
  ASSERT_LT(c->Compare("\xff", "\x01"), 0);
  ASSERT_EQ(0, c->Compare("x", "x"));
  ASSERT_TRUE(c->Equal("x", "x"));
  std::string s = "abcd";
  c->FindShortestSeparator(&s, "ab");  // must stay in [s, limit) of the reverse order
  ASSERT_LE(c->Compare("abcd", s), 0);
  ASSERT_LT(c->Compare(s, "ab"), 0);
  std::string k = "abc";
  c->FindShortSuccessor(&k);
  ASSERT_LE(c->Compare("abc", k), 0);
  std::vector<std::string> v = {"b", "a", "c", "ab"};
  std::sort(v.begin(), v.end(),
            [c](const std::string& x, const std::string& y) { return c->Compare(x, y) < 0; });
  ASSERT_EQ((std::vector<std::string>{"c", "b", "ab", "a"}), v);
}

}  // namespace
}  // namespace shale
