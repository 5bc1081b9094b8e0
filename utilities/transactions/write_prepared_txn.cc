// The WRITE_PREPARED policy: how a transaction's writes reach the DB at each step (the
// design is in write_prepared_txn_db.h). Prepare puts the records in the memtable under
// the prepare's numbers; Commit logs a marker whose number commits them (with the
// commit-time batch's records, if any, in the same write); Rollback writes back the values
// from before the prepare and commits them with it.
#include <map>
#include <set>
#include <string>

#include "db/db_for_transactions.h"
#include "db/write_batch_internal.h"
#include "utilities/transactions/write_prepared_txn_db.h"

namespace shale {

WritePreparedTxn::WritePreparedTxn(WritePreparedTxnDB* txn_db, const WriteOptions& write_options,
                                   const TransactionOptions& txn_options)
    : PessimisticTransaction(txn_db, write_options, txn_options), wp_db_(txn_db) {}

bool WritePreparedTxn::VisibleAt(SequenceNumber seq, SequenceNumber snapshot) const {
  // The key's newest write is at its prepare number: what counts is whether its commit
  // is at or below the snapshot.
  return wp_db_->visibility()->IsInSnapshot(seq, snapshot);
}

void WritePreparedTxn::OnRestored(const RecoveredTransaction& recovered) {
  prepare_seq_ = recovered.prepare_seq;
  prepare_count_ = recovered.sub_batches;
}

Status WritePreparedTxn::PrepareInternal() {
  // BeginPrepare (the Noop the marker call turns into it), the records, EndPrepare(name):
  // logged and inserted, each number recorded as prepared before it can be published.
  WriteBatch prepared;
  Status s = PreparedBatch(&prepared, PreparePolicy::kWritePrepared);
  if (!s.ok()) return s;
  return wp_db_->Prepare(write_options_, &prepared, &prepare_seq_, &prepare_count_, &log_number_);
}

Status WritePreparedTxn::CommitWithoutPrepareInternal() {
  WriteBatch combined;
  WriteBatch* records = nullptr;
  Status s = RecordsToCommit(&combined, &records);
  if (!s.ok() || records == nullptr) return s;
  return wp_db_->WriteAndCommit(write_options_, records);
}

Status WritePreparedTxn::CommitInternal() {
  // The engine refuses a commit marker without the WAL (DBForTransactions::WriteTxn).
  Status s;
  if (WriteBatchInternal::Count(&commit_time_batch_) > 0) {
    // The commit-time records and the marker are one write, and the prepare commits with
    // it: recovery finds the records with the marker that resolves the prepare.
    WriteBatch records = commit_time_batch_;
    WriteBatchInternal::MarkCommit(&records, name_);
    s = wp_db_->WriteAndCommit(write_options_, &records, {prepare_seq_, prepare_count_},
                               log_number_);
  } else {
    WriteBatch marker;
    WriteBatchInternal::MarkCommit(&marker, name_);
    s = wp_db_->CommitPrepared(write_options_, &marker, prepare_seq_, prepare_count_);
  }
  if (s.ok()) engine_->MarkPrepareResolved(log_number_);
  return s;
}

Status WritePreparedTxn::RollbackInternal() {
  // Each key this transaction wrote gets back its value from before the prepare: the
  // newest committed one, which a read without a snapshot sees (the prepare is not
  // committed, so it is hidden). The restoring records and the prepare commit together,
  // the restoring ones newer, so that no read ever sees the prepared values.
  std::map<uint32_t, std::set<std::string>> keys;
  // A key only merged into is left as it is unless rollback_merge_operands: its operands
  // then commit with the rollback (TransactionDBOptions says why).
  Status s = CollectWrittenKeys(*batch_.GetWriteBatch(), &keys,
                                wp_db_->txn_db_options().rollback_merge_operands);
  if (!s.ok()) return s;
  WriteBatch restore;
  ReadOptions latest;
  for (const auto& [cf_id, family_keys] : keys) {
    // Every record of the batch went in through a handle this transaction remembers.
    ColumnFamilyHandle* cf = HandleOf(cf_id);
    if (cf == nullptr) return Status::Corruption("rollback: no handle for a written family");
    for (const std::string& key : family_keys) {
      PinnableSlice value;
      s = wp_db_->Get(latest, cf, key, &value);
      if (s.ok()) {
        s = restore.Put(cf, key, value);
      } else if (s.IsNotFound()) {
        s = restore.Delete(cf, key);
      }
      if (!s.ok()) return s;
    }
  }
  WriteBatchInternal::MarkRollback(&restore, name_);
  s = wp_db_->WriteAndCommit(write_options_, &restore, {prepare_seq_, prepare_count_}, log_number_);
  if (s.ok()) engine_->MarkPrepareResolved(log_number_);
  return s;
}

}  // namespace shale
