// The TTL suffix of a value written through DBWithTTL (shale/utilities/db_ttl.h): the write
// time in seconds since the epoch, as a 4-byte little-endian integer after the user's bytes.
// These helpers stamp, check, judge and strip it; all are pure functions of their arguments
// and the clock, safe from any thread.
#pragma once

#include <cstdint>
#include <string>

#include "shale/env.h"
#include "shale/slice.h"
#include "shale/status.h"

namespace shale {
namespace ttl {

inline constexpr size_t kTimestampLength = 4;
// No value can be older than the feature (RocksDB's bound, 2013-05-09): a smaller time
// means the value was not written through DBWithTTL.
inline constexpr int32_t kMinTimestamp = 1368146402;

// Seconds since the epoch by env's clock.
int64_t Now(Env* env);

// value followed by the time now, into *out (replacing it).
void Stamp(const Slice& value, Env* env, std::string* out);

// Corruption unless value is long enough to carry a time not older than kMinTimestamp.
Status Check(const Slice& value);

// Whether value (which passed Check) is older than ttl seconds at now. ttl <= 0: never.
bool Expired(const Slice& value, int32_t ttl, int64_t now);

// value without its suffix. REQUIRES: value.size() >= kTimestampLength.
inline Slice Strip(const Slice& value) {
  return Slice(value.data(), value.size() - kTimestampLength);
}

// value's suffix. REQUIRES: value.size() >= kTimestampLength.
inline Slice Suffix(const Slice& value) {
  return Slice(value.data() + value.size() - kTimestampLength, kTimestampLength);
}

}  // namespace ttl
}  // namespace shale
