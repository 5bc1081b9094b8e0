// Random: a small, fast, seedable generator (xorshift64*) for tests, skip-list heights
// and benchmarks. Not for anything that needs unpredictability.
#pragma once

#include <cstdint>

namespace shale {

class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed == 0 ? 0x9e3779b97f4a7c15ull : seed) {}
  uint64_t Next64() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545f4914f6cdd1dull;
  }
  uint32_t Next() { return static_cast<uint32_t>(Next64() >> 32); }
  // Uniform in [0, n). REQUIRES: n > 0
  uint32_t Uniform(uint32_t n) { return static_cast<uint32_t>((Next64() >> 32) % n); }
  // True about once in n calls.
  bool OneIn(uint32_t n) { return Uniform(n) == 0; }
  // Skewed: picks a bit count in [0, max_log] uniformly, then a number of that many bits.
  uint32_t Skewed(int max_log) { return Uniform(1u << Uniform(max_log + 1)); }

 private:
  uint64_t state_;
};

}  // namespace shale
