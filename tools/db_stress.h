// db_stress: many threads run a random mix of operations against one DB and check every
// answer against the expected-state oracle (db_stress_state.h). The pieces shared between
// the driver (db_stress.cc) and the operations (db_stress_ops.cc).
//
// The operation table: each kind is one entry (a name, its weight flag, a function).
// Adding a kind means writing its function and adding the entry; the driver draws kinds
// by weight and counts them.
//
// Thread safety: Context is shared by the workers; its DB pointer changes only while no
// worker runs (reopen). ThreadState belongs to one worker.
#pragma once

#include <gflags/gflags.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "shale/db.h"
#include "tools/db_stress_state.h"
#include "util/mutexlock.h"
#include "util/random.h"

namespace shale {
class OptimisticTransactionDB;
class TransactionDB;
}  // namespace shale

namespace shale::stress {

class StressFilterFactory;

struct Context {
  DB* db = nullptr;
  ExpectedState* state = nullptr;
  KeyLocks* locks = nullptr;
  // Oracle keys 0 .. max_key-1 over every column family: oracle key k is the DB key
  // KeyString(k % keys_per_family) of family cfs[k / keys_per_family] (DbKey, FamilyHandle),
  // so max_key = --column_families * --max_key, and a batch of scattered keys spans
  // families. cfs[0] is the default family; with one family it is all there is and
  // keys_per_family == max_key.
  uint64_t max_key = 0;
  uint64_t keys_per_family = 0;
  std::vector<ColumnFamilyHandle*> cfs;
  // --clear_column_family_one_in: one lock per family, held shared by every operation that
  // uses the family (its handle, its keys' oracle words) and exclusively while the family
  // is dropped and re-created; taken before the key locks, in ascending family order
  // (FamilyLocks). generation[f] counts family f's re-creations, so a snapshot read taken
  // before one is not checked after it. Unused with one family.
  std::unique_ptr<SharedMutex[]> cf_mu;
  std::unique_ptr<std::atomic<uint64_t>[]> cf_generation;
  ColumnFamilyOptions cf_options;  // for re-created families
  std::atomic<uint64_t> cf_clears{0};
  uint32_t max_value_size = 0;
  WriteOptions write_options;
  // disable_wal runs log every acknowledged write and its sequence in the expected state
  // (see db_stress_state.h). Writes and Flushes hold log_mu shared; emptying a full log
  // holds it exclusively.
  bool log_writes = false;
  uint32_t log_limit = 0;             // entries after which the log is emptied
  bool strict_recovered_seq = false;  // the prefix rule's strict form (db_stress_prefix.h)
  // Logged writes, those whose sequence had to be searched for (other writes interleaved),
  // and the reads the searches made: printed at the end, so a run shows the search ran.
  std::atomic<uint64_t> seq_writes{0}, seq_searches{0}, seq_reads{0};
  SharedMutex log_mu;
  // --use_txn / --use_optimistic_txn: the DB beneath `db` is this one, and every write goes
  // through a transaction (db_stress_txn.h). At most one is set.
  TransactionDB* txn_db = nullptr;
  OptimisticTransactionDB* occ_db = nullptr;
  // Transaction outcomes, printed at the end: commits (of them two-phase), rollbacks, and
  // the expected refusals (Busy, TimedOut, TryAgain), after which the write is skipped.
  std::atomic<uint64_t> txn_commits{0}, txn_two_phase{0}, txn_rollbacks{0};
  std::atomic<uint64_t> txn_busy{0}, txn_timed_out{0}, txn_try_again{0};
  // Prepared transactions a restart got back from the DB, committed or rolled back as the
  // dead run meant to; resolved[slot] says which, for the check that follows (1 committed,
  // 2 rolled back).
  uint64_t recovered_commits = 0, recovered_rollbacks = 0;
  std::vector<int> resolved;
  // --enable_compaction_filter: the families' filter factory (db_stress_filter.h), told
  // each family's id after an open or a re-creation.
  StressFilterFactory* filter_factory = nullptr;
  std::atomic<bool> failed{false};
  std::atomic<bool> stop{false};
};

// A snapshot taken earlier by a worker and what one key must read as in it.
struct HeldSnapshot {
  const Snapshot* snapshot = nullptr;
  uint64_t key = 0;
  uint32_t word = 0;
  uint64_t generation = 0;  // of the key's family when the snapshot was taken
  uint64_t release_after_op = 0;
};

struct ThreadState {
  int id = 0;
  Random rnd{1};
  uint64_t ops_done = 0;
  std::deque<HeldSnapshot> snapshots;
  uint32_t txn_serial = 0;  // names this worker's next two-phase transaction
};

// ---- Shared by the operations (db_stress_ops.cc, db_stress_txn.cc). ----

inline size_t FamilyIndex(const Context* ctx, uint64_t key) {
  return static_cast<size_t>(key / ctx->keys_per_family);
}
// The family an oracle key lives in (REQUIRES: its family lock held, or no worker running).
inline ColumnFamilyHandle* FamilyHandle(const Context* ctx, uint64_t key) {
  return ctx->cfs[FamilyIndex(ctx, key)];
}
// Flushes every family in one call (with atomic_flush, recorded together). Runs that log
// their writes drop no family, so ctx->cfs stays as it is meanwhile.
inline Status FlushEveryFamily(Context* ctx) {
  return ctx->cfs.size() > 1 ? ctx->db->Flush(FlushOptions(), ctx->cfs)
                             : ctx->db->Flush(FlushOptions());
}
// The DB key of an oracle key, within its family.
inline std::string DbKey(const Context* ctx, uint64_t key) {
  return KeyString(key % ctx->keys_per_family);
}

// An oracle key for messages: its DB key, and its family when there are several.
inline std::string KeyName(const Context* ctx, uint64_t key) {
  if (ctx->cfs.size() <= 1) return KeyString(key);
  return DbKey(ctx, key) + " of column family " + std::to_string(FamilyIndex(ctx, key));
}

// Shared locks on the families of some oracle keys (or on one family by index), released
// when it dies; nothing with one family. Taken before any key lock.
class FamilyLocks {
 public:
  FamilyLocks(Context* ctx, const std::vector<uint64_t>& keys);
  FamilyLocks(Context* ctx, uint64_t key) : FamilyLocks(ctx, std::vector<uint64_t>{key}) {}
  FamilyLocks(const FamilyLocks&) = delete;
  FamilyLocks& operator=(const FamilyLocks&) = delete;
  ~FamilyLocks();

 private:
  Context* ctx_;
  std::vector<size_t> held_;
};

// Drops a random family other than the default one and creates it again, empty, with the
// family's lock held exclusively: its keys become absent in the oracle (pending first, so
// that a crash in between accepts the old values or none). False after Fail.
bool ClearColumnFamily(Context* ctx, ThreadState* t);

enum class WriteKind { kPut, kDelete, kSingleDelete, kMerge };

// One key's write, decided from the oracle while the key's lock is held.
struct Planned {
  uint64_t key = 0;
  WriteKind kind = WriteKind::kPut;
  uint32_t before = 0;   // what the key held before the write
  uint32_t word = 0;     // what the key holds after the write
  uint32_t operand = 0;  // merges
};

// The write to key the oracle allows (single-delete keys alternate Put and SingleDelete).
Planned Plan(Context* ctx, ThreadState* t, uint64_t key, WriteKind wanted);
// Distinct keys, ascending: a run of neighbours or scattered ones, 2 to max_n of them.
std::vector<uint64_t> PickKeys(Context* ctx, ThreadState* t, uint32_t max_n);
// Whether a read of key (status s, value) agrees with `expected`; reports if not.
bool Check(Context* ctx, const char* op, uint64_t key, const Status& s, const std::string& value,
           uint32_t expected);

// One operation kind. Returns false (after printing why) when the DB disagreed with the
// oracle or failed.
struct OpKind {
  const char* name;
  const int32_t* weight;  // a gflags value
  bool (*run)(Context* ctx, ThreadState* t);
};

// The table, terminated by an entry with a null name.
const OpKind* OpTable();

// Checks every key against the oracle (no worker may run). A key with a pending write may
// hold either value. With `prefix` (after a crash of a disable_wal run), the DB must hold
// the write log replayed up to one cut (db_stress_prefix.h). What each key holds becomes
// its committed value and the write log is emptied. False on a mismatch.
bool VerifyAll(Context* ctx, bool prefix);

// Releases the thread's held snapshots after checking them.
bool DrainSnapshots(Context* ctx, ThreadState* t, bool all);

// Prints a failure and marks the run failed; returns false.
bool Fail(Context* ctx, const std::string& what);

}  // namespace shale::stress

// Column families (db_stress.cc).
DECLARE_int32(column_families);
DECLARE_int32(clear_column_family_one_in);

// Operation weights (db_stress_ops.cc).
DECLARE_int32(put_weight);
DECLARE_int32(delete_weight);
DECLARE_int32(single_delete_weight);
DECLARE_int32(merge_weight);
DECLARE_int32(batch_weight);
DECLARE_int32(get_weight);
DECLARE_int32(multiget_weight);
DECLARE_int32(iterate_weight);
DECLARE_int32(snapshot_weight);
DECLARE_int32(flush_weight);
DECLARE_int32(compact_range_weight);
DECLARE_int32(delrangepercent);
DECLARE_int32(range_deletion_width);
