#include "tests/testutil/fault_injection_env.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace shale {
namespace {

const char* KindName(FailOn what) {
  switch (what) {
    case FailOn::kRead: return "read";
    case FailOn::kWrite: return "write";
    case FailOn::kSync: return "sync";
    case FailOn::kRename: return "rename";
    case FailOn::kCreate: return "create";
    case FailOn::kDirSync: return "dir sync";
  }
  return "?";
}

std::string StripTrailingSlashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return StripTrailingSlashes(path.substr(0, slash));
}

}  // namespace

namespace fault_injection_internal {

class TestSequentialFile final : public SequentialFile {
 public:
  TestSequentialFile(FaultInjectionTestEnv* env, std::string fname,
                     std::unique_ptr<SequentialFile> target)
      : env_(env), fname_(std::move(fname)), target_(std::move(target)) {}
  Status Read(size_t n, Slice* result, char* scratch) override {
    Status s = env_->MaybeFail(FailOn::kRead, fname_);
    if (!s.ok()) {
      *result = Slice(scratch, 0);
      return s;
    }
    return target_->Read(n, result, scratch);
  }
  Status Skip(uint64_t n) override { return target_->Skip(n); }

 private:
  FaultInjectionTestEnv* const env_;
  const std::string fname_;
  std::unique_ptr<SequentialFile> target_;
};

class TestRandomAccessFile final : public RandomAccessFile {
 public:
  TestRandomAccessFile(FaultInjectionTestEnv* env, std::string fname,
                       std::unique_ptr<RandomAccessFile> target)
      : env_(env), fname_(std::move(fname)), target_(std::move(target)) {}
  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    Status s = env_->MaybeFail(FailOn::kRead, fname_);
    if (!s.ok()) {
      *result = Slice(scratch, 0);
      return s;
    }
    return target_->Read(offset, n, result, scratch);
  }
  bool use_direct_io() const override { return target_->use_direct_io(); }

 private:
  FaultInjectionTestEnv* const env_;
  const std::string fname_;
  std::unique_ptr<RandomAccessFile> target_;
};

class TestWritableFile final : public WritableFile {
 public:
  TestWritableFile(FaultInjectionTestEnv* env, std::string fname,
                   std::unique_ptr<WritableFile> target)
      : env_(env), fname_(std::move(fname)), target_(std::move(target)) {}
  ~TestWritableFile() override {
    if (target_ != nullptr) Close().PermitUncheckedError();
  }

  Status Append(const Slice& data) override {
    Status s = env_->CheckActive();
    if (s.ok()) s = env_->MaybeFail(FailOn::kWrite, fname_);
    if (s.ok()) s = Target()->Append(data);
    if (s.ok()) {
      appended_ += data.size();
      env_->OnAppend(fname_, data.size());
    }
    return s;
  }
  Status Flush() override {
    Status s = env_->CheckActive();
    return s.ok() ? Target()->Flush() : s;
  }
  Status Sync() override { return SyncImpl(false); }
  Status Fsync() override { return SyncImpl(true); }
  Status Close() override {
    if (target_ == nullptr) return Status::OK();
    // Even while inactive the underlying file is closed (its unsynced bytes are dropped by
    // DropUnsyncedFileData), so no descriptor leaks.
    Status active = env_->CheckActive();
    Status s = target_->Close();
    target_.reset();
    return active.ok() ? s : active;
  }
  uint64_t GetFileSize() override { return appended_; }
  bool use_direct_io() const override { return target_ != nullptr && target_->use_direct_io(); }

 private:
  WritableFile* Target() {
    static ClosedFile closed;
    return target_ != nullptr ? target_.get() : &closed;
  }
  class ClosedFile final : public WritableFile {
    Status Append(const Slice&) override { return Status::IOError("file is closed"); }
    Status Flush() override { return Status::IOError("file is closed"); }
    Status Sync() override { return Status::IOError("file is closed"); }
    Status Close() override { return Status::OK(); }
    uint64_t GetFileSize() override { return 0; }
  };

  Status SyncImpl(bool full) {
    Status s = env_->CheckActive();
    if (s.ok()) s = env_->MaybeFail(FailOn::kSync, fname_);
    if (s.ok()) s = full ? Target()->Fsync() : Target()->Sync();
    if (s.ok()) env_->OnSync(fname_, appended_);
    return s;
  }

  FaultInjectionTestEnv* const env_;
  const std::string fname_;
  std::unique_ptr<WritableFile> target_;
  uint64_t appended_ = 0;
};

class TestDirectory final : public Directory {
 public:
  TestDirectory(FaultInjectionTestEnv* env, std::string dir, std::unique_ptr<Directory> target)
      : env_(env), dir_(std::move(dir)), target_(std::move(target)) {}
  Status Fsync() override {
    Status s = env_->CheckActive();
    if (s.ok()) s = env_->MaybeFail(FailOn::kDirSync, dir_);
    if (s.ok()) s = target_->Fsync();
    if (s.ok()) env_->OnDirSync(dir_);
    return s;
  }

 private:
  FaultInjectionTestEnv* const env_;
  const std::string dir_;
  std::unique_ptr<Directory> target_;
};

}  // namespace fault_injection_internal

using fault_injection_internal::TestDirectory;
using fault_injection_internal::TestRandomAccessFile;
using fault_injection_internal::TestSequentialFile;
using fault_injection_internal::TestWritableFile;

FaultInjectionTestEnv::FaultInjectionTestEnv(Env* base) : EnvWrapper(base) {}
FaultInjectionTestEnv::~FaultInjectionTestEnv() = default;

Status FaultInjectionTestEnv::NewSequentialFile(const std::string& fname,
                                                std::unique_ptr<SequentialFile>* result,
                                                const EnvOptions& options) {
  std::unique_ptr<SequentialFile> file;
  Status s = target()->NewSequentialFile(fname, &file, options);
  if (s.ok()) *result = std::make_unique<TestSequentialFile>(this, fname, std::move(file));
  return s;
}

Status FaultInjectionTestEnv::NewRandomAccessFile(const std::string& fname,
                                                  std::unique_ptr<RandomAccessFile>* result,
                                                  const EnvOptions& options) {
  std::unique_ptr<RandomAccessFile> file;
  Status s = target()->NewRandomAccessFile(fname, &file, options);
  if (s.ok()) *result = std::make_unique<TestRandomAccessFile>(this, fname, std::move(file));
  return s;
}

Status FaultInjectionTestEnv::NewWritableFile(const std::string& fname,
                                              std::unique_ptr<WritableFile>* result,
                                              const EnvOptions& options) {
  result->reset();
  Status s = CheckActive();
  if (s.ok()) s = MaybeFail(FailOn::kCreate, fname);
  if (!s.ok()) return s;
  const bool existed = target()->FileExists(fname).ok();
  std::unique_ptr<WritableFile> file;
  s = target()->NewWritableFile(fname, &file, options);
  if (!s.ok()) return s;
  {
    std::lock_guard<std::mutex> l(mu_);
    files_[fname] = FileState();
    if (!existed) {
      DirOp op;
      op.dir = DirOf(fname);
      op.path = fname;
      pending_.push_back(std::move(op));
    }
  }
  *result = std::make_unique<TestWritableFile>(this, fname, std::move(file));
  return Status::OK();
}

Status FaultInjectionTestEnv::NewDirectory(const std::string& name,
                                           std::unique_ptr<Directory>* result) {
  std::unique_ptr<Directory> dir;
  Status s = target()->NewDirectory(name, &dir);
  if (s.ok()) {
    *result = std::make_unique<TestDirectory>(this, StripTrailingSlashes(name), std::move(dir));
  }
  return s;
}

Status FaultInjectionTestEnv::DeleteFile(const std::string& fname) {
  Status s = CheckActive();
  if (!s.ok()) return s;
  DirOp op;
  bool undoable;
  {
    std::lock_guard<std::mutex> l(mu_);
    undoable = realistic_;
  }
  if (undoable) {
    // What survives of the file if the deletion is lost: its synced bytes.
    op.is_delete = true;
    op.path = fname;
    op.dir = DirOf(fname);
    op.had_old_target = ReadFileToString(target(), fname, &op.old_target_data).ok();
  }
  s = target()->DeleteFile(fname);
  if (s.ok()) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(fname);
    if (it != files_.end()) {
      op.old_target_data.resize(std::min<uint64_t>(op.old_target_data.size(), it->second.synced));
      files_.erase(it);
    }
    if (undoable && op.had_old_target) pending_.push_back(std::move(op));
  }
  return s;
}

Status FaultInjectionTestEnv::CreateDir(const std::string& dirname) {
  Status s = CheckActive();
  return s.ok() ? target()->CreateDir(dirname) : s;
}

Status FaultInjectionTestEnv::CreateDirIfMissing(const std::string& dirname) {
  Status s = CheckActive();
  return s.ok() ? target()->CreateDirIfMissing(dirname) : s;
}

Status FaultInjectionTestEnv::DeleteDir(const std::string& dirname) {
  Status s = CheckActive();
  return s.ok() ? target()->DeleteDir(dirname) : s;
}

Status FaultInjectionTestEnv::TruncateFile(const std::string& fname, uint64_t size) {
  Status s = CheckActive();
  if (s.ok()) s = target()->TruncateFile(fname, size);
  if (s.ok()) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(fname);
    if (it != files_.end()) {
      it->second.appended = std::min(it->second.appended, size);
      it->second.synced = std::min(it->second.synced, size);
    }
  }
  return s;
}

Status FaultInjectionTestEnv::RenameFile(const std::string& src, const std::string& target_name) {
  Status s = CheckActive();
  if (s.ok()) s = MaybeFail(FailOn::kRename, src, target_name);
  if (!s.ok()) return s;
  DirOp op;
  op.is_rename = true;
  op.path = target_name;
  op.src = src;
  if (target()->FileExists(target_name).ok()) {
    // Kept so that an undone rename brings the old target back, as a lost directory
    // update would.
    op.had_old_target = ReadFileToString(target(), target_name, &op.old_target_data).ok();
  }
  s = target()->RenameFile(src, target_name);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> l(mu_);
  auto old = files_.find(target_name);
  if (old != files_.end()) {
    op.old_target_tracked = true;
    op.old_target_state = old->second;
    files_.erase(old);
  }
  auto moved = files_.find(src);
  if (moved != files_.end()) {
    files_[target_name] = moved->second;
    files_.erase(src);
  }
  op.dir = DirOf(target_name);
  pending_.push_back(std::move(op));
  return Status::OK();
}

Status FaultInjectionTestEnv::DropUnsyncedFileData() {
  std::map<std::string, FileState> files;
  bool realistic;
  {
    std::lock_guard<std::mutex> l(mu_);
    files = files_;
    realistic = realistic_;
    for (auto& [name, state] : files_) state.appended = state.synced;
  }
  Status result;
  for (const auto& [name, state] : files) {
    uint64_t size;
    if (!target()->GetFileSize(name, &size).ok()) continue;  // deleted meanwhile
    if (size <= state.synced) continue;
    uint64_t keep = state.synced;
    std::string garbage;
    if (realistic) {
      std::lock_guard<std::mutex> l(mu_);
      keep += rnd_.Uniform(static_cast<uint32_t>(std::min<uint64_t>(size - keep, 1 << 30)) + 1);
      if (keep > state.synced && rnd_.OneIn(2)) {
        // A torn last sector: up to 64 of the surviving unsynced bytes are garbage.
        const uint64_t n =
            1 + rnd_.Uniform(static_cast<uint32_t>(std::min<uint64_t>(keep - state.synced, 64)));
        for (uint64_t i = 0; i < n; i++) garbage.push_back(static_cast<char>(rnd_.Next()));
      }
    }
    Status s = target()->TruncateFile(name, keep);
    if (s.ok() && !garbage.empty()) {
      std::string data;
      s = ReadFileToString(target(), name, &data);
      if (s.ok()) {
        data.replace(data.size() - garbage.size(), garbage.size(), garbage);
        s = WriteStringToFile(target(), data, name, false);
      }
    }
    if (!s.ok() && result.ok()) result = s;
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(name);
    if (it != files_.end()) it->second.appended = it->second.synced = keep;
  }
  return result;
}

Status FaultInjectionTestEnv::DeleteFilesCreatedAfterLastDirSync() {
  std::vector<DirOp> pending;
  {
    std::lock_guard<std::mutex> l(mu_);
    pending.swap(pending_);
  }
  Status result;
  auto note = [&result](const Status& s) {
    if (!s.ok() && result.ok()) result = s;
  };
  // Newest first, so that a file created and then renamed is renamed back, then deleted.
  for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
    DirOp& op = *it;
    if (op.is_delete) {
      note(WriteStringToFile(target(), op.old_target_data, op.path, true));
      continue;
    }
    if (!op.is_rename) {
      Status s = target()->DeleteFile(op.path);
      if (!s.IsPathNotFound()) note(s);
      std::lock_guard<std::mutex> l(mu_);
      files_.erase(op.path);
      continue;
    }
    if (target()->FileExists(op.path).ok()) {
      note(target()->RenameFile(op.path, op.src));
      std::lock_guard<std::mutex> l(mu_);
      auto moved = files_.find(op.path);
      if (moved != files_.end()) {
        files_[op.src] = moved->second;
        files_.erase(moved);
      }
    }
    if (op.had_old_target) {
      note(WriteStringToFile(target(), op.old_target_data, op.path, true));
      std::lock_guard<std::mutex> l(mu_);
      if (op.old_target_tracked) files_[op.path] = op.old_target_state;
    }
  }
  return result;
}

Status FaultInjectionTestEnv::SimulatePowerLoss() {
  Status s = DropUnsyncedFileData();
  Status d = DeleteFilesCreatedAfterLastDirSync();
  return s.ok() ? d : s;
}

void FaultInjectionTestEnv::SetFilesystemActive(bool active, Status error) {
  std::lock_guard<std::mutex> l(mu_);
  active_ = active;
  error_ = active ? Status::OK() : std::move(error);
}

void FaultInjectionTestEnv::DeactivateAfter(int n) {
  std::lock_guard<std::mutex> l(mu_);
  deactivate_countdown_ = n;
}

void FaultInjectionTestEnv::SetRealisticPowerLoss(bool on) {
  std::lock_guard<std::mutex> l(mu_);
  realistic_ = on;
}

bool FaultInjectionTestEnv::IsFilesystemActive() {
  std::lock_guard<std::mutex> l(mu_);
  return active_;
}

Status FaultInjectionTestEnv::GetError() {
  std::lock_guard<std::mutex> l(mu_);
  return error_;
}

void FaultInjectionTestEnv::SetFailure(FailOn what, int countdown_or_one_in, FailMode mode,
                                       const std::string& name_filter, Status error) {
  std::lock_guard<std::mutex> l(mu_);
  Failure& f = failures_[static_cast<int>(what)];
  f.armed = true;
  f.mode = mode;
  f.n = countdown_or_one_in > 0 ? countdown_or_one_in : 1;
  f.seen = 0;
  f.filter = name_filter;
  f.error = error.ok() ? Status::IOError(std::string("injected ") + KindName(what) + " error")
                       : std::move(error);
}

void FaultInjectionTestEnv::ClearFailure(FailOn what) {
  std::lock_guard<std::mutex> l(mu_);
  failures_[static_cast<int>(what)] = Failure();
}

void FaultInjectionTestEnv::SetSeed(uint64_t seed) {
  std::lock_guard<std::mutex> l(mu_);
  rnd_ = Random(seed);
}

uint64_t FaultInjectionTestEnv::CallCount(FailOn what) {
  std::lock_guard<std::mutex> l(mu_);
  return calls_[static_cast<int>(what)];
}

uint64_t FaultInjectionTestEnv::InjectedCount(FailOn what) {
  std::lock_guard<std::mutex> l(mu_);
  return injected_[static_cast<int>(what)];
}

int64_t FaultInjectionTestEnv::SyncedSize(const std::string& fname) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = files_.find(fname);
  return it == files_.end() ? -1 : static_cast<int64_t>(it->second.synced);
}

void FaultInjectionTestEnv::ResetState() {
  std::lock_guard<std::mutex> l(mu_);
  active_ = true;
  deactivate_countdown_ = -1;
  error_ = Status::OK();
  files_.clear();
  pending_.clear();
  failures_ = {};
  calls_ = {};
  injected_ = {};
}

Status FaultInjectionTestEnv::CheckActive() {
  std::lock_guard<std::mutex> l(mu_);
  if (active_ && deactivate_countdown_ >= 0 && deactivate_countdown_-- == 0) {
    active_ = false;
    error_ = Status::IOError("injected power loss");
  }
  return active_ ? Status::OK() : error_;
}

Status FaultInjectionTestEnv::MaybeFail(FailOn what, const std::string& name,
                                        const std::string& name2) {
  std::lock_guard<std::mutex> l(mu_);
  const int k = static_cast<int>(what);
  calls_[k]++;
  Failure& f = failures_[k];
  if (!f.armed) return Status::OK();
  if (!f.filter.empty() && name.find(f.filter) == std::string::npos &&
      (name2.empty() || name2.find(f.filter) == std::string::npos)) {
    return Status::OK();
  }
  f.seen++;
  bool fail = false;
  switch (f.mode) {
    case FailMode::kNth: fail = f.seen == f.n; break;
    case FailMode::kFromNth: fail = f.seen >= f.n; break;
    case FailMode::kOneIn: fail = rnd_.OneIn(static_cast<uint32_t>(f.n)); break;
  }
  if (!fail) return Status::OK();
  injected_[k]++;
  return f.error;
}

void FaultInjectionTestEnv::OnAppend(const std::string& fname, uint64_t bytes) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = files_.find(fname);
  if (it != files_.end()) it->second.appended += bytes;
}

void FaultInjectionTestEnv::OnSync(const std::string& fname, uint64_t size) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = files_.find(fname);
  if (it != files_.end()) it->second.synced = std::max(it->second.synced, size);
}

void FaultInjectionTestEnv::OnDirSync(const std::string& dir) {
  std::lock_guard<std::mutex> l(mu_);
  std::erase_if(pending_, [&dir](const DirOp& op) { return op.dir == dir; });
}

}  // namespace shale
