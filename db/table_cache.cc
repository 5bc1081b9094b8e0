#include "db/table_cache.h"

#include <utility>
#include <vector>

#include "db/filename.h"
#include "table/table_factory.h"

namespace shale {
namespace {

void ReleaseReader(void* arg, void* /*unused*/) {
  delete static_cast<std::shared_ptr<TableReader>*>(arg);
}

// TableReader::Get on f's reader, with either kind of handler.
template <typename Handler>
Status GetFromTable(TableCache* cache, const ReadOptions& read_options, const FileMetaData& f,
                    const Slice& ikey, void* arg, Handler handle) {
  std::shared_ptr<TableReader> hold;
  TableReader* reader;
  Status s = cache->ReaderFor(f, &hold, &reader);
  if (!s.ok()) return s;
  s = reader->Get(read_options, ikey, arg, handle);
  cache->MaybeBuildKeyFilter(f, reader, hold);
  return s;
}

// TableReader::MultiGet on f's reader, with either kind of handler.
template <typename Handler>
void MultiGetFromTable(TableCache* cache, const ReadOptions& read_options, const FileMetaData& f,
                       TableReader::BatchKey* keys, size_t n, Handler handle) {
  std::shared_ptr<TableReader> hold;
  TableReader* reader;
  Status s = cache->ReaderFor(f, &hold, &reader);
  if (!s.ok()) {
    for (size_t i = 0; i < n; i++) keys[i].status = s;
    return;
  }
  reader->MultiGet(read_options, keys, n, handle);
  cache->MaybeBuildKeyFilter(f, reader, hold);
}

}  // namespace

TableCache::TableCache(const std::string& dbname, const Options& options,
                       const InternalKeyComparator* icmp, int max_open_files)
    : dbname_(dbname),
      env_(options.env),
      icmp_(icmp),
      capacity_(max_open_files < 0 ? 0
                                   : static_cast<size_t>(max_open_files > 0 ? max_open_files : 1)) {
  if (const auto* factory =
          dynamic_cast<const BlockBasedTableFactory*>(options.table_factory.get())) {
    table_options_ = factory->table_options();
  }
  env_options_.use_direct_reads = options.use_direct_reads;
  env_options_.use_mmap_reads = options.allow_mmap_reads;
  statistics_ = options.statistics.get();
}

TableCache::~TableCache() = default;

Status TableCache::OpenTable(const FileMetaData& f, std::shared_ptr<TableReader>* reader) {
  const std::string fname = TableFileName(dbname_, f.number);
  std::unique_ptr<RandomAccessFile> file;
  Status s = env_->NewRandomAccessFile(fname, &file, env_options_);
  if (!s.ok()) return s;
  TableReaderOptions options;
  options.icmp = icmp_;
  options.table_options = table_options_;
  options.file_name = fname;
  options.statistics = statistics_;
  options.is_level0 = f.added_at_level0;
  options.largest_seqno = f.largest_seqno;
  std::unique_ptr<TableReader> opened;
  s = TableReader::Open(options, std::move(file), f.file_size, &opened);
  if (s.ok()) *reader = std::shared_ptr<TableReader>(std::move(opened));
  return s;
}

Status TableCache::FindTable(const FileMetaData& f, std::shared_ptr<TableReader>* reader) {
  if (std::shared_ptr<TableReader> kept = f.table_reader.GetShared()) {
    *reader = std::move(kept);
    return Status::OK();
  }
  {
    MutexLock l(&mu_);
    auto it = map_.find(f.number);
    if (it != map_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
      *reader = it->second.reader;
      return Status::OK();
    }
  }
  // Opening reads the file: do it without the lock. Two threads may open the same file at
  // once; the first to insert wins and the other's reader is dropped.
  std::shared_ptr<TableReader> opened;
  Status s = OpenTable(f, &opened);
  if (!s.ok()) return s;

  std::vector<std::shared_ptr<TableReader>> evicted;  // closed after the lock is released
  MutexLock l(&mu_);
  auto [it, inserted] = map_.try_emplace(f.number);
  if (inserted) {
    lru_.push_front(f.number);
    it->second.reader = std::move(opened);
    it->second.lru_pos = lru_.begin();
    while (capacity_ > 0 && map_.size() > capacity_) {
      auto victim = map_.find(lru_.back());
      lru_.pop_back();
      evicted.push_back(std::move(victim->second.reader));
      map_.erase(victim);
    }
  } else {
    lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
  }
  *reader = it->second.reader;
  return Status::OK();
}

Status TableCache::ReaderFor(const FileMetaData& f, std::shared_ptr<TableReader>* hold,
                             TableReader** reader) {
  if (TableReader* kept = f.table_reader.Get()) {
    *reader = kept;
    return Status::OK();
  }
  Status s = FindTable(f, hold);
  if (!s.ok()) return s;
  // Only without a bound: a kept reader stays open for as long as its file is live, which
  // max_open_files would not allow.
  *reader = capacity_ == 0 ? f.table_reader.Keep(*hold) : hold->get();
  return Status::OK();
}

void TableCache::MaybeBuildKeyFilter(const FileMetaData& f, TableReader* reader,
                                     const std::shared_ptr<TableReader>& hold) {
  if (f.key_filter != nullptr || !reader->WantsKeyFilter()) return;
  key_filter_builder_.Request(hold != nullptr ? hold : f.table_reader.GetShared());
}

InternalIterator* TableCache::NewIterator(const ReadOptions& read_options, const FileMetaData& f) {
  std::shared_ptr<TableReader> hold;
  TableReader* reader;
  Status s = ReaderFor(f, &hold, &reader);
  if (!s.ok()) return NewEmptyInternalIterator(s);
  InternalIterator* iter = reader->NewIterator(read_options);
  // A reader kept in f needs no reference: f outlives the iterator. A reader of a bounded
  // cache may be evicted meanwhile, so the iterator holds it.
  if (hold != nullptr) {
    iter->RegisterCleanup(&ReleaseReader, new std::shared_ptr<TableReader>(std::move(hold)),
                          nullptr);
  }
  return iter;
}

Status TableCache::Get(const ReadOptions& read_options, const FileMetaData& f, const Slice& ikey,
                       void* arg, TableReader::GetHandler handle) {
  return GetFromTable(this, read_options, f, ikey, arg, handle);
}

Status TableCache::Get(const ReadOptions& read_options, const FileMetaData& f, const Slice& ikey,
                       void* arg, TableReader::PinningGetHandler handle) {
  return GetFromTable(this, read_options, f, ikey, arg, handle);
}

void TableCache::MultiGet(const ReadOptions& read_options, const FileMetaData& f,
                          TableReader::BatchKey* keys, size_t n, TableReader::GetHandler handle) {
  MultiGetFromTable(this, read_options, f, keys, n, handle);
}

void TableCache::MultiGet(const ReadOptions& read_options, const FileMetaData& f,
                          TableReader::BatchKey* keys, size_t n,
                          TableReader::PinningGetHandler handle) {
  MultiGetFromTable(this, read_options, f, keys, n, handle);
}

void TableCache::Evict(uint64_t file_number) {
  std::shared_ptr<TableReader> dropped;  // closed after the lock is released
  MutexLock l(&mu_);
  auto it = map_.find(file_number);
  if (it == map_.end()) return;
  dropped = std::move(it->second.reader);
  lru_.erase(it->second.lru_pos);
  map_.erase(it);
}

size_t TableCache::TEST_NumCached() {
  MutexLock l(&mu_);
  return map_.size();
}

}  // namespace shale
