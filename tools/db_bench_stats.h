// Stats: what one db_bench thread measured (operations, bytes, latency histograms, a
// message), merged across threads and printed in RocksDB db_bench's result format:
//
//   <name, %-12s> : <%11.3f> micros/op <%ld> ops/sec <%.3f> seconds <n> operations;[ <MB/s>][ <msg>]
//
// micros/op is the summed thread time per operation; ops/sec and MB/s use the wall time
// from the first thread's start to the last thread's end.
//
// Thread safety: a Stats belongs to one thread until the benchmark ends; ReporterAgent's
// ReportFinishedOps may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "shale/db.h"
#include "tools/histogram.h"
#include "util/mutexlock.h"

namespace shale::tools {

uint64_t NowMicros();

enum class OpType {
  kRead,
  kWrite,
  kDelete,
  kSeek,
  kUpdate,
  kMerge,
  kCrc,
  kCompress,
  kUncompress,
  kOthers
};

// Writes "secs_elapsed,interval_qps" lines to a CSV file every interval, from its own
// thread, for the life of the object (--report_interval_seconds, --report_file).
class ReporterAgent {
 public:
  // Exits the process if the file cannot be written, as RocksDB's does.
  ReporterAgent(const std::string& fname, uint64_t interval_seconds);
  ~ReporterAgent();
  void ReportFinishedOps(int64_t n) { total_ops_.fetch_add(n, std::memory_order_relaxed); }

 private:
  void Run();

  FILE* file_;
  const uint64_t interval_seconds_;
  std::atomic<int64_t> total_ops_{0};
  Mutex mu_;
  CondVar cv_{&mu_};
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

class Stats {
 public:
  Stats() { Start(-1); }

  void Start(int id);
  void Stop();
  void SetReporterAgent(ReporterAgent* agent) { reporter_ = agent; }
  // The DB whose compaction stats thread 0 prints with each interval report
  // (--stats_per_interval).
  void SetDB(DB* db) { db_ = db; }
  // This thread's numbers stay out of Merge (e.g. the background writer of
  // readwhilewriting).
  void SetExcludeFromMerge() { exclude_from_merge_ = true; }

  void FinishedOps(int64_t n, OpType type);
  void AddBytes(int64_t n) { bytes_ += n; }
  // Appended with a separating space.
  void AddMessage(const std::string& msg);

  void Merge(const Stats& other);
  // Prints the result line and, with --histogram, one block per operation type.
  void Report(const std::string& name);

  uint64_t done() const { return done_; }
  uint64_t bytes() const { return bytes_; }
  double elapsed_seconds() const { return (finish_ - start_) * 1e-6; }

 private:
  void ReportProgress(uint64_t now);

  int id_ = -1;
  uint64_t start_ = 0;
  uint64_t finish_ = 0;
  double seconds_ = 0;
  uint64_t done_ = 0;
  uint64_t bytes_ = 0;
  uint64_t last_op_finish_ = 0;
  uint64_t next_report_ = 0;
  uint64_t last_report_done_ = 0;
  uint64_t last_report_finish_ = 0;
  std::map<OpType, Histogram> hist_;
  std::string message_;
  bool exclude_from_merge_ = false;
  ReporterAgent* reporter_ = nullptr;  // not owned
  DB* db_ = nullptr;                   // not owned
};

// Throughput of the repeated runs of one benchmark (name[X<n>]): an average line after
// each run from the second on, and average and median lines at the end.
class CombinedStats {
 public:
  void AddStats(const Stats& stats);
  void Report(const std::string& name);
  void ReportFinal(const std::string& name);

 private:
  std::vector<double> ops_;
  std::vector<double> mbs_;
};

}  // namespace shale::tools
