// TableFileWriter: the one way the DB writes an SST file, for flush, compaction and (later)
// file ingestion. It creates the file with the DB's write settings (direct I/O for flush
// and compaction, writable_file_max_buffer_size), feeds a TableBuilder configured from the
// table factory, records the file's metadata (key range, sequence range, entries, deletions,
// size) as entries arrive, and on Finish syncs the file (fsync with use_fsync), closes it
// and, when given a TableCache, opens it there to prove it reads back (readers then find it
// open). BuildTable drains an iterator into one such file; CompactionJob drives several in
// turn, cutting where it must.
//
// What it does not do: allocate file numbers or protect new files from the obsolete-file
// sweep (the caller registers the number first), sync the directory (the caller calls
// SyncDirectory once for all the files it wrote, before the MANIFEST names them), or delete
// a file that failed (Abandon closes it; DeleteTableFile removes it).
//
// Thread safety: one writer per thread; several may run at once (subcompactions). Options,
// the comparator and the Env must outlive it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "db/version_edit.h"
#include "shale/env.h"
#include "shale/options.h"
#include "table/table_builder.h"
#include "util/dbformat.h"

namespace shale {

class CompactionIterator;
class TableCache;

class TableFileWriter {
 public:
  TableFileWriter(const Options& options, const std::string& dbname,
                  const InternalKeyComparator* icmp);
  // Abandons an open file (see Abandon).
  ~TableFileWriter();
  TableFileWriter(const TableFileWriter&) = delete;
  TableFileWriter& operator=(const TableFileWriter&) = delete;

  // Creates SST file `number` for `level` (is_flush: an L0 file from a memtable, which a
  // filter policy may treat apart; skip_filters: write no filter block). REQUIRES: no file
  // open.
  Status Open(uint64_t number, int level, bool is_flush, bool skip_filters);
  bool is_open() const { return builder_ != nullptr; }
  // Also builds FileMetaData::key_filter for the open file, sized for expected_keys user
  // keys, unless the table gets a filter block. REQUIRES: is_open(), before the first Add.
  void KeepKeyFilter(uint64_t expected_keys);

  // Appends one entry; keys must arrive in increasing internal-key order. A failure shows
  // in Finish's status. REQUIRES: is_open().
  void Add(const Slice& internal_key, SequenceNumber seq, const Slice& value);
  // Adds the range tombstone [begin, end)@seq to the file's range-deletion block, at any
  // point before Finish. The file's boundaries grow to cover it: smallest at most
  // begin@seq, largest at least end@kMaxSequenceNumber (RocksDB's sentinel: it sorts before
  // every entry of the exclusive end key, which the tombstone does not delete), and its
  // sequence range takes seq. An empty range is dropped. REQUIRES: is_open().
  void AddRangeTombstone(const Slice& begin, const Slice& end, SequenceNumber seq);

  // Bytes and entries written so far. REQUIRES: is_open().
  uint64_t FileSize() const { return builder_->FileSize(); }
  uint64_t NumEntries() const { return builder_->NumEntries(); }

  // Completes the file: the table's footer, the sync the options ask for, close, and, with
  // verify_with, an open through that TableCache. On success *meta describes the file; on
  // failure the file is left on disk for the caller to delete. Either way no file is open
  // afterwards. REQUIRES: is_open().
  Status Finish(TableCache* verify_with, FileMetaData* meta);
  // Stops writing the open file, if any, and closes it without syncing; the caller deletes
  // it.
  void Abandon();

 private:
  const Options& options_;
  const std::string dbname_;
  const InternalKeyComparator* const icmp_;
  std::unique_ptr<WritableFile> file_;
  std::unique_ptr<TableBuilder> builder_;
  std::shared_ptr<MemTableFilter> key_filter_;  // null unless KeepKeyFilter
  FileMetaData meta_;                           // of the open file
  // The boundaries the open file's range tombstones need (invalid while it has none).
  InternalKey tombstones_smallest_;
  InternalKey tombstones_largest_;
};

// Writes the entries of iter (from its first) into SST file meta->number at `level`, with a
// key filter (TableFileWriter::KeepKeyFilter) sized for key_filter_keys keys unless that is
// 0, and the range tombstones of `tombstones` (may be null). Returns OK with
// meta->file_size == 0 and no file on disk when iter yields nothing and there is no
// tombstone; on any error the file is deleted. Syncs the file but not the
// directory (see SyncDirectory). verify_with as in TableFileWriter::Finish.
Status BuildTable(const Options& options, const std::string& dbname,
                  const InternalKeyComparator* icmp, CompactionIterator* iter, int level,
                  bool is_flush, uint64_t key_filter_keys, TableCache* verify_with,
                  FileMetaData* meta, const FragmentedRangeTombstones* tombstones = nullptr);

// Removes SST file `number` (and its table-cache entry, with table_cache), ignoring errors:
// for outputs of a failed job, which nothing names.
void DeleteTableFile(Env* env, const std::string& dbname, uint64_t number, TableCache* table_cache);

// Makes the directory entries of files just written durable: a MANIFEST may name them only
// after this. dir may be null (nothing to do).
Status SyncDirectory(Directory* dir);

}  // namespace shale
