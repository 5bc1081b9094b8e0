// The data block hash index (data_block_hash_index.h): blocks built with it read back
// entry for entry and answer SeekForGet for every key; a damaged hash section is
// Corruption, never a crash; blocks in the old layout (no index, top bit of the count
// clear) still read; blocks with too many restarts are written without it; and on random
// tables a Get through the hash index hands over exactly what a binary-search Get does
// (and what a model says), for present and absent keys at random snapshots.
#include "table/data_block_hash_index.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "shale/comparator.h"
#include "table/block.h"
#include "table/block_builder.h"
#include "table/table_builder.h"
#include "table/table_reader.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/dbformat.h"
#include "util/random.h"

namespace shale {
namespace {

const InternalKeyComparator kIcmp(BytewiseComparator());

struct ByIcmp {
  bool operator()(const std::string& a, const std::string& b) const {
    return kIcmp.Compare(a, b) < 0;
  }
};
using Entries = std::map<std::string, std::string, ByIcmp>;

// User keys sharing long prefixes ("row" + a number), with 1-3 versions of mixed types.
Entries RandomEntries(Random* rnd, int users, int spacing) {
  Entries e;
  for (int u = 0; u < users; u++) {
    const std::string user = "row" + std::to_string(100000 + u * spacing);
    const int versions = 1 + static_cast<int>(rnd->Uniform(3));
    for (int v = 0; v < versions; v++) {
      const auto type = rnd->OneIn(6) ? kTypeDeletion : rnd->OneIn(6) ? kTypeMerge : kTypeValue;
      e[IKey(user, 1 + rnd->Uniform(1000), type)] = RandomString(rnd, rnd->Uniform(20));
    }
  }
  return e;
}

std::string BuildBlock(const Entries& entries, int restart_interval, bool hash, double ratio) {
  BlockBuilder builder(restart_interval, hash, ratio);
  for (const auto& [k, v] : entries) builder.Add(k, v);
  return builder.Finish().ToString();
}

// Where SeekForGet leaves an iterator of a block: the key it points at ("" when not valid),
// or "absent" when it says the lookup is over.
std::string SeekForGetAt(const Block& block, const Slice& target) {
  std::unique_ptr<InternalIterator> it(block.NewIterator(&kIcmp, 8));
  if (!block.SeekForGet(it.get(), target, BytewiseComparator())) return "absent";
  EXPECT_OK(it->status());
  return it->Valid() ? it->key().ToString() : "";
}

TEST(DataBlockHashIndexTest, RoundTripAndPointLookups) {
  const uint64_t seed = TestSeed();
  Random rnd(static_cast<uint32_t>(seed));
  for (int restart_interval : {1, 2, 16}) {
    for (double ratio : {0.5, 0.75, 4.0}) {
      SCOPED_TRACE("restart_interval " + std::to_string(restart_interval) + ", ratio " +
                   std::to_string(ratio));
      const Entries entries = RandomEntries(&rnd, 40, 2);
      const std::string bytes = BuildBlock(entries, restart_interval, true, ratio);
      Block block{BlockContents(Slice(bytes))};
      ASSERT_OK(block.status());
      ASSERT_TRUE(block.has_hash_index());
      const uint32_t footer = DecodeFixed32(bytes.data() + bytes.size() - 4);
      EXPECT_NE(0u, footer & kHashIndexFooterBit);
      // The same entries as without the index.
      std::unique_ptr<InternalIterator> it(block.NewIterator(&kIcmp, 8));
      auto e = entries.begin();
      for (it->SeekToFirst(); it->Valid(); it->Next(), ++e) {
        ASSERT_NE(e, entries.end());
        ASSERT_EQ(e->first, it->key().ToString());
        ASSERT_EQ(e->second, it->value().ToString());
      }
      ASSERT_OK(it->status());
      ASSERT_EQ(e, entries.end());
      // Every present key is found where Seek finds it; absent user keys (the odd numbers,
      // and past both ends) are absent or left to the next block.
      for (const auto& [k, v] : entries) {
        ASSERT_EQ(k, SeekForGetAt(block, k)) << Slice(k).ToString(true);
        const std::string newest =
            IKey(ExtractUserKey(k).ToString(), kMaxSequenceNumber, kValueTypeForSeek);
        EXPECT_EQ(entries.lower_bound(newest)->first, SeekForGetAt(block, newest));
      }
      for (int u = -1; u <= 80; u += 2) {
        const std::string target =
            IKey("row" + std::to_string(100000 + u), kMaxSequenceNumber, kValueTypeForSeek);
        const std::string at = SeekForGetAt(block, target);
        EXPECT_TRUE(at == "absent" || at.empty() || ExtractUserKey(at) != ExtractUserKey(target))
            << at;
      }
      // Past the last key: left to the next block.
      EXPECT_EQ("", SeekForGetAt(block, IKey("row999999", kMaxSequenceNumber, kValueTypeForSeek)));
    }
  }
}

TEST(DataBlockHashIndexTest, TooManyRestartsOrNoneAskedMeansNoIndex) {
  Random rnd(301);
  const Entries entries = RandomEntries(&rnd, 300, 1);
  ASSERT_GT(entries.size(), kMaxRestartsForHashIndex);
  for (bool hash : {false, true}) {
    const std::string bytes = BuildBlock(entries, 1, hash, 0.75);
    Block block{BlockContents(Slice(bytes))};
    ASSERT_OK(block.status());
    EXPECT_FALSE(block.has_hash_index());
    EXPECT_EQ(entries.size(), DecodeFixed32(bytes.data() + bytes.size() - 4));
    const std::string& k = entries.rbegin()->first;
    EXPECT_EQ(k, SeekForGetAt(block, k));
  }
}

// A block laid out by hand as every block was before the index existed.
TEST(DataBlockHashIndexTest, OldLayoutStillReads) {
  std::string bytes;
  const std::string k1 = IKey("apple", 7), k2 = IKey("apricot", 5);
  for (const auto& [shared, key, value] :
       {std::tuple<size_t, std::string, std::string>{0, k1, "red"}, {2, k2, "orange"}}) {
    PutVarint32(&bytes, static_cast<uint32_t>(shared));
    PutVarint32(&bytes, static_cast<uint32_t>(key.size() - shared));
    PutVarint32(&bytes, static_cast<uint32_t>(value.size()));
    bytes += key.substr(shared) + value;
  }
  PutFixed32(&bytes, 0);  // one restart point, at 0
  PutFixed32(&bytes, 1);
  Block block{BlockContents(Slice(bytes))};
  ASSERT_OK(block.status());
  EXPECT_FALSE(block.has_hash_index());
  EXPECT_EQ(k2, SeekForGetAt(block, IKey("apricot", 9, kValueTypeForSeek)));
  EXPECT_EQ(k2, SeekForGetAt(block, IKey("apples", 9, kValueTypeForSeek)));
  EXPECT_EQ("", SeekForGetAt(block, IKey("banana", 9, kValueTypeForSeek)));
}

TEST(DataBlockHashIndexTest, DamagedHashSectionIsCorruption) {
  Random rnd(17);
  const Entries entries = RandomEntries(&rnd, 20, 2);
  const std::string good = BuildBlock(entries, 4, true, 0.75);
  const uint32_t restarts = DecodeFixed32(good.data() + good.size() - 4) & ~kHashIndexFooterBit;
  const size_t count_at = good.size() - 4 - 2;
  const uint16_t buckets = DecodeFixed16(good.data() + count_at);
  std::vector<std::pair<std::string, std::string>> cases;
  std::string bad = good;
  bad[count_at - 1] = static_cast<char>(restarts);  // a bucket naming a missing interval
  cases.emplace_back("bucket past the restarts", bad);
  bad = good;
  EncodeFixed16(bad.data() + count_at, 0);
  cases.emplace_back("no buckets", bad);
  bad = good;
  EncodeFixed16(bad.data() + count_at, 0xffff);
  cases.emplace_back("more buckets than bytes", bad);
  bad = good;
  EncodeFixed16(bad.data() + count_at, static_cast<uint16_t>(buckets + 8));
  cases.emplace_back("buckets reaching into the restart array", bad);
  bad = good;
  EncodeFixed32(bad.data() + good.size() - 4, 300 | kHashIndexFooterBit);
  cases.emplace_back("more restarts than a bucket can name", bad);
  std::string tiny;
  PutFixed32(&tiny, 1 | kHashIndexFooterBit);
  cases.emplace_back("nothing before the footer", tiny);
  for (const auto& [what, bytes] : cases) {
    SCOPED_TRACE(what);
    const std::string name = "000042.sst";
    Block block(BlockContents(Slice(bytes)), &name, 4096);
    const Status s = block.status();
    ASSERT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(std::string::npos, s.ToString().find("000042.sst")) << s.ToString();
    std::unique_ptr<InternalIterator> it(block.NewIterator(&kIcmp, 8));
    const std::string& k = entries.begin()->first;
    EXPECT_TRUE(block.SeekForGet(it.get(), k, BytewiseComparator()));
    EXPECT_FALSE(it->Valid());
    EXPECT_TRUE(it->status().IsCorruption());
  }
}

// A table of the entries, in memory, with or without the hash index.
std::unique_ptr<TableReader> BuildTable(const Entries& entries, BlockBasedTableOptions topts) {
  TableBuilderOptions bopts;
  bopts.icmp = &kIcmp;
  bopts.table_options = topts;
  bopts.file_name = "hash.sst";
  StringSink sink;
  TableBuilder builder(bopts, &sink);
  for (const auto& [k, v] : entries) builder.Add(k, v);
  EXPECT_OK(builder.Finish());
  TableReaderOptions ropts;
  ropts.icmp = &kIcmp;
  ropts.table_options = topts;
  ropts.file_name = "hash.sst";
  std::unique_ptr<TableReader> reader;
  EXPECT_OK(TableReader::Open(ropts, std::make_unique<StringSource>(sink.contents()),
                              sink.contents().size(), &reader));
  return reader;
}

// Every entry Get hands over for target's user key, as "key=value" lines.
std::string GetAll(TableReader* reader, const std::string& target) {
  struct Collect {
    Slice user_key;
    std::string out;
  } c{ExtractUserKey(target), ""};
  auto handle = [](void* arg, const Slice& k, const Slice& v) {
    auto* c = static_cast<Collect*>(arg);
    if (ExtractUserKey(k) != c->user_key) return false;
    c->out += k.ToString(true) + "=" + v.ToString() + "\n";
    return true;
  };
  EXPECT_OK(reader->Get(ReadOptions(), target, &c, +handle));
  return c.out;
}

TEST(DataBlockHashIndexTest, TableGetMatchesBinarySearch) {
  const uint64_t seed = TestSeed();
  Random rnd(static_cast<uint32_t>(seed));
  for (int round = 0; round < 6; round++) {
    const Entries entries = RandomEntries(&rnd, 3000, 2);
    BlockBasedTableOptions plain;
    plain.block_size = round % 2 == 0 ? 256 : 4096;
    plain.block_restart_interval = 1 + static_cast<int>(rnd.Uniform(16));
    plain.no_block_cache = true;
    BlockBasedTableOptions hashed = plain;
    hashed.data_block_index_type = BlockBasedTableOptions::kDataBlockBinaryAndHash;
    hashed.data_block_hash_table_util_ratio = round < 3 ? 0.75 : 2.0;
    auto a = BuildTable(entries, plain);
    auto b = BuildTable(entries, hashed);
    ASSERT_NE(nullptr, a);
    ASSERT_NE(nullptr, b);
    for (int q = 0; q < 3000; q++) {
      const int u = static_cast<int>(rnd.Uniform(6004)) - 2;
      const SequenceNumber seq = rnd.OneIn(3) ? kMaxSequenceNumber : rnd.Uniform(1100);
      const std::string target = IKey("row" + std::to_string(100000 + u), seq, kValueTypeForSeek);
      const std::string want = GetAll(a.get(), target);
      ASSERT_EQ(want, GetAll(b.get(), target)) << Slice(target).ToString(true);
      std::string model;
      for (auto it = entries.lower_bound(target);
           it != entries.end() && ExtractUserKey(it->first) == ExtractUserKey(target); ++it) {
        model += Slice(it->first).ToString(true) + "=" + it->second + "\n";
      }
      ASSERT_EQ(model, want);
    }
  }
}

}  // namespace
}  // namespace shale
