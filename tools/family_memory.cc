// family_memory: memtable memory of a DB with many column families under a memtable budget
// (DBOptions::db_write_buffer_size). Writer threads put random keys into random families
// while a sampler reads the "cur-size-all-mem-tables" property summed over the families
// (GetAggregatedIntProperty) every few milliseconds; it prints the largest and mean sample
// against the budget. The same source builds against RocksDB's headers
// (-DFAMILY_MEMORY_ROCKSDB; tools/family_memory.sh) so both engines run one workload.
//
// usage: family_memory DB_DIR [families=16] [budget_mb=64] [write_buffer_mb=64]
//                      [seconds=20] [threads=2] [value_size=400]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#ifdef FAMILY_MEMORY_ROCKSDB
#include <rocksdb/db.h>
namespace kv = rocksdb;
static const char* const kEngine = "rocksdb";
#else
#include "shale/db.h"
namespace kv = shale;
static const char* const kEngine = "shale";
#endif

namespace {

int ArgOr(int argc, char** argv, int i, int fallback) {
  return argc > i ? std::atoi(argv[i]) : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s DB_DIR [families=16] [budget_mb=64] [write_buffer_mb=64] "
                 "[seconds=20] [threads=2] [value_size=400]\n",
                 argv[0]);
    return 2;
  }
  const std::string dbname = argv[1];
  const int families = ArgOr(argc, argv, 2, 16);
  const uint64_t budget = static_cast<uint64_t>(ArgOr(argc, argv, 3, 64)) << 20;
  const size_t write_buffer = static_cast<size_t>(ArgOr(argc, argv, 4, 64)) << 20;
  const int seconds = ArgOr(argc, argv, 5, 20);
  const int threads = ArgOr(argc, argv, 6, 2);
  const int value_size = ArgOr(argc, argv, 7, 400);
  if (families < 1 || threads < 1 || seconds < 1 || value_size < 1 || budget == 0) {
    std::fprintf(stderr, "%s: every argument must be positive\n", argv[0]);
    return 2;
  }

  kv::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.db_write_buffer_size = budget;
  kv::ColumnFamilyOptions cf_options;
  cf_options.write_buffer_size = write_buffer;
  std::vector<kv::ColumnFamilyDescriptor> descs;
  descs.emplace_back(kv::kDefaultColumnFamilyName, cf_options);
  for (int f = 1; f < families; f++) descs.emplace_back("cf" + std::to_string(f), cf_options);
  std::vector<kv::ColumnFamilyHandle*> handles;
  kv::DB* db = nullptr;
  kv::Status s = kv::DB::Open(db_options, dbname, descs, &handles, &db);
  if (!s.ok()) {
    std::fprintf(stderr, "%s: Open: %s\n", argv[0], s.ToString().c_str());
    return 1;
  }

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> writes{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < threads; t++) {
    writers.emplace_back([&, t] {
      std::mt19937_64 rnd(1000 + t);
      const std::string value(static_cast<size_t>(value_size), 'v');
      kv::WriteOptions wo;
      wo.disableWAL = true;
      char key[32];
      while (!stop.load(std::memory_order_relaxed)) {
        std::snprintf(key, sizeof(key), "%016llx",
                      static_cast<unsigned long long>(rnd() % 100000000));
        if (!db->Put(wo, handles[rnd() % handles.size()], key, value).ok()) errors++;
        writes.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }

  uint64_t max_sample = 0, sum = 0, samples = 0, over = 0;
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    uint64_t size = 0;
    if (!db->GetAggregatedIntProperty("rocksdb.cur-size-all-mem-tables", &size)) {
      std::fprintf(stderr, "%s: no cur-size-all-mem-tables property\n", argv[0]);
      errors++;
      break;
    }
    max_sample = std::max(max_sample, size);
    sum += size;
    samples++;
    if (size > budget) over++;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop = true;
  for (std::thread& w : writers) w.join();
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::printf(
      "%s: %d families, budget %.1f MB, write_buffer_size %.1f MB: memtables max %.1f MB "
      "(%.2f of the budget), mean %.1f MB, %llu of %llu samples over the budget; "
      "%.0f writes/s, %d errors\n",
      kEngine, families, budget / 1048576.0, write_buffer / 1048576.0, max_sample / 1048576.0,
      static_cast<double>(max_sample) / budget, samples > 0 ? sum / 1048576.0 / samples : 0.0,
      static_cast<unsigned long long>(over), static_cast<unsigned long long>(samples),
      writes.load() / secs, errors.load());
  for (kv::ColumnFamilyHandle* h : handles) {
    if (!db->DestroyColumnFamilyHandle(h).ok()) errors++;
  }
  delete db;
  return errors.load() == 0 ? 0 : 1;
}
