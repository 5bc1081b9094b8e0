// Benchmarks that act on the DB as a whole: manual compaction, flush, waiting for
// background work, and printing DB properties (stats, levelstats, memstats, sstables).
#include <cstdio>
#include <cstdlib>

#include "tools/db_bench.h"
#include "tools/db_bench_flags.h"

namespace shale::tools {

namespace {

void ExitOnError(const char* what, const Status& s) {
  if (s.ok()) return;
  fprintf(stderr, "%s failed: %s\n", what, s.ToString().c_str());
  exit(1);
}

}  // namespace

void Benchmark::Compact(ThreadState* /*thread*/) {
  // Everything down to the bottom, rewriting the bottommost level once but not the files
  // this compaction itself put there.
  CompactRangeOptions options;
  options.bottommost_level_compaction = BottommostLevelCompaction::kForceOptimized;
  ExitOnError("compact", db_->CompactRange(options, nullptr, nullptr));
}

void Benchmark::CompactAll() {
  CompactRangeOptions options;
  options.bottommost_level_compaction = BottommostLevelCompaction::kForce;
  ExitOnError("compactall", db_->CompactRange(options, nullptr, nullptr));
}

void Benchmark::FlushMemtable() {
  FlushOptions options;
  options.wait = true;
  // Every family that exists, as RocksDB's flush does with several.
  ExitOnError("Flush",
              cfh_.size() > 1 ? db_->Flush(options, CreatedFamilies()) : db_->Flush(options));
  fprintf(stdout, "flush memtable\n");
}

void Benchmark::WaitForCompaction() {
  fprintf(stdout, "waitforcompaction(%s): started\n", FLAGS_db.c_str());
  fflush(stdout);
  ExitOnError("waitforcompaction", db_->WaitForCompact(WaitForCompactOptions()));
  fprintf(stdout, "waitforcompaction(%s): finished\n", FLAGS_db.c_str());
}

void Benchmark::PrintStats(const char* property) {
  std::string value;
  if (!db_->GetProperty(property, &value)) value = "(failed)";
  fprintf(stdout, "\n%s\n", value.c_str());
}

void Benchmark::PrintMemStats() {
  // RocksDB's list; the properties this DB does not answer are left out.
  static const char* const kKeys[] = {
      "rocksdb.num-immutable-mem-table",      "rocksdb.cur-size-active-mem-table",
      "rocksdb.cur-size-all-mem-tables",      "rocksdb.size-all-mem-tables",
      "rocksdb.num-entries-active-mem-table", "rocksdb.num-entries-imm-mem-tables"};
  for (const char* key : kKeys) {
    std::string value;
    if (db_->GetProperty(key, &value)) fprintf(stdout, "%s: %s\n", key, value.c_str());
  }
}

}  // namespace shale::tools
