// DB: an open key-value store. Open one with DB::Open, use it from any number of threads,
// and close it with Close() or by deleting it.
//
// Thread safety: every method may be called concurrently. Objects the DB hands out
// (iterators, snapshots, column family handles) must be released before it is deleted.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "shale/iterator.h"
#include "shale/options.h"
#include "shale/snapshot.h"
#include "shale/status.h"
#include "shale/types.h"
#include "shale/write_batch.h"

namespace shale {

extern const std::string kDefaultColumnFamilyName;  // "default"

// A column family: a separate key space with its own options inside one DB. Only the
// default family exists so far.
class ColumnFamilyHandle {
 public:
  virtual ~ColumnFamilyHandle() = default;
  virtual const std::string& GetName() const = 0;
  virtual uint32_t GetID() const = 0;
  virtual const Comparator* GetComparator() const = 0;
};

class DB {
 public:
  // Opens the DB in directory `name`. On success *dbptr is the DB, owned by the caller;
  // on failure it is nullptr.
  static Status Open(const Options& options, const std::string& name, DB** dbptr);
  static Status Open(const Options& options, const std::string& name,
                     std::unique_ptr<DB>* dbptr);

  DB() = default;
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;
  // Closes the DB if Close() was not called.
  virtual ~DB();

  // Waits for background work, releases the directory lock and returns the first error.
  // The object must still be deleted afterwards.
  virtual Status Close() = 0;

  virtual Status Put(const WriteOptions& options, ColumnFamilyHandle* column_family,
                     const Slice& key, const Slice& value) = 0;
  virtual Status Put(const WriteOptions& options, const Slice& key, const Slice& value) {
    return Put(options, DefaultColumnFamily(), key, value);
  }

  virtual Status Delete(const WriteOptions& options, ColumnFamilyHandle* column_family,
                        const Slice& key) = 0;
  virtual Status Delete(const WriteOptions& options, const Slice& key) {
    return Delete(options, DefaultColumnFamily(), key);
  }

  // Removes a key that was Put at most once since it was last deleted; then it behaves as
  // Delete. Mixing it with several Puts or with Merge of the same key is undefined, as in
  // RocksDB.
  virtual Status SingleDelete(const WriteOptions& options, ColumnFamilyHandle* column_family,
                              const Slice& key) = 0;
  virtual Status SingleDelete(const WriteOptions& options, const Slice& key) {
    return SingleDelete(options, DefaultColumnFamily(), key);
  }

  // Adds a merge operand. Without a merge operator in the options: NotSupported.
  virtual Status Merge(const WriteOptions& options, ColumnFamilyHandle* column_family,
                       const Slice& key, const Slice& value) = 0;
  virtual Status Merge(const WriteOptions& options, const Slice& key, const Slice& value) {
    return Merge(options, DefaultColumnFamily(), key, value);
  }

  // Applies every update of the batch atomically. updates may be reused afterwards.
  virtual Status Write(const WriteOptions& options, WriteBatch* updates) = 0;

  // NotFound when the key is absent; the value otherwise.
  virtual Status Get(const ReadOptions& options, ColumnFamilyHandle* column_family,
                     const Slice& key, PinnableSlice* value) = 0;
  virtual Status Get(const ReadOptions& options, ColumnFamilyHandle* column_family,
                     const Slice& key, std::string* value) {
    PinnableSlice pinnable(value);
    Status s = Get(options, column_family, key, &pinnable);
    if (s.ok() && pinnable.IsPinned()) value->assign(pinnable.data(), pinnable.size());
    return s;
  }
  virtual Status Get(const ReadOptions& options, const Slice& key, std::string* value) {
    return Get(options, DefaultColumnFamily(), key, value);
  }

  // The caller deletes the iterator, before the DB. It starts unpositioned.
  virtual Iterator* NewIterator(const ReadOptions& options,
                                ColumnFamilyHandle* column_family) = 0;
  virtual Iterator* NewIterator(const ReadOptions& options) {
    return NewIterator(options, DefaultColumnFamily());
  }

  // A handle to the current state; release it with ReleaseSnapshot.
  virtual const Snapshot* GetSnapshot() = 0;
  virtual void ReleaseSnapshot(const Snapshot* snapshot) = 0;

  // Writes the memtables to SST files.
  virtual Status Flush(const FlushOptions& options, ColumnFamilyHandle* column_family) = 0;
  virtual Status Flush(const FlushOptions& options) {
    return Flush(options, DefaultColumnFamily());
  }

  virtual const std::string& GetName() const = 0;
  virtual Env* GetEnv() const = 0;
  virtual Options GetOptions(ColumnFamilyHandle* column_family) const = 0;
  virtual Options GetOptions() const { return GetOptions(DefaultColumnFamily()); }

  // Owned by the DB; valid until it is deleted.
  virtual ColumnFamilyHandle* DefaultColumnFamily() const = 0;
};

// Deletes the DB's files in `name` (and the directory if then empty). The DB must not be
// open. A directory that holds no DB is left alone and OK is returned.
Status DestroyDB(const std::string& name, const Options& options);

}  // namespace shale
