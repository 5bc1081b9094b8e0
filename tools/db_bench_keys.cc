#include "tools/db_bench_keys.h"

#include <algorithm>
#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace shale::tools {

void GenerateKeyFromInt(uint64_t v, int key_size, char* key) {
  const int number_bytes = std::min(key_size, 8);
  for (int i = 0; i < number_bytes; i++) {
    key[i] = static_cast<char>((v >> (8 * (number_bytes - 1 - i))) & 0xff);
  }
  if (key_size > number_bytes) memset(key + number_bytes, '0', key_size - number_bytes);
}

Lehmer::Lehmer(uint32_t seed) : state_(seed & 0x7fffffffu) {
  if (state_ == 0 || state_ == 0x7fffffffu) state_ = 1;
}

uint32_t Lehmer::Next() {
  constexpr uint64_t kModulus = 0x7fffffffu;  // 2^31 - 1
  constexpr uint64_t kMultiplier = 16807;
  state_ = static_cast<uint32_t>((state_ * kMultiplier) % kModulus);
  return state_;
}

RandomGenerator::RandomGenerator(double compression_ratio, size_t min_size) {
  constexpr size_t kPiece = 100;
  Lehmer rnd(301);
  const size_t target = std::max<size_t>(1 << 20, min_size);
  size_t unique = static_cast<size_t>(kPiece * compression_ratio);
  unique = std::clamp<size_t>(unique, 1, kPiece);
  std::string seedtext(unique, ' ');
  data_.reserve(target + kPiece);
  while (data_.size() < target) {
    // RocksDB's db_bench draws its bytes over 0..CHAR_MAX - 1 (test::CompressibleString,
    // Random::RandomBinaryString): printable text would entropy-code smaller under zstd and
    // decompress differently, so the two binaries would not write the same data.
    for (char& c : seedtext) c = static_cast<char>(rnd.Uniform(127));
    // Repeat the random text to fill the piece: the repeats are what compresses.
    for (size_t filled = 0; filled < kPiece; filled += unique) {
      data_.append(seedtext, 0, std::min(unique, kPiece - filled));
    }
  }
}

Slice RandomGenerator::Generate(size_t len) {
  if (pos_ + len > data_.size()) pos_ = 0;
  pos_ += len;
  return Slice(data_.data() + pos_ - len, len);
}

KeyGenerator::KeyGenerator(std::mt19937_64* rand, Order order, uint64_t num, uint64_t seed)
    : rand_(rand), order_(order), num_(num == 0 ? 1 : num) {
  if (order_ == Order::kUniqueRandom) {
    permutation_.resize(num_);
    for (uint64_t i = 0; i < num_; i++) permutation_[i] = i;
    std::shuffle(permutation_.begin(), permutation_.end(), std::mt19937_64(seed));
  }
}

uint64_t KeyGenerator::Next() {
  switch (order_) {
    case Order::kSequential:
      return next_++;
    case Order::kRandom:
      return (*rand_)() % num_;
    case Order::kUniqueRandom:
      // Past num keys the order starts over, as a sequence of one permutation.
      return permutation_[next_++ % num_];
  }
  return 0;
}

bool RangeTombstoneDue(int64_t num_written, int64_t before, int64_t per, int64_t max) {
  if (per <= 0 || num_written <= before) return false;
  const int64_t since = num_written - before;
  return since % per == 0 && since / per <= max;
}

namespace {

std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> table{};
  constexpr uint32_t kReversedPolynomial = 0x82f63b78u;
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ kReversedPolynomial : c >> 1;
    table[i] = c;
  }
  return table;
}

uint32_t Crc32cTable(uint32_t crc, const char* data, size_t n) {
  static const std::array<uint32_t, 256> table = MakeCrcTable();
  for (size_t i = 0; i < n; i++) {
    crc = table[(crc ^ static_cast<uint8_t>(data[i])) & 0xff] ^ (crc >> 8);
  }
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(uint32_t crc, const char* data,
                                                          size_t n) {
  uint64_t c = crc;
  while (n >= 8) {
    uint64_t word;
    memcpy(&word, data, 8);
    c = _mm_crc32_u64(c, word);
    data += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n > 0) {
    c32 = _mm_crc32_u8(c32, static_cast<uint8_t>(*data));
    data++;
    n--;
  }
  return c32;
}
#endif

}  // namespace

uint32_t Crc32c(const char* data, size_t n) {
#if defined(__x86_64__)
  static const bool has_sse42 = __builtin_cpu_supports("sse4.2");
  if (has_sse42) return ~Crc32cSse42(~0u, data, n);
#endif
  return ~Crc32cTable(~0u, data, n);
}

}  // namespace shale::tools
