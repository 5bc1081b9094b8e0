// A restart point that does not fall on an entry boundary (or one whose entry shares a
// prefix) is Corruption for every scan: forward scans walk entries one after another,
// Prev and Seek start from restart points, and with such a block the two would parse
// different entries, so a forward scan could answer with OK what a backward one cannot.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "shale/comparator.h"
#include "table/block.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/internal_iterator.h"

namespace shale {
namespace {

// Entries a->1, b->2, c->3 (5 bytes each, at offsets 0, 5, 10) and the given restarts.
std::string ThreeEntries(std::initializer_list<uint32_t> restarts) {
  std::string b(
      "\x00\x01\x01"
      "a1"
      "\x00\x01\x01"
      "b2"
      "\x00\x01\x01"
      "c3",
      15);
  for (uint32_t r : restarts) PutFixed32(&b, r);
  PutFixed32(&b, static_cast<uint32_t>(restarts.size()));
  return b;
}

Status ForwardScan(const std::string& contents, int* entries) {
  Block block{BlockContents(Slice(contents))};
  if (!block.status().ok()) return block.status();
  std::unique_ptr<InternalIterator> it(block.NewIterator(BytewiseComparator()));
  *entries = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) (*entries)++;
  return it->status();
}

TEST(BlockRestartTest, WellFormedRestartsScan) {
  int n = 0;
  ASSERT_OK(ForwardScan(ThreeEntries({0, 5, 10}), &n));
  EXPECT_EQ(n, 3);
  ASSERT_OK(ForwardScan(ThreeEntries({0, 10}), &n));
  EXPECT_EQ(n, 3);
}

TEST(BlockRestartTest, RestartInsideAnEntryIsCorruption) {
  int n = 0;
  Status s = ForwardScan(ThreeEntries({0, 6}), &n);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString() << " after " << n << " entries";
}

TEST(BlockRestartTest, RestartInsideTheLastEntryIsCorruption) {
  int n = 0;
  Status s = ForwardScan(ThreeEntries({0, 5, 12}), &n);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString() << " after " << n << " entries";
}

TEST(BlockRestartTest, RestartAtTheEndIsCorruption) {
  // SeekToLast would start there and find nothing, with OK, while a forward scan finds 3.
  int n = 0;
  Status s = ForwardScan(ThreeEntries({0, 15}), &n);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString() << " after " << n << " entries";
}

TEST(BlockRestartTest, SharedPrefixAtARestartIsCorruption) {
  // b shares one byte with a, yet a restart point says b starts afresh.
  std::string b(
      "\x00\x02\x01"
      "ka1"
      "\x01\x01\x01"
      "b2",
      11);
  PutFixed32(&b, 0);
  PutFixed32(&b, 6);
  PutFixed32(&b, 2);
  int n = 0;
  Status s = ForwardScan(b, &n);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString() << " after " << n << " entries";
}

}  // namespace
}  // namespace shale
