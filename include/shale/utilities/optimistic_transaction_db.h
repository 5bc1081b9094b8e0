// OptimisticTransactionDB: a DB with optimistic transactions, as RocksDB's. A transaction
// takes no locks while it runs: it remembers the keys it wrote or read with GetForUpdate,
// and Commit checks that none of them was written by anyone else since the transaction
// first touched it (or since its snapshot, with set_snapshot). A conflict fails Commit
// with Busy, and the transaction's writes are dropped; the caller retries it.
//
// Commit checks against the memtables only. When they no longer reach back to the
// sequence a key must be checked from (a flush retired that history), Commit answers
// TryAgain: retry the transaction. Conflicts with writes outside transactions are found
// if those writes came before the check; one landing between the check and the commit's
// own write is not (RocksDB's parallel validation has the same window).
//
// Transactions are not named and cannot be prepared (two-phase commit is
// TransactionDB's). Writes outside a transaction (Put, Write, ... on this DB) go straight
// to the DB.
//
// Thread safety: every method from any thread; one thread at a time per Transaction.
// Ownership: the caller deletes each Transaction before the OptimisticTransactionDB.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shale/db.h"
#include "shale/options.h"
#include "shale/utilities/stackable_db.h"
#include "shale/utilities/transaction.h"
#include "shale/write_batch.h"

namespace shale {

// How Commit makes its check and its write one step against other committers.
// kValidateParallel: commits lock hash buckets of their keys (so that commits with no key
// in common run in parallel), check, write and unlock. kValidateSerial, which RocksDB runs
// inside the write group, is not implemented: Open answers NotSupported.
enum class OccValidationPolicy {
  kValidateSerial = 0,
  kValidateParallel = 1,
};

struct OptimisticTransactionDBOptions {
  // Default: kValidateParallel.
  OccValidationPolicy validate_policy = OccValidationPolicy::kValidateParallel;
  // Hash buckets of keys locked by committing transactions: fewer buckets, more commits
  // waiting on each other for keys they do not share. Default: 1 << 20.
  uint32_t occ_lock_buckets = (1 << 20);
};

// (RocksDB's `cmp` is absent: it only orders the tracked keys, which shale keeps in
// byte order, and the order of bucket locks is what keeps commits from deadlocking.)
struct OptimisticTransactionOptions {
  // Same as calling Transaction::SetSnapshot() at the start. Default: false.
  bool set_snapshot = false;
};

class OptimisticTransactionDB : public StackableDB {
 public:
  // Opens the DB at dbname with optimistic transactions. On failure *dbptr is nullptr.
  static Status Open(const Options& options, const std::string& dbname,
                     OptimisticTransactionDB** dbptr);
  // The same with column families, as DB::Open with descriptors: *handles receives one
  // handle per descriptor, in their order, owned by the caller (DestroyColumnFamilyHandle
  // before deleting the DB). Keys are tracked and checked per family.
  static Status Open(const DBOptions& db_options, const std::string& dbname,
                     const std::vector<ColumnFamilyDescriptor>& column_families,
                     std::vector<ColumnFamilyHandle*>* handles, OptimisticTransactionDB** dbptr);
  static Status Open(const DBOptions& db_options, const OptimisticTransactionDBOptions& occ_options,
                     const std::string& dbname,
                     const std::vector<ColumnFamilyDescriptor>& column_families,
                     std::vector<ColumnFamilyHandle*>* handles, OptimisticTransactionDB** dbptr);

  ~OptimisticTransactionDB() override = default;

  // A new transaction, or old_txn (one of this DB's, committed or rolled back, or never
  // used) reset to start afresh. The caller owns the result.
  virtual Transaction* BeginTransaction(
      const WriteOptions& write_options,
      const OptimisticTransactionOptions& txn_options = OptimisticTransactionOptions(),
      Transaction* old_txn = nullptr) = 0;

  // Range deletions cannot be checked for conflicts: DeleteRange, and Write of a batch
  // holding one, answer NotSupported and write nothing, as RocksDB's.
  using StackableDB::DeleteRange;
  Status DeleteRange(const WriteOptions&, ColumnFamilyHandle*, const Slice&,
                     const Slice&) override {
    return Status::NotSupported("DeleteRange is not supported in an OptimisticTransactionDB");
  }
  Status Write(const WriteOptions& options, WriteBatch* updates) override {
    if (updates != nullptr && updates->HasDeleteRange()) {
      return Status::NotSupported(
          "range deletions are not supported in an OptimisticTransactionDB");
    }
    return StackableDB::Write(options, updates);
  }

 protected:
  // Takes ownership of db.
  explicit OptimisticTransactionDB(DB* db) : StackableDB(db) {}
};

}  // namespace shale
