#include "table/data_block_hash_index.h"

#include <algorithm>
#include <cassert>

#include "util/coding.h"
#include "util/hash.h"

namespace shale {

namespace {

constexpr double kDefaultUtilRatio = 0.75;
constexpr size_t kMaxBuckets = 65535;

}  // namespace

uint16_t HashIndexBucket(const Slice& user_key, uint16_t num_buckets) {
  return static_cast<uint16_t>(Hash32(user_key) % num_buckets);
}

DataBlockHashIndexBuilder::DataBlockHashIndexBuilder(double util_ratio)
    : buckets_per_key_(1.0 / (util_ratio > 0 ? util_ratio : kDefaultUtilRatio)) {}

void DataBlockHashIndexBuilder::Add(const Slice& user_key, size_t restart_index) {
  if (restart_index >= kMaxRestartsForHashIndex) {
    valid_ = false;
    return;
  }
  hashes_.emplace_back(Hash32(user_key), static_cast<uint8_t>(restart_index));
}

size_t DataBlockHashIndexBuilder::NumBuckets() const {
  const double wanted = static_cast<double>(hashes_.size()) * buckets_per_key_;
  // Odd, so that the modulo mixes in every bit of the hash; at least one.
  const size_t n = static_cast<size_t>(std::min(wanted, static_cast<double>(kMaxBuckets)));
  return std::min(n | 1, kMaxBuckets);
}

size_t DataBlockHashIndexBuilder::EstimateSize() const { return NumBuckets() + sizeof(uint16_t); }

void DataBlockHashIndexBuilder::Finish(std::string* buffer) const {
  assert(valid_);
  const size_t n = NumBuckets();
  std::string buckets(n, static_cast<char>(kHashNoEntry));
  for (const auto& [hash, restart] : hashes_) {
    auto& b = reinterpret_cast<uint8_t&>(buckets[hash % n]);
    if (b == kHashNoEntry) {
      b = restart;
    } else if (b != restart) {
      b = kHashCollision;
    }
  }
  buffer->append(buckets);
  char count[sizeof(uint16_t)];
  EncodeFixed16(count, static_cast<uint16_t>(n));
  buffer->append(count, sizeof(count));
}

void DataBlockHashIndexBuilder::Reset() {
  valid_ = true;
  hashes_.clear();
}

bool DataBlockHashIndex::Init(const char* data, size_t end, uint32_t num_restarts,
                              size_t* index_start) {
  if (end < sizeof(uint16_t)) return false;
  const uint16_t n = DecodeFixed16(data + end - sizeof(uint16_t));
  if (n == 0 || n > end - sizeof(uint16_t)) return false;
  const size_t start = end - sizeof(uint16_t) - n;
  const auto* buckets = reinterpret_cast<const uint8_t*>(data + start);
  for (uint16_t i = 0; i < n; i++) {
    if (buckets[i] < kHashCollision && buckets[i] >= num_restarts) return false;
  }
  buckets_ = data + start;
  num_buckets_ = n;
  *index_start = start;
  return true;
}

}  // namespace shale
