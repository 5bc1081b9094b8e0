// Env::Default(): the POSIX Env.
//
// Writable files buffer up to writable_file_max_buffer_size bytes in user space, or with
// EnvOptions::use_mmap_writes copy appends into a shared mapping of the file; with
// EnvOptions::use_mmap_reads a random-access file is one read-only mapping. With
// O_DIRECT (EnvOptions::use_direct_reads / use_direct_writes) every transfer is aligned to
// kDirectIOAlignment in offset, length and memory; when the file system refuses O_DIRECT
// (tmpfs, some network file systems) the file silently falls back to buffered I/O and
// use_direct_io() says false. Every fd is opened O_CLOEXEC so that a child process never
// inherits a LOCK file descriptor.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "shale/env.h"
#include "util/mutexlock.h"

namespace shale {
namespace {

// Logical block size assumed for O_DIRECT; 4 KiB satisfies every common device.
constexpr size_t kDirectIOAlignment = 4096;

size_t RoundDown(size_t x, size_t a) { return x & ~(a - 1); }
size_t RoundUp(size_t x, size_t a) { return RoundDown(x + a - 1, a); }

Status PosixError(const std::string& context, int err) {
  switch (err) {
    case ENOENT: return Status::PathNotFound(context, strerror(err));
    case ENOSPC: return Status::NoSpace(context, strerror(err));
    default: return Status::IOError(context, strerror(err));
  }
}

struct AlignedDeleter {
  void operator()(char* p) const { free(p); }
};
using AlignedBuffer = std::unique_ptr<char, AlignedDeleter>;

AlignedBuffer NewAlignedBuffer(size_t size) {
  void* p = nullptr;
  if (posix_memalign(&p, kDirectIOAlignment, size) != 0) return AlignedBuffer();
  return AlignedBuffer(static_cast<char*>(p));
}

// Opens fname with O_DIRECT added to flags when `direct`, retrying without it if the file
// system refuses. *is_direct says what was obtained. Returns the fd or -1 (errno set).
int OpenMaybeDirect(const std::string& fname, int flags, mode_t mode, bool direct,
                    bool* is_direct) {
  *is_direct = false;
  if (direct) {
    int fd;
    do {
      fd = open(fname.c_str(), flags | O_DIRECT, mode);
    } while (fd < 0 && errno == EINTR);
    if (fd >= 0) {
      *is_direct = true;
      return fd;
    }
    if (errno != EINVAL && errno != EOPNOTSUPP) return -1;
  }
  int fd;
  do {
    fd = open(fname.c_str(), flags, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// Drops O_DIRECT from an open fd, for file systems that accept it at open() but refuse
// the transfers.
bool ClearDirectFlag(int fd) {
  int fl = fcntl(fd, F_GETFL);
  return fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_DIRECT) == 0;
}

// pread until n bytes or end of file. Returns bytes read, or -1 with errno set.
ssize_t PreadFully(int fd, char* buf, size_t n, uint64_t offset) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = pread(fd, buf + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(done);
}

// pwrite all n bytes. Returns false with errno set on failure.
bool PwriteFully(int fd, const char* buf, size_t n, uint64_t offset) {
  while (n > 0) {
    ssize_t r = pwrite(fd, buf, n, static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    buf += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return true;
}

// fsync (full) or fdatasync.
Status SyncFd(int fd, bool full, const std::string& fname) {
  if ((full ? fsync(fd) : fdatasync(fd)) != 0) {
    return PosixError(std::string(full ? "While fsync" : "While fdatasync") + ": " + fname, errno);
  }
  return Status::OK();
}

class PosixSequentialFile final : public SequentialFile {
 public:
  PosixSequentialFile(std::string fname, int fd) : fname_(std::move(fname)), fd_(fd) {}
  ~PosixSequentialFile() override { close(fd_); }

  Status Read(size_t n, Slice* result, char* scratch) override {
    size_t done = 0;
    while (done < n) {
      ssize_t r = read(fd_, scratch + done, n - done);
      if (r < 0) {
        if (errno == EINTR) continue;
        *result = Slice(scratch, 0);
        return PosixError("While reading file sequentially: " + fname_, errno);
      }
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    *result = Slice(scratch, done);
    return Status::OK();
  }

  Status Skip(uint64_t n) override {
    if (lseek(fd_, static_cast<off_t>(n), SEEK_CUR) == static_cast<off_t>(-1)) {
      return PosixError("While lseek to skip " + std::to_string(n) + " bytes: " + fname_, errno);
    }
    return Status::OK();
  }

 private:
  const std::string fname_;
  const int fd_;
};

// A whole file mapped read-only (EnvOptions::use_mmap_reads): a read returns a pointer
// into the mapping, with no system call and no copy. The size is the file's at open; the
// file must not shrink while mapped (a read of a page past its end would fault).
class PosixMmapReadableFile final : public RandomAccessFile {
 public:
  PosixMmapReadableFile(const char* base, size_t length) : base_(base), length_(length) {}
  ~PosixMmapReadableFile() override { munmap(const_cast<char*>(base_), length_); }

  Status Read(uint64_t offset, size_t n, Slice* result, char* /*scratch*/) const override {
    if (offset >= length_) {
      *result = Slice();
      return Status::OK();
    }
    *result = Slice(base_ + offset, std::min<uint64_t>(n, length_ - offset));
    return Status::OK();
  }

 private:
  const char* const base_;
  const size_t length_;
};

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string fname, int fd, bool direct)
      : fname_(std::move(fname)), fd_(fd), direct_(direct) {}
  ~PosixRandomAccessFile() override { close(fd_); }

  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    *result = Slice(scratch, 0);
    if (n == 0) return Status::OK();
    if (direct_.load(std::memory_order_relaxed)) {
      Status s = ReadDirect(offset, n, result, scratch);
      if (!s.IsNotSupported()) return s;
    }
    ssize_t r = PreadFully(fd_, scratch, n, offset);
    if (r < 0) return ReadError(offset, n, errno);
    *result = Slice(scratch, static_cast<size_t>(r));
    return Status::OK();
  }

  bool use_direct_io() const override { return direct_.load(std::memory_order_relaxed); }

 private:
  // NotSupported means "the file system refused O_DIRECT; read buffered instead".
  Status ReadDirect(uint64_t offset, size_t n, Slice* result, char* scratch) const {
    const uint64_t start = RoundDown(offset, kDirectIOAlignment);
    const size_t len = RoundUp(offset + n, kDirectIOAlignment) - start;
    AlignedBuffer buf = NewAlignedBuffer(len);
    if (!buf) return Status::IOError("out of memory for a direct read", fname_);
    ssize_t r = PreadFully(fd_, buf.get(), len, start);
    if (r < 0) {
      if (errno == EINVAL && ClearDirectFlag(fd_)) {
        direct_.store(false, std::memory_order_relaxed);
        return Status::NotSupported();
      }
      return ReadError(offset, n, errno);
    }
    const size_t skip = static_cast<size_t>(offset - start);
    const size_t got =
        static_cast<size_t>(r) > skip ? std::min(n, static_cast<size_t>(r) - skip) : 0;
    memcpy(scratch, buf.get() + skip, got);
    *result = Slice(scratch, got);
    return Status::OK();
  }

  Status ReadError(uint64_t offset, size_t n, int err) const {
    return PosixError("While pread offset " + std::to_string(offset) + " len " + std::to_string(n) +
                          ": " + fname_,
                      err);
  }

  const std::string fname_;
  const int fd_;
  mutable std::atomic<bool> direct_;
};

// Buffered (or O_DIRECT) append-only file. With O_DIRECT the buffer is aligned and its
// start always maps to the aligned file offset buffer_offset_; a flush writes the buffer
// padded to the alignment and keeps the partial last block, which the next flush rewrites.
// The padding is cut off by ftruncate at Sync and Close.
class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string fname, int fd, bool direct, size_t buffer_size)
      : fname_(std::move(fname)), fd_(fd), direct_(direct) {
    capacity_ = std::max<size_t>(buffer_size, 1);
    if (direct_) {
      capacity_ = RoundUp(std::max(capacity_, kDirectIOAlignment), kDirectIOAlignment);
      aligned_buf_ = NewAlignedBuffer(capacity_);
      if (!aligned_buf_) {
        ClearDirectFlag(fd_);
        direct_ = false;
      }
    }
    if (!direct_) plain_buf_.reset(new char[capacity_]);
  }

  ~PosixWritableFile() override {
    if (fd_ >= 0) Close().PermitUncheckedError();
  }

  Status Append(const Slice& data) override {
    if (fd_ < 0) return Status::IOError("Append to a closed file", fname_);
    const char* src = data.data();
    size_t left = data.size();
    if (!direct_ && left >= capacity_) {
      // Too big to be worth copying: write it straight after what is buffered.
      Status s = FlushBuffered();
      if (!s.ok()) return s;
      if (!PwriteFully(fd_, src, left, filesize_)) return WriteError(errno);
      filesize_ += left;
      return Status::OK();
    }
    while (left > 0) {
      if (buffered_ == capacity_) {
        Status s = direct_ ? FlushDirect() : FlushBuffered();
        if (!s.ok()) return s;
      }
      size_t n = std::min(left, capacity_ - buffered_);
      memcpy(buffer() + buffered_, src, n);
      buffered_ += n;
      src += n;
      left -= n;
      filesize_ += n;
    }
    return Status::OK();
  }

  Status Flush() override {
    if (fd_ < 0) return Status::OK();
    return direct_ ? FlushDirect() : FlushBuffered();
  }

  Status Sync() override { return SyncImpl(false); }
  Status Fsync() override { return SyncImpl(true); }

  Status Close() override {
    if (fd_ < 0) return Status::OK();
    Status s = Flush();
    if (s.ok() && direct_) s = CutPadding();
    if (close(fd_) != 0 && s.ok()) s = PosixError("While closing file: " + fname_, errno);
    fd_ = -1;
    return s;
  }

  uint64_t GetFileSize() override { return filesize_; }
  bool use_direct_io() const override { return direct_; }

 private:
  char* buffer() { return direct_ ? aligned_buf_.get() : plain_buf_.get(); }

  Status WriteError(int err) { return PosixError("While appending to file: " + fname_, err); }

  Status FlushBuffered() {
    if (buffered_ == 0) return Status::OK();
    const uint64_t offset = filesize_ - buffered_;
    if (!PwriteFully(fd_, plain_buf_.get(), buffered_, offset)) return WriteError(errno);
    buffered_ = 0;
    return Status::OK();
  }

  Status FlushDirect() {
    if (buffered_ == 0) return Status::OK();
    const size_t padded = RoundUp(buffered_, kDirectIOAlignment);
    memset(aligned_buf_.get() + buffered_, 0, padded - buffered_);
    if (!PwriteFully(fd_, aligned_buf_.get(), padded, buffer_offset_)) {
      if (errno != EINVAL || !ClearDirectFlag(fd_)) return WriteError(errno);
      // The file system took O_DIRECT at open() but refuses the transfer: go buffered.
      return SwitchToBuffered();
    }
    const size_t whole = RoundDown(buffered_, kDirectIOAlignment);
    const size_t tail = buffered_ - whole;
    if (whole > 0) {
      memmove(aligned_buf_.get(), aligned_buf_.get() + whole, tail);
      buffer_offset_ += whole;
      buffered_ = tail;
    }
    return Status::OK();
  }

  Status SwitchToBuffered() {
    direct_ = false;
    plain_buf_.reset(new char[capacity_]);
    memcpy(plain_buf_.get(), aligned_buf_.get(), buffered_);
    aligned_buf_.reset();
    // Bytes before buffer_offset_ are on disk; the buffer holds everything after.
    Status s = FlushBuffered();
    if (!s.ok()) return s;
    return CutPadding();
  }

  Status CutPadding() {
    if (ftruncate(fd_, static_cast<off_t>(filesize_)) != 0) {
      return PosixError("While ftruncate to " + std::to_string(filesize_) + ": " + fname_, errno);
    }
    return Status::OK();
  }

  Status SyncImpl(bool full) {
    if (fd_ < 0) return Status::IOError("Sync of a closed file", fname_);
    Status s = Flush();
    if (s.ok() && direct_) s = CutPadding();
    if (!s.ok()) return s;
    return SyncFd(fd_, full, fname_);
  }

  const std::string fname_;
  int fd_;
  bool direct_;
  size_t capacity_;
  std::unique_ptr<char[]> plain_buf_;
  AlignedBuffer aligned_buf_;
  size_t buffered_ = 0;         // bytes in the buffer
  uint64_t buffer_offset_ = 0;  // direct only: file offset of the buffer's first byte
  uint64_t filesize_ = 0;       // bytes appended
};

// Append-only file written through a shared mapping (EnvOptions::use_mmap_writes, which the
// DB asks for its WAL). An append is a memcpy into the page cache with no system call: the
// bytes survive a process crash as soon as Append returns, as a pwrite's would, and a
// machine crash only after Sync (fdatasync/fsync write back pages dirtied through a mapping
// like any others). The file grows a window at a time; each window is allocated with
// fallocate before it is mapped, so that a full disk is a NoSpace status from Append and
// never a SIGBUS on a page fault. Past the last append the file reads as zeros until Close
// cuts it to the appended size; a crash leaves that zeroed tail, which log::Reader takes as
// the clean end of the log. Where the file system refuses fallocate or the mapping, the
// file goes on with a buffer and pwrite for the rest of its life.
class PosixMmapWritableFile final : public WritableFile {
 public:
  PosixMmapWritableFile(std::string fname, int fd) : fname_(std::move(fname)), fd_(fd) {}

  ~PosixMmapWritableFile() override {
    if (fd_ >= 0) Close().PermitUncheckedError();
  }

  Status Append(const Slice& data) override {
    if (fd_ < 0) return Status::IOError("Append to a closed file", fname_);
    const char* src = data.data();
    size_t left = data.size();
    while (left > 0) {
      if (pwrite_only_) {
        pending_.append(src, left);
        filesize_ += left;
        return Status::OK();
      }
      if (filesize_ == window_end_) {
        Status s = NextWindow();
        if (!s.ok()) return s;
        continue;
      }
      const size_t n = std::min<uint64_t>(left, window_end_ - filesize_);
      memcpy(base_ + (filesize_ - window_start_), src, n);
      src += n;
      left -= n;
      filesize_ += n;
    }
    return Status::OK();
  }

  // Mapped, the appended bytes are in the page cache already.
  Status Flush() override {
    if (pending_.empty()) return Status::OK();
    if (!PwriteFully(fd_, pending_.data(), pending_.size(), filesize_ - pending_.size())) {
      return WriteError(errno);
    }
    pending_.clear();
    return Status::OK();
  }

  Status Sync() override { return SyncImpl(false); }
  Status Fsync() override { return SyncImpl(true); }

  Status Close() override {
    if (fd_ < 0) return Status::OK();
    Status s = Flush();
    Status u = Unmap();
    if (s.ok()) s = u;
    if (ftruncate(fd_, static_cast<off_t>(filesize_)) != 0 && s.ok()) {
      s = PosixError("While ftruncate to " + std::to_string(filesize_) + ": " + fname_, errno);
    }
    if (close(fd_) != 0 && s.ok()) s = PosixError("While closing file: " + fname_, errno);
    fd_ = -1;
    return s;
  }

  uint64_t GetFileSize() override { return filesize_; }

 private:
  static constexpr size_t kFirstWindow = 64 << 10;
  static constexpr size_t kMaxWindow = 4 << 20;

  Status WriteError(int err) { return PosixError("While appending to file: " + fname_, err); }

  // Maps the next window, which starts where the last one ended (page-aligned, since every
  // window's size is a multiple of the page size).
  Status NextWindow() {
    Status s = Unmap();
    if (!s.ok()) return s;
    window_start_ = window_end_;
    window_size_ = window_size_ == 0 ? kFirstWindow : std::min(window_size_ * 2, kMaxWindow);
    int r;
    do {
      r = fallocate(fd_, 0, static_cast<off_t>(window_start_), static_cast<off_t>(window_size_));
    } while (r != 0 && errno == EINTR);
    if (r != 0) {
      if (errno == ENOSPC || errno == EDQUOT || errno == EIO) return WriteError(errno);
      pwrite_only_ = true;  // EOPNOTSUPP and the like: this file system cannot preallocate
      return Status::OK();
    }
    void* p = mmap(nullptr, window_size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                   static_cast<off_t>(window_start_));
    if (p == MAP_FAILED) {
      pwrite_only_ = true;
      return Status::OK();
    }
    base_ = static_cast<char*>(p);
    window_end_ = window_start_ + window_size_;
    return Status::OK();
  }

  Status Unmap() {
    if (base_ == nullptr) return Status::OK();
    const int r = munmap(base_, window_size_);
    base_ = nullptr;
    if (r != 0) return PosixError("While munmap: " + fname_, errno);
    return Status::OK();
  }

  Status SyncImpl(bool full) {
    if (fd_ < 0) return Status::IOError("Sync of a closed file", fname_);
    Status s = Flush();
    if (!s.ok()) return s;
    return SyncFd(fd_, full, fname_);
  }

  const std::string fname_;
  int fd_;
  char* base_ = nullptr;       // the mapped window, or null
  uint64_t window_start_ = 0;  // file offset of base_[0]
  uint64_t window_end_ = 0;    // file offset one past the window (the file's size on disk)
  size_t window_size_ = 0;
  uint64_t filesize_ = 0;  // bytes appended
  // Without a mapping: appends wait here for the next Flush.
  bool pwrite_only_ = false;
  std::string pending_;
};

class PosixDirectory final : public Directory {
 public:
  PosixDirectory(std::string name, int fd) : name_(std::move(name)), fd_(fd) {}
  ~PosixDirectory() override { close(fd_); }

  Status Fsync() override {
    if (fsync(fd_) != 0 && errno != EINVAL && errno != ENOTSUP) {
      // EINVAL/ENOTSUP: a file system that cannot sync directories has nothing to sync.
      return PosixError("While fsync directory: " + name_, errno);
    }
    return Status::OK();
  }

 private:
  const std::string name_;
  const int fd_;
};

class PosixFileLock final : public FileLock {
 public:
  PosixFileLock(std::string fname, int fd) : fname(std::move(fname)), fd(fd) {}
  const std::string fname;
  const int fd;
};

class PosixEnv final : public Env {
 public:
  Status NewSequentialFile(const std::string& fname, std::unique_ptr<SequentialFile>* result,
                           const EnvOptions& options) override {
    result->reset();
    int fd;
    do {
      fd = open(fname.c_str(), O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return PosixError("While opening a file for sequentially reading: " + fname, errno);
    *result = std::make_unique<PosixSequentialFile>(fname, fd);
    return Status::OK();
  }

  Status NewRandomAccessFile(const std::string& fname, std::unique_ptr<RandomAccessFile>* result,
                             const EnvOptions& options) override {
    result->reset();
    bool direct;
    int fd = OpenMaybeDirect(fname, O_RDONLY | O_CLOEXEC, 0, options.use_direct_reads, &direct);
    if (fd < 0) return PosixError("While open a file for random read: " + fname, errno);
    // A mapping needs no fd once made; an empty file or a refused mapping is read with pread.
    struct stat st;
    if (options.use_mmap_reads && !direct && fstat(fd, &st) == 0 && st.st_size > 0) {
      const auto length = static_cast<size_t>(st.st_size);
      void* base = mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
      if (base != MAP_FAILED) {
        close(fd);
        *result = std::make_unique<PosixMmapReadableFile>(static_cast<const char*>(base), length);
        return Status::OK();
      }
    }
    *result = std::make_unique<PosixRandomAccessFile>(fname, fd, direct);
    return Status::OK();
  }

  Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result,
                         const EnvOptions& options) override {
    result->reset();
    if (options.use_mmap_writes && !options.use_direct_writes) {
      int fd;
      do {
        fd = open(fname.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      } while (fd < 0 && errno == EINTR);
      if (fd < 0) return PosixError("While open a file for appending: " + fname, errno);
      *result = std::make_unique<PosixMmapWritableFile>(fname, fd);
      return Status::OK();
    }
    bool direct;
    int fd = OpenMaybeDirect(fname, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644,
                             options.use_direct_writes, &direct);
    if (fd < 0) return PosixError("While open a file for appending: " + fname, errno);
    *result = std::make_unique<PosixWritableFile>(fname, fd, direct,
                                                  options.writable_file_max_buffer_size);
    return Status::OK();
  }

  Status NewDirectory(const std::string& name, std::unique_ptr<Directory>* result) override {
    result->reset();
    int fd;
    do {
      fd = open(name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return PosixError("While open directory: " + name, errno);
    *result = std::make_unique<PosixDirectory>(name, fd);
    return Status::OK();
  }

  Status FileExists(const std::string& fname) override {
    if (access(fname.c_str(), F_OK) == 0) return Status::OK();
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) return Status::NotFound();
    return PosixError("While access(): " + fname, err);
  }

  Status GetChildren(const std::string& dir, std::vector<std::string>* result) override {
    result->clear();
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) {
      int err = errno;
      if (err == ENOENT || err == ENOTDIR) return Status::NotFound(dir, strerror(err));
      return PosixError("While opendir: " + dir, err);
    }
    errno = 0;
    while (struct dirent* entry = readdir(d)) {
      if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
      result->emplace_back(entry->d_name);
    }
    int err = errno;
    closedir(d);
    if (err != 0) return PosixError("While readdir: " + dir, err);
    return Status::OK();
  }

  Status DeleteFile(const std::string& fname) override {
    if (unlink(fname.c_str()) != 0) return PosixError("While unlink() file: " + fname, errno);
    return Status::OK();
  }

  Status CreateDir(const std::string& name) override {
    if (mkdir(name.c_str(), 0755) != 0) return PosixError("While mkdir: " + name, errno);
    return Status::OK();
  }

  Status CreateDirIfMissing(const std::string& name) override {
    if (mkdir(name.c_str(), 0755) == 0) return Status::OK();
    int err = errno;
    if (err != EEXIST) return PosixError("While mkdir if missing: " + name, err);
    struct stat st;
    if (stat(name.c_str(), &st) != 0) return PosixError("While stat: " + name, errno);
    if (!S_ISDIR(st.st_mode)) {
      return Status::IOError("While mkdir if missing: " + name, "exists but is not a directory");
    }
    return Status::OK();
  }

  Status DeleteDir(const std::string& name) override {
    if (rmdir(name.c_str()) != 0) return PosixError("While rmdir: " + name, errno);
    return Status::OK();
  }

  Status GetFileSize(const std::string& fname, uint64_t* size) override {
    struct stat st;
    if (stat(fname.c_str(), &st) != 0) {
      *size = 0;
      return PosixError("while stat a file for size: " + fname, errno);
    }
    *size = static_cast<uint64_t>(st.st_size);
    return Status::OK();
  }

  Status RenameFile(const std::string& src, const std::string& target) override {
    if (rename(src.c_str(), target.c_str()) != 0) {
      return PosixError("While renaming a file to " + target + ": " + src, errno);
    }
    return Status::OK();
  }

  Status LinkFile(const std::string& src, const std::string& target) override {
    if (link(src.c_str(), target.c_str()) != 0) {
      // Across devices, or on a file system without hard links: the caller copies.
      if (errno == EXDEV || errno == EPERM || errno == ENOTSUP) {
        return Status::NotSupported("No cross FS links allowed: " + src, strerror(errno));
      }
      return PosixError("While link the file to " + target + ": " + src, errno);
    }
    return Status::OK();
  }

  Status TruncateFile(const std::string& fname, uint64_t size) override {
    if (truncate(fname.c_str(), static_cast<off_t>(size)) != 0) {
      return PosixError("While truncate file to size " + std::to_string(size) + ": " + fname,
                        errno);
    }
    return Status::OK();
  }

  Status LockFile(const std::string& fname, FileLock** lock) override {
    *lock = nullptr;
    MutexLock guard(&locks_mu_);
    // flock() would let this process take the lock twice through two descriptors only if
    // they shared one open file description; the set makes the answer independent of that.
    if (locked_.count(fname) != 0) {
      return Status::IOError("lock hold by current process: " + fname, "No locks available");
    }
    int fd;
    do {
      fd = open(fname.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return PosixError("While open a file for lock: " + fname, errno);
    int r;
    do {
      r = flock(fd, LOCK_EX | LOCK_NB);
    } while (r != 0 && errno == EINTR);
    if (r != 0) {
      int err = errno;
      close(fd);
      return Status::IOError("While lock file: " + fname, strerror(err));
    }
    locked_.insert(fname);
    *lock = new PosixFileLock(fname, fd);
    return Status::OK();
  }

  Status UnlockFile(FileLock* lock) override {
    auto* l = static_cast<PosixFileLock*>(lock);
    MutexLock guard(&locks_mu_);
    Status s;
    if (flock(l->fd, LOCK_UN) != 0) s = PosixError("While unlock file: " + l->fname, errno);
    close(l->fd);
    locked_.erase(l->fname);
    delete l;
    return s;
  }

  Status GetTestDirectory(std::string* path) override {
    const char* env = getenv("TEST_TMPDIR");
    if (env != nullptr && env[0] != '\0') {
      *path = env;
    } else {
      *path = "/tmp/shaletest-" + std::to_string(geteuid());
    }
    return CreateDirIfMissing(*path);
  }

  uint64_t NowMicros() override {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  }

  uint64_t NowNanos() override {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  }

  void SleepForMicroseconds(int micros) override {
    if (micros > 0) std::this_thread::sleep_for(std::chrono::microseconds(micros));
  }

 private:
  Mutex locks_mu_;
  std::set<std::string> locked_ GUARDED_BY(locks_mu_);
};

}  // namespace

Env* Env::Default() {
  // Never destroyed: background threads may still use it during static destruction.
  static PosixEnv* const env = new PosixEnv;
  return env;
}

}  // namespace shale
