#include "db/compaction_picker.h"

#include <algorithm>
#include <string>
#include <utility>

namespace shale {

namespace {

uint64_t TotalBytes(const std::vector<FileMetaPtr>& files) {
  uint64_t sum = 0;
  for (const FileMetaPtr& f : files) sum += f->file_size;
  return sum;
}

// The user-key range covered by a and b together.
void RangeOf(const Comparator* ucmp, const std::vector<FileMetaPtr>& a,
             const std::vector<FileMetaPtr>& b, std::string* smallest, std::string* largest) {
  bool first = true;
  for (const std::vector<FileMetaPtr>* files : {&a, &b}) {
    for (const FileMetaPtr& f : *files) {
      const Slice s = f->smallest.user_key();
      const Slice l = f->largest.user_key();
      if (first || ucmp->Compare(s, *smallest) < 0) *smallest = s.ToString();
      if (first || ucmp->Compare(l, *largest) > 0) *largest = l.ToString();
      first = false;
    }
  }
}

}  // namespace

CompactionPicker::CompactionPicker(std::shared_ptr<const Options> options,
                                   const InternalKeyComparator* icmp)
    : options_(std::move(options)), icmp_(icmp) {}

void CompactionPicker::SetOptions(std::shared_ptr<const Options> options) {
  options_ = std::move(options);
  scores_stale_ = true;  // the targets and the L0 trigger may have changed
}

const LevelScores& CompactionPicker::ScoresOf(const Version* v) {
  if (scores_stale_ || v != scored_ || v->version_number() != scored_number_) {
    scores_ = ComputeLevelScores(*options_, *v,
                                 [this](const FileMetaData& f) { return IsBeingCompacted(f); });
    scored_ = v;
    scored_number_ = v->version_number();
    scores_stale_ = false;
  }
  return scores_;
}

bool CompactionPicker::AnyBeingCompacted(const std::vector<FileMetaPtr>& files) const {
  for (const FileMetaPtr& f : files) {
    if (IsBeingCompacted(*f)) return true;
  }
  return false;
}

bool CompactionPicker::IsLevel0CompactionRunning() const {
  for (const Compaction* c : running_) {
    if (c->start_level() == 0) return true;
  }
  return false;
}

bool CompactionPicker::OutputRangeBusy(int output_level, const Slice& smallest,
                                       const Slice& largest) const {
  const Comparator* ucmp = icmp_->user_comparator();
  for (const Compaction* c : running_) {
    if (c->output_level() != output_level) continue;
    if (ucmp->Compare(c->largest_user_key(), smallest) < 0) continue;
    if (ucmp->Compare(c->smallest_user_key(), largest) > 0) continue;
    return true;
  }
  for (const Reservation& r : reserved_) {
    if (r.level == output_level && ucmp->Compare(r.largest, smallest) >= 0 &&
        ucmp->Compare(r.smallest, largest) <= 0) {
      return true;
    }
  }
  return false;
}

void CompactionPicker::ReserveOutputRange(int level, const Slice& smallest, const Slice& largest) {
  reserved_.push_back({level, smallest.ToString(), largest.ToString()});
}

void CompactionPicker::Register(Compaction* c) {
  c->picker_ = this;
  running_.insert(c);
  for (const CompactionInputFiles& in : c->inputs()) {
    for (const FileMetaPtr& f : in.files) compacting_.insert(f->number);
  }
  scores_stale_ = true;  // a second pick looks at what is left
}

void CompactionPicker::ReleaseCompaction(Compaction* c) { c->ReleaseCompactionFiles(); }

void CompactionPicker::HoldFiles(const std::vector<uint64_t>& numbers) {
  compacting_.insert(numbers.begin(), numbers.end());
  scores_stale_ = true;
}

void CompactionPicker::ReleaseFiles(const std::vector<uint64_t>& numbers) {
  for (uint64_t number : numbers) compacting_.erase(number);
  scores_stale_ = true;
}

void CompactionPicker::UnregisterCompaction(Compaction* c) {
  if (running_.erase(c) == 0) return;
  for (const CompactionInputFiles& in : c->inputs()) {
    for (const FileMetaPtr& f : in.files) compacting_.erase(f->number);
  }
  scores_stale_ = true;  // after a failed job its inputs count again
}

std::unique_ptr<Compaction> CompactionPicker::PickCompaction(Version* v) {
  const std::vector<std::pair<double, int>> sorted = ScoresOf(v).sorted;
  for (const auto& [score, level] : sorted) {
    if (score < 1) break;
    std::unique_ptr<Compaction> c = PickLevel(v, level, score);
    if (c != nullptr) {
      Register(c.get());
      return c;
    }
  }
  return nullptr;
}

std::unique_ptr<Compaction> CompactionPicker::PickLevel(Version* v, int level, double score) {
  const int num_levels = v->NumLevels();
  const int output_level = level == 0 ? ScoresOf(v).base_level : level + 1;
  if (output_level >= num_levels || output_level <= level) return nullptr;
  const Comparator* ucmp = icmp_->user_comparator();

  if (level == 0) {
    // L0 files overlap each other: two L0 compactions at once could reorder versions.
    if (IsLevel0CompactionRunning()) return nullptr;
    const std::vector<FileMetaPtr>& l0 = v->files(0);
    // The oldest file first (L0 is ordered newest first).
    for (auto it = l0.rbegin(); it != l0.rend(); ++it) {
      const FileMetaPtr& f = *it;
      if (IsBeingCompacted(*f)) continue;
      std::vector<FileMetaPtr> inputs;
      v->GetOverlappingInputs(0, &f->smallest, &f->largest, &inputs);
      if (AnyBeingCompacted(inputs)) return nullptr;
      return SetupOtherInputs(v, 0, output_level, std::move(inputs), score, false, false);
    }
    return nullptr;
  }

  // Order the candidates by how much they would rewrite in the next level per byte.
  const std::vector<FileMetaPtr>& files = v->files(level);
  const std::vector<FileMetaPtr>& next = v->files(output_level);
  std::vector<std::pair<double, size_t>> order;
  order.reserve(files.size());
  size_t j = 0;
  for (size_t i = 0; i < files.size(); i++) {
    const FileMetaData& f = *files[i];
    if (IsBeingCompacted(f)) continue;
    while (j < next.size() &&
           ucmp->Compare(next[j]->largest.user_key(), f.smallest.user_key()) < 0) {
      j++;
    }
    uint64_t overlap = 0;
    for (size_t k = j;
         k < next.size() && ucmp->Compare(next[k]->smallest.user_key(), f.largest.user_key()) <= 0;
         k++) {
      overlap += next[k]->file_size;
    }
    order.emplace_back(
        static_cast<double>(overlap) / static_cast<double>(std::max<uint64_t>(f.file_size, 1)), i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& candidate : order) {
    std::vector<FileMetaPtr> inputs{files[candidate.second]};
    v->ExpandInputsToCleanCut(level, &inputs);
    if (AnyBeingCompacted(inputs)) continue;
    std::unique_ptr<Compaction> c =
        SetupOtherInputs(v, level, output_level, std::move(inputs), score, false, true);
    if (c != nullptr) return c;
  }
  return nullptr;
}

std::unique_ptr<Compaction> CompactionPicker::SetupOtherInputs(
    Version* v, int level, int output_level, std::vector<FileMetaPtr> start_inputs, double score,
    bool is_manual, bool may_expand_start) {
  const Comparator* ucmp = icmp_->user_comparator();
  const uint64_t max_bytes = MaxCompactionBytes(*options_);
  std::string smallest, largest;
  RangeOf(ucmp, start_inputs, {}, &smallest, &largest);

  std::vector<FileMetaPtr> output_inputs;
  if (output_level != level) {
    Slice s(smallest), l(largest);
    v->GetOverlappingInputsUser(output_level, &s, &l, &output_inputs);
    v->ExpandInputsToCleanCut(output_level, &output_inputs);
    if (AnyBeingCompacted(output_inputs)) return nullptr;

    // Take more start-level files if they fit inside the output files already chosen.
    if (may_expand_start && level > 0 && !output_inputs.empty()) {
      std::string all_smallest, all_largest;
      RangeOf(ucmp, start_inputs, output_inputs, &all_smallest, &all_largest);
      Slice as(all_smallest), al(all_largest);
      std::vector<FileMetaPtr> expanded;
      v->GetOverlappingInputsUser(level, &as, &al, &expanded);
      v->ExpandInputsToCleanCut(level, &expanded);
      if (expanded.size() > start_inputs.size() && !AnyBeingCompacted(expanded) &&
          TotalBytes(expanded) + TotalBytes(output_inputs) < max_bytes) {
        std::string es, el;
        RangeOf(ucmp, expanded, {}, &es, &el);
        Slice ess(es), els(el);
        std::vector<FileMetaPtr> expanded_out;
        v->GetOverlappingInputsUser(output_level, &ess, &els, &expanded_out);
        v->ExpandInputsToCleanCut(output_level, &expanded_out);
        if (expanded_out.size() == output_inputs.size()) {
          start_inputs = std::move(expanded);
          smallest = std::move(es);
          largest = std::move(el);
        }
      }
    }
  }

  std::string all_smallest, all_largest;
  RangeOf(ucmp, start_inputs, output_inputs, &all_smallest, &all_largest);
  if (OutputRangeBusy(output_level, all_smallest, all_largest)) return nullptr;

  std::vector<FileMetaPtr> grandparents;
  if (output_level + 1 < v->NumLevels()) {
    Slice s(all_smallest), l(all_largest);
    v->GetOverlappingInputsUser(output_level + 1, &s, &l, &grandparents);
  }

  std::vector<CompactionInputFiles> inputs(1);
  inputs[0].level = level;
  inputs[0].files = std::move(start_inputs);
  if (output_level != level) {
    inputs.emplace_back();
    inputs[1].level = output_level;
    inputs[1].files = std::move(output_inputs);
  }
  auto c = std::make_unique<Compaction>(
      v, icmp_, level, output_level, std::move(inputs), std::move(grandparents),
      MaxFileSizeForLevel(*options_, output_level, ScoresOf(v).base_level), max_bytes, score,
      is_manual);
  // A manual compaction rewrites what it moves when a compaction filter may want a say, as
  // RocksDB's does.
  if (is_manual &&
      (options_->compaction_filter != nullptr || options_->compaction_filter_factory != nullptr)) {
    c->DisallowTrivialMove();
  }
  if (options_->allow_ingest_behind) c->SetIngestBehind();
  return c;
}

std::unique_ptr<Compaction> CompactionPicker::CompactRange(
    Version* v, int input_level, int output_level, const InternalKey* begin, const InternalKey* end,
    InternalKey** compaction_end, bool* manual_conflict) {
  *manual_conflict = false;
  if (input_level < 0 || input_level >= v->NumLevels() || output_level < input_level ||
      output_level >= v->NumLevels()) {
    if (compaction_end != nullptr) *compaction_end = nullptr;
    return nullptr;
  }
  std::vector<FileMetaPtr> inputs;
  v->GetOverlappingInputs(input_level, begin, end, &inputs);
  if (inputs.empty()) {
    if (compaction_end != nullptr) *compaction_end = nullptr;
    return nullptr;
  }
  bool covers_rest = true;
  if (input_level > 0) {
    // A chunk of about max_compaction_bytes; the last file always fits in.
    const uint64_t limit = MaxCompactionBytes(*options_);
    uint64_t total = 0;
    for (size_t i = 0; i + 1 < inputs.size(); i++) {
      total += inputs[i]->file_size;
      if (total >= limit) {
        inputs.resize(i + 1);
        covers_rest = false;
        break;
      }
    }
    v->ExpandInputsToCleanCut(input_level, &inputs);
    if (!covers_rest && end != nullptr) {
      // The clean cut may have reached the end of the range after all.
      covers_rest = icmp_->user_comparator()->Compare(inputs.back()->largest.user_key(),
                                                      end->user_key()) >= 0;
    }
  } else if (input_level == 0 && IsLevel0CompactionRunning()) {
    *manual_conflict = true;
    return nullptr;
  }
  if (AnyBeingCompacted(inputs)) {
    *manual_conflict = true;
    return nullptr;
  }
  InternalKey chunk_end = inputs.back()->largest;
  std::unique_ptr<Compaction> c = SetupOtherInputs(v, input_level, output_level, std::move(inputs),
                                                   /*score=*/1.0, /*is_manual=*/true, false);
  if (c == nullptr) {
    *manual_conflict = true;
    return nullptr;
  }
  if (compaction_end != nullptr) {
    if (covers_rest) {
      *compaction_end = nullptr;
    } else if (*compaction_end != nullptr) {
      **compaction_end = chunk_end;
    }
  }
  Register(c.get());
  return c;
}

}  // namespace shale
