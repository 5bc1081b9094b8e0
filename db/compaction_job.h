// CompactionJob: executes one Compaction: reads its input files through the TableCache,
// passes the merged entries through a CompactionIterator, and writes the survivors into new
// SST files of the output level, then describes the result as a VersionEdit.
//
// Output files are cut at Compaction::max_output_file_size() and when the current file
// would overlap more than max_grandparent_overlap_bytes() of the level below the output,
// but never between two entries of the same user key, so files of a level never share a
// user key. Each output is written by a TableFileWriter (synced, and verified to open
// through the TableCache); the DB directory is synced once at the end, before the caller
// records the files in the MANIFEST.
//
// Subcompactions: with max_subcompactions > 1 (the Compaction's own setting, else
// DBOptions::max_subcompactions) and enough input files, the key range is split at input
// file boundaries into disjoint user-key ranges of about equal input bytes, each written
// by its own thread; their outputs, in key order, form the result.
//
// Failure: Run() returns the first error (input corruption, I/O error, ShutdownInProgress
// when the shutting-down flag is raised) after deleting every output file it created.
//
// A compaction filter (shale/compaction_filter.h) is chosen per subcompaction: the
// family's shared one, or one its factory makes for that subcompaction alone; entries are
// offered to it from the subcompaction's thread.
//
// Thread safety: Run() is called once, WITHOUT the DB mutex, from one thread (it starts
// and joins its own subcompaction threads). new_file_number and register_output are called
// from those threads but never concurrently with each other (the job serializes them); they
// must take whatever DB lock they need themselves. AddToEdit and stats() after Run().
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "db/compaction.h"
#include "db/compaction_iterator.h"
#include "db/table_cache.h"
#include "db/version_edit.h"
#include "shale/env.h"
#include "shale/options.h"
#include "util/dbformat.h"
#include "util/mutexlock.h"
#include "util/range_tombstone.h"

namespace shale {

struct CompactionJobStats {
  uint64_t elapsed_micros = 0;
  // CPU time of every thread the job ran on (its subcompactions'), 0 where unmeasurable.
  uint64_t cpu_micros = 0;
  uint32_t num_subcompactions = 0;
  size_t num_input_files = 0;
  size_t num_input_files_at_output_level = 0;
  uint64_t total_input_bytes = 0;  // sizes of the input files
  size_t num_output_files = 0;
  uint64_t total_output_bytes = 0;  // sizes of the output files
  // Records read and written, and why the others were dropped (see CompactionIterator).
  CompactionIterationStats iter;
};

class CompactionJob {
 public:
  // options, compaction, table_cache, icmp and db_dir (may be null: no directory sync)
  // must outlive the job. snapshots: live snapshot sequences (any order). new_file_number
  // allocates an output file number; register_output(number) is called before the file is
  // created so that the DB's obsolete-file sweep leaves it alone (the caller unregisters
  // the outputs after LogAndApply, or after a failed Run()).
  CompactionJob(const Options& options, const std::string& dbname, Compaction* compaction,
                TableCache* table_cache, const InternalKeyComparator* icmp,
                std::vector<SequenceNumber> snapshots, std::function<uint64_t()> new_file_number,
                std::function<void(uint64_t)> register_output, Directory* db_dir);
  ~CompactionJob();
  CompactionJob(const CompactionJob&) = delete;
  CompactionJob& operator=(const CompactionJob&) = delete;

  // When *flag becomes true, Run() stops early with ShutdownInProgress. Optional.
  void SetShuttingDown(const std::atomic<bool>* flag) { shutting_down_ = flag; }
  // The id its LOG lines carry ("[JOB n]"). Optional.
  void SetJobId(uint64_t id) { job_id_ = id; }
  // Entries may be written before they commit (WritePrepared transactions): checker says
  // which snapshots see them, and job_snapshot (one of the snapshots passed in, held by
  // the caller until the job ends) which count as committed (db/compaction_iterator.h).
  // checker must outlive the job; every subcompaction asks it. Optional; before Run().
  void SetSnapshotChecker(const SnapshotChecker* checker, SequenceNumber job_snapshot) {
    snapshot_checker_ = checker;
    job_snapshot_ = job_snapshot;
  }

  // The family the job compacts, as a compaction filter factory is told it. Optional
  // (default 0, the default family); before Run().
  void SetColumnFamilyId(uint32_t id) { column_family_id_ = id; }

  // Does the work; see the contract above.
  Status Run();

  // After a successful Run(): deletes the inputs and adds the outputs at the output level
  // (with their key and sequence ranges).
  void AddToEdit(VersionEdit* edit) const;

  // The output files in key order (valid after a successful Run()).
  const std::vector<FileMetaData>& outputs() const { return outputs_; }
  const CompactionJobStats& stats() const { return stats_; }

 private:
  struct SubcompactionState;

  // The user-key boundaries between subcompactions (empty: one subcompaction).
  std::vector<std::string> SplitPoints() const;
  void RunSubcompaction(SubcompactionState* sub);
  // Cut the current output before key? Advances the grandparent cursor.
  bool ShouldStopBefore(SubcompactionState* sub, const Slice& key) const;
  // Range tombstones (db/range_del_iterator.h for the entries they hide): the inputs' own,
  // fragmented together (null: none); those the outputs keep, given the snapshots
  // (ascending): the newest of each stripe, and at the bottommost level none that every
  // snapshot sees; whether the sub's current output would take any below upper (null: no
  // bound); and adding the current output's share, from its lower bound to upper.
  Status InputTombstones(std::shared_ptr<const FragmentedRangeTombstones>* result) const;
  std::shared_ptr<const FragmentedRangeTombstones> KeptTombstones(
      const std::shared_ptr<const FragmentedRangeTombstones>& input,
      const std::vector<SequenceNumber>& sorted_snapshots) const;
  bool HasTombstonesIn(const SubcompactionState& sub, const Slice* upper) const;
  void AddTombstones(SubcompactionState* sub, const Slice* upper);
  Status OpenOutput(SubcompactionState* sub);
  Status FinishOutput(SubcompactionState* sub);
  void DeleteOutputs(const std::vector<uint64_t>& numbers);
  // Whether the inputs are every file of the tree (CompactionFilter::Context).
  bool IsFullCompaction() const;

  const Options& options_;
  const std::string dbname_;
  Compaction* const compaction_;
  TableCache* const table_cache_;
  const InternalKeyComparator* const icmp_;
  const std::vector<SequenceNumber> snapshots_;
  const std::function<uint64_t()> new_file_number_;
  const std::function<void(uint64_t)> register_output_;
  Directory* const db_dir_;
  uint64_t job_id_ = 0;
  uint32_t column_family_id_ = 0;
  const std::atomic<bool>* shutting_down_ = nullptr;
  const SnapshotChecker* snapshot_checker_ = nullptr;
  SequenceNumber job_snapshot_ = kMaxSequenceNumber;

  Mutex file_number_mu_;  // serializes new_file_number_ + register_output_
  std::vector<FileMetaData> outputs_;
  CompactionJobStats stats_;
};

}  // namespace shale
