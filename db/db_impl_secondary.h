// DBImplSecondary: a DB opened with DB::OpenAsSecondary, a read-only instance that follows
// a primary (a read-write instance, in this process or another) through the files it
// writes: TryCatchUpWithPrimary reads the primary's CURRENT, MANIFEST and WALs again and
// makes what they hold now the view reads see. Several secondaries may follow one primary;
// a secondary never changes the primary's directory (nothing is written, locked or
// deleted there). Its info LOG is in a directory of its own (secondary_path).
//
// How it follows, and why it is safe while the primary runs: each catch-up loads the
// state whole, as a read-only Open does (DBImplReadOnly::LoadState): the MANIFEST from its
// start (so a MANIFEST the primary rolled over to is found through CURRENT), the table
// files checked present, then every WAL from the oldest the MANIFEST still needs,
// replayed into fresh memtables up to the last whole record (a record the primary is
// still writing reads as the end of the log). The primary may move on between those
// reads: a MANIFEST, table file or WAL it deleted meanwhile makes the load fail, and the
// load is tried again from the MANIFEST, up to kCatchUpAttempts times; if every attempt
// fails, the error is returned and reads go on in the previous view. Families the primary
// creates after Open are ignored, those it drops are dropped here too (their handles go on
// reading their last view), as RocksDB's.
//
// A view already handed out stays readable: with max_open_files = -1 (the default) every
// table file of a state is opened as it is loaded and stays open in the table cache (as
// RocksDB's secondary preloads them), so a file the primary deletes later is still read
// through its open descriptor. With a bounded table cache, a file not open and gone reads
// as IOError, as in RocksDB; TryCatchUpWithPrimary moves past it. A catch-up closes the
// files no Version lists any more.
//
// Snapshots taken on a secondary are not protected on the primary: once a catch-up shows
// a compaction that dropped versions a snapshot would see, reads at that snapshot miss
// them (RocksDB's secondary has the same limit). Reads without a snapshot always see one
// consistent state.
//
// Writes answer NotSupported("Not supported operation in secondary mode."), RocksDB's.
//
// Thread safety: as DBImpl's. TryCatchUpWithPrimary holds the DB mutex while it loads;
// reads do not wait for it.
#pragma once

#include <string>
#include <vector>

#include "db/db_impl_readonly.h"

namespace shale {

class DBImplSecondary final : public DBImplReadOnly {
 public:
  // DB::OpenAsSecondary with families: the DB at dbname must exist (else the error
  // reading its CURRENT file); secondary_path is made if missing and gets the info LOG
  // unless db_options has a Logger. The state is loaded as a read-only Open does, then
  // caught up once (TryCatchUpWithPrimary's answer fails the Open).
  static Status Open(const DBOptions& db_options, const std::string& dbname,
                     const std::string& secondary_path,
                     const std::vector<ColumnFamilyDescriptor>& column_families,
                     std::vector<ColumnFamilyHandle*>* handles, DB** dbptr);

  Status TryCatchUpWithPrimary() override;

  static constexpr int kCatchUpAttempts = 10;

 private:
  DBImplSecondary(const Options& options, const std::string& dbname)
      : DBImplReadOnly(options, dbname, "Not supported operation in secondary mode.") {}
};

}  // namespace shale
