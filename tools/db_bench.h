// The db_bench driver: runs the benchmarks named by --benchmarks against one shale DB and
// prints RocksDB db_bench's header and result lines.
//
// Benchmark resolves a name to a method (db_bench_workloads.cc holds the methods, and
// db_bench_merge.cc those that write or read merge operands, db_bench_txn.cc the
// transaction workload) or to a
// meta operation without a result line (flush, waitforcompaction, stats, ...;
// db_bench_meta.cc); Run() checks the whole list first, so a benchmark shale cannot run
// yet fails the run before anything is measured. Each method runs on every one of
// --threads threads, each with its own ThreadState; the threads' Stats are merged into one
// result line. BuildOptions (db_bench_options.cc) turns the flags into the DB's Options.
// With --transaction_db the DB is a TransactionDB, as in RocksDB's db_bench: every
// benchmark's plain writes then run as internal transactions that lock their keys. With
// --optimistic_transaction_db (which wins over --transaction_db, as in RocksDB) it is an
// OptimisticTransactionDB, whose plain writes go straight to the DB.
//
// Thread safety: Run() is called once from main; methods run concurrently on the
// benchmark threads and share only db_ (thread-safe) and SharedState.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "shale/db.h"
#include "shale/options.h"
#include "shale/statistics.h"
#include "shale/utilities/optimistic_transaction_db.h"
#include "shale/utilities/transaction_db.h"
#include "tools/db_bench_keys.h"
#include "tools/db_bench_stats.h"
#include "util/mutexlock.h"

namespace shale::tools {

// Prints "<what> error: <status>" on stderr and ends the process, as RocksDB's db_bench
// does when an operation of a benchmark fails.
[[noreturn]] void Fail(const char* what, const Status& s);

// What the threads of one benchmark run share.
struct SharedState {
  Mutex mu;
  CondVar cv{&mu};
  int total = 0;
  int num_initialized GUARDED_BY(mu) = 0;
  bool start GUARDED_BY(mu) = false;
  std::atomic<int> num_done{0};
};

struct ThreadState {
  ThreadState(int index, uint64_t seed) : tid(index), rand(seed) {}
  int tid;
  std::mt19937_64 rand;  // differently seeded in each thread
  Stats stats;
  SharedState* shared = nullptr;
};

// Stops a loop after max_ops operations, or after max_seconds when that is non-zero. The
// operations fall into stages of ops_per_stage (0: one stage), as RocksDB's Duration: a
// write benchmark with --num_hot_column_families moves to the next hot families at each.
class Duration {
 public:
  Duration(uint64_t max_seconds, int64_t max_ops, int64_t ops_per_stage = 0);
  // Counts `increment` more operations; true once the loop should stop.
  bool Done(int64_t increment);
  // The stage of the operations counted so far: 0, 1, ...; the last operation is in the
  // last stage however far a timed loop runs past max_ops.
  int64_t GetStage() const {
    return std::max<int64_t>(0, std::min(ops_, max_ops_ - 1)) / ops_per_stage_;
  }

 private:
  uint64_t max_seconds_;
  int64_t max_ops_;
  int64_t ops_per_stage_;
  int64_t ops_ = 0;
  uint64_t start_;
};

class Benchmark {
 public:
  using Method = void (Benchmark::*)(ThreadState*);
  using MetaMethod = void (Benchmark::*)();

  Benchmark();
  ~Benchmark();
  // Returns the process exit code.
  int Run();

 private:
  struct Spec {
    Method method = nullptr;
    bool fresh_db = false;
    bool needs_merge_operator = false;  // refused without --merge_operator
    MetaMethod meta = nullptr;          // runs once, prints no result line
    MetaMethod post = nullptr;          // runs after the benchmark (its verification)
  };
  // Resolves a benchmark name (without [..] arguments). On false, *why says what shale
  // lacks.
  static bool Resolve(const std::string& name, Spec* spec, std::string* why);
  bool BuildOptions(std::string* error);
  void PrintHeader();
  void OpenDB();
  // Destroys the family handles, then closes and releases the DB (a no-op without one).
  void CloseDB();
  void DestroyAndOpen();

  // ---- Column families (--num_column_families > 1), as RocksDB's db_bench keeps them.
  // cfh_[i] is the family named ColumnFamilyName(i) ("default" for 0), null until it
  // exists. The DB opens with the first num_hot_ of them (all, without
  // --num_hot_column_families); a write benchmark creates the next num_hot_ at each stage
  // of its Duration (CreateNewCf), and operations go to the num_hot_ created last.
  // The family of key number n: GetCfh(n), so a reader finds the family a writer chose.
  // With one family every operation uses the default family and none of this is set.
  ColumnFamilyHandle* GetCfh(int64_t rand_num) const;
  // The family of key number n for this run: GetCfh(n), or the default family.
  ColumnFamilyHandle* FamilyOf(int64_t n) const {
    return cfh_.size() > 1 ? GetCfh(n) : db_->DefaultColumnFamily();
  }
  // Creates the families of stage `stage` unless some thread already did.
  void CreateNewCf(int64_t stage);
  // The families that exist (cfh_[0, num_created_)).
  std::vector<ColumnFamilyHandle*> CreatedFamilies() const;
  Stats RunBenchmark(int n, const std::string& name, Method method);
  void ResetPerBenchmarkState();
  // key_size_ bytes for number v, in *key (resized).
  void MakeKey(uint64_t v, std::string* key) const;

  // Workloads (db_bench_workloads.cc).
  void DoWrite(ThreadState* thread, KeyGenerator::Order order);
  void WriteSeq(ThreadState* thread) { DoWrite(thread, KeyGenerator::Order::kSequential); }
  void WriteRandom(ThreadState* thread) { DoWrite(thread, KeyGenerator::Order::kRandom); }
  void WriteUniqueRandom(ThreadState* thread) {
    DoWrite(thread, KeyGenerator::Order::kUniqueRandom);
  }
  void ReadSequential(ThreadState* thread);
  void ReadReverse(ThreadState* thread);
  void ReadRandom(ThreadState* thread);
  void MultiReadRandom(ThreadState* thread);
  void SeekRandom(ThreadState* thread);
  void ReadWhileWriting(ThreadState* thread);
  // Puts (or Merges) random keys until every other thread of the benchmark is done.
  void BGWriter(ThreadState* thread, bool merge);
  void ReadRandomWriteRandom(ThreadState* thread);
  void UpdateRandom(ThreadState* thread);
  void DoDelete(ThreadState* thread, bool seq);
  void DeleteSeq(ThreadState* thread) { DoDelete(thread, true); }
  void DeleteRandom(ThreadState* thread) { DoDelete(thread, false); }
  void Crc32cBench(ThreadState* thread);
  void CompressBench(ThreadState* thread);
  void UncompressBench(ThreadState* thread);
  void ReadRandomFast(ThreadState* thread);
  // ingestexternalfile (db_bench_ingest.cc).
  void IngestExternalFiles(ThreadState* thread);
  // backup and restore (db_bench_backup.cc).
  void Backup(ThreadState* thread);
  void Restore(ThreadState* thread);

  // The transaction workload (db_bench_txn.cc).
  static bool TransactionSetsValid();
  void RandomTransaction(ThreadState* thread);
  // Prints RocksDB's "RandomTransactionVerify Success." or "... FAILED!!" (then the run
  // exits 1); does nothing without a transaction DB of either kind, as RocksDB's.
  void RandomTransactionVerify();
  // OK when every --transaction_sets set sums to the same total.
  Status VerifyTransactionSets();

  // Merge workloads (db_bench_merge.cc).
  void MergeRandom(ThreadState* thread);
  void ReadRandomMergeRandom(ThreadState* thread);
  void ReadWhileMerging(ThreadState* thread);
  void SeekRandomWhileMerging(ThreadState* thread);
  void GetMergeOperandLists(ThreadState* thread);
  // GetMergeOperands of key into *slots, which grows (and the read is retried) when the
  // key has more operands than slots; *count is the number of operands.
  Status GetAllOperands(ColumnFamilyHandle* cf, const Slice& key, std::vector<PinnableSlice>* slots,
                        int* count);
  // readrandomoperands' read of one key: GetAllOperands, their sizes added to *bytes, the
  // slots Reset() on return.
  Status ReadOperands(ColumnFamilyHandle* cf, const Slice& key, std::vector<PinnableSlice>* slots,
                      int64_t* bytes);

  // Operations on the DB as a whole (db_bench_meta.cc). Compact is a benchmark with a
  // result line, as in RocksDB; the others print only what they are about.
  void Compact(ThreadState* thread);
  void CompactAll();
  void FlushMemtable();
  void WaitForCompaction();
  void PrintStats(const char* property);
  void PrintDBStats() { PrintStats("rocksdb.stats"); }
  void PrintLevelStats() { PrintStats("rocksdb.levelstats"); }
  void PrintSSTables() { PrintStats("rocksdb.sstables"); }
  void PrintMemStats();

  Options options_;
  std::shared_ptr<Statistics> dbstats_;  // with --statistics
  // Column families (see GetCfh). cfh_ and cfh_idx_to_prob_ are set before any benchmark
  // thread starts; cfh_[i] for i >= num_created_ is written only by CreateNewCf under
  // create_cf_mu_, before num_created_ is raised past it (release), and read only below
  // num_created_ (acquire).
  std::vector<ColumnFamilyHandle*> cfh_;
  std::atomic<size_t> num_created_{0};
  size_t num_hot_ = 0;
  std::vector<int> cfh_idx_to_prob_;  // --column_family_distribution, one per hot family
  Mutex create_cf_mu_;
  std::unique_ptr<DB> db_;
  TransactionDB* txn_db_ = nullptr;             // db_ itself when it is a TransactionDB, else null
  OptimisticTransactionDB* otxn_db_ = nullptr;  // db_ when it is one, else null
  bool verify_failed_ = false;                  // a verification failed: the run exits 1
  uint64_t seed_base_ = 0;
  int total_thread_count_ = 0;

  // Reset from the flags before each benchmark; some benchmarks adjust them.
  int64_t num_ = 0;
  int64_t reads_ = 0;
  int64_t writes_ = 0;
  int64_t deletes_ = 0;
  int64_t readwrites_ = 0;
  int64_t entries_per_batch_ = 1;
  int64_t merge_keys_ = 0;      // key space of mergerandom and readrandommergerandom
  bool read_operands_ = false;  // readrandom reads through GetMergeOperands
  int key_size_ = 16;
  int value_size_ = 100;
  WriteOptions write_options_;
  ReadOptions read_options_;
};

}  // namespace shale::tools
