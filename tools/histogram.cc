#include "tools/histogram.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>

namespace shale::tools {

const std::vector<uint64_t>& Histogram::Limits() {
  static const std::vector<uint64_t> limits = [] {
    std::vector<uint64_t> v{1, 2};
    // The growth runs on the unrounded value; only the stored limit is cut to two digits.
    const double top = static_cast<double>(std::numeric_limits<uint64_t>::max());
    for (double x = 2 * 1.5; x <= top; x *= 1.5) {
      uint64_t limit = static_cast<uint64_t>(x);
      uint64_t scale = 1;
      while (limit / 10 > 10) {
        limit /= 10;
        scale *= 10;
      }
      v.push_back(limit * scale);
    }
    return v;
  }();
  return limits;
}

size_t Histogram::BucketFor(uint64_t value) {
  const std::vector<uint64_t>& limits = Limits();
  if (value >= limits.back()) return limits.size() - 1;
  return static_cast<size_t>(std::upper_bound(limits.begin(), limits.end(), value) -
                             limits.begin());
}

Histogram::Histogram() { Clear(); }

void Histogram::Clear() {
  count_ = 0;
  min_ = Limits().back();
  max_ = 0;
  sum_ = 0;
  sum_squares_ = 0;
  buckets_.assign(Limits().size(), 0);
}

void Histogram::Add(uint64_t value) {
  buckets_[BucketFor(value)]++;
  count_++;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  const double d = static_cast<double>(value);
  sum_ += d;
  sum_squares_ += d * d;
}

void Histogram::Merge(const Histogram& other) {
  for (size_t b = 0; b < buckets_.size(); b++) buckets_[b] += other.buckets_[b];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
  sum_squares_ += other.sum_squares_;
}

double Histogram::Average() const { return count_ == 0 ? 0.0 : sum_ / count_; }

double Histogram::StandardDeviation() const {
  if (count_ == 0) return 0.0;
  const double n = static_cast<double>(count_);
  const double variance = (sum_squares_ * n - sum_ * sum_) / (n * n);
  return std::sqrt(std::max(variance, 0.0));
}

double Histogram::Percentile(double p) const {
  const std::vector<uint64_t>& limits = Limits();
  const double threshold = static_cast<double>(count_) * (p / 100.0);
  uint64_t below = 0;
  for (size_t b = 0; b < buckets_.size(); b++) {
    const uint64_t in_bucket = buckets_[b];
    if (below + in_bucket >= threshold) {
      const double left = b == 0 ? 0.0 : static_cast<double>(limits[b - 1]);
      const double right = static_cast<double>(limits[b]);
      const double pos = in_bucket == 0 ? 0.0 : (threshold - below) / in_bucket;
      double r = left + (right - left) * pos;
      r = std::max(r, static_cast<double>(Min()));
      r = std::min(r, static_cast<double>(max_));
      return r;
    }
    below += in_bucket;
  }
  return static_cast<double>(max_);
}

std::string Histogram::ToString() const {
  std::string out;
  char line[200];
  snprintf(line, sizeof(line), "Count: %" PRIu64 " Average: %.4f  StdDev: %.2f\n", count_,
           Average(), StandardDeviation());
  out += line;
  snprintf(line, sizeof(line), "Min: %" PRIu64 "  Median: %.4f  Max: %" PRIu64 "\n", Min(),
           Median(), max_);
  out += line;
  snprintf(line, sizeof(line),
           "Percentiles: P50: %.2f P75: %.2f P99: %.2f P99.9: %.2f P99.99: %.2f\n",
           Percentile(50), Percentile(75), Percentile(99), Percentile(99.9),
           Percentile(99.99));
  out += line;
  out += "------------------------------------------------------\n";
  if (count_ == 0) return out;

  const std::vector<uint64_t>& limits = Limits();
  const double pct = 100.0 / static_cast<double>(count_);
  uint64_t running = 0;
  for (size_t b = 0; b < buckets_.size(); b++) {
    if (buckets_[b] == 0) continue;
    running += buckets_[b];
    snprintf(line, sizeof(line), "%c %7" PRIu64 ", %7" PRIu64 " ] %8" PRIu64 " %7.3f%% %7.3f%% ",
             b == 0 ? '[' : '(', b == 0 ? 0 : limits[b - 1], limits[b], buckets_[b],
             pct * buckets_[b], pct * running);
    out += line;
    // One '#' per 5% of the samples.
    out.append(static_cast<size_t>(pct * buckets_[b] / 5 + 0.5), '#');
    out += '\n';
  }
  return out;
}

}  // namespace shale::tools
