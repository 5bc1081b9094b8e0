#include "db/table_file_writer.h"

#include <algorithm>
#include <cassert>

#include "db/compaction_iterator.h"
#include "db/filename.h"
#include "db/table_cache.h"
#include "memtable/memtable_filter.h"
#include "table/table_factory.h"
#include "util/hash.h"

namespace shale {

TableFileWriter::TableFileWriter(const Options& options, const std::string& dbname,
                                 const InternalKeyComparator* icmp)
    : options_(options), dbname_(dbname), icmp_(icmp) {}

TableFileWriter::~TableFileWriter() { Abandon(); }

Status TableFileWriter::Open(uint64_t number, int level, bool is_flush, bool skip_filters) {
  meta_ = FileMetaData();
  tombstones_smallest_.Clear();
  tombstones_largest_.Clear();
  key_filter_.reset();
  meta_.number = number;
  meta_.added_at_level0 = level == 0;
  const std::string fname = TableFileName(dbname_, number);
  EnvOptions env_options;
  env_options.use_direct_writes = options_.use_direct_io_for_flush_and_compaction;
  env_options.writable_file_max_buffer_size = options_.writable_file_max_buffer_size;
  Status s = options_.env->NewWritableFile(fname, &file_, env_options);
  if (!s.ok()) return s;

  TableBuilderOptions tbo;
  tbo.icmp = icmp_;
  // Only the block-based format exists; another factory (a caller's own) gets its defaults.
  if (options_.table_factory != nullptr &&
      std::string(options_.table_factory->Name()) == BlockBasedTableFactory::kClassName) {
    tbo.table_options =
        static_cast<const BlockBasedTableFactory*>(options_.table_factory.get())->table_options();
  }
  tbo.compression = options_.compression;
  tbo.file_name = fname;
  tbo.level_at_creation = level;
  tbo.is_flush = is_flush;
  tbo.skip_filters = skip_filters;
  builder_ = std::make_unique<TableBuilder>(tbo, file_.get());
  return builder_->status();
}

void TableFileWriter::KeepKeyFilter(uint64_t expected_keys) {
  assert(is_open() && builder_->NumEntries() == 0);
  if (builder_->WritesFilter()) return;  // the table's own filter serves
  // Ten bits a key: about 1% false positives (see MemTableFilter).
  key_filter_ = std::make_shared<MemTableFilter>(static_cast<size_t>(expected_keys * 10 / 8));
}

void TableFileWriter::Add(const Slice& internal_key, SequenceNumber seq, const Slice& value) {
  builder_->Add(internal_key, value);
  // A key's older versions follow it and set the same bits again, which costs no space.
  if (key_filter_ != nullptr) key_filter_->Add(Hash64(ExtractUserKey(internal_key)), false);
  // The largest key is taken from the builder at Finish: copying every key here cost
  // about 2% of a flush's instructions.
  if (!meta_.smallest.Valid()) meta_.smallest.DecodeFrom(internal_key);
  meta_.smallest_seqno = std::min(meta_.smallest_seqno, seq);
  meta_.largest_seqno = std::max(meta_.largest_seqno, seq);
}

void TableFileWriter::AddRangeTombstone(const Slice& begin, const Slice& end, SequenceNumber seq) {
  if (icmp_->user_comparator()->Compare(begin, end) >= 0) return;
  builder_->AddRangeTombstone(begin, end, seq);
  InternalKey lo(begin, seq, kTypeRangeDeletion);
  InternalKey hi(end, kMaxSequenceNumber, kTypeRangeDeletion);
  if (!tombstones_smallest_.Valid() ||
      icmp_->Compare(lo.Encode(), tombstones_smallest_.Encode()) < 0) {
    tombstones_smallest_ = lo;
  }
  if (!tombstones_largest_.Valid() ||
      icmp_->Compare(hi.Encode(), tombstones_largest_.Encode()) > 0) {
    tombstones_largest_ = hi;
  }
  meta_.smallest_seqno = std::min(meta_.smallest_seqno, seq);
  meta_.largest_seqno = std::max(meta_.largest_seqno, seq);
}

Status TableFileWriter::Finish(TableCache* verify_with, FileMetaData* meta) {
  Status s = builder_->Finish();
  if (s.ok()) {
    if (builder_->NumEntries() > 0) meta_.largest.DecodeFrom(builder_->LastKey());
    if (tombstones_smallest_.Valid()) {
      if (!meta_.smallest.Valid() ||
          icmp_->Compare(tombstones_smallest_.Encode(), meta_.smallest.Encode()) < 0) {
        meta_.smallest = tombstones_smallest_;
      }
      if (!meta_.largest.Valid() ||
          icmp_->Compare(tombstones_largest_.Encode(), meta_.largest.Encode()) > 0) {
        meta_.largest = tombstones_largest_;
      }
    }
    meta_.file_size = builder_->FileSize();
    meta_.num_entries = builder_->NumEntries();
    meta_.num_deletions = builder_->GetTableProperties().num_deletions;
    meta_.num_range_deletions = builder_->NumRangeTombstones();
    s = options_.use_fsync ? file_->Fsync() : file_->Sync();
  }
  if (s.ok()) {
    s = file_->Close();
  } else {
    file_->Close().PermitUncheckedError();
  }
  builder_.reset();
  file_.reset();
  meta_.key_filter = std::move(key_filter_);
  if (s.ok() && verify_with != nullptr) {
    // The file must read back before anything names it; readers then find it open.
    std::shared_ptr<TableReader> reader;
    s = verify_with->FindTable(meta_, &reader);
  }
  if (s.ok()) *meta = meta_;
  return s;
}

void TableFileWriter::Abandon() {
  if (builder_ != nullptr) {
    builder_->Abandon();
    builder_.reset();
  }
  if (file_ != nullptr) {
    file_->Close().PermitUncheckedError();
    file_.reset();
  }
}

Status BuildTable(const Options& options, const std::string& dbname,
                  const InternalKeyComparator* icmp, CompactionIterator* iter, int level,
                  bool is_flush, uint64_t key_filter_keys, TableCache* verify_with,
                  FileMetaData* meta, const FragmentedRangeTombstones* tombstones) {
  const uint64_t number = meta->number;
  meta->file_size = 0;
  TableFileWriter writer(options, dbname, icmp);
  Status s;
  for (iter->SeekToFirst(); iter->Valid(); iter->Next()) {
    if (!writer.is_open()) {
      // Created at the first surviving entry: input that cancels out leaves no file.
      s = writer.Open(number, level, is_flush, /*skip_filters=*/false);
      if (!s.ok()) break;
      if (key_filter_keys > 0) writer.KeepKeyFilter(key_filter_keys);
    }
    writer.Add(iter->key(), iter->ikey().sequence, iter->value());
  }
  if (s.ok()) s = iter->status();
  if (s.ok() && tombstones != nullptr && !tombstones->empty()) {
    if (!writer.is_open()) s = writer.Open(number, level, is_flush, /*skip_filters=*/false);
    if (s.ok()) {
      for (size_t i = 0; i < tombstones->size(); i++) {
        const FragmentedRangeTombstones::Fragment& f = tombstones->fragment(i);
        for (size_t k = f.first_seq; k < f.last_seq; k++) {
          writer.AddRangeTombstone(f.begin, f.end, tombstones->seqs()[k]);
        }
      }
    }
  }
  if (!writer.is_open()) {
    if (s.ok()) return s;  // nothing to write
  } else if (s.ok()) {
    s = writer.Finish(verify_with, meta);
  } else {
    writer.Abandon();
  }
  if (!s.ok()) {
    meta->file_size = 0;
    DeleteTableFile(options.env, dbname, number, verify_with);
  }
  return s;
}

void DeleteTableFile(Env* env, const std::string& dbname, uint64_t number,
                     TableCache* table_cache) {
  if (table_cache != nullptr) table_cache->Evict(number);
  env->DeleteFile(TableFileName(dbname, number)).PermitUncheckedError();
}

Status SyncDirectory(Directory* dir) { return dir == nullptr ? Status::OK() : dir->Fsync(); }

}  // namespace shale
