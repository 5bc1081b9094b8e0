// WriteBatch: a list of updates applied atomically by DB::Write, in order.
//
// Format (RocksDB's): an 8-byte sequence number and a 4-byte count, then per record a tag
// byte, an optional varint32 column family id, and varint32-length-prefixed key and value
// (a range deletion's value is its end key).
// Two-phase commit markers are a tag byte, followed for EndPrepare, Commit and Rollback by
// the length-prefixed transaction name (xid); they are not counted.
// Thread safety: const methods may be called concurrently; anything else needs one owner.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

class ColumnFamilyHandle;

class WriteBatch {
 public:
  explicit WriteBatch(size_t reserved_bytes = 0);
  explicit WriteBatch(const std::string& rep);
  WriteBatch(const WriteBatch&) = default;
  WriteBatch& operator=(const WriteBatch&) = default;
  WriteBatch(WriteBatch&&) noexcept = default;
  WriteBatch& operator=(WriteBatch&&) noexcept = default;
  ~WriteBatch() = default;

  Status Put(ColumnFamilyHandle* column_family, const Slice& key, const Slice& value);
  Status Put(const Slice& key, const Slice& value) { return Put(nullptr, key, value); }
  Status Delete(ColumnFamilyHandle* column_family, const Slice& key);
  Status Delete(const Slice& key) { return Delete(nullptr, key); }
  // Deletes a key written at most once since its last deletion; see DB::SingleDelete.
  Status SingleDelete(ColumnFamilyHandle* column_family, const Slice& key);
  Status SingleDelete(const Slice& key) { return SingleDelete(nullptr, key); }
  // A merge operand for key, folded by the column family's merge operator at read time.
  Status Merge(ColumnFamilyHandle* column_family, const Slice& key, const Slice& value);
  Status Merge(const Slice& key, const Slice& value) { return Merge(nullptr, key, value); }
  // Deletes every key in [begin_key, end_key) of the column family, as DB::DeleteRange. An
  // empty range (begin_key == end_key) deletes nothing; a reversed one fails the write that
  // carries it with InvalidArgument, as RocksDB's does.
  Status DeleteRange(ColumnFamilyHandle* column_family, const Slice& begin_key,
                     const Slice& end_key);
  Status DeleteRange(const Slice& begin_key, const Slice& end_key) {
    return DeleteRange(nullptr, begin_key, end_key);
  }
  // A blob carried into the WAL but not applied to the DB.
  Status PutLogData(const Slice& blob);

  // Empties the batch and drops its save points.
  void Clear();

  // Save points, as RocksDB's: SetSavePoint remembers the batch's current end (size and
  // count); RollbackToSavePoint drops every record added since the newest save point and
  // removes that save point; PopSavePoint removes it and keeps the records. Both return
  // NotFound when there is no save point.
  void SetSavePoint();
  Status RollbackToSavePoint();
  Status PopSavePoint();

  // Calls the handler for each record, in order.
  class Handler {
   public:
    virtual ~Handler() = default;
    virtual Status PutCF(uint32_t column_family_id, const Slice& key, const Slice& value) {
      if (column_family_id == 0) {
        Put(key, value);
        return Status::OK();
      }
      return Status::InvalidArgument("non-default column family and PutCF not implemented");
    }
    virtual void Put(const Slice& /*key*/, const Slice& /*value*/) {}
    virtual Status DeleteCF(uint32_t column_family_id, const Slice& key) {
      if (column_family_id == 0) {
        Delete(key);
        return Status::OK();
      }
      return Status::InvalidArgument("non-default column family and DeleteCF not implemented");
    }
    virtual void Delete(const Slice& /*key*/) {}
    virtual Status SingleDeleteCF(uint32_t column_family_id, const Slice& key) {
      if (column_family_id == 0) {
        SingleDelete(key);
        return Status::OK();
      }
      return Status::InvalidArgument(
          "non-default column family and SingleDeleteCF not implemented");
    }
    virtual void SingleDelete(const Slice& /*key*/) {}
    // As RocksDB's: no default-family fallback; a handler that expects range deletions
    // overrides this.
    virtual Status DeleteRangeCF(uint32_t /*column_family_id*/, const Slice& /*begin_key*/,
                                 const Slice& /*end_key*/) {
      return Status::InvalidArgument("DeleteRangeCF not implemented");
    }
    virtual Status MergeCF(uint32_t column_family_id, const Slice& key, const Slice& value) {
      if (column_family_id == 0) {
        Merge(key, value);
        return Status::OK();
      }
      return Status::InvalidArgument("non-default column family and MergeCF not implemented");
    }
    virtual void Merge(const Slice& /*key*/, const Slice& /*value*/) {}
    virtual void LogData(const Slice& /*blob*/) {}
    // Two-phase commit markers, which transactions write (a batch built through the public
    // calls above holds none). A prepared transaction's batch is BeginPrepare, its records,
    // EndPrepare(xid); Commit(xid) and Rollback(xid) resolve it later, in a batch of their
    // own. Noop holds a place at the start of a batch (empty_batch: nothing came before
    // it). Defaults as RocksDB's: a handler that does not expect a marker fails on it.
    virtual Status MarkBeginPrepare(bool /*unprepare*/ = false) {
      return Status::InvalidArgument("MarkBeginPrepare() handler not defined.");
    }
    virtual Status MarkEndPrepare(const Slice& /*xid*/) {
      return Status::InvalidArgument("MarkEndPrepare() handler not defined.");
    }
    virtual Status MarkNoop(bool /*empty_batch*/) { return Status::OK(); }
    virtual Status MarkRollback(const Slice& /*xid*/) {
      return Status::InvalidArgument("MarkRollbackPrepare() handler not defined.");
    }
    virtual Status MarkCommit(const Slice& /*xid*/) {
      return Status::InvalidArgument("MarkCommit() handler not defined.");
    }
    // Return false to stop the iteration early.
    virtual bool Continue() { return true; }
  };
  Status Iterate(Handler* handler) const;

  // The serialized batch.
  const std::string& Data() const { return rep_; }
  size_t GetDataSize() const { return rep_.size(); }
  // Records that update keys (PutLogData not counted).
  uint32_t Count() const;

  bool HasPut() const;
  bool HasDelete() const;
  bool HasSingleDelete() const;
  bool HasDeleteRange() const;
  bool HasMerge() const;
  bool HasBeginPrepare() const;
  bool HasEndPrepare() const;
  bool HasCommit() const;
  bool HasRollback() const;

 private:
  friend class WriteBatchInternal;
  struct SavePoint {
    size_t size;     // rep_.size() when it was set
    uint32_t count;  // Count() when it was set
  };
  std::string rep_;
  std::vector<SavePoint> save_points_;  // oldest first
};

}  // namespace shale
