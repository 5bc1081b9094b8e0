#include "utilities/transactions/write_prepared_txn_db.h"

#include <map>
#include <vector>

#include "db/db_for_transactions.h"
#include "db/pre_release_callback.h"

namespace shale {

namespace {

// Records each number of a write as prepared (a prepare, or the first step of a write
// that commits through the second queue).
class PrepareCallback final : public PreReleaseCallback {
 public:
  explicit PrepareCallback(WritePreparedVisibility* visibility) : visibility_(visibility) {}
  void Callback(SequenceNumber first_seq, uint64_t count, uint64_t) override {
    for (uint64_t i = 0; i < count; i++) visibility_->AddPrepared(first_seq + i);
    first = first_seq;
    this->count = count;
  }
  SequenceNumber first = 0;
  uint64_t count = 0;

 private:
  WritePreparedVisibility* const visibility_;
};

// Commits, at the write's last number, up to two ranges (a write's prepared step, a
// prepare committing with it; empty ones are skipped) and (commit_own) the write's own
// numbers. (Held inline: a vector of ranges cost an allocation per commit.)
class CommitCallback final : public PreReleaseCallback {
 public:
  using Range = std::pair<SequenceNumber, uint64_t>;  // first number, count
  CommitCallback(WritePreparedVisibility* visibility, Range first, Range second, bool commit_own)
      : visibility_(visibility), ranges_{first, second}, commit_own_(commit_own) {}
  void Callback(SequenceNumber first_seq, uint64_t count, uint64_t) override {
    const SequenceNumber commit = first_seq + count - 1;
    if (commit_own_) {
      for (uint64_t i = 0; i < count; i++) visibility_->AddCommitted(first_seq + i, commit);
    }
    for (const Range& r : ranges_) {
      for (uint64_t i = 0; i < r.second; i++) visibility_->AddCommitted(r.first + i, commit);
    }
  }

 private:
  WritePreparedVisibility* const visibility_;
  const Range ranges_[2];
  const bool commit_own_;
};

WritePreparedVisibility::Hooks VisibilityHooks(DBForTransactions* db) {
  WritePreparedVisibility::Hooks hooks;
  hooks.live_snapshots = [db](SequenceNumber max) { return db->SnapshotsUpTo(max); };
  hooks.last_published = [db] { return db->GetLatestSequenceNumber(); };
  return hooks;
}

}  // namespace

WritePreparedTxnDB::WritePreparedTxnDB(DB* db, const TransactionDBOptions& txn_db_options)
    : PessimisticTransactionDB(db, txn_db_options),
      two_write_queues_(db->GetDBOptions().two_write_queues),
      visibility_(txn_db_options.wp_commit_cache_bits, txn_db_options.wp_snapshot_cache_bits,
                  VisibilityHooks(engine())),
      checker_(std::make_shared<WritePreparedSnapshotChecker>(&visibility_)) {
  // Before the first write: every flush and compaction from now on keeps what a reader of
  // uncommitted-aware snapshots needs.
  engine()->SetSnapshotChecker(checker_);
}

WritePreparedTxnDB::~WritePreparedTxnDB() {
  // The checker points into visibility_, which dies before the base classes close the DB:
  // close it here, so that no flush or compaction runs with the checker afterwards.
  engine()->SetSnapshotChecker(nullptr);
  Close().PermitUncheckedError();
}

PessimisticTransaction* WritePreparedTxnDB::NewTransaction(const WriteOptions& write_options,
                                                           const TransactionOptions& txn_options) {
  return new WritePreparedTxn(this, write_options, txn_options);
}

Status WritePreparedTxnDB::OnRecovery(const std::map<std::string, RecoveredTransaction>& found) {
  for (const auto& [name, t] : found) {
    for (uint64_t i = 0; i < t.sub_batches; i++) visibility_.AddPrepared(t.prepare_seq + i);
  }
  // Whatever else was recovered is committed: there is no commit cache entry for it, so
  // the maximum moves past it (the prepared ones above become delayed prepares).
  visibility_.AdvanceMaxEvictedSeq(0, engine()->GetLatestSequenceNumber());
  // A read is only trusted above the maximum (SnapshotIsSafe): one number more makes the
  // recovered state readable.
  return AdvanceSeqByOne();
}

Status WritePreparedTxnDB::AdvanceSeqByOne() { return engine()->WriteNumberOnly(nullptr); }

Status WritePreparedTxnDB::WaitForSafeSnapshot() {
  // The maximum can reach the newest number (a commit evicted at once, its distance from
  // the prepare too large for a slot), and then no later write need ever come: take the
  // next number ourselves, as RocksDB's GetSnapshot does. If that fails, no write can
  // (a background error, a shutdown): waiting for one would never end, so the reader
  // gives up, with RocksDB's status for a read whose view is not safe.
  Status s = AdvanceSeqByOne();
  if (s.ok()) return s;
  return Status::TryAgain(
      "the read's sequence is not above max_evicted_seq, and no write can "
      "move past it: " +
      s.ToString());
}

// ---- Reads.

std::unique_ptr<WritePreparedReadCallback> WritePreparedTxnDB::NewReadCallback(
    const ReadOptions& options) const {
  if (options.snapshot != nullptr) {
    // A snapshot of this DB's (GetSnapshot) knows its smallest uncommitted number; one
    // taken otherwise says kMinUnCommittedSeq, and every entry gets the full check.
    return std::make_unique<WritePreparedReadCallback>(
        &visibility_, options.snapshot->GetSequenceNumber(),
        DBForTransactions::MinUncommittedOf(options.snapshot));
  }
  // Taken before the read takes its view's sequence, so that it is a lower bound for that
  // sequence's uncommitted data (wp_visibility.h).
  const SequenceNumber min_uncommitted = visibility_.SmallestUncommitted();
  return std::make_unique<WritePreparedReadCallback>(&visibility_, kMaxSequenceNumber,
                                                     min_uncommitted);
}

template <typename Read>
Status WritePreparedTxnDB::ReadWithRetry(const ReadOptions& options, Read read) {
  for (;;) {
    std::unique_ptr<WritePreparedReadCallback> callback = NewReadCallback(options);
    Status s = read(callback.get());
    // A snapshot is safe by construction (GetSnapshot); a read's own view may have been
    // overtaken by an eviction that did not know of it: then it is read again.
    if (options.snapshot != nullptr || visibility_.SnapshotIsSafe(callback->max_visible_seq())) {
      return s;
    }
    Status wait = WaitForSafeSnapshot();
    if (!wait.ok()) return wait;
  }
}

Status WritePreparedTxnDB::Get(const ReadOptions& options, ColumnFamilyHandle* column_family,
                               const Slice& key, PinnableSlice* value) {
  return ReadWithRetry(options, [&](ReadCallback* callback) {
    return engine()->GetWithCallback(options, column_family, key, value, callback);
  });
}

void WritePreparedTxnDB::MultiGet(const ReadOptions& options, ColumnFamilyHandle* column_family,
                                  size_t num_keys, const Slice* keys, PinnableSlice* values,
                                  Status* statuses, bool sorted_input) {
  ReadWithRetry(options, [&](ReadCallback* callback) {
    engine()->MultiGetWithCallback(options, column_family, num_keys, keys, values, statuses,
                                   sorted_input, callback);
    return Status::OK();
  }).PermitUncheckedError();
}

std::vector<Status> WritePreparedTxnDB::MultiGet(
    const ReadOptions& options, const std::vector<ColumnFamilyHandle*>& column_families,
    const std::vector<Slice>& keys, std::vector<std::string>* values) {
  const size_t n = keys.size();
  std::vector<Status> statuses(n);
  values->assign(n, std::string());
  if (column_families.size() != n) {
    statuses.assign(n, Status::InvalidArgument("one column family per key"));
    return statuses;
  }
  // One MultiGet per family, all at one snapshot (the caller's, or one taken for the call),
  // so that the answers are consistent across families.
  ReadOptions at = options;
  const Snapshot* own = nullptr;
  if (at.snapshot == nullptr) {
    own = GetSnapshot();
    if (own == nullptr) {
      statuses.assign(n, Status::TryAgain("no snapshot for MultiGet"));
      return statuses;
    }
    at.snapshot = own;
  }
  std::map<ColumnFamilyHandle*, std::vector<size_t>> by_family;
  for (size_t i = 0; i < n; i++) {
    ColumnFamilyHandle* cf = column_families[i];
    by_family[cf == nullptr ? DefaultColumnFamily() : cf].push_back(i);
  }
  for (const auto& [cf, indexes] : by_family) {
    const size_t m = indexes.size();
    std::vector<Slice> family_keys(m);
    for (size_t j = 0; j < m; j++) family_keys[j] = keys[indexes[j]];
    std::vector<PinnableSlice> pinned(m);
    std::vector<Status> family_statuses(m);
    MultiGet(at, cf, m, family_keys.data(), pinned.data(), family_statuses.data());
    for (size_t j = 0; j < m; j++) {
      statuses[indexes[j]] = family_statuses[j];
      if (family_statuses[j].ok()) (*values)[indexes[j]].assign(pinned[j].data(), pinned[j].size());
    }
  }
  if (own != nullptr) ReleaseSnapshot(own);
  return statuses;
}

Status WritePreparedTxnDB::GetMergeOperands(const ReadOptions& options,
                                            ColumnFamilyHandle* column_family, const Slice& key,
                                            PinnableSlice* merge_operands,
                                            GetMergeOperandsOptions* get_merge_operands_options,
                                            int* number_of_operands) {
  return ReadWithRetry(options, [&](ReadCallback* callback) {
    return engine()->GetMergeOperandsWithCallback(options, column_family, key, merge_operands,
                                                  get_merge_operands_options, number_of_operands,
                                                  callback);
  });
}

Iterator* WritePreparedTxnDB::NewIterator(const ReadOptions& options,
                                          ColumnFamilyHandle* column_family) {
  if (options.snapshot != nullptr) {
    return engine()->NewIteratorWithCallback(options, column_family, NewReadCallback(options));
  }
  // An iterator may outlive many evictions: it reads at a snapshot of its own, which the
  // commit cache's bookkeeping knows of, released with the iterator.
  const Snapshot* own = GetSnapshot();
  if (own == nullptr) {
    return NewErrorIterator(
        Status::TryAgain("no snapshot for the iterator: no write can move "
                         "the sequence past max_evicted_seq"));
  }
  ReadOptions at_own = options;
  at_own.snapshot = own;
  Iterator* it = engine()->NewIteratorWithCallback(at_own, column_family, NewReadCallback(at_own));
  DB* base = GetBaseDB();
  it->RegisterCleanup(
      [](void* db, void* snapshot) {
        static_cast<DB*>(db)->ReleaseSnapshot(static_cast<const Snapshot*>(snapshot));
      },
      base, const_cast<Snapshot*>(own));
  return it;
}

const Snapshot* WritePreparedTxnDB::GetSnapshot() {
  for (;;) {
    // Taken before the snapshot's sequence: a lower bound for what it may not see.
    const SequenceNumber min_uncommitted = visibility_.SmallestUncommitted();
    const Snapshot* snapshot = engine()->GetSnapshotWithMinUncommitted(min_uncommitted);
    if (visibility_.SnapshotIsSafe(snapshot->GetSequenceNumber())) return snapshot;
    GetBaseDB()->ReleaseSnapshot(snapshot);
    // No safe snapshot can be had while no write can be made: none (DB::GetSnapshot's
    // answer when it cannot take one).
    if (!WaitForSafeSnapshot().ok()) return nullptr;
  }
}

// ---- Writes.

Status WritePreparedTxnDB::WriteAndCommit(const WriteOptions& options, WriteBatch* batch,
                                          std::pair<SequenceNumber, uint64_t> prepared,
                                          uint64_t prep_log) {
  DBForTransactions::TxnWrite t;
  t.prep_log = prep_log;
  if (!two_write_queues_) {
    // One write, committed at its own last number before it is published.
    CommitCallback commit(&visibility_, prepared, {0, 0}, /*commit_own=*/true);
    t.pre_release = &commit;
    Status s = engine()->WriteTxn(options, batch, t);
    if (s.ok() && prepared.second > 0) visibility_.RemovePrepared(prepared.first, prepared.second);
    return s;
  }
  // The main queue publishes nothing: the records go in as prepared, then a number from the
  // second queue commits them once they are all in the memtable. (A failure after the first
  // step leaves them prepared: hidden, as a write that failed must be.)
  PrepareCallback prepare(&visibility_);
  t.pre_release = &prepare;
  Status s = engine()->WriteTxn(options, batch, t);
  if (!s.ok()) return s;
  // The first step's record needs no marker to count: the commit takes a number only.
  CommitCallback commit(&visibility_, {prepare.first, prepare.count}, prepared,
                        /*commit_own=*/false);
  s = engine()->WriteNumberOnly(&commit);
  if (!s.ok()) return s;
  visibility_.RemovePrepared(prepare.first, prepare.count);
  if (prepared.second > 0) visibility_.RemovePrepared(prepared.first, prepared.second);
  return s;
}

Status WritePreparedTxnDB::Prepare(const WriteOptions& options, WriteBatch* prepared,
                                   SequenceNumber* prepare_seq, uint64_t* count, uint64_t* log) {
  PrepareCallback prepare(&visibility_);
  uint64_t log_used = 0;
  DBForTransactions::TxnWrite t;
  t.pre_release = &prepare;
  t.log_used = &log_used;
  Status s = engine()->WriteTxn(options, prepared, t);
  if (!s.ok()) return s;
  *prepare_seq = prepare.first;
  *count = prepare.count;
  *log = log_used;
  return s;
}

Status WritePreparedTxnDB::CommitPrepared(const WriteOptions& options, WriteBatch* marker,
                                          SequenceNumber prepare_seq, uint64_t count) {
  CommitCallback commit(&visibility_, {prepare_seq, count}, {0, 0}, /*commit_own=*/false);
  DBForTransactions::TxnWrite t;
  t.wal_only = true;
  t.pre_release = &commit;
  Status s = engine()->WriteTxn(options, marker, t);
  if (s.ok()) visibility_.RemovePrepared(prepare_seq, count);
  return s;
}

}  // namespace shale
