#include "tests/testutil/recording_env.h"

#include <functional>
#include <utility>

namespace shale {

std::string ParentDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool RecordingIgnores(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return base.rfind("LOG", 0) == 0 || base == "LOCK";
}

std::string DescribeOp(const FsOp& op) {
  auto base = [](const std::string& p) {
    const size_t slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
  };
  const std::string id = op.file == 0 ? "" : "#" + std::to_string(op.file);
  switch (op.kind) {
    case FsOp::kCreate:
      return "create " + (id.empty() ? "" : id + " ") + base(op.path) +
             (op.existed ? " (truncating)" : "") + (op.mmap ? " mmap" : "");
    case FsOp::kAppend:
      return "append " + id + " @" + std::to_string(op.offset) + " +" +
             std::to_string(op.data.size());
    case FsOp::kFlush: return "flush " + id;
    case FsOp::kSync: return std::string(op.full ? "fsync " : "fdatasync ") + id;
    case FsOp::kClose: return "close " + id;
    case FsOp::kRename: return "rename " + base(op.path) + " -> " + base(op.path2);
    case FsOp::kDelete: return "unlink " + base(op.path);
    case FsOp::kTruncate: return "truncate " + base(op.path) + " to " + std::to_string(op.size);
    case FsOp::kMkdir: return "mkdir " + op.path;
    case FsOp::kDirSync: return "dirsync " + op.path;
    case FsOp::kLink: return "link " + base(op.path) + " -> " + base(op.path2);
    case FsOp::kRmdir: return "rmdir " + op.path;
  }
  return "?";
}

namespace {

FsOp PathOp(FsOp::Kind kind, const std::string& path) {
  FsOp op;
  op.kind = kind;
  op.path = path;
  return op;
}

class RecordingWritableFile final : public WritableFile {
 public:
  RecordingWritableFile(RecordingEnv* env, uint64_t id, std::unique_ptr<WritableFile> target)
      : env_(env), id_(id), target_(std::move(target)) {}

  Status Append(const Slice& data) override {
    const uint64_t offset = target_->GetFileSize();
    Status s = target_->Append(data);
    if (s.ok()) {
      FsOp op;
      op.kind = FsOp::kAppend;
      op.file = id_;
      op.offset = offset;
      op.data = data.ToString();
      env_->Log(std::move(op));
    }
    return s;
  }
  Status Flush() override { return Simple(target_->Flush(), FsOp::kFlush, false); }
  Status Sync() override { return Simple(target_->Sync(), FsOp::kSync, false); }
  Status Fsync() override { return Simple(target_->Fsync(), FsOp::kSync, true); }
  Status Close() override {
    if (closed_) return target_->Close();
    closed_ = true;
    return Simple(target_->Close(), FsOp::kClose, false);
  }
  uint64_t GetFileSize() override { return target_->GetFileSize(); }
  bool use_direct_io() const override { return target_->use_direct_io(); }

 private:
  Status Simple(Status s, FsOp::Kind kind, bool full) {
    if (s.ok()) {
      FsOp op;
      op.kind = kind;
      op.file = id_;
      op.full = full;
      env_->Log(std::move(op));
    }
    return s;
  }

  RecordingEnv* const env_;
  const uint64_t id_;
  std::unique_ptr<WritableFile> target_;
  bool closed_ = false;
};

class RecordingDirectory final : public Directory {
 public:
  RecordingDirectory(RecordingEnv* env, std::string path, std::unique_ptr<Directory> target)
      : env_(env), path_(std::move(path)), target_(std::move(target)) {}

  Status Fsync() override {
    Status s = target_->Fsync();
    if (s.ok()) env_->Log(PathOp(FsOp::kDirSync, path_));
    return s;
  }

 private:
  RecordingEnv* const env_;
  const std::string path_;
  std::unique_ptr<Directory> target_;
};

}  // namespace

RecordingEnv::RecordingEnv(Env* base) : EnvWrapper(base) {}
RecordingEnv::~RecordingEnv() = default;

uint64_t RecordingEnv::Log(FsOp op) {
  std::lock_guard<std::mutex> l(mu_);
  if (op.kind == FsOp::kCreate) op.file = next_file_++;
  const uint64_t id = op.file;
  ops_.push_back(std::move(op));
  return id;
}

size_t RecordingEnv::OpCount() {
  std::lock_guard<std::mutex> l(mu_);
  return ops_.size();
}

std::vector<FsOp> RecordingEnv::Ops() {
  std::lock_guard<std::mutex> l(mu_);
  return ops_;
}

Status RecordingEnv::NewWritableFile(const std::string& fname,
                                     std::unique_ptr<WritableFile>* result,
                                     const EnvOptions& options) {
  const std::string& path = fname;
  if (RecordingIgnores(path)) return target()->NewWritableFile(fname, result, options);
  const bool existed = target()->FileExists(path).ok();
  std::unique_ptr<WritableFile> file;
  Status s = target()->NewWritableFile(fname, &file, options);
  if (!s.ok()) return s;
  FsOp op;
  op.kind = FsOp::kCreate;
  op.path = path;
  op.existed = existed;
  op.mmap = options.use_mmap_writes && !options.use_direct_writes;
  op.size = options.writable_file_max_buffer_size;
  const uint64_t id = Log(std::move(op));
  *result = std::make_unique<RecordingWritableFile>(this, id, std::move(file));
  return s;
}

Status RecordingEnv::NewDirectory(const std::string& name, std::unique_ptr<Directory>* result) {
  std::unique_ptr<Directory> dir;
  Status s = target()->NewDirectory(name, &dir);
  if (s.ok()) *result = std::make_unique<RecordingDirectory>(this, name, std::move(dir));
  return s;
}

Status RecordingEnv::DeleteFile(const std::string& fname) {
  Status s = target()->DeleteFile(fname);
  if (s.ok() && !RecordingIgnores(fname)) Log(PathOp(FsOp::kDelete, fname));
  return s;
}

Status RecordingEnv::CreateDir(const std::string& dirname) {
  return LogMkdir(dirname, [&] { return target()->CreateDir(dirname); });
}

Status RecordingEnv::CreateDirIfMissing(const std::string& dirname) {
  return LogMkdir(dirname, [&] { return target()->CreateDirIfMissing(dirname); });
}

Status RecordingEnv::LogMkdir(const std::string& dirname, const std::function<Status()>& mkdir) {
  const bool existed = target()->FileExists(dirname).ok();
  Status s = mkdir();
  if (s.ok() && !existed) Log(PathOp(FsOp::kMkdir, dirname));
  return s;
}

Status RecordingEnv::DeleteDir(const std::string& dirname) {
  Status s = target()->DeleteDir(dirname);
  if (s.ok()) Log(PathOp(FsOp::kRmdir, dirname));
  return s;
}

Status RecordingEnv::RenameFile(const std::string& src, const std::string& target_name) {
  Status s = target()->RenameFile(src, target_name);
  if (s.IsNotSupported() && target()->FileExists(src).ok()) s = MoveDirectory(src, target_name);
  if (s.ok() && !RecordingIgnores(src) && !RecordingIgnores(target_name)) {
    FsOp op = PathOp(FsOp::kRename, src);
    op.path2 = target_name;
    Log(std::move(op));
  }
  return s;
}

Status RecordingEnv::MoveDirectory(const std::string& src, const std::string& target_name) {
  std::vector<std::string> children;
  Status s = target()->GetChildren(src, &children);
  if (s.ok()) s = target()->CreateDir(target_name);
  for (size_t i = 0; s.ok() && i < children.size(); i++) {
    const std::string& child = children[i];
    if (child == "." || child == "..") continue;
    s = target()->RenameFile(src + "/" + child, target_name + "/" + child);
    if (s.IsNotSupported()) s = MoveDirectory(src + "/" + child, target_name + "/" + child);
  }
  return s.ok() ? target()->DeleteDir(src) : s;
}

Status RecordingEnv::LinkFile(const std::string& src, const std::string& target_name) {
  Status s = target()->LinkFile(src, target_name);
  if (s.IsNotSupported()) {
    if (target()->FileExists(target_name).ok()) {
      return Status::IOError("While linking " + src + " to " + target_name, "File exists");
    }
    std::string data;
    s = ReadFileToString(target(), src, &data);
    if (s.ok()) s = WriteStringToFile(target(), data, target_name);
  }
  if (s.ok()) {
    FsOp op = PathOp(FsOp::kLink, src);
    op.path2 = target_name;
    Log(std::move(op));
  }
  return s;
}

Status RecordingEnv::TruncateFile(const std::string& fname, uint64_t size) {
  Status s = target()->TruncateFile(fname, size);
  if (s.ok() && !RecordingIgnores(fname)) {
    FsOp op = PathOp(FsOp::kTruncate, fname);
    op.size = size;
    Log(std::move(op));
  }
  return s;
}

Status RecordingEnv::Snapshot(Env* env, const std::string& dir,
                              std::map<std::string, std::string>* files) {
  files->clear();
  std::vector<std::string> children;
  Status s = env->GetChildren(dir, &children);
  if (!s.ok()) return s;
  for (const std::string& child : children) {
    const std::string path = dir + "/" + child;
    if (RecordingIgnores(path)) continue;
    std::string data;
    s = ReadFileToString(env, path, &data);
    if (!s.ok()) return s;
    (*files)[path] = std::move(data);
  }
  return Status::OK();
}

}  // namespace shale
