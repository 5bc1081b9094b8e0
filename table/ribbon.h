// Standard Ribbon filter (Dillinger & Walzer, "Ribbon filter: practically smaller than Bloom
// and Xor", 2021), the structure behind NewRibbonFilterPolicy.
//
// Each key becomes one linear equation over GF(2): a 128-bit coefficient row placed at a
// hashed start slot, and r result bits. Building solves the banded system by Gaussian
// elimination as keys arrive ("banding") and then back-substitution; the solution, r bits
// per slot, is stored column by column in 64-slot blocks ("interleaved"), so a query is a
// handful of AND/XOR/popcount operations over three adjacent blocks. A key that was added
// always satisfies its equation; any other key does with probability 2^-r.
//
// A fractional r is had by giving the lower blocks r columns and the blocks from
// upper_start_block on r + 1: the column count never decreases along the slots, so every
// slot a key's row touches stores at least the columns its start block asks for.
//
// Serialized form: the blocks' 64-bit words (block b holds columns(b) words), then a
// 16-byte trailer:
//   [0..3]   upper_start_block, fixed32
//   [4..7]   reserved, zero
//   [8]      format id (kFormatStandardRibbon)
//   [9]      hash seed that made banding succeed
//   [10]     lower column count r (0..kMaxColumns - 1)
//   [11]     reserved, zero
//   [12..15] num_blocks, fixed32 (at least 2)
// The last 8 bytes share the Bloom trailer's shape (format id first), so one byte tells
// the formats apart.
//
// Thread safety: the functions are pure; a reader is immutable and may be shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shale/slice.h"
#include "table/filter.h"

namespace shale {
namespace ribbon {

inline constexpr uint8_t kFormatStandardRibbon = 3;
inline constexpr size_t kTrailerSize = 16;
// Result bits come from 32 hash bits.
inline constexpr int kMaxColumns = 32;
// Seeds tried before the caller falls back to a Bloom filter.
inline constexpr int kMaxAttempts = 4;

struct Layout {
  uint32_t num_blocks = 0;         // 64 slots each
  uint32_t upper_start_block = 0;  // blocks >= this one have lower_columns + 1 columns
  int lower_columns = 0;
};

// The layout for num_keys keys with an average false-positive rate of at most about
// fp_rate, sized so that banding almost always succeeds. False when Ribbon cannot express
// the rate (it would need more than kMaxColumns columns) or num_keys is 0 or too large.
bool ChooseLayout(size_t num_keys, double fp_rate, Layout* layout);

// Bytes Build() writes for layout.
uint64_t SerializedSize(const Layout& layout);

// The false-positive rate a filter of this layout has (starts fall uniformly on slots).
double ExpectedFpRate(const Layout& layout);

// Appends to *out a filter over the 64-bit key hashes (duplicates are harmless) with
// the given seed. False if banding failed for that seed (*out is then unchanged).
bool BuildWithSeed(const std::vector<uint64_t>& hashes, const Layout& layout, uint8_t seed,
                   std::string* out);

// Tries seeds 0, 1, ... up to max_attempts; false if every one failed.
bool Build(const std::vector<uint64_t>& hashes, const Layout& layout, int max_attempts,
           std::string* out);

// A reader over bytes Build() wrote, pointing into contents (which must outlive it), or
// nullptr if they are not a well-formed Ribbon filter.
std::unique_ptr<FilterBitsReader> NewReader(const Slice& contents);

}  // namespace ribbon
}  // namespace shale
