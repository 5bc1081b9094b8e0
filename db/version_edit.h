// VersionEdit: one change to the set of live files and the DB's counters, as recorded in
// the MANIFEST. A MANIFEST is a log of encoded edits; replaying them from the first
// (a full snapshot) to the last gives the current state.
//
// FileMetaData describes one SST file. Versions share it by std::shared_ptr, so it lives as
// long as any Version (or level iterator) that lists the file; `refs` is not used for that.
// With an unbounded table cache it also keeps the file's open table reader
// (KeptTableReader), so that a lookup reaches it without the cache.
//
// Encoding: a sequence of (varint32 tag, fields) pairs. Tags whose kTagSafeToIgnore bit is
// set carry a length-prefixed payload and may be skipped by a reader that does not know them,
// so later versions can add optional fields; any other unknown tag is Corruption.
//
// Thread safety: plain values; one thread at a time, except FileMetaData::table_reader,
// which any reader of the file may set and read.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shale/slice.h"
#include "shale/status.h"
#include "shale/types.h"
#include "util/dbformat.h"

namespace shale {

class MemTableFilter;
class TableReader;

// The open reader of one file, kept with its metadata when the table cache is unbounded
// (max_open_files = -1), as RocksDB keeps it in its file descriptor: a point lookup then
// finds the reader with one atomic load instead of the cache's map and mutex. Set once, by
// the first read of the file, and released with the metadata. A copy starts empty (the
// reader belongs to the metadata in the tree), and so does the target of an assignment.
class KeptTableReader {
 public:
  KeptTableReader() = default;
  KeptTableReader(const KeptTableReader& /*other*/) {}
  KeptTableReader& operator=(const KeptTableReader& /*other*/) {
    delete holder_.exchange(nullptr, std::memory_order_acq_rel);
    return *this;
  }
  ~KeptTableReader() { delete holder_.load(std::memory_order_acquire); }

  // The kept reader, or null. Valid while the metadata lives.
  TableReader* Get() const {
    const std::shared_ptr<TableReader>* h = holder_.load(std::memory_order_acquire);
    return h != nullptr ? h->get() : nullptr;
  }
  // The same as a reference of the caller's own, or null.
  std::shared_ptr<TableReader> GetShared() const {
    const std::shared_ptr<TableReader>* h = holder_.load(std::memory_order_acquire);
    return h != nullptr ? *h : nullptr;
  }
  // Keeps reader unless another thread kept one first; either way returns the one kept.
  TableReader* Keep(const std::shared_ptr<TableReader>& reader) const {
    auto* mine = new std::shared_ptr<TableReader>(reader);
    std::shared_ptr<TableReader>* expected = nullptr;
    if (holder_.compare_exchange_strong(expected, mine, std::memory_order_acq_rel)) {
      return mine->get();
    }
    delete mine;
    return expected->get();
  }

 private:
  // Set once from null; owned. Mutable: keeping a reader changes no observable state of
  // the file's description.
  mutable std::atomic<std::shared_ptr<TableReader>*> holder_{nullptr};
};

struct FileMetaData {
  uint64_t number = 0;
  uint64_t file_size = 0;
  InternalKey smallest;  // smallest internal key in the file
  InternalKey largest;   // largest internal key in the file
  SequenceNumber smallest_seqno = kMaxSequenceNumber;
  SequenceNumber largest_seqno = 0;
  uint64_t num_entries = 0;
  uint64_t num_deletions = 0;
  // Range tombstones in the file's range-deletion block. Readers open the file's tombstones
  // only when it has some.
  uint64_t num_range_deletions = 0;
  // Not persisted. Lifetime is managed by shared_ptr; kept for RocksDB-shaped callers.
  int refs = 0;
  // Not persisted. The file was added to L0: a table reader opened for it then keeps its
  // index and filter pinned (pin_l0_filter_and_index_blocks_in_cache), as RocksDB decides
  // by the level at open.
  bool added_at_level0 = false;
  // Not persisted. The open reader, with an unbounded table cache (see above).
  KeptTableReader table_reader;
  // Not persisted. A filter of the file's user-key hashes (Hash64), held in memory while the
  // file is in L0, where every file whose range covers a key must be searched for it. A
  // flush keeps one when Gets were reaching the memtable it writes (the memtable then had a
  // filter of its own, see MemTable) and the table gets no filter block of its own;
  // VersionBuilder drops it when the file leaves L0. Immutable once the file is in a Version.
  std::shared_ptr<const MemTableFilter> key_filter;
};

class VersionEdit {
 public:
  VersionEdit() = default;

  void Clear() { *this = VersionEdit(); }

  void SetComparatorName(const Slice& name) {
    has_comparator_ = true;
    comparator_ = name.ToString();
  }
  void SetLogNumber(uint64_t num) {
    has_log_number_ = true;
    log_number_ = num;
  }
  void SetPrevLogNumber(uint64_t num) {
    has_prev_log_number_ = true;
    prev_log_number_ = num;
  }
  // Two-phase commit: WALs from this number on may hold prepared transactions recovery must
  // rebuild (or the prepared records a commit in a later WAL refers to), even below the
  // log number.
  void SetMinLogNumberToKeep(uint64_t num) {
    has_min_log_number_to_keep_ = true;
    min_log_number_to_keep_ = num;
  }
  void SetNextFile(uint64_t num) {
    has_next_file_number_ = true;
    next_file_number_ = num;
  }
  void SetLastSequence(SequenceNumber seq) {
    has_last_sequence_ = true;
    last_sequence_ = seq;
  }
  // The column family the edit applies to (its files and log number). Default 0
  // ("default"); not encoded when 0.
  void SetColumnFamily(uint32_t id) { column_family_ = id; }
  // The edit creates the family SetColumnFamily names, under `name`, or drops it.
  void AddColumnFamily(std::string name) {
    is_column_family_add_ = true;
    column_family_name_ = std::move(name);
  }
  void DropColumnFamily() { is_column_family_drop_ = true; }
  // The largest family id ever given: a new family takes the next one, never a dropped one's.
  void SetMaxColumnFamily(uint32_t id) {
    has_max_column_family_ = true;
    max_column_family_ = id;
  }

  // The edit is one of a group written together (an atomic flush across families):
  // `remaining` edits of the group follow it. A reader applies a group only once it has
  // read all of it; a group cut short at the MANIFEST's end was never acknowledged.
  void SetAtomicGroup(uint32_t remaining) {
    is_in_atomic_group_ = true;
    remaining_entries_ = remaining;
  }

  // Adds the file at `level`. REQUIRES: f.smallest and f.largest are valid internal keys.
  void AddFile(int level, const FileMetaData& f) { new_files_.emplace_back(level, f); }
  // Removes file `number` from `level`.
  void DeleteFile(int level, uint64_t number) { deleted_files_.emplace_back(level, number); }

  bool has_comparator() const { return has_comparator_; }
  const std::string& comparator() const { return comparator_; }
  bool has_log_number() const { return has_log_number_; }
  uint64_t log_number() const { return log_number_; }
  bool has_prev_log_number() const { return has_prev_log_number_; }
  uint64_t prev_log_number() const { return prev_log_number_; }
  bool has_min_log_number_to_keep() const { return has_min_log_number_to_keep_; }
  uint64_t min_log_number_to_keep() const { return min_log_number_to_keep_; }
  bool has_next_file_number() const { return has_next_file_number_; }
  uint64_t next_file_number() const { return next_file_number_; }
  bool has_last_sequence() const { return has_last_sequence_; }
  SequenceNumber last_sequence() const { return last_sequence_; }
  uint32_t column_family() const { return column_family_; }
  bool is_column_family_add() const { return is_column_family_add_; }
  const std::string& column_family_name() const { return column_family_name_; }
  bool is_column_family_drop() const { return is_column_family_drop_; }
  bool has_max_column_family() const { return has_max_column_family_; }
  uint32_t max_column_family() const { return max_column_family_; }
  bool is_in_atomic_group() const { return is_in_atomic_group_; }
  uint32_t remaining_entries() const { return remaining_entries_; }
  const std::vector<std::pair<int, FileMetaData>>& new_files() const { return new_files_; }
  const std::vector<std::pair<int, uint64_t>>& deleted_files() const { return deleted_files_; }

  // Appends the encoding to *dst.
  void EncodeTo(std::string* dst) const;
  // Replaces this edit with the one encoded in src. Corruption (saying which field) if src
  // is malformed; the edit is then unspecified.
  Status DecodeFrom(const Slice& src);

  std::string DebugString() const;

  // Tags with this bit set may be skipped by readers that do not know them.
  static constexpr uint32_t kTagSafeToIgnore = 1u << 13;

 private:
  std::string comparator_;
  uint64_t log_number_ = 0;
  uint64_t prev_log_number_ = 0;
  uint64_t min_log_number_to_keep_ = 0;
  uint64_t next_file_number_ = 0;
  SequenceNumber last_sequence_ = 0;
  uint32_t column_family_ = 0;
  std::string column_family_name_;
  uint32_t max_column_family_ = 0;
  uint32_t remaining_entries_ = 0;
  bool is_column_family_add_ = false;
  bool is_column_family_drop_ = false;
  bool is_in_atomic_group_ = false;
  bool has_max_column_family_ = false;
  bool has_comparator_ = false;
  bool has_log_number_ = false;
  bool has_prev_log_number_ = false;
  bool has_min_log_number_to_keep_ = false;
  bool has_next_file_number_ = false;
  bool has_last_sequence_ = false;

  std::vector<std::pair<int, uint64_t>> deleted_files_;
  std::vector<std::pair<int, FileMetaData>> new_files_;
};

}  // namespace shale
