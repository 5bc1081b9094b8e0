#include "util/hash.h"

#include <xxhash.h>

// libxxhash's XXH3_64bits_withSeed is built for baseline x86-64 (SSE2 at most); its
// run-time dispatch entry picks AVX2 or AVX-512 when the CPU has them and gives the same
// hashes. For a block checksum that is 2-3x less time (block_bench
// BlockChecksum/kXXH3/bytes:4096: 223-350 ns plain, 105-117 ns dispatched, AVX-512 here).
// Inputs up to 240 bytes take XXH3's short paths, the same code either way, and skip the
// dispatch.
#if defined(__x86_64__) && __has_include(<xxh_x86dispatch.h>)
#define XXH_DISPATCH_DISABLE_REPLACE
#include <xxh_x86dispatch.h>
#define SHALE_XXH3_DISPATCH 1
#endif

namespace shale {

namespace {

constexpr size_t kXXH3ShortInputMax = 240;

#ifdef SHALE_XXH3_DISPATCH
// The dispatch picks its implementation on its first call, writing a pointer that later
// calls read; making that first call here, before main, keeps threads from racing on it.
[[maybe_unused]] const uint64_t kDispatchWarmed = [] {
  char buf[kXXH3ShortInputMax + 1] = {};
  return XXH3_64bits_withSeed_dispatch(buf, sizeof(buf), 0);
}();
#endif

}  // namespace

uint64_t Hash64(const char* data, size_t n, uint64_t seed) {
#ifdef SHALE_XXH3_DISPATCH
  if (n > kXXH3ShortInputMax) return XXH3_64bits_withSeed_dispatch(data, n, seed);
#endif
  return XXH3_64bits_withSeed(data, n, seed);
}

}  // namespace shale
