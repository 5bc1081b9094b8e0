// Tests for the cache-local Bloom filter: no false negatives, a false-positive rate close to
// the theory of 512-bit lines, the advertised density, a frozen on-disk format, and a
// reader that never denies a key when it is handed bytes it cannot understand. Then the
// filter in SST files: which tables get one (skip_filters, whole_key_filtering) and that
// Bloom and Ribbon filters are read under either built-in policy.

#include "table/filter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "shale/filter_policy.h"
#include "shale/options.h"
#include "table/table_builder.h"
#include "table/table_reader.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/dbformat.h"
#include "util/hash.h"
#include "util/random.h"

namespace shale {
namespace {

// Nine bytes: a tag byte (which key family) and the number. Cheap to make, since the
// false-positive tests probe millions of keys.
struct Built {
  std::unique_ptr<const FilterPolicy> policy;
  std::string bytes;
  std::unique_ptr<FilterBitsReader> reader;
};

// A filter over TaggedKey(0..n-1) plus `offset`.
Built Build(double bits_per_key, size_t n, uint64_t offset = 0) {
  Built b;
  b.policy.reset(NewBloomFilterPolicy(bits_per_key));
  std::unique_ptr<FilterBitsBuilder> builder = NewFilterBitsBuilder(*b.policy);
  EXPECT_NE(builder, nullptr);
  for (size_t i = 0; i < n; i++) builder->AddKey(TaggedKey(offset + i));
  EXPECT_EQ(builder->NumAdded(), n);
  b.bytes = builder->Finish();
  b.reader = NewFilterBitsReader(b.bytes);
  return b;
}

int NumProbes(const std::string& bytes) { return static_cast<uint8_t>(bytes[bytes.size() - 7]); }
uint32_t NumLines(const std::string& bytes) {
  return DecodeFixed32(bytes.data() + bytes.size() - 4);
}

// Expected false-positive rate of a Bloom filter whose keys land in 512-bit lines at
// random (a Poisson number of keys per line, mean keys_per_line), k probes each.
double TheoreticalFpRate(double keys_per_line, int k) {
  double sum = 0;
  double p = std::exp(-keys_per_line);  // P(n = 0)
  for (int n = 0; n < keys_per_line * 6 + 60; n++) {
    if (n > 0) p *= keys_per_line / n;
    sum += p * std::pow(1.0 - std::pow(1.0 - 1.0 / 512, k * n), k);
  }
  return sum;
}

double MeasureFpRate(const FilterBitsReader& reader, size_t queries) {
  size_t hits = 0;
  for (size_t i = 0; i < queries; i++) hits += reader.MayMatch(TaggedKey(i, 'a'));
  return static_cast<double>(hits) / queries;
}

TEST(FilterTest, PolicyBasics) {
  std::unique_ptr<const FilterPolicy> p(NewBloomFilterPolicy(10));
  EXPECT_STREQ(p->Name(), "shale.BuiltinBloomFilter");
  EXPECT_DOUBLE_EQ(p->GetBitsPerKey(), 10.0);
  std::unique_ptr<const FilterPolicy> tiny(NewBloomFilterPolicy(0));
  EXPECT_DOUBLE_EQ(tiny->GetBitsPerKey(), 1.0);
  std::unique_ptr<const FilterPolicy> huge(NewBloomFilterPolicy(1e9, true));
  EXPECT_DOUBLE_EQ(huge->GetBitsPerKey(), 100.0);
  std::unique_ptr<const FilterPolicy> nan(NewBloomFilterPolicy(std::nan("")));
  EXPECT_DOUBLE_EQ(nan->GetBitsPerKey(), 1.0);
}

TEST(FilterTest, ForeignPolicyHasNoBuilder) {
  class Other : public FilterPolicy {
   public:
    const char* Name() const override { return "other"; }
    double GetBitsPerKey() const override { return 10; }
  };
  Other other;
  EXPECT_EQ(NewFilterBitsBuilder(other), nullptr);
}

TEST(FilterTest, EmptyFilterMatchesNothing) {
  Built b = Build(10, 0);
  EXPECT_EQ(b.bytes.size(), 8u);
  EXPECT_EQ(NumLines(b.bytes), 0u);
  for (int i = 0; i < 1000; i++) EXPECT_FALSE(b.reader->MayMatch(TaggedKey(i)));
  EXPECT_FALSE(b.reader->MayMatch(""));
}

TEST(FilterTest, NoFalseNegatives) {
  for (double bpk : {1.0, 2.5, 6.0, 10.0, 15.5, 20.0, 50.0, 100.0}) {
    for (size_t n : {1, 2, 7, 64, 1000, 20000}) {
      Built b = Build(bpk, n, n * 1000);
      for (size_t i = 0; i < n; i++) {
        ASSERT_TRUE(b.reader->MayMatch(TaggedKey(n * 1000 + i))) << "bpk " << bpk << " n " << n;
      }
    }
  }
}

TEST(FilterTest, NoFalseNegativesRandomKeys) {
  Random rnd(TestSeed());
  for (int round = 0; round < 20; round++) {
    std::unique_ptr<const FilterPolicy> policy(NewBloomFilterPolicy(1 + rnd.Uniform(3000) / 100.0));
    auto builder = NewFilterBitsBuilder(*policy);
    std::vector<std::string> keys(rnd.Uniform(5000));
    for (std::string& k : keys) {
      k.resize(rnd.Uniform(40));
      for (char& c : k) c = static_cast<char>(rnd.Next());
      builder->AddKey(k);
    }
    std::string bytes = builder->Finish();
    auto reader = NewFilterBitsReader(bytes);
    for (const std::string& k : keys) ASSERT_TRUE(reader->MayMatch(k));
  }
}

TEST(FilterTest, ProbesFollowDensity) {
  EXPECT_EQ(NumProbes(Build(10, 100).bytes), 6);
  EXPECT_EQ(NumProbes(Build(1, 100).bytes), 1);
  int last = 0;
  for (int bpk = 1; bpk <= 100; bpk++) {
    const int k = NumProbes(Build(bpk, 10).bytes);
    EXPECT_GE(k, last) << bpk;
    EXPECT_LE(k, 24) << bpk;
    // The table may favor fewer probes, but never far from the best rate.
    const double chosen = TheoreticalFpRate(512.0 / bpk, k);
    double best = chosen;
    for (int j = 1; j <= 30; j++) best = std::min(best, TheoreticalFpRate(512.0 / bpk, j));
    EXPECT_LE(chosen, best * 1.02) << bpk;
    last = k;
  }
}

TEST(FilterTest, BitsPerKeyOfOutput) {
  for (double bpk : {5.0, 10.0, 16.0, 20.0}) {
    for (size_t n : {1000, 10000, 50000}) {
      Built b = Build(bpk, n);
      const double actual = (b.bytes.size() - 8) * 8.0 / n;
      EXPECT_GE(actual, bpk) << n;
      EXPECT_LE(actual, bpk + 512.0 / n) << n;  // rounded up to whole 512-bit lines
      EXPECT_EQ(b.bytes.size() - 8, NumLines(b.bytes) * 64ull);
    }
  }
  // One key still gets a whole line.
  EXPECT_EQ(Build(10, 1).bytes.size(), 64u + 8u);
}

TEST(FilterTest, FalsePositiveRate10BitsPerKey) {
  const size_t n = 100000;
  Built b = Build(10, n);
  const double measured = MeasureFpRate(*b.reader, 1000000);
  const double theory =
      TheoreticalFpRate(static_cast<double>(n) / NumLines(b.bytes), NumProbes(b.bytes));
  fprintf(stderr, "10 bits/key: measured %.5f%%, theory %.5f%%\n", measured * 100, theory * 100);
  EXPECT_LT(measured, 0.012);
  EXPECT_GT(measured, theory * 0.85);
  EXPECT_LT(measured, theory * 1.15);
}

TEST(FilterTest, FalsePositiveRate20BitsPerKey) {
  const size_t n = 100000;
  Built b = Build(20, n);
  const double measured = MeasureFpRate(*b.reader, 1000000);
  const double theory =
      TheoreticalFpRate(static_cast<double>(n) / NumLines(b.bytes), NumProbes(b.bytes));
  fprintf(stderr, "20 bits/key: measured %.5f%%, theory %.5f%%\n", measured * 100, theory * 100);
  EXPECT_LT(measured, 0.0005);
  // About 190 expected hits: allow several standard deviations.
  EXPECT_GT(measured, theory * 0.6);
  EXPECT_LT(measured, theory * 1.5);
}

TEST(FilterTest, SmallFiltersStayUseful) {
  // Few keys give few lines, where the Poisson spread is at its worst.
  for (size_t n : {10, 50, 200}) {
    double total = 0;
    const int rounds = 20;
    for (int r = 0; r < rounds; r++) {
      Built b = Build(10, n, r * 1000000ull);
      total += MeasureFpRate(*b.reader, 4000);
    }
    EXPECT_LT(total / rounds, 0.03) << n;
  }
}

TEST(FilterTest, ConsecutiveDuplicatesAddedOnce) {
  std::unique_ptr<const FilterPolicy> p(NewBloomFilterPolicy(10));
  auto builder = NewFilterBitsBuilder(*p);
  builder->AddKey("a");
  builder->AddKey("a");
  builder->AddKey("b");
  builder->AddKey("a");
  EXPECT_EQ(builder->NumAdded(), 3u);
  std::string bytes = builder->Finish();
  EXPECT_EQ(builder->NumAdded(), 0u);  // Finish resets
  auto reader = NewFilterBitsReader(bytes);
  EXPECT_TRUE(reader->MayMatch("a"));
  EXPECT_TRUE(reader->MayMatch("b"));

  // A reused builder starts from nothing.
  builder->AddKey("c");
  std::string second = builder->Finish();
  EXPECT_TRUE(NewFilterBitsReader(second)->MayMatch("c"));
}

TEST(FilterTest, MalformedBytesMatchEverything) {
  Built good = Build(10, 1000);
  ASSERT_GT(MeasureFpRate(*good.reader, 10000), 0.0);  // the probe keys below are real misses
  std::vector<std::string> bad = {
      "",
      std::string(7, '\0'),
      good.bytes.substr(0, good.bytes.size() - 1),
      good.bytes.substr(1),
      good.bytes + std::string(64, '\0'),
      std::string(1000, '\xff'),
  };
  auto mutate = [&](size_t pos, char v) {
    std::string s = good.bytes;
    s[s.size() - 8 + pos] = v;
    return s;
  };
  bad.push_back(mutate(0, 2));     // unknown format
  bad.push_back(mutate(0, 0));     // unknown format
  bad.push_back(mutate(1, 0));     // zero probes
  bad.push_back(mutate(1, 100));   // absurd probe count
  bad.push_back(mutate(2, 1));     // reserved byte set
  bad.push_back(mutate(4, 0x7f));  // line count disagrees with the size
  Random rnd(TestSeed());
  for (int i = 0; i < 50; i++) {
    std::string s(rnd.Uniform(300), '\0');
    for (char& c : s) c = static_cast<char>(rnd.Next());
    if (s.size() >= 8) s[s.size() - 8] = 7;  // keep it from being a valid header by chance
    bad.push_back(s);
  }
  for (size_t b = 0; b < bad.size(); b++) {
    auto reader = NewFilterBitsReader(bad[b]);
    ASSERT_NE(reader, nullptr);
    for (int i = 0; i < 200; i++) {
      ASSERT_TRUE(reader->MayMatch(TaggedKey(i, 'a'))) << "case " << b;
    }
  }
}

// Filters live in SST files: the bytes for a given key set must never change.
TEST(FilterTest, FormatIsFrozen) {
  Built b = Build(10, 100);
  EXPECT_EQ(b.bytes.size(), 2 * 64u + 8u);
  EXPECT_EQ(b.bytes.substr(b.bytes.size() - 8), std::string("\x01\x06\x00\x00\x02\x00\x00\x00", 8));
  EXPECT_EQ(Hash64(b.bytes), 0xcbd9fee86c855e60ull) << std::hex << Hash64(b.bytes);
}

// Tables written to memory and read back, to see which get a filter and how it is used.
class FilterTableTest : public testing::Test {
 protected:
  static constexpr int kKeys = 2000;

  static std::string UserKey(int i) {
    char buf[32];
    snprintf(buf, sizeof(buf), "user%08d", i);
    return buf;
  }
  static std::string IKey(int i) {
    std::string k;
    AppendInternalKey(&k, UserKey(i), 100, kTypeValue);
    return k;
  }

  // Even-numbered keys only; odd ones are the absent keys probed later.
  TableProperties Build(const TableBuilderOptions& options) {
    StringSink sink;
    TableBuilderOptions o = options;
    o.icmp = &icmp_;
    o.file_name = "test.sst";
    TableBuilder builder(o, &sink);
    for (int i = 0; i < kKeys; i++) builder.Add(IKey(2 * i), "value" + std::to_string(i));
    EXPECT_OK(builder.Finish());
    contents_ = sink.contents();
    return builder.GetTableProperties();
  }

  std::unique_ptr<TableReader> Open(std::shared_ptr<const FilterPolicy> policy,
                                    bool whole_key_filtering = true) {
    TableReaderOptions o;
    o.icmp = &icmp_;
    o.file_name = "test.sst";
    o.table_options.no_block_cache = true;
    o.table_options.filter_policy = std::move(policy);
    o.table_options.whole_key_filtering = whole_key_filtering;
    std::unique_ptr<TableReader> reader;
    EXPECT_OK(
        TableReader::Open(o, std::make_unique<StringSource>(contents_), contents_.size(), &reader));
    return reader;
  }

  // Share of absent keys the reader's filter lets through (1.0 when none is consulted).
  static double AbsentPassRate(const TableReader& reader) {
    for (int i = 0; i < kKeys; i++) EXPECT_TRUE(reader.KeyMayMatch(IKey(2 * i)));
    int pass = 0;
    for (int i = 0; i < kKeys; i++) pass += reader.KeyMayMatch(IKey(2 * i + 1));
    return static_cast<double>(pass) / kKeys;
  }

  static TableBuilderOptions WithPolicy(const FilterPolicy* policy) {
    TableBuilderOptions o;
    o.table_options.filter_policy.reset(policy);
    return o;
  }

  InternalKeyComparator icmp_{BytewiseComparator()};
  std::string contents_;
};

TEST_F(FilterTableTest, BloomFilterWritten) {
  const TableBuilderOptions o = WithPolicy(NewBloomFilterPolicy(10));
  const TableProperties props = Build(o);
  EXPECT_EQ(props.filter_size, 64u * 40 + 8);  // 20000 bits in whole lines, plus trailer
  EXPECT_EQ(props.filter_policy_name, "shale.BuiltinBloomFilter");
  EXPECT_LT(AbsentPassRate(*Open(o.table_options.filter_policy)), 0.05);
}

TEST_F(FilterTableTest, SkipFiltersWritesNone) {
  for (const FilterPolicy* p : {NewBloomFilterPolicy(10), NewRibbonFilterPolicy(10)}) {
    TableBuilderOptions o = WithPolicy(p);
    o.skip_filters = true;
    o.level_at_creation = 6;
    const TableProperties props = Build(o);
    EXPECT_EQ(props.filter_size, 0u);
    EXPECT_EQ(props.filter_policy_name, "");
    EXPECT_EQ(props.num_entries, static_cast<uint64_t>(kKeys));
    auto reader = Open(o.table_options.filter_policy);
    EXPECT_EQ(AbsentPassRate(*reader), 1.0);
    // Every key is still found.
    std::unique_ptr<InternalIterator> it(reader->NewIterator(ReadOptions()));
    int n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
    EXPECT_EQ(n, kKeys);
  }
}

TEST_F(FilterTableTest, NoWholeKeyFilteringWritesNone) {
  for (const FilterPolicy* p : {NewBloomFilterPolicy(10), NewRibbonFilterPolicy(10)}) {
    TableBuilderOptions o = WithPolicy(p);
    o.table_options.whole_key_filtering = false;
    const TableProperties props = Build(o);
    EXPECT_EQ(props.filter_size, 0u);
    EXPECT_EQ(props.filter_policy_name, "");
    // Readers never consult a filter, whatever their own setting.
    EXPECT_EQ(AbsentPassRate(*Open(o.table_options.filter_policy, true)), 1.0);
    EXPECT_EQ(AbsentPassRate(*Open(o.table_options.filter_policy, false)), 1.0);
  }
}

TEST_F(FilterTableTest, ReaderWithoutWholeKeyFilteringIgnoresTheFilter) {
  const TableBuilderOptions o = WithPolicy(NewBloomFilterPolicy(10));
  EXPECT_GT(Build(o).filter_size, 0u);
  EXPECT_EQ(AbsentPassRate(*Open(o.table_options.filter_policy, false)), 1.0);
}

TEST_F(FilterTableTest, RibbonFilterWrittenAndReadAsBuiltin) {
  TableBuilderOptions o = WithPolicy(NewRibbonFilterPolicy(10));
  o.level_at_creation = 3;
  const TableProperties props = Build(o);
  EXPECT_EQ(props.filter_policy_name, "shale.RibbonFilter");
  EXPECT_GT(props.filter_size, 0u);
  EXPECT_LT(props.filter_size * 8.0 / kKeys, 8.0);  // well under the Bloom filter's 10
  // The metaindex names the shared compatibility name, so a reader configured with the
  // Bloom policy uses the Ribbon filter (its bytes say what they are).
  std::shared_ptr<const FilterPolicy> bloom(NewBloomFilterPolicy(10));
  EXPECT_LT(AbsentPassRate(*Open(bloom)), 0.05);
}

TEST_F(FilterTableTest, FlushUnderRibbonPolicyGetsBloom) {
  TableBuilderOptions o = WithPolicy(NewRibbonFilterPolicy(10));  // bloom_before_level 0
  o.is_flush = true;
  o.level_at_creation = 0;
  const TableProperties flushed = Build(o);
  EXPECT_EQ(flushed.filter_size, 64u * 40 + 8);
  o.is_flush = false;
  const TableProperties compacted = Build(o);
  EXPECT_LT(compacted.filter_size, flushed.filter_size * 0.8);
  // A policy of someone else's: no filter, and no failure.
  class Other : public FilterPolicy {
   public:
    const char* Name() const override { return "other"; }
    double GetBitsPerKey() const override { return 10; }
  };
  TableBuilderOptions other;
  other.table_options.filter_policy = std::make_shared<Other>();
  EXPECT_EQ(Build(other).filter_size, 0u);
}

}  // namespace
}  // namespace shale
