#include "db/compaction_job.h"

#include <algorithm>
#include <cinttypes>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "db/job_cpu_time.h"
#include "db/level_iterator.h"
#include "db/range_del_iterator.h"
#include "db/table_file_writer.h"
#include "db/version.h"
#include "table/merging_iterator.h"
#include "util/logging.h"
#include "util/statistics.h"

namespace shale {

struct CompactionJob::SubcompactionState {
  // User-key range [start, end); empty flags mean unbounded.
  bool has_start = false;
  bool has_end = false;
  std::string start;
  std::string end;

  Status status;
  uint64_t cpu_micros = 0;
  std::vector<FileMetaData> outputs;  // finished, in key order
  std::vector<uint64_t> created;      // every file number created (for cleanup)
  CompactionIterationStats iter_stats;

  // The output being written (is_open() while there is one).
  std::unique_ptr<TableFileWriter> writer;

  // Range tombstones the outputs keep (null: none), and where the current output's share
  // of them begins (none: from the start).
  std::shared_ptr<const FragmentedRangeTombstones> tombstones;
  std::optional<std::string> output_lower;

  // Grandparent overlap of the current output.
  size_t grandparent_index = 0;
  uint64_t grandparent_overlap = 0;
  bool seen_key = false;
};

CompactionJob::CompactionJob(const Options& options, const std::string& dbname,
                             Compaction* compaction, TableCache* table_cache,
                             const InternalKeyComparator* icmp,
                             std::vector<SequenceNumber> snapshots,
                             std::function<uint64_t()> new_file_number,
                             std::function<void(uint64_t)> register_output, Directory* db_dir)
    : options_(options),
      dbname_(dbname),
      compaction_(compaction),
      table_cache_(table_cache),
      icmp_(icmp),
      snapshots_(std::move(snapshots)),
      new_file_number_(std::move(new_file_number)),
      register_output_(std::move(register_output)),
      db_dir_(db_dir) {}

CompactionJob::~CompactionJob() = default;

std::vector<std::string> CompactionJob::SplitPoints() const {
  const uint32_t max_subs = compaction_->max_subcompactions() > 0
                                ? compaction_->max_subcompactions()
                                : options_.max_subcompactions;
  if (max_subs <= 1 || compaction_->num_input_files() < 2) return {};
  const Comparator* ucmp = icmp_->user_comparator();

  // Candidate boundaries: input file edges strictly inside the compaction's range.
  std::vector<std::string> candidates;
  for (const CompactionInputFiles& in : compaction_->inputs()) {
    for (const FileMetaPtr& f : in.files) {
      for (const Slice k : {f->smallest.user_key(), f->largest.user_key()}) {
        if (ucmp->Compare(k, compaction_->smallest_user_key()) > 0)
          candidates.push_back(k.ToString());
      }
    }
  }
  std::sort(candidates.begin(), candidates.end(),
            [ucmp](const std::string& a, const std::string& b) { return ucmp->Compare(a, b) < 0; });
  candidates.erase(std::unique(candidates.begin(), candidates.end(),
                               [ucmp](const std::string& a, const std::string& b) {
                                 return ucmp->Compare(a, b) == 0;
                               }),
                   candidates.end());
  if (candidates.empty()) return {};

  // Input bytes before each candidate (a file straddling it counts half), to cut the range
  // into pieces of about equal work.
  std::vector<double> before(candidates.size(), 0);
  double total = 0;
  for (const CompactionInputFiles& in : compaction_->inputs()) {
    for (const FileMetaPtr& f : in.files) {
      const double size = static_cast<double>(std::max<uint64_t>(f->file_size, 1));
      total += size;
      for (size_t i = 0; i < candidates.size(); i++) {
        if (ucmp->Compare(f->largest.user_key(), candidates[i]) < 0) {
          before[i] += size;
        } else if (ucmp->Compare(f->smallest.user_key(), candidates[i]) < 0) {
          before[i] += size / 2;
        }
      }
    }
  }
  const size_t pieces = std::min<size_t>(max_subs, candidates.size() + 1);
  std::vector<std::string> splits;
  size_t next = 0;
  for (size_t p = 1; p < pieces; p++) {
    const double goal = total * static_cast<double>(p) / static_cast<double>(pieces);
    while (next < candidates.size() && before[next] < goal) next++;
    if (next >= candidates.size()) break;
    if (splits.empty() || ucmp->Compare(splits.back(), candidates[next]) < 0) {
      splits.push_back(candidates[next]);
    }
    next++;
  }
  return splits;
}

Status CompactionJob::Run() {
  Env* env = options_.env;
  const uint64_t start_micros = env->NowMicros();

  Logger* log = options_.info_log.get();
  std::string inputs_text;
  for (size_t i = 0; i < compaction_->num_input_levels(); i++) {
    char buf[64];
    snprintf(buf, sizeof(buf), "%s%zu@%d", i > 0 ? " + " : "", compaction_->inputs(i).size(),
             compaction_->level(i));
    inputs_text += buf;
  }
  SHALE_LOG_INFO(log,
                 "[default] [JOB %" PRIu64 "] Compacting %s files to L%d, score %.2f, %" PRIu64
                 " input bytes%s",
                 job_id_, inputs_text.c_str(), compaction_->output_level(), compaction_->score(),
                 compaction_->TotalInputBytes(), compaction_->is_manual() ? ", manual" : "");
  stats_.num_input_files = compaction_->num_input_files();
  stats_.num_input_files_at_output_level = compaction_->output_level_inputs().size();
  stats_.total_input_bytes = compaction_->TotalInputBytes();

  const std::vector<std::string> splits = SplitPoints();
  std::vector<SubcompactionState> subs(splits.size() + 1);
  for (size_t i = 0; i < subs.size(); i++) {
    subs[i].writer = std::make_unique<TableFileWriter>(options_, dbname_, icmp_);
    if (i > 0) {
      subs[i].has_start = true;
      subs[i].start = splits[i - 1];
    }
    if (i < splits.size()) {
      subs[i].has_end = true;
      subs[i].end = splits[i];
    }
  }
  stats_.num_subcompactions = static_cast<uint32_t>(subs.size());

  std::vector<std::thread> threads;
  for (size_t i = 1; i < subs.size(); i++) {
    threads.emplace_back([this, &subs, i] { RunSubcompaction(&subs[i]); });
  }
  RunSubcompaction(&subs[0]);
  for (std::thread& t : threads) t.join();

  Status s;
  for (SubcompactionState& sub : subs) {
    if (!sub.status.ok()) {
      s = sub.status;
      break;
    }
  }
  // The new files' directory entries must be durable before the MANIFEST names them.
  if (s.ok()) s = SyncDirectory(db_dir_);

  outputs_.clear();
  for (SubcompactionState& sub : subs) {
    stats_.iter.Add(sub.iter_stats);
    stats_.cpu_micros += sub.cpu_micros;
    if (s.ok()) {
      for (FileMetaData& f : sub.outputs) outputs_.push_back(std::move(f));
    } else {
      DeleteOutputs(sub.created);
    }
  }
  stats_.num_output_files = outputs_.size();
  stats_.total_output_bytes = 0;
  for (const FileMetaData& f : outputs_) stats_.total_output_bytes += f.file_size;
  stats_.elapsed_micros = env->NowMicros() - start_micros;

  Statistics* st = options_.statistics.get();
  RecordTick(st, COMPACT_READ_BYTES, stats_.total_input_bytes);
  RecordTick(st, COMPACT_WRITE_BYTES, stats_.total_output_bytes);
  RecordTick(st, COMPACTION_KEY_DROP_NEWER_ENTRY, stats_.iter.num_record_drop_hidden);
  RecordTick(st, COMPACTION_KEY_DROP_OBSOLETE, stats_.iter.num_record_drop_obsolete);
  RecordTick(st, COMPACTION_OPTIMIZED_DEL_DROP_OBSOLETE,
             stats_.iter.num_optimized_del_drop_obsolete);
  RecordTick(st, COMPACTION_KEY_DROP_USER, stats_.iter.num_record_drop_user);
  RecordTimeToHistogram(st, COMPACTION_TIME, stats_.elapsed_micros);
  RecordInHistogram(st, NUM_FILES_IN_SINGLE_COMPACTION, stats_.num_input_files);
  RecordInHistogram(st, NUM_SUBCOMPACTIONS_SCHEDULED, stats_.num_subcompactions);
  for (const FileMetaData& f : outputs_) {
    SHALE_LOG_INFO(log,
                   "[default] [JOB %" PRIu64 "] Generated table #%" PRIu64 ": %" PRIu64
                   " keys, %" PRIu64 " bytes",
                   job_id_, f.number, f.num_entries, f.file_size);
  }
  const double secs = std::max<double>(static_cast<double>(stats_.elapsed_micros), 1) / 1e6;
  SHALE_LOG_INFO(log,
                 "[default] [JOB %" PRIu64
                 "] Compacted %s files to L%d: %zu files, "
                 "MB/sec: %.1f rd, %.1f wr, MB in %.1f out %.1f, write-amplify %.1f, "
                 "records in %" PRIu64 " dropped %" PRIu64 ", %" PRIu64 " bytes written, %" PRIu64
                 " micros, %" PRIu64 " cpu micros, %u subcompactions: %s",
                 job_id_, inputs_text.c_str(), compaction_->output_level(), outputs_.size(),
                 static_cast<double>(stats_.total_input_bytes) / 1048576.0 / secs,
                 static_cast<double>(stats_.total_output_bytes) / 1048576.0 / secs,
                 static_cast<double>(stats_.total_input_bytes) / 1048576.0,
                 static_cast<double>(stats_.total_output_bytes) / 1048576.0,
                 static_cast<double>(stats_.total_output_bytes) /
                     static_cast<double>(std::max<uint64_t>(stats_.total_input_bytes, 1)),
                 stats_.iter.num_input_records,
                 stats_.iter.num_input_records - stats_.iter.num_output_records,
                 stats_.total_output_bytes, stats_.elapsed_micros, stats_.cpu_micros,
                 stats_.num_subcompactions, s.ToString().c_str());
  return s;
}

void CompactionJob::RunSubcompaction(SubcompactionState* sub) {
  const uint64_t cpu_start = ThreadCpuMicros();
  // Compaction reads must not push the working set out of the block cache.
  ReadOptions read_options;
  read_options.verify_checksums = true;
  read_options.fill_cache = false;
  // Its own windows, never the automatic ones: 0 reads block by block (a fixed window no
  // larger than a block reads the block alone).
  read_options.readahead_size = std::max<size_t>(options_.compaction_readahead_size, 1);

  std::vector<InternalIterator*> children;
  for (size_t which = 0; which < compaction_->num_input_levels(); which++) {
    const std::vector<FileMetaPtr>& files = compaction_->inputs(which);
    if (files.empty()) continue;
    if (compaction_->level(which) == 0) {
      for (const FileMetaPtr& f : files)
        children.push_back(table_cache_->NewIterator(read_options, *f));
    } else {
      children.push_back(NewLevelIterator(table_cache_, read_options, icmp_, &files));
    }
  }
  // The inputs' range tombstones: entries they hide from every reader are left out, and
  // those still needed go to the outputs, each output taking its share of them.
  std::shared_ptr<const FragmentedRangeTombstones> input_tombstones;
  Status ts = InputTombstones(&input_tombstones);
  if (!ts.ok()) {
    for (InternalIterator* child : children) delete child;
    sub->status = ts;
    return;
  }
  std::vector<SequenceNumber> sorted_snapshots(snapshots_);
  std::sort(sorted_snapshots.begin(), sorted_snapshots.end());
  sub->tombstones = KeptTombstones(input_tombstones, sorted_snapshots);
  if (sub->has_start) sub->output_lower = sub->start;
  std::unique_ptr<InternalIterator> input(NewCoveredEntryDropper(
      NewMergingIterator(icmp_, children.data(), static_cast<int>(children.size())),
      snapshot_checker_ == nullptr ? input_tombstones.get() : nullptr, sorted_snapshots));
  if (sub->has_start) {
    std::string target;
    AppendInternalKey(&target, sub->start, kMaxSequenceNumber, kValueTypeForSeek);
    input->Seek(target);
  } else {
    input->SeekToFirst();
  }

  CompactionFilter::Context context;
  context.is_full_compaction = IsFullCompaction();
  context.is_manual_compaction = compaction_->is_manual();
  context.input_start_level = compaction_->start_level();
  context.column_family_id = column_family_id_;
  context.reason = TableFileCreationReason::kCompaction;
  std::unique_ptr<CompactionFilter> owned_filter;
  const CompactionFilter* filter = nullptr;
  Status s = ChooseCompactionFilter(options_, context, &owned_filter, &filter);

  const Comparator* ucmp = icmp_->user_comparator();
  const Slice end(sub->end);
  CompactionIterator iter(input.get(), ucmp, snapshots_, compaction_, sub->has_end ? &end : nullptr,
                          options_.merge_operator.get(), options_.info_log.get(),
                          options_.statistics.get(), snapshot_checker_, job_snapshot_);
  iter.SetCompactionFilter(filter, compaction_->start_level());
  iter.SetRangeTombstones(input_tombstones.get());
  std::string last_user_key;
  bool has_last = false;
  bool cut_pending = false;
  if (s.ok()) iter.SeekToFirst();
  for (; s.ok() && iter.Valid(); iter.Next()) {
    if (shutting_down_ != nullptr && shutting_down_->load(std::memory_order_relaxed)) {
      s = Status::ShutdownInProgress("compaction stopped: the DB is closing");
      break;
    }
    const Slice key = iter.key();
    const Slice user_key = iter.user_key();
    const bool new_user_key = !has_last || ucmp->Compare(user_key, last_user_key) != 0;
    if (ShouldStopBefore(sub, key)) cut_pending = true;
    if (sub->writer->is_open() && new_user_key &&
        (cut_pending || sub->writer->FileSize() >= compaction_->max_output_file_size())) {
      AddTombstones(sub, &user_key);
      sub->output_lower = user_key.ToString();
      s = FinishOutput(sub);
      if (!s.ok()) break;
    }
    if (!sub->writer->is_open()) {
      s = OpenOutput(sub);
      if (!s.ok()) break;
      cut_pending = false;
    }
    sub->writer->Add(key, iter.ikey().sequence, iter.value());
    if (new_user_key) {
      last_user_key.assign(user_key.data(), user_key.size());
      has_last = true;
    }
  }
  if (s.ok()) s = iter.status();
  if (s.ok()) {
    // The last output takes the tombstones up to the subcompaction's end; one with no
    // entries is written when tombstones fall there.
    const Slice sub_end(sub->end);
    const Slice* upper = sub->has_end ? &sub_end : nullptr;
    if (!sub->writer->is_open() && HasTombstonesIn(*sub, upper)) s = OpenOutput(sub);
    if (s.ok() && sub->writer->is_open()) {
      AddTombstones(sub, upper);
      s = FinishOutput(sub);
    }
  }
  if (!s.ok()) sub->writer->Abandon();
  sub->iter_stats = iter.stats();
  sub->status = s;
  sub->cpu_micros = ThreadCpuMicros() - cpu_start;
}

Status CompactionJob::InputTombstones(
    std::shared_ptr<const FragmentedRangeTombstones>* result) const {
  for (size_t which = 0; which < compaction_->num_input_levels(); which++) {
    for (const FileMetaPtr& f : compaction_->inputs(which)) {
      if (f->num_range_deletions == 0) continue;
      std::shared_ptr<TableReader> reader;
      Status s = table_cache_->FindTable(*f, &reader);
      if (!s.ok()) return s;
      *result = MergeRangeTombstones(*result, reader->range_tombstones(), icmp_->user_comparator());
    }
  }
  return Status::OK();
}

std::shared_ptr<const FragmentedRangeTombstones> CompactionJob::KeptTombstones(
    const std::shared_ptr<const FragmentedRangeTombstones>& input,
    const std::vector<SequenceNumber>& sorted_snapshots) const {
  if (input == nullptr || input->empty()) return nullptr;
  // Under a snapshot checker visibility is not by sequence: every tombstone stays.
  if (snapshot_checker_ != nullptr) return input;
  // The newest of each snapshot stripe hides what the others do from every reader.
  FragmentedRangeTombstones striped(input->ToTombstones(), icmp_->user_comparator(),
                                    sorted_snapshots);
  std::vector<RangeTombstone> kept = striped.ToTombstones();
  if (compaction_->bottommost_level()) {
    // Nothing lies beneath, and every entry it covered here was left out (no snapshot
    // between): a tombstone that every snapshot sees has nothing left to delete.
    std::erase_if(kept, [&](const RangeTombstone& t) {
      return sorted_snapshots.empty() || sorted_snapshots.front() >= t.seq;
    });
  }
  if (kept.empty()) return nullptr;
  return std::make_shared<const FragmentedRangeTombstones>(std::move(kept),
                                                           icmp_->user_comparator());
}

bool CompactionJob::HasTombstonesIn(const SubcompactionState& sub, const Slice* upper) const {
  if (sub.tombstones == nullptr) return false;
  const Comparator* ucmp = icmp_->user_comparator();
  for (size_t i = 0; i < sub.tombstones->size(); i++) {
    const FragmentedRangeTombstones::Fragment& f = sub.tombstones->fragment(i);
    if (sub.output_lower.has_value() && ucmp->Compare(f.end, *sub.output_lower) <= 0) continue;
    if (upper != nullptr && ucmp->Compare(f.begin, *upper) >= 0) continue;
    return true;
  }
  return false;
}

void CompactionJob::AddTombstones(SubcompactionState* sub, const Slice* upper) {
  if (sub->tombstones == nullptr) return;
  const Comparator* ucmp = icmp_->user_comparator();
  const FragmentedRangeTombstones& list = *sub->tombstones;
  // Each output keeps the part of every fragment between its lower bound and the next
  // output's first key, so that a tombstone cut between two outputs loses nothing and no
  // two outputs of the level overlap.
  for (size_t i = 0; i < list.size(); i++) {
    const FragmentedRangeTombstones::Fragment& f = list.fragment(i);
    Slice begin = f.begin;
    Slice end = f.end;
    if (sub->output_lower.has_value() && ucmp->Compare(begin, *sub->output_lower) < 0) {
      begin = *sub->output_lower;
    }
    if (upper != nullptr && ucmp->Compare(*upper, end) < 0) end = *upper;
    if (ucmp->Compare(begin, end) >= 0) continue;
    for (size_t k = f.first_seq; k < f.last_seq; k++) {
      sub->writer->AddRangeTombstone(begin, end, list.seqs()[k]);
    }
  }
}

bool CompactionJob::ShouldStopBefore(SubcompactionState* sub, const Slice& key) const {
  const std::vector<FileMetaPtr>& gp = compaction_->grandparents();
  while (sub->grandparent_index < gp.size() &&
         icmp_->Compare(key, gp[sub->grandparent_index]->largest.Encode()) > 0) {
    if (sub->seen_key) sub->grandparent_overlap += gp[sub->grandparent_index]->file_size;
    sub->grandparent_index++;
  }
  sub->seen_key = true;
  if (sub->grandparent_overlap > compaction_->max_grandparent_overlap_bytes()) {
    sub->grandparent_overlap = 0;
    return true;
  }
  return false;
}

Status CompactionJob::OpenOutput(SubcompactionState* sub) {
  uint64_t number;
  {
    MutexLock l(&file_number_mu_);
    number = new_file_number_();
    register_output_(number);
  }
  sub->created.push_back(number);
  sub->grandparent_overlap = 0;
  // Reads that reach the bottom of the tree usually find their key: no filter there.
  const bool skip_filters = options_.optimize_filters_for_hits && compaction_->bottommost_level();
  return sub->writer->Open(number, compaction_->output_level(), /*is_flush=*/false, skip_filters);
}

Status CompactionJob::FinishOutput(SubcompactionState* sub) {
  FileMetaData meta;
  Status s = sub->writer->Finish(table_cache_, &meta);
  if (s.ok()) sub->outputs.push_back(std::move(meta));
  return s;
}

bool CompactionJob::IsFullCompaction() const {
  const Version* v = compaction_->input_version();
  size_t total = 0;
  for (int level = 0; level < v->NumLevels(); level++) total += v->NumFiles(level);
  return compaction_->num_input_files() == total;
}

void CompactionJob::DeleteOutputs(const std::vector<uint64_t>& numbers) {
  for (uint64_t number : numbers) DeleteTableFile(options_.env, dbname_, number, table_cache_);
}

void CompactionJob::AddToEdit(VersionEdit* edit) const {
  compaction_->AddInputDeletions(edit);
  for (const FileMetaData& f : outputs_) edit->AddFile(compaction_->output_level(), f);
}

}  // namespace shale
