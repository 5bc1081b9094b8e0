// What the DB writes to its info LOG outside flushes and compactions: the options at open,
// and the periodic stats dump (shale.stats, then the Statistics dump when configured).
#include <cinttypes>

#include "db/db_impl.h"
#include "options/options_check.h"
#include "util/logging.h"

namespace shale {

void DBImpl::LogOptionsAtOpen() {
  Logger* log = info_log_;
  if (log == nullptr) return;
  Header(log, "shale version: %s", "0.1.0");
  Header(log, "DB path: %s", dbname_.c_str());
  LogOptions(log, options_);  // every option of the tables
}

void DBImpl::StartStatsDump() {
  if (current_options_->stats_dump_period_sec == 0 || info_log_ == nullptr) return;
  if (stats_dump_thread_.joinable() || shutting_down_) return;
  stats_dump_thread_ = std::thread([this] { StatsDumpLoop(); });
}

void DBImpl::StatsDumpLoop() {
  DbLock l(this);
  uint64_t last = env_->NowMicros();
  while (!shutting_down_) {
    // Read each round: SetDBOptions may change the period (and signals the wait).
    const uint64_t period = uint64_t{current_options_->stats_dump_period_sec} * 1000000;
    const uint64_t now = env_->NowMicros();
    if (period == 0) {
      stats_dump_cv_.Wait(&mutex_);
      continue;
    }
    if (now < last + period) {
      stats_dump_cv_.TimedWaitMicros(&mutex_, last + period - now);
      continue;
    }
    last = now;
    UnlockDb();  // the properties take the mutex themselves
    DumpStats();
    LockDb();
  }
}

void DBImpl::DumpStats() {
  std::string stats;
  if (!GetProperty(DefaultColumnFamily(), Properties::kStats, &stats)) return;
  // Every other family's table after the default's, as RocksDB's LOG has them.
  for (ColumnFamilyHandleImpl& h : LiveFamilyHandles()) {
    std::string family;
    if (h.cfd() != default_cf_ && GetProperty(&h, Properties::kCFStats, &family)) {
      stats.append(family);
    }
  }
  SHALE_LOG_INFO(info_log_, "------- DUMPING STATS -------");
  // One LOG line per table row, so each keeps its own prefix and stays readable.
  size_t start = 0;
  while (start < stats.size()) {
    size_t end = stats.find('\n', start);
    if (end == std::string::npos) end = stats.size();
    Log(info_log_, "%s", stats.substr(start, end - start).c_str());
    start = end + 1;
  }
  if (stats_ != nullptr) {
    const std::string dump = stats_->ToString();
    start = 0;
    while (start < dump.size()) {
      size_t end = dump.find('\n', start);
      if (end == std::string::npos) end = dump.size();
      Log(info_log_, "%s", dump.substr(start, end - start).c_str());
      start = end + 1;
    }
  }
  info_log_->Flush();
}

}  // namespace shale
