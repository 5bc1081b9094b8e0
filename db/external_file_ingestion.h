// ExternalFileIngestion: one family's part of DB::IngestExternalFile(s): the files
// SstFileWriter made, checked, brought into the DB directory, given a level and a sequence
// number, and described in a VersionEdit that the DB records. DBImpl runs the steps in
// order and holds what each needs (db_impl_files.cc):
//
//   1. Prepare, with no lock: each file opened and read through (a finished SstFileWriter
//      file of the family's comparator, user keys strictly ascending, every sequence 0,
//      blocks checked with verify_checksums_before_ingest), then hard-linked or copied
//      into the DB directory under a number the DB reserved (and keeps from the obsolete
//      file sweep), copies synced. The caller syncs the directory.
//   2. OverlapsMemtables, with writes held: whether a memtable holds a key, or a range
//      tombstone, in a file's range. The DB then flushes those memtables
//      (allow_blocking_flush) or fails.
//   3. Assign, with writes held and the DB mutex: each file's level, the lowest one whose
//      files' ranges it does not overlap, looking no deeper than the first level holding
//      one of its keys or a range tombstone over them (or written into there by a running
//      compaction); and whether it
//      needs a sequence number of its own: when some key of the DB's shares its range
//      (the first such level was found), when a live snapshot must not see it
//      (snapshot_consistency), or when the files overlap each other (then each takes its
//      own, in the order given, and goes to L0). A file that needs none keeps 0, which
//      reads as older than everything, correct since nothing shares its keys. With
//      ingest_behind every file goes to the last level (kept for it, allow_ingest_behind)
//      at 0, older than everything by intent, and needs no flush. Returns
//      how many numbers it needs; the DB allocates them (with the writes still held, so
//      that they come after every write acknowledged before) and calls BuildEdit.
//   4. BuildEdit: the files at their levels, each with its smallest and largest key and
//      sequence (the global sequence number, table/global_seqno.h), and reserves their
//      ranges in the picker until the edit is recorded.
//   5. Finish(ok): success removes the originals (move_files); failure before the
//      MANIFEST write removes the files brought in. (After a failed MANIFEST write the DB
//      keeps them: the edit may have reached the disk.)
//
// A crash anywhere before the MANIFEST write leaves files no Version lists, which the
// sweep at the next Open deletes; after it, the ingestion is complete.
//
// Thread safety: one thread at a time (the ingesting caller's).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "db/compaction_picker.h"
#include "db/version_edit.h"
#include "shale/env.h"
#include "shale/options.h"
#include "util/dbformat.h"

namespace shale {

class MemTable;
class TableCache;
class Version;

class ExternalFileIngestion {
 public:
  // family: the family's options (comparator, table factory, use_fsync) and icmp; both
  // must outlive the job. dbname: the DB directory the files are brought into.
  ExternalFileIngestion(Env* env, std::string dbname, const Options* family,
                        const InternalKeyComparator* icmp, std::vector<std::string> files,
                        const IngestExternalFileOptions& options);

  // InvalidArgument for options that contradict each other or an empty list, before any
  // file is read.
  Status CheckOptions() const;
  size_t NumFiles() const { return files_.size(); }

  // Step 1. numbers: one fresh file number per file, in order.
  Status Prepare(const std::vector<uint64_t>& numbers);

  // Step 2: whether one of mems (a family's active and immutable memtables) holds a key
  // in some file's range.
  bool OverlapsMemtables(const std::vector<MemTable*>& mems) const;
  bool allow_blocking_flush() const { return options_.allow_blocking_flush; }

  // Step 3 for the family's current Version v. base_level: the first level below L0 that
  // compactions fill (dynamic level sizes leave those above it empty). *seqnos: the
  // sequence numbers the files need (0, 1, or one per file). I/O: opens and seeks the
  // files of v whose ranges meet the ingested ones (under the DB mutex, as RocksDB does).
  Status Assign(Version* v, TableCache* table_cache, const CompactionPicker& picker, int base_level,
                bool snapshots_exist, uint64_t* seqnos);
  // Step 4: first is the first of the *seqnos numbers allocated (unused when none).
  void BuildEdit(SequenceNumber first, uint32_t family_id, CompactionPicker* picker);
  VersionEdit* edit() { return &edit_; }

  // Step 5.
  void Finish(bool ingested);

 private:
  struct File {
    std::string external_path;  // as the caller named it
    std::string internal_path;  // in the DB directory, once brought in
    FileMetaData meta;          // number, size, keys (at sequence 0), counts
    bool brought_in = false;
    int level = 0;
    bool needs_seqno = false;
  };

  // Opens f's file and reads it through, filling f->meta.
  Status Inspect(File* f) const;
  // Hard-links or copies f into the DB directory as file meta.number.
  Status BringIn(File* f) const;
  Status CopyFile(const std::string& from, const std::string& to) const;
  // Whether some key of level `level` of v lies in f's user-key range.
  bool KeysOverlap(const Version& v, TableCache* table_cache, int level, const File& f,
                   Status* s) const;
  Slice SmallestUserKey(const File& f) const { return f.meta.smallest.user_key(); }
  Slice LargestUserKey(const File& f) const { return f.meta.largest.user_key(); }

  Env* const env_;
  const std::string dbname_;
  const Options* const family_;
  const InternalKeyComparator* const icmp_;
  const IngestExternalFileOptions options_;
  std::vector<File> files_;
  bool files_overlap_ = false;  // some two files share part of their ranges
  VersionEdit edit_;
};

}  // namespace shale
