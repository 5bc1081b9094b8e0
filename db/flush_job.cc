#include "db/flush_job.h"

#include <memory>
#include <utility>

#include "db/compaction_iterator.h"
#include "db/job_cpu_time.h"
#include "db/range_del_iterator.h"
#include "db/table_file_writer.h"

namespace shale {

FlushJob::FlushJob(const Options& options, const std::string& dbname,
                   const InternalKeyComparator* icmp, TableCache* table_cache, Directory* db_dir,
                   MemTable* mem, std::vector<SequenceNumber> snapshots, uint64_t file_number)
    : options_(options),
      dbname_(dbname),
      icmp_(icmp),
      table_cache_(table_cache),
      db_dir_(db_dir),
      mem_(mem),
      snapshots_(std::move(snapshots)) {
  meta_.number = file_number;
}

Status FlushJob::Run() {
  const uint64_t start = options_.env->NowMicros();
  const uint64_t cpu_start = ThreadCpuMicros();
  CompactionFilter::Context context;
  context.column_family_id = column_family_id_;
  context.reason = reason_;
  std::unique_ptr<CompactionFilter> owned_filter;
  const CompactionFilter* filter = nullptr;
  Status s = ChooseCompactionFilter(options_, context, &owned_filter, &filter);
  if (!s.ok()) return s;
  // Entries the memtable's range tombstones hide from every reader are left out (so that no
  // operand is folded onto one); the tombstones themselves go to the file as they are.
  // Under a snapshot checker (WritePrepared) visibility is not by sequence: nothing is left
  // out.
  const std::shared_ptr<const FragmentedRangeTombstones> tombstones = mem_->RangeTombstones();
  std::unique_ptr<InternalIterator> input(NewCoveredEntryDropper(
      mem_->NewIterator(), snapshot_checker_ == nullptr ? tombstones.get() : nullptr, snapshots_));
  input->SeekToFirst();
  CompactionIterator iter(input.get(), icmp_->user_comparator(), snapshots_,
                          /*compaction=*/nullptr, /*end_user_key=*/nullptr,
                          options_.merge_operator.get(), options_.info_log.get(),
                          options_.statistics.get(), snapshot_checker_, job_snapshot_);
  iter.SetCompactionFilter(filter, /*level=*/0);
  iter.SetRangeTombstones(tombstones.get());
  // Gets reached this memtable (it kept a filter): they will search the L0 file too.
  const uint64_t key_filter_keys = mem_->has_filter() ? mem_->num_entries() : 0;
  s = BuildTable(options_, dbname_, icmp_, &iter, /*level=*/0, /*is_flush=*/true, key_filter_keys,
                 table_cache_, &meta_, tombstones.get());
  if (s.ok() && meta_.file_size > 0) {
    s = SyncDirectory(db_dir_);
    if (!s.ok()) DeleteTableFile(options_.env, dbname_, meta_.number, table_cache_);
  }
  elapsed_micros_ = options_.env->NowMicros() - start;
  cpu_micros_ = ThreadCpuMicros() - cpu_start;
  return s;
}

void FlushJob::AddToEdit(VersionEdit* edit) const {
  if (meta_.file_size > 0) edit->AddFile(0, meta_);
}

}  // namespace shale
