#include "tools/db_stress_env.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <thread>

namespace shale::stress {

namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  const std::string x(suffix);
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Which kill points a file's appends and syncs belong to; false for files without any.
bool FileKillPoints(const std::string& fname, KillPoint* append, KillPoint* sync) {
  const std::string base = BaseName(fname);
  if (EndsWith(base, ".log")) {
    *append = KillPoint::kWalAppend;
    *sync = KillPoint::kWalSync;
  } else if (EndsWith(base, ".sst")) {
    *append = KillPoint::kSstAppend;
    *sync = KillPoint::kSstSync;
  } else if (base.rfind("MANIFEST-", 0) == 0) {
    *append = KillPoint::kManifestAppend;
    *sync = KillPoint::kManifestSync;
  } else {
    return false;
  }
  return true;
}

class KillPointFile final : public WritableFile {
 public:
  KillPointFile(KillPointEnv* env, KillPoint append, KillPoint sync,
                std::unique_ptr<WritableFile> target)
      : env_(env), append_(append), sync_(sync), target_(std::move(target)) {}
  Status Append(const Slice& data) override {
    return Around(append_, [&] { return target_->Append(data); });
  }
  Status Flush() override { return target_->Flush(); }
  Status Sync() override {
    return Around(sync_, [&] { return target_->Sync(); });
  }
  Status Fsync() override {
    return Around(sync_, [&] { return target_->Fsync(); });
  }
  Status Close() override { return target_->Close(); }
  uint64_t GetFileSize() override { return target_->GetFileSize(); }
  bool use_direct_io() const override { return target_->use_direct_io(); }

 private:
  template <typename F>
  Status Around(KillPoint point, F&& call) {
    env_->MaybeKill(point, false);
    Status s = call();
    // A write that returned has reached at least the process's buffer; flush it so a kill
    // "after" means the bytes are in the page cache, as after a real write().
    if (point == append_ && s.ok()) s = target_->Flush();
    env_->MaybeKill(point, true);
    return s;
  }

  KillPointEnv* const env_;
  const KillPoint append_;
  const KillPoint sync_;
  std::unique_ptr<WritableFile> target_;
};

}  // namespace

const char* KillPointName(KillPoint point) {
  switch (point) {
    case KillPoint::kWalAppend: return "WAL append";
    case KillPoint::kWalSync: return "WAL sync";
    case KillPoint::kSstAppend: return "SST append";
    case KillPoint::kSstSync: return "SST sync";
    case KillPoint::kManifestAppend: return "MANIFEST append";
    case KillPoint::kManifestSync: return "MANIFEST sync";
    case KillPoint::kCurrentRename: return "CURRENT rename";
    case KillPoint::kDelete: return "file deletion";
    case KillPoint::kNone: break;
  }
  return "?";
}

bool ParseKillPoint(const std::string& name, KillPoint* point) {
  static const char* const kNames[] = {"wal_append",     "wal_sync",        "sst_append",
                                       "sst_sync",       "manifest_append", "manifest_sync",
                                       "current_rename", "delete"};
  for (int i = 0; i < 8; i++) {
    if (name == kNames[i]) {
      *point = static_cast<KillPoint>(i);
      return true;
    }
  }
  return false;
}

KillPointEnv::KillPointEnv(Env* base, uint32_t one_in, uint64_t seed, KillPoint only)
    : EnvWrapper(base), one_in_(one_in), seed_(seed), only_(only) {}

void KillPointEnv::MaybeKill(KillPoint point, bool after) {
  // The draw happens before the call; a hit that lands "after" is kept for the same
  // thread's next MaybeKill, which is the after-side of the same call.
  thread_local KillPoint armed_after = KillPoint::kNone;
  if (after) {
    if (armed_after != point) return;
    armed_after = KillPoint::kNone;
  } else {
    if (one_in_ == 0 || !enabled_.load(std::memory_order_relaxed)) return;
    if (only_ != KillPoint::kNone && point != only_) return;
    thread_local std::mt19937_64 rng(seed_ ^
                                     std::hash<std::thread::id>()(std::this_thread::get_id()));
    if (rng() % one_in_ != 0) return;
    if (rng() % 2 == 1) {
      armed_after = point;
      return;
    }
  }
  fprintf(stderr, "db_stress: kill point: %s (%s the call)\n", KillPointName(point),
          after ? "after" : "before");
  fflush(stderr);
  kill(getpid(), SIGKILL);
  pause();  // not reached: SIGKILL cannot be caught
}

Status KillPointEnv::NewWritableFile(const std::string& fname,
                                     std::unique_ptr<WritableFile>* result,
                                     const EnvOptions& options) {
  Status s = target()->NewWritableFile(fname, result, options);
  KillPoint append, sync;
  if (s.ok() && FileKillPoints(fname, &append, &sync)) {
    *result = std::make_unique<KillPointFile>(this, append, sync, std::move(*result));
  }
  return s;
}

Status KillPointEnv::RenameFile(const std::string& src, const std::string& target) {
  const bool current = BaseName(target) == "CURRENT";
  if (current) MaybeKill(KillPoint::kCurrentRename, false);
  Status s = EnvWrapper::RenameFile(src, target);
  if (current) MaybeKill(KillPoint::kCurrentRename, true);
  return s;
}

Status KillPointEnv::DeleteFile(const std::string& fname) {
  MaybeKill(KillPoint::kDelete, false);
  Status s = EnvWrapper::DeleteFile(fname);
  MaybeKill(KillPoint::kDelete, true);
  return s;
}

}  // namespace shale::stress
