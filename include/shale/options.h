// Options: how a DB is opened (DBOptions), how a column family stores its data
// (ColumnFamilyOptions), and per-call ReadOptions, WriteOptions and FlushOptions.
//
// Names and defaults are RocksDB's. Options marked "Mutable" may be changed on an open DB
// with DB::SetOptions (column family options) or DB::SetDBOptions (DB options); the others
// are fixed for the life of an open DB. Each option's bounds, whether Open clamps or refuses
// a value outside them, and its OPTIONS-file spelling are in options/option_tables.cc.
//
// Thread safety: plain structs, copied by the DB at Open.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "shale/comparator.h"
#include "shale/compression_type.h"
#include "shale/env.h"
#include "shale/info_log_level.h"
#include "shale/table.h"
#include "shale/types.h"

namespace shale {

class Logger;
class Snapshot;
class Statistics;
class MergeOperator;
class CompactionFilter;
class CompactionFilterFactory;
class WriteBufferManager;

// What recovery does with a WAL that is damaged, as RocksDB defines the four modes.
enum class WALRecoveryMode : char {
  // Ignore a damaged record at the very end of the last WAL (a write cut off by a crash);
  // any other damage fails Open with Corruption.
  kTolerateCorruptedTailRecords = 0x00,
  // Any damage, even a torn tail, fails Open with Corruption.
  kAbsoluteConsistency = 0x01,
  // Replay up to the first damaged record and stop there: the DB holds a consistent
  // prefix of the writes. The default.
  kPointInTimeRecovery = 0x02,
  // Skip every damaged record and go on replaying the rest (salvage mode).
  kSkipAnyCorruptedRecords = 0x03,
};

struct ColumnFamilyOptions {
  // Order of user keys. Must outlive the DB and keep its Name() across reopens.
  // Default: BytewiseComparator().
  const Comparator* comparator = BytewiseComparator();

  // Bytes a memtable holds before it becomes immutable and is flushed. Mutable (from the
  // next memtable). Default: 64 MiB.
  size_t write_buffer_size = 64 << 20;
  // Memtables (the active one plus immutable ones awaiting flush) before writes wait for a
  // flush. Mutable. Default: 2.
  int max_write_buffer_number = 2;
  // Bytes of memtables kept in memory counting flushed ones, which optimistic transactions
  // check conflicts against: a flushed memtable is kept while the active, immutable and
  // kept ones together stay within this. 0 keeps none (a check that needs one answers
  // TryAgain); -1 means max_write_buffer_number * write_buffer_size. Flushing is not
  // affected. Default: 0.
  int64_t max_write_buffer_size_to_maintain = 0;
  // Immutable memtables merged into one flush. shale flushes them one by one: Open lowers
  // a larger value to 1 and says so in the LOG (RocksDB lowers it too, to at most
  // max_write_buffer_number - 1). Default: 1.
  int min_write_buffer_number_to_merge = 1;
  // Bytes a memtable takes from the system at a time, rounded up to a multiple of 4 KiB.
  // 0 (the default): write_buffer_size / 8, at most 2 MiB (RocksDB caps it at 1 MiB; 2 MiB
  // lets a block be one transparent huge page). Blocks that are a multiple of 2 MiB are
  // aligned to 2 MiB, so that a kernel with transparent_hugepage "always" may map them with
  // huge pages; shale does not ask for them ("madvise"). Mutable (from the next memtable).
  size_t arena_block_size = 0;
  // If > 0, memtable blocks are first taken from the system's reserved huge pages of this
  // size (mmap MAP_HUGETLB; see /proc/sys/vm/nr_hugepages), and from ordinary memory when
  // none are free. Mutable (from the next memtable). Default: 0.
  size_t memtable_huge_page_size = 0;

  // Block compression. Mutable (from the next file written). Default: kSnappyCompression
  // when built with snappy, else none.
  CompressionType compression =
      CompressionTypeSupported(kSnappyCompression) ? kSnappyCompression : kNoCompression;

  // Levels of the LSM tree. Default: 7.
  int num_levels = 7;

  // ---- Leveled compaction and write stalls. Mutable, except
  // level_compaction_dynamic_level_bytes and optimize_filters_for_hits.
  // L0 files that trigger a compaction into L1. Default: 4.
  int level0_file_num_compaction_trigger = 4;
  // L0 files at which writes are slowed to delayed_write_rate. Default: 20.
  int level0_slowdown_writes_trigger = 20;
  // L0 files at which writes stop until compaction catches up. Default: 36.
  int level0_stop_writes_trigger = 36;
  // Target size of L1 (the base level). Default: 256 MiB.
  uint64_t max_bytes_for_level_base = 256ull << 20;
  // Each level's target is this many times the one above. Default: 10.
  double max_bytes_for_level_multiplier = 10;
  // Size level targets from the last level upward, so that the last level holds ~90% of
  // the data and empty upper levels are skipped. Default: false.
  bool level_compaction_dynamic_level_bytes = false;
  // Target size of a compaction output file at L1. Default: 64 MiB.
  uint64_t target_file_size_base = 64ull << 20;
  // Each level's target file size is this many times the one above. Default: 1.
  int target_file_size_multiplier = 1;
  // Largest number of input bytes of one compaction; 0 means 25 * target_file_size_base.
  // Default: 0.
  uint64_t max_compaction_bytes = 0;
  // No automatic compactions (CompactRange still works). Default: false.
  bool disable_auto_compactions = false;
  // Pending compaction bytes at which writes are slowed. Default: 64 GiB.
  uint64_t soft_pending_compaction_bytes_limit = 64ull << 30;
  // Pending compaction bytes at which writes stop. Default: 256 GiB.
  uint64_t hard_pending_compaction_bytes_limit = 256ull << 30;
  // Build no filter for the last level (reads that reach it usually hit). Default: false.
  bool optimize_filters_for_hits = false;

  // The SST format and its options. Default: NewBlockBasedTableFactory().
  std::shared_ptr<TableFactory> table_factory{NewBlockBasedTableFactory()};

  // ---- Merge (see shale/merge_operator.h).
  // How Merge operands are combined. Without one, DB::Merge returns NotSupported and so does
  // a read that meets an operand already stored. A DB must be reopened with an operator of
  // the same name and the same semantics as before: operands are stored as written and
  // combined later. Default: nullptr.
  std::shared_ptr<MergeOperator> merge_operator;
  // The most operands one key may pile up in the memtable: a Merge that finds this many
  // above the key's newest value in the active memtable computes the merged value and
  // writes it as a Put instead, so reads never fold more than this many memtable operands.
  // Costs a read on such writes. 0 turns it off. Mutable. Default: 0.
  size_t max_successive_merges = 0;

  // ---- Compaction filter (see shale/compaction_filter.h).
  // Offered each key's newest value (and newer merge operands) in every compaction of this
  // family; it may drop or change them. Shared by concurrent compactions: it must be
  // thread-safe, and outlive the DB. Written to the OPTIONS file by name. Default: nullptr.
  const CompactionFilter* compaction_filter = nullptr;
  // Makes a filter per (sub)compaction, told what the job is; ignored when
  // compaction_filter is set. Written to the OPTIONS file by name. Default: nullptr.
  std::shared_ptr<CompactionFilterFactory> compaction_filter_factory;

  ColumnFamilyOptions() = default;
};

struct DBOptions {
  // Create the DB if it is missing. Default: false.
  bool create_if_missing = false;
  // Fail Open with InvalidArgument if the DB exists. Default: false.
  bool error_if_exists = false;
  // Create the column families Open names that the DB does not have yet (else Open fails
  // with InvalidArgument). Default: false.
  bool create_missing_column_families = false;
  // Check aggressively and stop at the first sign of damage (e.g. verify every SST file's
  // footer at Open). Default: true.
  bool paranoid_checks = true;
  // Files, time and locks. Default: Env::Default().
  Env* env = Env::Default();
  // SST readers kept open by the table cache; -1 keeps all open. Default: -1.
  int max_open_files = -1;
  // fsync instead of fdatasync where the DB syncs. Default: false.
  bool use_fsync = false;
  // See WALRecoveryMode. Default: kPointInTimeRecovery.
  WALRecoveryMode wal_recovery_mode = WALRecoveryMode::kPointInTimeRecovery;
  // Background threads for flushes and compactions. Mutable. Default: 2.
  int max_background_jobs = 2;
  // Deprecated split of max_background_jobs, with RocksDB's rule: when either is set
  // (not -1), compactions get max_background_compactions threads (at least one) and flushes
  // max_background_flushes; when neither is, a quarter of max_background_jobs (at least
  // one) goes to flushes and the rest to compactions. shale runs flushes one at a time
  // whatever their share (each takes the oldest memtable, so that L0 files and the WAL
  // numbers in the MANIFEST stay in order): a max_background_flushes above 1 is noted in
  // the LOG at Open. Mutable. Default: -1.
  int max_background_compactions = -1;
  int max_background_flushes = -1;
  // Threads one compaction may split into by key range. Mutable. Default: 1.
  uint32_t max_subcompactions = 1;
  // Write rate while writes are slowed, in bytes per second; 0 means 16 MiB/s. Mutable.
  // Default: 0.
  uint64_t delayed_write_rate = 0;
  // A budget for the memtables of every column family together: past it the largest
  // family is flushed, and writes wait for flushes in progress rather than go over it
  // (include/shale/write_buffer_manager.h). 0: no budget. Used when write_buffer_manager is
  // not given. Default: 0.
  size_t db_write_buffer_size = 0;
  // Flush column families together, their new files recorded in one MANIFEST write: a
  // full memtable (or the memory budget) flushes every family with unflushed data, and
  // Flush over several families flushes them as one. Data written without the WAL then
  // comes back after a crash as of the same write in every family. Default: false.
  bool atomic_flush = false;
  // The budget as an object, which several DBs may share (and which may charge a block
  // cache, or stall writes). Takes precedence over db_write_buffer_size. Default: nullptr.
  std::shared_ptr<WriteBufferManager> write_buffer_manager;
  // Tickers and histograms (CreateDBStatistics()); nullptr collects none. Default: nullptr.
  std::shared_ptr<Statistics> statistics;
  // Where info LOG lines go; nullptr writes a LOG file in the DB directory.
  // Default: nullptr.
  std::shared_ptr<Logger> info_log;
  // Default: INFO_LEVEL.
  InfoLogLevel info_log_level = INFO_LEVEL;
  // Seconds between dumps of the stats table into the LOG; 0 disables. Mutable.
  // Default: 600.
  unsigned int stats_dump_period_sec = 600;
  // O_DIRECT for SST reads. Default: false.
  bool use_direct_reads = false;
  // Read SST files through a read-only mapping of each file instead of pread: a block
  // cache miss on a file in the page cache then costs no system call and no copy. The
  // price: a table file cut short by something outside the DB while it is open ends the
  // process with SIGBUS instead of returning an error. Cannot be set with
  // use_direct_reads (Open answers NotSupported). Default: false.
  bool allow_mmap_reads = false;
  // O_DIRECT for SST writes by flush and compaction. Default: false.
  bool use_direct_io_for_flush_and_compaction = false;
  // Concurrent writers are grouped: one leader writes the group's WAL record (syncing at
  // most once) and assigns its sequence numbers. With this option the members then insert
  // their own batches into the memtable in parallel, and the last one to finish publishes
  // the group; without it the leader inserts them all. A group holding a Merge inserts
  // serially either way. Default: true.
  bool allow_concurrent_memtable_write = true;
  // The WAL write of one group overlaps the memtable inserts of the group before it, which
  // raises throughput with several writers and the WAL on. Writes still become visible in
  // order. Incompatible with unordered_write and two_write_queues (Open refuses both).
  // Default: false.
  bool enable_pipelined_write = false;
  // Publish a group's writes as soon as they are in the WAL, and let each writer insert
  // into the memtable on its own afterwards, not waiting for the rest of its group or for
  // earlier groups. Much higher write throughput, weaker guarantees:
  // - kept: read-your-own-writes (a write is in the memtable when Write returns), WAL
  //   order, and durability as the WriteOptions ask;
  // - lost: atomic reads of a batch (a read may see part of a batch, or a later write but
  //   not an earlier one, while inserts are in flight) and immutable snapshots (a snapshot
  //   may still gain writes with sequences at or below its own until those finish).
  // WritePrepared transactions with two_write_queues restore both. Needs
  // allow_concurrent_memtable_write; incompatible with enable_pipelined_write and with
  // max_successive_merges > 0 (Open returns InvalidArgument). A memtable switch and a
  // flush wait for the pending inserts, so Flush and Close lose nothing. Default: false.
  bool unordered_write = false;
  // A second write queue for writes that skip the memtable (the WAL-only markers of
  // transactions); they share only the WAL with the main queue. Sequence numbers are
  // allocated from one counter, snapshots taken at the published sequence. Incompatible
  // with enable_pipelined_write: Open returns NotSupported (RocksDB refuses every write
  // instead). Default: false.
  bool two_write_queues = false;
  // Two-phase commit, for transactions (TransactionDB::Open sets it): the WAL may hold
  // prepared batches (between BeginPrepare and EndPrepare markers) that a later Commit or
  // Rollback marker resolves. Recovery rebuilds the unresolved ones, and a WAL holding one
  // is kept, with every WAL after it, until it is resolved and its commit flushed. A WAL
  // with a prepared batch refuses to open without it. Default: false.
  bool allow_2pc = false;
  // Keep the last level for files ingested with IngestExternalFileOptions::ingest_behind:
  // compactions never write into it nor read from it, and keep the tombstones and sequence
  // numbers they would drop at the bottom (older data may still arrive beneath). Needs
  // num_levels >= 3. Set it when the DB is created. Default: false.
  bool allow_ingest_behind = false;
  // How a writer waits for its group's leader: it spins briefly, then, with adaptive
  // yield, yields the CPU for up to write_thread_max_yield_usec (giving up early once
  // yields take longer than write_thread_slow_yield_usec, a sign of a busy CPU), then
  // blocks. Default: true, 100, 3.
  bool enable_write_thread_adaptive_yield = true;
  uint64_t write_thread_max_yield_usec = 100;
  uint64_t write_thread_slow_yield_usec = 3;
  // Bytes of WAL writes buffered before a write() call. Default: 1 MiB.
  size_t writable_file_max_buffer_size = 1024 * 1024;
  // A compaction reads each input table this many bytes at a time (0: block by block).
  // Default: 2 MiB.
  size_t compaction_readahead_size = 2 * 1024 * 1024;
  // Once the MANIFEST holds this many bytes, the next write to it (a flush, a compaction, a
  // family created or dropped, an ingestion) starts a new one instead: the whole tree and
  // the edit, synced, then CURRENT switched to it; the old one is then deleted. A MANIFEST
  // also starts anew at each Open. Default: 1 GiB.
  uint64_t max_manifest_file_size = 1024 * 1024 * 1024;
  // (RocksDB's manual_wal_flush is absent: shale has no FlushWAL.)
};

struct Options : public DBOptions, public ColumnFamilyOptions {
  Options() = default;
  Options(const DBOptions& db_options, const ColumnFamilyOptions& cf_options)
      : DBOptions(db_options), ColumnFamilyOptions(cf_options) {}
};

struct ReadOptions {
  // Read as of this snapshot; nullptr reads the latest state. Default: nullptr.
  const Snapshot* snapshot = nullptr;
  // Iterators stop before keys < *iterate_lower_bound (inclusive bound). The Slice must
  // outlive the iterator. Default: nullptr.
  const Slice* iterate_lower_bound = nullptr;
  // Iterators stop at keys >= *iterate_upper_bound (exclusive bound). Default: nullptr.
  const Slice* iterate_upper_bound = nullptr;
  // Verify block checksums on every read. Default: true.
  bool verify_checksums = true;
  // Put blocks read into the block cache. Default: true.
  bool fill_cache = true;
  // An iterator reads each table's data blocks this many bytes at a time. 0 reads ahead
  // only once reads run in file order: after four in a row, 8 KiB, doubling up to 256 KiB.
  // Default: 0.
  size_t readahead_size = 0;
  // (RocksDB's total_order_seek is absent: without prefix extractors every seek is
  // total-order already.)

  ReadOptions() = default;
  ReadOptions(bool cksum, bool cache) : verify_checksums(cksum), fill_cache(cache) {}
};

struct WriteOptions {
  // Sync the WAL (fdatasync, or fsync with use_fsync) before acknowledging. Default: false.
  bool sync = false;
  // Skip the WAL: the write is lost on a crash before the next flush. Default: false.
  bool disableWAL = false;
  // Fail with Incomplete instead of waiting when the write would stall. Default: false.
  bool no_slowdown = false;
  // (RocksDB's ignore_missing_column_families and low_pri are absent: shale has one column
  // family, and no compaction-pressure state for low-priority writes to yield to.)
};

// What CompactRange does with the bottommost level.
enum class BottommostLevelCompaction {
  // Skip it.
  kSkip,
  // Compact it only if the family has a compaction_filter or compaction_filter_factory.
  kIfHaveCompactionFilter,
  // Always compact it.
  kForce,
  // Always compact it, but skip files created by this very CompactRange.
  kForceOptimized,
};

struct CompactRangeOptions {
  // No automatic compaction runs alongside this one: CompactRange waits for the running ones
  // and none starts until it returns. With false they go on meanwhile, on files this one
  // does not hold (it waits for one that holds files it needs). change_level always runs
  // exclusively. Default: true, as in RocksDB.
  bool exclusive_manual_compaction = true;
  // Move the result to target_level afterwards. Default: false.
  bool change_level = false;
  // With change_level: the level to move to; -1 means the lowest level that fits.
  // Default: -1.
  int target_level = -1;
  // Default: kIfHaveCompactionFilter.
  BottommostLevelCompaction bottommost_level_compaction =
      BottommostLevelCompaction::kIfHaveCompactionFilter;
  // Threads for this compaction; 0 uses max_subcompactions. Default: 0.
  uint32_t max_subcompactions = 0;
};

struct WaitForCompactOptions {
  // Also flush the memtables first. Default: false.
  bool flush = false;
};

struct FlushOptions {
  // Wait until the flush is done. Default: true.
  bool wait = true;
  // (RocksDB's allow_write_stall is absent: a flush here never waits for a stall to pass
  // first, as RocksDB does with allow_write_stall = true.)
};

// How DB::IngestExternalFile(s) takes in files SstFileWriter made.
struct IngestExternalFileOptions {
  // Hard-link the files into the DB instead of copying them, and unlink the originals once
  // the ingestion succeeded. Default: false.
  bool move_files = false;
  // Hard-link them as move_files does, but keep the originals. At most one of move_files
  // and link_files. Default: false.
  bool link_files = false;
  // Copy a file that cannot be hard-linked (another file system, say); false makes that
  // failure the ingestion's. Default: true.
  bool failed_move_fall_back_to_copy = true;
  // A snapshot taken before the ingestion does not see the ingested keys: while any
  // snapshot is live the files get a sequence number newer than all of them. false: they
  // may get sequence number 0 (when nothing in the DB overlaps them), which existing
  // snapshots then see. Default: true.
  bool snapshot_consistency = true;
  // Allow giving the files a sequence number of their own (the global sequence number),
  // needed when their keys overlap the DB's or the files overlap each other, or by
  // snapshot_consistency; false makes such an ingestion fail with InvalidArgument.
  // Default: true.
  bool allow_global_seqno = true;
  // Flush the memtables whose keys the files overlap, and wait; false makes such an
  // ingestion fail with InvalidArgument("External file requires flush"). Default: true.
  bool allow_blocking_flush = true;
  // Read every block of the files (checking its checksum) before ingesting them; without
  // it only the blocks the key checks read are checked. Default: false.
  bool verify_checksums_before_ingest = false;
  // Fail with TryAgain unless every file lands in the last level. Default: false.
  bool fail_if_not_bottommost_level = false;
  // Put the files beneath everything the DB holds: in the last level, at sequence number
  // 0, so that a key the DB already has keeps its value (a backfill of older data). Needs
  // DBOptions::allow_ingest_behind; the files must not overlap each other nor the last
  // level's files (InvalidArgument). Default: false.
  bool ingest_behind = false;
};

}  // namespace shale
