// StackableDB: a DB that hands every call to another DB, as RocksDB's does. Derive from it
// to change a few calls (a TransactionDB, a DB that counts or checks what passes through)
// and let the rest go to the base DB unchanged.
//
// Ownership: the StackableDB owns the base DB and deletes it in its destructor. Handles,
// iterators and snapshots it returns are the base DB's, released the usual way (through
// either object) before the StackableDB is deleted.
// Thread safety: that of the base DB; StackableDB itself holds no state but the pointer.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "shale/db.h"

namespace shale {

class StackableDB : public DB {
 public:
  // Takes ownership of db. REQUIRES: db != nullptr.
  explicit StackableDB(DB* db) : db_(db) {}
  ~StackableDB() override { delete db_; }

  // The DB beneath this one (still owned by this StackableDB).
  virtual DB* GetBaseDB() { return db_; }
  // The bottom of the stack: the DB that is not a StackableDB.
  virtual DB* GetRootDB() {
    auto* stacked = dynamic_cast<StackableDB*>(db_);
    return stacked == nullptr ? db_ : stacked->GetRootDB();
  }

  Status Close() override { return db_->Close(); }

  // The default-family overloads are forwarded too, so that a base DB which overrides
  // them sees them as its own callers would call them.
  using DB::Delete;
  using DB::DeleteRange;
  using DB::Get;
  using DB::Merge;
  using DB::MultiGet;
  using DB::Put;
  using DB::SingleDelete;

  Status Put(const WriteOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
             const Slice& value) override {
    return db_->Put(options, column_family, key, value);
  }
  Status Put(const WriteOptions& options, const Slice& key, const Slice& value) override {
    return db_->Put(options, key, value);
  }
  Status Delete(const WriteOptions& options, ColumnFamilyHandle* column_family,
                const Slice& key) override {
    return db_->Delete(options, column_family, key);
  }
  Status Delete(const WriteOptions& options, const Slice& key) override {
    return db_->Delete(options, key);
  }
  Status SingleDelete(const WriteOptions& options, ColumnFamilyHandle* column_family,
                      const Slice& key) override {
    return db_->SingleDelete(options, column_family, key);
  }
  Status SingleDelete(const WriteOptions& options, const Slice& key) override {
    return db_->SingleDelete(options, key);
  }
  Status Merge(const WriteOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
               const Slice& value) override {
    return db_->Merge(options, column_family, key, value);
  }
  Status Merge(const WriteOptions& options, const Slice& key, const Slice& value) override {
    return db_->Merge(options, key, value);
  }
  // The default-family form is DB's, which calls this one: a derived DB that refuses range
  // deletions (a TransactionDB) overrides this form only.
  Status DeleteRange(const WriteOptions& options, ColumnFamilyHandle* column_family,
                     const Slice& begin_key, const Slice& end_key) override {
    return db_->DeleteRange(options, column_family, begin_key, end_key);
  }
  Status Write(const WriteOptions& options, WriteBatch* updates) override {
    return db_->Write(options, updates);
  }

  Status Get(const ReadOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
             PinnableSlice* value) override {
    return db_->Get(options, column_family, key, value);
  }
  Status Get(const ReadOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
             std::string* value) override {
    return db_->Get(options, column_family, key, value);
  }
  Status Get(const ReadOptions& options, const Slice& key, std::string* value) override {
    return db_->Get(options, key, value);
  }
  std::vector<Status> MultiGet(const ReadOptions& options,
                               const std::vector<ColumnFamilyHandle*>& column_family,
                               const std::vector<Slice>& keys,
                               std::vector<std::string>* values) override {
    return db_->MultiGet(options, column_family, keys, values);
  }
  std::vector<Status> MultiGet(const ReadOptions& options, const std::vector<Slice>& keys,
                               std::vector<std::string>* values) override {
    return db_->MultiGet(options, keys, values);
  }
  void MultiGet(const ReadOptions& options, ColumnFamilyHandle* column_family,
                const size_t num_keys, const Slice* keys, PinnableSlice* values, Status* statuses,
                const bool sorted_input = false) override {
    db_->MultiGet(options, column_family, num_keys, keys, values, statuses, sorted_input);
  }
  Status GetMergeOperands(const ReadOptions& options, ColumnFamilyHandle* column_family,
                          const Slice& key, PinnableSlice* merge_operands,
                          GetMergeOperandsOptions* get_merge_operands_options,
                          int* number_of_operands) override {
    return db_->GetMergeOperands(options, column_family, key, merge_operands,
                                 get_merge_operands_options, number_of_operands);
  }

  using DB::NewIterator;
  Iterator* NewIterator(const ReadOptions& options, ColumnFamilyHandle* column_family) override {
    return db_->NewIterator(options, column_family);
  }
  Iterator* NewIterator(const ReadOptions& options) override { return db_->NewIterator(options); }
  Status NewIterators(const ReadOptions& options,
                      const std::vector<ColumnFamilyHandle*>& column_families,
                      std::vector<Iterator*>* iterators) override {
    return db_->NewIterators(options, column_families, iterators);
  }

  const Snapshot* GetSnapshot() override { return db_->GetSnapshot(); }
  void ReleaseSnapshot(const Snapshot* snapshot) override { db_->ReleaseSnapshot(snapshot); }

  using DB::Flush;
  Status Flush(const FlushOptions& options, ColumnFamilyHandle* column_family) override {
    return db_->Flush(options, column_family);
  }
  Status Flush(const FlushOptions& options) override { return db_->Flush(options); }
  Status Flush(const FlushOptions& options,
               const std::vector<ColumnFamilyHandle*>& column_families) override {
    return db_->Flush(options, column_families);
  }

  SequenceNumber GetLatestSequenceNumber() const override { return db_->GetLatestSequenceNumber(); }

  using DB::GetIntProperty;
  using DB::GetProperty;
  bool GetProperty(ColumnFamilyHandle* column_family, const Slice& property,
                   std::string* value) override {
    return db_->GetProperty(column_family, property, value);
  }
  bool GetProperty(const Slice& property, std::string* value) override {
    return db_->GetProperty(property, value);
  }
  bool GetIntProperty(ColumnFamilyHandle* column_family, const Slice& property,
                      uint64_t* value) override {
    return db_->GetIntProperty(column_family, property, value);
  }
  using DB::GetMapProperty;
  bool GetMapProperty(ColumnFamilyHandle* column_family, const Slice& property,
                      std::map<std::string, std::string>* value) override {
    return db_->GetMapProperty(column_family, property, value);
  }
  bool GetAggregatedIntProperty(const Slice& property, uint64_t* value) override {
    return db_->GetAggregatedIntProperty(property, value);
  }
  bool GetIntProperty(const Slice& property, uint64_t* value) override {
    return db_->GetIntProperty(property, value);
  }

  using DB::CompactRange;
  Status CompactRange(const CompactRangeOptions& options, ColumnFamilyHandle* column_family,
                      const Slice* begin, const Slice* end) override {
    return db_->CompactRange(options, column_family, begin, end);
  }
  Status CompactRange(const CompactRangeOptions& options, const Slice* begin,
                      const Slice* end) override {
    return db_->CompactRange(options, begin, end);
  }
  Status WaitForCompact(const WaitForCompactOptions& options) override {
    return db_->WaitForCompact(options);
  }

  const std::string& GetName() const override { return db_->GetName(); }
  Env* GetEnv() const override { return db_->GetEnv(); }
  using DB::GetOptions;
  Options GetOptions(ColumnFamilyHandle* column_family) const override {
    return db_->GetOptions(column_family);
  }
  Options GetOptions() const override { return db_->GetOptions(); }
  DBOptions GetDBOptions() const override { return db_->GetDBOptions(); }

  using DB::SetOptions;
  Status SetOptions(ColumnFamilyHandle* column_family,
                    const std::unordered_map<std::string, std::string>& new_options) override {
    return db_->SetOptions(column_family, new_options);
  }
  Status SetOptions(const std::unordered_map<std::string, std::string>& new_options) override {
    return db_->SetOptions(new_options);
  }
  Status SetDBOptions(const std::unordered_map<std::string, std::string>& new_options) override {
    return db_->SetDBOptions(new_options);
  }

  ColumnFamilyHandle* DefaultColumnFamily() const override { return db_->DefaultColumnFamily(); }
  Status CreateColumnFamily(const ColumnFamilyOptions& options, const std::string& name,
                            ColumnFamilyHandle** handle) override {
    return db_->CreateColumnFamily(options, name, handle);
  }
  using DB::CreateColumnFamilies;
  Status CreateColumnFamilies(const ColumnFamilyOptions& options,
                              const std::vector<std::string>& names,
                              std::vector<ColumnFamilyHandle*>* handles) override {
    return db_->CreateColumnFamilies(options, names, handles);
  }
  Status CreateColumnFamilies(const std::vector<ColumnFamilyDescriptor>& column_families,
                              std::vector<ColumnFamilyHandle*>* handles) override {
    return db_->CreateColumnFamilies(column_families, handles);
  }
  Status DropColumnFamily(ColumnFamilyHandle* column_family) override {
    return db_->DropColumnFamily(column_family);
  }
  Status DropColumnFamilies(const std::vector<ColumnFamilyHandle*>& column_families) override {
    return db_->DropColumnFamilies(column_families);
  }
  Status DestroyColumnFamilyHandle(ColumnFamilyHandle* column_family) override {
    return db_->DestroyColumnFamilyHandle(column_family);
  }
  Status DisableFileDeletions() override { return db_->DisableFileDeletions(); }
  Status EnableFileDeletions() override { return db_->EnableFileDeletions(); }
  Status GetLiveFiles(std::vector<std::string>& live_files, uint64_t* manifest_file_size,
                      bool flush_memtable = true) override {
    return db_->GetLiveFiles(live_files, manifest_file_size, flush_memtable);
  }
  Status GetSortedWalFiles(VectorWalPtr& files) override { return db_->GetSortedWalFiles(files); }
  Status GetCurrentWalFile(std::unique_ptr<WalFile>* current_wal_file) override {
    return db_->GetCurrentWalFile(current_wal_file);
  }
  void GetLiveFilesMetaData(std::vector<LiveFileMetaData>* metadata) override {
    db_->GetLiveFilesMetaData(metadata);
  }
  using DB::GetColumnFamilyMetaData;
  void GetColumnFamilyMetaData(ColumnFamilyHandle* column_family,
                               ColumnFamilyMetaData* metadata) override {
    db_->GetColumnFamilyMetaData(column_family, metadata);
  }
  using DB::IngestExternalFile;
  Status IngestExternalFile(ColumnFamilyHandle* column_family,
                            const std::vector<std::string>& external_files,
                            const IngestExternalFileOptions& options) override {
    return db_->IngestExternalFile(column_family, external_files, options);
  }
  Status IngestExternalFiles(const std::vector<IngestExternalFileArg>& args) override {
    return db_->IngestExternalFiles(args);
  }
  Status TryCatchUpWithPrimary() override { return db_->TryCatchUpWithPrimary(); }

 protected:
  DB* db_;  // owned
};

}  // namespace shale
