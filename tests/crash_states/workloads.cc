#include "tests/crash_states/workloads.h"

#include <cstdio>
#include <latch>
#include <thread>

#include "db/db_for_transactions.h"
#include "shale/utilities/checkpoint.h"
#include "shale/utilities/transaction.h"
#include "tests/crash_states/families.h"

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

Env* Context::env() {
  if (grouping_ != nullptr) return grouping_.get();
  return recording_ != nullptr ? recording_.get() : base_.get();
}

// The WAL's Sync waits for every writer to have a write in flight (GroupWriters).
class Context::GroupingEnv : public EnvWrapper {
 public:
  GroupingEnv(Env* target, Context* context) : EnvWrapper(target), context_(context) {}
  Status NewWritableFile(const std::string& f, std::unique_ptr<WritableFile>* r,
                         const EnvOptions& o) override {
    Status s = target()->NewWritableFile(f, r, o);
    if (s.ok() && f.ends_with(".log")) *r = std::make_unique<File>(std::move(*r), context_);
    return s;
  }

 private:
  class File : public WritableFile {
   public:
    File(std::unique_ptr<WritableFile> file, Context* context)
        : file_(std::move(file)), context_(context) {}
    Status Append(const Slice& data) override { return file_->Append(data); }
    Status Flush() override { return file_->Flush(); }
    Status Sync() override {
      context_->WaitForWritersInFlight();
      return file_->Sync();
    }
    Status Fsync() override {
      context_->WaitForWritersInFlight();
      return file_->Fsync();
    }
    Status Close() override { return file_->Close(); }
    uint64_t GetFileSize() override { return file_->GetFileSize(); }

   private:
    std::unique_ptr<WritableFile> file_;
    Context* context_;
  };
  Context* context_;
};

void Context::GroupWriters() { grouping_ = std::make_unique<GroupingEnv>(recording_.get(), this); }

void Context::WriterBegin() {
  std::lock_guard<std::mutex> lock(flight_mu_);
  active_writers_++;
}

void Context::WriterDone() {
  std::lock_guard<std::mutex> lock(flight_mu_);
  active_writers_--;
  flight_cv_.notify_all();
}

void Context::WaitForWritersInFlight() {
  std::unique_lock<std::mutex> lock(flight_mu_);
  flight_cv_.wait(lock, [this] { return in_flight_ >= active_writers_; });
}

Status Context::Open(std::unique_ptr<DB>* db) {
  Options o = options;
  o.env = grouping_ != nullptr ? grouping_.get() : recording_.get();
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
  return Record(db, &batch, ops, wo);
}

Status Context::Record(DB* db, WriteBatch* batch,
                       std::vector<std::pair<std::string, std::optional<std::string>>> ops,
                       const WriteOptions& wo) {
  crash_states::Write w;
  w.ops = std::move(ops);
  w.wal = !wo.disableWAL;
  // Writers write through the transaction layer's entry, which says what sequence the
  // write got: the checker then knows the WAL's order of their writes
  // (History::OrderBySequence).
  DBForTransactions* engine = writers ? DBForTransactions::From(db) : nullptr;
  if (writers && engine == nullptr) return Status::NotSupported("writers: not a shale DB");
  w.issued = Count();
  {
    std::lock_guard<std::mutex> lock(flight_mu_);
    in_flight_++;
    flight_cv_.notify_all();
  }
  Status s;
  if (engine != nullptr) {
    DBForTransactions::TxnWrite t;
    t.seq_used = &w.seq;
    s = engine->WriteTxn(wo, batch, t);
  } else {
    s = db->Write(wo, batch);
  }
  {
    std::lock_guard<std::mutex> lock(flight_mu_);
    in_flight_--;
  }
  if (!s.ok()) return s;  // a failed write is not history
  w.acked = Count();
  // A synced write makes itself durable and every WAL write acknowledged before it was
  // issued (concurrent ones may have joined its group or a later one).
  const bool synced = wo.sync && !wo.disableWAL;
  if (synced) w.durable = w.acked;
  std::lock_guard<std::mutex> lock(history_mu_);
  if (synced) history_.MarkDurable(w.acked, true, w.issued);
  history_.Add(std::move(w));
  return s;
}

Status Context::Flush(DB* db) {
  FlushOptions fo;
  fo.wait = true;
  Status s = db->Flush(fo);
  if (s.ok()) history_.MarkDurable(Count(), false);
  return s;
}

Status Context::Checkpoint(DB* db, const std::string& dir, uint64_t log_size_for_flush) {
  CheckpointCheck c;
  c.dir = dir;
  c.issued = Count();
  {
    std::lock_guard<std::mutex> l(history_mu_);
    c.writes = history_.writes().size();
  }
  shale::Checkpoint* raw = nullptr;
  Status s = shale::Checkpoint::Create(db, &raw);
  std::unique_ptr<shale::Checkpoint> checkpoint(raw);
  if (s.ok()) s = checkpoint->CreateCheckpoint(dir, log_size_for_flush);
  if (!s.ok()) return s;
  c.acked = Count();
  if (log_size_for_flush == 0) history_.MarkDurable(c.acked, false);
  checkpoints_.push_back(std::move(c));
  return s;
}

Status Context::OpenFamilies(const std::vector<std::string>& names,
                             std::vector<ColumnFamilyHandle*>* handles, std::unique_ptr<DB>* db) {
  families_ = true;
  Options o = options;
  o.env = env();
  o.create_if_missing = true;
  o.create_missing_column_families = true;
  std::vector<ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : names) {
    descriptors.emplace_back(name, ColumnFamilyOptions(options));
  }
  return DB::Open(DBOptions(o), dbname, descriptors, handles, db);
}

Status Context::OpenAllFamilies(FamilyDb* db) {
  families_ = true;
  Options o = options;
  o.env = env();
  o.create_if_missing = true;
  return db->Open(o, dbname);
}

Status Context::CreateFamily(DB* db, const std::string& name, ColumnFamilyHandle** handle) {
  families_ = true;
  return db->CreateColumnFamily(ColumnFamilyOptions(options), name, handle);
}

Status Context::DropFamily(DB* db, ColumnFamilyHandle* family) {
  crash_states::Write w;
  w.ops = {{DropMarker(family->GetID()), std::nullopt}};
  w.wal = false;  // a MANIFEST edit
  w.issued = Count();
  Status s = db->DropColumnFamily(family);
  if (!s.ok()) return s;
  w.acked = Count();
  w.durable_in[FamilyOf(w.ops[0].first)] = w.acked;
  history_.Add(std::move(w));
  return s;
}

Status Context::WriteFamilies(DB* db, const std::vector<FamilyOp>& ops, const WriteOptions& wo) {
  WriteBatch batch;
  std::vector<std::pair<std::string, std::optional<std::string>>> named;
  for (const FamilyOp& op : ops) {
    Status s = op.value.has_value() ? batch.Put(op.family, op.key, *op.value)
                                    : batch.Delete(op.family, op.key);
    if (!s.ok()) return s;
    named.emplace_back(FamilyKey(op.family->GetID(), op.key), op.value);
  }
  return Record(db, &batch, std::move(named), wo);
}

Status Context::FlushFamilies(DB* db, const std::vector<ColumnFamilyHandle*>& families) {
  FlushOptions fo;
  fo.wait = true;
  Status s = db->Flush(fo, families);
  for (ColumnFamilyHandle* f : families) {
    if (s.ok()) history_.MarkDurableIn(Count(), std::to_string(f->GetID()));
  }
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
  if (writers && !r.history.OrderBySequence()) {
    // Every writers' write is numbered by Record: an unnumbered one leaves the real-time
    // order rule (families.h) in charge.
    std::fprintf(stderr, "crash_states: a writers' write without its sequence number\n");
  }
  r.check.dbname = dbname;
  r.check.options = options;
  r.check.txn = txn_;
  r.check.families = families_;
  r.check.writers = writers;
  r.check.checkpoints = checkpoints_;
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

// The MANIFEST rolled over by size (max_manifest_file_size tiny): flushes of writes without
// the WAL, which live only in the tables the edits name, then a compaction and a synced
// write. The first flush appends to Open's MANIFEST; each later edit starts a new one (the
// tree, CURRENT switched, the old one deleted).
Status ManifestRollover(Context* c) {
  c->options.max_manifest_file_size = 100;
  c->options.disable_auto_compactions = true;
  CS_RETURN_IF_ERROR(c->StartRecording());
  std::unique_ptr<DB> db;
  CS_RETURN_IF_ERROR(c->Open(&db));
  for (int r = 0; r < 3; r++) {
    CS_RETURN_IF_ERROR(c->Put(db.get(), Key(r), Val(r, r), NoWal()));
    CS_RETURN_IF_ERROR(c->Put(db.get(), Key(r + 1), Val(r + 1, r), NoWal()));
    CS_RETURN_IF_ERROR(c->Flush(db.get()));
  }
  CS_RETURN_IF_ERROR(db->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(0), Val(0, 9), Sync()));
  return db->Close();
}

// Checkpoints of a DB being written (include/shale/utilities/checkpoint.h): table files
// linked into a staging directory, the MANIFEST and the WALs copied, CURRENT written, the
// directory synced and renamed into place. The first flushes first; the second leaves the
// writes since in the memtable, so the WAL copy carries them (an unsynced one among them).
Status CheckpointWorkload(Context* c) {
  c->options.disable_auto_compactions = true;
  CS_RETURN_IF_ERROR(c->StartRecording());
  std::unique_ptr<DB> db;
  CS_RETURN_IF_ERROR(c->Open(&db));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(0), Val(0, 0)));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(1), Val(1, 0), Sync()));
  CS_RETURN_IF_ERROR(c->Flush(db.get()));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(2), Val(2, 1)));
  CS_RETURN_IF_ERROR(c->Checkpoint(db.get(), "/ckpt1", 0));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(0), Val(0, 2), Sync()));
  CS_RETURN_IF_ERROR(c->Delete(db.get(), Key(1)));
  CS_RETURN_IF_ERROR(c->Checkpoint(db.get(), "/ckpt2", uint64_t{1} << 30));
  CS_RETURN_IF_ERROR(c->Put(db.get(), Key(3), Val(3, 3), Sync()));
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

// A family made and written to, alone and in a batch with the default family.
Status FamilyCreateWrite(Context* c) {
  CS_RETURN_IF_ERROR(c->StartRecording());
  std::unique_ptr<DB> db;
  std::vector<ColumnFamilyHandle*> h;
  CS_RETURN_IF_ERROR(c->OpenFamilies({kDefaultColumnFamilyName}, &h, &db));
  ColumnFamilyHandle* a = nullptr;
  CS_RETURN_IF_ERROR(c->CreateFamily(db.get(), "a", &a));
  h.push_back(a);
  CS_RETURN_IF_ERROR(c->WriteFamilies(db.get(), {{a, Key(0), Val(0, 0, 300)}}));
  CS_RETURN_IF_ERROR(
      c->WriteFamilies(db.get(), {{a, Key(1), Val(1, 1)}, {h[0], Key(1), Val(1, 1, 200)}}, Sync()));
  CS_RETURN_IF_ERROR(
      c->WriteFamilies(db.get(), {{a, Key(0), std::nullopt}, {h[0], Key(2), Val(2, 2)}}));
  return CloseFamilies(&db, &h);
}

// Batches across three families while they flush at different times: "a" flushes past
// the WAL that holds batches whose parts in "b" and the default family are not synced;
// recovery must keep each batch whole in every family and replay none twice.
Status FamilyBatches(Context* c) {
  CS_RETURN_IF_ERROR(c->StartRecording());
  std::unique_ptr<DB> db;
  std::vector<ColumnFamilyHandle*> h;
  CS_RETURN_IF_ERROR(c->OpenFamilies({kDefaultColumnFamilyName, "a", "b"}, &h, &db));
  ColumnFamilyHandle *def = h[0], *a = h[1], *b = h[2];
  for (int r = 0; r < 3; r++) {
    CS_RETURN_IF_ERROR(c->WriteFamilies(
        db.get(),
        {{a, Key(r), Val(r, r, 300)}, {b, Key(r), Val(r, r, 200)}, {def, Key(r), Val(r, r)}},
        r == 1 ? Sync() : WriteOptions()));
  }
  CS_RETURN_IF_ERROR(c->FlushFamilies(db.get(), {a}));
  for (int r = 3; r < 5; r++) {
    CS_RETURN_IF_ERROR(c->WriteFamilies(
        db.get(),
        {{a, Key(r % 3), Val(r, r, 300)}, {b, Key(r), std::nullopt}, {b, Key(0), Val(r, r)}}));
  }
  CS_RETURN_IF_ERROR(c->WriteFamilies(db.get(), {{def, Key(0), std::nullopt}}));
  CS_RETURN_IF_ERROR(c->FlushFamilies(db.get(), {b}));
  CS_RETURN_IF_ERROR(
      c->WriteFamilies(db.get(), {{a, Key(0), Val(0, 6)}, {def, Key(5), Val(5, 6, 400)}}));
  return CloseFamilies(&db, &h);
}

// A family dropped amid unsynced writes, then made again under the same name: the dropped
// one's data must not come back, in the new family or anywhere.
Status FamilyDropRecreate(Context* c) {
  CS_RETURN_IF_ERROR(c->StartRecording());
  std::unique_ptr<DB> db;
  std::vector<ColumnFamilyHandle*> h;
  CS_RETURN_IF_ERROR(c->OpenFamilies({kDefaultColumnFamilyName, "a"}, &h, &db));
  ColumnFamilyHandle *def = h[0], *a = h[1];
  CS_RETURN_IF_ERROR(
      c->WriteFamilies(db.get(), {{a, Key(0), Val(0, 0, 300)}, {def, Key(0), Val(0, 0)}}));
  CS_RETURN_IF_ERROR(c->WriteFamilies(db.get(), {{a, Key(1), Val(1, 1, 200)}}));
  CS_RETURN_IF_ERROR(c->DropFamily(db.get(), a));
  CS_RETURN_IF_ERROR(c->WriteFamilies(db.get(), {{def, Key(2), Val(2, 2)}}));
  ColumnFamilyHandle* again = nullptr;
  CS_RETURN_IF_ERROR(c->CreateFamily(db.get(), "a", &again));
  h.push_back(again);
  CS_RETURN_IF_ERROR(
      c->WriteFamilies(db.get(), {{again, Key(0), Val(0, 3)}, {def, Key(0), Val(0, 3)}}));
  CS_RETURN_IF_ERROR(c->WriteFamilies(db.get(), {{again, Key(3), Val(3, 4)}}, Sync()));
  return CloseFamilies(&db, &h);
}

// A crashed DB with three families (one flushed past the WAL, unsynced batches in the
// WAL) is reopened with its families and a new one, and that reopen is cut at every point.
Status FamilyReopenInterrupted(Context* c) {
  std::unique_ptr<DB> db;
  std::vector<ColumnFamilyHandle*> h;
  CS_RETURN_IF_ERROR(c->OpenFamilies({kDefaultColumnFamilyName, "a", "b"}, &h, &db));
  CS_RETURN_IF_ERROR(
      c->WriteFamilies(db.get(), {{h[1], Key(0), Val(0, 0)}, {h[2], Key(0), Val(0, 0)}}, Sync()));
  CS_RETURN_IF_ERROR(
      c->WriteFamilies(db.get(), {{h[1], Key(1), Val(1, 1, 600)}, {h[0], Key(1), Val(1, 1)}}));
  CS_RETURN_IF_ERROR(c->FlushFamilies(db.get(), {h[1]}));
  CS_RETURN_IF_ERROR(
      c->WriteFamilies(db.get(), {{h[2], Key(2), Val(2, 2, 300)}, {h[0], Key(2), Val(2, 2)}}));
  for (ColumnFamilyHandle* f : h) CS_RETURN_IF_ERROR(db->DestroyColumnFamilyHandle(f));
  h.clear();
  CS_RETURN_IF_ERROR(c->CrashAndKeepEverything(&db));
  CS_RETURN_IF_ERROR(c->StartRecording());
  CS_RETURN_IF_ERROR(c->OpenFamilies({kDefaultColumnFamilyName, "a", "b", "c"}, &h, &db));
  CS_RETURN_IF_ERROR(
      c->WriteFamilies(db.get(), {{h[3], Key(0), Val(0, 3)}, {h[2], Key(0), Val(0, 3)}}, Sync()));
  return CloseFamilies(&db, &h);
}

// atomic_flush: batches across every family without the WAL, each group followed by a
// flush of all of them together: after any crash the families stand at the same flush.
Status FamilyAtomicFlush(Context* c) {
  c->options.atomic_flush = true;
  CS_RETURN_IF_ERROR(c->StartRecording());
  std::unique_ptr<DB> db;
  std::vector<ColumnFamilyHandle*> h;
  CS_RETURN_IF_ERROR(c->OpenFamilies({kDefaultColumnFamilyName, "a", "b"}, &h, &db));
  for (int r = 0; r < 2; r++) {
    for (int i = 0; i < 2; i++) {
      CS_RETURN_IF_ERROR(c->WriteFamilies(db.get(),
                                          {{h[0], Key(i), Val(i, r)},
                                           {h[1], Key(i), Val(i, r, 300)},
                                           {h[2], Key(i + r), Val(i, r, 200)}},
                                          NoWal()));
    }
    CS_RETURN_IF_ERROR(c->FlushFamilies(db.get(), h));
  }
  return CloseFamilies(&db, &h);
}

// Four threads write their own keys at once through the write group, every third write
// synced: each thread's keys a prefix of its writes, and a write acknowledged before
// another was issued kept whenever the other is (families.h, several writers).
Status Writers(Context* c) {
  c->writers = true;
  CS_RETURN_IF_ERROR(c->StartRecording());
  c->GroupWriters();
  std::unique_ptr<DB> db;
  CS_RETURN_IF_ERROR(c->Open(&db));
  std::vector<Status> results(4);
  std::vector<std::thread> threads;
  std::latch start(4);  // all threads begin writing together, so that their writes overlap
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([c, &db, &results, &start, t] {
      c->WriterBegin();
      start.arrive_and_wait();
      const std::string mine = "t" + std::to_string(t) + "/";
      for (int i = 0; i < 5 && results[t].ok(); i++) {
        results[t] = c->Put(db.get(), mine + Key(i % 3), Val(i, t, 200),
                            i % 3 == 2 ? Sync() : WriteOptions());
      }
      c->WriterDone();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& s : results) CS_RETURN_IF_ERROR(s);
  return db->Close();
}

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
      {"manifest_rollover", "flushes and a compaction rolling a tiny MANIFEST over", false,
       ManifestRollover},
      {"checkpoint", "two checkpoints of a DB being written, one flushing, one copying the WAL",
       false, CheckpointWorkload},
      {"recovery_interrupted", "the recovery of a crashed DB cut at every point", false,
       RecoveryInterrupted},
      {"two_phase", "2PC prepare, commit, rollback, one left prepared (WRITE_COMMITTED)", false,
       TwoPhaseCommitted},
      {"write_prepared", "the same under WRITE_PREPARED", false, TwoPhasePrepared},
      {"cf_create_write", "a family made, written alone and in a batch with the default", false,
       FamilyCreateWrite},
      {"cf_batches", "batches across three families flushed at different times", false,
       FamilyBatches},
      {"cf_drop_recreate", "a family dropped amid writes and made again by its name", false,
       FamilyDropRecreate},
      {"cf_reopen_interrupted", "a crashed DB's reopen with its families and a new one, cut", false,
       FamilyReopenInterrupted},
      {"cf_atomic_flush", "atomic_flush: batches without the WAL across families, flushes", false,
       FamilyAtomicFlush},
      {"writers", "four threads writing at once, some synced (group commit)", false, Writers},
      {"long_mixed", "mixed writes, WAL switches, flushes, compactions, a reopen", true, LongMixed},
  };
  return kAll;
}

}  // namespace shale::crash_states
