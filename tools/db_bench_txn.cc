// randomtransaction and its verification, as RocksDB's db_bench runs them (RocksDB keeps
// the per-transaction work in RandomTransactionInserter, test_util/transaction_test_util).
//
// The invariant the workload keeps and the verification checks: the keys fall into
// --transaction_sets sets (key = 4-digit set number from 0001, then a decimal number below
// --num); every transaction adds the same random increment (1..100) to one random key of
// each set, so as long as transactions are atomic and isolated the sums of the sets stay
// equal. A lost update (two transactions reading the same old value) or a half-applied
// transaction makes them differ. Values are decimal strings; a key never written counts 0.
//
// Each transaction, as RocksDB's: reads every set's key under a fresh snapshot (always
// without --transaction_set_snapshot, half the time with it), half of the reads with
// GetForUpdate; writes the sums; prepares 9 times in 10 (pessimistic only; one prepare in
// 20 also puts a key in the commit-time batch); then commits, or rolls back 1 time in 20.
// A transaction that meets Busy, TimedOut or TryAgain (a conflict, a lock wait that
// expired, too little memtable history) is rolled back and counted as an abort; any other
// error ends the run. With --optimistic_transaction_db: a snapshot at Begin (see
// OptimisticTransactionDBInsert), no prepare, and the conflicts come from Commit. Without
// --transaction_db the same increments go in one WriteBatch per "transaction", with no isolation,
// and nothing is verified.
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "shale/iterator.h"
#include "shale/utilities/optimistic_transaction_db.h"
#include "shale/utilities/transaction.h"
#include "shale/utilities/transaction_db.h"
#include "shale/write_batch.h"
#include "tools/db_bench.h"
#include "tools/db_bench_flags.h"

namespace shale::tools {
namespace {

// RocksDB's key: the set's number (from 1) in 4 digits, then the decimal key number.
std::string SetKey(uint16_t set, uint64_t n) {
  char prefix[8];
  snprintf(prefix, sizeof(prefix), "%.4u", static_cast<unsigned>(set) + 1);
  return prefix + std::to_string(n);
}

// A counter's value. Zero and the all-ones value are never written (increments are 1 to
// 100), so they mean damage, as does anything but digits.
bool ParseCounter(const Slice& value, uint64_t* out) {
  const std::string text = value.ToString();
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v == 0 || v == ~0ull) return false;
  *out = v;
  return true;
}

// The statuses a transaction may meet because of another one; it then rolls back and
// counts as an abort.
bool IsConflict(const Status& s) { return s.IsBusy() || s.IsTimedOut() || s.IsTryAgain(); }

// One thread's transactions: the Transaction object it reuses, and its counts.
class Inserter {
 public:
  Inserter(ThreadState* thread, const WriteOptions& write_options, uint64_t num_keys,
           uint16_t num_sets)
      : thread_(thread), write_options_(write_options), num_keys_(num_keys), sets_(num_sets) {
    std::iota(sets_.begin(), sets_.end(), uint16_t{0});
  }
  ~Inserter() { delete txn_; }
  Inserter(const Inserter&) = delete;
  Inserter& operator=(const Inserter&) = delete;

  // One pessimistic transaction. False on an unexpected error (last_status() says which).
  bool TransactionDBInsert(TransactionDB* db, const TransactionOptions& options) {
    txn_ = db->BeginTransaction(write_options_, options, txn_);
    // Prepare needs a name unique among the live transactions of the DB.
    Status s =
        txn_->SetName("txn" + std::to_string(thread_->tid) + "-" + std::to_string(next_name_++));
    if (!s.ok()) return Unexpected("SetName", s);
    // As RocksDB's: without --transaction_set_snapshot every transaction takes a snapshot
    // now and reads at it. With it, half of them do the same; the other half read the
    // latest data while their writes are still checked against the snapshot of Begin.
    ReadOptions read_options;
    if (txn_->GetSnapshot() == nullptr || OneIn(2)) {
      txn_->SetSnapshot();
      read_options.snapshot = txn_->GetSnapshot();
    }
    return DoInsert(txn_, read_options, /*optimistic=*/false);
  }

  // One optimistic transaction: no name, no prepare. Unlike RocksDB's db_bench (default
  // options) it reads at a snapshot taken at Begin. Without one, a key read by Get is
  // tracked only from its Put, so a commit landing between the two is a lost update
  // that Commit cannot see, and the verification failed in about 1 run in 20 of
  // db_bench_test's (3 of 60; 0 of 60 with the snapshot).
  bool OptimisticTransactionDBInsert(OptimisticTransactionDB* db) {
    OptimisticTransactionOptions options;
    options.set_snapshot = true;
    txn_ = db->BeginTransaction(write_options_, options, txn_);
    ReadOptions read_options;
    read_options.snapshot = txn_->GetSnapshot();
    return DoInsert(txn_, read_options, /*optimistic=*/true);
  }

  // The same increments in one WriteBatch, without a transaction.
  bool DBInsert(DB* db) {
    WriteBatch batch;
    const uint64_t incr = thread_->rand() % 100 + 1;
    Shuffle();
    for (uint16_t set : sets_) {
      const std::string key = SetKey(set, thread_->rand() % num_keys_);
      std::string value;
      uint64_t current = 0;
      Status s = db->Get(ReadOptions(), key, &value);
      if (s.ok() && !ParseCounter(value, &current)) {
        return Unexpected("Get", Status::Corruption("not a counter: " + value));
      }
      if (!s.ok() && !s.IsNotFound()) return Unexpected("Get", s);
      const std::string sum = std::to_string(current + incr);
      s = batch.Put(key, sum);
      if (!s.ok()) return Unexpected("Put", s);
      bytes_ += static_cast<int64_t>(key.size() + sum.size());
    }
    Status s = db->Write(write_options_, &batch);
    if (!s.ok()) return Unexpected("Write", s);
    successes_++;
    return true;
  }

  uint64_t failures() const { return failures_; }
  int64_t bytes() const { return bytes_; }
  const Status& last_status() const { return last_status_; }

 private:
  bool OneIn(uint64_t n) { return thread_->rand() % n == 0; }
  void Shuffle() { std::shuffle(sets_.begin(), sets_.end(), thread_->rand); }

  bool Unexpected(const char* what, const Status& s) {
    fprintf(stderr, "%s returned an unexpected error: %s\n", what, s.ToString().c_str());
    last_status_ = s;
    return false;
  }

  bool DoInsert(Transaction* txn, const ReadOptions& read_options, bool optimistic) {
    const uint64_t incr = thread_->rand() % 100 + 1;
    Status s;
    Shuffle();
    for (uint16_t set : sets_) {
      const std::string key = SetKey(set, thread_->rand() % num_keys_);
      const bool for_update = OneIn(2);
      std::string value;
      uint64_t current = 0;
      s = for_update ? txn->GetForUpdate(read_options, key, &value)
                     : txn->Get(read_options, key, &value);
      if (s.ok() && !ParseCounter(value, &current)) {
        return Unexpected("Get", Status::Corruption("not a counter: " + value));
      }
      if (s.IsNotFound()) s = Status::OK();
      // An optimistic transaction takes no locks and checks nothing before Commit.
      if (!s.ok() && (optimistic || !IsConflict(s))) return Unexpected("Get", s);
      if (!s.ok()) break;
      const std::string sum = std::to_string(current + incr);
      s = txn->Put(key, sum);
      // A key read without GetForUpdate is locked only now, and may have changed since
      // the snapshot; after GetForUpdate the Put cannot conflict.
      if (!s.ok() && (for_update || !IsConflict(s))) return Unexpected("Put", s);
      if (!s.ok()) break;
      bytes_ += static_cast<int64_t>(key.size() + sum.size());
    }
    if (s.ok()) {
      s = Finish(txn, optimistic);
      if (!s.ok() && !(optimistic ? IsConflict(s) : s.IsExpired())) {
        return Unexpected("Commit", s);
      }
    } else {
      Status r = txn->Rollback();
      if (!r.ok()) return Unexpected("Rollback", r);
    }
    if (s.ok()) {
      successes_++;
    } else {
      failures_++;
    }
    last_status_ = s;
    return true;
  }

  // Prepare (usually), then Commit, or a deliberate Rollback (which counts as a success).
  Status Finish(Transaction* txn, bool optimistic) {
    if (!optimistic && !OneIn(10)) {
      Status s = txn->Prepare();
      if (!s.ok()) return s;
      // Exercises the commit-time batch; "cat" is outside every set, so it does not
      // count in any sum.
      if (OneIn(20)) {
        s = txn->GetCommitTimeWriteBatch()->Put("cat", "dog");
        if (!s.ok()) return s;
      }
    }
    return OneIn(20) ? txn->Rollback() : txn->Commit();
  }

  ThreadState* thread_;
  WriteOptions write_options_;
  uint64_t num_keys_;
  std::vector<uint16_t> sets_;  // shuffled before each transaction
  Transaction* txn_ = nullptr;  // reused by BeginTransaction
  uint64_t next_name_ = 0;
  uint64_t successes_ = 0;
  uint64_t failures_ = 0;
  int64_t bytes_ = 0;
  Status last_status_;
};

}  // namespace

bool Benchmark::TransactionSetsValid() {
  return FLAGS_transaction_sets > 0 && FLAGS_transaction_sets <= 9999;
}

void Benchmark::RandomTransaction(ThreadState* thread) {
  Duration duration(FLAGS_duration, readwrites_);
  TransactionOptions txn_options;
  // RocksDB applies --transaction_lock_timeout to each transaction, not to the DB's
  // defaults (so plain writes on the TransactionDB keep default_lock_timeout).
  txn_options.lock_timeout = static_cast<int64_t>(FLAGS_transaction_lock_timeout);
  txn_options.set_snapshot = FLAGS_transaction_set_snapshot;
  Inserter inserter(thread, write_options_, static_cast<uint64_t>(FLAGS_num),
                    static_cast<uint16_t>(FLAGS_transaction_sets));
  uint64_t done = 0;
  while (!duration.Done(1)) {
    bool ok;
    if (otxn_db_ != nullptr) {
      ok = inserter.OptimisticTransactionDBInsert(otxn_db_);
    } else if (txn_db_ != nullptr) {
      ok = inserter.TransactionDBInsert(txn_db_, txn_options);
    } else {
      ok = inserter.DBInsert(db_.get());
    }
    if (!ok) Fail("randomtransaction", inserter.last_status());
    thread->stats.FinishedOps(1, OpType::kOthers);
    done++;
  }
  char msg[100];
  if (txn_db_ != nullptr || otxn_db_ != nullptr) {
    snprintf(msg, sizeof(msg), "( transactions:%" PRIu64 " aborts:%" PRIu64 ")", done,
             inserter.failures());
  } else {
    snprintf(msg, sizeof(msg), "( batches:%" PRIu64 " )", done);
  }
  thread->stats.AddMessage(msg);
  thread->stats.AddBytes(inserter.bytes());
}

void Benchmark::RandomTransactionVerify() {
  // Plain batches promise no isolation between threads: nothing to hold them to.
  if (txn_db_ == nullptr && otxn_db_ == nullptr) return;
  Status s = VerifyTransactionSets();
  if (s.ok()) {
    fprintf(stdout, "RandomTransactionVerify Success.\n");
  } else {
    fprintf(stdout, "RandomTransactionVerify FAILED!!\n");
    fprintf(stderr, "RandomTransactionVerify: %s\n", s.ToString().c_str());
    verify_failed_ = true;
  }
  fflush(stdout);
}

Status Benchmark::VerifyTransactionSets() {
  const uint16_t num_sets = static_cast<uint16_t>(FLAGS_transaction_sets);
  std::vector<uint16_t> order(num_sets);
  std::iota(order.begin(), order.end(), uint16_t{0});
  std::mt19937_64 rand(seed_base_);
  std::shuffle(order.begin(), order.end(), rand);
  bool have_first = false;
  uint16_t first_set = 0;
  uint64_t first_total = 0;
  for (uint16_t set : order) {
    // The set's keys are those that begin with its 4-digit number.
    const std::string prefix = SetKey(set, 0).substr(0, 4);
    uint64_t total = 0;
    std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      uint64_t v = 0;
      if (!ParseCounter(it->value(), &v)) {
        return Status::Corruption("key " + it->key().ToString() + " holds " +
                                  it->value().ToString() + ", not a counter");
      }
      total += v;
    }
    if (!it->status().ok()) return it->status();
    if (have_first && total != first_total) {
      char msg[160];
      snprintf(msg, sizeof(msg), "set %u sums to %" PRIu64 ", set %u to %" PRIu64,
               static_cast<unsigned>(first_set) + 1, first_total, static_cast<unsigned>(set) + 1,
               total);
      return Status::Corruption(msg);
    }
    if (!have_first) {
      have_first = true;
      first_set = set;
      first_total = total;
    }
  }
  return Status::OK();
}

}  // namespace shale::tools
