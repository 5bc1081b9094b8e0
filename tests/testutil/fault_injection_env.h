// FaultInjectionTestEnv: an Env over another one (Env::Default() with real files, or
// NewMemEnv) that can simulate a power loss and inject I/O errors.
//
// Power-loss model. For every file created through this Env it remembers how many bytes
// were appended and how many of them a Sync()/Fsync() made durable; for every directory it
// remembers the entries (files created, renames) made since the directory's last
// Directory::Fsync(). After the DB under test is closed or abandoned:
//  - DropUnsyncedFileData() truncates each tracked file to its last synced size;
//  - DeleteFilesCreatedAfterLastDirSync() deletes the files whose creation was not made
//    durable by a directory sync and undoes such renames (restoring the old target's bytes).
// A rename counts as durable when the target's directory is synced.
//
// SetRealisticPowerLoss(true) makes the loss harsher, as real disks and file systems can:
//  - a file's unsynced bytes are not simply dropped: a random prefix of them survives,
//    and sometimes its last bytes are garbage (a torn sector), never touching synced bytes;
//  - a deletion is undone too unless the directory was synced after it (the file comes
//    back with its synced bytes; it costs a read of the file before each deletion).
// DeactivateAfter(n) turns the file system off after n more mutating calls, for a power
// loss in the middle of something (a recovery, say) without knowing where it is.
//
// Error injection. SetFilesystemActive(false) makes every mutating call (create, append,
// flush, sync, close, rename, delete, truncate, mkdir, directory sync) fail with the given
// error, as a machine that lost power would; reads still work. SetFailure() fails chosen
// calls of one kind, optionally only for files whose path contains a substring.
//
// Thread safety: all methods may be called from many threads; file objects follow the
// usual Env contracts. Files opened through this Env must not outlive it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "shale/env.h"
#include "util/random.h"

namespace shale {

namespace fault_injection_internal {
class TestWritableFile;
class TestDirectory;
class TestSequentialFile;
class TestRandomAccessFile;
}  // namespace fault_injection_internal

// The kinds of call SetFailure can target.
enum class FailOn {
  kRead,     // SequentialFile::Read, RandomAccessFile::Read
  kWrite,    // WritableFile::Append
  kSync,     // WritableFile::Sync and Fsync
  kRename,   // Env::RenameFile (filter matched against source or target)
  kCreate,   // Env::NewWritableFile
  kDirSync,  // Directory::Fsync (filter matched against the directory path)
};
inline constexpr int kNumFailOn = 6;

enum class FailMode {
  kNth,      // the n-th matching call from now fails, once
  kFromNth,  // the n-th matching call from now and every later one fail
  kOneIn,    // each matching call fails with probability 1/n (see SetSeed)
};

class FaultInjectionTestEnv : public EnvWrapper {
 public:
  explicit FaultInjectionTestEnv(Env* base);
  ~FaultInjectionTestEnv() override;

  Status NewSequentialFile(const std::string& fname, std::unique_ptr<SequentialFile>* result,
                           const EnvOptions& options) override;
  Status NewRandomAccessFile(const std::string& fname, std::unique_ptr<RandomAccessFile>* result,
                             const EnvOptions& options) override;
  Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result,
                         const EnvOptions& options) override;
  Status NewDirectory(const std::string& name, std::unique_ptr<Directory>* result) override;
  Status DeleteFile(const std::string& fname) override;
  Status CreateDir(const std::string& dirname) override;
  Status CreateDirIfMissing(const std::string& dirname) override;
  Status DeleteDir(const std::string& dirname) override;
  Status RenameFile(const std::string& src, const std::string& target) override;
  Status TruncateFile(const std::string& fname, uint64_t size) override;

  // Power loss (see the header comment). Both work on the base Env directly.
  Status DropUnsyncedFileData();
  Status DeleteFilesCreatedAfterLastDirSync();
  // DropUnsyncedFileData, then DeleteFilesCreatedAfterLastDirSync.
  Status SimulatePowerLoss();

  void SetFilesystemActive(bool active, Status error = Status::IOError("injected"));
  // After n more mutating calls (append, sync, create, rename, delete, truncate, mkdir,
  // directory sync) every later one fails as if SetFilesystemActive(false) had been called.
  void DeactivateAfter(int n);
  // See the header comment. Uses the seed of SetSeed.
  void SetRealisticPowerLoss(bool on);
  bool IsFilesystemActive();
  Status GetError();  // what calls fail with while inactive

  // Arms a failure for calls of kind `what` (replacing any armed before for that kind).
  // `name_filter`, when not empty, restricts it to files whose path contains it. `error`
  // defaults to IOError("injected <kind> error").
  void SetFailure(FailOn what, int countdown_or_one_in, FailMode mode = FailMode::kNth,
                  const std::string& name_filter = "", Status error = Status::OK());
  void ClearFailure(FailOn what);
  void SetSeed(uint64_t seed);  // for FailMode::kOneIn

  // Calls of a kind seen (whether or not they failed) and failures injected, since the
  // last ResetState().
  uint64_t CallCount(FailOn what);
  uint64_t InjectedCount(FailOn what);

  // The synced size this Env remembers for fname, or -1 if it does not track it.
  int64_t SyncedSize(const std::string& fname);

  // Forgets every tracked file and directory entry, disarms failures, zeroes the counters
  // and makes the file system active.
  void ResetState();

 private:
  friend class fault_injection_internal::TestWritableFile;
  friend class fault_injection_internal::TestDirectory;
  friend class fault_injection_internal::TestSequentialFile;
  friend class fault_injection_internal::TestRandomAccessFile;

  struct FileState {
    uint64_t appended = 0;  // bytes appended through this Env
    uint64_t synced = 0;    // of which made durable
  };
  // A directory entry change not yet made durable.
  struct DirOp {
    std::string dir;  // the directory whose sync makes it durable
    bool is_rename = false;
    bool is_delete = false;       // realistic mode: undo restores old_target_data at path
    std::string path;             // the file created, the rename target or the deleted file
    std::string src;              // rename only
    bool had_old_target = false;  // rename only: target existed and is restored on undo
    std::string old_target_data;
    bool old_target_tracked = false;
    FileState old_target_state;
  };
  struct Failure {
    bool armed = false;
    FailMode mode = FailMode::kNth;
    int n = 1;
    int seen = 0;
    std::string filter;
    Status error;
  };

  // Fails if the file system is inactive.
  Status CheckActive();
  // The injected error for a call of kind `what` on name (or name2), or OK.
  Status MaybeFail(FailOn what, const std::string& name, const std::string& name2 = "");
  void OnAppend(const std::string& fname, uint64_t bytes);
  void OnSync(const std::string& fname, uint64_t size);
  void OnDirSync(const std::string& dir);

  std::mutex mu_;
  bool active_ = true;                           // guarded by mu_
  int deactivate_countdown_ = -1;                // guarded by mu_; < 0: off
  bool realistic_ = false;                       // guarded by mu_
  Status error_;                                 // guarded by mu_
  std::map<std::string, FileState> files_;       // guarded by mu_
  std::vector<DirOp> pending_;                   // oldest first; guarded by mu_
  std::array<Failure, kNumFailOn> failures_;     // guarded by mu_
  std::array<uint64_t, kNumFailOn> calls_{};     // guarded by mu_
  std::array<uint64_t, kNumFailOn> injected_{};  // guarded by mu_
  Random rnd_{301};                              // guarded by mu_
};

}  // namespace shale
