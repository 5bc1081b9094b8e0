#include "util/hash.h"

#include <xxhash.h>

namespace shale {

uint64_t Hash64(const char* data, size_t n, uint64_t seed) {
  return XXH3_64bits_withSeed(data, n, seed);
}

}  // namespace shale
