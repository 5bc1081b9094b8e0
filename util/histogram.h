// Histogram: a distribution of uint64 values kept as counts in fixed buckets whose limits
// are 1..10 and then grow geometrically (1.5x apart, rounded down to two significant
// digits), so any percentile is known within one bucket's width (exact up to 10, within
// about a third of the value above) and interpolation inside the bucket usually does much
// better.
//
// Thread safety: Add may be called from many threads at once (relaxed atomics, no lock).
// Readers (Data, Percentile, Merge from this one) see each counter atomically but the set
// of counters as of no single instant; Clear concurrent with Add may lose or keep those
// Adds. Copying is not supported; Merge adds one histogram's counts into another.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "shale/statistics.h"

namespace shale {

// The shared bucket layout. Bucket i holds values in (Limit(i-1), Limit(i)]; bucket 0 holds
// [0, Limit(0)] and the last bucket's limit is UINT64_MAX.
class HistogramBuckets {
 public:
  static constexpr size_t kNumBuckets = 114;
  static const HistogramBuckets& Get();

  uint64_t Limit(size_t i) const { return limits_[i]; }
  // Lower edge of bucket i's values (0 for bucket 0).
  uint64_t LowerLimit(size_t i) const { return i == 0 ? 0 : limits_[i - 1]; }
  size_t IndexOf(uint64_t value) const;

 private:
  HistogramBuckets();
  std::array<uint64_t, kNumBuckets> limits_;
};

class Histogram {
 public:
  Histogram();
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  void Add(uint64_t value);
  // Adds other's counts into this one.
  void Merge(const Histogram& other);
  void Clear();

  uint64_t num() const { return num_.load(std::memory_order_relaxed); }
  uint64_t sum() const { return sum_.load(std::memory_order_relaxed); }
  // 0 when empty.
  uint64_t min() const;
  uint64_t max() const { return max_.load(std::memory_order_relaxed); }
  uint64_t BucketCount(size_t i) const { return buckets_[i].load(std::memory_order_relaxed); }

  // p in [0, 100]. The value below which p percent of the values fall, interpolated
  // linearly inside its bucket and clamped to [min, max]; 0 when empty.
  double Percentile(double p) const;
  double Median() const { return Percentile(50.0); }
  double Average() const;
  double StandardDeviation() const;

  void Data(HistogramData* data) const;
  // "Count: N Average: A  StdDev: S\nMin: .. Median: .. Max: ..\nPercentiles: P50: ..."
  // followed by one line per non-empty bucket with its share and cumulative share.
  std::string ToString() const;

 private:
  std::atomic<uint64_t> min_;
  std::atomic<uint64_t> max_;
  std::atomic<uint64_t> num_;
  std::atomic<uint64_t> sum_;
  // Squares overflow uint64 for values above ~4e9; a double keeps their magnitude.
  std::atomic<double> sum_squares_;
  std::array<std::atomic<uint64_t>, HistogramBuckets::kNumBuckets> buckets_;
};

}  // namespace shale
