#include "util/histogram.h"

#include <algorithm>
#include <cassert>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>

namespace shale {

namespace {

constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();

// Keeps the two leading decimal digits of x and zeroes the rest.
uint64_t RoundDownToTwoDigits(uint64_t x) {
  uint64_t scale = 1;
  while (x / scale >= 100) scale *= 10;
  return x / scale * scale;
}

}  // namespace

HistogramBuckets::HistogramBuckets() {
  size_t n = 0;
  for (uint64_t v = 1; v <= 10; ++v) limits_[n++] = v;
  double next = 10.0;
  for (;;) {
    next *= 1.5;
    // The last bucket is open-ended; stop before the geometric series leaves uint64.
    if (next >= 1.8e19) break;
    const uint64_t limit = RoundDownToTwoDigits(static_cast<uint64_t>(next));
    if (limit > limits_[n - 1]) {
      assert(n + 1 < kNumBuckets);
      limits_[n++] = limit;
    }
  }
  limits_[n++] = kMaxU64;
  assert(n == kNumBuckets);
}

const HistogramBuckets& HistogramBuckets::Get() {
  static const HistogramBuckets buckets;
  return buckets;
}

size_t HistogramBuckets::IndexOf(uint64_t value) const {
  // First limit >= value: bucket i holds (limit[i-1], limit[i]].
  return static_cast<size_t>(std::lower_bound(limits_.begin(), limits_.end(), value) -
                             limits_.begin());
}

Histogram::Histogram() { Clear(); }

void Histogram::Clear() {
  min_.store(kMaxU64, std::memory_order_relaxed);
  max_.store(0, std::memory_order_relaxed);
  num_.store(0, std::memory_order_relaxed);
  sum_.store(0, std::memory_order_relaxed);
  sum_squares_.store(0.0, std::memory_order_relaxed);
  for (auto& b : buckets_) b.store(0, std::memory_order_relaxed);
}

void Histogram::Add(uint64_t value) {
  const size_t index = HistogramBuckets::Get().IndexOf(value);
  buckets_[index].fetch_add(1, std::memory_order_relaxed);

  uint64_t old_min = min_.load(std::memory_order_relaxed);
  while (value < old_min &&
         !min_.compare_exchange_weak(old_min, value, std::memory_order_relaxed)) {
  }
  uint64_t old_max = max_.load(std::memory_order_relaxed);
  while (value > old_max &&
         !max_.compare_exchange_weak(old_max, value, std::memory_order_relaxed)) {
  }

  num_.fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
  const double v = static_cast<double>(value);
  sum_squares_.fetch_add(v * v, std::memory_order_relaxed);
}

void Histogram::Merge(const Histogram& other) {
  const uint64_t other_min = other.min_.load(std::memory_order_relaxed);
  uint64_t old_min = min_.load(std::memory_order_relaxed);
  while (other_min < old_min &&
         !min_.compare_exchange_weak(old_min, other_min, std::memory_order_relaxed)) {
  }
  const uint64_t other_max = other.max_.load(std::memory_order_relaxed);
  uint64_t old_max = max_.load(std::memory_order_relaxed);
  while (other_max > old_max &&
         !max_.compare_exchange_weak(old_max, other_max, std::memory_order_relaxed)) {
  }
  num_.fetch_add(other.num(), std::memory_order_relaxed);
  sum_.fetch_add(other.sum(), std::memory_order_relaxed);
  sum_squares_.fetch_add(other.sum_squares_.load(std::memory_order_relaxed),
                         std::memory_order_relaxed);
  for (size_t i = 0; i < buckets_.size(); ++i) {
    const uint64_t c = other.BucketCount(i);
    if (c != 0) buckets_[i].fetch_add(c, std::memory_order_relaxed);
  }
}

uint64_t Histogram::min() const {
  const uint64_t m = min_.load(std::memory_order_relaxed);
  return m == kMaxU64 && num() == 0 ? 0 : m;
}

double Histogram::Percentile(double p) const {
  // Count from the buckets rather than num_, which a concurrent Add may have bumped
  // before (or after) its bucket.
  uint64_t total = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) total += BucketCount(i);
  if (total == 0) return 0.0;
  p = std::clamp(p, 0.0, 100.0);
  const double threshold = static_cast<double>(total) * (p / 100.0);
  const HistogramBuckets& layout = HistogramBuckets::Get();
  const double lo_clamp = static_cast<double>(min());
  const double hi_clamp = static_cast<double>(max());
  uint64_t cumulative = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    const uint64_t in_bucket = BucketCount(i);
    if (in_bucket == 0) continue;
    const uint64_t before = cumulative;
    cumulative += in_bucket;
    if (static_cast<double>(cumulative) >= threshold) {
      // The bucket's values lie in (lower, upper]; narrow that to what min and max allow,
      // then place the percentile by its rank within the bucket.
      double lower = static_cast<double>(layout.LowerLimit(i));
      double upper = static_cast<double>(layout.Limit(i));
      lower = std::max(lower, lo_clamp);
      upper = std::min(upper, hi_clamp);
      if (upper < lower) upper = lower;
      const double fraction =
          (threshold - static_cast<double>(before)) / static_cast<double>(in_bucket);
      return lower + (upper - lower) * std::clamp(fraction, 0.0, 1.0);
    }
  }
  return hi_clamp;
}

double Histogram::Average() const {
  const uint64_t n = num();
  return n == 0 ? 0.0 : static_cast<double>(sum()) / static_cast<double>(n);
}

double Histogram::StandardDeviation() const {
  const uint64_t n = num();
  if (n == 0) return 0.0;
  const double count = static_cast<double>(n);
  const double mean = static_cast<double>(sum()) / count;
  const double variance = sum_squares_.load(std::memory_order_relaxed) / count - mean * mean;
  return variance > 0.0 ? std::sqrt(variance) : 0.0;
}

void Histogram::Data(HistogramData* data) const {
  data->median = Median();
  data->percentile95 = Percentile(95.0);
  data->percentile99 = Percentile(99.0);
  data->average = Average();
  data->standard_deviation = StandardDeviation();
  data->max = static_cast<double>(max());
  data->min = static_cast<double>(min());
  data->count = num();
  data->sum = sum();
}

std::string Histogram::ToString() const {
  std::string out;
  char line[256];
  const uint64_t n = num();
  std::snprintf(line, sizeof(line), "Count: %" PRIu64 " Average: %.4f  StdDev: %.2f\n", n,
                Average(), StandardDeviation());
  out.append(line);
  std::snprintf(line, sizeof(line), "Min: %" PRIu64 "  Median: %.4f  Max: %" PRIu64 "\n", min(),
                Median(), max());
  out.append(line);
  std::snprintf(
      line, sizeof(line), "Percentiles: P50: %.2f P75: %.2f P99: %.2f P99.9: %.2f P99.99: %.2f\n",
      Percentile(50), Percentile(75), Percentile(99), Percentile(99.9), Percentile(99.99));
  out.append(line);
  out.append("------------------------------------------------------\n");
  if (n == 0) return out;
  const HistogramBuckets& layout = HistogramBuckets::Get();
  const double total = static_cast<double>(n);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    const uint64_t c = BucketCount(i);
    if (c == 0) continue;
    cumulative += c;
    std::snprintf(line, sizeof(line), "( %" PRIu64 ", %" PRIu64 " ] %8" PRIu64 " %7.3f%% %7.3f%%\n",
                  layout.LowerLimit(i), layout.Limit(i), c, 100.0 * static_cast<double>(c) / total,
                  100.0 * static_cast<double>(cumulative) / total);
    out.append(line);
  }
  return out;
}

}  // namespace shale
