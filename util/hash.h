// Non-cryptographic hashes: XXH3 (from libxxhash) for checksums, filters and sharding.
#pragma once

#include <cstddef>
#include <cstdint>

#include "shale/slice.h"

namespace shale {

uint64_t Hash64(const char* data, size_t n, uint64_t seed = 0);
inline uint64_t Hash64(const Slice& s, uint64_t seed = 0) {
  return Hash64(s.data(), s.size(), seed);
}
inline uint32_t Hash32(const Slice& s, uint32_t seed = 0) {
  return static_cast<uint32_t>(Hash64(s.data(), s.size(), seed));
}

}  // namespace shale
