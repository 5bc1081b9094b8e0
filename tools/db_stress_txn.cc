// db_stress's transaction modes (see db_stress_txn.h).
#include "tools/db_stress_txn.h"

#include <csignal>
#include <cstdio>
#include <string>
#include <utility>

#include "shale/utilities/optimistic_transaction_db.h"
#include "shale/utilities/transaction_db.h"
#include "util/coding.h"

DEFINE_bool(use_txn, false,
            "Open a TransactionDB (pessimistic) and write through transactions, some of them "
            "two-phase");
DEFINE_bool(use_optimistic_txn, false,
            "Open an OptimisticTransactionDB and write through transactions");
DEFINE_int32(txn_write_policy, 0,
             "TransactionDBOptions::write_policy (0: WRITE_COMMITTED, 1: WRITE_PREPARED)");
DEFINE_int32(wp_commit_cache_bits, 8,
             "WRITE_PREPARED: commit cache bits (small, so that commits are evicted often)");
DEFINE_uint32(txn_prepare_one_in, 2,
              "--use_txn: one transaction in N is named and prepared before its commit (0: "
              "none)");
DEFINE_uint32(txn_rollback_one_in, 10, "One transaction in N is rolled back (0: none)");
DEFINE_int64(txn_lock_timeout, 100,
             "--use_txn: TransactionOptions::lock_timeout in milliseconds: how long a "
             "transaction waits for a key another one holds before TimedOut");
DEFINE_int32(txn_rmw_weight, 6,
             "Weight of GetForUpdate + Put transactions (only in the transaction modes)");
DEFINE_bool(test_half_commit, false,
            "Test only: commit the first half of one multi-key transaction's writes and then "
            "kill the process, so that the next start must report half a transaction");

DEFINE_bool(test_unrecorded_prepare, false,
            "Test only (--use_txn): prepare one transaction without recording it and kill "
            "the process, so that the next start must refuse the transaction it recovers");

namespace shale::stress {

namespace {

std::string TxnName(int slot, uint32_t serial) {
  return "stress-" + std::to_string(slot) + "-" + std::to_string(serial);
}

Transaction* Begin(Context* ctx, bool snapshot) {
  if (ctx->txn_db != nullptr) {
    TransactionOptions o;
    o.set_snapshot = snapshot;
    o.lock_timeout = FLAGS_txn_lock_timeout;
    return ctx->txn_db->BeginTransaction(ctx->write_options, o);
  }
  OptimisticTransactionOptions o;
  o.set_snapshot = snapshot;
  return ctx->occ_db->BeginTransaction(ctx->write_options, o);
}

// Busy (a conflict), TimedOut (a lock wait) and TryAgain (too little memtable history to
// check a conflict) say the transaction could not go on; counted, never a failure.
bool Refused(Context* ctx, const Status& s) {
  if (s.IsBusy()) {
    ctx->txn_busy.fetch_add(1, std::memory_order_relaxed);
  } else if (s.IsTimedOut()) {
    ctx->txn_timed_out.fetch_add(1, std::memory_order_relaxed);
  } else if (s.IsTryAgain()) {
    ctx->txn_try_again.fetch_add(1, std::memory_order_relaxed);
  } else {
    return false;
  }
  return true;
}

Status ApplyTxn(Context* ctx, Transaction* txn, const Planned& p) {
  const std::string key = KeyString(p.key);
  switch (p.kind) {
    case WriteKind::kPut: return txn->Put(key, ValueString(p.key, p.word, ctx->max_value_size));
    case WriteKind::kDelete: return txn->Delete(key);
    case WriteKind::kSingleDelete: return txn->SingleDelete(key);
    case WriteKind::kMerge: {
      std::string operand;
      PutFixed64(&operand, p.operand);
      return txn->Merge(key, operand);
    }
  }
  return Status::InvalidArgument("unknown write kind");
}

// Whether some key of plans[from, to) changes its value, so that a crash shows whether the
// write happened.
bool Changes(const std::vector<Planned>& plans, size_t from, size_t to) {
  for (size_t i = from; i < to; i++) {
    if (plans[i].word != plans[i].before) return true;
  }
  return false;
}

// The transaction did not commit: its keys keep their values in the oracle.
void KeepOld(Context* ctx, ThreadState* t, const std::vector<Planned>& plans) {
  for (const Planned& p : plans) ctx->state->Commit(p.key, p.before);
  ctx->state->EndTxn(t->id);
}

}  // namespace

Status OpenStressDB(const Options& options, const std::string& name, Context* ctx,
                    std::unique_ptr<DB>* db) {
  ctx->txn_db = nullptr;
  ctx->occ_db = nullptr;
  if (FLAGS_use_txn) {
    TransactionDBOptions o;
    o.write_policy = static_cast<TxnDBWritePolicy>(FLAGS_txn_write_policy);
    o.wp_commit_cache_bits = FLAGS_wp_commit_cache_bits;
    // The model expects a rollback to undo every write, merges included.
    o.rollback_merge_operands = true;
    TransactionDB* txn_db = nullptr;
    Status s = TransactionDB::Open(options, o, name, &txn_db);
    db->reset(txn_db);
    ctx->txn_db = txn_db;
    return s;
  }
  if (FLAGS_use_optimistic_txn) {
    OptimisticTransactionDB* occ_db = nullptr;
    Status s = OptimisticTransactionDB::Open(options, name, &occ_db);
    db->reset(occ_db);
    ctx->occ_db = occ_db;
    return s;
  }
  if (FLAGS_column_families <= 1) return DB::Open(options, name, db);
  // Families "default", "1", "2", ... (RocksDB's db_stress names), each created if missing:
  // after a crash between a drop and its re-creation, or on a fresh DB.
  std::vector<ColumnFamilyDescriptor> families;
  for (int i = 0; i < FLAGS_column_families; i++) {
    families.emplace_back(i == 0 ? kDefaultColumnFamilyName : std::to_string(i),
                          ColumnFamilyOptions(options));
  }
  DBOptions db_options(options);
  db_options.create_missing_column_families = true;
  return DB::Open(db_options, name, families, &ctx->cfs, db);
}

std::string TxnSummary() {
  return "--use_txn=" + std::to_string(FLAGS_use_txn) +
         " --use_optimistic_txn=" + std::to_string(FLAGS_use_optimistic_txn) +
         " --txn_write_policy=" + std::to_string(FLAGS_txn_write_policy) +
         " --wp_commit_cache_bits=" + std::to_string(FLAGS_wp_commit_cache_bits) +
         " --txn_prepare_one_in=" + std::to_string(FLAGS_txn_prepare_one_in) +
         " --txn_rollback_one_in=" + std::to_string(FLAGS_txn_rollback_one_in) +
         " --txn_rmw_weight=" + std::to_string(FLAGS_txn_rmw_weight) +
         " --txn_lock_timeout=" + std::to_string(FLAGS_txn_lock_timeout);
}

bool IssueTxn(Context* ctx, ThreadState* t, const std::vector<Planned>& plans,
              std::unique_ptr<Transaction> txn, const char* what) {
  if (txn == nullptr) txn.reset(Begin(ctx, false));
  // --test_half_commit: a broken engine that applies only the first half of a transaction.
  const size_t half = plans.size() / 2;
  const bool halve =
      FLAGS_test_half_commit && Changes(plans, 0, half) && Changes(plans, half, plans.size());
  const size_t written = halve ? half : plans.size();
  for (size_t i = 0; i < written; i++) {
    Status s = ApplyTxn(ctx, txn.get(), plans[i]);
    if (s.ok()) continue;
    if (!Refused(ctx, s))
      return Fail(ctx, std::string(what) + " in a transaction: " + s.ToString());
    s = txn->Rollback();
    if (!s.ok()) return Fail(ctx, "Rollback after a refused write: " + s.ToString());
    for (const Planned& p : plans) ctx->state->Commit(p.key, p.before);
    return true;
  }
  if (FLAGS_test_unrecorded_prepare && ctx->txn_db != nullptr) {
    Status s = txn->SetName(TxnName(t->id, t->txn_serial++));
    if (s.ok()) s = txn->Prepare();
    if (!s.ok()) return Fail(ctx, "test_unrecorded_prepare: " + s.ToString());
    printf("db_stress: test: prepared %s without recording it; killing\n", txn->GetName().c_str());
    fflush(stdout);
    raise(SIGKILL);
  }
  const bool two_phase = ctx->txn_db != nullptr && FLAGS_txn_prepare_one_in > 0 &&
                         t->rnd.OneIn(FLAGS_txn_prepare_one_in);
  const bool rollback = FLAGS_txn_rollback_one_in > 0 && t->rnd.OneIn(FLAGS_txn_rollback_one_in);
  std::vector<TxnKey> keys;
  for (const Planned& p : plans) keys.push_back({p.key, p.before, p.word});
  const uint32_t serial = t->txn_serial++;
  ctx->state->BeginTxn(t->id, rollback ? TxnRecord::kRollback : TxnRecord::kCommit, serial, keys);
  if (two_phase) {
    Status s = txn->SetName(TxnName(t->id, serial));
    // Marked first: a kill inside Prepare may leave it in the WAL.
    if (s.ok()) ctx->state->MarkPrepared(t->id);
    if (s.ok()) s = txn->Prepare();
    if (!s.ok()) return Fail(ctx, std::string(what) + ": Prepare: " + s.ToString());
  }
  if (rollback) {
    Status s = txn->Rollback();
    if (!s.ok()) return Fail(ctx, std::string(what) + ": Rollback: " + s.ToString());
    ctx->txn_rollbacks.fetch_add(1, std::memory_order_relaxed);
    KeepOld(ctx, t, plans);
    return true;
  }
  Status s = txn->Commit();
  if (!s.ok()) {
    if (!Refused(ctx, s)) return Fail(ctx, std::string(what) + ": Commit: " + s.ToString());
    KeepOld(ctx, t, plans);  // a refused commit wrote nothing
    return true;
  }
  if (halve) {
    printf("db_stress: test: committed %zu of the %zu writes of a transaction; killing\n", half,
           plans.size());
    fflush(stdout);
    raise(SIGKILL);
  }
  ctx->txn_commits.fetch_add(1, std::memory_order_relaxed);
  if (two_phase) ctx->txn_two_phase.fetch_add(1, std::memory_order_relaxed);
  for (const Planned& p : plans) ctx->state->Commit(p.key, p.word);
  ctx->state->EndTxn(t->id);
  return true;
}

bool OpTxnReadModifyWrite(Context* ctx, ThreadState* t) {
  if (ctx->txn_db == nullptr && ctx->occ_db == nullptr) return true;
  const std::vector<uint64_t> keys = PickKeys(ctx, t, 3);
  // The snapshot comes before the oracle's locks: another worker may write a key in between,
  // and then the transaction must refuse (pessimistic: Busy at GetForUpdate; optimistic:
  // Busy at Commit). Holding the locks, it reads exactly what the oracle says.
  std::unique_ptr<Transaction> txn(Begin(ctx, true));
  // Pessimistic, one time in 4: the first key's transaction lock is taken before the
  // oracle's locks too. A writer holding the oracle's lock on it then waits for this lock
  // while this worker waits for the writer's: the writer's wait times out (TimedOut), it
  // gives up its write and lets go. No one can write the key in between, as every write
  // takes its transaction lock, so the read under the oracle's lock below stays exact.
  if (ctx->txn_db != nullptr && t->rnd.OneIn(4)) {
    std::string ignored;
    Status s = txn->GetForUpdate(ReadOptions(), KeyString(keys[0]), &ignored);
    if (Refused(ctx, s)) {
      s = txn->Rollback();
      return s.ok() || Fail(ctx, "Rollback after a refused GetForUpdate: " + s.ToString());
    }
    if (!s.ok() && !s.IsNotFound()) return Fail(ctx, "GetForUpdate: " + s.ToString());
  }
  auto held = ctx->locks->LockKeys(keys);
  std::vector<Planned> plans;
  for (uint64_t key : keys) {
    std::string value;
    Status s = txn->GetForUpdate(ReadOptions(), KeyString(key), &value);
    if (Refused(ctx, s)) {
      s = txn->Rollback();
      return s.ok() || Fail(ctx, "Rollback after a refused GetForUpdate: " + s.ToString());
    }
    if (!Check(ctx, "GetForUpdate", key, s, value, ctx->state->committed(key))) return false;
    plans.push_back(Plan(ctx, t, key, WriteKind::kPut));
  }
  for (const Planned& p : plans) ctx->state->SetPending(p.key, p.word);
  return IssueTxn(ctx, t, plans, std::move(txn), "read-modify-write");
}

bool ResolvePrepared(Context* ctx) {
  ctx->resolved.assign(ExpectedState::kTxnSlots, 0);
  if (ctx->txn_db == nullptr) return true;
  std::vector<Transaction*> prepared;
  ctx->txn_db->GetAllPreparedTransactions(&prepared);
  for (Transaction* txn : prepared) {
    const std::string name = txn->GetName();
    int slot = -1;
    TxnRecord rec;
    for (int i = 0; i < ExpectedState::kTxnSlots && slot < 0; i++) {
      if (ctx->state->ReadTxn(i, &rec) && rec.prepared && TxnName(i, rec.serial) == name) slot = i;
    }
    if (slot < 0) {
      return Fail(ctx, "the DB recovered prepared transaction " + name +
                           ", which no worker left prepared and unfinished");
    }
    const bool commit = rec.intent == TxnRecord::kCommit;
    Status s = commit ? txn->Commit() : txn->Rollback();
    if (!s.ok()) return Fail(ctx, "resolving recovered transaction " + name + ": " + s.ToString());
    delete txn;  // ours once committed or rolled back
    ctx->resolved[slot] = commit ? 1 : 2;
    (commit ? ctx->recovered_commits : ctx->recovered_rollbacks)++;
    printf("db_stress: recovered prepared transaction %s (%zu keys), %s as its run meant to\n",
           name.c_str(), rec.keys.size(), commit ? "committed" : "rolled back");
  }
  // Resolved ones leave the list; one still there would be resolved twice on the next open.
  ctx->txn_db->GetAllPreparedTransactions(&prepared);
  if (!prepared.empty()) {
    return Fail(ctx, std::to_string(prepared.size()) +
                         " prepared transactions left after committing or rolling back all");
  }
  return true;
}

bool CheckTxnRecords(Context* ctx, const std::vector<uint32_t>& held) {
  if (ctx->resolved.size() < ExpectedState::kTxnSlots) {
    ctx->resolved.resize(ExpectedState::kTxnSlots, 0);
  }
  for (int slot = 0; slot < ExpectedState::kTxnSlots; slot++) {
    TxnRecord rec;
    if (!ctx->state->ReadTxn(slot, &rec)) continue;
    size_t present = 0, absent = 0;  // keys whose value tells which
    std::string keys;
    for (const TxnKey& k : rec.keys) {
      if (k.word == k.before) continue;
      if (held[k.key] == k.word) present++;
      if (held[k.key] == k.before) absent++;
      keys += " " + KeyString(k.key) + "=" + Describe(held[k.key]) + " (" + Describe(k.before) +
              " -> " + Describe(k.word) + ")";
    }
    const std::string which =
        "transaction " + TxnName(slot, rec.serial) + " in flight at the crash";
    if (present > 0 && absent > 0) return Fail(ctx, "half of a " + which + " is there:" + keys);
    if (present > 0 && rec.intent == TxnRecord::kRollback) {
      return Fail(ctx, "a rolled-back " + which + " is there:" + keys);
    }
    if (absent > 0 && ctx->resolved[slot] == 1) {
      return Fail(ctx, "the recovered and committed " + which + " is absent:" + keys);
    }
  }
  return true;
}

void ClearTxnRecords(Context* ctx) {
  for (int slot = 0; slot < ExpectedState::kTxnSlots; slot++) ctx->state->EndTxn(slot);
  ctx->resolved.assign(ExpectedState::kTxnSlots, 0);
}

std::string TxnCounts(const Context& ctx) {
  return "; transactions: " + std::to_string(ctx.txn_commits.load()) + " committed (" +
         std::to_string(ctx.txn_two_phase.load()) + " two-phase), " +
         std::to_string(ctx.txn_rollbacks.load()) +
         " rolled back, refused: " + std::to_string(ctx.txn_busy.load()) + " Busy, " +
         std::to_string(ctx.txn_timed_out.load()) + " TimedOut, " +
         std::to_string(ctx.txn_try_again.load()) +
         " TryAgain; recovered prepared: " + std::to_string(ctx.recovered_commits) +
         " committed, " + std::to_string(ctx.recovered_rollbacks) + " rolled back";
}

}  // namespace shale::stress
