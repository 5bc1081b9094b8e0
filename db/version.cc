#include "db/version.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "db/level_iterator.h"
#include "db/range_del_iterator.h"
#include "db/table_cache.h"
#include "db/version_set.h"
#include "memtable/memtable_filter.h"
#include "memtable/merge_context.h"
#include "util/hash.h"

namespace shale {

namespace {

// Collects the result of a point lookup in one file; see Version::Get.
struct Saver {
  enum State { kNotFound, kFound, kDeleted, kMerge, kMergeStop, kCorrupt };
  const Comparator* ucmp;
  Slice user_key;
  SequenceNumber snapshot;
  ReadCallback* callback;
  std::string* value;
  MergeContext* merge_context;      // null: an operand ends the search with kMerge
  PinnableSlice* pinned = nullptr;  // where a Put's bytes are pinned instead of copied
  State state = kNotFound;
  SequenceNumber seq = 0;
  // A range tombstone covers the key at this sequence: an older visible entry is deleted.
  SequenceNumber deleted_below = 0;
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
  if (parsed.sequence < saver->deleted_below) {
    parsed.type = kTypeDeletion;  // answered as the tombstone, at its sequence
    parsed.sequence = saver->deleted_below;
  }
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

// What a file's search left in saver means (see Version::Get): true when the search is
// over, with *s (and *seq, unless an error) set.
bool ResolveSaver(const Saver& saver, const FileMetaData& f, Status* s, SequenceNumber* seq) {
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

// A Saver for one file's search for key; see Version::Get.
void InitSaver(Saver* saver, const Comparator* ucmp, const LookupKey& key, ReadCallback* callback,
               std::string* value, MergeContext* merge_context, PinnableSlice* pinned) {
  saver->ucmp = ucmp;
  saver->user_key = key.user_key();
  saver->snapshot = ExtractSequence(key.internal_key());
  saver->callback = callback;
  saver->value = value;
  saver->merge_context = merge_context;
  saver->pinned = merge_context == nullptr ? pinned : nullptr;
}

// Pinning costs a block reference per entry seen: GetMergeOperands asks for it, and a Get
// whose value may be pinned.
bool WantsPins(const Saver& saver) {
  return (saver.merge_context != nullptr && saver.merge_context->want_pins) ||
         saver.pinned != nullptr;
}

void UnrefVersion(void* arg, void* /*unused*/) { static_cast<Version*>(arg)->Unref(); }

}  // namespace

Version::Version(VersionSet* vset, TableCache* table_cache, const InternalKeyComparator* icmp,
                 int num_levels)
    : vset_(vset),
      table_cache_(table_cache),
      icmp_(icmp),
      files_(num_levels),
      version_number_(vset != nullptr ? vset->next_version_number_.fetch_add(1) : 0) {
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
                         ReadCallback* callback, MergeContext* merge_context, PinnableSlice* pinned,
                         SequenceNumber* deleted_below) {
  if (f.num_range_deletions > 0) {
    std::shared_ptr<TableReader> reader;
    Status st = table_cache_->FindTable(f, &reader);
    if (!st.ok()) {
      *s = std::move(st);
      return true;
    }
    if (reader->range_tombstones() != nullptr) {
      *deleted_below = std::max(*deleted_below,
                                reader->range_tombstones()->MaxCoveringSeq(
                                    key.user_key(), ExtractSequence(key.internal_key()), callback));
    }
  }
  if (*deleted_below > f.largest_seqno) {
    // Every entry here is older than the tombstone, and so is every entry beneath.
    *s = Status::NotFound();
    *seq = *deleted_below;
    return true;
  }
  Saver saver;
  InitSaver(&saver, icmp_->user_comparator(), key, callback, value, merge_context, pinned);
  saver.deleted_below = *deleted_below;
  Status st = WantsPins(saver)
                  ? table_cache_->Get(read_options, f, key.internal_key(), &saver,
                                      static_cast<TableReader::PinningGetHandler>(&SaveValue))
                  : table_cache_->Get(read_options, f, key.internal_key(), &saver,
                                      static_cast<TableReader::GetHandler>(&SaveValueCopying));
  if (!st.ok()) {
    *s = std::move(st);
    return true;
  }
  return ResolveSaver(saver, f, s, seq);
}

void Version::SearchFileBatch(const ReadOptions& read_options, const FileMetaData& f, int level,
                              const std::vector<VersionGetItem*>& batch, ReadCallback* callback) {
  if (batch.empty()) return;
  std::vector<VersionGetItem*> searched;  // those f's tombstones do not answer outright
  searched.reserve(batch.size());
  std::shared_ptr<TableReader> reader;
  if (f.num_range_deletions > 0) {
    Status st = table_cache_->FindTable(f, &reader);
    if (!st.ok()) {
      for (VersionGetItem* item : batch) {
        item->status = st;
        item->found = true;
        item->hit_level = level;
      }
      return;
    }
  }
  for (VersionGetItem* item : batch) {
    if (reader != nullptr && reader->range_tombstones() != nullptr) {
      item->deleted_below = std::max(
          item->deleted_below,
          reader->range_tombstones()->MaxCoveringSeq(
              item->key->user_key(), ExtractSequence(item->key->internal_key()), callback));
    }
    if (item->deleted_below > f.largest_seqno) {
      // As in SearchFile: this file and every one beneath hold only older entries.
      item->status = Status::NotFound();
      item->seq = item->deleted_below;
      item->found = true;
      item->hit_level = level;
    } else {
      searched.push_back(item);
    }
  }
  const size_t n = searched.size();
  if (n == 0) return;
  std::vector<Saver> savers(n);
  std::vector<TableReader::BatchKey> keys(n);
  bool pins = false;
  for (size_t i = 0; i < n; i++) {
    const VersionGetItem& item = *searched[i];
    InitSaver(&savers[i], icmp_->user_comparator(), *item.key, callback, item.value,
              item.merge_context, item.pinned);
    savers[i].deleted_below = item.deleted_below;
    pins = pins || WantsPins(savers[i]);
    keys[i].ikey = item.key->internal_key();
    keys[i].arg = &savers[i];
  }
  // One handler for the batch: the pinning one also serves keys that would copy (SaveValue
  // copies whatever it is not asked to pin), at the cost of a reference per entry.
  if (pins) {
    table_cache_->MultiGet(read_options, f, keys.data(), n,
                           static_cast<TableReader::PinningGetHandler>(&SaveValue));
  } else {
    table_cache_->MultiGet(read_options, f, keys.data(), n,
                           static_cast<TableReader::GetHandler>(&SaveValueCopying));
  }
  for (size_t i = 0; i < n; i++) {
    VersionGetItem* item = searched[i];
    if (!keys[i].status.ok()) {
      item->status = std::move(keys[i].status);
      item->found = true;
    } else {
      item->found = ResolveSaver(savers[i], f, &item->status, &item->seq);
    }
    if (item->found) item->hit_level = level;
  }
}

void Version::MultiGet(const ReadOptions& read_options, VersionGetItem* const* items, size_t n,
                       ReadCallback* callback) {
  const Comparator* ucmp = icmp_->user_comparator();
  std::vector<VersionGetItem*> pending(items, items + n);  // unanswered, in key order
  std::vector<VersionGetItem*> batch;
  const auto drop_found = [&pending] {
    pending.erase(std::remove_if(pending.begin(), pending.end(),
                                 [](const VersionGetItem* item) { return item->found; }),
                  pending.end());
  };
  // In f's key range and not all too new for it, as Get decides per file.
  const auto may_hold = [ucmp](const FileMetaData& f, const VersionGetItem& item) {
    const Slice ukey = item.key->user_key();
    return f.smallest_seqno <= ExtractSequence(item.key->internal_key()) &&
           ucmp->Compare(ukey, f.smallest.user_key()) >= 0 &&
           ucmp->Compare(ukey, f.largest.user_key()) <= 0;
  };
  // L0 files newest first, each with every pending key in its range that its key filter
  // does not rule out.
  bool hashed = false;
  for (const FileMetaPtr& f : files_[0]) {
    if (pending.empty()) return;
    if (f->key_filter != nullptr && !hashed) {
      for (VersionGetItem* item : pending) item->key_hash = Hash64(item->key->user_key());
      hashed = true;
    }
    batch.clear();
    for (VersionGetItem* item : pending) {
      if (!may_hold(*f, *item)) continue;
      if (f->key_filter != nullptr && f->num_range_deletions == 0 &&
          !f->key_filter->MayContain(item->key_hash)) {
        continue;
      }
      batch.push_back(item);
    }
    SearchFileBatch(read_options, *f, 0, batch, callback);
    drop_found();
  }
  // Deeper levels: the pending keys, in order, fall into runs that share a file.
  for (size_t level = 1; level < files_.size() && !pending.empty(); level++) {
    const std::vector<FileMetaPtr>& files = files_[level];
    for (size_t i = 0; i < pending.size();) {
      const size_t fi = FindFile(*icmp_, files, pending[i]->key->internal_key());
      if (fi == files.size()) break;  // this key and every later one are past the level
      const FileMetaData& f = *files[fi];
      batch.clear();
      size_t j = i;
      for (; j < pending.size() &&
             icmp_->Compare(pending[j]->key->internal_key(), f.largest.Encode()) <= 0;
           j++) {
        if (may_hold(f, *pending[j])) batch.push_back(pending[j]);
      }
      SearchFileBatch(read_options, f, static_cast<int>(level), batch, callback);
      i = j;
    }
    drop_found();
  }
}

bool Version::Get(const ReadOptions& read_options, const LookupKey& key, std::string* value,
                  Status* s, SequenceNumber* seq, ReadCallback* callback,
                  MergeContext* merge_context, PinnableSlice* pinned, int* hit_level,
                  SequenceNumber deleted_below, SequenceNumber* covered_out) {
  const Slice ikey = key.internal_key();
  const Slice ukey = key.user_key();
  const SequenceNumber snapshot = ExtractSequence(ikey);
  const Comparator* ucmp = icmp_->user_comparator();

  // L0 files may overlap: every one whose range holds the key, newest first, unless its key
  // filter rules the key out.
  uint64_t hash = 0;
  bool hashed = false;
  for (const FileMetaPtr& f : files_[0]) {
    if (f->smallest_seqno > snapshot) continue;  // everything in it is too new
    if (ucmp->Compare(ukey, f->smallest.user_key()) < 0 ||
        ucmp->Compare(ukey, f->largest.user_key()) > 0) {
      continue;
    }
    // The key filter knows the point keys only: a file with range tombstones is searched.
    if (f->key_filter != nullptr && f->num_range_deletions == 0) {
      if (!hashed) {
        hash = Hash64(ukey);
        hashed = true;
      }
      if (!f->key_filter->MayContain(hash)) continue;
    }
    if (SearchFile(read_options, *f, key, value, s, seq, callback, merge_context, pinned,
                   &deleted_below)) {
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
    if (SearchFile(read_options, f, key, value, s, seq, callback, merge_context, pinned,
                   &deleted_below)) {
      if (hit_level != nullptr) *hit_level = static_cast<int>(level);
      return true;
    }
  }
  if (covered_out != nullptr) *covered_out = deleted_below;
  return false;
}

Status Version::TombstoneLists(std::vector<TombstoneList>* own, std::vector<TombstoneList>* newer) {
  MutexLock l(&tombstones_mu_);
  if (!tombstones_made_) {
    std::vector<TombstoneList> own_made, newer_made;
    TombstoneList all;  // every source's so far
    // One source: an L0 file, or a level's files.
    const auto add = [&](const FileMetaPtr* files, size_t n) {
      TombstoneList mine;
      for (size_t i = 0; i < n; i++) {
        if (files[i]->num_range_deletions == 0) continue;
        std::shared_ptr<TableReader> reader;
        Status s = table_cache_->FindTable(*files[i], &reader);
        if (!s.ok()) return s;
        mine = MergeRangeTombstones(mine, reader->range_tombstones(), icmp_->user_comparator());
      }
      own_made.push_back(mine);
      newer_made.push_back(all);
      all = MergeRangeTombstones(all, mine, icmp_->user_comparator());
      return Status::OK();
    };
    for (const FileMetaPtr& f : files_[0]) {
      Status s = add(&f, 1);
      if (!s.ok()) return s;
    }
    for (size_t level = 1; level < files_.size(); level++) {
      if (files_[level].empty()) continue;
      Status s = add(files_[level].data(), files_[level].size());
      if (!s.ok()) return s;
    }
    own_tombstones_ = std::move(own_made);
    newer_tombstones_ = std::move(newer_made);
    tombstones_made_ = true;
  }
  *own = own_tombstones_;
  *newer = newer_tombstones_;
  return Status::OK();
}

void Version::AddIterators(const ReadOptions& read_options, std::vector<InternalIterator*>* iters,
                           std::vector<TombstoneList>* tombstones,
                           std::vector<TombstoneList>* newer) {
  std::vector<TombstoneList> own_lists, newer_lists;
  Status s;
  if (tombstones != nullptr) s = TombstoneLists(&own_lists, &newer_lists);
  size_t source = 0;
  const auto add = [&](InternalIterator* iter) {
    if (tombstones != nullptr) {
      if (s.ok()) {
        tombstones->push_back(own_lists[source]);
        if (newer != nullptr) newer->push_back(newer_lists[source]);
      } else {
        delete iter;
        iter = NewEmptyInternalIterator(s);
        tombstones->push_back(nullptr);
        if (newer != nullptr) newer->push_back(nullptr);
      }
    }
    source++;
    Ref();
    iter->RegisterCleanup(&UnrefVersion, this, nullptr);
    iters->push_back(iter);
  };
  for (const FileMetaPtr& f : files_[0]) add(table_cache_->NewIterator(read_options, *f));
  for (size_t level = 1; level < files_.size(); level++) {
    if (files_[level].empty()) continue;
    add(NewLevelIterator(table_cache_, read_options, icmp_, &files_[level]));
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

std::string Version::LevelSummary(int base_level) const {
  std::string r = "files[";
  for (size_t level = 0; level < files_.size(); level++) {
    if (level > 0) r += ' ';
    r += std::to_string(files_[level].size());
  }
  r += "] base level " + std::to_string(base_level);
  return r;
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

}  // namespace shale
