// The built-in filter policies: the cache-local Bloom filter behind NewBloomFilterPolicy,
// and NewRibbonFilterPolicy, which writes a Standard Ribbon filter (table/ribbon.h) or,
// when that would not pay or cannot be built, a Bloom filter of the same false-positive
// rate.
//
// Bloom serialized form: num_lines 64-byte lines of filter bits, then an 8-byte trailer:
//   [0]    format id (kFormatCacheLocalBloom)
//   [1]    number of probes per key
//   [2..3] reserved, zero (a writer that needs them defines a new format id)
//   [4..7] num_lines, fixed32
// A key is hashed once to 64 bits. The upper 32 bits pick its line, so every probe touches
// one cache line; the lower 32 bits are stepped by multiplication to give each probe's bit.
// Zero lines is the filter of no keys and matches nothing.
//
// Every format ends in 8 bytes starting with its format id, so a reader dispatches on the
// byte 8 from the end.

#include "table/filter.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <vector>

#include "table/ribbon.h"
#include "util/coding.h"
#include "util/hash.h"

namespace shale {

FilterBitsBuilder::~FilterBitsBuilder() = default;
FilterBitsReader::~FilterBitsReader() = default;

namespace {

constexpr uint8_t kFormatCacheLocalBloom = 1;
constexpr size_t kTrailerSize = 8;
constexpr uint32_t kLineBytes = 64;
constexpr uint32_t kLineBits = kLineBytes * 8;
constexpr int kMaxProbes = 30;

// Maps a 32-bit hash uniformly onto [0, n) without a division.
inline uint32_t FastRange32(uint32_t hash, uint32_t n) {
  return static_cast<uint32_t>((static_cast<uint64_t>(hash) * n) >> 32);
}

// Odd multiplier stepping the probe hash: the top 9 bits of each product choose a bit.
constexpr uint32_t kProbeMultiplier = 0x9e3779b9;

// Number of probes for a given density. Each bound is the millibits per key at which one
// more probe starts to pay: the fewest probes whose expected false-positive rate (for 512-bit
// lines holding a Poisson number of keys) is within 1% of the best achievable. Fewer probes
// cost less CPU on every lookup, so near-ties go to the smaller count.
int ChooseNumProbes(int millibits_per_key) {
  static constexpr int kUpperBounds[] = {
      2140,  3670,  5210,  6810,  8480,  10250, 12150, 14190, 16410, 18850, 21540,
      24530, 27880, 31630, 35870, 40670, 46130, 52370, 59520, 67750, 77240, 88230,
  };
  int probes = 1;
  for (int bound : kUpperBounds) {
    if (millibits_per_key < bound) return probes;
    probes++;
  }
  return probes;
}

inline void AddHash(uint64_t h, uint32_t num_lines, int num_probes, char* data) {
  char* line = data + static_cast<size_t>(FastRange32(static_cast<uint32_t>(h >> 32), num_lines)) *
                          kLineBytes;
  uint32_t probe = static_cast<uint32_t>(h);
  for (int i = 0; i < num_probes; i++) {
    const uint32_t bit = probe >> 23;  // 0..511
    line[bit >> 3] = static_cast<char>(line[bit >> 3] | (1 << (bit & 7)));
    probe *= kProbeMultiplier;
  }
}

inline bool HashMayMatch(uint64_t h, uint32_t num_lines, int num_probes, const char* data) {
  const char* line =
      data +
      static_cast<size_t>(FastRange32(static_cast<uint32_t>(h >> 32), num_lines)) * kLineBytes;
  uint32_t probe = static_cast<uint32_t>(h);
  for (int i = 0; i < num_probes; i++) {
    const uint32_t bit = probe >> 23;
    if ((line[bit >> 3] & (1 << (bit & 7))) == 0) return false;
    probe *= kProbeMultiplier;
  }
  return true;
}

// Both built-in policies read each other's filters (see FilterPolicy::CompatibilityName).
constexpr const char* kBloomName = "shale.BuiltinBloomFilter";

class BloomFilterPolicy final : public FilterPolicy {
 public:
  explicit BloomFilterPolicy(double bits_per_key) {
    // Below one bit per key a filter is nearly useless; above 100 it only wastes space.
    if (!(bits_per_key >= 1.0)) bits_per_key = 1.0;  // also catches NaN
    if (bits_per_key > 100.0) bits_per_key = 100.0;
    millibits_per_key_ = static_cast<int>(std::lround(bits_per_key * 1000.0));
    bits_per_key_ = millibits_per_key_ / 1000.0;
  }
  const char* Name() const override { return kBloomName; }
  double GetBitsPerKey() const override { return bits_per_key_; }
  int millibits_per_key() const { return millibits_per_key_; }

 private:
  int millibits_per_key_;
  double bits_per_key_;
};

class RibbonFilterPolicy final : public FilterPolicy {
 public:
  RibbonFilterPolicy(double bloom_equivalent_bits_per_key, int bloom_before_level)
      : bloom_(bloom_equivalent_bits_per_key),
        bloom_before_level_(bloom_before_level),
        fp_rate_(CacheLocalBloomFpRate(bloom_.GetBitsPerKey())) {}
  const char* Name() const override { return "shale.RibbonFilter"; }
  const char* CompatibilityName() const override { return kBloomName; }
  double GetBitsPerKey() const override { return bloom_.GetBitsPerKey(); }
  int millibits_per_key() const { return bloom_.millibits_per_key(); }
  int bloom_before_level() const { return bloom_before_level_; }
  double fp_rate() const { return fp_rate_; }

 private:
  const BloomFilterPolicy bloom_;  // the Bloom filter it stands in for
  const int bloom_before_level_;
  const double fp_rate_;
};

uint32_t BloomNumLines(size_t num_keys, int millibits_per_key) {
  if (num_keys == 0) return 0;
  const long double bits = static_cast<long double>(num_keys) * millibits_per_key / 1000.0L;
  const long double lines = std::ceil(bits / kLineBits);
  if (lines >= static_cast<long double>(UINT32_MAX)) return UINT32_MAX;
  return std::max<uint32_t>(1, static_cast<uint32_t>(lines));
}

uint64_t BloomSerializedSize(size_t num_keys, int millibits_per_key) {
  return uint64_t{BloomNumLines(num_keys, millibits_per_key)} * kLineBytes + kTrailerSize;
}

std::string FinishBloom(const std::vector<uint64_t>& hashes, int millibits_per_key) {
  const int num_probes = ChooseNumProbes(millibits_per_key);
  const uint32_t num_lines = BloomNumLines(hashes.size(), millibits_per_key);
  std::string result(static_cast<size_t>(num_lines) * kLineBytes + kTrailerSize, '\0');
  if (num_lines > 0) {
    for (uint64_t h : hashes) AddHash(h, num_lines, num_probes, result.data());
  }
  char* trailer = result.data() + static_cast<size_t>(num_lines) * kLineBytes;
  trailer[0] = static_cast<char>(kFormatCacheLocalBloom);
  trailer[1] = static_cast<char>(num_probes);
  trailer[2] = 0;
  trailer[3] = 0;
  EncodeFixed32(trailer + 4, num_lines);
  return result;
}

// Collects one 64-bit hash per key; the filter is made from the hashes at Finish().
class HashCollectingBuilder : public FilterBitsBuilder {
 public:
  void AddKey(const Slice& key) final {
    const uint64_t h = Hash64(key);
    // An equal hash adds nothing to either filter, so a repeated key (or a 64-bit
    // collision) is dropped.
    if (!hashes_.empty() && hashes_.back() == h) return;
    hashes_.push_back(h);
  }

  size_t NumAdded() const final { return hashes_.size(); }

  std::string Finish() final {
    std::string result = Build(hashes_);
    hashes_.clear();
    hashes_.shrink_to_fit();
    return result;
  }

 protected:
  virtual std::string Build(const std::vector<uint64_t>& hashes) = 0;

 private:
  std::vector<uint64_t> hashes_;
};

class CacheLocalBloomBuilder final : public HashCollectingBuilder {
 public:
  explicit CacheLocalBloomBuilder(int millibits_per_key) : millibits_per_key_(millibits_per_key) {}

 private:
  std::string Build(const std::vector<uint64_t>& hashes) override {
    return FinishBloom(hashes, millibits_per_key_);
  }

  const int millibits_per_key_;
};

class StandardRibbonBuilder final : public HashCollectingBuilder {
 public:
  StandardRibbonBuilder(int bloom_millibits_per_key, double fp_rate)
      : bloom_millibits_per_key_(bloom_millibits_per_key), fp_rate_(fp_rate) {}

 private:
  std::string Build(const std::vector<uint64_t>& hashes) override {
    ribbon::Layout layout;
    // Few keys: the Ribbon's fixed cost (two blocks at least) can exceed the Bloom filter.
    if (ribbon::ChooseLayout(hashes.size(), fp_rate_, &layout) &&
        ribbon::SerializedSize(layout) <
            BloomSerializedSize(hashes.size(), bloom_millibits_per_key_)) {
      std::string result;
      if (ribbon::Build(hashes, layout, ribbon::kMaxAttempts, &result)) return result;
    }
    return FinishBloom(hashes, bloom_millibits_per_key_);
  }

  const int bloom_millibits_per_key_;
  const double fp_rate_;
};

class CacheLocalBloomReader final : public FilterBitsReader {
 public:
  CacheLocalBloomReader(const char* data, uint32_t num_lines, int num_probes)
      : data_(data), num_lines_(num_lines), num_probes_(num_probes) {}
  bool MayMatch(const Slice& key) const override {
    return HashMayMatch(Hash64(key), num_lines_, num_probes_, data_);
  }

 private:
  const char* data_;
  uint32_t num_lines_;
  int num_probes_;
};

class ConstantReader final : public FilterBitsReader {
 public:
  explicit ConstantReader(bool answer) : answer_(answer) {}
  bool MayMatch(const Slice&) const override { return answer_; }

 private:
  bool answer_;
};

}  // namespace

double CacheLocalBloomFpRate(double bits_per_key) {
  const int millibits = static_cast<int>(std::lround(bits_per_key * 1000.0));
  if (millibits <= 0) return 1.0;
  const int k = ChooseNumProbes(millibits);
  const double keys_per_line = kLineBits * 1000.0 / millibits;
  // Sum over the Poisson-distributed number n of keys sharing the queried line.
  double sum = 0;
  double p = std::exp(-keys_per_line);
  const int limit = static_cast<int>(keys_per_line * 6) + 60;
  for (int n = 0; n < limit; n++) {
    if (n > 0) p *= keys_per_line / n;
    sum += p * std::pow(1.0 - std::pow(1.0 - 1.0 / kLineBits, k * n), k);
  }
  return sum;
}

const FilterPolicy* NewBloomFilterPolicy(double bits_per_key, bool /*use_block_based_builder*/) {
  return new BloomFilterPolicy(bits_per_key);
}

const FilterPolicy* NewRibbonFilterPolicy(double bloom_equivalent_bits_per_key,
                                          int bloom_before_level) {
  return new RibbonFilterPolicy(bloom_equivalent_bits_per_key, bloom_before_level);
}

bool DescribeBuiltinFilterPolicy(const FilterPolicy& policy, bool* ribbon,
                                 int* bloom_before_level) {
  if (dynamic_cast<const BloomFilterPolicy*>(&policy) != nullptr) {
    *ribbon = false;
    *bloom_before_level = 0;
    return true;
  }
  if (const auto* rib = dynamic_cast<const RibbonFilterPolicy*>(&policy)) {
    *ribbon = true;
    *bloom_before_level = rib->bloom_before_level();
    return true;
  }
  return false;
}

std::unique_ptr<FilterBitsBuilder> NewFilterBitsBuilder(const FilterPolicy& policy,
                                                        const FilterBuildingContext& context) {
  if (const auto* bloom = dynamic_cast<const BloomFilterPolicy*>(&policy)) {
    return std::make_unique<CacheLocalBloomBuilder>(bloom->millibits_per_key());
  }
  if (const auto* rib = dynamic_cast<const RibbonFilterPolicy*>(&policy)) {
    // RocksDB's reading of bloom_before_level: a flush is level -1, an unknown level the
    // bottommost.
    const int levelish = context.is_flush                ? -1
                         : context.level_at_creation < 0 ? INT_MAX
                                                         : context.level_at_creation;
    if (levelish < rib->bloom_before_level()) {
      return std::make_unique<CacheLocalBloomBuilder>(rib->millibits_per_key());
    }
    return std::make_unique<StandardRibbonBuilder>(rib->millibits_per_key(), rib->fp_rate());
  }
  return nullptr;
}

std::unique_ptr<FilterBitsReader> NewFilterBitsReader(const Slice& contents) {
  const auto always_true = [] { return std::make_unique<ConstantReader>(true); };
  if (contents.size() < kTrailerSize) return always_true();
  const char* trailer = contents.data() + contents.size() - kTrailerSize;
  const auto format = static_cast<uint8_t>(trailer[0]);
  if (format == ribbon::kFormatStandardRibbon) {
    std::unique_ptr<FilterBitsReader> reader = ribbon::NewReader(contents);
    if (reader == nullptr) return always_true();
    return reader;
  }
  const int num_probes = static_cast<uint8_t>(trailer[1]);
  const uint32_t num_lines = DecodeFixed32(trailer + 4);
  if (format != kFormatCacheLocalBloom || num_probes < 1 || num_probes > kMaxProbes ||
      trailer[2] != 0 || trailer[3] != 0 ||
      contents.size() - kTrailerSize != static_cast<uint64_t>(num_lines) * kLineBytes) {
    return always_true();
  }
  if (num_lines == 0) return std::make_unique<ConstantReader>(false);
  return std::make_unique<CacheLocalBloomReader>(contents.data(), num_lines, num_probes);
}

}  // namespace shale
