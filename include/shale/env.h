// Env: the operating system as the DB sees it: files, directories, locks, time. The DB does
// all its I/O through the Env in Options::env, so tests can substitute an in-memory one
// (NewMemEnv) or one that injects faults.
//
// Thread safety: an Env and its methods may be used from many threads at once. Each file
// object belongs to one thread at a time, except RandomAccessFile, whose Read() may be
// called concurrently.
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "shale/info_log_level.h"
#include "shale/status.h"

namespace shale {

// How a file is opened.
struct EnvOptions {
  // O_DIRECT for reads of SST files (DBOptions::use_direct_reads).
  bool use_direct_reads = false;
  // O_DIRECT for files written by flush and compaction
  // (DBOptions::use_direct_io_for_flush_and_compaction).
  bool use_direct_writes = false;
  // Bytes buffered by a WritableFile before it writes to the OS.
  size_t writable_file_max_buffer_size = 1024 * 1024;
  // Write through a shared mapping of the file: an append reaches the OS (the page cache)
  // without a system call, so it needs no Flush to survive a process crash. The file's
  // size on disk runs ahead of what was appended, in zeros, until Close; a reader of a file
  // left by a crash must take a zeroed tail as its end. Ignored with use_direct_writes, and
  // by an Env that cannot map files. The DB asks for it for its WAL.
  bool use_mmap_writes = false;
  // Read a RandomAccessFile through a read-only mapping of the whole file, made at open:
  // a read is then a pointer into the page cache, with no system call and no copy. For
  // files that do not change while open (the DB asks for it for table files). Ignored with
  // use_direct_reads, and by an Env that cannot map files.
  bool use_mmap_reads = false;
};

// Read from the start to the end, in order.
class SequentialFile {
 public:
  virtual ~SequentialFile() = default;
  // Reads up to n bytes; *result points into scratch (n bytes long) or elsewhere. A short
  // read with OK means end of file.
  virtual Status Read(size_t n, Slice* result, char* scratch) = 0;
  virtual Status Skip(uint64_t n) = 0;
};

// Read at any offset; Read() is safe to call from many threads at once.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // Reads up to n bytes at offset; *result may point into scratch (n bytes long). A short
  // read with OK means end of file.
  virtual Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const = 0;
  virtual bool use_direct_io() const { return false; }
};

// Append-only output. Nothing is durable until Sync() or Fsync() returns OK.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(const Slice& data) = 0;
  // Pushes buffered bytes to the OS (not to the disk).
  virtual Status Flush() = 0;
  // Makes the data durable (fdatasync).
  virtual Status Sync() = 0;
  // Makes data and metadata durable (fsync).
  virtual Status Fsync() { return Sync(); }
  virtual Status Close() = 0;
  // Bytes appended so far.
  virtual uint64_t GetFileSize() = 0;
  virtual bool use_direct_io() const { return false; }
};

// A directory handle, to make its entries (new, renamed, deleted files) durable.
class Directory {
 public:
  virtual ~Directory() = default;
  virtual Status Fsync() = 0;
};

// An exclusive lock on a file, held until UnlockFile.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

// Logger: where the info LOG's lines go (Options::info_log). A line below the logger's
// level is dropped; others are written with a timestamp and the writing thread's id by the
// built-in loggers. Thread safety: every method may be called from any thread; lines from
// different threads are never interleaved within a line.
class Logger {
 public:
  // What GetLogFileSize returns for a logger that does not know its size.
  static constexpr size_t kDoNotSupportGetLogFileSize = static_cast<size_t>(-1);

  explicit Logger(InfoLogLevel log_level = INFO_LEVEL) : log_level_(log_level) {}
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;
  // Subclasses that hold a file should Close() it in their own destructor.
  virtual ~Logger() = default;

  // Writes one line, whatever the level (a trailing newline is added if missing).
  virtual void Logv(const char* format, va_list ap) = 0;
  // Writes one line if log_level >= GetInfoLogLevel(): INFO lines as they are, HEADER
  // lines through LogHeader, others prefixed with "[WARN] ", "[ERROR] "... ERROR and
  // FATAL lines are flushed at once.
  virtual void Logv(const InfoLogLevel log_level, const char* format, va_list ap);
  // A line that starts the log (options, versions); written at every level.
  virtual void LogHeader(const char* format, va_list ap) { Logv(format, ap); }

  // Bytes written so far, or kDoNotSupportGetLogFileSize.
  virtual size_t GetLogFileSize() const { return kDoNotSupportGetLogFileSize; }
  // Pushes buffered lines to the file (to the OS, not to the disk).
  virtual void Flush() {}
  // Flushes and closes the file; later lines are dropped. Idempotent: the first call's
  // status is returned again.
  Status Close();

  virtual InfoLogLevel GetInfoLogLevel() const {
    return log_level_.load(std::memory_order_relaxed);
  }
  virtual void SetInfoLogLevel(const InfoLogLevel log_level) {
    log_level_.store(log_level, std::memory_order_relaxed);
  }

 protected:
  // Does the work of Close(); called at most once.
  virtual Status CloseImpl() { return Status::OK(); }

 private:
  std::atomic<InfoLogLevel> log_level_;
  std::once_flag close_once_;
  Status close_status_;  // written once under close_once_
};

class Env {
 public:
  Env() = default;
  virtual ~Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  // The process-wide POSIX Env. Never delete it.
  static Env* Default();

  virtual Status NewSequentialFile(const std::string& fname,
                                   std::unique_ptr<SequentialFile>* result,
                                   const EnvOptions& options) = 0;
  virtual Status NewRandomAccessFile(const std::string& fname,
                                     std::unique_ptr<RandomAccessFile>* result,
                                     const EnvOptions& options) = 0;
  // Creates or truncates fname.
  virtual Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result,
                                 const EnvOptions& options) = 0;
  virtual Status NewDirectory(const std::string& name, std::unique_ptr<Directory>* result) = 0;

  // OK if it exists, NotFound if not, another error if that could not be told.
  virtual Status FileExists(const std::string& fname) = 0;
  // The names (not paths) of the entries of dir, without "." and "..".
  virtual Status GetChildren(const std::string& dir, std::vector<std::string>* result) = 0;
  virtual Status DeleteFile(const std::string& fname) = 0;
  virtual Status CreateDir(const std::string& dirname) = 0;
  virtual Status CreateDirIfMissing(const std::string& dirname) = 0;
  virtual Status DeleteDir(const std::string& dirname) = 0;
  virtual Status GetFileSize(const std::string& fname, uint64_t* file_size) = 0;
  // Atomically replaces target with src.
  virtual Status RenameFile(const std::string& src, const std::string& target) = 0;
  virtual Status TruncateFile(const std::string& fname, uint64_t size) = 0;
  // Makes target a second name of the file src (a hard link). NotSupported where the
  // file system cannot (another device, an Env without links): callers then copy.
  virtual Status LinkFile(const std::string& /*src*/, const std::string& /*target*/) {
    return Status::NotSupported("LinkFile is not supported for this Env");
  }

  // Takes an exclusive lock on fname (creating it), or fails with IOError if another process
  // or this one already holds it.
  virtual Status LockFile(const std::string& fname, FileLock** lock) = 0;
  virtual Status UnlockFile(FileLock* lock) = 0;

  // A directory for tests' scratch files: $TEST_TMPDIR if set, else one under /tmp.
  virtual Status GetTestDirectory(std::string* path) = 0;

  // Creates (truncating) fname as an info log. The default writes through
  // NewWritableFile; the POSIX Env has its own. *result is shared: the DB and the user
  // may both hold it.
  virtual Status NewLogger(const std::string& fname, std::shared_ptr<Logger>* result);

  virtual uint64_t NowMicros() = 0;
  virtual uint64_t NowNanos() { return NowMicros() * 1000; }
  virtual void SleepForMicroseconds(int micros) = 0;
};

// Passes every call to another Env; subclass it to change a few.
class EnvWrapper : public Env {
 public:
  explicit EnvWrapper(Env* target) : target_(target) {}
  Env* target() const { return target_; }

  Status NewSequentialFile(const std::string& f, std::unique_ptr<SequentialFile>* r,
                           const EnvOptions& o) override {
    return target_->NewSequentialFile(f, r, o);
  }
  Status NewRandomAccessFile(const std::string& f, std::unique_ptr<RandomAccessFile>* r,
                             const EnvOptions& o) override {
    return target_->NewRandomAccessFile(f, r, o);
  }
  Status NewWritableFile(const std::string& f, std::unique_ptr<WritableFile>* r,
                         const EnvOptions& o) override {
    return target_->NewWritableFile(f, r, o);
  }
  Status NewDirectory(const std::string& n, std::unique_ptr<Directory>* r) override {
    return target_->NewDirectory(n, r);
  }
  Status FileExists(const std::string& f) override { return target_->FileExists(f); }
  Status GetChildren(const std::string& d, std::vector<std::string>* r) override {
    return target_->GetChildren(d, r);
  }
  Status DeleteFile(const std::string& f) override { return target_->DeleteFile(f); }
  Status CreateDir(const std::string& d) override { return target_->CreateDir(d); }
  Status CreateDirIfMissing(const std::string& d) override {
    return target_->CreateDirIfMissing(d);
  }
  Status DeleteDir(const std::string& d) override { return target_->DeleteDir(d); }
  Status GetFileSize(const std::string& f, uint64_t* s) override {
    return target_->GetFileSize(f, s);
  }
  Status RenameFile(const std::string& s, const std::string& t) override {
    return target_->RenameFile(s, t);
  }
  Status TruncateFile(const std::string& f, uint64_t size) override {
    return target_->TruncateFile(f, size);
  }
  Status LinkFile(const std::string& s, const std::string& t) override {
    return target_->LinkFile(s, t);
  }
  Status LockFile(const std::string& f, FileLock** l) override { return target_->LockFile(f, l); }
  Status UnlockFile(FileLock* l) override { return target_->UnlockFile(l); }
  Status GetTestDirectory(std::string* p) override { return target_->GetTestDirectory(p); }
  Status NewLogger(const std::string& f, std::shared_ptr<Logger>* r) override {
    return target_->NewLogger(f, r);
  }
  uint64_t NowMicros() override { return target_->NowMicros(); }
  uint64_t NowNanos() override { return target_->NowNanos(); }
  void SleepForMicroseconds(int m) override { target_->SleepForMicroseconds(m); }

 private:
  Env* target_;
};

// An Env that keeps every file in memory and takes time from base_env. The caller owns the
// result and deletes it after every DB using it is closed.
Env* NewMemEnv(Env* base_env);

// Reads the whole file into *data.
Status ReadFileToString(Env* env, const std::string& fname, std::string* data);
// Writes data to fname (truncating), optionally syncing it.
Status WriteStringToFile(Env* env, const Slice& data, const std::string& fname,
                         bool should_sync = false);

}  // namespace shale
