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

void AppendRow(std::string* out, const char* name, int files, uint64_t bytes, double score,
               const LevelCompactionStats& s) {
  const double read_gb = (s.bytes_read_non_output + s.bytes_read_output) / kGB;
  const double w_amp = s.bytes_read_non_output == 0
                           ? (s.bytes_written > 0 ? 1.0 : 0.0)
                           : static_cast<double>(s.bytes_written) / s.bytes_read_non_output;
  const double secs = s.micros / 1e6;
  char buf[400];
  snprintf(buf, sizeof(buf),
           "%4s %6d %8.2f MB %6.1f %8.1f %7.1f %8.1f %9.1f %9.1f %5.1f %8.1f %8.1f %9.2f "
           "%9" PRIu64 " %8.3f %8" PRIu64 " %7" PRIu64 "\n",
           name, files, bytes / kMB, score, read_gb, s.bytes_read_non_output / kGB,
           s.bytes_read_output / kGB, s.bytes_written / kGB, s.bytes_moved / kGB, w_amp,
           secs > 0 ? (s.bytes_read_non_output + s.bytes_read_output) / kMB / secs : 0.0,
           secs > 0 ? s.bytes_written / kMB / secs : 0.0, secs, s.count,
           s.count > 0 ? secs / s.count : 0.0, s.keys_in, s.keys_dropped);
  out->append(buf);
}

std::string HMS(uint64_t micros) {
  char buf[64];
  const uint64_t secs = micros / 1000000;
  snprintf(buf, sizeof(buf), "%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64 ".%03" PRIu64, secs / 3600,
           (secs / 60) % 60, secs % 60, (micros / 1000) % 1000);
  return buf;
}

}  // namespace

std::string InternalStats::DumpFamily(uint32_t family, const std::string& name,
                                      const Version* current, const std::vector<double>& scores,
                                      uint64_t now_micros) const {
  FamilyStats& fs = families_[family];
  if (fs.levels.size() < static_cast<size_t>(current->NumLevels())) {
    fs.levels.resize(current->NumLevels());
  }
  std::string out = "\n** Compaction Stats [" + name + "] **\n";
  out.append(
      "Level  Files     Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) Moved(GB) W-Amp "
      "Rd(MB/s) Wr(MB/s) Comp(sec) Comp(cnt) Avg(sec)    KeyIn KeyDrop\n");
  out.append(std::string(156, '-') + "\n");
  LevelCompactionStats sum;
  int total_files = 0;
  uint64_t total_bytes = 0;
  for (int level = 0; level < current->NumLevels(); level++) {
    const int files = current->NumFiles(level);
    const uint64_t bytes = current->NumLevelBytes(level);
    const LevelCompactionStats& s = fs.levels[level];
    if (files == 0 && s.count == 0) continue;
    char row_name[16];
    snprintf(row_name, sizeof(row_name), "L%d", level);
    const double score = level < static_cast<int>(scores.size()) ? scores[level] : 0.0;
    AppendRow(&out, row_name, files, bytes, score, s);
    sum.Add(s);
    total_files += files;
    total_bytes += bytes;
  }
  // Sum's write amplification is against what was flushed (the user's data).
  const uint64_t flushed = fs.levels[0].bytes_written;
  LevelCompactionStats sum_for_amp = sum;
  sum_for_amp.bytes_read_non_output = flushed;
  sum_for_amp.bytes_read_output = 0;
  std::string sum_row;
  AppendRow(&sum_row, "Sum", total_files, total_bytes, 0.0, sum_for_amp);
  // Read columns of the sum are the real reads, not the amplification base.
  out.append(sum_row);

  // The two lines RocksDB's tools/benchmark.sh reads write amplification from.
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
