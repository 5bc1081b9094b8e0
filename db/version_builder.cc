#include "db/version_builder.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <utility>

namespace shale {

VersionBuilder::VersionBuilder(const InternalKeyComparator* icmp, int num_levels,
                               const Version* base)
    : icmp_(icmp), num_levels_(num_levels), levels_(num_levels) {
  if (base == nullptr) return;
  for (int level = 0; level < base->NumLevels() && level < num_levels; level++) {
    for (const FileMetaPtr& f : base->files(level)) {
      levels_[level].emplace(f->number, f);
      level_of_[f->number] = level;
    }
  }
}

Status VersionBuilder::Apply(const VersionEdit& edit) {
  char buf[200];
  for (const auto& [level, number] : edit.deleted_files()) {
    Status s = CheckLevel(level);
    if (!s.ok()) return s;
    auto it = level_of_.find(number);
    if (it == level_of_.end() || it->second != level) {
      snprintf(buf, sizeof(buf), "deletes file %" PRIu64 ", which is not at level %d", number,
               level);
      return Status::Corruption(buf);
    }
    level_of_.erase(it);
    levels_[level].erase(number);
  }
  for (const auto& [level, meta] : edit.new_files()) {
    Status s = CheckLevel(level);
    if (!s.ok()) return s;
    auto it = level_of_.find(meta.number);
    if (it != level_of_.end()) {
      snprintf(buf, sizeof(buf), "adds file %" PRIu64 ", which is already at level %d", meta.number,
               it->second);
      return Status::Corruption(buf);
    }
    if (!meta.smallest.Valid() || !meta.largest.Valid() ||
        icmp_->Compare(meta.smallest.Encode(), meta.largest.Encode()) > 0) {
      snprintf(buf, sizeof(buf), "file %" PRIu64 " has a bad key range", meta.number);
      return Status::Corruption(buf);
    }
    if (meta.smallest_seqno > meta.largest_seqno) {
      snprintf(buf, sizeof(buf), "file %" PRIu64 " has a bad sequence number range", meta.number);
      return Status::Corruption(buf);
    }
    auto f = std::make_shared<FileMetaData>(meta);
    f->refs = 0;
    f->added_at_level0 = level == 0;
    // Only L0 files overlap; a file moved deeper gives its memory back.
    if (level != 0) f->key_filter.reset();
    levels_[level].emplace(f->number, std::move(f));
    level_of_[meta.number] = level;
  }
  return Status::OK();
}

Status VersionBuilder::SaveTo(Version* v) const {
  for (int level = 0; level < num_levels_; level++) {
    std::vector<FileMetaPtr>& files = v->files_[level];
    files.clear();
    files.reserve(levels_[level].size());
    for (const auto& entry : levels_[level]) files.push_back(entry.second);
    if (level == 0) {
      std::sort(files.begin(), files.end(), [](const FileMetaPtr& a, const FileMetaPtr& b) {
        if (a->largest_seqno != b->largest_seqno) return a->largest_seqno > b->largest_seqno;
        return a->number > b->number;
      });
      continue;
    }
    std::sort(files.begin(), files.end(), [this](const FileMetaPtr& a, const FileMetaPtr& b) {
      return icmp_->Compare(a->smallest.Encode(), b->smallest.Encode()) < 0;
    });
    for (size_t i = 1; i < files.size(); i++) {
      if (icmp_->Compare(files[i - 1]->largest.Encode(), files[i]->smallest.Encode()) >= 0) {
        char buf[200];
        snprintf(buf, sizeof(buf), "files %" PRIu64 " and %" PRIu64 " overlap at level %d",
                 files[i - 1]->number, files[i]->number, level);
        return Status::Corruption(buf);
      }
    }
  }
  return Status::OK();
}

Status VersionBuilder::CheckLevel(int level) const {
  if (level >= 0 && level < num_levels_) return Status::OK();
  char buf[100];
  snprintf(buf, sizeof(buf), "file at level %d, but options.num_levels is %d", level, num_levels_);
  return Status::InvalidArgument(buf);
}

}  // namespace shale
