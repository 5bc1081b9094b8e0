#include "db/internal_stats.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "db/version_set.h"
#include "db/write_controller.h"

namespace shale {

void LevelCompactionStats::Add(const LevelCompactionStats& o) {
  micros += o.micros;
  bytes_read_non_output += o.bytes_read_non_output;
  bytes_read_output += o.bytes_read_output;
  bytes_written += o.bytes_written;
  bytes_moved += o.bytes_moved;
  files_in += o.files_in;
  files_out += o.files_out;
  count += o.count;
  keys_in += o.keys_in;
  keys_dropped += o.keys_dropped;
}

InternalStats::InternalStats(uint64_t start_micros, Mutex* db_mutex)
    : start_micros_(start_micros), db_mutex_(db_mutex) {}

void InternalStats::AddCompactionStats(uint32_t family, int level,
                                       const LevelCompactionStats& stats) {
  std::vector<LevelCompactionStats>& levels = families_[family].levels;
  if (static_cast<size_t>(level) >= levels.size()) levels.resize(level + 1);
  levels[level].Add(stats);
}

namespace {

constexpr double kGB = 1024.0 * 1024 * 1024;
constexpr double kMB = 1024.0 * 1024;

// One row of a family's compaction table: a level's figures, or the sum's.
struct Row {
  std::string name;  // "L0", "L1", ... or "Sum"
  int files = 0;
  uint64_t bytes = 0;
  double score = 0;
  LevelCompactionStats s;
};

// What a row shows beyond its counters.
struct Figures {
  double read_gb, rn_gb, rnp1_gb, write_gb, moved_gb, w_amp, read_mbps, write_mbps, secs, avg_secs;
};

Figures FiguresOf(const LevelCompactionStats& s) {
  Figures f;
  const uint64_t read = s.bytes_read_non_output + s.bytes_read_output;
  f.read_gb = read / kGB;
  f.rn_gb = s.bytes_read_non_output / kGB;
  f.rnp1_gb = s.bytes_read_output / kGB;
  f.write_gb = s.bytes_written / kGB;
  f.moved_gb = s.bytes_moved / kGB;
  f.w_amp = s.bytes_read_non_output == 0
                ? (s.bytes_written > 0 ? 1.0 : 0.0)
                : static_cast<double>(s.bytes_written) / s.bytes_read_non_output;
  f.secs = s.micros / 1e6;
  f.read_mbps = f.secs > 0 ? read / kMB / f.secs : 0.0;
  f.write_mbps = f.secs > 0 ? s.bytes_written / kMB / f.secs : 0.0;
  f.avg_secs = s.count > 0 ? f.secs / s.count : 0.0;
  return f;
}

void AppendRow(std::string* out, const Row& r) {
  const Figures f = FiguresOf(r.s);
  char buf[400];
  snprintf(buf, sizeof(buf),
           "%4s %6d %8.2f MB %6.1f %8.1f %7.1f %8.1f %9.1f %9.1f %5.1f %8.1f %8.1f %9.2f "
           "%9" PRIu64 " %8.3f %8" PRIu64 " %7" PRIu64 "\n",
           r.name.c_str(), r.files, r.bytes / kMB, r.score, f.read_gb, f.rn_gb, f.rnp1_gb,
           f.write_gb, f.moved_gb, f.w_amp, f.read_mbps, f.write_mbps, f.secs, r.s.count,
           f.avg_secs, r.s.keys_in, r.s.keys_dropped);
  out->append(buf);
}

// The row as RocksDB's "cfstats" map has it: "compaction.<row>.<figure>".
void AddRow(std::map<std::string, std::string>* out, const Row& r) {
  const Figures f = FiguresOf(r.s);
  const std::pair<const char*, double> figures[] = {
      {"NumFiles", r.files},
      {"SizeBytes", static_cast<double>(r.bytes)},
      {"Score", r.score},
      {"ReadGB", f.read_gb},
      {"RnGB", f.rn_gb},
      {"Rnp1GB", f.rnp1_gb},
      {"WriteGB", f.write_gb},
      {"MovedGB", f.moved_gb},
      {"WriteAmp", f.w_amp},
      {"ReadMBps", f.read_mbps},
      {"WriteMBps", f.write_mbps},
      {"CompSec", f.secs},
      {"CompCount", static_cast<double>(r.s.count)},
      {"AvgSec", f.avg_secs},
      {"KeyIn", static_cast<double>(r.s.keys_in)},
      {"KeyDrop", static_cast<double>(r.s.keys_dropped)},
  };
  for (const auto& [name, value] : figures) {
    (*out)["compaction." + r.name + "." + name] = std::to_string(value);
  }
}

// The rows of a family's table: each level with files or work, then the sum, whose write
// amplification is against what was flushed (the user's data).
std::vector<Row> RowsOf(const std::vector<LevelCompactionStats>& levels, const Version* current,
                        const std::vector<double>& scores) {
  std::vector<Row> rows;
  Row sum;
  sum.name = "Sum";
  for (int level = 0; level < current->NumLevels(); level++) {
    Row r;
    r.files = current->NumFiles(level);
    r.bytes = current->NumLevelBytes(level);
    r.s = levels[level];
    if (r.files == 0 && r.s.count == 0) continue;
    r.name = "L" + std::to_string(level);
    r.score = level < static_cast<int>(scores.size()) ? scores[level] : 0.0;
    sum.files += r.files;
    sum.bytes += r.bytes;
    sum.s.Add(r.s);
    rows.push_back(std::move(r));
  }
  sum.s.bytes_read_non_output = levels[0].bytes_written;
  sum.s.bytes_read_output = 0;
  rows.push_back(std::move(sum));
  return rows;
}

std::string HMS(uint64_t micros) {
  char buf[64];
  const uint64_t secs = micros / 1000000;
  snprintf(buf, sizeof(buf), "%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64 ".%03" PRIu64, secs / 3600,
           (secs / 60) % 60, secs % 60, (micros / 1000) % 1000);
  return buf;
}

}  // namespace

std::vector<LevelCompactionStats>& InternalStats::LevelsOf(uint32_t family,
                                                           const Version* current) const {
  std::vector<LevelCompactionStats>& levels = families_[family].levels;
  if (levels.size() < static_cast<size_t>(current->NumLevels())) {
    levels.resize(current->NumLevels());
  }
  return levels;
}

std::string InternalStats::DumpFamily(uint32_t family, const std::string& name,
                                      const Version* current, const std::vector<double>& scores,
                                      uint64_t now_micros) const {
  const std::vector<LevelCompactionStats>& levels = LevelsOf(family, current);
  std::string out = "\n** Compaction Stats [" + name + "] **\n";
  out.append(
      "Level  Files     Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) Moved(GB) W-Amp "
      "Rd(MB/s) Wr(MB/s) Comp(sec) Comp(cnt) Avg(sec)    KeyIn KeyDrop\n");
  out.append(std::string(156, '-') + "\n");
  LevelCompactionStats sum;
  for (const Row& r : RowsOf(levels, current, scores)) {
    AppendRow(&out, r);
    if (r.name != "Sum") sum.Add(r.s);
  }

  // The two lines RocksDB's tools/benchmark.sh reads write amplification from.
  FamilyStats& fs = families_[family];
  const uint64_t flushed = levels[0].bytes_written;
  const double uptime = (now_micros - start_micros_) / 1e6;
  char buf[512];
  snprintf(buf, sizeof(buf), "\nFlush(GB): cumulative %.3f, interval %.3f\n", flushed / kGB,
           (flushed - std::min(flushed, fs.flushed_at_last_dump)) / kGB);
  out.append(buf);
  fs.flushed_at_last_dump = flushed;
  const uint64_t compact_read = sum.bytes_read_non_output + sum.bytes_read_output;
  snprintf(buf, sizeof(buf),
           "Cumulative compaction: %.2f GB write, %.2f MB/s write, %.2f GB read, %.2f MB/s "
           "read, %.1f seconds\n",
           sum.bytes_written / kGB, uptime > 0 ? sum.bytes_written / kMB / uptime : 0.0,
           compact_read / kGB, uptime > 0 ? compact_read / kMB / uptime : 0.0, sum.micros / 1e6);
  out.append(buf);
  return out;
}

void InternalStats::FamilyMap(uint32_t family, const Version* current,
                              const std::vector<double>& scores,
                              std::map<std::string, std::string>* out) const {
  for (const Row& r : RowsOf(LevelsOf(family, current), current, scores)) AddRow(out, r);
}

void InternalStats::DBMap(const WriteController& wc, uint64_t now_micros,
                          std::map<std::string, std::string>* out) const {
  const std::pair<const char*, uint64_t> counters[] = {
      {"db.wal_bytes_written", wal_bytes.load()},
      {"db.wal_syncs", wal_syncs.load()},
      {"db.user_bytes_written", bytes_written.load()},
      {"db.user_keys_written", keys_written.load()},
      {"db.user_writes_by_other", write_done_by_other.load()},
      {"db.user_writes_by_self", write_done_by_self.load()},
      {"db.user_writes_with_wal", write_with_wal.load()},
      {"db.user_write_stall_micros", wc.total_stall_micros()},
  };
  for (const auto& [name, value] : counters) (*out)[name] = std::to_string(value);
  (*out)["db.uptime"] = std::to_string((now_micros - start_micros_) / 1e6);
}

std::string InternalStats::DumpDB(const WriteController& wc, uint64_t now_micros) const {
  const double uptime = (now_micros - start_micros_) / 1e6;
  std::string out = "\n** DB Stats **\n";
  char buf[512];
  snprintf(buf, sizeof(buf),
           "Uptime(secs): %.1f total\n"
           "Cumulative writes: %" PRIu64 " writes, %" PRIu64 " keys, %" PRIu64
           " commit groups, %.1f writes per commit group, ingest: %.2f GB, %.2f MB/s\n"
           "Cumulative WAL: %" PRIu64 " writes, %" PRIu64 " syncs, %.2f GB written\n",
           uptime, writes.load(), keys_written.load(), write_done_by_self.load(),
           write_done_by_self.load() > 0
               ? static_cast<double>(writes.load()) / write_done_by_self.load()
               : 0.0,
           bytes_written.load() / kGB, uptime > 0 ? bytes_written.load() / kMB / uptime : 0.0,
           write_with_wal.load(), wal_syncs.load(), wal_bytes.load() / kGB);
  out.append(buf);
  const uint64_t stall = wc.total_stall_micros();
  snprintf(buf, sizeof(buf), "Cumulative stall: %s H:M:S, %.1f percent\n", HMS(stall).c_str(),
           uptime > 0 ? stall / 1e4 / uptime : 0.0);
  out.append(buf);
  out.append("Stalls(count):");
  for (int c = 0; c < WriteController::kNumCauses; c++) {
    auto cause = static_cast<WriteController::Cause>(c);
    snprintf(buf, sizeof(buf), " %" PRIu64 " %s-slowdown, %" PRIu64 " %s-stop,",
             wc.stall_count(cause, false), wc.CauseName(cause), wc.stall_count(cause, true),
             wc.CauseName(cause));
    out.append(buf);
  }
  out.back() = '\n';
  return out;
}

std::string InternalStats::DumpLevelSizes(const Version* current) {
  std::string out = "Level Files Size(MB)\n--------------------\n";
  char buf[64];
  for (int level = 0; level < current->NumLevels(); level++) {
    snprintf(buf, sizeof(buf), "%3d %8d %8.0f\n", level, current->NumFiles(level),
             current->NumLevelBytes(level) / kMB);
    out.append(buf);
  }
  return out;
}

}  // namespace shale
