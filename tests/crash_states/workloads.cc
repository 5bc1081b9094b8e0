#include "tests/crash_states/workloads.h"

#include "shale/utilities/transaction.h"
#include "shale/write_batch.h"

namespace shale::crash_states {

WriteOptions Sync() {
  WriteOptions wo;
  wo.sync = true;
  return wo;
}

WriteOptions NoWal() {
  WriteOptions wo;
  wo.disableWAL = true;
  return wo;
}

Context::Context() : base_(NewMemEnv(Env::Default())) {}
Context::~Context() = default;

size_t Context::Count() { return recording_ == nullptr ? 0 : recording_->OpCount(); }

Status Context::OpenUnrecorded(std::unique_ptr<DB>* db) {
  Options o = options;
  o.env = base_.get();
  o.create_if_missing = true;
  return DB::Open(o, dbname, db);
}

Status Context::CrashAndKeepEverything(std::unique_ptr<DB>* db) {
  std::map<std::string, std::string> files;
  Status s = RecordingEnv::Snapshot(base_.get(), dbname, &files);
  if (!s.ok()) return s;
  // Dropped without Close on an Env about to be replaced: nothing it writes now counts.
  db->reset();
  base_.reset(NewMemEnv(Env::Default()));
  s = base_->CreateDirIfMissing(dbname);
  for (const auto& [path, data] : files) {
    if (s.ok()) s = WriteStringToFile(base_.get(), data, path);
  }
  return s;
}

Status Context::Seed(const CrashState& state) {
  Status s;
  for (const std::string& d : state.dirs) {
    if (s.ok() && !d.empty() && d != "/") s = base_->CreateDirIfMissing(d);
  }
  for (const auto& [path, data] : state.files) {
    if (s.ok()) s = WriteStringToFile(base_.get(), data, path);
  }
  return s;
}

Status Context::StartRecording() {
  Status s;
  // A fresh DB has no starting files: its directory is part of the recording.
  if (base_->FileExists(dbname).ok()) {
    initial_dirs_ = {dbname};
    s = RecordingEnv::Snapshot(base_.get(), dbname, &initial_);
  }
  recording_ = std::make_unique<RecordingEnv>(base_.get());
  history_.MarkDurable(0, false);
  return s;
}

Status Context::Open(std::unique_ptr<DB>* db) {
  Options o = options;
  o.env = recording_.get();
  o.create_if_missing = true;
  return DB::Open(o, dbname, db);
}

Status Context::Put(DB* db, const std::string& key, const std::string& value,
                    const WriteOptions& wo) {
  return Write(db, {{key, value}}, wo);
}

Status Context::Delete(DB* db, const std::string& key, const WriteOptions& wo) {
  return Write(db, {{key, std::nullopt}}, wo);
}

Status Context::Write(DB* db,
                      const std::vector<std::pair<std::string, std::optional<std::string>>>& ops,
                      const WriteOptions& wo) {
  WriteBatch batch;
  for (const auto& [k, v] : ops) {
    Status s = v.has_value() ? batch.Put(k, *v) : batch.Delete(k);
    if (!s.ok()) return s;
  }
  crash_states::Write w;
  w.ops = ops;
  w.wal = !wo.disableWAL;
  w.issued = Count();
  Status s = db->Write(wo, &batch);
  if (!s.ok()) return s;  // a failed write is not history
  w.acked = Count();
  history_.Add(std::move(w));
  if (wo.sync && !wo.disableWAL) history_.MarkDurable(Count(), true);
  return s;
}

Status Context::Flush(DB* db) {
  FlushOptions fo;
  fo.wait = true;
  Status s = db->Flush(fo);
  if (s.ok()) history_.MarkDurable(Count(), false);
  return s;
}

Status Context::OpenTxn(int policy, std::unique_ptr<TransactionDB>* db) {
  txn_ = policy;
  Options o = options;
  o.env = recording_.get();
  o.create_if_missing = true;
  TransactionDBOptions to;
  to.write_policy =
      policy == 2 ? TxnDBWritePolicy::WRITE_PREPARED : TxnDBWritePolicy::WRITE_COMMITTED;
  TransactionDB* raw = nullptr;
  Status s = TransactionDB::Open(o, to, dbname, &raw);
  db->reset(raw);
  return s;
}

Status Context::Txn(TransactionDB* db, const std::string& name,
                    const std::vector<std::pair<std::string, std::optional<std::string>>>& ops,
                    Resolve resolve) {
  std::unique_ptr<Transaction> txn(db->BeginTransaction(Sync()));
  Status s = txn->SetName(name);
  for (const auto& [k, v] : ops) {
    if (s.ok()) s = v.has_value() ? txn->Put(k, *v) : txn->Delete(k);
  }
  if (!s.ok()) return s;
  Prepare p;
  p.name = name;
  p.issued = Count();
  s = txn->Prepare();
  if (!s.ok()) return s;
  p.acked = Count();
  history_.AddPrepare(p);
  if (resolve == Resolve::kLeavePrepared) return s;
  history_.Resolve(name, Count());
  crash_states::Write w;
  w.ops = ops;
  w.issued = Count();
  s = resolve == Resolve::kCommit ? txn->Commit() : txn->Rollback();
  if (!s.ok() || resolve == Resolve::kRollback) return s;
  w.acked = Count();
  history_.Add(std::move(w));
  history_.MarkDurable(Count(), true);
  return s;
}

Recording Context::Finish() {
  Recording r;
  r.initial = initial_;
  r.initial_dirs = initial_dirs_;
  if (recording_ != nullptr) r.ops = recording_->Ops();
  r.history = history_;
  r.check.dbname = dbname;
  r.check.options = options;
  r.check.txn = txn_;
  return r;
}

namespace {

std::string Key(int i) { return "k" + std::to_string(i); }
std::string Val(int i, int round, size_t size = 8) {
  std::string v = "v" + std::to_string(round) + "." + std::to_string(i) + ".";
  while (v.size() < size) v.push_back(static_cast<char>('a' + (v.size() + i) % 26));
  return v;
}

#define CS_RETURN_IF_ERROR(expr) \
  do {                           \
    Status _s = (expr);          \
    if (!_s.ok()) return _s;     \
  } while (false)

Status PutsSync(Context* c) {
  CS_RETURN_IF_ERROR(c->StartRecording());
  std::unique_ptr<DB> db;
  CS_RETURN_IF_ERROR(c->Open(&db));
  for (int i = 0; i < 4; i++) CS_RETURN_IF_ERROR(c->Put(db.get(), Key(i % 3), Val(i, 0), Sync()));
  return db->Close();
}

Status PutsNoSync(Context* c) {
  CS_RETURN_IF_ERROR(c->StartRecording());
  std::unique_ptr<DB> db;
  CS_RETURN_IF_ERROR(c->Open(&db));
  for (int i = 0; i < 4; i++) CS_RETURN_IF_ERROR(c->Put(db.get(), Key(i), Val(i, 0, 300)));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(1), Val(1, 1), Sync()));
  for (int i = 0; i < 2; i++) CS_RETURN_IF_ERROR(c->Put(db.get(), Key(i + 5), Val(i, 2, 200)));
  return db->Close();
}

// As PutsNoSync, with the WAL written through a buffer (kAbsoluteConsistency asks for it,
// log_writer.cc) instead of a mapping: appends reach the OS at each record's flush.
Status PutsBufferedWal(Context* c) {
  c->options.wal_recovery_mode = WALRecoveryMode::kAbsoluteConsistency;
  return PutsNoSync(c);
}

Status Batches(Context* c) {
  CS_RETURN_IF_ERROR(c->StartRecording());
  std::unique_ptr<DB> db;
  CS_RETURN_IF_ERROR(c->Open(&db));
  for (int r = 0; r < 4; r++) {
    CS_RETURN_IF_ERROR(c->Write(
        db.get(), {{Key(r), Val(r, r, 100)}, {Key(r + 1), Val(r + 1, r, 700)}, {Key(r + 2), {}}},
        r % 2 == 1 ? Sync() : WriteOptions()));
  }
  return db->Close();
}

Status DisableWalFlush(Context* c) {
  CS_RETURN_IF_ERROR(c->StartRecording());
  std::unique_ptr<DB> db;
  CS_RETURN_IF_ERROR(c->Open(&db));
  for (int i = 0; i < 3; i++) CS_RETURN_IF_ERROR(c->Put(db.get(), Key(i), Val(i, 0), NoWal()));
  CS_RETURN_IF_ERROR(c->Flush(db.get()));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(0), Val(0, 1), NoWal()));
  CS_RETURN_IF_ERROR(c->Delete(db.get(), Key(1), NoWal()));
  CS_RETURN_IF_ERROR(c->Flush(db.get()));
  return db->Close();
}

Status FlushWorkload(Context* c) {
  CS_RETURN_IF_ERROR(c->StartRecording());
  std::unique_ptr<DB> db;
  CS_RETURN_IF_ERROR(c->Open(&db));
  for (int i = 0; i < 3; i++) CS_RETURN_IF_ERROR(c->Put(db.get(), Key(i), Val(i, 0)));
  CS_RETURN_IF_ERROR(c->Flush(db.get()));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(0), Val(0, 1)));
  CS_RETURN_IF_ERROR(c->Delete(db.get(), Key(2), Sync()));
  return db->Close();
}

// The memtable fills and switches to a new WAL while the older one holds unsynced writes;
// then a synced write in the new WAL must make the older writes durable too (no holes).
Status MemtableSwitch(Context* c) {
  c->options.write_buffer_size = 4096;
  CS_RETURN_IF_ERROR(c->StartRecording());
  std::unique_ptr<DB> db;
  CS_RETURN_IF_ERROR(c->Open(&db));
  for (int i = 0; i < 7; i++) CS_RETURN_IF_ERROR(c->Put(db.get(), Key(i), Val(i, 0, 900)));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(9), Val(9, 1), Sync()));
  return db->Close();
}

// Three flushed files compacted into one: the compaction's MANIFEST edit and the deletion
// of its inputs.
Status Compaction(Context* c) {
  c->options.disable_auto_compactions = true;
  CS_RETURN_IF_ERROR(c->StartRecording());
  std::unique_ptr<DB> db;
  CS_RETURN_IF_ERROR(c->Open(&db));
  for (int r = 0; r < 3; r++) {
    CS_RETURN_IF_ERROR(c->Put(db.get(), Key(r), Val(r, r)));
    CS_RETURN_IF_ERROR(c->Put(db.get(), Key(r + 1), Val(r + 1, r)));
    CS_RETURN_IF_ERROR(c->Flush(db.get()));
  }
  CS_RETURN_IF_ERROR(db->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(0), Val(0, 9), Sync()));
  return db->Close();
}

// Reopens: each writes a new MANIFEST and replaces CURRENT.
Status Reopen(Context* c) {
  CS_RETURN_IF_ERROR(c->StartRecording());
  std::unique_ptr<DB> db;
  CS_RETURN_IF_ERROR(c->Open(&db));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(0), Val(0, 0)));
  CS_RETURN_IF_ERROR(db->Close());
  db.reset();
  CS_RETURN_IF_ERROR(c->Open(&db));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(1), Val(1, 1), Sync()));
  CS_RETURN_IF_ERROR(db->Close());
  db.reset();
  CS_RETURN_IF_ERROR(c->Open(&db));
  return db->Close();
}

// A DB left by a crash (writes in its WAL, some never synced) is recovered, and the
// recovery itself is cut: every state of the recovery must still hold every write.
Status RecoveryInterrupted(Context* c) {
  std::unique_ptr<DB> db;
  CS_RETURN_IF_ERROR(c->OpenUnrecorded(&db));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(0), Val(0, 0), Sync()));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(1), Val(1, 0, 600)));
  CS_RETURN_IF_ERROR(c->Delete(db.get(), Key(0)));
  CS_RETURN_IF_ERROR(c->CrashAndKeepEverything(&db));
  CS_RETURN_IF_ERROR(c->StartRecording());
  CS_RETURN_IF_ERROR(c->Open(&db));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(2), Val(2, 1), Sync()));
  return db->Close();
}

// Two-phase commit: committed, rolled back and left-prepared transactions between plain
// writes; the checker rolls back what comes back prepared (oracle.h R6).
Status TwoPhase(Context* c, int policy) {
  CS_RETURN_IF_ERROR(c->StartRecording());
  std::unique_ptr<TransactionDB> db;
  CS_RETURN_IF_ERROR(c->OpenTxn(policy, &db));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(0), Val(0, 0)));
  CS_RETURN_IF_ERROR(c->Txn(db.get(), "t1", {{Key(1), Val(1, 1)}, {Key(2), Val(2, 1, 600)}},
                            Context::Resolve::kCommit));
  CS_RETURN_IF_ERROR(c->Txn(db.get(), "t2", {{Key(0), Val(0, 2)}, {Key(1), std::nullopt}},
                            Context::Resolve::kRollback));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(3), Val(3, 3)));
  CS_RETURN_IF_ERROR(
      c->Txn(db.get(), "t3", {{Key(2), Val(2, 4)}}, Context::Resolve::kLeavePrepared));
  CS_RETURN_IF_ERROR(c->Txn(db.get(), "t4", {{Key(4), Val(4, 5)}, {Key(0), std::nullopt}},
                            Context::Resolve::kCommit));
  return db->Close();
}

Status TwoPhaseCommitted(Context* c) { return TwoPhase(c, 1); }
Status TwoPhasePrepared(Context* c) { return TwoPhase(c, 2); }

// Longer: mixed writes, several WALs, flushes, compactions and reopens.
Status LongMixed(Context* c) {
  c->options.write_buffer_size = 8192;
  c->options.level0_file_num_compaction_trigger = 2;
  CS_RETURN_IF_ERROR(c->StartRecording());
  std::unique_ptr<DB> db;
  CS_RETURN_IF_ERROR(c->Open(&db));
  for (int r = 0; r < 3; r++) {
    for (int i = 0; i < 12; i++) {
      const int k = (i * 7 + r) % 10;
      if (i % 5 == 4) {
        CS_RETURN_IF_ERROR(c->Delete(db.get(), Key(k)));
      } else {
        CS_RETURN_IF_ERROR(c->Put(db.get(), Key(k), Val(k, r, 300 + 100 * (i % 4)),
                                  i % 4 == 3 ? Sync() : WriteOptions()));
      }
    }
    CS_RETURN_IF_ERROR(c->Flush(db.get()));
    if (r == 1) {
      CS_RETURN_IF_ERROR(db->Close());
      db.reset();
      CS_RETURN_IF_ERROR(c->Open(&db));
    }
  }
  CS_RETURN_IF_ERROR(db->WaitForCompact(WaitForCompactOptions()));
  return db->Close();
}

}  // namespace

const std::vector<Workload>& AllWorkloads() {
  static const std::vector<Workload> kAll = {
      {"puts_sync", "puts with sync=true", false, PutsSync},
      {"puts_nosync", "unsynced puts, one synced, more unsynced", false, PutsNoSync},
      {"puts_buffered_wal", "puts_nosync with a buffered (not mapped) WAL", false, PutsBufferedWal},
      {"batches", "batches of puts and deletes, every other one synced", false, Batches},
      {"disable_wal_flush", "disableWAL writes made durable by flushes", false, DisableWalFlush},
      {"flush", "unsynced puts, a flush, more writes", false, FlushWorkload},
      {"memtable_switch", "a new WAL while the older holds unsynced writes, then a sync", false,
       MemtableSwitch},
      {"compaction", "three flushes compacted into one file", false, Compaction},
      {"reopen", "reopens: new MANIFEST, CURRENT replaced", false, Reopen},
      {"recovery_interrupted", "the recovery of a crashed DB cut at every point", false,
       RecoveryInterrupted},
      {"two_phase", "2PC prepare, commit, rollback, one left prepared (WRITE_COMMITTED)", false,
       TwoPhaseCommitted},
      {"write_prepared", "the same under WRITE_PREPARED", false, TwoPhasePrepared},
      {"long_mixed", "mixed writes, WAL switches, flushes, compactions, a reopen", true, LongMixed},
  };
  return kAll;
}

}  // namespace shale::crash_states
