#include "db/level_iterator.h"

#include <utility>

#include "db/table_cache.h"

namespace shale {

size_t FindFile(const InternalKeyComparator& icmp,
                const std::vector<std::shared_ptr<FileMetaData>>& files, const Slice& ikey) {
  size_t lo = 0;
  size_t hi = files.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (icmp.Compare(files[mid]->largest.Encode(), ikey) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

namespace {

class LevelIterator final : public InternalIterator {
 public:
  LevelIterator(TableCache* table_cache, const ReadOptions& read_options,
                const InternalKeyComparator* icmp,
                const std::vector<std::shared_ptr<FileMetaData>>* files)
      : table_cache_(table_cache), read_options_(read_options), icmp_(icmp), files_(*files) {}

  bool Valid() const override { return file_iter_ != nullptr && file_iter_->Valid(); }

  void SeekToFirst() override {
    if (!OpenFile(0)) return;
    file_iter_->SeekToFirst();
    SkipEmptyFilesForward();
  }

  void SeekToLast() override {
    if (files_.empty()) {
      Clear();
      return;
    }
    OpenFile(files_.size() - 1);
    file_iter_->SeekToLast();
    SkipEmptyFilesBackward();
  }

  void Seek(const Slice& target) override {
    if (!OpenFile(FindFile(*icmp_, files_, target))) return;
    file_iter_->Seek(target);
    SkipEmptyFilesForward();
  }

  void SeekForPrev(const Slice& target) override {
    // The last file whose smallest key is <= target holds the answer, if any file does.
    size_t lo = 0;
    size_t hi = files_.size();
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (icmp_->Compare(files_[mid]->smallest.Encode(), target) <= 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo == 0) {
      Clear();
      return;
    }
    OpenFile(lo - 1);
    file_iter_->SeekForPrev(target);
    SkipEmptyFilesBackward();
  }

  void Next() override {
    file_iter_->Next();
    SkipEmptyFilesForward();
  }

  void Prev() override {
    file_iter_->Prev();
    SkipEmptyFilesBackward();
  }

  Slice key() const override { return file_iter_->key(); }
  Slice value() const override { return file_iter_->value(); }
  Status status() const override { return file_iter_ != nullptr ? file_iter_->status() : Status(); }

 private:
  void Clear() {
    file_iter_.reset();
    index_ = files_.size();
  }

  // Points file_iter_ at file i (reusing it if already there and healthy). Returns false
  // (and clears) if there is no file i.
  bool OpenFile(size_t i) {
    if (i >= files_.size()) {
      Clear();
      return false;
    }
    if (i != index_ || file_iter_ == nullptr || !file_iter_->status().ok()) {
      file_iter_.reset(table_cache_->NewIterator(read_options_, *files_[i]));
      index_ = i;
    }
    return true;
  }

  // Moves to the following files while the current one is exhausted; stops on an error.
  void SkipEmptyFilesForward() {
    while (file_iter_ != nullptr && !file_iter_->Valid()) {
      if (!file_iter_->status().ok()) return;
      if (!OpenFile(index_ + 1)) return;
      file_iter_->SeekToFirst();
    }
  }

  void SkipEmptyFilesBackward() {
    while (file_iter_ != nullptr && !file_iter_->Valid()) {
      if (!file_iter_->status().ok()) return;
      if (index_ == 0) {
        Clear();
        return;
      }
      OpenFile(index_ - 1);
      file_iter_->SeekToLast();
    }
  }

  TableCache* const table_cache_;
  const ReadOptions read_options_;
  const InternalKeyComparator* const icmp_;
  const std::vector<std::shared_ptr<FileMetaData>>& files_;
  size_t index_ = static_cast<size_t>(-1);  // the file file_iter_ reads, if any
  std::unique_ptr<InternalIterator> file_iter_;
};

}  // namespace

InternalIterator* NewLevelIterator(TableCache* table_cache, const ReadOptions& read_options,
                                   const InternalKeyComparator* icmp,
                                   const std::vector<std::shared_ptr<FileMetaData>>* files) {
  return new LevelIterator(table_cache, read_options, icmp, files);
}

}  // namespace shale
