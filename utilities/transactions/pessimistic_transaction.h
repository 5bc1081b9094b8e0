// PessimisticTransaction: a transaction of a PessimisticTransactionDB, which locks every
// key it writes or reads for update (through the DB's PointLockManager) and checks it
// against its snapshot once locked. It owns the life cycle: names, the state machine
// below, expiration, and Prepare/Commit/Rollback's checks. How the writes reach the DB at
// each step is the write policy's, a subclass's (WriteCommittedTxn; WritePrepared next).
//
// States: STARTED -Prepare-> AWAITING_PREPARE -> PREPARED -Commit-> AWAITING_COMMIT ->
// COMMITTED; STARTED -Commit (skip_prepare)-> AWAITING_COMMIT -> COMMITTED; PREPARED
// -Rollback-> AWAITING_ROLLBACK -> ROLLEDBACK. A failed step goes back where it started.
// An expired transaction (expiration passed) in STARTED may have its locks stolen by
// another transaction's lock request (-> LOCKS_STOLEN, which can only be rolled back);
// leaving STARTED through a compare-and-swap is what keeps a committing transaction's
// locks from being stolen under it.
//
// Thread safety: one thread at a time, except state_, which the lock manager's thread
// reads and swaps (TryStealingLocks) under the DB's expirable-transactions mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "db/recovered_transaction.h"
#include "db/write_batch_internal.h"
#include "shale/utilities/transaction_db.h"
#include "utilities/transactions/point_lock_manager.h"
#include "utilities/transactions/transaction_base.h"

namespace shale {

class DBForTransactions;
class PessimisticTransactionDB;

class PessimisticTransaction : public TransactionBaseImpl {
 public:
  PessimisticTransaction(PessimisticTransactionDB* txn_db, const WriteOptions& write_options,
                         const TransactionOptions& txn_options);
  // Releases the locks and the name; a prepared transaction's prepare stays in the WAL.
  ~PessimisticTransaction() override;

  // Starts afresh (BeginTransaction's old_txn): as if deleted and created again.
  void Reinitialize(const WriteOptions& write_options, const TransactionOptions& txn_options);

  Status Prepare() final;
  Status Commit() final;
  Status Rollback() final;

  Status SetName(const TransactionName& name) override;
  TransactionName GetName() const override { return name_; }
  TransactionID GetID() const override { return id_; }
  TransactionState GetState() const override { return state_.load(std::memory_order_acquire); }
  void SetLockTimeout(int64_t timeout) override;

  // True once the expiration time has passed.
  bool IsExpired() const;
  // The lock manager asks (under the DB's expirable mutex) whether this expired
  // transaction gives its locks up: yes if it is still STARTED, which it then leaves for
  // LOCKS_STOLEN.
  bool TryStealingLocks();

  // Recovery: replays a prepared transaction's records into this fresh, named
  // transaction, then makes it PREPARED in the WAL that holds it. families: the DB's
  // handles by family id; a record of a family not among them (dropped since) is left out.
  // Each key is locked if it
  // is free; one that another recovered transaction holds already (possible only if an
  // owner deleted a prepared transaction unresolved and a later one took its keys) is
  // written unlocked rather than making Open fail.
  Status RestorePrepared(const RecoveredTransaction& recovered,
                         const std::map<uint32_t, ColumnFamilyHandle*>& families);

  uint64_t expiration_time_us() const { return expiration_time_us_; }

 protected:
  // The write policy. Each is called in its AWAITING_* state with the locks held, and
  // returns the write's status; the state moves on only if it is OK.
  // Prepare: log the batch as prepared under name_, set log_number_.
  virtual Status PrepareInternal() = 0;
  // Commit of a STARTED transaction: apply the batch and the commit-time batch.
  virtual Status CommitWithoutPrepareInternal() = 0;
  // Commit of a PREPARED one (prepare in WAL log_number_).
  virtual Status CommitInternal() = 0;
  // Rollback of a PREPARED one.
  virtual Status RollbackInternal() = 0;
  // What Prepare logs: BeginPrepare (tagged with the write policy, which recovery checks),
  // the transaction's records, EndPrepare(name_).
  Status PreparedBatch(WriteBatch* prepared, PreparePolicy policy);
  // What a commit without Prepare writes: the transaction's records, then the commit-time
  // batch's (concatenated in *combined when there are both). *records is null when there
  // is nothing to write: a transaction that wrote nothing logs nothing.
  Status RecordsToCommit(WriteBatch* combined, WriteBatch** records);
  // Whether a write at seq is visible at snapshot (the conflict check's question).
  virtual bool VisibleAt(SequenceNumber seq, SequenceNumber snapshot) const {
    return seq <= snapshot;
  }
  // RestorePrepared's last step, for what the policy keeps of a recovered prepare.
  virtual void OnRestored(const RecoveredTransaction& /*recovered*/) {}

  Status TryLock(ColumnFamilyHandle* cf, const Slice& key, bool read_only, bool exclusive,
                 bool do_validate, bool assume_tracked) override;
  void UnlockKeys(uint32_t cf_id, const std::vector<std::string>& keys) override;

  PessimisticTransactionDB* const txn_db_;
  DBForTransactions* const engine_;
  TransactionName name_;
  // The WAL holding this transaction's prepare; 0 before Prepare.
  uint64_t log_number_ = 0;

 private:
  void Initialize(const TransactionOptions& txn_options);
  // Releases the locks and the name, forgets the writes: the end of any life.
  void Release();
  // Checks key of family cf, locked, against the snapshot: Busy if someone wrote it after.
  // *seq: the sequence it is now known good at.
  Status ValidateSnapshot(ColumnFamilyHandle* cf, const std::string& key, SequenceNumber* seq);

  TransactionID id_ = 0;
  std::atomic<TransactionState> state_{STARTED};
  LockRequester requester_;
  uint64_t expiration_time_us_ = 0;  // 0: never expires
  bool skip_concurrency_control_ = false;
  bool skip_prepare_ = true;
  bool restoring_ = false;  // inside RestorePrepared
};

// The keys batch writes, by family id, sorted and without duplicates, into *keys. Without
// with_merges, a key only merged into is left out.
Status CollectWrittenKeys(const WriteBatch& batch, std::map<uint32_t, std::set<std::string>>* keys,
                          bool with_merges = true);
// The same keys (merges included) as slices into batch (which must outlive them), sorted
// and unique per family, the families in id order.
Status CollectSortedKeys(const WriteBatch& batch, std::map<uint32_t, std::vector<Slice>>* keys);

// The WRITE_COMMITTED policy: nothing reaches the memtable before Commit. A prepare is
// logged in the WAL only; the commit logs a commit marker and applies the records.
class WriteCommittedTxn final : public PessimisticTransaction {
 public:
  using PessimisticTransaction::PessimisticTransaction;

 private:
  Status PrepareInternal() override;
  Status CommitWithoutPrepareInternal() override;
  Status CommitInternal() override;
  Status RollbackInternal() override;
};

}  // namespace shale
