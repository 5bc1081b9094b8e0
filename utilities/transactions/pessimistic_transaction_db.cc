#include "utilities/transactions/pessimistic_transaction_db.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "db/db_for_transactions.h"
#include "utilities/transactions/pessimistic_transaction.h"
#include "utilities/transactions/write_prepared_txn_db.h"

namespace shale {

namespace {

PointLockManager::Options LockManagerOptions(const TransactionDBOptions& o, Env* env,
                                             std::function<bool(TransactionID)> steal) {
  PointLockManager::Options lm;
  lm.num_stripes = o.num_stripes;
  lm.max_num_locks = o.max_num_locks;
  lm.max_num_deadlocks = o.max_num_deadlocks;
  lm.env = env;
  lm.try_steal_expired = std::move(steal);
  return lm;
}

}  // namespace

PessimisticTransactionDB::PessimisticTransactionDB(DB* db,
                                                   const TransactionDBOptions& txn_db_options)
    : TransactionDB(db),
      txn_db_options_(txn_db_options),
      engine_(DBForTransactions::From(db)),
      lock_manager_(LockManagerOptions(txn_db_options, db->GetEnv(),
                                       [this](TransactionID id) { return TryStealExpired(id); })) {
  lock_manager_.AddColumnFamily(db->DefaultColumnFamily()->GetID());
}

PessimisticTransactionDB::~PessimisticTransactionDB() {
  std::set<PessimisticTransaction*> orphans;
  {
    MutexLock l(&name_mu_);
    orphans.swap(recovered_);
  }
  // Their prepares stay in the WAL and come back at the next Open.
  for (PessimisticTransaction* txn : orphans) delete txn;
}

Status PessimisticTransactionDB::Initialize(
    const std::map<uint32_t, ColumnFamilyHandle*>& handles) {
  for (const auto& entry : handles) lock_manager_.AddColumnFamily(entry.first);
  std::map<std::string, RecoveredTransaction> found = engine_->TakeRecoveredTransactions();
  Status s = OnRecovery(found);
  if (!s.ok()) return s;
  // Nothing else runs yet, so a lock is taken at once or never (see RestorePrepared).
  TransactionOptions restore;
  restore.lock_timeout = 0;
  for (auto& [name, recovered] : found) {
    std::unique_ptr<PessimisticTransaction> txn(NewTransaction(WriteOptions(), restore));
    s = txn->SetName(name);
    if (s.ok()) s = txn->RestorePrepared(recovered, handles);
    if (!s.ok()) return s;
    MutexLock l(&name_mu_);
    recovered_.insert(txn.release());
  }
  return Status::OK();
}

Transaction* PessimisticTransactionDB::BeginTransaction(const WriteOptions& write_options,
                                                        const TransactionOptions& txn_options,
                                                        Transaction* old_txn) {
  if (old_txn != nullptr) {
    static_cast<PessimisticTransaction*>(old_txn)->Reinitialize(write_options, txn_options);
    return old_txn;
  }
  return NewTransaction(write_options, txn_options);
}

Transaction* PessimisticTransactionDB::GetTransactionByName(const TransactionName& name) {
  MutexLock l(&name_mu_);
  auto it = named_.find(name);
  return it == named_.end() ? nullptr : it->second;
}

void PessimisticTransactionDB::GetAllPreparedTransactions(std::vector<Transaction*>* trans) {
  if (trans == nullptr) return;
  trans->clear();
  MutexLock l(&name_mu_);
  for (const auto& [name, txn] : named_) {
    if (txn->GetState() == Transaction::PREPARED) trans->push_back(txn);
  }
}

std::unordered_multimap<uint32_t, KeyLockInfo> PessimisticTransactionDB::GetLockStatusData() {
  return lock_manager_.GetLockStatusData();
}

std::vector<DeadlockPath> PessimisticTransactionDB::GetDeadlockInfoBuffer() {
  return lock_manager_.GetDeadlockInfoBuffer();
}

void PessimisticTransactionDB::SetDeadlockInfoBufferSize(uint32_t target_size) {
  lock_manager_.Resize(target_size);
}

Status PessimisticTransactionDB::RegisterTransaction(const TransactionName& name,
                                                     PessimisticTransaction* txn) {
  MutexLock l(&name_mu_);
  if (!named_.emplace(name, txn).second) {
    return Status::InvalidArgument("Transaction name must be unique.");
  }
  return Status::OK();
}

void PessimisticTransactionDB::UnregisterTransaction(const TransactionName& name,
                                                     PessimisticTransaction* txn) {
  MutexLock l(&name_mu_);
  auto it = named_.find(name);
  if (it != named_.end() && it->second == txn) named_.erase(it);
  recovered_.erase(txn);
}

void PessimisticTransactionDB::InsertExpirableTransaction(TransactionID id,
                                                          PessimisticTransaction* txn) {
  MutexLock l(&expirable_mu_);
  expirable_[id] = txn;
}

void PessimisticTransactionDB::RemoveExpirableTransaction(TransactionID id) {
  MutexLock l(&expirable_mu_);
  expirable_.erase(id);
}

bool PessimisticTransactionDB::TryStealExpired(TransactionID id) {
  MutexLock l(&expirable_mu_);
  auto it = expirable_.find(id);
  // A holder that is gone released its locks already; one that never expires is not
  // asked about.
  if (it == expirable_.end()) return true;
  return it->second->IsExpired() && it->second->TryStealingLocks();
}

// ---- Writes outside a transaction.

Status PessimisticTransactionDB::Write(const WriteOptions& options, WriteBatch* updates) {
  if (updates == nullptr) return Status::InvalidArgument("Batch is nullptr!");
  if (txn_db_options_.skip_concurrency_control) {
    TransactionDBWriteOptimizations unlocked;
    unlocked.skip_concurrency_control = true;
    return Write(options, unlocked, updates);
  }
  if (updates->HasDeleteRange()) {
    return Status::InvalidArgument(
        "a range deletion cannot be locked: write it with "
        "TransactionDBWriteOptimizations::skip_concurrency_control");
  }
  // What an internal transaction would do, without one: lock the batch's keys in sorted
  // order, family by family (two such writes then never wait for each other in a cycle),
  // write, unlock.
  std::map<uint32_t, std::vector<Slice>> keys;
  Status s = CollectSortedKeys(*updates, &keys);
  if (!s.ok()) return s;
  LockRequester requester;
  requester.id = NextTransactionID();
  const int64_t timeout_ms = txn_db_options_.default_lock_timeout;
  requester.lock_timeout_us = timeout_ms < 0 ? -1 : timeout_ms * 1000;
  std::map<uint32_t, std::vector<Slice>> locked;
  for (auto family = keys.begin(); s.ok() && family != keys.end(); ++family) {
    for (const Slice& key : family->second) {
      s = lock_manager_.TryLock(requester, family->first, key, /*exclusive=*/true);
      if (!s.ok()) break;  // key was not taken
      locked[family->first].push_back(key);
    }
  }
  if (s.ok()) s = WriteLocked(options, updates);
  for (const auto& [cf_id, family_keys] : locked) {
    lock_manager_.UnLock(requester.id, cf_id, family_keys);
  }
  return s;
}

Status PessimisticTransactionDB::Write(const WriteOptions& options,
                                       const TransactionDBWriteOptimizations& optimizations,
                                       WriteBatch* updates) {
  if (updates == nullptr) return Status::InvalidArgument("Batch is nullptr!");
  if (!optimizations.skip_concurrency_control) return Write(options, updates);
  if (updates->HasDeleteRange() && RangeDeletionNeedsNoDuplicates() &&
      !optimizations.skip_duplicate_key_check) {
    return Status::InvalidArgument(
        "a range deletion under WRITE_PREPARED needs "
        "TransactionDBWriteOptimizations::skip_duplicate_key_check");
  }
  return WriteLocked(options, updates);
}

Status PessimisticTransactionDB::WriteLocked(const WriteOptions& options, WriteBatch* updates) {
  return GetBaseDB()->Write(options, updates);
}

template <typename AddTo>
Status PessimisticTransactionDB::WriteOne(const WriteOptions& options, AddTo add_to) {
  WriteBatch batch;
  Status s = add_to(&batch);
  return s.ok() ? Write(options, &batch) : s;
}

Status PessimisticTransactionDB::Put(const WriteOptions& options, ColumnFamilyHandle* column_family,
                                     const Slice& key, const Slice& value) {
  return WriteOne(options, [&](WriteBatch* b) { return b->Put(column_family, key, value); });
}
Status PessimisticTransactionDB::Put(const WriteOptions& options, const Slice& key,
                                     const Slice& value) {
  return Put(options, DefaultColumnFamily(), key, value);
}
Status PessimisticTransactionDB::Delete(const WriteOptions& options,
                                        ColumnFamilyHandle* column_family, const Slice& key) {
  return WriteOne(options, [&](WriteBatch* b) { return b->Delete(column_family, key); });
}
Status PessimisticTransactionDB::Delete(const WriteOptions& options, const Slice& key) {
  return Delete(options, DefaultColumnFamily(), key);
}
Status PessimisticTransactionDB::SingleDelete(const WriteOptions& options,
                                              ColumnFamilyHandle* column_family, const Slice& key) {
  return WriteOne(options, [&](WriteBatch* b) { return b->SingleDelete(column_family, key); });
}
Status PessimisticTransactionDB::SingleDelete(const WriteOptions& options, const Slice& key) {
  return SingleDelete(options, DefaultColumnFamily(), key);
}
Status PessimisticTransactionDB::Merge(const WriteOptions& options,
                                       ColumnFamilyHandle* column_family, const Slice& key,
                                       const Slice& value) {
  return WriteOne(options, [&](WriteBatch* b) { return b->Merge(column_family, key, value); });
}
Status PessimisticTransactionDB::Merge(const WriteOptions& options, const Slice& key,
                                       const Slice& value) {
  return Merge(options, DefaultColumnFamily(), key, value);
}

// ---- Column families.

Status PessimisticTransactionDB::CreateColumnFamily(const ColumnFamilyOptions& options,
                                                    const std::string& name,
                                                    ColumnFamilyHandle** handle) {
  MutexLock l(&family_mu_);
  Status s = GetBaseDB()->CreateColumnFamily(options, name, handle);
  if (s.ok()) lock_manager_.AddColumnFamily((*handle)->GetID());
  return s;
}

Status PessimisticTransactionDB::CreateColumnFamilies(
    const ColumnFamilyOptions& options, const std::vector<std::string>& column_family_names,
    std::vector<ColumnFamilyHandle*>* handles) {
  // DB's loop, which calls CreateColumnFamily above for each.
  return DB::CreateColumnFamilies(options, column_family_names, handles);
}

Status PessimisticTransactionDB::CreateColumnFamilies(
    const std::vector<ColumnFamilyDescriptor>& column_families,
    std::vector<ColumnFamilyHandle*>* handles) {
  return DB::CreateColumnFamilies(column_families, handles);
}

Status PessimisticTransactionDB::DropColumnFamily(ColumnFamilyHandle* column_family) {
  MutexLock l(&family_mu_);
  Status s = GetBaseDB()->DropColumnFamily(column_family);
  if (s.ok()) lock_manager_.RemoveColumnFamily(column_family->GetID());
  return s;
}

Status PessimisticTransactionDB::DropColumnFamilies(
    const std::vector<ColumnFamilyHandle*>& column_families) {
  return DB::DropColumnFamilies(column_families);
}

PessimisticTransaction* WriteCommittedTxnDB::NewTransaction(const WriteOptions& write_options,
                                                            const TransactionOptions& txn_options) {
  return new WriteCommittedTxn(this, write_options, txn_options);
}

// ---- Open.

namespace {

// RocksDB's refusals, checked (and worded) as it does before anything else.
// max_successive_merges: the largest of the families'.
Status CheckOpenOptions(const DBOptions& options, size_t max_successive_merges,
                        const TransactionDBOptions& txn_db_options) {
  // unordered_write's guarantees hold only under WRITE_PREPARED, whose commit markers take
  // the second write queue.
  if (options.unordered_write) {
    switch (txn_db_options.write_policy) {
      case WRITE_COMMITTED:
        return Status::NotSupported("WRITE_COMMITTED is incompatible with unordered_writes");
      case WRITE_UNPREPARED:
        return Status::NotSupported(
            "WRITE_UNPREPARED is currently incompatible with unordered_writes");
      case WRITE_PREPARED:
        if (!options.two_write_queues) {
          return Status::NotSupported(
              "WRITE_PREPARED is incompatible with unordered_writes if two_write_queues is not "
              "enabled.");
        }
        break;
    }
  }
  const bool write_prepared = txn_db_options.write_policy == WRITE_PREPARED;
  if (txn_db_options.write_policy != WRITE_COMMITTED && !write_prepared &&
      txn_db_options.write_policy != WRITE_UNPREPARED) {
    return Status::InvalidArgument("unknown write_policy");
  }
  if (txn_db_options.write_policy == WRITE_UNPREPARED) {
    return Status::NotSupported("the WRITE_UNPREPARED write policy is not implemented");
  }
  if (write_prepared &&
      !WritePreparedVisibility::ValidBits(txn_db_options.wp_commit_cache_bits,
                                          txn_db_options.wp_snapshot_cache_bits)) {
    return Status::InvalidArgument(
        "wp_commit_cache_bits must be 1..32 and wp_snapshot_cache_bits 0..20");
  }
  if (write_prepared && max_successive_merges > 0) {
    // Folding reads the operands beneath without asking which are committed: it could fold
    // another transaction's uncommitted operand into a Put.
    return Status::NotSupported("max_successive_merges with the WRITE_PREPARED write policy");
  }
  return Status::OK();
}

// Stacks the TransactionDB of the write policy on db (opened by DBForTransactions::Open)
// and adopts what recovery found prepared. On failure db is closed and deleted.
Status Stack(DB* db, const TransactionDBOptions& txn_db_options,
             const std::map<uint32_t, ColumnFamilyHandle*>& handles, TransactionDB** dbptr) {
  std::unique_ptr<PessimisticTransactionDB> txn_db;
  if (txn_db_options.write_policy == WRITE_PREPARED) {
    txn_db = std::make_unique<WritePreparedTxnDB>(db, txn_db_options);
  } else {
    txn_db = std::make_unique<WriteCommittedTxnDB>(db, txn_db_options);
  }
  Status s = txn_db->Initialize(handles);
  if (!s.ok()) return s;
  *dbptr = txn_db.release();
  return Status::OK();
}

}  // namespace

Status TransactionDB::Open(const Options& options, const TransactionDBOptions& txn_db_options,
                           const std::string& dbname, TransactionDB** dbptr) {
  *dbptr = nullptr;
  Status s = CheckOpenOptions(options, options.max_successive_merges, txn_db_options);
  if (!s.ok()) return s;
  Options db_options = options;
  // Prepared transactions must survive in the WAL and be recovered, not refused.
  db_options.allow_2pc = true;
  DB* db = nullptr;
  // WritePrepared numbers per sub-batch, which recovery must know before it replays.
  const bool write_prepared = txn_db_options.write_policy == WRITE_PREPARED;
  s = DBForTransactions::Open(db_options, dbname, write_prepared, &db);
  if (!s.ok()) return s;
  return Stack(db, txn_db_options, {{kDefaultFamilyId, db->DefaultColumnFamily()}}, dbptr);
}

Status TransactionDB::Open(const DBOptions& db_options, const TransactionDBOptions& txn_db_options,
                           const std::string& dbname,
                           const std::vector<ColumnFamilyDescriptor>& column_families,
                           std::vector<ColumnFamilyHandle*>* handles, TransactionDB** dbptr) {
  *dbptr = nullptr;
  if (handles == nullptr) return Status::InvalidArgument("null handles");
  handles->clear();
  size_t max_successive_merges = 0;
  for (const ColumnFamilyDescriptor& d : column_families) {
    max_successive_merges = std::max(max_successive_merges, d.options.max_successive_merges);
  }
  Status s = CheckOpenOptions(db_options, max_successive_merges, txn_db_options);
  if (!s.ok()) return s;
  DBOptions options = db_options;
  options.allow_2pc = true;
  DB* db = nullptr;
  const bool write_prepared = txn_db_options.write_policy == WRITE_PREPARED;
  s = DBForTransactions::Open(options, dbname, column_families, handles, write_prepared, &db);
  if (!s.ok()) return s;
  std::map<uint32_t, ColumnFamilyHandle*> by_id;
  for (ColumnFamilyHandle* h : *handles) by_id.emplace(h->GetID(), h);
  by_id.emplace(kDefaultFamilyId, db->DefaultColumnFamily());
  s = Stack(db, txn_db_options, by_id, dbptr);
  if (!s.ok()) {
    // Stack deleted the DB: the handles, the caller's, would outlive it.
    for (ColumnFamilyHandle* h : *handles) delete h;
    handles->clear();
  }
  return s;
}

}  // namespace shale
