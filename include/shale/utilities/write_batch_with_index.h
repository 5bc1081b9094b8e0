// WriteBatchWithIndex: a WriteBatch that also keeps its records sorted by key, so that the
// writer can read its own pending writes, alone (GetFromBatch, NewIterator) or over the DB
// (GetFromBatchAndDB, NewIteratorWithBase), before applying them with DB::Write
// (GetWriteBatch). It is what a transaction keeps its writes in. As RocksDB's.
//
// overwrite_key = false keeps every record of a key in the index, in the order written;
// true keeps one per key: a Put, Delete or SingleDelete replaces the key's newest index
// entry, and only Merge operands pile up. Either way the WriteBatch itself keeps every
// record, and a read answers with the key's newest state.
//
// Column families: records carry their family (a null handle is the default family) and
// the index keeps each family apart, ordered by that family's comparator: the default
// family's by backup_index_comparator, another's by the comparator of the handle that first
// names it (so pass the DB's handles). Reads and iterators with a handle see that family's
// records only.
//
// Thread safety: one thread at a time, as for a WriteBatch.
// Iterators: key(), value() and Entry() point into the batch and stay valid until the
// iterator moves or the batch changes. An iterator stays usable across later writes and
// sees them as it moves, except a write to the key it stands on (seek again to see that
// one). Clear and RollbackToSavePoint rebuild the index and invalidate every iterator of
// the batch. Iterators must be deleted before the batch.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "shale/comparator.h"
#include "shale/iterator.h"
#include "shale/options.h"
#include "shale/slice.h"
#include "shale/status.h"
#include "shale/write_batch.h"

namespace shale {

class ColumnFamilyHandle;
class DB;

enum WriteType {
  kPutRecord,
  kMergeRecord,
  kDeleteRecord,
  kSingleDeleteRecord,
  kLogDataRecord,
  kUnknownRecord,
};

// One record of the batch, as a WBWIIterator shows it. value is empty for deletions.
struct WriteEntry {
  WriteType type = kUnknownRecord;
  Slice key;
  Slice value;
};

// A cursor over the index of a WriteBatchWithIndex: every indexed record (not PutLogData
// blobs), by key, and the records of one key in the order they were written.
class WBWIIterator {
 public:
  virtual ~WBWIIterator() = default;
  virtual bool Valid() const = 0;
  virtual void SeekToFirst() = 0;
  virtual void SeekToLast() = 0;
  // The first record of the first key >= key.
  virtual void Seek(const Slice& key) = 0;
  // The last record of the last key <= key.
  virtual void SeekForPrev(const Slice& key) = 0;
  // REQUIRES: Valid()
  virtual void Next() = 0;
  // REQUIRES: Valid()
  virtual void Prev() = 0;
  // REQUIRES: Valid()
  virtual WriteEntry Entry() const = 0;
  virtual Status status() const = 0;
};

class WriteBatchWithIndex {
 public:
  // backup_index_comparator orders the index (null: bytewise); it must be the DB's
  // comparator for reads over a DB to make sense. reserved_bytes as for WriteBatch.
  explicit WriteBatchWithIndex(const Comparator* backup_index_comparator = BytewiseComparator(),
                               size_t reserved_bytes = 0, bool overwrite_key = false);
  ~WriteBatchWithIndex();
  WriteBatchWithIndex(WriteBatchWithIndex&&) noexcept;
  WriteBatchWithIndex& operator=(WriteBatchWithIndex&&) noexcept;
  WriteBatchWithIndex(const WriteBatchWithIndex&) = delete;
  WriteBatchWithIndex& operator=(const WriteBatchWithIndex&) = delete;

  Status Put(ColumnFamilyHandle* column_family, const Slice& key, const Slice& value);
  Status Put(const Slice& key, const Slice& value);
  Status Delete(ColumnFamilyHandle* column_family, const Slice& key);
  Status Delete(const Slice& key);
  Status SingleDelete(ColumnFamilyHandle* column_family, const Slice& key);
  Status SingleDelete(const Slice& key);
  Status Merge(ColumnFamilyHandle* column_family, const Slice& key, const Slice& value);
  Status Merge(const Slice& key, const Slice& value);
  // As RocksDB's: an indexed batch takes no range deletion (its reads could not honour one).
  Status DeleteRange(ColumnFamilyHandle* /*column_family*/, const Slice& /*begin_key*/,
                     const Slice& /*end_key*/) {
    return Status::NotSupported("DeleteRange unsupported in WriteBatchWithIndex");
  }
  Status DeleteRange(const Slice& /*begin_key*/, const Slice& /*end_key*/) {
    return Status::NotSupported("DeleteRange unsupported in WriteBatchWithIndex");
  }
  // Goes into the batch (and the WAL) but not into the index.
  Status PutLogData(const Slice& blob);
  // Empties the batch and the index, and drops the save points.
  void Clear();

  // The batch to hand to DB::Write. Owned by this object; change it only through this
  // object, or the index no longer describes it.
  WriteBatch* GetWriteBatch();

  // The index alone. The caller deletes the iterator.
  WBWIIterator* NewIterator(ColumnFamilyHandle* column_family);
  WBWIIterator* NewIterator();

  // The batch's newest state per key laid over base_iterator (usually a DB iterator), both
  // directions: a Put shows its value, a Delete or SingleDelete hides the key beneath.
  // The returned iterator owns base_iterator. read_options (may be null) gives
  // iterate_lower_bound / iterate_upper_bound, applied to the batch's keys and the base's
  // alike (the bound Slices must outlive the iterator); the base iterator should be made
  // with the same bounds. Merge operands of the batch are folded over the batch's value or
  // the base's with the merge operator of column_family (a handle of the DB; it must
  // outlive the iterator); without one (a null handle) a key with operands stops the
  // iterator, invalid, with status() NotSupported.
  Iterator* NewIteratorWithBase(ColumnFamilyHandle* column_family, Iterator* base_iterator,
                                const ReadOptions* read_options = nullptr);
  Iterator* NewIteratorWithBase(Iterator* base_iterator);

  // The key's value from the batch alone: OK with the value, NotFound if the batch does not
  // have it or deleted it. Merge operands on top of a Put or Delete of the batch are folded
  // with column_family's merge operator; MergeInProgress when there is none (a null handle:
  // DBOptions carry no merge operator) or nothing beneath the operands in the batch.
  Status GetFromBatch(ColumnFamilyHandle* column_family, const DBOptions& options, const Slice& key,
                      std::string* value);
  Status GetFromBatch(const DBOptions& options, const Slice& key, std::string* value);

  // The key's value as DB::Get would return it once the batch were written: the batch's
  // newest record wins, the DB is read (with read_options) only when the batch does not
  // decide, and Merge operands of the batch are folded over the batch's or the DB's value
  // by the DB's merge operator (MergeInProgress if the DB has none).
  Status GetFromBatchAndDB(DB* db, const ReadOptions& read_options, const Slice& key,
                           std::string* value);
  Status GetFromBatchAndDB(DB* db, const ReadOptions& read_options, const Slice& key,
                           PinnableSlice* value);
  Status GetFromBatchAndDB(DB* db, const ReadOptions& read_options,
                           ColumnFamilyHandle* column_family, const Slice& key, std::string* value);
  Status GetFromBatchAndDB(DB* db, const ReadOptions& read_options,
                           ColumnFamilyHandle* column_family, const Slice& key,
                           PinnableSlice* value);

  // As WriteBatch's; a rollback also brings the index back to the save point.
  void SetSavePoint();
  Status RollbackToSavePoint();
  Status PopSavePoint();

  // The serialized batch's size in bytes.
  size_t GetDataSize() const;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace shale
