// TableCache: the open SST readers, keyed by file number, so a file is opened (its footer,
// index and filter read) once and then shared by every read that touches it.
//
// Bounded by max_open_files readers (-1: unbounded), least recently used evicted first.
// Readers are shared by reference count: evicting one that an iterator or a Get is using
// only drops the cache's reference, and the reader closes when the last user is done.
// Failed opens are not cached, so a transient error is retried on the next use.
//
// With allow_mmap_reads files are opened for reading through a mapping
// (EnvOptions::use_mmap_reads): a block cache miss on a file in the page cache then costs
// no system call and no copy, and checksum and decompression read the mapped bytes in
// place (SST files never change once written). Otherwise each miss is a pread.
//
// Thread safety: every method may be called from many threads at once.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>

#include "db/key_filter_builder.h"
#include "db/version_edit.h"
#include "shale/env.h"
#include "shale/options.h"
#include "shale/table.h"
#include "table/table_reader.h"
#include "util/dbformat.h"
#include "util/internal_iterator.h"
#include "util/mutexlock.h"

namespace shale {

class TableCache {
 public:
  // icmp must outlive the cache. options supplies env, table format options,
  // and use_direct_reads (a file's meta blocks are always verified at open).
  TableCache(const std::string& dbname, const Options& options, const InternalKeyComparator* icmp,
             int max_open_files);
  ~TableCache();
  TableCache(const TableCache&) = delete;
  TableCache& operator=(const TableCache&) = delete;

  // An iterator over file f's internal keys. If the file cannot be opened, an empty
  // iterator whose status() says why. The caller owns the iterator. REQUIRES: f outlives
  // the iterator (with an unbounded cache the reader is kept in f, as ReaderFor does, and
  // the iterator holds no reference of its own; otherwise it holds one).
  InternalIterator* NewIterator(const ReadOptions& read_options, const FileMetaData& f);

  // TableReader::Get on file f (see table_reader.h for how handle is called).
  Status Get(const ReadOptions& read_options, const FileMetaData& f, const Slice& ikey, void* arg,
             TableReader::GetHandler handle);

  // The same with a handler that may keep the bytes it is shown (see table_reader.h).
  Status Get(const ReadOptions& read_options, const FileMetaData& f, const Slice& ikey, void* arg,
             TableReader::PinningGetHandler handle);

  // TableReader::MultiGet on file f (see table_reader.h): keys' statuses are set, all to
  // the error when the file cannot be opened.
  void MultiGet(const ReadOptions& read_options, const FileMetaData& f, TableReader::BatchKey* keys,
                size_t n, TableReader::GetHandler handle);
  void MultiGet(const ReadOptions& read_options, const FileMetaData& f, TableReader::BatchKey* keys,
                size_t n, TableReader::PinningGetHandler handle);

  // The reader of file f, opening it if needed.
  Status FindTable(const FileMetaData& f, std::shared_ptr<TableReader>* reader);

  // The reader of file f for one call. With an unbounded cache the reader is kept in f
  // itself (FileMetaData::table_reader) after its first use, and found there without a
  // lock or a reference count: f, which the caller keeps alive, keeps it alive. Otherwise
  // *hold keeps it for the caller.
  Status ReaderFor(const FileMetaData& f, std::shared_ptr<TableReader>* hold, TableReader** reader);

  // Drops the cached reader of file_number, if any (the file is being deleted).
  void Evict(uint64_t file_number);

  // Readers held by the cache now.
  size_t TEST_NumCached();

  // Hands f's reader to the key filter builder when it asks for a filter and f has none
  // from its flush (TableReader::WantsKeyFilter). Called after each lookup in f.
  void MaybeBuildKeyFilter(const FileMetaData& f, TableReader* reader,
                           const std::shared_ptr<TableReader>& hold);
  // Waits for the key filters asked for so far (tests).
  void TEST_WaitForKeyFilters() { key_filter_builder_.WaitIdle(); }

 private:
  struct Entry {
    std::shared_ptr<TableReader> reader;
    std::list<uint64_t>::iterator lru_pos;
  };

  Status OpenTable(const FileMetaData& f, std::shared_ptr<TableReader>* reader);

  const std::string dbname_;
  Env* const env_;
  const InternalKeyComparator* const icmp_;
  BlockBasedTableOptions table_options_;
  EnvOptions env_options_;
  Statistics* statistics_ = nullptr;  // options.statistics: block cache and filter tickers
  const size_t capacity_;             // 0: unbounded

  Mutex mu_;
  std::unordered_map<uint64_t, Entry> map_ GUARDED_BY(mu_);
  std::list<uint64_t> lru_ GUARDED_BY(mu_);  // most recently used first
  // Last, so that it stops before anything its builds use goes away.
  KeyFilterBuilder key_filter_builder_;
};

}  // namespace shale
