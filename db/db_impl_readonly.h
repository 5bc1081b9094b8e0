// DBImplReadOnly: a DB opened with DB::OpenForReadOnly, which reads a DB directory and
// changes nothing in it, so that any number of them may read one directory at once, next
// to a read-write instance (whose later changes they do not see: RocksDB calls their
// behaviour then undefined; here they go on reading their view, and a read of a file the
// writer deleted since answers IOError).
//
// What it does, as RocksDB's: reads CURRENT and the MANIFEST (the families Open names,
// the default among them; the DB may have others), then replays the WALs into one
// memtable per family, however large it grows, and serves reads from that view: Get,
// MultiGet, iterators, snapshots, properties, the file metadata, GetLiveFiles and a
// checkpoint (its WALs copied, not flushed). What it does not: take the LOCK file, make an
// info LOG, a WAL, a MANIFEST, an OPTIONS file or a table file, flush, compact or delete
// anything. Every call that would answers NotSupported with RocksDB's message ("Not
// supported operation in read only mode."); so do SetOptions and SetDBOptions, which would
// write an OPTIONS file.
//
// A secondary instance (db/db_impl_secondary.h) is one that can load the directory's
// state again: LoadState is the step both share.
//
// Thread safety: as DBImpl's (any thread, reads without the DB mutex). LoadState takes the
// DB mutex for its whole run, I/O included; reads do not wait for it.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "db/db_impl.h"

namespace shale {

class DBImplReadOnly : public DBImpl {
 public:
  // DB::OpenForReadOnly with families. The DB must exist (CheckDbExists, may_create_dir).
  // error_if_wal_file_exists: Corruption if a WAL file with data is in the directory.
  static Status Open(const DBOptions& db_options, const std::string& dbname,
                     const std::vector<ColumnFamilyDescriptor>& column_families,
                     std::vector<ColumnFamilyHandle*>* handles, bool error_if_wal_file_exists,
                     DB** dbptr);

  using DB::Delete;
  using DB::Merge;
  using DB::Put;
  using DB::SingleDelete;
  Status Put(const WriteOptions&, ColumnFamilyHandle*, const Slice&, const Slice&) override {
    return Refusal();
  }
  Status Delete(const WriteOptions&, ColumnFamilyHandle*, const Slice&) override {
    return Refusal();
  }
  Status SingleDelete(const WriteOptions&, ColumnFamilyHandle*, const Slice&) override {
    return Refusal();
  }
  Status Merge(const WriteOptions&, ColumnFamilyHandle*, const Slice&, const Slice&) override {
    return Refusal();
  }
  Status Write(const WriteOptions&, WriteBatch*) override { return Refusal(); }
  using DB::Flush;
  Status Flush(const FlushOptions&, ColumnFamilyHandle*) override { return Refusal(); }
  Status Flush(const FlushOptions&, const std::vector<ColumnFamilyHandle*>&) override {
    return Refusal();
  }
  using DB::CompactRange;
  Status CompactRange(const CompactRangeOptions&, ColumnFamilyHandle*, const Slice*,
                      const Slice*) override {
    return Refusal();
  }
  // Nothing runs in the background to wait for.
  Status WaitForCompact(const WaitForCompactOptions&) override { return Status::OK(); }
  using DB::SetOptions;
  Status SetOptions(ColumnFamilyHandle*,
                    const std::unordered_map<std::string, std::string>&) override {
    return Refusal();
  }
  Status SetDBOptions(const std::unordered_map<std::string, std::string>&) override {
    return Refusal();
  }
  Status CreateColumnFamily(const ColumnFamilyOptions&, const std::string&,
                            ColumnFamilyHandle**) override {
    return Refusal();
  }
  Status DropColumnFamily(ColumnFamilyHandle*) override { return Refusal(); }
  Status DisableFileDeletions() override { return Refusal(); }
  Status EnableFileDeletions() override { return Refusal(); }
  // As RocksDB's: flush_memtable is ignored (nothing is flushed).
  Status GetLiveFiles(std::vector<std::string>& live_files, uint64_t* manifest_file_size,
                      bool /*flush_memtable*/) override {
    return DBImpl::GetLiveFiles(live_files, manifest_file_size, /*flush_memtable=*/false);
  }
  using DB::IngestExternalFile;
  Status IngestExternalFile(ColumnFamilyHandle*, const std::vector<std::string>&,
                            const IngestExternalFileOptions&) override {
    return Refusal();
  }
  Status IngestExternalFiles(const std::vector<IngestExternalFileArg>&) override {
    return Refusal();
  }

 protected:
  // refusal: the message of every NotSupported (RocksDB's words for the kind of instance).
  // options: checked (CheckOpenArguments); their info_log, if any, is the only one used.
  DBImplReadOnly(const Options& options, const std::string& dbname, const char* refusal);

  // Open's first steps: CheckOpenArguments, then the DB must exist: the error reading its
  // CURRENT file otherwise (IOError, No such file or directory, for a directory without a
  // DB, as RocksDB's). may_create_dir: with create_if_missing the directory is made first
  // (RocksDB's historic behaviour for a read-only open), and nothing else.
  static Status CheckDbExists(const DBOptions& db_options, const std::string& dbname,
                              const std::vector<ColumnFamilyDescriptor>& column_families,
                              bool may_create_dir, std::vector<ColumnFamilyHandle*>* handles,
                              Options* checked, std::map<std::string, Options>* others,
                              std::vector<std::string>* clamped);
  // Opens impl (built, its families not yet registered) on its directory: the families of
  // column_families registered, the state loaded (LoadState), a handle per descriptor.
  static Status OpenInstance(std::unique_ptr<DBImplReadOnly> impl,
                             const std::vector<ColumnFamilyDescriptor>& column_families,
                             const std::map<std::string, Options>& others,
                             bool error_if_wal_file_exists,
                             std::vector<ColumnFamilyHandle*>* handles, DB** dbptr);

  // Reads the directory's state and makes it the one reads see: the Versions from CURRENT
  // and the MANIFEST it names, each live family's memtable from the WALs (replayed as
  // recovery does, per wal_recovery_mode), the last sequence, new SuperVersions. first:
  // the state at Open, which sets up the families Open names (InvalidArgument "Column
  // family not found: x" for one the DB lacks); later loads keep those families and drop
  // the ones the MANIFEST dropped since (their handles go on reading the last view), and
  // ignore families created since. On failure the SuperVersions stay as they were.
  // writer_may_run: a writer may change the files meanwhile, so a WAL the MANIFEST needs
  // and that is gone is TryAgain (the state read is already stale), as is any file of the
  // state that vanished before it was opened; the caller loads again.
  Status LoadState(bool first, bool writer_may_run) EXCLUDES(mutex_);

  Status Refusal() const { return Status::NotSupported(refusal_); }
  Logger* info_log() const { return info_log_; }

 private:
  const char* const refusal_;
  // The table files the Versions listed at the last load (LoadState closes those that no
  // Version lists any more).
  std::set<uint64_t> tables_seen_ GUARDED_BY(mutex_);
};

}  // namespace shale
