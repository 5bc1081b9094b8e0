// WritePreparedTxnDB: the TransactionDB of the WRITE_PREPARED policy (RocksDB's design).
// A transaction's records reach the memtable at Prepare, under the prepare's own sequence
// numbers; Commit only logs a marker, which takes a later number. So the DB beneath holds
// data that is not committed, and every read decides per entry whether it may see it:
// WritePreparedVisibility (wp_visibility.h) answers from the commit cache, and reads pass
// it to the DB as a ReadCallback. Flush and compaction ask the same state through the
// SnapshotChecker this DB installs.
//
// The DB beneath is opened numbering per sub-batch (db/sub_batch.h): the commit cache
// then holds one entry per sub-batch, not per key. How each write is made visible:
//   Prepare              one write; its callback records each number as prepared.
//   Commit (prepared)    a marker (the second queue with two_write_queues); its callback
//                        records (prepare number -> marker's number) for each sub-batch.
//                        With a commit-time batch, its records and the marker are written
//                        as below, the prepare committing with them.
//   a write that commits with one queue: one write, committed at its last number by its
//   at once (no Prepare) own callback. With two queues: the records go through the main
//                        queue as a prepare would (which publishes nothing), then a
//                        number-only write (DBForTransactions::WriteNumberOnly: no WAL, no records)
//                        takes the commit number and publishes it. The records are thus
//                        visible only once all are in the memtable, which is what makes
//                        unordered_write safe here.
//   Rollback (prepared)  a write of the keys' values from before the prepare, committed
//                        together with the prepare, so that the restored values hide it.
// Recovery: what the WAL replay found prepared is recorded as prepared, and everything
// else recovered counts as committed (max_evicted_seq is set to the last number).
//
// Thread safety: every method from any thread, as TransactionDB's.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "util/read_callback.h"
#include "utilities/transactions/pessimistic_transaction.h"
#include "utilities/transactions/pessimistic_transaction_db.h"
#include "utilities/transactions/wp_visibility.h"

namespace shale {

// A read's visibility: entries at or below its snapshot whose data is committed as of it.
class WritePreparedReadCallback final : public ReadCallback {
 public:
  WritePreparedReadCallback(const WritePreparedVisibility* visibility, SequenceNumber snapshot,
                            SequenceNumber min_uncommitted)
      : ReadCallback(snapshot, min_uncommitted), visibility_(visibility) {}
  bool IsVisibleFullCheck(SequenceNumber seq) override {
    return visibility_->IsInSnapshot(seq, max_visible_seq(), min_uncommitted());
  }

 private:
  const WritePreparedVisibility* const visibility_;
};

class WritePreparedTxnDB final : public PessimisticTransactionDB {
 public:
  // db: opened by DBForTransactions::Open with seq_per_batch and allow_2pc.
  WritePreparedTxnDB(DB* db, const TransactionDBOptions& txn_db_options);
  ~WritePreparedTxnDB() override;

  // ---- Reads: through the visibility callback. Without a snapshot a read is retried in
  // the rare case that the commit cache evicted past its sequence while it ran.
  // (StackableDB forwards every overload to the base DB: the convenience overloads are
  // routed back to DB's, which call the ones below.)
  Status Get(const ReadOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
             PinnableSlice* value) override;
  Status Get(const ReadOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
             std::string* value) override {
    return DB::Get(options, column_family, key, value);
  }
  Status Get(const ReadOptions& options, const Slice& key, std::string* value) override {
    return DB::Get(options, key, value);
  }
  std::vector<Status> MultiGet(const ReadOptions& options, const std::vector<Slice>& keys,
                               std::vector<std::string>* values) override {
    return DB::MultiGet(options, keys, values);
  }
  std::vector<Status> MultiGet(const ReadOptions& options,
                               const std::vector<ColumnFamilyHandle*>& column_families,
                               const std::vector<Slice>& keys,
                               std::vector<std::string>* values) override;
  void MultiGet(const ReadOptions& options, ColumnFamilyHandle* column_family, size_t num_keys,
                const Slice* keys, PinnableSlice* values, Status* statuses,
                bool sorted_input = false) override;
  Status GetMergeOperands(const ReadOptions& options, ColumnFamilyHandle* column_family,
                          const Slice& key, PinnableSlice* merge_operands,
                          GetMergeOperandsOptions* get_merge_operands_options,
                          int* number_of_operands) override;
  // An iterator without a snapshot takes one of its own, held while it lives.
  Iterator* NewIterator(const ReadOptions& options, ColumnFamilyHandle* column_family) override;
  Iterator* NewIterator(const ReadOptions& options) override { return DB::NewIterator(options); }
  // A snapshot the commit cache's bookkeeping covers (taken again in the rare case that
  // an eviction raced it). Null when none can be: that case needs a write, and the DB
  // refuses writes (a background error, a shutdown). Reads then return TryAgain.
  const Snapshot* GetSnapshot() override;

  // ---- For WritePreparedTxn.
  WritePreparedVisibility* visibility() { return &visibility_; }
  // Writes batch and commits it; with prepared (count > 0), the prepare at prepared.first ..
  // + count - 1 commits with it (a rollback), and prep_log, the prepare's WAL, is kept
  // until batch's memtable is flushed (a power loss before may take batch's records).
  Status WriteAndCommit(const WriteOptions& options, WriteBatch* batch,
                        std::pair<SequenceNumber, uint64_t> prepared = {0, 0},
                        uint64_t prep_log = 0);
  // Logs and inserts prepared (BeginPrepare, records, EndPrepare(name)), its numbers
  // recorded as prepared: *prepare_seq .. + *count - 1, in WAL *log. Unchanged on failure.
  Status Prepare(const WriteOptions& options, WriteBatch* prepared, SequenceNumber* prepare_seq,
                 uint64_t* count, uint64_t* log);
  // Logs marker (a Commit(name)) and commits the prepare at prepare_seq .. + count - 1.
  Status CommitPrepared(const WriteOptions& options, WriteBatch* marker, SequenceNumber prepare_seq,
                        uint64_t count);

 protected:
  PessimisticTransaction* NewTransaction(const WriteOptions& write_options,
                                         const TransactionOptions& txn_options) override;
  // Records what recovery found prepared, then counts everything else as committed.
  Status OnRecovery(const std::map<std::string, RecoveredTransaction>& found) override;
  DB* ReadDB() override { return this; }
  // Writes outside a transaction commit as they are written.
  Status WriteLocked(const WriteOptions& options, WriteBatch* updates) override {
    return WriteAndCommit(options, updates);
  }
  bool RangeDeletionNeedsNoDuplicates() const override { return true; }

 private:
  // The read's callback: at options.snapshot, else at the view the read takes (learned by
  // Refresh), with the smallest uncommitted number taken first.
  std::unique_ptr<WritePreparedReadCallback> NewReadCallback(const ReadOptions& options) const;
  // Runs read(callback) until the callback's sequence is one the visibility state covers.
  template <typename Read>
  Status ReadWithRetry(const ReadOptions& options, Read read);
  // Publishes one more number, without the WAL and without data.
  Status AdvanceSeqByOne();
  // Between two tries of a read or snapshot at or below max_evicted_seq: makes a number
  // above it exist (AdvanceSeqByOne). TryAgain if it cannot (no write can be made).
  Status WaitForSafeSnapshot();

  // The DB's option, read once: GetDBOptions copies every option on each call.
  const bool two_write_queues_;
  WritePreparedVisibility visibility_;
  std::shared_ptr<const WritePreparedSnapshotChecker> checker_;
};

// The WRITE_PREPARED policy's transaction (write_prepared_txn.cc).
class WritePreparedTxn final : public PessimisticTransaction {
 public:
  WritePreparedTxn(WritePreparedTxnDB* txn_db, const WriteOptions& write_options,
                   const TransactionOptions& txn_options);

 protected:
  bool VisibleAt(SequenceNumber seq, SequenceNumber snapshot) const override;
  void OnRestored(const RecoveredTransaction& recovered) override;

 private:
  Status PrepareInternal() override;
  Status CommitWithoutPrepareInternal() override;
  Status CommitInternal() override;
  Status RollbackInternal() override;

  WritePreparedTxnDB* const wp_db_;
  // The prepare's numbers, prepare_seq_ .. prepare_seq_ + prepare_count_ - 1.
  SequenceNumber prepare_seq_ = 0;
  uint64_t prepare_count_ = 0;
};

}  // namespace shale
