// Basic types shared by the public API.
#pragma once

#include <cstdint>

namespace shale {

// The order of writes: each write batch takes consecutive sequence numbers, and a snapshot
// sees exactly the writes whose sequence number is at most its own.
using SequenceNumber = uint64_t;

inline constexpr SequenceNumber kMinUnCommittedSeq = 1;  // 0 is always committed

// Why an SST file is being written (what a CompactionFilterFactory is asked about).
enum class TableFileCreationReason {
  kFlush,
  kCompaction,
  kRecovery,
  kMisc,
};

}  // namespace shale
