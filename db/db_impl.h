// DBImpl: the DB. It ties together the write pipeline (db/write_pipeline.h: queues, WAL,
// sequence numbers) and the memtables it writes to, the background flush of immutable
// memtables into L0 files, the VersionSet and MANIFEST, the read path over a pinned
// SuperVersion, snapshots, recovery and file garbage collection. The transaction layer
// reaches it through DBForTransactions (db/db_for_transactions.h) only.
//
// Locking: mutex_ guards metadata (memtable switch, versions, flush scheduling,
// bg_error_). It is never held across WAL or SST I/O except where a comment says so, and
// never together with the pipeline's locks. Readers take no DB mutex. The snapshot list
// has a leaf lock of its own.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "db/background_scheduler.h"
#include "db/column_family.h"
#include "db/column_family_set.h"
#include "db/compaction_picker.h"
#include "db/db_for_transactions.h"
#include "db/internal_stats.h"
#include "db/live_files.h"
#include "db/log_reader.h"
#include "db/log_writer.h"
#include "db/merge_folder.h"
#include "db/pre_release_callback.h"
#include "db/snapshot_checker.h"
#include "db/snapshot_impl.h"
#include "db/table_cache.h"
#include "db/version_set.h"
#include "db/wal_replay.h"
#include "db/write_controller.h"
#include "db/write_pipeline.h"
#include "options/option_table.h"
#include "shale/db.h"
#include "shale/statistics.h"
#include "shale/write_buffer_manager.h"
#include "util/mutexlock.h"
#include "util/read_callback.h"

namespace shale {

// The options a DB runs with: Open's, already checked and clamped by the option tables
// (options/options_check.h), with the Env and the info LOG filled in (db_impl_open.cc).
// read_only: no info LOG is made in the DB directory (a read-only instance writes nothing
// there, as RocksDB's); it logs only to a Logger the caller gave.
Options SanitizeOptions(const std::string& dbname, const Options& src, bool read_only = false);

// NotSupported for a table factory other than the block-based one (db_impl_open.cc).
Status CheckTableFactory(const ColumnFamilyOptions& o);

// The compaction threads options ask for (max_background_jobs and the deprecated
// max_background_compactions / flushes, as RocksDB splits them; db_impl_options.cc).
int CompactionThreads(const Options& options);

// The DB mutex by every name the compiler knows it under: mutex_, and the pointer the
// VersionSet, the column family and the stats were built with (&mutex_). A method that
// needs the mutex says REQUIRES(DB_MUTEX); DBImpl::DbLock, LockDb and UnlockDb take and
// drop it under all its names.
#define DB_MUTEX                                                                       \
  mutex_, versions_->db_mutex(), default_cf_->db_mutex(), internal_stats_->db_mutex(), \
      families_.db_mutex()

class ExternalFileIngestion;
struct RangePtr;

// A read-only or secondary instance (db/db_impl_readonly.h) is a DBImpl built with
// read_only: it refuses every write itself, and DBImpl neither schedules flushes or
// compactions nor deletes files for it.
class DBImpl : public DB,
               public DBForTransactions,
               public MergeFolder,
               public LiveFilesSource,
               private WritePipeline::Host {
 public:
  // seq_per_batch: the WritePrepared write policy's numbering (db/sub_batch.h), which
  // recovery must know before it replays the WAL. read_only: see the class comment.
  DBImpl(const Options& options, const std::string& dbname, bool seq_per_batch = false,
         bool read_only = false);
  // DB::Open, with seq_per_batch as above (utilities/transactions/ opens a WritePrepared DB).
  static Status Open(const Options& options, const std::string& dbname, bool seq_per_batch,
                     DB** dbptr);
  // DB::Open with column families, and seq_per_batch as above.
  static Status Open(const DBOptions& db_options, const std::string& dbname,
                     const std::vector<ColumnFamilyDescriptor>& column_families,
                     std::vector<ColumnFamilyHandle*>* handles, bool seq_per_batch, DB** dbptr);
  ~DBImpl() override;

  Status Close() override;
  Status Put(const WriteOptions& o, ColumnFamilyHandle* cf, const Slice& key,
             const Slice& value) override;
  Status Delete(const WriteOptions& o, ColumnFamilyHandle* cf, const Slice& key) override;
  Status SingleDelete(const WriteOptions& o, ColumnFamilyHandle* cf, const Slice& key) override;
  Status Merge(const WriteOptions& o, ColumnFamilyHandle* cf, const Slice& key,
               const Slice& value) override;
  Status Write(const WriteOptions& o, WriteBatch* updates) override;
  using DB::Get;
  Status Get(const ReadOptions& o, ColumnFamilyHandle* cf, const Slice& key,
             PinnableSlice* value) override;
  Status GetMergeOperands(const ReadOptions& o, ColumnFamilyHandle* cf, const Slice& key,
                          PinnableSlice* merge_operands, GetMergeOperandsOptions* gmo,
                          int* number_of_operands) override;
  // MultiGet (db_impl_multiget.cc).
  using DB::MultiGet;
  std::vector<Status> MultiGet(const ReadOptions& o, const std::vector<ColumnFamilyHandle*>& cfs,
                               const std::vector<Slice>& keys,
                               std::vector<std::string>* values) override;
  void MultiGet(const ReadOptions& o, ColumnFamilyHandle* cf, size_t num_keys, const Slice* keys,
                PinnableSlice* values, Status* statuses, bool sorted_input) override;
  // MergeFolder (db/merge_folder.h; db_impl_merge.cc): max_successive_merges.
  bool FoldSuccessiveMerges(uint32_t column_family, MemTable* mem, const Slice& key,
                            SequenceNumber seq, const Slice& operand, std::string* merged) override;
  Iterator* NewIterator(const ReadOptions& o, ColumnFamilyHandle* cf) override;
  Status NewIterators(const ReadOptions& o, const std::vector<ColumnFamilyHandle*>& cfs,
                      std::vector<Iterator*>* iterators) override;
  const Snapshot* GetSnapshot() override;
  void ReleaseSnapshot(const Snapshot* snapshot) override;
  using DB::Flush;
  Status Flush(const FlushOptions& o, ColumnFamilyHandle* cf) override;
  Status Flush(const FlushOptions& o, const std::vector<ColumnFamilyHandle*>& cfs) override;
  using DB::CompactRange;
  Status CompactRange(const CompactRangeOptions& o, ColumnFamilyHandle* cf, const Slice* begin,
                      const Slice* end) override;
  Status WaitForCompact(const WaitForCompactOptions& o) override;
  SequenceNumber GetLatestSequenceNumber() const override { return pipeline_->LastPublished(); }
  using DB::GetIntProperty;
  using DB::GetProperty;
  bool GetProperty(ColumnFamilyHandle* cf, const Slice& property, std::string* value) override;
  bool GetIntProperty(ColumnFamilyHandle* cf, const Slice& property, uint64_t* value) override;
  using DB::GetMapProperty;
  bool GetMapProperty(ColumnFamilyHandle* cf, const Slice& property,
                      std::map<std::string, std::string>* value) override;
  bool GetAggregatedIntProperty(const Slice& property, uint64_t* value) override;
  const std::string& GetName() const override { return dbname_; }
  Env* GetEnv() const override { return env_; }
  Options GetOptions(ColumnFamilyHandle* cf) const override;
  DBOptions GetDBOptions() const override;
  // SetOptions / SetDBOptions (db_impl_options.cc).
  using DB::SetOptions;
  Status SetOptions(ColumnFamilyHandle* cf,
                    const std::unordered_map<std::string, std::string>& new_options) override;
  Status SetDBOptions(const std::unordered_map<std::string, std::string>& new_options) override;
  ColumnFamilyHandle* DefaultColumnFamily() const override { return default_cf_handle_.get(); }
  // Column families (db_impl_families.cc).
  Status CreateColumnFamily(const ColumnFamilyOptions& options, const std::string& name,
                            ColumnFamilyHandle** handle) override;
  Status DropColumnFamily(ColumnFamilyHandle* cf) override;
  // The DB's files (db_impl_files.cc).
  Status DisableFileDeletions() override;
  Status EnableFileDeletions() override;
  Status GetLiveFiles(std::vector<std::string>& live_files, uint64_t* manifest_file_size,
                      bool flush_memtable) override;
  Status GetSortedWalFiles(VectorWalPtr& files) override;
  Status GetCurrentWalFile(std::unique_ptr<WalFile>* current_wal_file) override;
  void GetLiveFilesMetaData(std::vector<LiveFileMetaData>* metadata) override;
  using DB::GetColumnFamilyMetaData;
  void GetColumnFamilyMetaData(ColumnFamilyHandle* cf, ColumnFamilyMetaData* metadata) override;
  // LiveFilesSource (db/live_files.h).
  Status CutLiveFiles(uint64_t wal_size_for_flush, LiveFilesCut* cut) override;
  // Bulk ingestion (db_impl_files.cc; the job is db/external_file_ingestion.h).
  using DB::IngestExternalFile;
  Status IngestExternalFile(ColumnFamilyHandle* cf, const std::vector<std::string>& files,
                            const IngestExternalFileOptions& o) override;
  Status IngestExternalFiles(const std::vector<IngestExternalFileArg>& args) override;
  // DeleteFilesInRange(s) of shale/convenience.h (db/delete_files_in_range.h).
  Status DeleteFilesInRanges(ColumnFamilyHandle* cf, const RangePtr* ranges, size_t n,
                             bool include_end) EXCLUDES(mutex_);

  // Internal entry points (also used by tests).
  // Recovers the DB at open: REQUIRES mutex_ held.
  Status Recover() REQUIRES(DB_MUTEX);
  // Starts a fresh WAL and memtable after recovery and commits it to the MANIFEST.
  Status FinishOpen() REQUIRES(DB_MUTEX);
  // The writes visible to a new read.
  SequenceNumber TEST_LastPublished() const { return pipeline_->LastPublished(); }
  int TEST_NumImmutableMemtables(ColumnFamilyHandle* cf = nullptr);
  bool TEST_ActiveMemtableHasFilter();
  VersionSet* TEST_versions() { return versions_.get(); }
  // The current Version, read under the mutex; valid while no flush or compaction runs.
  Version* TEST_current() {
    DbLock l(this);
    return versions_->current();
  }
  // The compaction picker's view of the current Version (a copy, taken under the mutex).
  LevelScores TEST_LevelScores();
  // A write that only goes to the WAL (a batch without keys; the second queue with
  // two_write_queues), as transactions' markers will be.
  Status TEST_WriteWalOnly(const WriteOptions& o, WriteBatch* batch) {
    return WriteImpl(o, batch, /*disable_memtable=*/true);
  }
  // Called at the start of every memtable insert of a write, on the inserting thread
  // (lets a test hold an insert pending). Set before writes start.
  void TEST_SetBeforeMemtableInsert(std::function<void()> hook) {
    pipeline_->TEST_SetBeforeMemtableInsert(std::move(hook));
  }
  // Every entry of user_key in the memtables and files, newest source first, as text.
  std::string TEST_KeyVersions(const Slice& user_key);

  // ---- DBForTransactions (db/db_for_transactions.h says what each does).
  Status WriteTxn(const WriteOptions& o, WriteBatch* batch, const TxnWrite& t) override;
  Status WriteNumberOnly(PreReleaseCallback* pre_release) override;
  void MarkPrepareResolved(uint64_t log) override;
  std::map<std::string, RecoveredTransaction> TakeRecoveredTransactions() override;
  Status GetWithCallback(const ReadOptions& o, ColumnFamilyHandle* cf, const Slice& key,
                         PinnableSlice* value, ReadCallback* callback) override;
  void MultiGetWithCallback(const ReadOptions& o, ColumnFamilyHandle* cf, size_t num_keys,
                            const Slice* keys, PinnableSlice* values, Status* statuses,
                            bool sorted_input, ReadCallback* callback) override;
  Iterator* NewIteratorWithCallback(const ReadOptions& o, ColumnFamilyHandle* cf,
                                    std::unique_ptr<ReadCallback> callback) override;
  Status GetMergeOperandsWithCallback(const ReadOptions& o, ColumnFamilyHandle* cf,
                                      const Slice& key, PinnableSlice* merge_operands,
                                      GetMergeOperandsOptions* gmo, int* number_of_operands,
                                      ReadCallback* callback) override;
  Status GetLatestSequenceForKey(ColumnFamilyHandle* cf, const Slice& key, bool cache_only,
                                 SequenceNumber* seq, bool* found) override;
  const Snapshot* GetSnapshotWithMinUncommitted(SequenceNumber min_uncommitted) override;
  std::vector<SequenceNumber> SnapshotsUpTo(SequenceNumber max) override;
  void SetSnapshotChecker(std::shared_ptr<const SnapshotChecker> checker) override;

 private:
  friend class DB;
  friend class DBImplReadOnly;  // opens through the recovery steps below

  // Point lookup of key as of seq in sv (db_impl_merge.cc): memtable, immutables, files.
  // With mc, operands are gathered into it down to the first Put or tombstone. Returns OK
  // with the Put in *value (unless mc->base_as_operand), NotFound (a tombstone, or nothing),
  // MergeInProgress (ShouldMerge stopped the search) or an error. With pinned (and no mc) a
  // Put found in a file may be pinned there instead of copied into *value (then
  // pinned->IsPinned()). *found_level: -1 when a memtable answered, else the file's level.
  // callback (may be null) hides entries the read must not see, as in Version::Get.
  Status LookupKeyIn(const ReadOptions& o, SuperVersion* sv, const Slice& key, SequenceNumber seq,
                     std::string* value, MergeContext* mc, PinnableSlice* pinned = nullptr,
                     int* found_level = nullptr, ReadCallback* callback = nullptr);

  // The view a read works in: *seq is o.snapshot's sequence, else the newest published,
  // read before the SuperVersion is pinned so that the view holds every write up to it.
  // Null while the DB closes. Without a snapshot, callback (may be null) learns *seq.
  SuperVersionPin AcquireReadView(const ReadOptions& o, ColumnFamilyData* cfd, SequenceNumber* seq,
                                  ReadCallback* callback = nullptr);
  // Get's answer for key in the pinned view sv at seq: the value (pinned in its block when
  // the family has no merge operator and a file answered, else copied into
  // value->GetSelf()), operands folded with the merge operator, or NotFound or an error
  // with *value Reset. *found_level as LookupKeyIn's. Shared by Get and MultiGet.
  Status GetFromView(const ReadOptions& o, ColumnFamilyData* cfd, SuperVersion* sv,
                     SequenceNumber seq, ReadCallback* callback, const Slice& key,
                     PinnableSlice* value, int* found_level);
  // The answer Get gives from what LookupKeyIn found for key (status s, the value in
  // *value or pinned by it, operands in *mc when the family has a merge operator, else mc
  // null): the value pinned in its block or held in *value, operands folded, or s.
  // Shared by Get and MultiGet.
  Status FinishLookup(const Slice& key, Status s, MergeContext* mc, PinnableSlice* value);
  // MultiGet's lookups of keys in the view of cfd (db_impl_multiget.cc).
  void MultiGetFromView(const ReadOptions& o, ColumnFamilyData* cfd, size_t num_keys,
                        const Slice* keys, PinnableSlice* values, Status* statuses,
                        bool sorted_input, ReadCallback* callback);
  // The family cf names. REQUIRES: cf is null (the default family) or one of ours.
  ColumnFamilyData* CfdOf(ColumnFamilyHandle* cf) const {
    return cf == nullptr ? default_cf_ : static_cast<ColumnFamilyHandleImpl*>(cf)->cfd();
  }
  // True if cf names a family of this DB, dropped or not (null is the default family).
  bool IsOwnFamily(const ColumnFamilyHandle* cf) const {
    if (cf == nullptr || cf == default_cf_handle_.get()) return true;
    const auto* impl = dynamic_cast<const ColumnFamilyHandleImpl*>(cf);
    return impl != nullptr && impl->db() == this;
  }
  // The mutex held under the DB's name is cfd's too (every family is built with it).
  static void HeldFor(const ColumnFamilyData* cfd) ASSERT_CAPABILITY(cfd->db_mutex()) {}
  // Column families (db_impl_families.cc). Creates family `name` with options (the DB's
  // options with the family's), recorded in the MANIFEST; the handle is the caller's.
  Status CreateFamily(const std::string& name, const Options& options, ColumnFamilyHandle** handle)
      REQUIRES(DB_MUTEX);
  // The options a family runs with: the DB's in effect with cf_options, checked.
  Status FamilyOptions(const ColumnFamilyOptions& cf_options, Options* result) REQUIRES(DB_MUTEX);
  // Handles of the live families, for calls that take one (valid while the DB is open);
  // with only_with_writes, of those whose active memtable holds something.
  std::vector<ColumnFamilyHandleImpl> LiveFamilyHandles(bool only_with_writes = false)
      EXCLUDES(mutex_);
  // Writes a new OPTIONS file with the options in effect (after a family's creation or drop).
  void RecordOptions() EXCLUDES(mutex_, options_file_mutex_);
  // The live family with the smallest id among those with memtables to flush, or null.
  ColumnFamilyData* NextToFlush() REQUIRES(DB_MUTEX);

  // The public writes enter the pipeline as a user's write (db_impl_write.cc).
  // disable_memtable: a batch without keys that only goes to the WAL.
  Status WriteImpl(const WriteOptions& o, WriteBatch* batch, bool disable_memtable = false);
  // WritePipeline::Host (db_impl_write.cc): the pipeline's view of the memtables, the
  // stalls and the background error.
  bool MayNeedRoom() override;
  Status MakeRoomForWrite(uint64_t write_bytes, bool no_slowdown) override;
  MemTable* ActiveMemtable() override;
  ColumnFamilyMemTables* FamilyMemtables() override;
  void SetBackgroundError(const Status& s) override;
  Status BackgroundError() override;
  bool HasBackgroundError() override;
  // Makes the active memtables of cfds immutable (those not empty) for a flush, with one
  // new WAL, as an exclusive writer.
  Status SwitchMemtablesForFlush(const std::vector<ColumnFamilyData*>& cfds);
  // Flush of the live families (those with writes in their active memtable, or all) in one
  // call: with atomic_flush, flushed together. ColumnFamilyDropped if one is dropped
  // meanwhile.
  Status FlushLiveFamilies(bool only_with_writes) EXCLUDES(mutex_);
  // Waits until cfd has no immutable memtable left (or the DB is in error).
  Status WaitForFlushOf(ColumnFamilyData* cfd) REQUIRES(DB_MUTEX);
  // Makes room in the active memtables, switching the full ones (and the WAL) and waiting
  // when a family has too many immutable memtables pending. Called by the pipeline's WAL
  // leader. force: switch these families' memtables (those not empty) whatever their size,
  // for a flush. With atomic_flush, a switch that is not forced takes every family with
  // data. write_bytes sizes the delay while writes are slowed; no_slowdown turns a stall
  // into Status::Incomplete instead of a wait. Releases the mutex while waiting for pending
  // memtable inserts before a switch.
  Status MakeRoomForWrite(const std::vector<ColumnFamilyData*>* force, uint64_t write_bytes,
                          bool no_slowdown) REQUIRES(DB_MUTEX);
  // Whether a live family has an immutable memtable waiting for its flush.
  bool AnyFlushPending() REQUIRES(DB_MUTEX);
  // Re-evaluates write stalls after the tree changed shape.
  void RecalculateWriteStallConditions() REQUIRES(DB_MUTEX);
  // Starts a new WAL and makes the active memtables of `full` immutable (the other
  // families' memtables go on, over both WALs; an empty one starts at the new WAL).
  // REQUIRES: the caller is the pipeline's WAL leader (or WithQueueAlone's function):
  // nobody else touches the WAL. Releases the mutex while the pipeline switches the WAL.
  Status SwitchMemtable(const std::vector<ColumnFamilyData*>& full) REQUIRES(DB_MUTEX);
  // An empty memtable for cfd with the options in effect, its arena drawing on
  // memtable_blocks_, with a filter if Gets reached the one it replaces (see
  // kEntriesPerGetForFilter).
  MemTable* NewMemTable(ColumnFamilyData* cfd) REQUIRES(DB_MUTEX);
  static constexpr uint64_t kEntriesPerGetForFilter = 16;

  // Flush (db_impl_flush.cc).
  void MaybeScheduleFlush() REQUIRES(DB_MUTEX);
  void BackgroundFlush();
  struct FlushUnit;
  // What one flush takes: each family's oldest immutable memtables, oldest first.
  using FlushPick = std::vector<std::pair<ColumnFamilyData*, std::vector<MemTable*>>>;
  // The next flush: the oldest immutable memtable of the first family with one or, with
  // atomic_flush, every immutable memtable of every family. Empty when there is none.
  FlushPick PickFlush() REQUIRES(DB_MUTEX);
  // Writes each memtable of pick into an L0 file (mutex released during the I/O) and
  // records them all in one MANIFEST write (an atomic group when several families), then
  // drops the memtables.
  Status FlushImmutables(const FlushPick& pick) REQUIRES(DB_MUTEX);
  // The oldest WAL some family still needs (its memtables' data is not all in SST files),
  // as if the memtables in `flushed` (being flushed) were flushed already.
  uint64_t MinLogWithUnflushedData(const std::vector<const MemTable*>& flushed) REQUIRES(DB_MUTEX);
  // The snapshots (and checker) of a job starting now, and their release when it ends.
  JobSnapshotContext BeginJobSnapshots() REQUIRES(DB_MUTEX);
  void EndJobSnapshots(JobSnapshotContext* ctx) REQUIRES(DB_MUTEX);

  // Compaction (db_impl_compaction.cc).
  void MaybeScheduleCompaction() REQUIRES(DB_MUTEX);
  void BackgroundCompactionCall();
  // Runs c, picked from cfd (a trivial move or a CompactionJob, with the mutex released
  // during the I/O), installs the result and releases c's files. max_subcompactions 0: the
  // options' value.
  Status RunCompaction(ColumnFamilyData* cfd, Compaction* c, uint32_t max_subcompactions)
      REQUIRES(DB_MUTEX);
  Status RunManualCompaction(ColumnFamilyData* cfd, int input_level, int output_level,
                             const InternalKey* begin, const InternalKey* end,
                             uint32_t max_subcompactions) REQUIRES(DB_MUTEX);
  // Moves every file of `level` (the only level of cfd with data) to target_level (-1: the
  // smallest level that can hold them).
  Status RefitLevel(ColumnFamilyData* cfd, int level, int target_level) REQUIRES(DB_MUTEX);
  // Whether cfd may need an automatic compaction now.
  bool FamilyNeedsCompaction(ColumnFamilyData* cfd) REQUIRES(DB_MUTEX);

  // Open and recovery (db_impl_open.cc).
  // Open's checks of its arguments: *handles cleared, the descriptors (no name twice, the
  // default among them, block-based tables), and the options, checked and clamped (a line
  // per clamp in *clamped): the DB's with the default family's in *checked, the other
  // families' by name in *others.
  static Status CheckOpenArguments(const DBOptions& db_options,
                                   const std::vector<ColumnFamilyDescriptor>& column_families,
                                   std::vector<ColumnFamilyHandle*>* handles, Options* checked,
                                   std::map<std::string, Options>* others,
                                   std::vector<std::string>* clamped);
  Status NewDB();
  // Recover's first steps, which a read-only instance takes too: the MANIFEST's state,
  // the families that died in it dropped, each family Open named checked present, the
  // files checked (paranoid_checks: opened too). all_families: every live family must be
  // one Open named (else InvalidArgument "Column families not opened"); without it the
  // others are left out.
  Status RecoverVersions(bool all_families) REQUIRES(DB_MUTEX);
  // The WALs recovery replays, oldest first (every file number seen marked used), and the
  // oldest it reads (*oldest_wal). With paranoid_checks, Corruption if that one is missing.
  Status WalsToReplay(std::vector<uint64_t>* logs, uint64_t* oldest_wal) REQUIRES(DB_MUTEX);
  // Recover's question for each family the MANIFEST names (VersionSet::FamilyLookup): the
  // descriptor's options, with a ColumnFamilyData made for it; nullopt for a family Open
  // did not name.
  std::optional<VersionSet::FamilySetup> SetUpRecoveredFamily(uint32_t id, const std::string& name)
      REQUIRES(DB_MUTEX);
  // Replays logs (from oldest_wal, the oldest the MANIFEST says recovery reads) into the
  // families' memtables, flushing them into L0 files recorded in (*edits)[family id].
  // With kept, nothing is flushed: each family's one memtable (referenced, however large
  // it grew) is handed over in (*kept)[family id], as a read-only instance keeps them.
  Status RecoverLogFiles(const std::vector<uint64_t>& logs, uint64_t oldest_wal,
                         std::map<uint32_t, VersionEdit>* edits, SequenceNumber* max_sequence,
                         std::map<uint32_t, MemTable*>* kept = nullptr) REQUIRES(DB_MUTEX);
  // Before replaying the WAL `reader` reads: whether the WAL it names as its predecessor
  // came up short (prev_log, replayed last, ended at prev_log_end) or was not replayed.
  // Then Corruption, or *stop_replay, per wal_recovery_mode.
  // min_data_log: the oldest WAL whose records recovery replays (an older predecessor is
  // not checked).
  Status CheckPredecessor(const log::Reader& reader, uint64_t min_data_log, uint64_t prev_log,
                          uint64_t prev_log_end, bool* stop_replay) REQUIRES(DB_MUTEX);
  // Writes a memtable of cfd filled by WAL replay into an L0 file added to *edit (mutex
  // released during the I/O), and unreferences it.
  Status FlushRecoveredMemtable(ColumnFamilyData* cfd, MemTable* mem, VersionEdit* edit)
      REQUIRES(DB_MUTEX);

  // Deletes files no live Version, memtable or pending output needs, unless file
  // deletions are disabled.
  void DeleteObsoleteFiles() REQUIRES(DB_MUTEX);
  // DisableFileDeletions' count (db_impl_files.cc): the sweep deletes nothing while it is
  // above zero. sweeps_deleting_: sweeps deleting now (without the mutex), which
  // DisableFileDeletions waits out on bg_cv_.
  int file_deletions_disabled_ GUARDED_BY(mutex_) = 0;
  int sweeps_deleting_ GUARDED_BY(mutex_) = 0;
  // The cut of LiveFilesSource without the flush, the WALs or the OPTIONS file: the table
  // files of every live family, the MANIFEST and its length, the sequence; *min_wal is the
  // oldest WAL recovery would read (db_impl_files.cc).
  // REQUIRES: the caller is WithQueueAlone's fn.
  Status CutTablesAndManifest(LiveFilesCut* cut, uint64_t* min_wal) EXCLUDES(mutex_);
  // An ingestion's steps 2 to 4 (db/external_file_ingestion.h) for jobs[i] into cfds[i],
  // and the MANIFEST write that records them all. REQUIRES: the caller is WithQueueAlone's
  // fn. *recording: the MANIFEST write was tried and may have reached the disk.
  Status RecordIngestion(const std::vector<ColumnFamilyData*>& cfds,
                         const std::vector<ExternalFileIngestion*>& jobs, bool* recording)
      EXCLUDES(mutex_);
  // allow_2pc: the oldest WAL recovery will need once the MANIFEST's log number is
  // data_log: that one, or an older WAL holding an unresolved prepare or the prepared
  // records of a commit in a memtable not yet flushed (other than those in `flushed`).
  uint64_t MinLogToKeepFor2PC(uint64_t data_log, const std::vector<const MemTable*>& flushed)
      REQUIRES(DB_MUTEX);
  void InstallNewSuperVersion(ColumnFamilyData* cfd) REQUIRES(DB_MUTEX);
  void RecordBackgroundError(const Status& s) REQUIRES(DB_MUTEX);
  // Makes next cfd's options in effect (db_impl_options.cc); for the default family also
  // the DB's: the picker, the write controller and its stall state, the compaction pool,
  // the stats dump and the merge limit follow, and work the change allows is scheduled.
  void InstallOptions(ColumnFamilyData* cfd, std::shared_ptr<const Options> next)
      REQUIRES(DB_MUTEX);
  // SetOptions (kCF, of cfd) and SetDBOptions (kDB, cfd null): check, apply, log, persist.
  Status ChangeOptions(OptionStruct which, ColumnFamilyData* cfd,
                       const std::unordered_map<std::string, std::string>& changes)
      EXCLUDES(mutex_, options_file_mutex_);
  // Writes the options in effect of every live family (the DB's with them) to a new
  // OPTIONS file, releasing mutex_ during the I/O; the
  // caller holds options_file_mutex_ so that files are written one at a time, in the
  // order of their numbers. A failure is logged and returned.
  Status WriteOptionsFile() REQUIRES(DB_MUTEX, options_file_mutex_);
  // Compaction scores per level of cfd, as the picker sees them (for shale.stats).
  std::vector<double> ScoresPerLevel(ColumnFamilyData* cfd) REQUIRES(DB_MUTEX);
  uint64_t EstimatePendingCompactionBytes(ColumnFamilyData* cfd) REQUIRES(DB_MUTEX);
  bool BlockCacheUsage(uint64_t* value) const;
  Status CloseImpl();
  // Joins the background threads, which take mutex_ themselves. REQUIRES: mutex_ not
  // held, and the scheduler seen idle under it after shutting_down_ was set.
  void StopBackgroundThreads() NO_THREAD_SAFETY_ANALYSIS EXCLUDES(mutex_);

  const std::string dbname_;
  // The options as opened (checked and sanitized), never changed: read their immutable
  // fields here without the mutex. Their changeable fields keep Open's values; the values
  // in effect are current_options_'s.
  const Options options_;
  Env* const env_;
  FileLock* db_lock_ = nullptr;
  std::unique_ptr<Directory> db_dir_;

  mutable Mutex mutex_;     // mutable: GetOptions reads current_options_ under it
  CondVar bg_cv_{&mutex_};  // signalled when background work finishes
  // Holds the DB mutex for a scope.
  class SCOPED_CAPABILITY DbLock {
   public:
    explicit DbLock(const DBImpl* db)
        ACQUIRE(db->mutex_, db->versions_->db_mutex(), db->default_cf_->db_mutex(),
                db->internal_stats_->db_mutex(), db->families_.db_mutex())
        : mu_(&db->mutex_) {
      mu_->Lock();
    }
    ~DbLock() RELEASE() { mu_->Unlock(); }
    DbLock(const DbLock&) = delete;
    DbLock& operator=(const DbLock&) = delete;

   private:
    Mutex* const mu_;
  };
  // Drops the DB mutex for I/O and takes it back.
  void UnlockDb() RELEASE(DB_MUTEX) NO_THREAD_SAFETY_ANALYSIS { mutex_.Unlock(); }
  void LockDb() ACQUIRE(DB_MUTEX) NO_THREAD_SAFETY_ANALYSIS { mutex_.Lock(); }
  // For code the analysis cannot follow the lock into (a lambda).
  void AssertDbMutexHeld() const ASSERT_CAPABILITY(DB_MUTEX) {}
  // The options in effect: options_ with every SetOptions / SetDBOptions applied; the
  // default family's current options (ColumnFamilyData::current_options), whose DBOptions
  // part is the DB's. Replaced whole on a change and never modified, so code that copies
  // the pointer under mutex_ may read it without the mutex for as long as it holds it.
  std::shared_ptr<const Options> current_options_ GUARDED_BY(mutex_);
  // Serializes writing OPTIONS files (at Open and SetOptions).
  Mutex options_file_mutex_ ACQUIRED_BEFORE(mutex_);
  // Set once by the constructor; the VersionSet's own methods say which need mutex_.
  // Every family the DB has made; the default one, and its handle, set by the constructor.
  // Declared before versions_, whose Versions use the families' table caches.
  ColumnFamilySet families_{dbname_, &mutex_};
  std::unique_ptr<VersionSet> versions_;
  ColumnFamilyData* default_cf_ = nullptr;
  std::unique_ptr<ColumnFamilyHandleImpl> default_cf_handle_;
  // The descriptors Open was given (name -> options), for Recover's family lookup.
  std::map<std::string, Options> open_families_ GUARDED_BY(mutex_);
  // The live snapshots, under a leaf lock of their own: taken inside the DB mutex (a job's
  // snapshots) and inside the pipeline's allocation lock (a WritePrepared commit's
  // eviction asking for them, SnapshotsUpTo), never around another lock.
  Mutex snapshots_mu_ ACQUIRED_AFTER(mutex_);
  SnapshotList snapshots_ GUARDED_BY(snapshots_mu_);
  std::shared_ptr<const SnapshotChecker> snapshot_checker_ GUARDED_BY(mutex_);
  std::set<uint64_t> pending_outputs_ GUARDED_BY(mutex_);  // files being written
  // Every method of the scheduler (but Stop, see StopBackgroundThreads) needs mutex_: the
  // annotation makes the compiler check each call.
  BackgroundScheduler scheduler_ GUARDED_BY(mutex_);
  int manual_compactions_waiting_ GUARDED_BY(mutex_) = 0;
  // Bumped whenever a tree or memtables change; a failed pick remembers the value in its
  // family (ColumnFamilyData::nothing_to_pick_at) so the same state is not picked from again.
  uint64_t tree_version_ GUARDED_BY(mutex_) = 0;
  // The family the next automatic compaction pick starts from (round robin).
  uint32_t next_compaction_family_ GUARDED_BY(mutex_) = 0;
  std::unique_ptr<InternalStats> internal_stats_;
  WriteController write_controller_ GUARDED_BY(mutex_){options_};
  // The stall state without the mutex, for the WAL leader's check for room (its state is
  // an atomic; a change seen one write late is as if that write had come first).
  WriteController::State StallStateWithoutMutex() const NO_THREAD_SAFETY_ANALYSIS {
    return write_controller_.state();
  }
  // Set once by Close, under mutex_ (so that a waiter on bg_cv_ cannot miss it); read
  // anywhere, with or without the mutex (a compaction job polls it to stop early).
  std::atomic<bool> shutting_down_{false};
  bool closed_ = false;
  Status bg_error_ GUARDED_BY(mutex_);
  // Whether bg_error_ is set (it is never cleared): the write path's check without the mutex.
  std::atomic<bool> has_bg_error_{false};
  // WritePrepared's numbering (db/sub_batch.h), which recovery and the jobs' snapshot
  // checker need too.
  const bool seq_per_batch_;
  // A read-only or secondary instance: no flush or compaction is scheduled, no file is
  // deleted, and nothing writes to the directory (the MANIFEST fence of a cut included).
  const bool read_only_;
  // Two-phase commit: the prepared transactions recovery found.
  std::map<std::string, RecoveredTransaction> recovered_txns_ GUARDED_BY(mutex_);
  // Everything a write passes through after the API call (db/write_pipeline.h): set once
  // by the constructor.
  std::unique_ptr<WritePipeline> pipeline_;
  // The number of the WAL writes go to; changed by a WAL leader (SwitchMemtable).
  uint64_t logfile_number_ GUARDED_BY(mutex_) = 0;
  // The memtable budget (DBOptions::write_buffer_manager, or one of db_write_buffer_size
  // bytes), or null: every memtable is charged to it.
  std::shared_ptr<WriteBufferManager> write_buffer_manager_;
  // Charges the active memtables' growth to write_buffer_manager_ and says whether it
  // asks for a flush or a stall. REQUIRES: the caller is the WAL leader.
  bool OverMemoryBudget();
  // Whether the memtables are within two arena blocks (what a write or a switch may
  // allocate next) of the budget. REQUIRES: write_buffer_manager_.
  bool AtMemoryBudget();
  // The largest arena block of a memtable under a budget of `budget` bytes.
  static size_t MemtableBlockCap(size_t budget);
  // The arena blocks of flushed memtables, kept for the next ones (up to one memtable's
  // worth; see util/arena.h for why).
  const std::shared_ptr<ArenaBlockPool> memtable_blocks_;

  // options_.statistics and options_.info_log (the latter created at open when not given);
  // either may be null.
  Statistics* stats_ = nullptr;
  Logger* info_log_ = nullptr;
  // Background job ids for the LOG ("[JOB n]").
  std::atomic<uint64_t> next_job_id_{1};
  // Writes the stats table (and the Statistics dump) to the LOG every
  // stats_dump_period_sec until Close.
  void StatsDumpLoop();
  void DumpStats();
  // Drops an iterator's read view; sweeps obsolete files if it held the last reference to
  // an outdated one.
  void ReleaseIteratorView(SuperVersion* view);
  // Get's tickers: where the answer came from (RecordLookupLevel) and its size.
  void RecordGetStats(int level, const Status& s, const Slice& value);
  // Memtable hit or miss and the level that answered (LookupKeyIn's found_level): ticked
  // for every key of a Get or a MultiGet.
  void RecordLookupLevel(int level);

 public:
  // Open's LOG lines: the options in effect (db_info_log.cc).
  void LogOptionsAtOpen();
  // Starts the periodic stats dump thread, unless it runs or the period is 0 (after a
  // successful open, and when SetDBOptions sets a period).
  void StartStatsDump() REQUIRES(DB_MUTEX);

 private:
  std::thread stats_dump_thread_;
  CondVar stats_dump_cv_{&mutex_};
};

}  // namespace shale

#undef DB_MUTEX
