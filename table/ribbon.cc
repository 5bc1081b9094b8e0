#include "table/ribbon.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "util/coding.h"
#include "util/hash.h"

namespace shale {
namespace ribbon {
namespace {

using U128 = unsigned __int128;

constexpr int kCoeffBits = 128;
constexpr uint64_t kBlockSlots = 64;

// A strong 64-bit finalizer: every output bit depends on every input bit. The key hash is
// computed once (Hash64); everything a row needs is derived from it and the seed, so a new
// seed needs no second pass over the keys.
inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

inline uint64_t FastRange64(uint64_t hash, uint64_t n) {
  return static_cast<uint64_t>((static_cast<U128>(hash) * n) >> 64);
}

struct Row {
  uint64_t start;
  uint64_t coeff_lo;  // bit 0 (the start slot) always set
  uint64_t coeff_hi;
  uint32_t result;
};

inline uint64_t SeededHash(uint64_t key_hash, uint8_t seed) {
  return Mix64(key_hash + (seed + uint64_t{1}) * 0x9e3779b97f4a7c15ull);
}

inline uint64_t StartOf(uint64_t key_hash, uint8_t seed, uint64_t num_starts) {
  return FastRange64(SeededHash(key_hash, seed), num_starts);
}

inline Row MakeRow(uint64_t key_hash, uint8_t seed, uint64_t num_starts) {
  const uint64_t x = SeededHash(key_hash, seed);
  Row row;
  // The start takes the high bits of x, the result its low bits; the coefficients get
  // their own remixes.
  row.start = FastRange64(x, num_starts);
  row.result = static_cast<uint32_t>(x);
  row.coeff_lo = Mix64(x ^ 0x2545f4914f6cdd1dull) | 1;
  row.coeff_hi = Mix64(x ^ 0xd6e8feb86659fd93ull);
  return row;
}

inline int Columns(const Layout& l, uint64_t block) {
  return l.lower_columns + (block >= l.upper_start_block ? 1 : 0);
}

// Index of block's first word.
inline uint64_t BlockOffset(uint64_t block, int lower_columns, uint64_t upper_start_block) {
  return block * lower_columns + (block > upper_start_block ? block - upper_start_block : 0);
}

inline uint64_t TotalWords(const Layout& l) {
  return BlockOffset(l.num_blocks, l.lower_columns, l.upper_start_block);
}

inline int CountTrailingZeros128(U128 v) {
  const auto lo = static_cast<uint64_t>(v);
  if (lo != 0) return __builtin_ctzll(lo);
  return 64 + __builtin_ctzll(static_cast<uint64_t>(v >> 64));
}

inline uint32_t Parity128(U128 v) {
  return static_cast<uint32_t>(
      __builtin_parityll(static_cast<uint64_t>(v) ^ static_cast<uint64_t>(v >> 64)));
}

// Slots per key that keep banding failures rare. Standard Ribbon with 128-bit rows needs a
// few percent of spare slots, a little more as the key count grows (more chances for some
// stretch of the band to be overloaded); small sets need proportionally more because the
// last kCoeffBits - 1 slots take no starts.
double SlotsPerKey(size_t num_keys) {
  const double log2n = std::log2(static_cast<double>(std::max<size_t>(num_keys, 2)));
  return 1.01 + 0.0025 * log2n;
}

class RibbonReader final : public FilterBitsReader {
 public:
  RibbonReader(const char* data, const Layout& layout, uint8_t seed)
      : data_(data),
        num_starts_(layout.num_blocks * kBlockSlots - (kCoeffBits - 1)),
        upper_start_block_(layout.upper_start_block),
        lower_columns_(layout.lower_columns),
        seed_(seed) {}

  bool MayMatch(const Slice& key) const override {
    const Row row = MakeRow(Hash64(key), seed_, num_starts_);
    const uint64_t block = row.start / kBlockSlots;
    const unsigned shift = static_cast<unsigned>(row.start % kBlockSlots);
    // The row shifted to the block boundary spans three words; with shift 0 the third is
    // empty (and its block may lie past the end, so block + 1 stands in for it).
    const uint64_t x0 = row.coeff_lo << shift;
    const uint64_t x1 =
        shift == 0 ? row.coeff_hi : (row.coeff_hi << shift) | (row.coeff_lo >> (64 - shift));
    const uint64_t x2 = shift == 0 ? 0 : row.coeff_hi >> (64 - shift);
    const char* w0 = data_ + 8 * BlockOffset(block, lower_columns_, upper_start_block_);
    const char* w1 = data_ + 8 * BlockOffset(block + 1, lower_columns_, upper_start_block_);
    const char* w2 =
        data_ + 8 * BlockOffset(block + (shift == 0 ? 1 : 2), lower_columns_, upper_start_block_);
    const int columns = lower_columns_ + (block >= upper_start_block_ ? 1 : 0);
    for (int j = 0; j < columns; j++) {
      const uint64_t v = (x0 & DecodeFixed64(w0 + 8 * j)) ^ (x1 & DecodeFixed64(w1 + 8 * j)) ^
                         (x2 & DecodeFixed64(w2 + 8 * j));
      if (static_cast<uint32_t>(__builtin_parityll(v)) != ((row.result >> j) & 1)) return false;
    }
    return true;
  }

 private:
  const char* data_;
  uint64_t num_starts_;
  uint64_t upper_start_block_;
  int lower_columns_;
  uint8_t seed_;
};

// The hashes grouped by the region of slots their rows start in. Whether banding succeeds
// does not depend on the order of the rows, but its speed does: rows that start close
// together work on slots already in cache.
std::vector<uint64_t> OrderByStart(const std::vector<uint64_t>& hashes, uint8_t seed,
                                   uint64_t num_starts) {
  constexpr int kRegionBits = 10;
  std::vector<uint64_t> counts((num_starts >> kRegionBits) + 2, 0);
  for (uint64_t h : hashes) counts[(StartOf(h, seed, num_starts) >> kRegionBits) + 1]++;
  for (size_t i = 1; i < counts.size(); i++) counts[i] += counts[i - 1];
  std::vector<uint64_t> ordered(hashes.size());
  for (uint64_t h : hashes) ordered[counts[StartOf(h, seed, num_starts) >> kRegionBits]++] = h;
  return ordered;
}

}  // namespace

bool ChooseLayout(size_t num_keys, double fp_rate, Layout* layout) {
  if (num_keys == 0 || !(fp_rate > 0.0) || fp_rate >= 1.0) return false;
  // Columns: 2^-r >= fp_rate > 2^-(r+1); the share p of starts in (r+1)-column blocks
  // solves (1 - p) 2^-r + p 2^-(r+1) = fp_rate.
  const double log_inv = std::log2(1.0 / fp_rate);
  int r = static_cast<int>(std::floor(log_inv));
  if (r + 1 > kMaxColumns) return false;
  double upper_share = 2.0 * (1.0 - fp_rate * std::ldexp(1.0, r));
  upper_share = std::clamp(upper_share, 0.0, 1.0);

  const double slots =
      std::ceil(static_cast<double>(num_keys) * SlotsPerKey(num_keys)) + (kCoeffBits - 1);
  const double blocks = std::ceil(slots / kBlockSlots);
  if (blocks > static_cast<double>(UINT32_MAX)) return false;
  layout->num_blocks = std::max<uint32_t>(2, static_cast<uint32_t>(blocks));
  layout->lower_columns = r;
  // Blocks holding starts, the last one possibly in part.
  const uint64_t num_starts = uint64_t{layout->num_blocks} * kBlockSlots - (kCoeffBits - 1);
  const double start_blocks = static_cast<double>(num_starts) / kBlockSlots;
  // Round toward more upper blocks so the rate stays at or under the target.
  layout->upper_start_block = static_cast<uint32_t>(std::floor(start_blocks * (1.0 - upper_share)));
  return true;
}

uint64_t SerializedSize(const Layout& layout) { return TotalWords(layout) * 8 + kTrailerSize; }

double ExpectedFpRate(const Layout& layout) {
  const uint64_t num_starts = uint64_t{layout.num_blocks} * kBlockSlots - (kCoeffBits - 1);
  const uint64_t lower_starts =
      std::min<uint64_t>(num_starts, uint64_t{layout.upper_start_block} * kBlockSlots);
  const double lower_share = static_cast<double>(lower_starts) / num_starts;
  return lower_share * std::ldexp(1.0, -layout.lower_columns) +
         (1 - lower_share) * std::ldexp(1.0, -(layout.lower_columns + 1));
}

bool BuildWithSeed(const std::vector<uint64_t>& hashes, const Layout& layout, uint8_t seed,
                   std::string* out) {
  if (layout.num_blocks < 2 || layout.lower_columns < 0 || layout.lower_columns + 1 > kMaxColumns ||
      layout.upper_start_block > layout.num_blocks) {
    return false;
  }
  const uint64_t num_slots = uint64_t{layout.num_blocks} * kBlockSlots;
  const uint64_t num_starts = num_slots - (kCoeffBits - 1);
  // The system is solved for lower_columns + 1 columns everywhere; blocks below
  // upper_start_block then simply do not store the last one.
  const int columns = layout.lower_columns + 1;
  const uint32_t result_mask = columns == 32 ? ~uint32_t{0} : (uint32_t{1} << columns) - 1;

  // Banding: row i of the echelon form lives at slot i (its leading coefficient), or the
  // slot is empty (coefficient zero).
  std::vector<U128> coeff(num_slots, 0);
  std::vector<uint32_t> result(num_slots, 0);
  for (uint64_t h : OrderByStart(hashes, seed, num_starts)) {
    const Row row = MakeRow(h, seed, num_starts);
    uint64_t slot = row.start;
    U128 c = (static_cast<U128>(row.coeff_hi) << 64) | row.coeff_lo;
    uint32_t r = row.result & result_mask;
    for (;;) {
      const U128 existing = coeff[slot];
      if (existing == 0) {
        coeff[slot] = c;
        result[slot] = r;
        break;
      }
      c ^= existing;
      r ^= result[slot];
      if (c == 0) {
        // Linearly dependent on rows already in: harmless if consistent (a duplicate hash),
        // fatal otherwise.
        if (r != 0) return false;
        break;
      }
      const int tz = CountTrailingZeros128(c);
      slot += tz;
      c >>= tz;
    }
  }

  // Back-substitution from the last slot down. state[j] bit k holds column j of slot
  // i + k, so a row's dot product with the solution is one AND and a parity.
  const uint64_t total_words = TotalWords(layout);
  const size_t base = out->size();
  out->resize(base + total_words * 8 + kTrailerSize);
  char* words = out->data() + base;
  U128 state[kMaxColumns] = {};
  for (uint64_t i = num_slots; i-- > 0;) {
    const U128 c = coeff[i];
    if (c == 0) {
      // A free variable: any value satisfies the system; a pseudo-random one keeps the
      // solution from being biased toward zero.
      const uint32_t r = static_cast<uint32_t>(Mix64(i + seed * 0x9e3779b97f4a7c15ull));
      for (int j = 0; j < columns; j++) state[j] = (state[j] << 1) | ((r >> j) & 1);
    } else {
      const uint32_t r = result[i];
      for (int j = 0; j < columns; j++) {
        state[j] <<= 1;
        state[j] |= ((r >> j) & 1) ^ Parity128(c & state[j]);
      }
    }
    if (i % kBlockSlots == 0) {
      const uint64_t block = i / kBlockSlots;
      char* dst = words + 8 * BlockOffset(block, layout.lower_columns, layout.upper_start_block);
      const int stored = Columns(layout, block);
      for (int j = 0; j < stored; j++) EncodeFixed64(dst + 8 * j, static_cast<uint64_t>(state[j]));
    }
  }

  char* trailer = words + total_words * 8;
  EncodeFixed32(trailer, layout.upper_start_block);
  EncodeFixed32(trailer + 4, 0);
  trailer[8] = static_cast<char>(kFormatStandardRibbon);
  trailer[9] = static_cast<char>(seed);
  trailer[10] = static_cast<char>(layout.lower_columns);
  trailer[11] = 0;
  EncodeFixed32(trailer + 12, layout.num_blocks);
  return true;
}

bool Build(const std::vector<uint64_t>& hashes, const Layout& layout, int max_attempts,
           std::string* out) {
  for (int seed = 0; seed < max_attempts && seed < 256; seed++) {
    if (BuildWithSeed(hashes, layout, static_cast<uint8_t>(seed), out)) return true;
  }
  return false;
}

std::unique_ptr<FilterBitsReader> NewReader(const Slice& contents) {
  if (contents.size() < kTrailerSize) return nullptr;
  const char* trailer = contents.data() + contents.size() - kTrailerSize;
  Layout layout;
  layout.upper_start_block = DecodeFixed32(trailer);
  layout.lower_columns = static_cast<uint8_t>(trailer[10]);
  layout.num_blocks = DecodeFixed32(trailer + 12);
  const auto seed = static_cast<uint8_t>(trailer[9]);
  if (static_cast<uint8_t>(trailer[8]) != kFormatStandardRibbon ||
      DecodeFixed32(trailer + 4) != 0 || trailer[11] != 0 || layout.num_blocks < 2 ||
      layout.lower_columns + 1 > kMaxColumns || layout.upper_start_block > layout.num_blocks ||
      contents.size() != SerializedSize(layout)) {
    return nullptr;
  }
  return std::make_unique<RibbonReader>(contents.data(), layout, seed);
}

}  // namespace ribbon
}  // namespace shale
