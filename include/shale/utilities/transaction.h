// Transaction: a unit of reads and writes on a TransactionDB that commits atomically or
// not at all, as RocksDB's. Writes gather in the transaction's WriteBatchWithIndex and
// reach the DB at Commit; reads through the transaction see them over the DB's data.
//
// Pessimistic concurrency: every write, and GetForUpdate, locks its key (exclusively, or
// shared for GetForUpdate(exclusive = false)) until Commit or Rollback, so a key one
// transaction holds cannot be written by another. With a snapshot set (SetSnapshot), a
// key written by anyone else after the snapshot cannot be locked: the call answers Busy
// and the transaction should be rolled back and retried.
//
// Statuses of the locking calls (Put, Merge, Delete, SingleDelete, the Untracked ones,
// GetForUpdate): OK; Busy (a write conflict under the snapshot); TimedOut (kLockTimeout:
// the lock was not granted within the lock timeout); Busy with IsDeadlock() (waiting would
// close a cycle, with deadlock_detect); Aborted with IsLockLimit() (max_num_locks keys
// are locked); Aborted(kMemoryLimit) when a write would pass max_write_batch_size;
// InvalidArgument for a column family the TransactionDB does not know (not opened or
// created through it), or for a write once the transaction is no longer STARTED (prepared,
// committed, ...); ColumnFamilyDropped when the family is dropped while the call waits for
// its lock; or a read error.
//
// Column families: every call takes a handle (none: the default family). Keys are locked,
// checked and read per family, so the same key in two families is two keys; a commit
// writes every family's records atomically. The handles must stay valid until the
// transaction commits, rolls back or is deleted.
//
// Two-phase commit: SetName, then Prepare makes the writes durable in the WAL without
// applying them; Commit (or Rollback) later resolves them, also after a crash and
// TransactionDB::Open, which brings prepared transactions back (see transaction_db.h).
//
// Thread safety: one thread at a time per Transaction. Distinct transactions may run in
// parallel. Ownership: the caller deletes a Transaction it got from BeginTransaction (or
// GetTransactionByName, see transaction_db.h) before the TransactionDB. Deleting one that
// is not committed drops its writes and releases its locks; a prepared one stays in the
// WAL and comes back at the next TransactionDB::Open.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shale/db.h"
#include "shale/iterator.h"
#include "shale/options.h"
#include "shale/slice.h"
#include "shale/snapshot.h"
#include "shale/status.h"
#include "shale/utilities/lock_info.h"

namespace shale {

class WriteBatchWithIndex;

using TransactionName = std::string;

// Told when a snapshot that SetSnapshotOnNextOperation asked for is taken.
class TransactionNotifier {
 public:
  virtual ~TransactionNotifier() = default;
  // new_snapshot is the transaction's; it lives as long as GetSnapshot() returns it.
  virtual void SnapshotCreated(const Snapshot* new_snapshot) = 0;
};

class Transaction {
 public:
  enum TransactionState {
    STARTED = 0,
    AWAITING_PREPARE = 1,
    PREPARED = 2,
    AWAITING_COMMIT = 3,
    COMMITTED = 4,
    COMMITED = COMMITTED,  // RocksDB's old spelling
    AWAITING_ROLLBACK = 5,
    ROLLEDBACK = 6,
    LOCKS_STOLEN = 7,  // expired, and another transaction took its locks
  };

  Transaction() = default;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  virtual ~Transaction() = default;

  // Snapshots. A key locked after SetSnapshot must not have been written by anyone else
  // since the snapshot (else Busy); without a snapshot, since the key was first locked.
  // Calling it again moves the snapshot forward for keys locked from then on. It does
  // not change what Get reads: pass GetSnapshot() in ReadOptions for that.
  virtual void SetSnapshot() = 0;
  // Takes the snapshot just before the next write or GetForUpdate (so that a write
  // between now and then is no conflict), then calls notifier (may be null).
  virtual void SetSnapshotOnNextOperation(
      std::shared_ptr<TransactionNotifier> notifier = nullptr) = 0;
  // The current snapshot or null; valid until the next SetSnapshot, ClearSnapshot,
  // RollbackToSavePoint, Commit, Rollback or the transaction's deletion.
  virtual const Snapshot* GetSnapshot() const = 0;
  // Drops the snapshot (and a pending SetSnapshotOnNextOperation).
  virtual void ClearSnapshot() = 0;

  // Writes the batch to the WAL between prepare markers, named GetName(); the writes stay
  // invisible and their keys locked until Commit or Rollback. InvalidArgument without a
  // name or when not STARTED; Expired past the expiration; a write error.
  virtual Status Prepare() = 0;
  // Applies the writes (and GetCommitTimeWriteBatch's) atomically and releases the locks.
  // Without Prepare this needs TransactionOptions::skip_prepare (else TxnNotPrepared).
  // Expired when the transaction lived past its expiration (its writes are dropped);
  // InvalidArgument when already committed or rolled back; or a write error.
  virtual Status Commit() = 0;
  // Discards the writes and releases the locks; a prepared transaction also logs its
  // rollback. InvalidArgument when already committed.
  virtual Status Rollback() = 0;

  // Save points: RollbackToSavePoint undoes the writes (and the locks taken, and a
  // snapshot set) since the newest SetSavePoint and removes it; PopSavePoint removes it
  // and keeps everything. Both answer NotFound when there is no save point.
  virtual void SetSavePoint() = 0;
  virtual Status RollbackToSavePoint() = 0;
  virtual Status PopSavePoint() = 0;

  // The key's value with this transaction's writes applied over the DB as of
  // options.snapshot (the transaction's snapshot is not used unless passed there).
  // NotFound when absent; MergeInProgress when operands cannot be folded (no merge
  // operator). Takes no lock.
  virtual Status Get(const ReadOptions& options, ColumnFamilyHandle* column_family,
                     const Slice& key, std::string* value) = 0;
  virtual Status Get(const ReadOptions& options, const Slice& key, std::string* value) = 0;
  virtual Status Get(const ReadOptions& options, ColumnFamilyHandle* column_family,
                     const Slice& key, PinnableSlice* pinnable_val) = 0;
  virtual Status Get(const ReadOptions& options, const Slice& key, PinnableSlice* pinnable_val) = 0;
  // Get for each key in turn; *values is resized to keys.size().
  virtual std::vector<Status> MultiGet(const ReadOptions& options,
                                       const std::vector<ColumnFamilyHandle*>& column_family,
                                       const std::vector<Slice>& keys,
                                       std::vector<std::string>* values) = 0;
  virtual std::vector<Status> MultiGet(const ReadOptions& options, const std::vector<Slice>& keys,
                                       std::vector<std::string>* values) = 0;

  // Locks the key (exclusive or shared), checks it against the snapshot unless
  // do_validate is false, then reads it as Get does (value may be null: lock only).
  // Statuses: as Get's, and the locking ones in the header comment.
  virtual Status GetForUpdate(const ReadOptions& options, ColumnFamilyHandle* column_family,
                              const Slice& key, std::string* value, bool exclusive = true,
                              const bool do_validate = true) = 0;
  virtual Status GetForUpdate(const ReadOptions& options, ColumnFamilyHandle* column_family,
                              const Slice& key, PinnableSlice* pinnable_val, bool exclusive = true,
                              const bool do_validate = true) = 0;
  virtual Status GetForUpdate(const ReadOptions& options, const Slice& key, std::string* value,
                              bool exclusive = true, const bool do_validate = true) = 0;
  virtual Status GetForUpdate(const ReadOptions& options, const Slice& key,
                              PinnableSlice* pinnable_val, bool exclusive = true,
                              const bool do_validate = true) = 0;

  // The transaction's writes laid over a DB iterator made with read_options, both
  // directions, honouring iterate_lower_bound / iterate_upper_bound (whose Slices must
  // outlive it). The caller deletes it before Commit, Rollback, RollbackToSavePoint or
  // the transaction's deletion.
  virtual Iterator* GetIterator(const ReadOptions& read_options) = 0;
  virtual Iterator* GetIterator(const ReadOptions& read_options,
                                ColumnFamilyHandle* column_family) = 0;

  // Writes, locked and checked as the header says. assume_tracked: the caller knows the
  // key is already locked by this transaction, so the snapshot check is skipped
  // (InvalidArgument if it is not locked).
  virtual Status Put(ColumnFamilyHandle* column_family, const Slice& key, const Slice& value,
                     const bool assume_tracked = false) = 0;
  virtual Status Put(const Slice& key, const Slice& value) = 0;
  virtual Status Merge(ColumnFamilyHandle* column_family, const Slice& key, const Slice& value,
                       const bool assume_tracked = false) = 0;
  virtual Status Merge(const Slice& key, const Slice& value) = 0;
  virtual Status Delete(ColumnFamilyHandle* column_family, const Slice& key,
                        const bool assume_tracked = false) = 0;
  virtual Status Delete(const Slice& key) = 0;
  virtual Status SingleDelete(ColumnFamilyHandle* column_family, const Slice& key,
                              const bool assume_tracked = false) = 0;
  virtual Status SingleDelete(const Slice& key) = 0;

  // Writes that lock their key but skip the snapshot check: for keys the caller knows
  // nobody else writes.
  virtual Status PutUntracked(ColumnFamilyHandle* column_family, const Slice& key,
                              const Slice& value) = 0;
  virtual Status PutUntracked(const Slice& key, const Slice& value) = 0;
  virtual Status MergeUntracked(ColumnFamilyHandle* column_family, const Slice& key,
                                const Slice& value) = 0;
  virtual Status MergeUntracked(const Slice& key, const Slice& value) = 0;
  virtual Status DeleteUntracked(ColumnFamilyHandle* column_family, const Slice& key) = 0;
  virtual Status DeleteUntracked(const Slice& key) = 0;
  virtual Status SingleDeleteUntracked(ColumnFamilyHandle* column_family, const Slice& key) = 0;
  virtual Status SingleDeleteUntracked(const Slice& key) = 0;

  // The number of keys this transaction has locked.
  virtual uint64_t GetNumKeys() const = 0;
  // The pending writes, owned by the transaction. Change them only through the
  // transaction, or its locks no longer cover them.
  virtual WriteBatchWithIndex* GetWriteBatch() = 0;
  // Records written at Commit along with the transaction's, but neither locked nor
  // prepared (with two-phase commit they are logged with the commit marker). Owned by
  // the transaction.
  virtual WriteBatch* GetCommitTimeWriteBatch() = 0;
  // Milliseconds to wait for a lock from now on: 0 tries once, negative waits forever.
  virtual void SetLockTimeout(int64_t timeout) = 0;

  // Names the transaction for two-phase commit: 1 to 512 bytes, unique among the DB's
  // live transactions, set once, before Prepare (InvalidArgument otherwise).
  virtual Status SetName(const TransactionName& name) = 0;
  virtual TransactionName GetName() const = 0;
  // Unique among the DB's transactions while it is open.
  virtual TransactionID GetID() const = 0;
  virtual TransactionState GetState() const = 0;
};

}  // namespace shale
