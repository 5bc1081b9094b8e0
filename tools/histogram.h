// Histogram: a latency histogram for db_bench, with the bucket limits and the text layout
// of RocksDB's db_bench (so scripts that read RocksDB's output read ours).
//
// Buckets: the limits grow by 1.5x from 1, 2, each cut to its two leading digits
// (1, 2, 3, 4, 6, 10, 15, 22, 34, 51, 76, 110, 170, ...). Bucket b holds the values v with
// limit(b-1) <= v < limit(b) (bucket 0: v < 1); the last bucket holds everything larger.
//
// Thread safety: none; each benchmark thread fills its own and they are merged afterwards.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shale::tools {

class Histogram {
 public:
  Histogram();

  void Clear();
  void Add(uint64_t value);
  void Merge(const Histogram& other);

  uint64_t Count() const { return count_; }
  uint64_t Min() const { return count_ == 0 ? 0 : min_; }
  uint64_t Max() const { return max_; }
  double Average() const;
  double StandardDeviation() const;
  // Linear interpolation inside the bucket holding the p-th percentile, clamped to
  // [Min(), Max()].
  double Percentile(double p) const;
  double Median() const { return Percentile(50.0); }

  // The block db_bench prints after "Microseconds per <op>:": count/average/stddev,
  // min/median/max, the percentiles line, a rule and one line per non-empty bucket.
  std::string ToString() const;

 private:
  static const std::vector<uint64_t>& Limits();
  static size_t BucketFor(uint64_t value);

  uint64_t count_ = 0;
  uint64_t min_;
  uint64_t max_ = 0;
  double sum_ = 0;
  double sum_squares_ = 0;
  std::vector<uint64_t> buckets_;
};

}  // namespace shale::tools
