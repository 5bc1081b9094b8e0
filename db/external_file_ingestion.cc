// ExternalFileIngestion (db/external_file_ingestion.h): the steps of one family's ingestion.
#include "db/external_file_ingestion.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <utility>

#include "db/filename.h"
#include "db/level_scores.h"
#include "db/table_cache.h"
#include "db/version.h"
#include "memtable/memtable.h"
#include "table/table_factory.h"
#include "table/table_reader.h"

namespace shale {

namespace {

// The format version SstFileWriter writes (include/shale/sst_file_writer.h).
constexpr uint64_t kExternalFileVersion = 2;

// Where a search for user_key's entries starts: before all of them.
InternalKey SeekKey(const Slice& user_key) {
  return InternalKey(user_key, kMaxSequenceNumber, kValueTypeForSeek);
}

// Whether a range tombstone of t covers some key of [smallest, largest] (user keys).
bool TombstonesMeet(const FragmentedRangeTombstones* t, const Slice& smallest,
                    const Slice& largest) {
  if (t == nullptr) return false;
  const size_t i = t->FindFragment(smallest);  // the first fragment ending after smallest
  return i < t->size() && t->comparator()->Compare(t->fragment(i).begin, largest) <= 0;
}

}  // namespace

ExternalFileIngestion::ExternalFileIngestion(Env* env, std::string dbname, const Options* family,
                                             const InternalKeyComparator* icmp,
                                             std::vector<std::string> files,
                                             const IngestExternalFileOptions& options)
    : env_(env), dbname_(std::move(dbname)), family_(family), icmp_(icmp), options_(options) {
  for (std::string& path : files) {
    files_.emplace_back();
    files_.back().external_path = std::move(path);
  }
}

Status ExternalFileIngestion::CheckOptions() const {
  if (files_.empty()) return Status::InvalidArgument("The list of files is empty");
  if (options_.move_files && options_.link_files) {
    return Status::InvalidArgument("`move_files` and `link_files` can not both be true.");
  }
  if (options_.ingest_behind) {
    if (!family_->allow_ingest_behind) {
      return Status::InvalidArgument(
          "Can't ingest_behind file in DB with allow_ingest_behind=false");
    }
    if (CompactionLevels(*family_, family_->num_levels) == family_->num_levels) {
      return Status::InvalidArgument("ingest_behind needs num_levels >= 3");
    }
  }
  return Status::OK();
}

// ---- Step 1.

Status ExternalFileIngestion::Prepare(const std::vector<uint64_t>& numbers) {
  for (size_t i = 0; i < files_.size(); i++) {
    files_[i].meta.number = numbers[i];
    Status s = Inspect(&files_[i]);
    if (!s.ok()) return s;
  }
  // Sorted by smallest key, two files overlap when one ends at or past the next's start.
  std::vector<size_t> order(files_.size());
  std::iota(order.begin(), order.end(), 0);
  const Comparator* ucmp = icmp_->user_comparator();
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return ucmp->Compare(SmallestUserKey(files_[a]), SmallestUserKey(files_[b])) < 0;
  });
  for (size_t i = 1; i < order.size(); i++) {
    if (ucmp->Compare(LargestUserKey(files_[order[i - 1]]), SmallestUserKey(files_[order[i]])) >=
        0) {
      files_overlap_ = true;
    }
  }
  if (files_overlap_ && options_.ingest_behind) {
    return Status::NotSupported(
        "Files with overlapping ranges cannot be ingested with ingestion behind mode.");
  }
  if (files_overlap_ && !options_.allow_global_seqno) {
    return Status::InvalidArgument(
        "Global seqno is required, but disabled (because external files key range overlaps).");
  }
  for (File& f : files_) {
    Status s = BringIn(&f);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status ExternalFileIngestion::Inspect(File* f) const {
  const TableFactory* factory = family_->table_factory.get();
  if (factory == nullptr || std::string(factory->Name()) != BlockBasedTableFactory::kClassName) {
    return Status::NotSupported("ingestion reads block-based tables only");
  }
  uint64_t size = 0;
  Status s = env_->GetFileSize(f->external_path, &size);
  std::unique_ptr<RandomAccessFile> file;
  if (s.ok()) s = env_->NewRandomAccessFile(f->external_path, &file, EnvOptions());
  if (!s.ok()) return s;
  TableReaderOptions tro;
  tro.icmp = icmp_;
  tro.table_options = static_cast<const BlockBasedTableFactory*>(factory)->table_options();
  tro.table_options.block_cache = nullptr;  // read once: not worth caching
  tro.file_name = f->external_path;
  std::unique_ptr<TableReader> reader;
  s = TableReader::Open(tro, std::move(file), size, &reader);
  if (!s.ok()) return s;
  const uint64_t version = reader->GetTableProperties().external_sst_file_version;
  if (version == 0) return Status::Corruption("External file version not found");
  if (version != kExternalFileVersion) {
    return Status::InvalidArgument("External file version " + std::to_string(version) +
                                   " is not supported");
  }

  // Every entry, so that a file not made as SstFileWriter makes them (keys out of order or
  // repeated, a sequence number, an entry type it never writes) is refused here rather
  // than read wrongly later.
  ReadOptions ro;
  ro.verify_checksums = options_.verify_checksums_before_ingest;
  ro.fill_cache = false;
  std::unique_ptr<InternalIterator> iter(reader->NewIterator(ro));
  const Comparator* ucmp = icmp_->user_comparator();
  FileMetaData& m = f->meta;
  std::string last_user_key;
  for (iter->SeekToFirst(); iter->Valid(); iter->Next()) {
    ParsedInternalKey key;
    s = ParseInternalKey(iter->key(), &key);
    if (!s.ok()) {
      return Status::Corruption("Corrupted key in external file. " + f->external_path,
                                s.ToString());
    }
    if (key.sequence != 0) {
      return Status::Corruption("External file has non zero sequence number", f->external_path);
    }
    if (key.type != kTypeValue && key.type != kTypeDeletion && key.type != kTypeMerge) {
      return Status::Corruption("External file has an entry of a type it cannot hold",
                                f->external_path);
    }
    if (m.num_entries > 0 && ucmp->Compare(key.user_key, last_user_key) <= 0) {
      return Status::Corruption("External file keys are not in strictly ascending order",
                                f->external_path);
    }
    if (m.num_entries == 0) m.smallest.DecodeFrom(iter->key());
    last_user_key.assign(key.user_key.data(), key.user_key.size());
    m.num_entries++;
    if (key.type == kTypeDeletion) m.num_deletions++;
  }
  if (!iter->status().ok()) return iter->status();
  if (m.num_entries == 0) return Status::InvalidArgument("File contain no entries");
  iter->SeekToLast();
  if (!iter->Valid()) {
    return iter->status().ok() ? Status::Corruption("Can not find largest key in sst file")
                               : iter->status();
  }
  m.largest.DecodeFrom(iter->key());
  m.file_size = size;
  return Status::OK();
}

Status ExternalFileIngestion::BringIn(File* f) const {
  f->internal_path = TableFileName(dbname_, f->meta.number);
  Status s;
  if (options_.move_files || options_.link_files) {
    s = env_->LinkFile(f->external_path, f->internal_path);
    if (s.ok()) {
      f->brought_in = true;
      return s;
    }
    if (!options_.failed_move_fall_back_to_copy) return s;
  }
  f->brought_in = true;  // a copy cut short is removed as well
  return CopyFile(f->external_path, f->internal_path);
}

Status ExternalFileIngestion::CopyFile(const std::string& from, const std::string& to) const {
  std::unique_ptr<SequentialFile> src;
  Status s = env_->NewSequentialFile(from, &src, EnvOptions());
  std::unique_ptr<WritableFile> dst;
  if (s.ok()) s = env_->NewWritableFile(to, &dst, EnvOptions());
  if (!s.ok()) return s;
  std::string buffer(1 << 20, '\0');
  while (true) {
    Slice chunk;
    s = src->Read(buffer.size(), &chunk, buffer.data());
    if (!s.ok() || chunk.empty()) break;
    s = dst->Append(chunk);
    if (!s.ok()) break;
  }
  if (s.ok()) s = family_->use_fsync ? dst->Fsync() : dst->Sync();
  Status closed = dst->Close();
  return s.ok() ? closed : s;
}

// ---- Step 2.

bool ExternalFileIngestion::OverlapsMemtables(const std::vector<MemTable*>& mems) const {
  if (options_.ingest_behind) return false;  // beneath everything, the memtables too
  const Comparator* ucmp = icmp_->user_comparator();
  for (MemTable* mem : mems) {
    // A range tombstone over a file's keys must be flushed too, or it would hide them.
    std::shared_ptr<const FragmentedRangeTombstones> tombstones;
    if (mem->HasRangeTombstones()) tombstones = mem->RangeTombstones();
    std::unique_ptr<InternalIterator> iter(mem->NewIterator());
    for (const File& f : files_) {
      if (TombstonesMeet(tombstones.get(), SmallestUserKey(f), LargestUserKey(f))) return true;
      if (mem->IsEmpty()) continue;
      iter->Seek(SeekKey(SmallestUserKey(f)).Encode());
      if (iter->Valid() && ucmp->Compare(ExtractUserKey(iter->key()), LargestUserKey(f)) <= 0) {
        return true;
      }
    }
  }
  return false;
}

// ---- Step 3.

bool ExternalFileIngestion::KeysOverlap(const Version& v, TableCache* table_cache, int level,
                                        const File& f, Status* s) const {
  const Comparator* ucmp = icmp_->user_comparator();
  const Slice smallest = SmallestUserKey(f);
  const Slice largest = LargestUserKey(f);
  ReadOptions ro;
  ro.fill_cache = false;
  for (const FileMetaPtr& other : v.files(level)) {
    if (ucmp->Compare(other->largest.user_key(), smallest) < 0 ||
        ucmp->Compare(other->smallest.user_key(), largest) > 0) {
      continue;
    }
    if (other->num_range_deletions > 0) {
      // A tombstone there shares the range's keys as much as a key does.
      std::shared_ptr<TableReader> reader;
      *s = table_cache->FindTable(*other, &reader);
      if (!s->ok() || TombstonesMeet(reader->range_tombstones().get(), smallest, largest)) {
        return true;
      }
    }
    std::unique_ptr<InternalIterator> iter(table_cache->NewIterator(ro, *other));
    iter->Seek(SeekKey(smallest).Encode());
    if (iter->Valid() && ucmp->Compare(ExtractUserKey(iter->key()), largest) <= 0) return true;
    if (!iter->status().ok()) {
      *s = iter->status();
      return true;
    }
  }
  return false;
}

Status ExternalFileIngestion::Assign(Version* v, TableCache* table_cache,
                                     const CompactionPicker& picker, int base_level,
                                     bool snapshots_exist, uint64_t* seqnos) {
  *seqnos = 0;
  const int last = v->NumLevels() - 1;
  if (options_.ingest_behind) {
    // At sequence 0 in the last level, which compactions leave alone.
    for (File& f : files_) {
      const Slice smallest = SmallestUserKey(f);
      const Slice largest = LargestUserKey(f);
      if (v->OverlapInLevel(last, &smallest, &largest)) {
        return Status::InvalidArgument(
            "Can't ingest_behind file as it doesn't fit at the bottommost level!");
      }
      f.level = last;
      f.needs_seqno = false;
    }
  } else if (files_overlap_) {
    // One number each, in the order given, all in L0 where files may overlap.
    for (File& f : files_) {
      f.level = 0;
      f.needs_seqno = true;
    }
    *seqnos = files_.size();
  } else {
    const bool force = options_.snapshot_consistency && snapshots_exist;
    for (File& f : files_) {
      const Slice smallest = SmallestUserKey(f);
      const Slice largest = LargestUserKey(f);
      bool overlaps_db = false;
      int target = 0;
      for (int level = 0; level <= last; level++) {
        if (level > 0 && level < base_level) continue;
        if (v->NumFiles(level) > 0) {
          Status s;
          if (KeysOverlap(*v, table_cache, level, f, &s)) {
            if (!s.ok()) return s;
            overlaps_db = true;
            break;
          }
        }
        if (level == 0 || (!v->OverlapInLevel(level, &smallest, &largest) &&
                           !picker.OutputRangeBusy(level, smallest, largest))) {
          target = level;
        }
      }
      f.level = target;
      f.needs_seqno = overlaps_db || force;
      if (f.needs_seqno) *seqnos = 1;  // shared: the files do not overlap each other
    }
  }
  if (*seqnos > 0 && !options_.allow_global_seqno) {
    return Status::InvalidArgument("Global seqno is required, but disabled");
  }
  if (options_.fail_if_not_bottommost_level) {
    for (const File& f : files_) {
      if (f.level < last) {
        return Status::TryAgain(
            "Files cannot be ingested to Lmax. Please make sure key range of Lmax does not "
            "overlap with files to ingest.");
      }
    }
  }
  return Status::OK();
}

// ---- Step 4.

void ExternalFileIngestion::BuildEdit(SequenceNumber first, uint32_t family_id,
                                      CompactionPicker* picker) {
  edit_.SetColumnFamily(family_id);
  SequenceNumber next = first;
  for (const File& f : files_) {
    SequenceNumber seq = 0;
    if (f.needs_seqno) seq = files_overlap_ ? next++ : first;
    FileMetaData m;
    m.number = f.meta.number;
    m.file_size = f.meta.file_size;
    m.smallest = InternalKey(SmallestUserKey(f), seq, ExtractValueType(f.meta.smallest.Encode()));
    m.largest = InternalKey(LargestUserKey(f), seq, ExtractValueType(f.meta.largest.Encode()));
    m.smallest_seqno = seq;
    m.largest_seqno = seq;
    m.num_entries = f.meta.num_entries;
    m.num_deletions = f.meta.num_deletions;
    edit_.AddFile(f.level, m);
    if (f.level > 0) picker->ReserveOutputRange(f.level, SmallestUserKey(f), LargestUserKey(f));
  }
}

// ---- Step 5.

void ExternalFileIngestion::Finish(bool ingested) {
  for (const File& f : files_) {
    if (ingested && options_.move_files) {
      env_->DeleteFile(f.external_path).PermitUncheckedError();
    } else if (!ingested && f.brought_in) {
      env_->DeleteFile(f.internal_path).PermitUncheckedError();
    }
  }
}

}  // namespace shale
