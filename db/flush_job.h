// FlushJob: writes one immutable memtable into a new L0 SST file (through BuildTable) and
// describes the result as a VersionEdit; the DB installs the edit and drops the memtable.
//
// The memtable's entries pass through a CompactionIterator with the live snapshots, so the
// file keeps exactly what some reader can still see: versions hidden from every snapshot
// go, and so do Puts cancelled by their SingleDelete. A compaction filter sees the entries
// only when the family's factory asks for flushes (ShouldFilterTableFileCreation(kFlush),
// or kRecovery for a memtable replayed at open), as RocksDB's; the filter made for the
// flush serves it alone. When nothing survives there is no file at all
// (meta().file_size == 0) and the edit adds none.
//
// Lifecycle: construct under the DB mutex (the caller has allocated the file number and
// registered it as a pending output, and keeps the memtable referenced), Run() WITHOUT the
// mutex, then AddToEdit and the stats under it again. Run() is called once, from one
// thread. Everything passed in must outlive the job.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "db/snapshot_checker.h"
#include "db/version_edit.h"
#include "memtable/memtable.h"
#include "shale/env.h"
#include "shale/options.h"
#include "shale/types.h"
#include "util/dbformat.h"

namespace shale {

class TableCache;

class FlushJob {
 public:
  // db_dir may be null (no directory sync).
  FlushJob(const Options& options, const std::string& dbname, const InternalKeyComparator* icmp,
           TableCache* table_cache, Directory* db_dir, MemTable* mem,
           std::vector<SequenceNumber> snapshots, uint64_t file_number);
  FlushJob(const FlushJob&) = delete;
  FlushJob& operator=(const FlushJob&) = delete;

  // Entries may be written before they commit (WritePrepared transactions): checker says
  // which snapshots see them, and job_snapshot (one of the snapshots passed in, held by
  // the caller until the job ends) which count as committed (db/compaction_iterator.h).
  // checker must outlive the job. Optional; before Run().
  void SetSnapshotChecker(const SnapshotChecker* checker, SequenceNumber job_snapshot) {
    snapshot_checker_ = checker;
    job_snapshot_ = job_snapshot;
  }

  // The family flushed, as a compaction filter factory is told it. Optional (default 0,
  // the default family); before Run().
  void SetColumnFamilyId(uint32_t id) { column_family_id_ = id; }

  // Why the file is made, as a compaction filter factory is asked and told it: kFlush
  // (default) or kRecovery for a memtable replayed from the WAL at open, as RocksDB's.
  // Before Run().
  void SetReason(TableFileCreationReason reason) { reason_ = reason; }

  // Writes, syncs and verifies the file, then syncs the directory so that the MANIFEST may
  // name it. On failure no file is left behind and the memtable is untouched.
  Status Run();

  // After a successful Run(): adds the new file (if any) at L0.
  void AddToEdit(VersionEdit* edit) const;
  const FileMetaData& meta() const { return meta_; }
  uint64_t elapsed_micros() const { return elapsed_micros_; }
  // CPU time the job's thread spent in Run() (0 where unmeasurable).
  uint64_t cpu_micros() const { return cpu_micros_; }

 private:
  const Options& options_;
  const std::string& dbname_;
  const InternalKeyComparator* const icmp_;
  TableCache* const table_cache_;
  Directory* const db_dir_;
  MemTable* const mem_;
  const std::vector<SequenceNumber> snapshots_;
  const SnapshotChecker* snapshot_checker_ = nullptr;
  SequenceNumber job_snapshot_ = kMaxSequenceNumber;
  uint32_t column_family_id_ = 0;
  TableFileCreationReason reason_ = TableFileCreationReason::kFlush;
  FileMetaData meta_;
  uint64_t elapsed_micros_ = 0;
  uint64_t cpu_micros_ = 0;
};

}  // namespace shale
