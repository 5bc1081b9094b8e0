// CRC-32C (Castagnoli), as the WAL and the SST block trailers store it. Uses the SSE4.2
// crc32 instruction when the CPU has it (checked once at run time) and a table otherwise.
#pragma once

#include <cstddef>
#include <cstdint>

namespace shale::crc32c {

// The crc32c of concat(A, data[0,n)) given init_crc = crc32c(A).
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);
inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }

// Stored CRCs are masked: a CRC over bytes that themselves hold CRCs is weak, so the value
// is rotated and offset before it is written.
inline constexpr uint32_t kMaskDelta = 0xa282ead8ul;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return ((rot >> 17) | (rot << 15));
}

// Whether the hardware path is in use (for tests and db_bench's header).
bool IsFastCrc32Supported();

}  // namespace shale::crc32c
