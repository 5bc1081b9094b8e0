// PessimisticTransactionDB: the TransactionDB of pessimistic transactions. It owns the
// point lock manager, numbers transactions, keeps the registry of named transactions
// (for GetTransactionByName and the prepared ones) and of those that may expire (whose
// locks the lock manager may steal), and locks the keys of plain writes for the write.
// Which write policy its transactions follow is a subclass's choice (NewTransaction);
// WriteCommittedTxnDB is the one there is.
//
// Ownership: recovered prepared transactions belong to this object until one is
// committed or rolled back (then to whoever resolved it); the rest to their callers.
// Thread safety: every method from any thread; the registries are guarded by their
// mutexes, never held while taking a lock of the lock manager (whose stripe mutexes may
// be held while expirable_mu_ is taken, by TryStealExpired). family_mu_ comes first: it is
// held while the DB creates or drops a family (the DB mutex) and while the lock manager
// adds or removes it (its own mutexes), and taken under no other lock.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "db/recovered_transaction.h"
#include "shale/utilities/transaction_db.h"
#include "util/mutexlock.h"
#include "utilities/transactions/point_lock_manager.h"

namespace shale {

class DBForTransactions;
class PessimisticTransaction;

// The default column family's id, whose locks the lock manager always has.
constexpr uint32_t kDefaultFamilyId = 0;

class PessimisticTransactionDB : public TransactionDB {
 public:
  // db is the opened DB (allow_2pc set); this object takes it over.
  PessimisticTransactionDB(DB* db, const TransactionDBOptions& txn_db_options);
  // Deletes the recovered transactions nobody resolved.
  ~PessimisticTransactionDB() override;

  // Registers the families of handles (the DB's, by family id) with the lock manager and
  // adopts the prepared transactions recovery found in the WAL, their records replayed into
  // those handles. Called once, by Open.
  Status Initialize(const std::map<uint32_t, ColumnFamilyHandle*>& handles);
  // The DB a transaction reads through (and takes snapshots of): the base DB, or this one
  // when the policy hides uncommitted data from reads.
  virtual DB* ReadDB() { return GetBaseDB(); }

  Transaction* BeginTransaction(const WriteOptions& write_options,
                                const TransactionOptions& txn_options,
                                Transaction* old_txn) override;
  Transaction* GetTransactionByName(const TransactionName& name) override;
  void GetAllPreparedTransactions(std::vector<Transaction*>* trans) override;
  std::unordered_multimap<uint32_t, KeyLockInfo> GetLockStatusData() override;
  std::vector<DeadlockPath> GetDeadlockInfoBuffer() override;
  void SetDeadlockInfoBufferSize(uint32_t target_size) override;

  // Writes outside a transaction lock their keys (see transaction_db.h).
  using StackableDB::Delete;
  using StackableDB::Merge;
  using StackableDB::Put;
  using StackableDB::SingleDelete;
  Status Put(const WriteOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
             const Slice& value) override;
  Status Put(const WriteOptions& options, const Slice& key, const Slice& value) override;
  Status Delete(const WriteOptions& options, ColumnFamilyHandle* column_family,
                const Slice& key) override;
  Status Delete(const WriteOptions& options, const Slice& key) override;
  Status SingleDelete(const WriteOptions& options, ColumnFamilyHandle* column_family,
                      const Slice& key) override;
  Status SingleDelete(const WriteOptions& options, const Slice& key) override;
  Status Merge(const WriteOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
               const Slice& value) override;
  Status Merge(const WriteOptions& options, const Slice& key, const Slice& value) override;
  Status Write(const WriteOptions& options, WriteBatch* updates) override;
  // skip_concurrency_control: written without locks (a batch with range deletions only so;
  // see transaction_db.h); otherwise as Write above.
  Status Write(const WriteOptions& options, const TransactionDBWriteOptimizations& optimizations,
               WriteBatch* updates) override;

  // Column families come and go in the lock manager with the DB's: a created family's keys
  // can be locked once its handle is returned; a dropped family's locks are dropped and the
  // requests waiting on them end with ColumnFamilyDropped.
  using StackableDB::CreateColumnFamilies;
  using StackableDB::DropColumnFamilies;
  Status CreateColumnFamily(const ColumnFamilyOptions& options, const std::string& name,
                            ColumnFamilyHandle** handle) override EXCLUDES(family_mu_);
  Status CreateColumnFamilies(const ColumnFamilyOptions& options,
                              const std::vector<std::string>& column_family_names,
                              std::vector<ColumnFamilyHandle*>* handles) override;
  Status CreateColumnFamilies(const std::vector<ColumnFamilyDescriptor>& column_families,
                              std::vector<ColumnFamilyHandle*>* handles) override;
  Status DropColumnFamily(ColumnFamilyHandle* column_family) override EXCLUDES(family_mu_);
  Status DropColumnFamilies(const std::vector<ColumnFamilyHandle*>& column_families) override;

  // For the transactions.
  const TransactionDBOptions& txn_db_options() const { return txn_db_options_; }
  PointLockManager* lock_manager() { return &lock_manager_; }
  DBForTransactions* engine() const { return engine_; }
  TransactionID NextTransactionID() { return next_id_.fetch_add(1, std::memory_order_relaxed); }
  // The name registry: InvalidArgument if the name is taken.
  Status RegisterTransaction(const TransactionName& name, PessimisticTransaction* txn)
      EXCLUDES(name_mu_);
  // Removes txn's name (if it holds it); a recovered txn leaves this DB's ownership.
  void UnregisterTransaction(const TransactionName& name, PessimisticTransaction* txn)
      EXCLUDES(name_mu_);
  void InsertExpirableTransaction(TransactionID id, PessimisticTransaction* txn)
      EXCLUDES(expirable_mu_);
  void RemoveExpirableTransaction(TransactionID id) EXCLUDES(expirable_mu_);

 protected:
  // Writes a batch from outside any transaction whose keys are locked (or need no
  // locks): by this DB's write policy. The base DB's own write, by default.
  virtual Status WriteLocked(const WriteOptions& options, WriteBatch* updates);
  // Whether a batch must promise skip_duplicate_key_check to hold a range deletion
  // (WRITE_PREPARED numbers a batch by its keys, RocksDB's rule).
  virtual bool RangeDeletionNeedsNoDuplicates() const { return false; }
  // A transaction of this DB's write policy.
  virtual PessimisticTransaction* NewTransaction(const WriteOptions& write_options,
                                                 const TransactionOptions& txn_options) = 0;
  // Initialize's first step, with what recovery found prepared, before any is adopted.
  virtual Status OnRecovery(const std::map<std::string, RecoveredTransaction>& /*found*/) {
    return Status::OK();
  }

 private:
  // A write of one record: add_to(&batch) fills a batch that Write then applies.
  template <typename AddTo>
  Status WriteOne(const WriteOptions& options, AddTo add_to);
  // The lock manager's question about an expired holder (see PointLockManager::Options).
  bool TryStealExpired(TransactionID id) EXCLUDES(expirable_mu_);

  const TransactionDBOptions txn_db_options_;
  DBForTransactions* const engine_;  // the root of the stack, owned through StackableDB
  PointLockManager lock_manager_;
  std::atomic<TransactionID> next_id_{1};

  // Makes a family's creation or drop in the DB and in the lock manager one step.
  Mutex family_mu_ ACQUIRED_BEFORE(name_mu_, expirable_mu_);

  Mutex name_mu_;
  std::map<TransactionName, PessimisticTransaction*> named_ GUARDED_BY(name_mu_);
  // Recovered transactions not yet resolved: this DB deletes them at the end.
  std::set<PessimisticTransaction*> recovered_ GUARDED_BY(name_mu_);

  Mutex expirable_mu_;
  std::unordered_map<TransactionID, PessimisticTransaction*> expirable_ GUARDED_BY(expirable_mu_);
};

// Transactions whose data reaches the memtable at Commit.
class WriteCommittedTxnDB final : public PessimisticTransactionDB {
 public:
  using PessimisticTransactionDB::PessimisticTransactionDB;

 protected:
  PessimisticTransaction* NewTransaction(const WriteOptions& write_options,
                                         const TransactionOptions& txn_options) override;
};

}  // namespace shale
