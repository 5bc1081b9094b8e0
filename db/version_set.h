// VersionSet: the current Version of each column family's LSM tree, the counters persisted
// with them (next file number, each family's log number, last sequence, the largest family
// id) and the MANIFEST: a log (db/log_writer.h format) of VersionEdits that starts with a
// full snapshot (one record per family); CURRENT names the live MANIFEST. A family's
// creation and drop are edits too. The default family (id 0) always exists and is set up
// by the constructor; the others are registered as their creation edits are applied or
// read back. It writes the MANIFEST (LogAndApply) and reads it back (Recover); the Versions
// it installs are built by VersionBuilder (db/version_builder.h) and described in
// db/version.h.
//
// Thread safety: the state it shares with the DB is guarded by the DB mutex, which it is
// built with; the methods that need it say REQUIRES(db_mutex_), which the compiler checks.
// NewFileNumber, MarkFileNumberUsed, LastSequence and SetLastSequence are atomic and may be
// called from any thread. LogAndApply may be called by several threads at once: callers
// queue and are served one at a time, in arrival order.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "db/log_writer.h"
#include "db/version.h"
#include "db/version_edit.h"
#include "shale/env.h"
#include "shale/options.h"
#include "util/dbformat.h"
#include "util/mutexlock.h"

namespace shale {

class TableCache;

class VersionSet {
 public:
  // options and icmp must outlive the VersionSet (options->num_levels levels,
  // options->env, options->use_fsync for MANIFEST syncs). table_cache is shared with the DB,
  // and so is db_mutex, the DB mutex that guards the current Version and the log numbers.
  VersionSet(const std::string& dbname, const Options* options, TableCache* table_cache,
             const InternalKeyComparator* icmp, Mutex* db_mutex);
  // Versions still referenced elsewhere are detached and stay usable for reads, but must
  // be released before table_cache is destroyed, and none may be released concurrently
  // with this destructor.
  ~VersionSet();
  VersionSet(const VersionSet&) = delete;
  VersionSet& operator=(const VersionSet&) = delete;

  // What the VersionSet needs of a family besides the default one: the options it was
  // opened with (num_levels), its comparator and its table cache, which must outlive the
  // family's Versions.
  struct FamilySetup {
    const Options* options = nullptr;
    const InternalKeyComparator* icmp = nullptr;
    TableCache* table_cache = nullptr;
  };
  // Recover's question for each family the MANIFEST creates: the setup for (id, name), or
  // nullopt when the caller does not open a family of that name.
  using FamilyLookup =
      std::function<std::optional<FamilySetup>(uint32_t id, const std::string& name)>;

  // Loads the state from CURRENT and the MANIFEST it names. Call once, before any
  // LogAndApply. lookup sets up the families other than the default (null: none may
  // exist). Returns:
  //  - NotFound naming CURRENT if there is no CURRENT file (the DB does not exist);
  //  - Corruption naming CURRENT if it is empty, lacks the final newline, does not name a
  //    MANIFEST, or names one that does not exist;
  //  - Corruption naming the MANIFEST and the offset for a damaged record or an edit that
  //    does not apply (deleting an absent file, overlapping files in a level >= 1, missing
  //    counters); a record cut off at the very end (a crash during an unacknowledged write)
  //    is ignored;
  //  - InvalidArgument naming both comparators if the MANIFEST was written with another
  //    comparator, or if it has files at a level >= options->num_levels;
  //  - InvalidArgument "Column families not opened: a, b" (RocksDB's words) for live
  //    families lookup did not set up, unless all_families is false (a read-only or
  //    secondary instance, which may open some of them): then those are left out.
  // The MANIFEST read is not reused: the first LogAndApply writes a new one. Called again
  // (a secondary catching up), it replaces the state with the MANIFEST's as it is now;
  // Versions still referenced elsewhere stay usable.
  Status Recover(const FamilyLookup& lookup = nullptr, bool all_families = true)
      REQUIRES(db_mutex_);

  // The names of the live families in the DB at dbname, the default first (RocksDB's
  // DB::ListColumnFamilies): NotFound or Corruption as Recover reports them.
  static Status ListColumnFamilies(Env* env, const std::string& dbname,
                                   std::vector<std::string>* names);

  // Applies *edit to the current Version and makes it durable: fills in the counters the
  // edit does not set (log number, previous log number, last sequence; the next file number
  // is always set), appends the edit to the MANIFEST and syncs it, then installs the new
  // Version as current. The first call after Recover (or after a failed call), and the
  // first once the MANIFEST holds options->max_manifest_file_size bytes, writes a
  // new MANIFEST holding a snapshot of the state plus the edit, syncs it and switches
  // CURRENT to it (fsyncing the directory); the old MANIFEST is then below
  // ManifestFileNumber(), for the DB's obsolete-file sweep to delete. The DB mutex is
  // released during the I/O and held again on return; concurrent callers wait their turn.
  //
  // On failure the current Version is unchanged, but the edit may or may not have reached
  // the disk: the caller must not delete files the edit adds until a later LogAndApply
  // succeeds (it writes a fresh MANIFEST without them). An edit that cannot apply (a file
  // that is absent, present twice, overlapping at a level >= 1, or at a level >=
  // num_levels) returns InvalidArgument or Corruption before any I/O.
  //
  // The edit applies to the family it names (edit->column_family()): InvalidArgument if
  // that family does not exist. An edit that creates a family (AddColumnFamily, with an id
  // from NewColumnFamilyId) registers it with `setup`; one that drops it unregisters it,
  // releasing its current Version (readers holding it keep it).
  Status LogAndApply(VersionEdit* edit, const FamilySetup* setup = nullptr) REQUIRES(db_mutex_);
  // The same for several edits at once, written as one atomic group (RocksDB's): a reader
  // applies all of them or, if the MANIFEST ends inside the group, none. A group of more
  // than one edit names each family once and neither creates nor drops one
  // (InvalidArgument otherwise); setup is for a single creating edit, as above. The group
  // applies only if every edit does.
  Status LogAndApply(const std::vector<VersionEdit*>& edits, const FamilySetup* setup = nullptr)
      REQUIRES(db_mutex_);

  // The largest id any family ever had.
  uint32_t MaxColumnFamily() const REQUIRES(db_mutex_) { return max_column_family_; }
  // An id no family has had, for a family about to be created.
  uint32_t NewColumnFamilyId() REQUIRES(db_mutex_) { return ++max_column_family_; }
  // Whether family id is live, and its name.
  bool HasFamily(uint32_t id) const REQUIRES(db_mutex_) { return families_.count(id) > 0; }

  // Checks that every file of the current Version exists with the size the MANIFEST
  // records: Corruption naming the file otherwise. With open_tables, also opens each one
  // through the TableCache (reading and verifying its footer and meta blocks).
  // REQUIRES: no concurrent LogAndApply.
  Status VerifyFilesExist(bool open_tables = false) REQUIRES(db_mutex_);

  // The caller must Ref() it to keep it past the mutex. current(): the default family's;
  // current(id): family id's, or null if it is not live.
  Version* current() const REQUIRES(db_mutex_) { return families_.at(0).current; }
  Version* current(uint32_t id) const REQUIRES(db_mutex_) {
    auto it = families_.find(id);
    return it == families_.end() ? nullptr : it->second.current;
  }

  // Allocates a fresh file number (SST, WAL, MANIFEST).
  uint64_t NewFileNumber() { return next_file_number_.fetch_add(1); }
  // Makes sure NewFileNumber never returns `number` or anything below it.
  void MarkFileNumberUsed(uint64_t number);
  // The number NewFileNumber would return next.
  uint64_t PeekNextFileNumber() const { return next_file_number_.load(); }

  SequenceNumber LastSequence() const { return last_sequence_.load(std::memory_order_acquire); }
  // REQUIRES: seq >= LastSequence().
  void SetLastSequence(SequenceNumber seq) { last_sequence_.store(seq, std::memory_order_release); }

  // WAL files with numbers below a family's log number hold nothing of that family's that is
  // not in an SST file. LogNumber(): the smallest over the live families.
  uint64_t LogNumber() const REQUIRES(db_mutex_);
  uint64_t LogNumber(uint32_t id) const REQUIRES(db_mutex_) {
    auto it = families_.find(id);
    return it == families_.end() ? 0 : it->second.log_number;
  }
  uint64_t PrevLogNumber() const REQUIRES(db_mutex_) { return prev_log_number_; }
  // The oldest WAL recovery must read: the oldest one a family still needed when the last
  // flush or recovery was recorded, or with two-phase commit (allow_2pc) the oldest holding
  // a prepared transaction (its records below the family log numbers are already in SST
  // files). WALs below it may be deleted. 0 when no edit set it: then LogNumber.
  uint64_t MinLogNumberToKeep() const REQUIRES(db_mutex_) { return min_log_number_to_keep_; }
  // The live MANIFEST; thread-safe. A MANIFEST with a larger number may be one being
  // written, and while CURRENT is switched to it, TempFileName(that number) exists: keep
  // MANIFEST and .dbtmp files numbered >= this, delete smaller MANIFESTs.
  uint64_t ManifestFileNumber() const { return manifest_file_number_.load(); }

  // Adds the numbers of the files of every live Version. Thread-safe.
  void AddLiveFiles(std::set<uint64_t>* live);

  int NumLevels() const { return num_levels_; }
  int NumLevelFiles(int level) const REQUIRES(db_mutex_) { return current()->NumFiles(level); }
  const InternalKeyComparator* icmp() const { return icmp_; }
  TableCache* table_cache() const { return table_cache_; }
  // The DB mutex, for the compiler: a caller holding it under another name says so with
  // REQUIRES(versions->db_mutex()).
  Mutex* db_mutex() const RETURN_CAPABILITY(db_mutex_) { return db_mutex_; }

 private:
  friend class Version;
  struct ManifestWriter;

  // One live family: its setup, current Version (referenced) and log number.
  struct Family {
    std::string name;
    FamilySetup setup;
    int num_levels = 0;
    Version* current = nullptr;
    uint64_t log_number = 0;
  };

  Family MakeFamily(const std::string& name, const FamilySetup& setup);
  Version* NewVersion(const Family& f);
  Status VerifyFamilyFilesExist(const Family& family, bool open_tables) REQUIRES(db_mutex_);
  // Builds the Version that results from applying edit to f's current Version.
  Status BuildVersion(const Family& f, const VersionEdit& edit, Version** result)
      REQUIRES(db_mutex_);
  // Writes (mu released) the MANIFEST records for the front writer's edits, with one sync.
  Status WriteManifest(const std::vector<std::string>& snapshot,
                       const std::vector<std::string>& records, uint64_t new_manifest);
  // The snapshot a new MANIFEST starts with: one record per family.
  std::vector<std::string> EncodeSnapshot() const REQUIRES(db_mutex_);
  // Makes v (unreferenced, just built) f's current Version.
  void AppendVersion(Family* f, Version* v) REQUIRES(db_mutex_);

  Env* const env_;
  const std::string dbname_;
  const Options* const options_;
  TableCache* const table_cache_;
  const InternalKeyComparator* const icmp_;
  const int num_levels_;
  Mutex* const db_mutex_;

  std::atomic<uint64_t> next_file_number_{2};
  std::atomic<SequenceNumber> last_sequence_{0};
  std::atomic<uint64_t> manifest_file_number_{0};
  std::atomic<uint64_t> next_version_number_{0};  // numbers the Versions built

  // The live families by id; the default (0) always.
  std::map<uint32_t, Family> families_ GUARDED_BY(db_mutex_);
  uint32_t max_column_family_ GUARDED_BY(db_mutex_) = 0;
  uint64_t prev_log_number_ GUARDED_BY(db_mutex_) = 0;
  uint64_t min_log_number_to_keep_ GUARDED_BY(db_mutex_) = 0;

  // Callers of LogAndApply, served front first.
  std::deque<ManifestWriter*> writers_ GUARDED_BY(db_mutex_);
  // Touched only by the front writer (with or without the DB mutex).
  std::unique_ptr<log::Writer> descriptor_log_;
  std::unique_ptr<Directory> db_dir_;
  uint64_t manifest_size_ = 0;  // bytes in descriptor_log_'s file

  // Every Version not yet deleted, for AddLiveFiles. Versions add and remove themselves.
  Mutex live_mu_;
  std::unordered_set<Version*> live_ GUARDED_BY(live_mu_);
};

}  // namespace shale
