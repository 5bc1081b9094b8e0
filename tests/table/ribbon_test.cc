// Tests for the Standard Ribbon filter behind NewRibbonFilterPolicy: no false negatives at
// any key count, the false-positive rate of the Bloom filter it stands in for in about 30%
// less space, retries with new seeds and the Bloom fallback, bloom_before_level, a frozen
// on-disk format, and a reader that never denies a key when it is handed bytes it cannot
// understand. Also prints construction and query costs (never asserted).

#include "table/ribbon.h"

#include <gtest/gtest.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "shale/filter_policy.h"
#include "table/filter.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/hash.h"
#include "util/random.h"

namespace shale {
namespace {

uint8_t FormatOf(const std::string& bytes) {
  return bytes.size() < 8 ? 0 : static_cast<uint8_t>(bytes[bytes.size() - 8]);
}
constexpr uint8_t kBloomFormat = 1;

std::string BuildFilter(const FilterPolicy& policy, size_t n, uint64_t offset = 0,
                        const FilterBuildingContext& ctx = FilterBuildingContext()) {
  std::unique_ptr<FilterBitsBuilder> builder = NewFilterBitsBuilder(policy, ctx);
  EXPECT_NE(builder, nullptr);
  for (size_t i = 0; i < n; i++) builder->AddKey(TaggedKey(offset + i));
  EXPECT_EQ(builder->NumAdded(), n);
  return builder->Finish();
}

double MeasureFpRate(const FilterBitsReader& reader, size_t queries, char tag = 'a') {
  size_t hits = 0;
  for (size_t i = 0; i < queries; i++) hits += reader.MayMatch(TaggedKey(i, tag));
  return static_cast<double>(hits) / queries;
}

double BitsPerKey(const std::string& bytes, size_t n) { return bytes.size() * 8.0 / n; }

std::vector<uint64_t> Hashes(size_t n, uint64_t offset = 0) {
  std::vector<uint64_t> h(n);
  for (size_t i = 0; i < n; i++) h[i] = Hash64(TaggedKey(offset + i));
  return h;
}

TEST(RibbonTest, PolicyBasics) {
  std::unique_ptr<const FilterPolicy> p(NewRibbonFilterPolicy(10));
  EXPECT_STREQ(p->Name(), "shale.RibbonFilter");
  EXPECT_DOUBLE_EQ(p->GetBitsPerKey(), 10.0);
  // Files written under either built-in policy are read under the other.
  std::unique_ptr<const FilterPolicy> bloom(NewBloomFilterPolicy(10));
  EXPECT_STREQ(p->CompatibilityName(), bloom->CompatibilityName());
  EXPECT_STREQ(bloom->CompatibilityName(), bloom->Name());
  std::unique_ptr<const FilterPolicy> tiny(NewRibbonFilterPolicy(-3));
  EXPECT_DOUBLE_EQ(tiny->GetBitsPerKey(), 1.0);
  std::unique_ptr<const FilterPolicy> nan(NewRibbonFilterPolicy(std::nan("")));
  EXPECT_DOUBLE_EQ(nan->GetBitsPerKey(), 1.0);
}

TEST(RibbonTest, BloomFpRateTheory) {
  // The cache-local Bloom filter is a little worse than a standard one at the same density.
  EXPECT_GT(CacheLocalBloomFpRate(10), 0.0082);
  EXPECT_LT(CacheLocalBloomFpRate(10), 0.0110);
  double last = 1.0;
  for (double bpk = 1; bpk <= 30; bpk += 0.5) {
    const double fp = CacheLocalBloomFpRate(bpk);
    EXPECT_LT(fp, last) << bpk;
    last = fp;
  }
}

TEST(RibbonTest, NoFalseNegatives) {
  std::unique_ptr<const FilterPolicy> policy(NewRibbonFilterPolicy(10, -1));
  for (size_t n : {0, 1, 2, 3, 10, 100, 127, 128, 200, 1000, 4321, 65536}) {
    const std::string bytes = BuildFilter(*policy, n, n * 7);
    auto reader = NewFilterBitsReader(bytes);
    for (size_t i = 0; i < n; i++) ASSERT_TRUE(reader->MayMatch(TaggedKey(n * 7 + i))) << n << " " << i;
    if (n >= 1000) {
      EXPECT_EQ(FormatOf(bytes), ribbon::kFormatStandardRibbon) << n;
    }
    if (n == 0) {
      EXPECT_FALSE(reader->MayMatch(TaggedKey(0)));
    }
  }
}

TEST(RibbonTest, NoFalseNegativesAnyDensity) {
  Random rnd(TestSeed());
  for (int round = 0; round < 25; round++) {
    const double bpk = 1 + rnd.Uniform(4000) / 100.0;
    std::unique_ptr<const FilterPolicy> policy(NewRibbonFilterPolicy(bpk, -1));
    auto builder = NewFilterBitsBuilder(*policy);
    std::vector<std::string> keys(rnd.Uniform(10000));
    for (std::string& k : keys) {
      k.resize(rnd.Uniform(40));
      for (char& c : k) c = static_cast<char>(rnd.Next());
      builder->AddKey(k);
    }
    const std::string bytes = builder->Finish();
    auto reader = NewFilterBitsReader(bytes);
    for (const std::string& k : keys) ASSERT_TRUE(reader->MayMatch(k)) << "bpk " << bpk;
  }
}

TEST(RibbonTest, DuplicateKeysAnywhere) {
  std::unique_ptr<const FilterPolicy> policy(NewRibbonFilterPolicy(10, -1));
  auto builder = NewFilterBitsBuilder(*policy);
  for (int pass = 0; pass < 3; pass++) {
    for (int i = 0; i < 5000; i++) builder->AddKey(TaggedKey(i));
  }
  const std::string bytes = builder->Finish();
  EXPECT_EQ(FormatOf(bytes), ribbon::kFormatStandardRibbon);
  auto reader = NewFilterBitsReader(bytes);
  for (int i = 0; i < 5000; i++) ASSERT_TRUE(reader->MayMatch(TaggedKey(i)));
}

// At the Bloom filter's false-positive rate in about 30% less space.
TEST(RibbonTest, RateAndSpaceAgainstBloom) {
  for (double bpk : {6.0, 10.0, 16.0}) {
    const size_t n = 50000;
    std::unique_ptr<const FilterPolicy> rib(NewRibbonFilterPolicy(bpk, -1));
    std::unique_ptr<const FilterPolicy> bloom(NewBloomFilterPolicy(bpk));
    const std::string rbytes = BuildFilter(*rib, n);
    const std::string bbytes = BuildFilter(*bloom, n);
    ASSERT_EQ(FormatOf(rbytes), ribbon::kFormatStandardRibbon);
    const size_t queries = bpk > 12 ? 600000 : 200000;
    const double rfp = MeasureFpRate(*NewFilterBitsReader(rbytes), queries);
    const double bfp = MeasureFpRate(*NewFilterBitsReader(bbytes), queries);
    const double target = CacheLocalBloomFpRate(bpk);
    const double ratio = BitsPerKey(rbytes, n) / BitsPerKey(bbytes, n);
    fprintf(stderr,
            "%4.1f bits/key: Ribbon fp %.5f%% at %.3f bits/key, Bloom fp %.5f%% at %.3f "
            "bits/key (theory %.5f%%), space ratio %.3f\n",
            bpk, rfp * 100, BitsPerKey(rbytes, n), bfp * 100, BitsPerKey(bbytes, n), target * 100,
            ratio);
    EXPECT_LT(ratio, 0.8) << bpk;
    EXPECT_GT(ratio, 0.6) << bpk;  // not so small that it cannot be right
    // At least ~500 expected hits in each: 30% covers several standard deviations.
    EXPECT_LT(rfp, target * 1.3) << bpk;
    EXPECT_GT(rfp, target * 0.7) << bpk;
    EXPECT_LT(rfp, bfp * 1.35) << bpk;
    EXPECT_GT(rfp, bfp * 0.65) << bpk;
  }
}

TEST(RibbonTest, OneMillionKeys) {
  const size_t n = 1000000;
  std::unique_ptr<const FilterPolicy> rib(NewRibbonFilterPolicy(10, -1));
  std::unique_ptr<const FilterPolicy> bloom(NewBloomFilterPolicy(10));
  const std::string rbytes = BuildFilter(*rib, n);
  ASSERT_EQ(FormatOf(rbytes), ribbon::kFormatStandardRibbon);
  auto reader = NewFilterBitsReader(rbytes);
  for (size_t i = 0; i < n; i++) ASSERT_TRUE(reader->MayMatch(TaggedKey(i))) << i;
  const double ratio = BitsPerKey(rbytes, n) / BitsPerKey(BuildFilter(*bloom, n), n);
  fprintf(stderr, "1M keys: %.3f bits/key, %.3f of Bloom's\n", BitsPerKey(rbytes, n), ratio);
  EXPECT_LT(ratio, 0.8);
  // The ideal for this rate is log2(1/fp) bits per key; overhead stays in single digits.
  const double ideal = std::log2(1.0 / CacheLocalBloomFpRate(10));
  EXPECT_LT(BitsPerKey(rbytes, n), ideal * 1.1);
}

TEST(RibbonTest, LayoutRateMatchesTarget) {
  for (double fp : {0.5, 0.3, 0.1, 0.02, 0.0095, 0.001, 1e-5, 1e-9}) {
    for (size_t n : {1, 100, 10000, 1000000}) {
      ribbon::Layout layout;
      ASSERT_TRUE(ribbon::ChooseLayout(n, fp, &layout)) << fp << " " << n;
      const double expected = ribbon::ExpectedFpRate(layout);
      EXPECT_LE(expected, fp * 1.0001) << fp << " " << n;
      // Within one block's worth of columns of the target.
      EXPECT_GE(expected, fp * (n >= 10000 ? 0.97 : 0.5)) << fp << " " << n;
      EXPECT_GE(uint64_t{layout.num_blocks} * 64, n + 127);
    }
  }
  ribbon::Layout layout;
  EXPECT_FALSE(ribbon::ChooseLayout(0, 0.01, &layout));
  EXPECT_FALSE(ribbon::ChooseLayout(10, 0, &layout));
  EXPECT_FALSE(ribbon::ChooseLayout(10, 1e-12, &layout));  // more than 32 columns
}

// Retried seeds and the Bloom fallback, forced by layouts too small for the keys.
TEST(RibbonTest, SeedRetriesAndFallback) {
  // More keys than slots: banding fails for every seed.
  ribbon::Layout full;
  full.num_blocks = 2;
  full.lower_columns = 7;
  std::string out;
  EXPECT_FALSE(ribbon::Build(Hashes(140), full, ribbon::kMaxAttempts, &out));
  EXPECT_TRUE(out.empty());

  // Two blocks have a single start: 127 keys make a dense random system over 128
  // unknowns, which is singular for about 40% of seeds. A filter made by a later seed
  // records it and still has no false negatives.
  bool saw_retry = false;
  for (uint64_t round = 0; round < 100 && !saw_retry; round++) {
    const std::vector<uint64_t> hashes = Hashes(127, round * 1000);
    std::string first;
    if (ribbon::BuildWithSeed(hashes, full, 0, &first)) continue;
    std::string built;
    ASSERT_TRUE(ribbon::Build(hashes, full, 60, &built));
    saw_retry = true;
    const uint8_t seed = static_cast<uint8_t>(built[built.size() - 7]);
    EXPECT_GT(seed, 0);
    auto reader = ribbon::NewReader(built);
    ASSERT_NE(reader, nullptr);
    for (size_t i = 0; i < 127; i++) ASSERT_TRUE(reader->MayMatch(TaggedKey(round * 1000 + i)));
  }
  EXPECT_TRUE(saw_retry);
}

TEST(RibbonTest, SmallSetsGetBloomWhenSmaller) {
  std::unique_ptr<const FilterPolicy> rib(NewRibbonFilterPolicy(10, -1));
  std::unique_ptr<const FilterPolicy> bloom(NewBloomFilterPolicy(10));
  for (size_t n : {1, 5, 20, 60, 150, 400, 5000}) {
    const std::string bytes = BuildFilter(*rib, n);
    // Never larger than the Bloom filter it stands in for.
    EXPECT_LE(bytes.size(), BuildFilter(*bloom, n).size()) << n;
    if (n <= 20) {
      EXPECT_EQ(FormatOf(bytes), kBloomFormat) << n;
    }
    if (n >= 400) {
      EXPECT_EQ(FormatOf(bytes), ribbon::kFormatStandardRibbon) << n;
    }
  }
}

TEST(RibbonTest, BloomBeforeLevel) {
  const size_t n = 5000;
  auto format_for = [&](int bloom_before_level, int level, bool flush) {
    std::unique_ptr<const FilterPolicy> p(NewRibbonFilterPolicy(10, bloom_before_level));
    FilterBuildingContext ctx;
    ctx.level_at_creation = level;
    ctx.is_flush = flush;
    return FormatOf(BuildFilter(*p, n, 0, ctx));
  };
  constexpr uint8_t kRibbon = ribbon::kFormatStandardRibbon;
  // -1: Ribbon everywhere, flushes included.
  EXPECT_EQ(format_for(-1, 0, true), kRibbon);
  EXPECT_EQ(format_for(-1, 0, false), kRibbon);
  EXPECT_EQ(format_for(-1, -1, false), kRibbon);
  // 0 (the default): Bloom for flushes only.
  EXPECT_EQ(format_for(0, 0, true), kBloomFormat);
  EXPECT_EQ(format_for(0, 0, false), kRibbon);
  EXPECT_EQ(format_for(0, 3, false), kRibbon);
  EXPECT_EQ(format_for(0, -1, false), kRibbon);
  // 2: Bloom for flushes, L0 and L1.
  EXPECT_EQ(format_for(2, 0, true), kBloomFormat);
  EXPECT_EQ(format_for(2, 1, false), kBloomFormat);
  EXPECT_EQ(format_for(2, 2, false), kRibbon);
  EXPECT_EQ(format_for(2, -1, false), kRibbon);  // unknown counts as the bottommost
  // INT_MAX: Bloom everywhere except (as in RocksDB) files of unknown level.
  EXPECT_EQ(format_for(INT_MAX, 6, false), kBloomFormat);
  EXPECT_EQ(format_for(INT_MAX, 0, true), kBloomFormat);
  // The default argument is 0.
  std::unique_ptr<const FilterPolicy> def(NewRibbonFilterPolicy(10));
  FilterBuildingContext flush;
  flush.is_flush = true;
  flush.level_at_creation = 0;
  EXPECT_EQ(FormatOf(BuildFilter(*def, n, 0, flush)), kBloomFormat);
}

TEST(RibbonTest, MalformedBytesMatchEverything) {
  std::unique_ptr<const FilterPolicy> policy(NewRibbonFilterPolicy(10, -1));
  const std::string good = BuildFilter(*policy, 3000);
  ASSERT_EQ(FormatOf(good), ribbon::kFormatStandardRibbon);
  ASSERT_GT(MeasureFpRate(*NewFilterBitsReader(good), 20000), 0.0);
  ASSERT_LT(MeasureFpRate(*NewFilterBitsReader(good), 20000), 0.05);
  std::vector<std::string> bad = {
      good.substr(0, good.size() - 1),
      good.substr(1),
      good.substr(8),
      good + std::string(8, '\0'),
      std::string(8, '\0') + good,
      good.substr(good.size() - 16),
  };
  auto mutate = [&](size_t pos, uint8_t v) {
    std::string s = good;
    s[s.size() - 16 + pos] = static_cast<char>(v);
    return s;
  };
  bad.push_back(mutate(0, 0xff));  // upper_start_block past the end
  bad.push_back(mutate(3, 0x01));  // upper_start_block past the end
  bad.push_back(mutate(4, 1));     // reserved
  bad.push_back(mutate(7, 1));     // reserved
  bad.push_back(mutate(8, 0));     // unknown format
  bad.push_back(mutate(8, 2));     // unknown format
  bad.push_back(mutate(10, 7));    // column count disagrees with the size
  bad.push_back(mutate(10, 31));   // column count disagrees with the size
  bad.push_back(mutate(10, 32));   // too many columns
  bad.push_back(mutate(10, 255));  // too many columns
  bad.push_back(mutate(11, 1));    // reserved
  bad.push_back(mutate(12, 1));    // block count disagrees with the size
  bad.push_back(mutate(15, 0x80));
  {
    std::string s = good;  // a block count below the minimum of two
    EncodeFixed32(s.data() + s.size() - 4, 1);
    EncodeFixed32(s.data() + s.size() - 16, 0);
    bad.push_back(s);
  }
  Random rnd(TestSeed());
  for (int i = 0; i < 200; i++) {
    std::string s(16 + rnd.Uniform(400), '\0');
    for (char& c : s) c = static_cast<char>(rnd.Next());
    s[s.size() - 8] = static_cast<char>(ribbon::kFormatStandardRibbon);
    bad.push_back(s);
  }
  for (size_t b = 0; b < bad.size(); b++) {
    EXPECT_EQ(ribbon::NewReader(bad[b]), nullptr) << "case " << b;
    auto reader = NewFilterBitsReader(bad[b]);
    ASSERT_NE(reader, nullptr);
    for (int i = 0; i < 200; i++) ASSERT_TRUE(reader->MayMatch(TaggedKey(i, 'a'))) << "case " << b;
  }
}

// A seed byte changed to another value gives a reader that answers for other keys: it may
// deny real keys, which is why the trailer (and the block checksum) must be right. This
// checks the seed really is used.
TEST(RibbonTest, SeedIsPartOfTheFormat) {
  std::unique_ptr<const FilterPolicy> policy(NewRibbonFilterPolicy(10, -1));
  std::string bytes = BuildFilter(*policy, 3000);
  ASSERT_EQ(static_cast<uint8_t>(bytes[bytes.size() - 7]), 0);
  bytes[bytes.size() - 7] = 1;
  auto reader = NewFilterBitsReader(bytes);
  size_t misses = 0;
  for (int i = 0; i < 3000; i++) misses += !reader->MayMatch(TaggedKey(i));
  EXPECT_GT(misses, 2500u);
}

// Filters live in SST files: the bytes for a given key set must never change.
TEST(RibbonTest, FormatIsFrozen) {
  std::unique_ptr<const FilterPolicy> policy(NewRibbonFilterPolicy(10, -1));
  const std::string bytes = BuildFilter(*policy, 1000);
  ASSERT_EQ(FormatOf(bytes), ribbon::kFormatStandardRibbon);
  const std::string trailer = bytes.substr(bytes.size() - 16);
  EXPECT_EQ(trailer.substr(8, 4), std::string("\x03\x00\x06\x00", 4));
  const uint32_t blocks = DecodeFixed32(trailer.data() + 12);
  const uint32_t upper = DecodeFixed32(trailer.data());
  EXPECT_EQ(bytes.size(), 16 + 8 * (blocks * 6ull + (blocks - upper)));
  fprintf(stderr, "frozen: %u blocks, upper from %u, hash %016llx\n", blocks, upper,
          static_cast<unsigned long long>(Hash64(bytes)));
  EXPECT_EQ(blocks, 19u);
  EXPECT_EQ(upper, 3u);
  EXPECT_EQ(Hash64(bytes), 0xdfccdf4011a75e60ull) << std::hex << Hash64(bytes);
}

// Costs, printed for the record; timing is never asserted.
TEST(RibbonTest, PrintCosts) {
#if defined(__SANITIZE_ADDRESS__)
  const size_t n = 100000;  // the figures mean nothing under sanitizers anyway
#else
  const size_t n = 1000000;
#endif
  std::vector<std::string> keys(n);
  for (size_t i = 0; i < n; i++) keys[i] = TaggedKey(i * 0x9e3779b97f4a7c15ull);
  for (bool use_ribbon : {false, true}) {
    std::unique_ptr<const FilterPolicy> p(use_ribbon ? NewRibbonFilterPolicy(10, -1)
                                                     : NewBloomFilterPolicy(10));
    auto builder = NewFilterBitsBuilder(*p);
    const auto t0 = std::chrono::steady_clock::now();
    for (const std::string& k : keys) builder->AddKey(k);
    const std::string bytes = builder->Finish();
    const auto t1 = std::chrono::steady_clock::now();
    auto reader = NewFilterBitsReader(bytes);
    size_t hits = 0;
    for (const std::string& k : keys) hits += reader->MayMatch(k);
    const auto t2 = std::chrono::steady_clock::now();
    size_t fps = 0;
    for (size_t i = 0; i < n; i++) fps += reader->MayMatch(TaggedKey(i, 'q'));
    const auto t3 = std::chrono::steady_clock::now();
    ASSERT_EQ(hits, n);
    auto ns = [&](auto a, auto b) {
      return std::chrono::duration<double, std::nano>(b - a).count() / n;
    };
    fprintf(stderr,
            "%s, %zu keys: build %.1f ns/key (incl. hashing), query %.1f ns (present) / %.1f "
            "ns (absent), %.3f bits/key, fp %.4f%%\n",
            use_ribbon ? "Ribbon" : "Bloom ", n, ns(t0, t1), ns(t1, t2), ns(t2, t3),
            BitsPerKey(bytes, n), fps * 100.0 / n);
  }
}

}  // namespace
}  // namespace shale
