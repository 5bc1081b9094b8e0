// DB: an open key-value store. Open one with DB::Open, use it from any number of threads,
// and close it with Close() or by deleting it.
//
// Thread safety: every method may be called concurrently. Objects the DB hands out
// (iterators, snapshots, column family handles) must be released before it is deleted.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "shale/iterator.h"
#include "shale/metadata.h"
#include "shale/options.h"
#include "shale/snapshot.h"
#include "shale/status.h"
#include "shale/transaction_log.h"
#include "shale/types.h"
#include "shale/write_batch.h"

namespace shale {

extern const std::string kDefaultColumnFamilyName;  // "default"

// A column family's name and options, as Open takes them and LoadLatestOptions returns them.
struct ColumnFamilyDescriptor {
  std::string name;
  ColumnFamilyOptions options;
  ColumnFamilyDescriptor() : name(kDefaultColumnFamilyName) {}
  ColumnFamilyDescriptor(const std::string& _name, const ColumnFamilyOptions& _options)
      : name(_name), options(_options) {}
};

// A column family: a key space of its own inside one DB, with its own options, memtables
// and levels; every family shares the DB's WAL, so a WriteBatch across families is atomic.
// A handle from Open or CreateColumnFamily is the caller's: release it with
// DestroyColumnFamilyHandle (or delete it) before the DB is deleted. The default family's
// handle (DefaultColumnFamily) belongs to the DB.
class ColumnFamilyHandle {
 public:
  virtual ~ColumnFamilyHandle() = default;
  virtual const std::string& GetName() const = 0;
  virtual uint32_t GetID() const = 0;
  // The family's name and the options in effect.
  virtual Status GetDescriptor(ColumnFamilyDescriptor* desc) = 0;
  virtual const Comparator* GetComparator() const = 0;
};

// How GetMergeOperands is called.
struct GetMergeOperandsOptions {
  // The length of the caller's PinnableSlice array: the most operands that are returned.
  // Default: 0.
  int expected_max_number_of_operands = 0;
};

// One family's part of DB::IngestExternalFiles.
struct IngestExternalFileArg {
  ColumnFamilyHandle* column_family = nullptr;
  std::vector<std::string> external_files;
  IngestExternalFileOptions options;
};

class DB {
 public:
  // Opens the DB in directory `name`. On success *dbptr is the DB, owned by the caller;
  // on failure it is nullptr.
  static Status Open(const Options& options, const std::string& name, DB** dbptr);
  static Status Open(const Options& options, const std::string& name, std::unique_ptr<DB>* dbptr);
  // Opens the DB with its column families: every family the DB has must be named (else
  // InvalidArgument "Column families not opened: ..."), the default among them; a named
  // family the DB lacks is created with create_missing_column_families (else
  // InvalidArgument "Column family not found: ..."). *handles gets one handle per
  // descriptor, in their order (the default's too), owned by the caller.
  static Status Open(const DBOptions& db_options, const std::string& name,
                     const std::vector<ColumnFamilyDescriptor>& column_families,
                     std::vector<ColumnFamilyHandle*>* handles, DB** dbptr);
  static Status Open(const DBOptions& db_options, const std::string& name,
                     const std::vector<ColumnFamilyDescriptor>& column_families,
                     std::vector<ColumnFamilyHandle*>* handles, std::unique_ptr<DB>* dbptr);
  // The names of the DB's column families (the default first), read from its MANIFEST.
  static Status ListColumnFamilies(const DBOptions& db_options, const std::string& name,
                                   std::vector<std::string>* column_families);

  // Opens the DB read-only: reads only, from the state its files hold at Open (the WALs
  // replayed into memory, nothing flushed). Nothing in the directory changes: no LOCK is
  // taken, no info LOG, WAL, MANIFEST or OPTIONS file is written, nothing is flushed,
  // compacted or deleted. So any number of read-only instances may open a directory at
  // once, and beside one read-write instance (whose later writes they do not see; a file it
  // deletes meanwhile reads as IOError). Every call that would write (Put, Delete, Merge,
  // Write, Flush, CompactRange, IngestExternalFile(s), Create/DropColumnFamily, SetOptions,
  // SetDBOptions, Disable/EnableFileDeletions) answers NotSupported. A directory without a
  // DB: the error reading its CURRENT file (IOError, No such file or directory);
  // create_if_missing only creates the directory. error_if_wal_file_exists: Corruption if
  // a WAL file with data is in the directory.
  static Status OpenForReadOnly(const Options& options, const std::string& name, DB** dbptr,
                                bool error_if_wal_file_exists = false);
  static Status OpenForReadOnly(const Options& options, const std::string& name,
                                std::unique_ptr<DB>* dbptr, bool error_if_wal_file_exists = false);
  // The same with families: any of the DB's families may be opened, the default always
  // (InvalidArgument "Column family not found: x" for one it lacks; none is created).
  static Status OpenForReadOnly(const DBOptions& db_options, const std::string& name,
                                const std::vector<ColumnFamilyDescriptor>& column_families,
                                std::vector<ColumnFamilyHandle*>* handles, DB** dbptr,
                                bool error_if_wal_file_exists = false);
  static Status OpenForReadOnly(const DBOptions& db_options, const std::string& name,
                                const std::vector<ColumnFamilyDescriptor>& column_families,
                                std::vector<ColumnFamilyHandle*>* handles,
                                std::unique_ptr<DB>* dbptr, bool error_if_wal_file_exists = false);
  // Opens a secondary instance of the DB at `name`: read-only like OpenForReadOnly, and
  // able to follow the primary that writes it (TryCatchUpWithPrimary). Several may follow
  // one primary; none changes its files. secondary_path: a directory of the secondary's
  // own for its info LOG (made if missing). max_open_files = -1 (the default) keeps every
  // table file open, so that one the primary deletes stays readable in views that have it.
  // Writes answer NotSupported.
  static Status OpenAsSecondary(const Options& options, const std::string& name,
                                const std::string& secondary_path, DB** dbptr);
  static Status OpenAsSecondary(const Options& options, const std::string& name,
                                const std::string& secondary_path, std::unique_ptr<DB>* dbptr);
  // The same with families: any of the DB's families, the default always. Families the
  // primary creates later are ignored; one it drops is dropped here at the next catch-up
  // (its handle goes on reading the last view).
  static Status OpenAsSecondary(const DBOptions& db_options, const std::string& name,
                                const std::string& secondary_path,
                                const std::vector<ColumnFamilyDescriptor>& column_families,
                                std::vector<ColumnFamilyHandle*>* handles, DB** dbptr);
  static Status OpenAsSecondary(const DBOptions& db_options, const std::string& name,
                                const std::string& secondary_path,
                                const std::vector<ColumnFamilyDescriptor>& column_families,
                                std::vector<ColumnFamilyHandle*>* handles,
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
  // Delete. Mixing it with several Puts, with Delete or with Merge of the same key is
  // undefined, as in RocksDB (a SingleDelete may, for one, cancel a merge operand or leave
  // an older Put visible to a snapshot).
  virtual Status SingleDelete(const WriteOptions& options, ColumnFamilyHandle* column_family,
                              const Slice& key) = 0;
  virtual Status SingleDelete(const WriteOptions& options, const Slice& key) {
    return SingleDelete(options, DefaultColumnFamily(), key);
  }

  // Deletes every key k of the family with begin_key <= k < end_key, as one write: reads at
  // later sequence numbers no longer see them; snapshots taken before still do. The range
  // is a range tombstone, not a key-by-key delete: it costs one record however many keys
  // it covers, and compaction drops the keys it covers. begin_key > end_key:
  // InvalidArgument; an empty range (begin_key == end_key) deletes nothing. A TransactionDB
  // and an OptimisticTransactionDB answer NotSupported (see transaction_db.h).
  virtual Status DeleteRange(const WriteOptions& options, ColumnFamilyHandle* column_family,
                             const Slice& begin_key, const Slice& end_key);
  virtual Status DeleteRange(const WriteOptions& options, const Slice& begin_key,
                             const Slice& end_key) {
    return DeleteRange(options, DefaultColumnFamily(), begin_key, end_key);
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

  // Many Gets from one view: every key is read at the same sequence (options.snapshot's,
  // else the newest write published when the call starts) in the same memtables and files,
  // so the answers are consistent with each other. Statuses and values are per key, as
  // Get gives them (OK with the value, NotFound with the value emptied, an error); a key
  // asked for twice is answered twice. A handle that is not this DB's, or sizes that do
  // not match, give InvalidArgument for every key.
  //
  // *values is resized to keys.size(); column_family[i] is the family of keys[i].
  virtual std::vector<Status> MultiGet(const ReadOptions& options,
                                       const std::vector<ColumnFamilyHandle*>& column_family,
                                       const std::vector<Slice>& keys,
                                       std::vector<std::string>* values) = 0;
  virtual std::vector<Status> MultiGet(const ReadOptions& options, const std::vector<Slice>& keys,
                                       std::vector<std::string>* values) {
    return MultiGet(options, std::vector<ColumnFamilyHandle*>(keys.size(), DefaultColumnFamily()),
                    keys, values);
  }
  // The same for num_keys keys of one family into the caller's arrays values and statuses
  // (num_keys long each). A value may stay pinned in its cached block, as with Get, until
  // it is Reset() or destroyed (before the DB is deleted). sorted_input: the keys are
  // already in the comparator's order, so they are not sorted again.
  virtual void MultiGet(const ReadOptions& options, ColumnFamilyHandle* column_family,
                        const size_t num_keys, const Slice* keys, PinnableSlice* values,
                        Status* statuses, const bool sorted_input = false) = 0;

  // The merge operands of `key` as of options.snapshot, in the order they were written,
  // each in its own PinnableSlice of the caller's array merge_operands (room for
  // expected_max_number_of_operands). The value they rest on, if the newest entry beneath
  // them is a Put, comes first; a key holding just a Put gives that one value. Returns
  // NotFound (*number_of_operands = 0) if the key has neither operands nor a value, and
  // Incomplete, filling nothing, with *number_of_operands = the count, if there are more
  // than expected_max_number_of_operands. Needs no merge operator.
  //
  // Large results (operands averaging at least 256 bytes and totalling at least 32 KiB) pin
  // the memory the operands live in (memtable, cached block) instead of copying; either way
  // each slice stays valid and unchanged, whatever later writes, flushes and compactions do,
  // until it is Reset() or destroyed (which must happen before the DB is deleted).
  virtual Status GetMergeOperands(const ReadOptions& options, ColumnFamilyHandle* column_family,
                                  const Slice& key, PinnableSlice* merge_operands,
                                  GetMergeOperandsOptions* get_merge_operands_options,
                                  int* number_of_operands) = 0;

  // The caller deletes the iterator, before the DB. It starts unpositioned.
  virtual Iterator* NewIterator(const ReadOptions& options, ColumnFamilyHandle* column_family) = 0;
  virtual Iterator* NewIterator(const ReadOptions& options) {
    return NewIterator(options, DefaultColumnFamily());
  }
  // One iterator per family, all over the same view of the DB (options.snapshot's, else
  // one taken now). On failure *iterators is empty.
  virtual Status NewIterators(const ReadOptions& options,
                              const std::vector<ColumnFamilyHandle*>& column_families,
                              std::vector<Iterator*>* iterators) = 0;

  // A handle to the current state; release it with ReleaseSnapshot.
  virtual const Snapshot* GetSnapshot() = 0;
  virtual void ReleaseSnapshot(const Snapshot* snapshot) = 0;

  // Writes the memtables to SST files: one family's, or each of several families'.
  virtual Status Flush(const FlushOptions& options, ColumnFamilyHandle* column_family) = 0;
  virtual Status Flush(const FlushOptions& options,
                       const std::vector<ColumnFamilyHandle*>& column_families);
  virtual Status Flush(const FlushOptions& options) {
    return Flush(options, DefaultColumnFamily());
  }

  // The sequence number of the newest write visible to reads.
  virtual SequenceNumber GetLatestSequenceNumber() const = 0;

  // Named properties (see Properties). The "rocksdb." spellings answer too.
  struct Properties {
    // kCFStats: the family's per-level table ("** Compaction Stats [name] **": files,
    // size, score, read/write GB, write-amp, compaction seconds and count) and flush
    // figures; kDBStats: the DB's uptime, writes, WAL and stalls; kStats: the two together.
    static const std::string kStats;                           // "shale.stats"
    static const std::string kCFStats;                         // "shale.cfstats"
    static const std::string kDBStats;                         // "shale.dbstats"
    static const std::string kLevelStats;                      // "shale.levelstats"
    static const std::string kNumFilesAtLevelPrefix;           // "shale.num-files-at-level<N>"
    static const std::string kEstimateNumKeys;                 // "shale.estimate-num-keys"
    static const std::string kCurSizeAllMemTables;             // "shale.cur-size-all-mem-tables"
    static const std::string kBlockCacheUsage;                 // "shale.block-cache-usage"
    static const std::string kEstimatePendingCompactionBytes;  // "shale.estimate-pending-..."
    static const std::string kNumRunningCompactions;           // "shale.num-running-compactions"
    static const std::string kNumRunningFlushes;               // "shale.num-running-flushes"
    static const std::string kTotalSstFilesSize;               // "shale.total-sst-files-size"
    static const std::string kNumImmutableMemTable;            // "shale.num-immutable-mem-table"
    static const std::string kActualDelayedWriteRate;          // "shale.actual-delayed-write-rate"
    static const std::string kIsWriteStopped;                  // "shale.is-write-stopped"
    // The live SST files, per level: "--- level N --- version# V ---", then one line per
    // file " number:size[smallest_seqno .. largest_seqno]['smallest' seq:S, type:T ..
    // 'largest' seq:S, type:T]" with the user keys in hex, as RocksDB prints it (less the
    // "(N)" of sampled reads RocksDB appends: shale samples none).
    static const std::string kSSTables;  // "shale.sstables"
  };
  // false if the property is unknown.
  virtual bool GetProperty(ColumnFamilyHandle* column_family, const Slice& property,
                           std::string* value) = 0;
  virtual bool GetProperty(const Slice& property, std::string* value) {
    return GetProperty(DefaultColumnFamily(), property, value);
  }
  // Only for properties with a map form: kCFStats (the family's compaction table,
  // "compaction.<L0..|Sum>.<figure>") and kDBStats ("db.<counter>", "db.uptime"), with
  // RocksDB's keys. false for any other.
  virtual bool GetMapProperty(ColumnFamilyHandle* column_family, const Slice& property,
                              std::map<std::string, std::string>* value) = 0;
  virtual bool GetMapProperty(const Slice& property, std::map<std::string, std::string>* value) {
    return GetMapProperty(DefaultColumnFamily(), property, value);
  }
  // Only for properties with a numeric value.
  virtual bool GetIntProperty(ColumnFamilyHandle* column_family, const Slice& property,
                              uint64_t* value) = 0;
  virtual bool GetIntProperty(const Slice& property, uint64_t* value) {
    return GetIntProperty(DefaultColumnFamily(), property, value);
  }
  // An integer property summed over every column family (a property of the whole DB, such
  // as shale.num-running-compactions, is given once).
  virtual bool GetAggregatedIntProperty(const Slice& property, uint64_t* value) = 0;

  // Compacts the keys in [*begin, *end] (null: unbounded) down the tree: memtables are
  // flushed, then each level holding data in the range is compacted into the next; the
  // bottommost level per options.bottommost_level_compaction; with change_level the
  // result moves to options.target_level.
  virtual Status CompactRange(const CompactRangeOptions& options, ColumnFamilyHandle* column_family,
                              const Slice* begin, const Slice* end) = 0;
  virtual Status CompactRange(const CompactRangeOptions& options, const Slice* begin,
                              const Slice* end) {
    return CompactRange(options, DefaultColumnFamily(), begin, end);
  }
  // Returns when no flush or compaction is pending or running (or the DB is in error:
  // that error).
  virtual Status WaitForCompact(const WaitForCompactOptions& options) = 0;

  virtual const std::string& GetName() const = 0;
  virtual Env* GetEnv() const = 0;
  // The options in effect now: Open's, sanitized, with every SetOptions / SetDBOptions
  // since applied.
  virtual Options GetOptions(ColumnFamilyHandle* column_family) const = 0;
  virtual Options GetOptions() const { return GetOptions(DefaultColumnFamily()); }
  virtual DBOptions GetDBOptions() const = 0;

  // Changes options of a column family while the DB is open: option name -> value, spelled
  // as in an OPTIONS file ("write_buffer_size" -> "8388608" or "8M", "compression" ->
  // "kZSTD", "disable_auto_compactions" -> "true"). Only the options RocksDB marks mutable
  // and shale acts on may change (those its option table marks mutable; a test checks this
  // list against the table):
  // `write_buffer_size`, `arena_block_size`, `memtable_huge_page_size` (from the next
  // memtable); `max_write_buffer_number`, `level0_file_num_compaction_trigger`,
  // `level0_slowdown_writes_trigger`, `level0_stop_writes_trigger`,
  // `soft_pending_compaction_bytes_limit`, `hard_pending_compaction_bytes_limit` (the next
  // write); `max_bytes_for_level_base`, `max_bytes_for_level_multiplier`,
  // `target_file_size_base`, `target_file_size_multiplier`, `max_compaction_bytes`,
  // `disable_auto_compactions` (the next compaction pick); `compression` (the next file
  // written); `max_successive_merges` (the next Merge). Another name, a
  // malformed or out-of-bounds value, or a result that breaks a rule between options
  // (stop >= slowdown >= compaction trigger) gives InvalidArgument naming the option, and
  // nothing changes: a call applies all of its changes or none. Applied changes are
  // written to the LOG and to a new OPTIONS file (a failure to write it is logged, not
  // returned, as in RocksDB without fail_if_options_file_error).
  virtual Status SetOptions(ColumnFamilyHandle* column_family,
                            const std::unordered_map<std::string, std::string>& new_options) = 0;
  virtual Status SetOptions(const std::unordered_map<std::string, std::string>& new_options) {
    return SetOptions(DefaultColumnFamily(), new_options);
  }
  // The same for DBOptions: `max_background_jobs`, `max_background_compactions`,
  // `max_background_flushes` (the thread pools, from the next scheduling);
  // `max_subcompactions`, `compaction_readahead_size` (the next compaction);
  // `delayed_write_rate` (the next delayed write); `stats_dump_period_sec` (the next dump).
  virtual Status SetDBOptions(const std::unordered_map<std::string, std::string>& new_options) = 0;

  // Owned by the DB; valid until it is deleted.
  virtual ColumnFamilyHandle* DefaultColumnFamily() const = 0;

  // Creates a column family (recorded in the MANIFEST before it returns) and gives its
  // handle. InvalidArgument if a live family has the name, or for options the option
  // tables refuse.
  virtual Status CreateColumnFamily(const ColumnFamilyOptions& options,
                                    const std::string& column_family_name,
                                    ColumnFamilyHandle** handle) = 0;
  // One family per name with the same options, or one per descriptor. On failure the
  // families created before it remain, with their handles in *handles.
  virtual Status CreateColumnFamilies(const ColumnFamilyOptions& options,
                                      const std::vector<std::string>& column_family_names,
                                      std::vector<ColumnFamilyHandle*>* handles);
  virtual Status CreateColumnFamilies(const std::vector<ColumnFamilyDescriptor>& column_families,
                                      std::vector<ColumnFamilyHandle*>* handles);
  // Drops a column family: recorded in the MANIFEST, its files deleted once nothing reads
  // them. Its handle still serves reads of what it held until destroyed; writes to it fail
  // (InvalidArgument). The default family cannot be dropped (InvalidArgument); a family
  // already dropped gives InvalidArgument too.
  virtual Status DropColumnFamily(ColumnFamilyHandle* column_family) = 0;
  virtual Status DropColumnFamilies(const std::vector<ColumnFamilyHandle*>& column_families);
  // Releases a handle from Open or CreateColumnFamily (the default family's is left alone).
  virtual Status DestroyColumnFamilyHandle(ColumnFamilyHandle* column_family);

  // ---- The DB's files (db/db_impl_files.cc).
  // Stops the deletion of obsolete files (compactions and flushes go on; what they make
  // obsolete stays on disk) until every DisableFileDeletions has been matched by an
  // EnableFileDeletions: a count, so that callers (a backup, a checkpoint) need not know
  // of each other. When DisableFileDeletions returns, no deletion is under way. An
  // EnableFileDeletions beyond the count does nothing; the one that brings it to zero
  // deletes what became obsolete meanwhile. Both return OK.
  virtual Status DisableFileDeletions() = 0;
  virtual Status EnableFileDeletions() = 0;
  // The files a copy of the DB needs besides the WALs, named relative to the DB directory
  // with a leading slash: the live table files of every family, "/CURRENT", the live
  // "/MANIFEST-<n>" and the newest "/OPTIONS-<n>". *manifest_file_size is the MANIFEST's
  // length that describes exactly those table files: a copy must stop there, since the
  // MANIFEST grows afterwards. flush_memtable: flush every family first, so that the
  // table files hold every write made before the call. Disable file deletions before the
  // call to keep the files until they are copied.
  virtual Status GetLiveFiles(std::vector<std::string>& live_files, uint64_t* manifest_file_size,
                              bool flush_memtable = true) = 0;
  // The WAL files in the DB directory, oldest first (those no family needs any more too,
  // until they are deleted). Corruption if the one writes go to is missing.
  virtual Status GetSortedWalFiles(VectorWalPtr& files) = 0;
  // The WAL writes go to now (it may be switched right after the call).
  virtual Status GetCurrentWalFile(std::unique_ptr<WalFile>* current_wal_file) = 0;
  // Every live table file of every family, with its family and level.
  virtual void GetLiveFilesMetaData(std::vector<LiveFileMetaData>* metadata) = 0;
  // One family's tree (its files per level).
  virtual void GetColumnFamilyMetaData(ColumnFamilyHandle* column_family,
                                       ColumnFamilyMetaData* metadata) = 0;
  void GetColumnFamilyMetaData(ColumnFamilyMetaData* metadata) {
    GetColumnFamilyMetaData(DefaultColumnFamily(), metadata);
  }

  // Bulk loading: takes table files SstFileWriter made into the family, as they are (each
  // one copied or linked into the DB directory under a new number). Each file lands in the
  // lowest level it fits in without overlapping anything newer; its keys read as written
  // after every write the call returns behind (writes are held while it is recorded), and
  // a key in several files of one call reads as the last file has it. On failure the DB is
  // as before and no file of the call is left in it. Statuses: InvalidArgument for an
  // empty list, a file that is not a finished SstFileWriter file of this family's
  // comparator, or what the options forbid (see IngestExternalFileOptions); Corruption for
  // a damaged file; the Env's error for a file that cannot be read or copied.
  virtual Status IngestExternalFile(ColumnFamilyHandle* column_family,
                                    const std::vector<std::string>& external_files,
                                    const IngestExternalFileOptions& options) = 0;
  Status IngestExternalFile(const std::vector<std::string>& external_files,
                            const IngestExternalFileOptions& options) {
    return IngestExternalFile(DefaultColumnFamily(), external_files, options);
  }
  // Several families' ingestions, all or none: one MANIFEST write records every family's
  // files, so that a crash leaves all of them ingested or none. A family may appear once.
  virtual Status IngestExternalFiles(const std::vector<IngestExternalFileArg>& args) = 0;

  // A secondary instance (OpenAsSecondary): reads the primary's MANIFEST and WALs again and
  // makes the state they hold now the one later reads see (reads under way keep theirs).
  // The primary may move on meanwhile; the reading is tried again a few times, and on
  // failure the error is returned and the previous view stays. Any other DB:
  // NotSupported("Supported only by secondary instance"), RocksDB's.
  virtual Status TryCatchUpWithPrimary() {
    return Status::NotSupported("Supported only by secondary instance");
  }
};

// Deletes the DB's files in `name` (and the directory if then empty). The DB must not be
// open. A directory that holds no DB is left alone and OK is returned.
Status DestroyDB(const std::string& name, const Options& options);

}  // namespace shale
