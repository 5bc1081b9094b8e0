#include "tools/db_bench_stats.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "tools/db_bench_flags.h"

namespace shale::tools {

uint64_t NowMicros() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

namespace {

const char* OpName(OpType t) {
  switch (t) {
    case OpType::kRead: return "read";
    case OpType::kWrite: return "write";
    case OpType::kDelete: return "delete";
    case OpType::kSeek: return "seek";
    case OpType::kUpdate: return "update";
    case OpType::kMerge: return "merge";
    case OpType::kCrc: return "crc";
    case OpType::kCompress: return "compress";
    case OpType::kUncompress: return "uncompress";
    case OpType::kOthers: return "op";
  }
  return "op";
}

void AppendWithSpace(std::string* s, const std::string& msg) {
  if (msg.empty()) return;
  if (!s->empty()) s->push_back(' ');
  s->append(msg);
}

std::string WallClockString() {
  time_t now = time(nullptr);
  struct tm t;
  localtime_r(&now, &t);
  char buf[64];
  // The trailing space is RocksDB's too.
  snprintf(buf, sizeof(buf), "%04d/%02d/%02d-%02d:%02d:%02d ", t.tm_year + 1900, t.tm_mon + 1,
           t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec);
  return buf;
}

}  // namespace

ReporterAgent::ReporterAgent(const std::string& fname, uint64_t interval_seconds)
    : file_(fopen(fname.c_str(), "w")), interval_seconds_(interval_seconds) {
  if (file_ == nullptr || fprintf(file_, "secs_elapsed,interval_qps\n") < 0) {
    fprintf(stderr, "Can't open %s\n", fname.c_str());
    exit(1);
  }
  fflush(file_);
  thread_ = std::thread([this] { Run(); });
}

ReporterAgent::~ReporterAgent() {
  {
    MutexLock l(&mu_);
    stop_ = true;
    cv_.SignalAll();
  }
  thread_.join();
  fclose(file_);
}

void ReporterAgent::Run() {
  const uint64_t started = NowMicros();
  int64_t last_total = 0;
  MutexLock l(&mu_);
  while (true) {
    // A line every interval_seconds_ until stopped (a wake-up before the time is up waits on).
    const uint64_t due = NowMicros() + interval_seconds_ * 1000000;
    for (uint64_t now = NowMicros(); !stop_ && now < due; now = NowMicros()) {
      cv_.TimedWaitMicros(&mu_, due - now);
    }
    if (stop_) break;
    const int64_t total = total_ops_.load(std::memory_order_relaxed);
    const uint64_t secs = (NowMicros() - started + 500000) / 1000000;
    fprintf(file_, "%" PRIu64 ",%" PRId64 "\n", secs, total - last_total);
    fflush(file_);
    last_total = total;
  }
}

void Stats::Start(int id) {
  id_ = id;
  next_report_ = FLAGS_stats_interval ? FLAGS_stats_interval : 100;
  hist_.clear();
  done_ = 0;
  bytes_ = 0;
  seconds_ = 0;
  last_report_done_ = 0;
  start_ = NowMicros();
  finish_ = start_;
  last_op_finish_ = start_;
  last_report_finish_ = start_;
  message_.clear();
  exclude_from_merge_ = false;
}

void Stats::Stop() {
  finish_ = NowMicros();
  seconds_ = (finish_ - start_) * 1e-6;
}

void Stats::AddMessage(const std::string& msg) { AppendWithSpace(&message_, msg); }

void Stats::FinishedOps(int64_t n, OpType type) {
  if (reporter_ != nullptr) reporter_->ReportFinishedOps(n);
  uint64_t now = 0;
  if (FLAGS_histogram) {
    now = NowMicros();
    hist_[type].Add(now - last_op_finish_);
    last_op_finish_ = now;
  }
  done_ += n;
  if (done_ >= next_report_ && FLAGS_progress_reports) {
    ReportProgress(now != 0 ? now : NowMicros());
  }
}

void Stats::ReportProgress(uint64_t now) {
  if (FLAGS_stats_interval == 0) {
    // The interval grows with the count, as RocksDB's does.
    if (next_report_ < 1000) {
      next_report_ += 100;
    } else if (next_report_ < 5000) {
      next_report_ += 500;
    } else if (next_report_ < 10000) {
      next_report_ += 1000;
    } else if (next_report_ < 50000) {
      next_report_ += 5000;
    } else if (next_report_ < 100000) {
      next_report_ += 10000;
    } else if (next_report_ < 500000) {
      next_report_ += 50000;
    } else {
      next_report_ += 100000;
    }
    fprintf(stderr, "... finished %" PRIu64 " ops%30s\r", done_, "");
  } else {
    const uint64_t since_last = now - last_report_finish_;
    if (FLAGS_stats_interval_seconds > 0 &&
        since_last < static_cast<uint64_t>(FLAGS_stats_interval_seconds) * 1000000) {
      next_report_ += FLAGS_stats_interval;  // not yet: look again after this many ops
    } else {
      fprintf(stderr,
              "%s ... thread %d: (%" PRIu64 ",%" PRIu64
              ") ops and (%.1f,%.1f) ops/second in (%.6f,%.6f) seconds\n",
              WallClockString().c_str(), id_, done_ - last_report_done_, done_,
              (done_ - last_report_done_) / (since_last / 1000000.0),
              done_ / ((now - start_) / 1000000.0), since_last / 1000000.0,
              (now - start_) / 1000000.0);
      std::string stats;
      if (id_ == 0 && FLAGS_stats_per_interval > 0 && db_ != nullptr &&
          db_->GetProperty("rocksdb.stats", &stats)) {
        fprintf(stderr, "%s", stats.c_str());
      }
      next_report_ += FLAGS_stats_interval;
      last_report_finish_ = now;
      last_report_done_ = done_;
    }
  }
  fflush(stderr);
}

void Stats::Merge(const Stats& other) {
  if (other.exclude_from_merge_) return;
  for (const auto& [type, h] : other.hist_) hist_[type].Merge(h);
  done_ += other.done_;
  bytes_ += other.bytes_;
  seconds_ += other.seconds_;
  start_ = std::min(start_, other.start_);
  finish_ = std::max(finish_, other.finish_);
  // One thread's message stands for all.
  if (message_.empty()) message_ = other.message_;
}

void Stats::Report(const std::string& name) {
  // A benchmark that counted no operation still reports one.
  if (done_ < 1) done_ = 1;
  const double elapsed = (finish_ - start_) * 1e-6;
  std::string extra;
  if (bytes_ > 0) {
    char rate[100];
    snprintf(rate, sizeof(rate), "%6.1f MB/s", (bytes_ / 1048576.0) / elapsed);
    extra = rate;
  }
  AppendWithSpace(&extra, message_);
  const double throughput = static_cast<double>(done_) / elapsed;
  fprintf(stdout, "%-12s : %11.3f micros/op %ld ops/sec %.3f seconds %" PRIu64 " operations;%s%s\n",
          name.c_str(), seconds_ * 1e6 / done_, static_cast<long>(throughput), elapsed, done_,
          extra.empty() ? "" : " ", extra.c_str());
  if (FLAGS_histogram) {
    for (const auto& [type, h] : hist_) {
      fprintf(stdout, "Microseconds per %s:\n%s\n", OpName(type), h.ToString().c_str());
    }
  }
  fflush(stdout);
}

namespace {

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / v.size();
}

// Half width of a 95% confidence interval, taking the samples as normal.
double Confidence95(const std::vector<double>& v) {
  const double m = Mean(v);
  double sq = 0;
  for (double x : v) sq += (x - m) * (x - m);
  const double stddev = std::sqrt(sq / (v.size() - 1));
  return 1.959964 * stddev / std::sqrt(static_cast<double>(v.size()));
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid] + v[mid - 1]) / 2;
}

}  // namespace

void CombinedStats::AddStats(const Stats& stats) {
  const double elapsed = stats.elapsed_seconds();
  const double ops = static_cast<double>(std::max<uint64_t>(stats.done(), 1));
  ops_.push_back(ops / elapsed);
  if (stats.bytes() > 0) mbs_.push_back(stats.bytes() / 1048576.0 / elapsed);
}

void CombinedStats::Report(const std::string& name) {
  if (ops_.size() < 2) return;
  const int runs = static_cast<int>(ops_.size());
  if (mbs_.size() == ops_.size()) {
    fprintf(stdout, "%s [AVG %d runs] : %d (\xC2\xB1 %d) ops/sec; %6.1f (\xC2\xB1 %.1f) MB/sec\n",
            name.c_str(), runs, static_cast<int>(Mean(ops_)),
            static_cast<int>(Confidence95(ops_)), Mean(mbs_), Confidence95(mbs_));
  } else {
    fprintf(stdout, "%s [AVG %d runs] : %d (\xC2\xB1 %d) ops/sec\n", name.c_str(), runs,
            static_cast<int>(Mean(ops_)), static_cast<int>(Confidence95(ops_)));
  }
}

void CombinedStats::ReportFinal(const std::string& name) {
  if (ops_.size() < 2) return;
  const int runs = static_cast<int>(ops_.size());
  const double avg = Mean(ops_);
  const double ms_per_op = avg > 0 ? 1000.0 / avg : 0;
  fprintf(stdout, "\n");
  if (mbs_.size() == ops_.size()) {
    fprintf(stdout,
            "%s [AVG    %d runs] : %d (\xC2\xB1 %d) ops/sec; %.3f ms/op; %6.1f (\xC2\xB1 %.1f) "
            "MB/sec\n%s [MEDIAN %d runs] : %d ops/sec; %6.1f MB/sec\n",
            name.c_str(), runs, static_cast<int>(avg), static_cast<int>(Confidence95(ops_)),
            ms_per_op, Mean(mbs_), Confidence95(mbs_), name.c_str(), runs,
            static_cast<int>(Median(ops_)), Median(mbs_));
  } else {
    fprintf(stdout,
            "%s [AVG    %d runs] : %d (\xC2\xB1 %d) ops/sec; %.3f ms/op\n"
            "%s [MEDIAN %d runs] : %d ops/sec\n",
            name.c_str(), runs, static_cast<int>(avg), static_cast<int>(Confidence95(ops_)),
            ms_per_op, name.c_str(), runs, static_cast<int>(Median(ops_)));
  }
}

}  // namespace shale::tools
