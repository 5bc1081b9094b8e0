#include "db/compaction.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <utility>

#include "db/compaction_picker.h"

namespace shale {

uint64_t MaxFileSizeForLevel(const Options& options, int level, int base_level) {
  const uint64_t base = std::max<uint64_t>(options.target_file_size_base, 1);
  const int steps = options.level_compaction_dynamic_level_bytes ? level - base_level : level - 1;
  uint64_t size = base;
  const uint64_t mult = static_cast<uint64_t>(std::max(options.target_file_size_multiplier, 1));
  for (int i = 0; i < steps; i++) {
    if (size > UINT64_MAX / mult) return UINT64_MAX;
    size *= mult;
  }
  return size;
}

uint64_t MaxCompactionBytes(const Options& options) {
  if (options.max_compaction_bytes > 0) return options.max_compaction_bytes;
  const uint64_t base = std::max<uint64_t>(options.target_file_size_base, 1);
  return base > UINT64_MAX / 25 ? UINT64_MAX : base * 25;
}

Compaction::Compaction(Version* input_version, const InternalKeyComparator* icmp, int start_level,
                       int output_level, std::vector<CompactionInputFiles> inputs,
                       std::vector<FileMetaPtr> grandparents, uint64_t max_output_file_size,
                       uint64_t max_compaction_bytes, double score, bool is_manual)
    : input_version_(input_version),
      icmp_(icmp),
      start_level_(start_level),
      output_level_(output_level),
      inputs_(std::move(inputs)),
      grandparents_(std::move(grandparents)),
      max_output_file_size_(max_output_file_size),
      max_compaction_bytes_(max_compaction_bytes),
      score_(score),
      is_manual_(is_manual) {
  input_version_->Ref();
  // Drop empty input levels except the start level, so inputs(0) is always the start.
  std::vector<CompactionInputFiles> kept;
  for (size_t i = 0; i < inputs_.size(); i++) {
    if (i == 0 || !inputs_[i].files.empty()) kept.push_back(std::move(inputs_[i]));
  }
  inputs_ = std::move(kept);

  const Comparator* ucmp = icmp_->user_comparator();
  bool first = true;
  for (const CompactionInputFiles& in : inputs_) {
    for (const FileMetaPtr& f : in.files) {
      total_input_bytes_ += f->file_size;
      const Slice s = f->smallest.user_key();
      const Slice l = f->largest.user_key();
      if (first || ucmp->Compare(s, smallest_user_key_) < 0) smallest_user_key_ = s.ToString();
      if (first || ucmp->Compare(l, largest_user_key_) > 0) largest_user_key_ = l.ToString();
      first = false;
    }
  }
  bottommost_level_ = !first && input_version_->RangeNotInLevelsBelow(
                                    output_level_, smallest_user_key_, largest_user_key_);
}

Compaction::~Compaction() {
  ReleaseCompactionFiles();
  input_version_->Unref();
}

size_t Compaction::num_input_files() const {
  size_t n = 0;
  for (const CompactionInputFiles& in : inputs_) n += in.files.size();
  return n;
}

const std::vector<FileMetaPtr>& Compaction::output_level_inputs() const {
  static const std::vector<FileMetaPtr> kEmpty;
  for (const CompactionInputFiles& in : inputs_) {
    if (in.level == output_level_ && output_level_ != start_level_) return in.files;
  }
  return kEmpty;
}

bool Compaction::IsTrivialMove() const {
  if (!trivial_move_allowed_ || start_level_ == output_level_) return false;
  if (num_input_files() != 1 || inputs_[0].files.size() != 1) return false;
  if (!output_level_inputs().empty()) return false;
  // The single input must not overlap the output level at all (the picker found no
  // overlapping file, but a manual pick may differ).
  const FileMetaData& f = *inputs_[0].files[0];
  const Slice s = f.smallest.user_key();
  const Slice l = f.largest.user_key();
  if (input_version_->OverlapInLevel(output_level_, &s, &l)) return false;
  uint64_t overlap = 0;
  for (const FileMetaPtr& g : grandparents_) overlap += g->file_size;
  return overlap <= max_grandparent_overlap_bytes();
}

void Compaction::AddTrivialMoveEdit(VersionEdit* edit) const {
  for (const CompactionInputFiles& in : inputs_) {
    for (const FileMetaPtr& f : in.files) {
      edit->DeleteFile(in.level, f->number);
      edit->AddFile(output_level_, *f);
    }
  }
}

bool Compaction::KeyNotExistsBeyondOutputLevel(const Slice& user_key) const {
  if (ingest_behind_) return false;
  if (bottommost_level_) return true;
  return input_version_->KeyNotInLevelsBelow(output_level_, user_key);
}

void Compaction::AddInputDeletions(VersionEdit* edit) const {
  for (const CompactionInputFiles& in : inputs_) {
    for (const FileMetaPtr& f : in.files) edit->DeleteFile(in.level, f->number);
  }
}

void Compaction::ReleaseCompactionFiles() {
  if (released_) return;
  released_ = true;
  if (picker_ != nullptr) {
    picker_->UnregisterCompaction(this);
    picker_ = nullptr;
  }
}

std::string Compaction::InputsSummary() const {
  std::string r;
  char buf[64];
  for (size_t i = 0; i < inputs_.size(); i++) {
    snprintf(buf, sizeof(buf), "%s%zu@%d", i > 0 ? " + " : "", inputs_[i].files.size(),
             inputs_[i].level);
    r += buf;
  }
  snprintf(buf, sizeof(buf), " files, %" PRIu64 " bytes:", total_input_bytes_);
  r += buf;
  for (const CompactionInputFiles& in : inputs_) {
    r += " [";
    for (size_t j = 0; j < in.files.size(); j++) {
      if (j > 0) r += ' ';
      r += std::to_string(in.files[j]->number);
    }
    r += ']';
  }
  return r;
}

}  // namespace shale
