// TransactionBaseImpl: what every transaction kind shares, whatever its concurrency
// control: the pending writes in a WriteBatchWithIndex, the keys it tracks per column
// family (and at which sequence each was first checked), the snapshot, save points, and
// reads that lay the batch over the DB.
//
// A subclass decides what tracking a key means through TryLock (a pessimistic one locks
// and checks the key against the snapshot) and undoes it through UnlockKeys.
//
// Invariant: every key written through the public calls is tracked; a tracked key's
// counts are the reads and writes since it was first tracked, and each save point holds
// the counts added after it, so that rolling back to it can forget (and unlock) keys
// first tracked after it.
//
// Column families: a key is tracked (and locked) per family, so the same key in two
// families is two keys. The handles a caller passes must stay valid until the transaction
// commits, rolls back or is deleted (as RocksDB's); a null handle is the default family.
//
// Thread safety: one thread at a time, as for Transaction.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "shale/db.h"
#include "shale/utilities/transaction.h"
#include "shale/utilities/write_batch_with_index.h"
#include "shale/write_batch.h"

namespace shale {

class TransactionBaseImpl : public Transaction {
 public:
  // db is the DB reads and writes go to (not a TransactionDB); it outlives this object.
  TransactionBaseImpl(DB* db, const WriteOptions& write_options);
  ~TransactionBaseImpl() override;

  void SetSnapshot() override;
  void SetSnapshotOnNextOperation(std::shared_ptr<TransactionNotifier> notifier) override;
  const Snapshot* GetSnapshot() const override { return snapshot_.get(); }
  void ClearSnapshot() override;

  void SetSavePoint() override;
  Status RollbackToSavePoint() override;
  Status PopSavePoint() override;

  Status Get(const ReadOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
             std::string* value) override;
  Status Get(const ReadOptions& options, const Slice& key, std::string* value) override;
  Status Get(const ReadOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
             PinnableSlice* pinnable_val) override;
  Status Get(const ReadOptions& options, const Slice& key, PinnableSlice* pinnable_val) override;
  std::vector<Status> MultiGet(const ReadOptions& options,
                               const std::vector<ColumnFamilyHandle*>& column_family,
                               const std::vector<Slice>& keys,
                               std::vector<std::string>* values) override;
  std::vector<Status> MultiGet(const ReadOptions& options, const std::vector<Slice>& keys,
                               std::vector<std::string>* values) override;
  Status GetForUpdate(const ReadOptions& options, ColumnFamilyHandle* column_family,
                      const Slice& key, std::string* value, bool exclusive,
                      const bool do_validate) override;
  Status GetForUpdate(const ReadOptions& options, ColumnFamilyHandle* column_family,
                      const Slice& key, PinnableSlice* pinnable_val, bool exclusive,
                      const bool do_validate) override;
  Status GetForUpdate(const ReadOptions& options, const Slice& key, std::string* value,
                      bool exclusive, const bool do_validate) override;
  Status GetForUpdate(const ReadOptions& options, const Slice& key, PinnableSlice* pinnable_val,
                      bool exclusive, const bool do_validate) override;
  Iterator* GetIterator(const ReadOptions& read_options) override;
  Iterator* GetIterator(const ReadOptions& read_options,
                        ColumnFamilyHandle* column_family) override;

  Status Put(ColumnFamilyHandle* column_family, const Slice& key, const Slice& value,
             const bool assume_tracked) override;
  Status Put(const Slice& key, const Slice& value) override;
  Status Merge(ColumnFamilyHandle* column_family, const Slice& key, const Slice& value,
               const bool assume_tracked) override;
  Status Merge(const Slice& key, const Slice& value) override;
  Status Delete(ColumnFamilyHandle* column_family, const Slice& key,
                const bool assume_tracked) override;
  Status Delete(const Slice& key) override;
  Status SingleDelete(ColumnFamilyHandle* column_family, const Slice& key,
                      const bool assume_tracked) override;
  Status SingleDelete(const Slice& key) override;
  Status PutUntracked(ColumnFamilyHandle* column_family, const Slice& key,
                      const Slice& value) override;
  Status PutUntracked(const Slice& key, const Slice& value) override;
  Status MergeUntracked(ColumnFamilyHandle* column_family, const Slice& key,
                        const Slice& value) override;
  Status MergeUntracked(const Slice& key, const Slice& value) override;
  Status DeleteUntracked(ColumnFamilyHandle* column_family, const Slice& key) override;
  Status DeleteUntracked(const Slice& key) override;
  Status SingleDeleteUntracked(ColumnFamilyHandle* column_family, const Slice& key) override;
  Status SingleDeleteUntracked(const Slice& key) override;

  uint64_t GetNumKeys() const override;
  WriteBatchWithIndex* GetWriteBatch() override { return &batch_; }
  WriteBatch* GetCommitTimeWriteBatch() override { return &commit_time_batch_; }

 protected:
  // What the transaction knows of a key it tracks.
  struct TrackedKey {
    // The sequence the key was last checked against: nothing written to it at or below
    // this sequence can be a conflict any more.
    SequenceNumber seq = 0;
    uint32_t reads = 0;
    uint32_t writes = 0;
    bool exclusive = false;
  };
  // The tracked keys of each family, by family id.
  using TrackedKeys = std::map<uint32_t, std::map<std::string, TrackedKey>>;

  // Tracks key of family cf (never null) for a read (read_only) or a write: a subclass
  // locks it and, when do_validate and a snapshot is set, checks that nobody wrote it after
  // the snapshot, then calls TrackKey. assume_tracked as Transaction::Put's.
  virtual Status TryLock(ColumnFamilyHandle* cf, const Slice& key, bool read_only, bool exclusive,
                         bool do_validate, bool assume_tracked) = 0;
  // Releases what TryLock took for these keys of family cf_id (no longer tracked).
  virtual void UnlockKeys(uint32_t cf_id, const std::vector<std::string>& keys) = 0;
  // UnlockKeys of every tracked key (which stay tracked: ClearBase forgets them).
  void UnlockTracked();

  // Records key of family cf_id as tracked at seq (keeping the smaller of seq and an
  // earlier one).
  void TrackKey(uint32_t cf_id, const std::string& key, SequenceNumber seq, bool read_only,
                bool exclusive);
  const TrackedKeys& tracked_keys() const { return tracked_; }
  // The tracked key or null.
  const TrackedKey* FindTracked(uint32_t cf_id, const std::string& key) const;

  // The handle of family cf_id as this transaction was given it (the default family's is
  // always known), or null for a family it never touched.
  ColumnFamilyHandle* HandleOf(uint32_t cf_id) const;

  // Takes the snapshot SetSnapshotOnNextOperation asked for, if any: called before every
  // write and GetForUpdate.
  void SetSnapshotIfNeeded();

  // Forgets the writes, the tracked keys (without unlocking them: the caller does that
  // with UnlockTracked() first), the families' handles, the snapshot and the save points.
  void ClearBase();

  // column_family, or the default family's handle for null; remembered for HandleOf.
  ColumnFamilyHandle* Family(ColumnFamilyHandle* column_family);

  DB* const db_;
  WriteOptions write_options_;
  WriteBatchWithIndex batch_;
  WriteBatch commit_time_batch_;
  // Bytes batch_ may reach; 0 = no limit.
  size_t max_write_batch_size_ = 0;

 private:
  struct SavePoint {
    std::shared_ptr<const Snapshot> snapshot;
    bool snapshot_needed;
    std::shared_ptr<TransactionNotifier> notifier;
    TrackedKeys new_keys;  // counts added since this save point
  };

  enum class Op { kPut, kMerge, kDelete, kSingleDelete };
  // GetForUpdate, for either kind of value.
  template <typename Value>
  Status LockAndGet(const ReadOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
                    Value* value, bool exclusive, bool do_validate);
  Status Write(Op op, ColumnFamilyHandle* column_family, const Slice& key, const Slice& value,
               bool untracked, bool assume_tracked);
  // Aborted(kMemoryLimit) if a record of op for key and value would take batch_ past
  // max_write_batch_size_.
  Status CheckBatchSize(Op op, ColumnFamilyHandle* column_family, const Slice& key,
                        const Slice& value) const;

  TrackedKeys tracked_;
  // The families this transaction was handed, by id (for conflict checks and rollbacks).
  std::map<uint32_t, ColumnFamilyHandle*> handles_;
  std::shared_ptr<const Snapshot> snapshot_;  // releases itself from db_
  bool snapshot_needed_ = false;
  std::shared_ptr<TransactionNotifier> snapshot_notifier_;
  std::vector<SavePoint> save_points_;
};

}  // namespace shale
