// NewMemEnv: an Env whose files and directories live in memory, for fast tests.
//
// It behaves like a POSIX file system where the DB can tell the difference: a file's
// parent directory must exist to create it; open handles keep a deleted or renamed file's
// bytes alive (inode semantics); NewWritableFile on an existing file truncates it in place;
// a writer appends at its own offset. CreateDir creates missing ancestors (unlike mkdir),
// and "/" and "" (the working directory) always exist. Sync is a no-op: nothing is ever
// lost here (FaultInjectionTestEnv on top simulates losses).
//
// Thread safety: one mutex guards the name space; each file has its own mutex for its bytes,
// so RandomAccessFile::Read may run concurrently with an Append to the same file.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "shale/env.h"
#include "util/mutexlock.h"

namespace shale {
namespace {

struct MemFile {
  Mutex mu;
  std::string data GUARDED_BY(mu);

  uint64_t Size() {
    MutexLock l(&mu);
    return data.size();
  }
};

// Collapses repeated slashes and drops a trailing one, so "a//b/" and "a/b" name one file.
std::string Normalize(const std::string& path) {
  std::string out;
  out.reserve(path.size());
  for (char c : path) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out.push_back(c);
  }
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

// The directory holding path ("" for a bare name, "/" for a child of the root).
std::string Parent(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status NoEntry(const std::string& context, const std::string& path) {
  return Status::PathNotFound(context + ": " + path, "No such file or directory");
}

class MemSequentialFile final : public SequentialFile {
 public:
  explicit MemSequentialFile(std::shared_ptr<MemFile> file) : file_(std::move(file)) {}

  Status Read(size_t n, Slice* result, char* scratch) override {
    MutexLock l(&file_->mu);
    const size_t size = file_->data.size();
    size_t avail = pos_ < size ? size - pos_ : 0;
    size_t got = std::min(n, avail);
    if (got > 0) memcpy(scratch, file_->data.data() + pos_, got);
    pos_ += got;
    *result = Slice(scratch, got);
    return Status::OK();
  }

  Status Skip(uint64_t n) override {
    pos_ += n;
    return Status::OK();
  }

 private:
  std::shared_ptr<MemFile> file_;
  uint64_t pos_ = 0;
};

class MemRandomAccessFile final : public RandomAccessFile {
 public:
  explicit MemRandomAccessFile(std::shared_ptr<MemFile> file) : file_(std::move(file)) {}

  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    MutexLock l(&file_->mu);
    const size_t size = file_->data.size();
    size_t got = offset < size ? std::min<uint64_t>(n, size - offset) : 0;
    if (got > 0) memcpy(scratch, file_->data.data() + offset, got);
    *result = Slice(scratch, got);
    return Status::OK();
  }

 private:
  std::shared_ptr<MemFile> file_;
};

class MemWritableFile final : public WritableFile {
 public:
  MemWritableFile(std::string fname, std::shared_ptr<MemFile> file)
      : fname_(std::move(fname)), file_(std::move(file)) {}

  Status Append(const Slice& data) override {
    if (closed_) return Status::IOError("Append to a closed file", fname_);
    MutexLock l(&file_->mu);
    std::string& d = file_->data;
    if (d.size() < offset_ + data.size()) d.resize(offset_ + data.size());
    if (!data.empty()) memcpy(&d[offset_], data.data(), data.size());
    offset_ += data.size();
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override {
    if (closed_) return Status::IOError("Sync of a closed file", fname_);
    return Status::OK();
  }
  Status Close() override {
    closed_ = true;
    return Status::OK();
  }
  uint64_t GetFileSize() override { return offset_; }

 private:
  const std::string fname_;
  std::shared_ptr<MemFile> file_;
  uint64_t offset_ = 0;
  bool closed_ = false;
};

class MemDirectory final : public Directory {
 public:
  Status Fsync() override { return Status::OK(); }
};

class MemFileLock final : public FileLock {
 public:
  explicit MemFileLock(std::string f) : fname(std::move(f)) {}
  const std::string fname;
};

class MemEnv final : public Env {
 public:
  explicit MemEnv(Env* base) : base_(base != nullptr ? base : Env::Default()) {}

  Status NewSequentialFile(const std::string& fname, std::unique_ptr<SequentialFile>* result,
                           const EnvOptions&) override {
    result->reset();
    std::shared_ptr<MemFile> f;
    Status s = Find(fname, "While opening a file for sequentially reading", &f);
    if (s.ok()) *result = std::make_unique<MemSequentialFile>(std::move(f));
    return s;
  }

  Status NewRandomAccessFile(const std::string& fname, std::unique_ptr<RandomAccessFile>* result,
                             const EnvOptions&) override {
    result->reset();
    std::shared_ptr<MemFile> f;
    Status s = Find(fname, "While open a file for random read", &f);
    if (s.ok()) *result = std::make_unique<MemRandomAccessFile>(std::move(f));
    return s;
  }

  Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result,
                         const EnvOptions&) override {
    result->reset();
    std::shared_ptr<MemFile> f;
    Status s = CreateOrTruncate(Normalize(fname), true, &f);
    if (s.ok()) *result = std::make_unique<MemWritableFile>(fname, std::move(f));
    return s;
  }

  Status NewDirectory(const std::string& name, std::unique_ptr<Directory>* result) override {
    result->reset();
    MutexLock l(&mu_);
    if (!DirExists(Normalize(name))) return NoEntry("While open directory", name);
    *result = std::make_unique<MemDirectory>();
    return Status::OK();
  }

  Status FileExists(const std::string& fname) override {
    const std::string p = Normalize(fname);
    MutexLock l(&mu_);
    if (files_.count(p) != 0 || DirExists(p)) return Status::OK();
    return Status::NotFound();
  }

  Status GetChildren(const std::string& dir, std::vector<std::string>* result) override {
    result->clear();
    const std::string d = Normalize(dir);
    MutexLock l(&mu_);
    if (!DirExists(d)) return Status::NotFound(dir, "No such file or directory");
    for (const auto& [path, file] : files_) {
      if (Parent(path) == d) result->push_back(path.substr(ChildOffset(d)));
    }
    for (const auto& path : dirs_) {
      if (path != d && Parent(path) == d) result->push_back(path.substr(ChildOffset(d)));
    }
    return Status::OK();
  }

  Status DeleteFile(const std::string& fname) override {
    const std::string p = Normalize(fname);
    MutexLock l(&mu_);
    if (files_.erase(p) == 0) {
      if (DirExists(p)) return Status::IOError("While unlink() file: " + fname, "Is a directory");
      return NoEntry("While unlink() file", fname);
    }
    return Status::OK();
  }

  Status CreateDir(const std::string& dirname) override {
    const std::string p = Normalize(dirname);
    MutexLock l(&mu_);
    if (DirExists(p) || files_.count(p) != 0) {
      return Status::IOError("While mkdir: " + dirname, "File exists");
    }
    return AddDirWithAncestors(p, dirname);
  }

  Status CreateDirIfMissing(const std::string& dirname) override {
    const std::string p = Normalize(dirname);
    MutexLock l(&mu_);
    if (DirExists(p)) return Status::OK();
    return AddDirWithAncestors(p, dirname);
  }

  Status DeleteDir(const std::string& dirname) override {
    const std::string p = Normalize(dirname);
    MutexLock l(&mu_);
    if (dirs_.count(p) == 0) return NoEntry("While rmdir", dirname);
    for (const auto& entry : files_) {
      if (Parent(entry.first) == p) {
        return Status::IOError("While rmdir: " + dirname, "Directory not empty");
      }
    }
    for (const auto& d : dirs_) {
      if (d != p && Parent(d) == p) {
        return Status::IOError("While rmdir: " + dirname, "Directory not empty");
      }
    }
    dirs_.erase(p);
    return Status::OK();
  }

  Status GetFileSize(const std::string& fname, uint64_t* size) override {
    *size = 0;
    std::shared_ptr<MemFile> f;
    Status s = Find(fname, "while stat a file for size", &f);
    if (s.ok()) *size = f->Size();
    return s;
  }

  Status RenameFile(const std::string& src, const std::string& target) override {
    const std::string s = Normalize(src);
    const std::string t = Normalize(target);
    MutexLock l(&mu_);
    auto it = files_.find(s);
    if (it == files_.end()) {
      if (DirExists(s)) return Status::NotSupported("MemEnv cannot rename directories", src);
      return NoEntry("While renaming a file to " + target, src);
    }
    if (!DirExists(Parent(t))) return NoEntry("While renaming a file to " + target, src);
    if (DirExists(t))
      return Status::IOError("While renaming a file to " + target, "Is a directory");
    if (s == t) return Status::OK();
    std::shared_ptr<MemFile> f = std::move(it->second);
    files_.erase(it);
    files_[t] = std::move(f);
    return Status::OK();
  }

  Status TruncateFile(const std::string& fname, uint64_t size) override {
    std::shared_ptr<MemFile> f;
    Status s = Find(fname, "While truncate file to size " + std::to_string(size), &f);
    if (!s.ok()) return s;
    MutexLock l(&f->mu);
    f->data.resize(size);
    return Status::OK();
  }

  Status LockFile(const std::string& fname, FileLock** lock) override {
    *lock = nullptr;
    const std::string p = Normalize(fname);
    {
      MutexLock l(&mu_);
      if (locked_.count(p) != 0) {
        return Status::IOError("lock hold by current process: " + fname, "No locks available");
      }
    }
    std::shared_ptr<MemFile> f;
    Status s = CreateOrTruncate(p, false, &f);
    if (!s.ok()) return s;
    MutexLock l(&mu_);
    if (!locked_.insert(p).second) {
      return Status::IOError("lock hold by current process: " + fname, "No locks available");
    }
    *lock = new MemFileLock(p);
    return Status::OK();
  }

  Status UnlockFile(FileLock* lock) override {
    auto* l = static_cast<MemFileLock*>(lock);
    {
      MutexLock g(&mu_);
      locked_.erase(l->fname);
    }
    delete l;
    return Status::OK();
  }

  Status GetTestDirectory(std::string* path) override {
    *path = "/test";
    return CreateDirIfMissing(*path);
  }

  uint64_t NowMicros() override { return base_->NowMicros(); }
  uint64_t NowNanos() override { return base_->NowNanos(); }
  void SleepForMicroseconds(int micros) override { base_->SleepForMicroseconds(micros); }

 private:
  bool DirExists(const std::string& p) const REQUIRES(mu_) {
    return p.empty() || p == "/" || p == "." || dirs_.count(p) != 0;
  }

  static size_t ChildOffset(const std::string& dir) {
    if (dir.empty()) return 0;
    return dir == "/" ? 1 : dir.size() + 1;
  }

  Status AddDirWithAncestors(const std::string& p, const std::string& dirname) REQUIRES(mu_) {
    for (std::string d = p; !DirExists(d); d = Parent(d)) {
      if (files_.count(d) != 0) {
        return Status::IOError("While mkdir: " + dirname, "Not a directory");
      }
    }
    for (std::string d = p; !DirExists(d); d = Parent(d)) dirs_.insert(d);
    return Status::OK();
  }

  Status Find(const std::string& fname, const std::string& context, std::shared_ptr<MemFile>* out) {
    const std::string p = Normalize(fname);
    MutexLock l(&mu_);
    auto it = files_.find(p);
    if (it == files_.end()) {
      if (DirExists(p)) return Status::IOError(context + ": " + fname, "Is a directory");
      return NoEntry(context, fname);
    }
    *out = it->second;
    return Status::OK();
  }

  // Opens p for writing, creating it if missing; `truncate` empties an existing file.
  Status CreateOrTruncate(const std::string& p, bool truncate, std::shared_ptr<MemFile>* out) {
    MutexLock l(&mu_);
    if (DirExists(p))
      return Status::IOError("While open a file for appending: " + p, "Is a directory");
    auto it = files_.find(p);
    if (it != files_.end()) {
      if (truncate) {
        MutexLock fl(&it->second->mu);
        it->second->data.clear();
      }
      *out = it->second;
      return Status::OK();
    }
    if (!DirExists(Parent(p))) return NoEntry("While open a file for appending", p);
    auto f = std::make_shared<MemFile>();
    files_[p] = f;
    *out = std::move(f);
    return Status::OK();
  }

  Env* const base_;
  Mutex mu_;
  std::map<std::string, std::shared_ptr<MemFile>> files_ GUARDED_BY(mu_);
  std::set<std::string> dirs_ GUARDED_BY(mu_);
  std::set<std::string> locked_ GUARDED_BY(mu_);
};

}  // namespace

Env* NewMemEnv(Env* base_env) { return new MemEnv(base_env); }

}  // namespace shale
