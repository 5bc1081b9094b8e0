// The persistence model, and the generator of every on-disk state a power loss may leave.
//
// Input: the files a recording started from (all durable) and RecordingEnv's log of the
// run's file-system calls. Output: for each crash point p (the first p calls happened, no
// later one did), the states the disk may hold after power is lost at p and the machine
// comes back. The rules are those Linux file systems give in practice, ext4 with
// data=ordered and xfs being the targets; where the two differ the weaker rule is taken.
//
// Data (per inode):
//  D1. Bytes an fsync/fdatasync covered are on disk, and stay (appends never rewrite).
//  D2. Bytes a writer still buffers in user space (appended, not yet pushed by Flush, Sync
//      or Close, and within its buffer) never reach the disk. Through a shared mapping
//      (EnvOptions::use_mmap_writes) an append is in the page cache when it returns.
//  D3. Pushed but unsynced bytes may be on disk in part: the file is cut at any unit
//      boundary (a unit is a sector, 512 bytes, or a page; --unit) or where bytes were
//      pushed (a record's end); later units may be present while earlier ones are not
//      (delayed allocation and writeback order), read back as zeros (a hole in an
//      unwritten extent); the last unit may hold garbage (a torn sector); the size may
//      run past the data, in zeros. At most K units per file are reordered or torn
//      (--k): up to K holes, or one garbage unit.
//  D4. A file written through a mapping and not closed has on disk the size of its last
//      preallocated window (64 KiB, doubling up to 4 MiB, as PosixMmapWritableFile maps),
//      zeros past the data: the zeroed tail the WAL reader takes as a clean end.
//  D5. Truncating an existing file (NewWritableFile on an existing name, TruncateFile) is
//      metadata: until a sync of the file, the disk may hold the old synced bytes.
// Names (create, rename, link, unlink, mkdir, rmdir), per directory:
//  N1. An entry change followed by a sync of its directory is on disk.
//  N2. One not followed by such a sync may or may not have happened, each independently,
//      except that changes touching the same name happen in order (a rename of X never
//      without the create of X before it; a create in a new directory never without the
//      mkdir), and a rename is atomic: the target names the old file or the new, never
//      neither.
//  N3 (--model=journal only). ext4 and xfs journal entry changes in order and commit every
//      earlier one at any fsync/fdatasync: the changes on disk are a prefix of the run's,
//      and a file sync makes all earlier ones durable. The default model (posix) does not
//      assume this, so it admits more states; a violation found only under posix is one a
//      file system that does not order its metadata could show.
//  N4. Syncing a directory makes its own creation (and its ancestors') durable: on ext4 and
//      xfs an fsync of a new directory commits the journal that holds its mkdir. (The DB
//      never syncs the parent of its directory; without N4 every state before the first
//      sync of a journal would lose the whole DB, which no file system in use does.)
//  N5. A hard link is a new entry for the same inode: both names read the same bytes. A
//      directory's rename moves everything in it at once, and the entries inside it are
//      changes of their own: one made before the rename and not yet durable may be missing
//      under the new name (a sync of the directory under its new name makes it durable).
//      Anything made inside the directory's new place needs the rename first.
//
// Bounds. At each crash point the states are the product of one choice per dimension (the
// set of name changes, and each reachable file's contents). Exhaustive: the whole product
// when it has at most max_states_per_point states, every valid subset of name changes
// when there are at most max_exhaustive_names of them, every cut length up to max_lengths
// of them and every hole placement up to max_holes (K=1; with K=2 the pairs of a unit with
// the last one and with its neighbour). Beyond, as B3 bounds its workloads: each dimension is
// varied alone while the others all hold their most-persisted choice, then their least-persisted
// one; the cut lengths are sampled evenly, keeping the append ends. points=kPersistence crashes
// only just before a sync, directory sync, rename, unlink or close and at the end (where the most
// is pending) instead of after every call. The count of states is printed by the callers.
//
// Thread safety: none; a generator is used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tests/testutil/recording_env.h"

namespace shale::crash_states {

enum class NameModel { kPosix, kJournal };
enum class CrashPoints { kAll, kPersistence };

struct GeneratorOptions {
  size_t unit = 512;  // bytes; 512 (sector) or 4096 (page)
  int k = 1;          // reordered or torn units per file
  NameModel model = NameModel::kPosix;
  CrashPoints points = CrashPoints::kAll;
  size_t max_states_per_point = 256;
  size_t max_exhaustive_names = 8;
  size_t max_lengths = 24;
  size_t max_holes = 24;  // hole placements per file
};

// One state a power loss may leave.
struct CrashState {
  size_t point = 0;                          // calls [0, point) happened
  std::map<std::string, std::string> files;  // path -> contents
  std::vector<std::string> dirs;             // directories that exist
  // A file holds a hole followed by data, or garbage: damage in the middle, which
  // kTolerateCorruptedTailRecords and kAbsoluteConsistency may refuse.
  bool damaged = false;
  // WAL files (*.log) that lost bytes pushed to them or do not end where a pushed record
  // ended (cut, hole or garbage; zeros past the end do not count): kAbsoluteConsistency
  // may refuse these states.
  std::vector<std::string> unclean_wals;
  // Of those, the WALs that end inside a record (undamaged bytes of a record whose end
  // never reached the disk, zeros past them aside): if the newest WAL is one,
  // kAbsoluteConsistency must refuse the state.
  std::vector<std::string> torn_wals;
  // What differs from "everything that was pushed reached the disk", for reports.
  std::string description;
};

class CrashStateGenerator {
 public:
  // initial_dirs: directories that exist at the start besides those of the initial files.
  CrashStateGenerator(std::map<std::string, std::string> initial, std::vector<FsOp> ops,
                      GeneratorOptions options, std::vector<std::string> initial_dirs = {});

  // Calls fn with each crash point's states, point by point; fn returns false to stop.
  // States are distinct within a point, not across points. Returns the number of states
  // passed to fn.
  size_t ForEach(const std::function<bool(const CrashState&)>& fn);

  size_t num_ops() const { return ops_.size(); }

 private:
  std::map<std::string, std::string> initial_;
  std::vector<std::string> initial_dirs_;
  std::vector<FsOp> ops_;
  GeneratorOptions options_;
};

// Whether the call is a persistence point (sync, directory sync, rename, unlink, close).
bool IsPersistenceOp(const FsOp& op);

}  // namespace shale::crash_states
