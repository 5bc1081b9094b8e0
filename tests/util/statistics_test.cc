// Statistics and Histogram: name tables, tickers summed across threads, histogram
// percentiles against known distributions, the ToString format read back, stats levels,
// StopWatch, Reset.
#include "shale/statistics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/test_util.h"
#include "util/histogram.h"
#include "util/statistics.h"

namespace shale {
namespace {

TEST(StatisticsNames, TablesCoverEveryEnumInOrderWithUniqueShaleNames) {
  ASSERT_EQ(TickersNameMap.size(), static_cast<size_t>(TICKER_ENUM_MAX));
  ASSERT_EQ(HistogramsNameMap.size(), static_cast<size_t>(HISTOGRAM_ENUM_MAX));
  std::set<std::string> names;
  for (size_t i = 0; i < TickersNameMap.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(TickersNameMap[i].first), i);
    EXPECT_EQ(TickersNameMap[i].second.rfind("shale.", 0), 0u) << TickersNameMap[i].second;
    EXPECT_TRUE(names.insert(TickersNameMap[i].second).second) << TickersNameMap[i].second;
  }
  for (size_t i = 0; i < HistogramsNameMap.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(HistogramsNameMap[i].first), i);
    EXPECT_EQ(HistogramsNameMap[i].second.rfind("shale.", 0), 0u);
    EXPECT_TRUE(names.insert(HistogramsNameMap[i].second).second) << HistogramsNameMap[i].second;
  }
  EXPECT_EQ(TickersNameMap[BLOCK_CACHE_MISS].second, "shale.block.cache.miss");
  EXPECT_EQ(TickersNameMap[GET_HIT_L2_AND_UP].second, "shale.l2andup.hit");
  EXPECT_EQ(TickersNameMap[WAL_FILE_SYNCED].second, "shale.wal.synced");
  EXPECT_EQ(HistogramsNameMap[DB_GET].second, "shale.db.get.micros");
  EXPECT_EQ(HistogramsNameMap[FLUSH_TIME].second, "shale.db.flush.micros");
}

TEST(Statistics, TickersSumAcrossThreads) {
  auto stats = CreateDBStatistics();
  constexpr int kThreads = 8;
  constexpr int kPerThread = 50000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&stats, t] {
      for (int i = 0; i < kPerThread; ++i) {
        stats->recordTick(NUMBER_KEYS_WRITTEN);
        stats->recordTick(BYTES_WRITTEN, static_cast<uint64_t>(t + 1));
        RecordTick(stats.get(), MEMTABLE_HIT, 2);
      }
    });
  }
  // Readers running alongside never see a count go backwards.
  uint64_t last = 0;
  for (int i = 0; i < 100; ++i) {
    const uint64_t now = stats->getTickerCount(NUMBER_KEYS_WRITTEN);
    EXPECT_GE(now, last);
    last = now;
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(stats->getTickerCount(NUMBER_KEYS_WRITTEN), uint64_t{kThreads} * kPerThread);
  // sum over t of (t+1) * kPerThread
  EXPECT_EQ(stats->getTickerCount(BYTES_WRITTEN),
            uint64_t{kPerThread} * (kThreads * (kThreads + 1) / 2));
  EXPECT_EQ(stats->getTickerCount(MEMTABLE_HIT), uint64_t{2} * kThreads * kPerThread);
  EXPECT_EQ(stats->getTickerCount(MEMTABLE_MISS), 0u);
}

TEST(Statistics, OutOfRangeTypesAreIgnoredAndNullHelpersAreNoOps) {
  auto stats = CreateDBStatistics();
  stats->recordTick(TICKER_ENUM_MAX, 5);
  stats->recordTick(TICKER_ENUM_MAX + 100, 5);
  stats->recordInHistogram(HISTOGRAM_ENUM_MAX, 5);
  EXPECT_EQ(stats->getTickerCount(TICKER_ENUM_MAX), 0u);
  HistogramData d;
  stats->histogramData(HISTOGRAM_ENUM_MAX, &d);
  EXPECT_EQ(d.count, 0u);
  RecordTick(nullptr, BLOCK_CACHE_HIT);
  RecordInHistogram(nullptr, DB_GET, 3);
  RecordTimeToHistogram(nullptr, DB_GET, 3);
  { StopWatch sw(nullptr, nullptr, DB_GET); }
  EXPECT_EQ(stats->getTickerCount(BLOCK_CACHE_HIT), 0u);
}

TEST(Histogram, BucketLimitsIncreaseAndCoverEveryValue) {
  const HistogramBuckets& b = HistogramBuckets::Get();
  for (size_t i = 1; i < HistogramBuckets::kNumBuckets; ++i) EXPECT_LT(b.Limit(i - 1), b.Limit(i));
  EXPECT_EQ(b.Limit(HistogramBuckets::kNumBuckets - 1), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(b.IndexOf(0), 0u);
  EXPECT_EQ(b.IndexOf(1), 0u);
  EXPECT_EQ(b.IndexOf(2), 1u);
  EXPECT_EQ(b.IndexOf(10), 9u);
  EXPECT_EQ(b.IndexOf(std::numeric_limits<uint64_t>::max()), HistogramBuckets::kNumBuckets - 1);
  for (uint64_t v : {uint64_t{11}, uint64_t{999}, uint64_t{123456789}, uint64_t{1} << 62}) {
    const size_t i = b.IndexOf(v);
    EXPECT_LE(v, b.Limit(i));
    EXPECT_GT(v, b.LowerLimit(i));
  }
}

TEST(Histogram, EmptyIsAllZero) {
  Histogram h;
  HistogramData d;
  h.Data(&d);
  EXPECT_EQ(d.count, 0u);
  EXPECT_EQ(d.sum, 0u);
  EXPECT_EQ(d.median, 0.0);
  EXPECT_EQ(d.percentile99, 0.0);
  EXPECT_EQ(d.max, 0.0);
  EXPECT_EQ(d.min, 0.0);
  EXPECT_EQ(d.average, 0.0);
  EXPECT_EQ(d.standard_deviation, 0.0);
}

TEST(Histogram, ConstantValueIsExact) {
  Histogram h;
  for (int i = 0; i < 1000; ++i) h.Add(777);
  HistogramData d;
  h.Data(&d);
  EXPECT_EQ(d.count, 1000u);
  EXPECT_EQ(d.sum, 777000u);
  EXPECT_DOUBLE_EQ(d.median, 777.0);
  EXPECT_DOUBLE_EQ(d.percentile95, 777.0);
  EXPECT_DOUBLE_EQ(d.percentile99, 777.0);
  EXPECT_DOUBLE_EQ(d.max, 777.0);
  EXPECT_DOUBLE_EQ(d.min, 777.0);
  EXPECT_DOUBLE_EQ(d.average, 777.0);
  EXPECT_NEAR(d.standard_deviation, 0.0, 1e-6);
}

TEST(Histogram, UniformDistributionPercentiles) {
  Histogram h;
  constexpr uint64_t kN = 100000;
  for (uint64_t v = 1; v <= kN; ++v) h.Add(v);
  EXPECT_EQ(h.num(), kN);
  EXPECT_EQ(h.sum(), kN * (kN + 1) / 2);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), kN);
  EXPECT_NEAR(h.Median(), 50000.0, 50000.0 * 0.03);
  EXPECT_NEAR(h.Percentile(95), 95000.0, 95000.0 * 0.03);
  EXPECT_NEAR(h.Percentile(99), 99000.0, 99000.0 * 0.03);
  EXPECT_NEAR(h.Percentile(25), 25000.0, 25000.0 * 0.03);
  EXPECT_DOUBLE_EQ(h.Percentile(100), static_cast<double>(kN));
  EXPECT_DOUBLE_EQ(h.Percentile(0), 1.0);
  EXPECT_NEAR(h.Average(), (kN + 1) / 2.0, 1e-6);
  // Standard deviation of 1..N is sqrt((N^2 - 1) / 12).
  EXPECT_NEAR(h.StandardDeviation(), std::sqrt((double(kN) * kN - 1) / 12.0), 1.0);
}

TEST(Histogram, ExponentialDistributionPercentilesWithinABucket) {
  const uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> dist(1.0 / 2000.0);  // mean 2000 micros
  Histogram h;
  std::vector<uint64_t> values;
  for (int i = 0; i < 200000; ++i) {
    const uint64_t v = static_cast<uint64_t>(dist(rng));
    values.push_back(v);
    h.Add(v);
  }
  std::sort(values.begin(), values.end());
  for (double p : {50.0, 90.0, 95.0, 99.0}) {
    const double exact = static_cast<double>(values[static_cast<size_t>(p / 100 * values.size())]);
    // Interpolation inside a 1.5x bucket under a smooth density lands well within 10%.
    EXPECT_NEAR(h.Percentile(p), exact, exact * 0.10) << "P" << p << " seed " << seed;
  }
  double mean = 0;
  for (uint64_t v : values) mean += static_cast<double>(v);
  mean /= static_cast<double>(values.size());
  double var = 0;
  for (uint64_t v : values)
    var += (static_cast<double>(v) - mean) * (static_cast<double>(v) - mean);
  var /= static_cast<double>(values.size());
  EXPECT_NEAR(h.Average(), mean, 1e-6 * mean);
  EXPECT_NEAR(h.StandardDeviation(), std::sqrt(var), 1e-3 * std::sqrt(var));
  EXPECT_EQ(h.max(), values.back());
  EXPECT_EQ(h.min(), values.front());
}

TEST(Histogram, SmallValuesAreExactAndHugeValuesFit) {
  Histogram h;
  for (uint64_t v = 1; v <= 10; ++v) h.Add(v);
  // Ten values 1..10, each in its own bucket: the p-th percentile is within one of p/10.
  EXPECT_NEAR(h.Percentile(50), 5.0, 1.0);
  EXPECT_NEAR(h.Percentile(90), 9.0, 1.0);
  Histogram big;
  big.Add(std::numeric_limits<uint64_t>::max() - 1);
  big.Add(0);
  EXPECT_EQ(big.max(), std::numeric_limits<uint64_t>::max() - 1);
  EXPECT_EQ(big.min(), 0u);
  EXPECT_LE(big.Percentile(100), static_cast<double>(std::numeric_limits<uint64_t>::max()));
  EXPECT_GE(big.StandardDeviation(), 0.0);
}

TEST(Histogram, MergeEqualsAddingEverythingToOne) {
  Histogram a, b, all;
  for (uint64_t v = 0; v < 5000; v += 3) {
    a.Add(v);
    all.Add(v);
  }
  for (uint64_t v = 100000; v < 110000; v += 7) {
    b.Add(v);
    all.Add(v);
  }
  a.Merge(b);
  EXPECT_EQ(a.num(), all.num());
  EXPECT_EQ(a.sum(), all.sum());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  for (size_t i = 0; i < HistogramBuckets::kNumBuckets; ++i) {
    EXPECT_EQ(a.BucketCount(i), all.BucketCount(i));
  }
  EXPECT_DOUBLE_EQ(a.Percentile(75), all.Percentile(75));
  EXPECT_NE(a.ToString().find("Count: " + std::to_string(all.num())), std::string::npos);
}

TEST(Statistics, HistogramsFromManyThreadsAddUp) {
  auto stats = CreateDBStatistics();
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&stats] {
      for (uint64_t v = 1; v <= 10000; ++v) stats->reportTimeToHistogram(DB_WRITE, v);
    });
  }
  for (auto& th : threads) th.join();
  HistogramData d;
  stats->histogramData(DB_WRITE, &d);
  EXPECT_EQ(d.count, 60000u);
  EXPECT_EQ(d.sum, 6u * 10000 * 10001 / 2);
  EXPECT_DOUBLE_EQ(d.max, 10000.0);
  EXPECT_DOUBLE_EQ(d.min, 1.0);
  EXPECT_NEAR(d.median, 5000.0, 5000.0 * 0.05);
  HistogramData same;
  stats->getHistogramData(DB_WRITE, &same);
  EXPECT_EQ(same.count, d.count);
  EXPECT_NE(stats->getHistogramString(DB_WRITE).find("Count: 60000"), std::string::npos);
}

TEST(Statistics, ToStringParsesBackToTheCounts) {
  auto stats = CreateDBStatistics();
  for (uint32_t t = 0; t < TICKER_ENUM_MAX; ++t) stats->recordTick(t, 1000 + t);
  for (uint64_t v = 1; v <= 100; ++v) stats->reportTimeToHistogram(DB_GET, v * 10);
  stats->recordInHistogram(BYTES_PER_READ, 4096);

  const std::string text = stats->ToString();
  std::istringstream in(text);
  std::string line;
  const std::regex ticker_re(R"(^(\S+) COUNT : (\d+)$)");
  const std::regex hist_re(
      R"(^(\S+) P50 : ([0-9.]+) P95 : ([0-9.]+) P99 : ([0-9.]+) P100 : ([0-9.]+) COUNT : (\d+) SUM : (\d+)$)");
  std::map<std::string, uint64_t> tickers;
  std::map<std::string, std::vector<double>> hists;
  size_t lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    std::smatch m;
    if (std::regex_match(line, m, ticker_re)) {
      tickers[m[1]] = std::stoull(m[2]);
    } else if (std::regex_match(line, m, hist_re)) {
      std::vector<double> v;
      for (int i = 2; i <= 7; ++i) v.push_back(std::stod(m[i]));
      hists[m[1]] = v;
    } else {
      ADD_FAILURE() << "unparsable line: " << line;
    }
  }
  EXPECT_EQ(lines, static_cast<size_t>(TICKER_ENUM_MAX) + HISTOGRAM_ENUM_MAX);
  ASSERT_EQ(tickers.size(), static_cast<size_t>(TICKER_ENUM_MAX));
  ASSERT_EQ(hists.size(), static_cast<size_t>(HISTOGRAM_ENUM_MAX));
  for (const auto& [t, name] : TickersNameMap) EXPECT_EQ(tickers[name], 1000u + t) << name;
  const auto& get = hists["shale.db.get.micros"];
  HistogramData d;
  stats->histogramData(DB_GET, &d);
  EXPECT_NEAR(get[0], d.median, 1e-5);
  EXPECT_NEAR(get[1], d.percentile95, 1e-5);
  EXPECT_NEAR(get[2], d.percentile99, 1e-5);
  EXPECT_DOUBLE_EQ(get[3], 1000.0);
  EXPECT_EQ(get[4], 100.0);
  EXPECT_EQ(get[5], 50500.0);
  EXPECT_EQ(hists["shale.bytes.per.read"][4], 1.0);
  EXPECT_EQ(hists["shale.db.write.micros"][4], 0.0);

  std::map<std::string, uint64_t> map;
  ASSERT_TRUE(stats->getTickerMap(&map));
  EXPECT_EQ(map, tickers);
}

// An Env whose clock moves 100 micros at every reading.
class TickingEnv : public EnvWrapper {
 public:
  TickingEnv() : EnvWrapper(Env::Default()) {}
  uint64_t NowMicros() override { return now_.fetch_add(100) + 100; }

 private:
  std::atomic<uint64_t> now_{1000000};
};

TEST(Statistics, StatsLevelsGateTickersHistogramsAndTimers) {
  auto stats = CreateDBStatistics();
  EXPECT_EQ(stats->get_stats_level(), kExceptDetailedTimers);
  TickingEnv env;
  auto record_all = [&] {
    stats->recordTick(NUMBER_KEYS_READ);
    stats->recordInHistogram(BYTES_PER_WRITE, 10);
    stats->reportTimeToHistogram(DB_GET, 10);
    stats->measureTime(DB_SEEK, 10);
    StopWatch sw(&env, stats.get(), DB_WRITE);
  };
  auto count = [&](uint32_t h) {
    HistogramData d;
    stats->histogramData(h, &d);
    return d.count;
  };

  stats->set_stats_level(kDisableAll);
  record_all();
  EXPECT_EQ(stats->getTickerCount(NUMBER_KEYS_READ), 0u);
  EXPECT_EQ(count(BYTES_PER_WRITE), 0u);
  EXPECT_EQ(count(DB_GET), 0u);

  stats->set_stats_level(kExceptHistogramOrTimers);
  record_all();
  EXPECT_EQ(stats->getTickerCount(NUMBER_KEYS_READ), 1u);
  EXPECT_EQ(count(BYTES_PER_WRITE), 0u);
  EXPECT_EQ(count(DB_GET), 0u);

  stats->set_stats_level(kExceptTimers);
  record_all();
  EXPECT_EQ(stats->getTickerCount(NUMBER_KEYS_READ), 2u);
  EXPECT_EQ(count(BYTES_PER_WRITE), 1u);
  EXPECT_EQ(count(DB_GET), 0u);
  EXPECT_EQ(count(DB_WRITE), 0u);

  stats->set_stats_level(kExceptDetailedTimers);
  record_all();
  EXPECT_EQ(stats->getTickerCount(NUMBER_KEYS_READ), 3u);
  EXPECT_EQ(count(BYTES_PER_WRITE), 2u);
  EXPECT_EQ(count(DB_GET), 1u);
  EXPECT_EQ(count(DB_SEEK), 1u);
  EXPECT_EQ(count(DB_WRITE), 1u);
  HistogramData w;
  stats->histogramData(DB_WRITE, &w);
  EXPECT_EQ(w.sum, 100u);  // one tick of the clock between start and stop

  stats->set_stats_level(kAll);
  record_all();
  EXPECT_EQ(count(DB_GET), 2u);
}

TEST(Statistics, StopWatchFillsElapsedEvenWithoutTimers) {
  TickingEnv env;
  auto stats = CreateDBStatistics();
  stats->set_stats_level(kExceptTimers);
  uint64_t elapsed = 5;
  {
    StopWatch sw(&env, stats.get(), COMPACTION_TIME, &elapsed);
    EXPECT_EQ(sw.ElapsedMicros(), 100u);
  }
  EXPECT_EQ(elapsed, 5u + 200u);  // adds, never overwrites
  HistogramData d;
  stats->histogramData(COMPACTION_TIME, &d);
  EXPECT_EQ(d.count, 0u);
  uint64_t none = 0;
  { StopWatch sw(&env, nullptr, COMPACTION_TIME, &none); }
  EXPECT_EQ(none, 100u);
}

TEST(Statistics, ResetSetAndGetAndReset) {
  auto stats = CreateDBStatistics();
  std::thread other([&] {
    stats->recordTick(STALL_MICROS, 40);
    stats->reportTimeToHistogram(WRITE_STALL, 40);
  });
  other.join();
  stats->recordTick(STALL_MICROS, 2);
  EXPECT_EQ(stats->getTickerCount(STALL_MICROS), 42u);
  EXPECT_EQ(stats->getAndResetTickerCount(STALL_MICROS), 42u);
  EXPECT_EQ(stats->getTickerCount(STALL_MICROS), 0u);
  stats->recordTick(STALL_MICROS, 3);
  stats->setTickerCount(STALL_MICROS, 10);
  EXPECT_EQ(stats->getTickerCount(STALL_MICROS), 10u);
  stats->recordTick(WAL_FILE_BYTES, 7);
  ASSERT_OK(stats->Reset());
  EXPECT_EQ(stats->getTickerCount(STALL_MICROS), 0u);
  EXPECT_EQ(stats->getTickerCount(WAL_FILE_BYTES), 0u);
  HistogramData d;
  stats->histogramData(WRITE_STALL, &d);
  EXPECT_EQ(d.count, 0u);
  EXPECT_EQ(d.max, 0.0);
  // Still usable after a reset.
  stats->recordTick(WAL_FILE_BYTES, 1);
  EXPECT_EQ(stats->getTickerCount(WAL_FILE_BYTES), 1u);
}

}  // namespace
}  // namespace shale
