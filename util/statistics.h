// Internal helpers for recording into an optional Statistics (Options::statistics may be
// null: every helper then does nothing and costs a branch), and the built-in sharded
// implementation behind CreateDBStatistics.
//
// Thread safety: as Statistics. A StopWatch belongs to the thread that made it.
#pragma once

#include <chrono>
#include <cstdint>

#include "shale/env.h"
#include "shale/statistics.h"

namespace shale {

inline void RecordTick(Statistics* stats, uint32_t ticker, uint64_t count = 1) {
  if (stats != nullptr) stats->recordTick(ticker, count);
}

// A size or count into a histogram (collected from kExceptTimers up).
inline void RecordInHistogram(Statistics* stats, uint32_t histogram, uint64_t value) {
  if (stats != nullptr) stats->recordInHistogram(histogram, value);
}

// A duration into a histogram (collected from kExceptDetailedTimers up).
inline void RecordTimeToHistogram(Statistics* stats, uint32_t histogram, uint64_t micros) {
  if (stats != nullptr) stats->reportTimeToHistogram(histogram, micros);
}

// True if `stats` wants timings at all; lets callers skip reading the clock.
inline bool StatsWantsTimers(const Statistics* stats) {
  return stats != nullptr && stats->get_stats_level() > kExceptTimers;
}

// Measures the microseconds between construction and destruction and reports them to
// `histogram` of `stats` when that collects timers, and/or adds them to *elapsed when
// elapsed is not null (whatever the stats level). Reads the clock only when one of the
// two wants the time. env may be null (then a steady clock is used).
class StopWatch {
 public:
  StopWatch(Env* env, Statistics* stats, uint32_t histogram, uint64_t* elapsed = nullptr)
      : env_(env),
        stats_(stats),
        histogram_(histogram),
        elapsed_(elapsed),
        report_(StatsWantsTimers(stats)),
        start_(report_ || elapsed != nullptr ? Now() : 0) {}
  StopWatch(const StopWatch&) = delete;
  StopWatch& operator=(const StopWatch&) = delete;

  ~StopWatch() {
    if (!report_ && elapsed_ == nullptr) return;
    const uint64_t now = Now();
    const uint64_t micros = now > start_ ? now - start_ : 0;
    if (elapsed_ != nullptr) *elapsed_ += micros;
    if (report_) stats_->reportTimeToHistogram(histogram_, micros);
  }

  // Microseconds since construction (0 if neither consumer wanted the time).
  uint64_t ElapsedMicros() const {
    if (!report_ && elapsed_ == nullptr) return 0;
    const uint64_t now = Now();
    return now > start_ ? now - start_ : 0;
  }

 private:
  uint64_t Now() const {
    if (env_ != nullptr) return env_->NowMicros();
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  }

  Env* const env_;
  Statistics* const stats_;
  const uint32_t histogram_;
  uint64_t* const elapsed_;
  const bool report_;
  const uint64_t start_;
};

}  // namespace shale
