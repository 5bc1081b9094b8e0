// db_bench for shale: RocksDB db_bench's flags, workloads and output. See db_bench.h.
#include "tools/db_bench.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "shale/compression_type.h"
#include "tools/db_bench_flags.h"

#ifndef SHALE_VERSION_STRING
#define SHALE_VERSION_STRING "unknown"
#endif

namespace shale::tools {
namespace {

// RocksDB benchmarks shale cannot run yet, and what each lacks.
struct Unsupported {
  const char* name;
  const char* needs;
};
constexpr Unsupported kUnsupported[] = {
    {"compact0", "CompactFiles and GetLiveFilesMetaData (it compacts L0 file by file)"},
    {"compact1", "CompactFiles and GetLiveFilesMetaData (it compacts L1 file by file)"},
    {"openandcompact", "OpenAndCompact (remote compaction)"},
    {"fillseqdeterministic", "CompactFiles (it shapes the LSM tree file by file)"},
    {"filluniquerandomdeterministic", "CompactFiles (it shapes the LSM tree file by file)"},
    {"xorupdaterandom", "a bytes-XOR merge operator"},
    {"appendrandom", "its workload in this db_bench (not written yet)"},
    {"readtorowcache", "a row cache"},
    {"readtocache", "its workload in this db_bench (not written yet)"},
    {"approximatesizerandom", "GetApproximateSizes"},
    {"backup", "a BackupEngine"},
    {"restore", "a BackupEngine"},
    {"resetstats", "DB::ResetStats (the compaction stats cannot be zeroed)"},
    {"replay", "tracing"},
    {"mixgraph", "its workload model in this db_bench (not written yet)"},
    {"timeseries", "its workload in this db_bench (not written yet)"},
    {"newiterator", "its workload in this db_bench (not written yet)"},
    {"newiteratorwhilewriting", "its workload in this db_bench (not written yet)"},
    {"seekrandomwhilewriting", "its workload in this db_bench (not written yet)"},
    {"readwhilescanning", "its workload in this db_bench (not written yet)"},
    {"randomwithverify", "its workload in this db_bench (not written yet)"},
    {"fillseekseq", "its workload in this db_bench (not written yet)"},
    {"randomreplacekeys", "its workload in this db_bench (not written yet)"},
    {"acquireload", "its workload in this db_bench (not written yet)"},
    {"xxhash", "an xxHash code path in this db_bench (not written yet)"},
    {"xxhash64", "an xxHash code path in this db_bench (not written yet)"},
    {"xxh3", "an xxHash code path in this db_bench (not written yet)"},
};

// "name[X3-W1]" -> name, repeat 3, warm-up 1. False on a malformed argument list.
bool SplitBenchmarkArgs(std::string* name, int* repeat, int* warmup) {
  *repeat = 1;
  *warmup = 0;
  if (name->empty() || name->back() != ']') return true;
  const size_t open = name->find('[');
  if (open == std::string::npos) return false;
  std::stringstream args(name->substr(open + 1, name->size() - open - 2));
  name->resize(open);
  std::string arg;
  while (std::getline(args, arg, '-')) {
    if (arg.size() < 2 || (arg[0] != 'X' && arg[0] != 'W')) continue;
    char* end = nullptr;
    const long n = strtol(arg.c_str() + 1, &end, 10);
    if (*end != '\0' || n < 0) return false;
    (arg[0] == 'X' ? *repeat : *warmup) = static_cast<int>(n);
  }
  return true;
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(item);
  return out;
}

// RocksDB's default: $TEST_TMPDIR, else /tmp/rocksdbtest-<euid>; then /dbbench.
std::string DefaultDBPath() {
  const char* tmp = getenv("TEST_TMPDIR");
  std::string dir = tmp != nullptr && tmp[0] != '\0'
                        ? std::string(tmp)
                        : "/tmp/rocksdbtest-" + std::to_string(geteuid());
  mkdir(dir.c_str(), 0755);
  return dir + "/dbbench";
}

// RocksDB db_bench's family names, so that either binary opens the other's DB.
std::string ColumnFamilyName(size_t i) {
  if (i == 0) return kDefaultColumnFamilyName;
  char name[64];
  snprintf(name, sizeof(name), "column_family_name_%06zu", i);
  return name;
}

// --column_family_distribution as percentages, one per hot family; false (after saying
// why) unless there are `hot` of them summing to 100.
bool ParseFamilyDistribution(size_t hot, std::vector<int>* out) {
  out->clear();
  if (FLAGS_column_family_distribution.empty()) return true;
  std::stringstream list(FLAGS_column_family_distribution);
  std::string item;
  int sum = 0;
  while (std::getline(list, item, ',')) {
    out->push_back(atoi(item.c_str()));
    sum += out->back();
  }
  if (sum != 100) {
    fprintf(stderr, "column_family_distribution items must sum to 100\n");  // RocksDB's words
    return false;
  }
  if (out->size() != hot) {
    fprintf(stderr, "got %zu column_family_distribution items; expected %zu\n", out->size(), hot);
    return false;
  }
  return true;
}

void PrintEnvironment() {
  fprintf(stderr, "shale:      version %s\n", SHALE_VERSION_STRING);
  time_t now = time(nullptr);
  char date[64];
  fprintf(stderr, "Date:       %s", ctime_r(&now, date));  // ctime_r ends with '\n'
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, cpu_type, cache_size;
  int num_cpus = 0;
  while (std::getline(cpuinfo, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && isspace(static_cast<unsigned char>(key.back()))) key.pop_back();
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name") {
      num_cpus++;
      cpu_type = value;
    } else if (key == "cache size") {
      cache_size = value;
    }
  }
  fprintf(stderr, "CPU:        %d * %s\n", num_cpus, cpu_type.c_str());
  fprintf(stderr, "CPUCache:   %s\n", cache_size.c_str());
}

}  // namespace

Duration::Duration(uint64_t max_seconds, int64_t max_ops, int64_t ops_per_stage)
    : max_seconds_(max_seconds),
      max_ops_(max_ops),
      ops_per_stage_(ops_per_stage > 0 ? ops_per_stage : std::max<int64_t>(1, max_ops)),
      start_(NowMicros()) {}

bool Duration::Done(int64_t increment) {
  if (increment <= 0) increment = 1;
  ops_ += increment;
  if (max_seconds_ == 0) return ops_ > max_ops_;
  // Look at the clock about every ops_between_duration_checks operations.
  const int64_t every = std::max(1, FLAGS_ops_between_duration_checks);
  if (ops_ / every == (ops_ - increment) / every) return false;
  return (NowMicros() - start_) / 1000000 >= max_seconds_;
}

Benchmark::Benchmark() {
  if (FLAGS_seed == 0) {
    FLAGS_seed = static_cast<int64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
    fprintf(stdout, "Set seed to %" PRIu64 " because --seed was 0\n",
            static_cast<uint64_t>(FLAGS_seed));
  }
  seed_base_ = static_cast<uint64_t>(FLAGS_seed);
  if (FLAGS_db.empty()) FLAGS_db = DefaultDBPath();
}

Benchmark::~Benchmark() { CloseDB(); }

bool Benchmark::Resolve(const std::string& name, Spec* spec, std::string* why) {
  using B = Benchmark;
  static const struct {
    const char* name;
    Method method;
    bool fresh_db;
    bool needs_merge_operator = false;
  } kRunnable[] = {
      {"fillseq", &B::WriteSeq, true},
      {"fillbatch", &B::WriteSeq, true},
      {"fillrandom", &B::WriteRandom, true},
      {"filluniquerandom", &B::WriteUniqueRandom, true},
      {"fillsync", &B::WriteRandom, true},
      {"fill100K", &B::WriteRandom, true},
      {"overwrite", &B::WriteRandom, false},
      {"readseq", &B::ReadSequential, false},
      {"readreverse", &B::ReadReverse, false},
      {"readrandom", &B::ReadRandom, false},
      {"multireadrandom", &B::MultiReadRandom, false},
      {"readmissing", &B::ReadRandom, false},
      {"seekrandom", &B::SeekRandom, false},
      {"readwhilewriting", &B::ReadWhileWriting, false},
      {"readrandomwriterandom", &B::ReadRandomWriteRandom, false},
      {"updaterandom", &B::UpdateRandom, false},
      {"deleteseq", &B::DeleteSeq, false},
      {"deleterandom", &B::DeleteRandom, false},
      {"readrandomfast", &B::ReadRandomFast, false},
      {"crc32c", &B::Crc32cBench, false},
      {"compress", &B::CompressBench, false},
      {"uncompress", &B::UncompressBench, false},
      {"compact", &B::Compact, false},
      {"ingestexternalfile", &B::IngestExternalFiles, false},
      {"backup", &B::Backup, false},
      {"restore", &B::Restore, false},
      {"mergerandom", &B::MergeRandom, false, true},
      {"readrandommergerandom", &B::ReadRandomMergeRandom, false, true},
      {"readwhilemerging", &B::ReadWhileMerging, false, true},
      {"seekrandomwhilemerging", &B::SeekRandomWhileMerging, false, true},
      {"getmergeoperands", &B::GetMergeOperandLists, false, true},
      {"readrandomoperands", &B::ReadRandom, false},
      {"randomtransaction", &B::RandomTransaction, false},
  };
  static const struct {
    const char* name;
    MetaMethod meta;
  } kMeta[] = {
      {"flush", &B::FlushMemtable},
      {"compactall", &B::CompactAll},
      {"waitforcompaction", &B::WaitForCompaction},
      {"stats", &B::PrintDBStats},
      {"levelstats", &B::PrintLevelStats},
      {"sstables", &B::PrintSSTables},
      {"memstats", &B::PrintMemStats},
  };
  *spec = Spec();
  if (name.empty()) return true;  // ",," in the list: nothing to run, as in RocksDB
  for (const auto& m : kMeta) {
    if (name == m.name) {
      spec->meta = m.meta;
      return true;
    }
  }
  for (const auto& r : kRunnable) {
    if (name == r.name) {
      spec->method = r.method;
      spec->fresh_db = r.fresh_db;
      spec->needs_merge_operator = r.needs_merge_operator;
      if (r.method == &B::RandomTransaction) spec->post = &B::RandomTransactionVerify;
      return true;
    }
  }
  for (const Unsupported& u : kUnsupported) {
    if (name == u.name) {
      *why = "benchmark '" + name + "' is not supported by shale yet: it needs " + u.needs;
      return false;
    }
  }
  *why = "unknown benchmark '" + name + "'";
  return false;
}

void Benchmark::PrintHeader() {
  PrintEnvironment();
  fprintf(stdout, "Keys:       %d bytes each (+ 0 bytes user-defined timestamp)\n", FLAGS_key_size);
  fprintf(stdout, "Values:     %d bytes each (%d bytes after compression)\n", FLAGS_value_size,
          static_cast<int>(FLAGS_value_size * FLAGS_compression_ratio + 0.5));
  fprintf(stdout, "Entries:    %" PRIu64 "\n", static_cast<uint64_t>(FLAGS_num));
  fprintf(stdout, "Prefix:    0 bytes\n");
  fprintf(stdout, "Keys per prefix:    0\n");
  fprintf(stdout, "RawSize:    %.1f MB (estimated)\n",
          (static_cast<int64_t>(FLAGS_key_size + FLAGS_value_size) * FLAGS_num) / 1048576.0);
  fprintf(stdout, "FileSize:   %.1f MB (estimated)\n",
          ((FLAGS_key_size + FLAGS_value_size * FLAGS_compression_ratio) * FLAGS_num) / 1048576.0);
  fprintf(stdout, "Write rate: %" PRIu64 " bytes/second\n", static_cast<uint64_t>(0));
  fprintf(stdout, "Read rate: %" PRIu64 " ops/second\n", static_cast<uint64_t>(0));
  fprintf(stdout, "Compression: %s\n", CompressionTypeToString(options_.compression));
  fprintf(stdout, "Compression sampling rate: 0\n");
  fprintf(stdout, "Memtablerep: SkipListFactory\n");
  fprintf(stdout, "Perf Level: %d\n", FLAGS_perf_level);
#if defined(__GNUC__) && !defined(__OPTIMIZE__)
  fprintf(stdout, "WARNING: Optimization is disabled: benchmarks unnecessarily slow\n");
#endif
#ifndef NDEBUG
  fprintf(stdout, "WARNING: Assertions are enabled; benchmarks unnecessarily slow\n");
#endif
  fprintf(stdout, "------------------------------------------------\n");
  fflush(stdout);
}

void Benchmark::OpenDB() {
  Status s;
  // Several families: the DB opens with the first num_hot_ of them (created if missing, as
  // options_ says); the rest are created by the write benchmarks' stages.
  std::vector<ColumnFamilyDescriptor> families;
  cfh_.clear();
  num_created_.store(0);
  num_hot_ = 0;
  if (FLAGS_num_column_families > 1) {
    num_hot_ = static_cast<size_t>(FLAGS_num_column_families);
    if (FLAGS_num_hot_column_families > 0 &&
        FLAGS_num_hot_column_families < FLAGS_num_column_families) {
      num_hot_ = static_cast<size_t>(FLAGS_num_hot_column_families);
    } else {
      FLAGS_num_hot_column_families = FLAGS_num_column_families;  // as RocksDB's
    }
    for (size_t i = 0; i < num_hot_; i++) {
      families.emplace_back(ColumnFamilyName(i), ColumnFamilyOptions(options_));
    }
    if (!ParseFamilyDistribution(num_hot_, &cfh_idx_to_prob_)) exit(1);
  }
  if (FLAGS_optimistic_transaction_db) {
    OptimisticTransactionDB* otxn_db = nullptr;
    s = families.empty() ? OptimisticTransactionDB::Open(options_, FLAGS_db, &otxn_db)
                         : OptimisticTransactionDB::Open(DBOptions(options_), FLAGS_db, families,
                                                         &cfh_, &otxn_db);
    db_.reset(otxn_db);
    otxn_db_ = otxn_db;
  } else if (FLAGS_transaction_db) {
    // RocksDB's choices: the DB-wide lock defaults stay TransactionDBOptions' own
    // (--transaction_lock_timeout is for randomtransaction's transactions), and
    // --unordered_write asks for WritePrepared with two write queues and without
    // concurrency control.
    TransactionDBOptions txn_db_options;
    txn_db_options.write_policy = static_cast<TxnDBWritePolicy>(FLAGS_txn_write_policy);
    Options options = options_;
    if (options.unordered_write) {
      options.two_write_queues = true;
      txn_db_options.skip_concurrency_control = true;
      txn_db_options.write_policy = WRITE_PREPARED;
    }
    TransactionDB* txn_db = nullptr;
    s = families.empty() ? TransactionDB::Open(options, txn_db_options, FLAGS_db, &txn_db)
                         : TransactionDB::Open(DBOptions(options), txn_db_options, FLAGS_db,
                                               families, &cfh_, &txn_db);
    db_.reset(txn_db);
    txn_db_ = txn_db;
  } else if (families.empty()) {
    s = DB::Open(options_, FLAGS_db, &db_);
  } else {
    s = DB::Open(DBOptions(options_), FLAGS_db, families, &cfh_, &db_);
  }
  if (!s.ok()) {
    fprintf(stderr, "open error: %s\n", s.ToString().c_str());
    exit(1);
  }
  if (!families.empty()) {
    cfh_.resize(static_cast<size_t>(FLAGS_num_column_families), nullptr);
    num_created_.store(num_hot_, std::memory_order_release);
  }
}

void Benchmark::CloseDB() {
  if (db_ == nullptr) return;
  for (ColumnFamilyHandle*& h : cfh_) {
    if (h == nullptr) continue;
    Status s = db_->DestroyColumnFamilyHandle(h);
    if (!s.ok()) fprintf(stderr, "close error: %s\n", s.ToString().c_str());
    h = nullptr;
  }
  cfh_.clear();
  num_created_.store(0);
  Status s = db_->Close();
  if (!s.ok()) fprintf(stderr, "close error: %s\n", s.ToString().c_str());
  db_.reset();
  txn_db_ = nullptr;
  otxn_db_ = nullptr;
}

ColumnFamilyHandle* Benchmark::GetCfh(int64_t rand_num) const {
  // RocksDB's mapping: rand_num % num_hot_ among the hot families (or the first family
  // whose cumulative --column_family_distribution percentage reaches rand_num % 100).
  size_t offset = 0;
  if (!cfh_idx_to_prob_.empty()) {
    int sum = 0;
    while (offset + 1 < cfh_idx_to_prob_.size() &&
           sum + cfh_idx_to_prob_[offset] < rand_num % 100) {
      sum += cfh_idx_to_prob_[offset];
      ++offset;
    }
  } else {
    offset = static_cast<size_t>(rand_num) % num_hot_;
  }
  return cfh_[num_created_.load(std::memory_order_acquire) - num_hot_ + offset];
}

void Benchmark::CreateNewCf(int64_t stage) {
  MutexLock l(&create_cf_mu_);
  const size_t created = num_created_.load(std::memory_order_relaxed);
  if (static_cast<size_t>(stage + 1) * num_hot_ <= created) return;  // another thread did
  const size_t target = created + num_hot_;
  if (target > cfh_.size()) return;
  for (size_t i = created; i < target; i++) {
    Status s =
        db_->CreateColumnFamily(ColumnFamilyOptions(options_), ColumnFamilyName(i), &cfh_[i]);
    if (!s.ok()) {
      fprintf(stderr, "create column family error: %s\n", s.ToString().c_str());
      abort();
    }
  }
  num_created_.store(target, std::memory_order_release);
}

std::vector<ColumnFamilyHandle*> Benchmark::CreatedFamilies() const {
  const size_t n = num_created_.load(std::memory_order_acquire);
  return std::vector<ColumnFamilyHandle*>(cfh_.begin(), cfh_.begin() + static_cast<long>(n));
}

void Benchmark::DestroyAndOpen() {
  CloseDB();
  Status s = DestroyDB(FLAGS_db, options_);
  if (!s.ok()) {
    fprintf(stderr, "destroy error: %s\n", s.ToString().c_str());
    exit(1);
  }
  OpenDB();
}

void Benchmark::ResetPerBenchmarkState() {
  num_ = FLAGS_num;
  reads_ = FLAGS_reads < 0 ? FLAGS_num : FLAGS_reads;
  writes_ = FLAGS_writes < 0 ? FLAGS_num : FLAGS_writes;
  deletes_ = FLAGS_deletes < 0 ? FLAGS_num : FLAGS_deletes;
  readwrites_ =
      (FLAGS_writes < 0 && FLAGS_reads < 0) ? FLAGS_num : std::max(FLAGS_writes, FLAGS_reads);
  entries_per_batch_ = std::max<int64_t>(1, FLAGS_batch_size);
  merge_keys_ = FLAGS_merge_keys < 0 ? FLAGS_num : FLAGS_merge_keys;
  read_operands_ = false;
  key_size_ = FLAGS_key_size;
  value_size_ = FLAGS_value_size;
  write_options_ = WriteOptions();
  write_options_.sync = FLAGS_sync;
  write_options_.disableWAL = FLAGS_disable_wal;
  read_options_ = ReadOptions(FLAGS_verify_checksum, true);
}

void Benchmark::MakeKey(uint64_t v, std::string* key) const {
  key->resize(static_cast<size_t>(key_size_));
  GenerateKeyFromInt(v, key_size_, key->data());
}

Stats Benchmark::RunBenchmark(int n, const std::string& name, Method method) {
  SharedState shared;
  shared.total = n;
  std::unique_ptr<ReporterAgent> reporter;
  if (FLAGS_report_interval_seconds > 0) {
    reporter = std::make_unique<ReporterAgent>(
        FLAGS_report_file, static_cast<uint64_t>(FLAGS_report_interval_seconds));
  }
  std::vector<std::unique_ptr<ThreadState>> states;
  std::vector<std::thread> threads;
  for (int i = 0; i < n; i++) {
    total_thread_count_++;
    states.push_back(std::make_unique<ThreadState>(i, seed_base_ + total_thread_count_));
    states.back()->shared = &shared;
    states.back()->stats.SetReporterAgent(reporter.get());
    states.back()->stats.SetDB(db_.get());
  }
  for (int i = 0; i < n; i++) {
    ThreadState* thread = states[i].get();
    threads.emplace_back([this, thread, method] {
      SharedState* sh = thread->shared;
      {
        MutexLock l(&sh->mu);
        sh->num_initialized++;
        sh->cv.SignalAll();
        while (!sh->start) sh->cv.Wait(&sh->mu);
      }
      thread->stats.Start(thread->tid);
      (this->*method)(thread);
      thread->stats.Stop();
      sh->num_done.fetch_add(1);
    });
  }
  {
    MutexLock l(&shared.mu);
    while (shared.num_initialized < n) shared.cv.Wait(&shared.mu);
    shared.start = true;
    shared.cv.SignalAll();
  }
  for (std::thread& t : threads) t.join();

  Stats merged;
  for (const auto& s : states) merged.Merge(s->stats);
  merged.Report(name);
  return merged;
}

int Benchmark::Run() {
  std::string error;
  if (!BuildOptions(&error)) {
    fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  // Refuse the whole run before measuring anything if one benchmark cannot run.
  const std::vector<std::string> names = SplitList(FLAGS_benchmarks);
  for (std::string name : names) {
    int repeat, warmup;
    Spec spec;
    std::string why;
    if (!SplitBenchmarkArgs(&name, &repeat, &warmup)) {
      fprintf(stderr, "unknown benchmark arguments '%s'\n", name.c_str());
      return 1;
    }
    if (!Resolve(name, &spec, &why)) {
      fprintf(stderr, "%s\n", why.c_str());
      return 1;
    }
    if (spec.needs_merge_operator && options_.merge_operator == nullptr) {
      // RocksDB's words; it stops there too.
      fprintf(stdout, "%-12s : skipped (--merge_operator is unknown)\n", name.c_str());
      return 1;
    }
    if (name == "randomtransaction" && !TransactionSetsValid()) {
      fprintf(stderr, "invalid value for transaction_sets\n");  // RocksDB's words
      return 1;
    }
    if (name == "filluniquerandom" && FLAGS_threads > 1) {
      fprintf(stderr, "filluniquerandom multithreaded not supported, use 1 thread\n");
      return 1;
    }
  }
  if (FLAGS_writes_per_range_tombstone > 0 &&
      (FLAGS_range_tombstone_width < 0 || FLAGS_max_num_range_tombstones < 0)) {
    fprintf(stderr, "--range_tombstone_width and --max_num_range_tombstones must be >= 0\n");
    return 1;
  }

  PrintHeader();
  if (!FLAGS_use_existing_db) {
    Status s = DestroyDB(FLAGS_db, options_);
    if (!s.ok()) {
      fprintf(stderr, "destroy error: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  OpenDB();

  for (std::string name : names) {
    int repeat, warmup;
    SplitBenchmarkArgs(&name, &repeat, &warmup);
    Spec spec;
    std::string why;
    Resolve(name, &spec, &why);
    ResetPerBenchmarkState();
    int threads = FLAGS_threads;
    if (name == "fillbatch") {
      entries_per_batch_ = 1000;
    } else if (name == "fillsync") {
      num_ /= 1000;
      write_options_.sync = true;
    } else if (name == "fill100K") {
      num_ /= 1000;
      value_size_ = 100 * 1000;
    } else if (name == "readmissing") {
      ++key_size_;
    } else if (name == "readwhilewriting" || name == "readwhilemerging" ||
               name == "seekrandomwhilemerging") {
      ++threads;  // one more: the writer
    } else if (name == "readrandomoperands") {
      read_operands_ = true;
    } else if (name == "multireadrandom") {
      fprintf(stderr, "entries_per_batch = %" PRIi64 "\n", entries_per_batch_);
    } else if (spec.meta != nullptr) {
      (this->*spec.meta)();
      continue;
    }
    if (spec.method == nullptr) continue;
    if (spec.fresh_db) {
      if (FLAGS_use_existing_db) {
        fprintf(stdout, "%-12s : skipped (--use_existing_db is true)\n", name.c_str());
        continue;
      }
      DestroyAndOpen();
    }
    fprintf(stdout, "DB path: [%s]\n", FLAGS_db.c_str());
    if (warmup > 0) printf("Warming up benchmark by running %d times\n", warmup);
    for (int i = 0; i < warmup; i++) RunBenchmark(threads, name, spec.method);
    if (repeat > 1) printf("Running benchmark for %d times\n", repeat);
    CombinedStats combined;
    for (int i = 0; i < repeat; i++) {
      combined.AddStats(RunBenchmark(threads, name, spec.method));
      combined.Report(name);
    }
    if (repeat > 1) combined.ReportFinal(name);
    if (spec.post != nullptr) (this->*spec.post)();
  }
  // The state the last interval report would have shown.
  if (FLAGS_stats_per_interval > 0) {
    std::string stats;
    if (db_->GetProperty("rocksdb.stats", &stats)) fprintf(stderr, "%s\n", stats.c_str());
  }
  if (dbstats_ != nullptr) {
    fprintf(stdout, "STATISTICS:\n%s\n", dbstats_->ToString().c_str());
  }
  return verify_failed_ ? 1 : 0;
}

}  // namespace shale::tools

int main(int argc, char** argv) {
  GFLAGS_NAMESPACE::SetUsageMessage(std::string("\nUSAGE:\n") + argv[0] + " [OPTIONS]...");
  GFLAGS_NAMESPACE::SetVersionString(SHALE_VERSION_STRING);
  GFLAGS_NAMESPACE::ParseCommandLineFlags(&argc, &argv, true);
  // With both, stats_interval is how often (in operations) the clock is looked at.
  if (FLAGS_stats_interval_seconds > 0) FLAGS_stats_interval = 1000;
  if (!shale::tools::CheckFlagsShaleCannotHonor()) return 1;
  int rc;
  {
    shale::tools::Benchmark benchmark;
    rc = benchmark.Run();
  }
  return rc;
}
