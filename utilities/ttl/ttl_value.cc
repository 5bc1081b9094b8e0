#include "utilities/ttl/ttl_value.h"

#include "util/coding.h"

namespace shale {
namespace ttl {

int64_t Now(Env* env) { return static_cast<int64_t>(env->NowMicros() / 1000000); }

void Stamp(const Slice& value, Env* env, std::string* out) {
  out->clear();
  out->reserve(value.size() + kTimestampLength);
  out->append(value.data(), value.size());
  // Truncated to 32 bits as RocksDB's, so the two read each other's values.
  PutFixed32(out, static_cast<uint32_t>(Now(env)));
}

Status Check(const Slice& value) {
  if (value.size() < kTimestampLength) {
    return Status::Corruption("Error: value's length less than timestamp's");
  }
  const auto time = static_cast<int32_t>(DecodeFixed32(Suffix(value).data()));
  if (time < kMinTimestamp)
    return Status::Corruption("Error: Timestamp < ttl feature release time!");
  return Status::OK();
}

bool Expired(const Slice& value, int32_t ttl, int64_t now) {
  if (ttl <= 0) return false;
  // In 64 bits: a time near 2^31 plus a long TTL would overflow 32.
  const int64_t written = DecodeFixed32(Suffix(value).data());
  return written + ttl < now;
}

}  // namespace ttl
}  // namespace shale
