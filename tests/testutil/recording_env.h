// RecordingEnv: an Env over another one that logs every mutating file-system call of a run,
// with its arguments and data, so that tests/crash_states can rebuild every on-disk state a
// power loss could leave at any point of the run (see tests/crash_states/persistence_model.h).
//
// What is logged, in the order the calls completed (each after the base Env returned OK; a
// failed call is not logged, it changed nothing the model needs):
//   create (NewWritableFile, with whether the name existed, whether the file is written
//   through a shared mapping and its write buffer's size), append (file id, offset, bytes),
//   flush (bytes pushed to the OS), sync (fdatasync) and fsync, close, rename (of a file or
//   of a directory, which moves everything in it), unlink, truncate, mkdir, rmdir, directory
//   sync, hard link.
// Files are named by a file id given at create, not by path, because a rename moves an open
// file (its id follows the inode). There is no positioned write in shale's Env, so none is
// logged.
//
// Links and directory renames on a base Env without them (the in-memory Env answers
// NotSupported): LinkFile copies the file's bytes to the new name, which reads the same for
// a file nobody writes again (a table file, the only kind the DB links); renaming a
// directory makes the new one, moves each entry and removes the old one. Either is logged
// as the one call the DB made, so the recording is what a POSIX file system would be asked.
//
// Mapped writes. The WAL is written through a shared mapping (EnvOptions::use_mmap_writes)
// inside the POSIX Env's WritableFile, which no Env wrapper can look into: an append there
// is a memcpy into the page cache. So the mapping is recorded at the Env's abstraction of a
// mapped file: a create carries use_mmap_writes, and for such a file every Append is logged
// as already pushed to the OS (it is, as soon as the memcpy ends) and Sync as the msync-free
// fdatasync the POSIX Env does; the generator adds the zero-filled preallocated tail that
// PosixMmapWritableFile leaves until Close. This holds whatever the base Env is (NewMemEnv
// ignores the flag), so a run on an in-memory Env is recorded as the POSIX Env would write it.
//
// Acknowledgements are not Env calls: the workload reads OpCount() before and after each
// operation and keeps the numbers with its history (tests/crash_states/oracle.h); a crash
// "at point p" means the first p logged calls happened and no later one did.
//
// Ignored: the info LOG (names starting with "LOG"), LOCK files, reads. Paths are logged as
// the DB spells them (it joins dbname and a file name with one slash), not normalized.
//
// Thread safety: all methods may be called from many threads (the DB's background jobs
// write too); the log is appended under one mutex, so its order is a real order in which
// the calls completed. Files opened through this Env must not outlive it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "shale/env.h"

namespace shale {

// One logged file-system call.
struct FsOp {
  enum Kind : uint8_t {
    kCreate,    // path, file, existed, mmap, size = write buffer capacity
    kAppend,    // file, offset, data
    kFlush,     // file: appended bytes reached the OS
    kSync,      // file, full (fsync) or not (fdatasync)
    kClose,     // file
    kRename,    // path -> path2
    kDelete,    // path
    kTruncate,  // path, size
    kMkdir,     // path
    kDirSync,   // path (the directory)
    kLink,      // path (existing) -> path2 (new name of the same file)
    kRmdir,     // path
  };
  Kind kind = kCreate;
  std::string path;
  std::string path2;
  std::string data;
  uint64_t file = 0;    // file id, from 1
  uint64_t offset = 0;  // append offset
  uint64_t size = 0;    // truncate size; create: write buffer capacity
  bool existed = false;
  bool mmap = false;
  bool full = false;
};

// A readable one-line rendering, for reports and tests ("append #3 000012.log @0 +42").
std::string DescribeOp(const FsOp& op);

// The directory holding path ("" for a bare name).
std::string ParentDir(const std::string& path);
// Whether the recording ignores this path (info LOG, LOCK).
bool RecordingIgnores(const std::string& path);

class RecordingEnv : public EnvWrapper {
 public:
  explicit RecordingEnv(Env* base);
  ~RecordingEnv() override;

  Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result,
                         const EnvOptions& options) override;
  Status NewDirectory(const std::string& name, std::unique_ptr<Directory>* result) override;
  Status DeleteFile(const std::string& fname) override;
  Status CreateDir(const std::string& dirname) override;
  Status CreateDirIfMissing(const std::string& dirname) override;
  Status DeleteDir(const std::string& dirname) override;
  Status RenameFile(const std::string& src, const std::string& target) override;
  Status LinkFile(const std::string& src, const std::string& target) override;
  Status TruncateFile(const std::string& fname, uint64_t size) override;

  // Calls logged so far: the crash point just after the last of them.
  size_t OpCount();
  // A copy of the log.
  std::vector<FsOp> Ops();

  // Reads every file of dir (one level) from the base Env: the durable starting state of a
  // recording that begins on an existing DB. Path -> contents.
  static Status Snapshot(Env* env, const std::string& dir,
                         std::map<std::string, std::string>* files);

  // For this Env's file objects: appends op to the log (for kCreate, gives op.file a new
  // id first) and returns the op's file id.
  uint64_t Log(FsOp op);

 private:
  // Runs mkdir and logs it if it created dirname.
  Status LogMkdir(const std::string& dirname, const std::function<Status()>& mkdir);
  // A directory's rename done entry by entry on the base Env (see the top).
  Status MoveDirectory(const std::string& src, const std::string& target);

  std::mutex mu_;
  std::vector<FsOp> ops_;   // guarded by mu_
  uint64_t next_file_ = 1;  // guarded by mu_
};

}  // namespace shale
