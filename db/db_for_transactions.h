// DBForTransactions: the door between the transaction layer (utilities/transactions/) and
// the DB. A TransactionDB or OptimisticTransactionDB reaches the engine only through this
// interface and the small headers it includes, never through DBImpl, so that the engine's
// internals can change without the transaction layer knowing.
//
// What goes through it: writes that carry transaction state (TxnWrite: prepares, commits,
// rollbacks, WAL-only markers, a write that only takes a number), the resolution of a
// prepare's WAL, reads through a visibility callback (WritePrepared), the conflict check's
// newest-sequence lookup (both kinds of transaction), snapshots with a known
// min_uncommitted, and the snapshot checker that keeps flushes and compactions from
// dropping what an uncommitted-aware reader still needs.
//
// Thread safety: every method may be called from any thread, concurrently with the DB's
// own writes and reads, unless its comment says otherwise. None of them takes the DB mutex
// while the caller holds a lock of the transaction layer's, except SnapshotsUpTo and
// GetSnapshotWithMinUncommitted, which take only the snapshot list's leaf lock.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "db/pre_release_callback.h"
#include "db/recovered_transaction.h"
#include "db/snapshot_checker.h"
#include "shale/db.h"
#include "util/read_callback.h"

namespace shale {

class DBForTransactions {
 public:
  // Opens the DB a TransactionDB stacks on. seq_per_batch: WritePrepared's numbering (one
  // sequence per sub-batch, db/sub_batch.h), which recovery must know before it replays
  // the WAL. *dbptr implements DBForTransactions (From finds it).
  static Status Open(const Options& options, const std::string& dbname, bool seq_per_batch,
                     DB** dbptr);
  // The same with column families, as DB::Open with descriptors: *handles gets one handle
  // per descriptor, in their order, owned by the caller.
  static Status Open(const DBOptions& db_options, const std::string& dbname,
                     const std::vector<ColumnFamilyDescriptor>& column_families,
                     std::vector<ColumnFamilyHandle*>* handles, bool seq_per_batch, DB** dbptr);
  // The engine beneath db and any StackableDB layers over it; null if db is not one of
  // ours.
  static DBForTransactions* From(DB* db);

  // ---- Writes.
  //
  // A write of the transaction layer:
  //   wal_only   `batch` reaches the WAL alone and consumes no sequence: a prepare
  //              (BeginPrepare, the records, EndPrepare(xid): WriteBatchInternal::
  //              MarkEndPrepare) or a Rollback(xid) marker. A WAL holding a prepare is kept
  //              (with the ones after it) until MarkPrepareResolved names it.
  //   txn_batch  commit of a prepared transaction: the WAL gets `batch` (the commit-time
  //              records, then Commit(xid)); the memtable gets `batch`'s records, then
  //              txn_batch's (the prepared ones, not logged again), numbered on from
  //              `batch`'s. prep_log: the WAL holding the prepare, kept until the memtable
  //              these records go to is flushed.
  // With seq_per_batch (WritePrepared) instead: a prepare goes to the memtable too, under
  // its own numbers; every write takes one number per sub-batch, a wal_only one exactly one
  // (with the WAL off: a commit that only takes its number); there is no txn_batch, and
  // prep_log is kept until the memtable `batch`'s records go to is flushed.
  // pre_release: called with the numbers before they can be published
  // (db/pre_release_callback.h says when, per write mode).
  // *log_used (may be null): the WAL the batch went to. *seq_used (may be null): the first
  // sequence of the write's records (a write that takes none: the last one published).
  struct TxnWrite {
    bool wal_only = false;
    PreReleaseCallback* pre_release = nullptr;
    const WriteBatch* txn_batch = nullptr;
    uint64_t prep_log = 0;
    uint64_t* log_used = nullptr;
    SequenceNumber* seq_used = nullptr;
  };
  virtual Status WriteTxn(const WriteOptions& o, WriteBatch* batch, const TxnWrite& t) = 0;
  // WriteTxn of an empty batch, wal_only, with the WAL off: takes one number, runs
  // pre_release (may be null) with it and publishes it. With seq_per_batch and two write
  // queues, while no write is in the second queue, without queueing.
  virtual Status WriteNumberOnly(PreReleaseCallback* pre_release) = 0;
  // The prepare in WAL `log` was committed or rolled back: that WAL need no longer be kept
  // for it (once the commit's memtable is flushed, for a commit).
  virtual void MarkPrepareResolved(uint64_t log) = 0;
  // Prepared transactions that recovery found unresolved in the WAL (allow_2pc), by name.
  // Each keeps its WAL until MarkPrepareResolved(log_number). The caller takes them: a
  // second call returns none.
  virtual std::map<std::string, RecoveredTransaction> TakeRecoveredTransactions() = 0;

  // ---- Reads through a visibility callback: the public read of the same name with
  // entries `callback` hides treated as absent in every source (memtables, files, both
  // iterator directions, merge operands and bases, tombstones). Without o.snapshot,
  // callback->Refresh(the view's sequence) runs before the read looks at anything. Get,
  // MultiGet and GetMergeOperands only use callback during the call; the iterator owns its
  // callback.
  virtual Status GetWithCallback(const ReadOptions& o, ColumnFamilyHandle* cf, const Slice& key,
                                 PinnableSlice* value, ReadCallback* callback) = 0;
  virtual void MultiGetWithCallback(const ReadOptions& o, ColumnFamilyHandle* cf, size_t num_keys,
                                    const Slice* keys, PinnableSlice* values, Status* statuses,
                                    bool sorted_input, ReadCallback* callback) = 0;
  virtual Iterator* NewIteratorWithCallback(const ReadOptions& o, ColumnFamilyHandle* cf,
                                            std::unique_ptr<ReadCallback> callback) = 0;
  virtual Status GetMergeOperandsWithCallback(const ReadOptions& o, ColumnFamilyHandle* cf,
                                              const Slice& key, PinnableSlice* merge_operands,
                                              GetMergeOperandsOptions* gmo, int* number_of_operands,
                                              ReadCallback* callback) = 0;

  // ---- Conflict checks. The newest sequence at which key was written (Put, Merge,
  // Delete or SingleDelete) in column family cf (null: the default) in its current
  // memtables and, unless cache_only, its files: *found tells whether any was. With
  // cache_only and nothing found, *seq is the smallest sequence from which on every write
  // to the family is in a memtable, so that a caller can tell whether their history reaches
  // back far enough (else TryAgain). InvalidArgument for a handle of another DB; a dropped
  // family answers from what it held.
  virtual Status GetLatestSequenceForKey(ColumnFamilyHandle* cf, const Slice& key, bool cache_only,
                                         SequenceNumber* seq, bool* found) = 0;

  // ---- Sequences and snapshots (WritePrepared).
  // The newest sequence published to readers (DB::GetLatestSequenceNumber).
  virtual SequenceNumber GetLatestSequenceNumber() const = 0;
  // The min_uncommitted a snapshot of this DB was taken with (kMinUnCommittedSeq when
  // unknown: a plain GetSnapshot).
  static SequenceNumber MinUncommittedOf(const Snapshot* snapshot);
  // GetSnapshot with min_uncommitted, the smallest uncommitted number taken before the
  // call, kept in the snapshot (SnapshotImpl::min_uncommitted).
  virtual const Snapshot* GetSnapshotWithMinUncommitted(SequenceNumber min_uncommitted) = 0;
  // The sequences of the live snapshots at or below max, ascending (the commit cache asks
  // when it evicts, inside a write's pre-release callback). Takes only the snapshot list's
  // own lock, a leaf: never the DB mutex.
  virtual std::vector<SequenceNumber> SnapshotsUpTo(SequenceNumber max) = 0;
  // WritePrepared: data reaches the memtable before it commits. Every flush and compaction
  // that starts after this call asks checker which snapshots see an entry
  // (db/snapshot_checker.h) and holds a snapshot of its own while it runs; a job already
  // running keeps the checker it started with, which shared ownership keeps alive. Until it
  // is called (or after it is called with null), jobs of a DB opened with seq_per_batch
  // keep every entry unchanged, and those of any other DB judge every entry committed.
  // Call it right after Open.
  virtual void SetSnapshotChecker(std::shared_ptr<const SnapshotChecker> checker) = 0;

 protected:
  ~DBForTransactions() = default;
};

}  // namespace shale
