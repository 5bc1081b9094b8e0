#include "db/version_set.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <unordered_map>
#include <utility>

#include "db/filename.h"
#include "db/level_iterator.h"
#include "db/log_reader.h"
#include "db/table_cache.h"
#include "memtable/merge_context.h"

namespace shale {

// ---- VersionBuilder: the files of a Version after a series of edits.

class VersionBuilder {
 public:
  VersionBuilder(const InternalKeyComparator* icmp, int num_levels, const Version* base)
      : icmp_(icmp), num_levels_(num_levels), levels_(num_levels) {
    if (base == nullptr) return;
    for (int level = 0; level < base->NumLevels() && level < num_levels; level++) {
      for (const FileMetaPtr& f : base->files(level)) {
        levels_[level].emplace(f->number, f);
        level_of_[f->number] = level;
      }
    }
  }

  // Deletions first, then additions, so an edit may move a file between levels.
  Status Apply(const VersionEdit& edit) {
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
        snprintf(buf, sizeof(buf), "adds file %" PRIu64 ", which is already at level %d",
                 meta.number, it->second);
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
      f->being_compacted = false;
      f->added_at_level0 = level == 0;
      levels_[level].emplace(f->number, std::move(f));
      level_of_[meta.number] = level;
    }
    return Status::OK();
  }

  // Fills v's levels: L0 newest first, deeper levels by key, checked not to overlap.
  Status SaveTo(Version* v) const {
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

 private:
  Status CheckLevel(int level) const {
    if (level >= 0 && level < num_levels_) return Status::OK();
    char buf[100];
    snprintf(buf, sizeof(buf), "file at level %d, but options.num_levels is %d", level,
             num_levels_);
    return Status::InvalidArgument(buf);
  }

  const InternalKeyComparator* const icmp_;
  const int num_levels_;
  std::vector<std::map<uint64_t, FileMetaPtr>> levels_;  // per level: number -> file
  std::unordered_map<uint64_t, int> level_of_;           // number -> level
};

// ---- Version

namespace {

// Collects the result of a point lookup in one file; see Version::Get.
struct Saver {
  enum State { kNotFound, kFound, kDeleted, kMerge, kMergeStop, kCorrupt };
  const Comparator* ucmp;
  Slice user_key;
  SequenceNumber snapshot;
  ReadCallback* callback;
  std::string* value;
  MergeContext* merge_context;  // null: an operand ends the search with kMerge
  PinnableSlice* pinned = nullptr;  // where a Put's bytes are pinned instead of copied
  State state = kNotFound;
  SequenceNumber seq = 0;
};

void PushFound(MergeContext* mc, const Slice& v, Cleanable* value_pinner) {
  if (value_pinner != nullptr) {
    mc->PushOperandPinned(v, value_pinner);
  } else {
    mc->PushOperandCopy(v);
  }
}

// Both TableReader handlers: true to see the next entry, false when done. Operands and a
// base value wanted as an operand go into the merge context: pinned when value_pinner is
// given, else copied.
bool SaveValue(void* arg, const Slice& ikey, const Slice& v, Cleanable* value_pinner) {
  Saver* saver = static_cast<Saver*>(arg);
  ParsedInternalKey parsed;
  if (!ParseInternalKey(ikey, &parsed).ok()) {
    saver->state = Saver::kCorrupt;
    return false;
  }
  if (saver->ucmp->Compare(parsed.user_key, saver->user_key) != 0) return false;
  if (parsed.sequence > saver->snapshot) return true;
  if (saver->callback != nullptr && !saver->callback->IsVisible(parsed.sequence)) return true;
  MergeContext* const mc = saver->merge_context;
  switch (parsed.type) {
    case kTypeValue:
      saver->state = Saver::kFound;
      if (mc != nullptr && mc->base_as_operand) {
        PushFound(mc, v, value_pinner);
      } else if (saver->pinned != nullptr && value_pinner != nullptr) {
        saver->pinned->PinSlice(v, value_pinner);
      } else {
        saver->value->assign(v.data(), v.size());
      }
      break;
    case kTypeDeletion:
    case kTypeSingleDeletion: saver->state = Saver::kDeleted; break;
    case kTypeMerge:
      if (mc == nullptr) {
        saver->state = Saver::kMerge;
        break;
      }
      PushFound(mc, v, value_pinner);
      saver->seq = parsed.sequence;
      if (!mc->ShouldStop()) return true;  // older entries may follow, here or below
      saver->state = Saver::kMergeStop;
      break;
    default: return true;  // not a point entry (range deletions are kept apart)
  }
  saver->seq = parsed.sequence;
  return false;
}

bool SaveValueCopying(void* arg, const Slice& ikey, const Slice& v) {
  return SaveValue(arg, ikey, v, nullptr);
}

void UnrefVersion(void* arg, void* /*unused*/) { static_cast<Version*>(arg)->Unref(); }

}  // namespace

Version::Version(VersionSet* vset, TableCache* table_cache, const InternalKeyComparator* icmp,
                 int num_levels)
    : vset_(vset),
      table_cache_(table_cache),
      icmp_(icmp),
      files_(num_levels),
      version_number_(vset != nullptr ? vset->next_version_number_.fetch_add(1) : 0),
      level_max_bytes_(num_levels, UINT64_MAX),
      level_score_(num_levels, 0.0) {
  for (int level = 0; level + 1 < num_levels; level++) sorted_scores_.emplace_back(0.0, level);
  if (vset_ != nullptr) {
    MutexLock l(&vset_->live_mu_);
    vset_->live_.insert(this);
  }
}

Version::~Version() {
  if (vset_ != nullptr) {
    MutexLock l(&vset_->live_mu_);
    vset_->live_.erase(this);
  }
}

void Version::Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }

void Version::Unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

uint64_t Version::NumLevelBytes(int level) const {
  uint64_t sum = 0;
  for (const FileMetaPtr& f : files_[level]) sum += f->file_size;
  return sum;
}

bool Version::SearchFile(const ReadOptions& read_options, const FileMetaData& f,
                         const LookupKey& key, std::string* value, Status* s, SequenceNumber* seq,
                         ReadCallback* callback, MergeContext* merge_context,
                         PinnableSlice* pinned) {
  Saver saver;
  saver.ucmp = icmp_->user_comparator();
  saver.user_key = key.user_key();
  saver.snapshot = ExtractSequence(key.internal_key());
  saver.callback = callback;
  saver.value = value;
  saver.merge_context = merge_context;
  saver.pinned = merge_context == nullptr ? pinned : nullptr;
  // Pinning costs a block reference per entry seen: GetMergeOperands asks for it, and a Get
  // whose value may be pinned.
  Status st = (merge_context != nullptr && merge_context->want_pins) || saver.pinned != nullptr
                  ? table_cache_->Get(read_options, f, key.internal_key(), &saver,
                                      static_cast<TableReader::PinningGetHandler>(&SaveValue))
                  : table_cache_->Get(read_options, f, key.internal_key(), &saver,
                                      static_cast<TableReader::GetHandler>(&SaveValueCopying));
  if (!st.ok()) {
    *s = std::move(st);
    return true;
  }
  switch (saver.state) {
    case Saver::kNotFound: return false;
    case Saver::kFound: *s = Status::OK(); break;
    case Saver::kDeleted: *s = Status::NotFound(); break;
    case Saver::kMerge: *s = Status::NotSupported("no merge operator configured"); break;
    case Saver::kMergeStop: *s = Status::MergeInProgress(); break;
    case Saver::kCorrupt: {
      char buf[100];
      snprintf(buf, sizeof(buf), "corrupted internal key in table file %06" PRIu64, f.number);
      *s = Status::Corruption(buf);
      return true;
    }
  }
  *seq = saver.seq;
  return true;
}

bool Version::Get(const ReadOptions& read_options, const LookupKey& key, std::string* value,
                  Status* s, SequenceNumber* seq, ReadCallback* callback,
                  MergeContext* merge_context, PinnableSlice* pinned, int* hit_level) {
  const Slice ikey = key.internal_key();
  const Slice ukey = key.user_key();
  const SequenceNumber snapshot = ExtractSequence(ikey);
  const Comparator* ucmp = icmp_->user_comparator();

  // L0 files may overlap: every one whose range holds the key, newest first.
  for (const FileMetaPtr& f : files_[0]) {
    if (f->smallest_seqno > snapshot) continue;  // everything in it is too new
    if (ucmp->Compare(ukey, f->smallest.user_key()) < 0 ||
        ucmp->Compare(ukey, f->largest.user_key()) > 0) {
      continue;
    }
    if (SearchFile(read_options, *f, key, value, s, seq, callback, merge_context, pinned)) {
      if (hit_level != nullptr) *hit_level = 0;
      return true;
    }
  }
  // Deeper levels: at most one file each can hold the key.
  for (size_t level = 1; level < files_.size(); level++) {
    const std::vector<FileMetaPtr>& files = files_[level];
    const size_t i = FindFile(*icmp_, files, ikey);
    if (i == files.size()) continue;
    const FileMetaData& f = *files[i];
    if (ucmp->Compare(ukey, f.smallest.user_key()) < 0) continue;
    if (f.smallest_seqno > snapshot) continue;
    if (SearchFile(read_options, f, key, value, s, seq, callback, merge_context, pinned)) {
      if (hit_level != nullptr) *hit_level = static_cast<int>(level);
      return true;
    }
  }
  return false;
}

void Version::AddIterators(const ReadOptions& read_options, std::vector<InternalIterator*>* iters) {
  for (const FileMetaPtr& f : files_[0]) {
    InternalIterator* iter = table_cache_->NewIterator(read_options, *f);
    Ref();
    iter->RegisterCleanup(&UnrefVersion, this, nullptr);
    iters->push_back(iter);
  }
  for (size_t level = 1; level < files_.size(); level++) {
    if (files_[level].empty()) continue;
    InternalIterator* iter = NewLevelIterator(table_cache_, read_options, icmp_, &files_[level]);
    Ref();
    iter->RegisterCleanup(&UnrefVersion, this, nullptr);
    iters->push_back(iter);
  }
}

std::string Version::DebugString(bool hex) const {
  std::string r;
  char buf[100];
  for (size_t level = 0; level < files_.size(); level++) {
    snprintf(buf, sizeof(buf), "--- level %zu --- version# %" PRIu64 " ---\n", level,
             version_number_);
    r += buf;
    for (const FileMetaPtr& f : files_[level]) {
      snprintf(buf, sizeof(buf), " %" PRIu64 ":%" PRIu64 "[%" PRIu64 " .. %" PRIu64 "][", f->number,
               f->file_size, f->smallest_seqno, f->largest_seqno);
      r += buf;
      r += f->smallest.DebugString(hex) + " .. " + f->largest.DebugString(hex) + "]\n";
    }
  }
  return r;
}

std::string Version::LevelSummary() const {
  std::string r = "files[";
  for (size_t level = 0; level < files_.size(); level++) {
    if (level > 0) r += ' ';
    r += std::to_string(files_[level].size());
  }
  r += "] base level " + std::to_string(base_level_);
  return r;
}

// ---- Version: compaction support

namespace {

// a * b, saturating at UINT64_MAX.
uint64_t MultiplySaturating(uint64_t a, double b) {
  const double r = static_cast<double>(a) * b;
  if (r >= static_cast<double>(UINT64_MAX)) return UINT64_MAX;
  return static_cast<uint64_t>(r);
}

}  // namespace

void Version::ComputeCompactionScore(const Options& options) {
  const int num_levels = NumLevels();
  const double multiplier = std::max(options.max_bytes_for_level_multiplier, 1.0);
  const uint64_t base_bytes = std::max<uint64_t>(options.max_bytes_for_level_base, 1);
  std::fill(level_max_bytes_.begin(), level_max_bytes_.end(), UINT64_MAX);
  if (num_levels > 0) level_max_bytes_[0] = base_bytes;

  // Level targets.
  if (!options.level_compaction_dynamic_level_bytes) {
    base_level_ = 1;
    uint64_t target = base_bytes;
    for (int level = 1; level < num_levels; level++) {
      if (level > 1) target = MultiplySaturating(target, multiplier);
      level_max_bytes_[level] = target;
    }
  } else {
    // Size the levels from the biggest one upward so that it holds most of the data, and
    // let L0 skip the levels that would be too small to be worth a compaction.
    uint64_t max_level_bytes = 0;
    int first_non_empty = -1;
    for (int level = 1; level < num_levels; level++) {
      const uint64_t bytes = NumLevelBytes(level);
      if (bytes > 0 && first_non_empty == -1) first_non_empty = level;
      max_level_bytes = std::max(max_level_bytes, bytes);
    }
    if (max_level_bytes == 0) {
      // Nothing below L0: it compacts straight into the last level.
      base_level_ = std::max(num_levels - 1, 1);
      if (num_levels > 1) level_max_bytes_[base_level_] = base_bytes;
    } else {
      const double base_min = static_cast<double>(base_bytes) / multiplier;
      double size = static_cast<double>(max_level_bytes);
      for (int level = num_levels - 2; level >= first_non_empty; level--) size /= multiplier;
      double base_size;
      if (size <= base_min) {
        // Even the first non-empty level would get a target below the minimum: give it
        // the minimum instead.
        base_level_ = first_non_empty;
        base_size = base_min + 1;
      } else {
        base_level_ = first_non_empty;
        while (base_level_ > 1 && size > static_cast<double>(base_bytes)) {
          base_level_--;
          size /= multiplier;
        }
        base_size = std::min(size, static_cast<double>(base_bytes));
        base_size = std::max(base_size, 1.0);
      }
      double target = base_size;
      for (int level = base_level_; level < num_levels; level++) {
        if (level > base_level_) target *= multiplier;
        // No level below the base level gets a target under max_bytes_for_level_base, so
        // the tree never becomes narrower than L0 in the middle.
        const double t = std::max(target, static_cast<double>(base_bytes));
        level_max_bytes_[level] =
            t >= static_cast<double>(UINT64_MAX) ? UINT64_MAX : static_cast<uint64_t>(t);
      }
    }
  }

  // Scores.
  const int trigger = std::max(options.level0_file_num_compaction_trigger, 1);
  for (int level = 0; level < num_levels; level++) {
    double score = 0;
    if (level == num_levels - 1 && level > 0) {
      score = 0;  // the last level has nowhere to go
    } else if (level == 0) {
      int count = 0;
      uint64_t bytes = 0;
      for (const FileMetaPtr& f : files_[0]) {
        if (f->being_compacted) continue;
        count++;
        bytes += f->file_size;
      }
      score = static_cast<double>(count) / trigger;
      if (num_levels > 1) {
        const uint64_t l0_target = options.level_compaction_dynamic_level_bytes
                                       ? std::max(level_max_bytes_[base_level_], base_bytes)
                                       : base_bytes;
        score = std::max(score, static_cast<double>(bytes) / static_cast<double>(l0_target));
      }
    } else {
      uint64_t bytes = 0;
      for (const FileMetaPtr& f : files_[level]) {
        if (!f->being_compacted) bytes += f->file_size;
      }
      if (level_max_bytes_[level] != UINT64_MAX) {
        score = static_cast<double>(bytes) / static_cast<double>(level_max_bytes_[level]);
      }
    }
    level_score_[level] = score;
  }
  sorted_scores_.clear();
  for (int level = 0; level + 1 < num_levels; level++) {
    sorted_scores_.emplace_back(level_score_[level], level);
  }
  std::stable_sort(sorted_scores_.begin(), sorted_scores_.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });

  // Pending bytes: what each level holds beyond its target, carried down level by level,
  // times the fan-out it meets below (the ratio of the next level's size to this one's).
  uint64_t estimated = 0;
  uint64_t carry = 0;
  if (num_levels > 1) {
    const uint64_t l0_bytes = NumLevelBytes(0);
    if (NumFiles(0) >= trigger || l0_bytes >= base_bytes) {
      carry = l0_bytes;
      estimated = l0_bytes;
    }
  }
  uint64_t next_level_bytes = 0;
  for (int level = base_level_; level < num_levels - 1; level++) {
    uint64_t level_bytes = next_level_bytes > 0 ? next_level_bytes : NumLevelBytes(level);
    next_level_bytes = 0;
    level_bytes += carry;
    carry = 0;
    const uint64_t target = level_max_bytes_[level];
    if (level_bytes > target) {
      carry = level_bytes - target;
      next_level_bytes = NumLevelBytes(level + 1);
      if (next_level_bytes > 0) {
        const double fan_out =
            static_cast<double>(next_level_bytes) / static_cast<double>(level_bytes) + 1;
        estimated += MultiplySaturating(carry, fan_out);
      }
    }
  }
  estimated_compaction_needed_bytes_ = estimated;
}

void Version::GetOverlappingInputsUser(int level, const Slice* begin, const Slice* end,
                                       std::vector<FileMetaPtr>* inputs) const {
  inputs->clear();
  if (level < 0 || level >= NumLevels()) return;
  const Comparator* ucmp = icmp_->user_comparator();
  const std::vector<FileMetaPtr>& files = files_[level];
  if (level == 0) {
    std::string lo, hi;
    bool has_lo = begin != nullptr, has_hi = end != nullptr;
    if (has_lo) lo = begin->ToString();
    if (has_hi) hi = end->ToString();
    for (size_t i = 0; i < files.size();) {
      const FileMetaPtr& f = files[i++];
      const Slice fs = f->smallest.user_key();
      const Slice fl = f->largest.user_key();
      if (has_lo && ucmp->Compare(fl, lo) < 0) continue;
      if (has_hi && ucmp->Compare(fs, hi) > 0) continue;
      inputs->push_back(f);
      // A file reaching past the range widens it: start over so that earlier files
      // overlapping the wider range are picked up too.
      bool widened = false;
      if (has_lo && ucmp->Compare(fs, lo) < 0) {
        lo = fs.ToString();
        widened = true;
      }
      if (has_hi && ucmp->Compare(fl, hi) > 0) {
        hi = fl.ToString();
        widened = true;
      }
      if (widened) {
        inputs->clear();
        i = 0;
      }
    }
    return;
  }
  // A sorted run: binary search for the first file ending at or after begin.
  size_t lo = 0, hi = files.size();
  if (begin != nullptr) {
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (ucmp->Compare(files[mid]->largest.user_key(), *begin) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
  }
  for (size_t i = lo; i < files.size(); i++) {
    if (end != nullptr && ucmp->Compare(files[i]->smallest.user_key(), *end) > 0) break;
    inputs->push_back(files[i]);
  }
}

void Version::GetOverlappingInputs(int level, const InternalKey* begin, const InternalKey* end,
                                   std::vector<FileMetaPtr>* inputs) const {
  Slice b, e;
  if (begin != nullptr) b = begin->user_key();
  if (end != nullptr) e = end->user_key();
  GetOverlappingInputsUser(level, begin != nullptr ? &b : nullptr, end != nullptr ? &e : nullptr,
                           inputs);
}

bool Version::OverlapInLevel(int level, const Slice* smallest_user_key,
                             const Slice* largest_user_key) const {
  if (level < 0 || level >= NumLevels()) return false;
  const Comparator* ucmp = icmp_->user_comparator();
  const std::vector<FileMetaPtr>& files = files_[level];
  if (level == 0) {
    for (const FileMetaPtr& f : files) {
      if (smallest_user_key != nullptr &&
          ucmp->Compare(f->largest.user_key(), *smallest_user_key) < 0) {
        continue;
      }
      if (largest_user_key != nullptr &&
          ucmp->Compare(f->smallest.user_key(), *largest_user_key) > 0) {
        continue;
      }
      return true;
    }
    return false;
  }
  size_t lo = 0, hi = files.size();
  if (smallest_user_key != nullptr) {
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (ucmp->Compare(files[mid]->largest.user_key(), *smallest_user_key) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
  }
  if (lo == files.size()) return false;
  return largest_user_key == nullptr ||
         ucmp->Compare(files[lo]->smallest.user_key(), *largest_user_key) <= 0;
}

bool Version::KeyNotInLevelsBelow(int level, const Slice& user_key) const {
  for (int l = std::max(level + 1, 1); l < NumLevels(); l++) {
    if (OverlapInLevel(l, &user_key, &user_key)) return false;
  }
  return true;
}

bool Version::RangeNotInLevelsBelow(int level, const Slice& smallest_user_key,
                                    const Slice& largest_user_key) const {
  for (int l = std::max(level + 1, 1); l < NumLevels(); l++) {
    if (OverlapInLevel(l, &smallest_user_key, &largest_user_key)) return false;
  }
  return true;
}

void Version::ExpandInputsToCleanCut(int level, std::vector<FileMetaPtr>* inputs) const {
  if (level <= 0 || level >= NumLevels() || inputs->empty()) return;
  const Comparator* ucmp = icmp_->user_comparator();
  const std::vector<FileMetaPtr>& files = files_[level];
  size_t first = files.size(), last = 0;
  for (size_t i = 0; i < files.size(); i++) {
    if (files[i] == inputs->front()) first = i;
    if (files[i] == inputs->back()) last = i;
  }
  if (first == files.size() || last < first) return;  // not files of this Version's level
  while (first > 0 && ucmp->Compare(files[first - 1]->largest.user_key(),
                                    files[first]->smallest.user_key()) == 0) {
    first--;
  }
  while (last + 1 < files.size() && ucmp->Compare(files[last]->largest.user_key(),
                                                  files[last + 1]->smallest.user_key()) == 0) {
    last++;
  }
  inputs->assign(files.begin() + static_cast<ptrdiff_t>(first),
                 files.begin() + static_cast<ptrdiff_t>(last) + 1);
}

// ---- VersionSet

struct VersionSet::ManifestWriter {
  explicit ManifestWriter(Mutex* mu) : cv(mu) {}
  CondVar cv;
};

VersionSet::VersionSet(const std::string& dbname, const Options* options, TableCache* table_cache,
                       const InternalKeyComparator* icmp)
    : env_(options->env),
      dbname_(dbname),
      options_(options),
      table_cache_(table_cache),
      icmp_(icmp),
      num_levels_(std::max(options->num_levels, 1)) {
  AppendVersion(new Version(this, table_cache_, icmp_, num_levels_));
}

VersionSet::~VersionSet() {
  current_->Unref();
  if (descriptor_log_ != nullptr) descriptor_log_->Close().PermitUncheckedError();
  // Versions still referenced elsewhere outlive us: detach them.
  MutexLock l(&live_mu_);
  for (Version* v : live_) v->vset_ = nullptr;
  live_.clear();
}

void VersionSet::AppendVersion(Version* v) {
  v->ComputeCompactionScore(*options_);
  v->Ref();
  if (current_ != nullptr) current_->Unref();
  current_ = v;
}

void VersionSet::MarkFileNumberUsed(uint64_t number) {
  uint64_t cur = next_file_number_.load();
  while (cur <= number && !next_file_number_.compare_exchange_weak(cur, number + 1)) {
  }
}

void VersionSet::AddLiveFiles(std::set<uint64_t>* live) {
  MutexLock l(&live_mu_);
  for (const Version* v : live_) {
    for (const auto& level : v->files_) {
      for (const FileMetaPtr& f : level) live->insert(f->number);
    }
  }
}

Status VersionSet::BuildVersion(const VersionEdit& edit, Version** result) {
  VersionBuilder builder(icmp_, num_levels_, current_);
  Status s = builder.Apply(edit);
  if (!s.ok()) return s;
  auto* v = new Version(this, table_cache_, icmp_, num_levels_);
  s = builder.SaveTo(v);
  if (!s.ok()) {
    delete v;
    return s;
  }
  *result = v;
  return s;
}

void VersionSet::EncodeSnapshot(const Version* v, std::string* dst) const {
  VersionEdit edit;
  edit.SetComparatorName(icmp_->user_comparator()->Name());
  for (int level = 0; level < v->NumLevels(); level++) {
    for (const FileMetaPtr& f : v->files(level)) edit.AddFile(level, *f);
  }
  edit.EncodeTo(dst);
}

Status VersionSet::WriteManifest(const std::string& snapshot, const std::string& record,
                                 uint64_t new_manifest) {
  Status s;
  if (new_manifest == 0) {
    s = descriptor_log_->AddRecord(record);
    if (s.ok()) s = descriptor_log_->Sync(options_->use_fsync);
    if (!s.ok()) {
      // The MANIFEST's tail is unknown now: the next edit starts a new one.
      descriptor_log_->Close().PermitUncheckedError();
      descriptor_log_.reset();
    }
    return s;
  }

  if (db_dir_ == nullptr) {
    s = env_->NewDirectory(dbname_, &db_dir_);
    if (!s.ok()) return s;
  }
  const std::string fname = DescriptorFileName(dbname_, new_manifest);
  std::unique_ptr<WritableFile> file;
  s = env_->NewWritableFile(fname, &file, EnvOptions());
  if (!s.ok()) return s;
  auto log = std::make_unique<log::Writer>(std::move(file), new_manifest);
  s = log->AddRecord(snapshot);
  if (s.ok()) s = log->AddRecord(record);
  if (s.ok()) s = log->Sync(options_->use_fsync);
  // SetCurrentFile fsyncs the directory, which also makes the new MANIFEST's entry durable.
  if (s.ok()) s = SetCurrentFile(env_, dbname_, new_manifest, db_dir_.get());
  if (s.ok()) {
    descriptor_log_ = std::move(log);
  } else {
    log->Close().PermitUncheckedError();
    if (!CurrentMayName(env_, dbname_, new_manifest)) {
      env_->DeleteFile(fname).PermitUncheckedError();
    }
  }
  return s;
}

Status VersionSet::LogAndApply(VersionEdit* edit, Mutex* mu) {
  mu->AssertHeld();
  ManifestWriter w(mu);
  writers_.push_back(&w);
  while (writers_.front() != &w) w.cv.Wait();

  Status s;
  uint64_t new_manifest = 0;
  Version* v = nullptr;
  if (edit->column_family() != 0) {
    s = Status::InvalidArgument("no column family with id " +
                                std::to_string(edit->column_family()));
  } else {
    if (!edit->has_log_number()) edit->SetLogNumber(log_number_);
    if (!edit->has_prev_log_number()) edit->SetPrevLogNumber(prev_log_number_);
    if (!edit->has_last_sequence()) edit->SetLastSequence(LastSequence());
    s = BuildVersion(*edit, &v);
  }
  if (s.ok()) {
    std::string snapshot;
    if (descriptor_log_ == nullptr) {
      new_manifest = NewFileNumber();
      EncodeSnapshot(current_, &snapshot);
    }
    edit->SetNextFile(next_file_number_.load());
    std::string record;
    edit->EncodeTo(&record);

    mu->Unlock();  // MANIFEST I/O without the DB mutex; we are the only writer
    s = WriteManifest(snapshot, record, new_manifest);
    mu->Lock();

    if (s.ok()) {
      AppendVersion(v);
      log_number_ = edit->log_number();
      prev_log_number_ = edit->prev_log_number();
      if (edit->last_sequence() > LastSequence()) SetLastSequence(edit->last_sequence());
      if (new_manifest != 0) manifest_file_number_.store(new_manifest);
    } else {
      delete v;
    }
  }

  writers_.pop_front();
  if (!writers_.empty()) writers_.front()->cv.Signal();
  return s;
}

namespace {

struct ManifestReporter : public log::Reporter {
  Status status;
  void Corruption(size_t /*bytes*/, const Status& s) override {
    if (status.ok()) status = s;
  }
};

// Records with a good checksum anywhere in the log file (damage skipped); 0 if unreadable.
size_t CountIntactRecords(Env* env, const std::string& fname, uint64_t number) {
  std::unique_ptr<SequentialFile> file;
  if (!env->NewSequentialFile(fname, &file, EnvOptions()).ok()) return 0;
  ManifestReporter ignore;
  log::Reader reader(std::move(file), &ignore, /*checksum=*/true, number, fname);
  Slice record;
  std::string scratch;
  size_t n = 0;
  while (reader.ReadRecord(&record, &scratch, WALRecoveryMode::kSkipAnyCorruptedRecords)) n++;
  return n;
}

Status AtOffset(const std::string& fname, uint64_t offset, const Status& s) {
  char buf[80];
  snprintf(buf, sizeof(buf), " at offset %" PRIu64 ": ", offset);
  const char* state = s.getState();
  const std::string msg = fname + buf + (state != nullptr ? state : "");
  if (s.IsInvalidArgument()) return Status::InvalidArgument(msg);
  return Status::Corruption(msg);
}

}  // namespace

Status VersionSet::Recover() {
  const std::string current_name = CurrentFileName(dbname_);
  Status s = env_->FileExists(current_name);
  if (s.IsNotFound()) return Status::NotFound(current_name, "does not exist");
  if (!s.ok()) return s;
  std::string current;
  s = ReadFileToString(env_, current_name, &current);
  if (!s.ok()) return s;
  if (current.empty() || current.back() != '\n') {
    return Status::Corruption(current_name, "CURRENT file does not end with a newline");
  }
  current.pop_back();
  uint64_t manifest_number;
  FileType type;
  if (!ParseFileName(current, &manifest_number, &type) || type != kDescriptorFile) {
    return Status::Corruption(current_name, "CURRENT does not name a MANIFEST file");
  }
  const std::string manifest = dbname_ + "/" + current;
  std::unique_ptr<SequentialFile> file;
  s = env_->NewSequentialFile(manifest, &file, EnvOptions());
  if (!s.ok()) {
    if (env_->FileExists(manifest).IsNotFound()) {
      return Status::Corruption(current_name, "names a missing MANIFEST: " + manifest);
    }
    return s;
  }

  const std::string ucmp_name = icmp_->user_comparator()->Name();
  VersionBuilder builder(icmp_, num_levels_, nullptr);
  bool have_log_number = false, have_prev_log_number = false;
  bool have_next_file = false, have_last_sequence = false;
  uint64_t log_number = 0, prev_log_number = 0, next_file = 0;
  SequenceNumber last_sequence = 0;
  uint64_t max_file_number = 0;
  Status tail_damage;  // damage dropped as an unsynced tail, reported if nothing usable came before
  {
    ManifestReporter reporter;
    log::Reader reader(std::move(file), &reporter, /*checksum=*/true, manifest_number, manifest);
    Slice record;
    std::string scratch;
    size_t applied = 0;
    while (reader.ReadRecord(&record, &scratch, WALRecoveryMode::kTolerateCorruptedTailRecords) &&
           reporter.status.ok()) {
      applied++;
      const uint64_t offset = reader.LastRecordOffset();
      VersionEdit edit;
      s = edit.DecodeFrom(record);
      if (!s.ok()) return AtOffset(manifest, offset, s);
      if (edit.column_family() != 0) {
        return AtOffset(
            manifest, offset,
            Status::NotSupported("column family " + std::to_string(edit.column_family()) +
                                 " (only the default family is supported)"));
      }
      if (edit.has_comparator() && edit.comparator() != ucmp_name) {
        return Status::InvalidArgument(manifest,
                                       "the DB was created with comparator " + edit.comparator() +
                                           " and is being opened with comparator " + ucmp_name);
      }
      s = builder.Apply(edit);
      if (!s.ok()) return AtOffset(manifest, offset, s);
      for (const auto& nf : edit.new_files()) {
        max_file_number = std::max(max_file_number, nf.second.number);
      }
      if (edit.has_log_number()) {
        have_log_number = true;
        log_number = edit.log_number();
      }
      if (edit.has_prev_log_number()) {
        have_prev_log_number = true;
        prev_log_number = edit.prev_log_number();
      }
      if (edit.has_next_file_number()) {
        have_next_file = true;
        next_file = edit.next_file_number();
      }
      if (edit.has_last_sequence()) {
        have_last_sequence = true;
        last_sequence = edit.last_sequence();
      }
    }
    // Damage with no intact record after it is the unsynced tail of an edit that was never
    // acknowledged (every edit is synced before it takes effect), torn or garbled by a
    // power loss: the edits before it are the MANIFEST. If the damage hit a durable edit
    // instead, what that edit allowed to be deleted is missing and Open fails on it (the
    // MANIFEST's WAL, or an input file of a compaction). Damage followed by intact
    // records is Corruption; the reader's message names the MANIFEST and the offset.
    if (!reporter.status.ok() &&
        CountIntactRecords(env_, manifest, manifest_number) > applied) {
      return reporter.status;
    }
    tail_damage = reporter.status;
  }
  if (!tail_damage.ok() && (!have_next_file || !have_log_number || !have_last_sequence)) {
    return tail_damage;
  }
  if (!have_next_file) return Status::Corruption(manifest, "no next-file-number entry");
  if (!have_log_number) return Status::Corruption(manifest, "no log-number entry");
  if (!have_last_sequence) return Status::Corruption(manifest, "no last-sequence entry");
  if (!have_prev_log_number) prev_log_number = 0;

  auto* v = new Version(this, table_cache_, icmp_, num_levels_);
  s = builder.SaveTo(v);
  if (!s.ok()) {
    delete v;
    return Status::Corruption(manifest, s.getState() != nullptr ? s.getState() : "");
  }
  AppendVersion(v);
  manifest_file_number_.store(manifest_number);
  next_file_number_.store(next_file);
  MarkFileNumberUsed(manifest_number);
  MarkFileNumberUsed(max_file_number);
  MarkFileNumberUsed(log_number);
  MarkFileNumberUsed(prev_log_number);
  log_number_ = log_number;
  prev_log_number_ = prev_log_number;
  SetLastSequence(last_sequence);
  return Status::OK();
}

Status VersionSet::VerifyFilesExist(bool open_tables) {
  for (int level = 0; level < num_levels_; level++) {
    for (const FileMetaPtr& f : current_->files(level)) {
      const std::string fname = TableFileName(dbname_, f->number);
      uint64_t size = 0;
      Status s = env_->GetFileSize(fname, &size);
      if (!s.ok()) {
        if (s.IsNotFound() || s.IsPathNotFound() || env_->FileExists(fname).IsNotFound()) {
          return Status::Corruption(fname, "SST file named in the MANIFEST is missing");
        }
        return s;
      }
      if (size != f->file_size) {
        char buf[120];
        snprintf(buf, sizeof(buf), "size %" PRIu64 " differs from %" PRIu64 " in the MANIFEST",
                 size, f->file_size);
        return Status::Corruption(fname, buf);
      }
      if (open_tables) {
        std::shared_ptr<TableReader> reader;
        s = table_cache_->FindTable(*f, &reader);
        if (!s.ok()) return s;
      }
    }
  }
  return Status::OK();
}

}  // namespace shale
