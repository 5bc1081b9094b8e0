#include "utilities/backup/backup_copy.h"

#include <algorithm>
#include <memory>

#include "util/crc32c.h"

namespace shale {

namespace {

constexpr size_t kBufferSize = 1 << 20;

// Reads up to `limit` bytes of in, handing each chunk to `sink` and folding it into
// *digest.
Status Pump(SequentialFile* in, uint64_t limit, CopyProgress* progress,
            const std::function<Status(const Slice&)>& sink, FileDigest* digest) {
  std::unique_ptr<char[]> buffer(new char[kBufferSize]);
  *digest = FileDigest();
  uint64_t left = limit;
  while (left > 0) {
    Slice chunk;
    Status s =
        in->Read(static_cast<size_t>(std::min<uint64_t>(left, kBufferSize)), &chunk, buffer.get());
    if (!s.ok()) return s;
    if (chunk.empty()) break;
    digest->crc32c = crc32c::Extend(digest->crc32c, chunk.data(), chunk.size());
    digest->size += chunk.size();
    left -= chunk.size();
    s = sink(chunk);
    if (s.ok() && progress != nullptr) s = progress->Add(chunk.size());
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace

Status CopyProgress::Add(uint64_t bytes) {
  if (stop_ != nullptr && stop_->load(std::memory_order_relaxed)) {
    return Status::Incomplete("Backup stopped");
  }
  if (!callback_) return Status::OK();
  MutexLock l(&mu_);
  since_last_call_ += bytes;
  while (since_last_call_ >= interval_) {
    since_last_call_ -= interval_;
    try {
      callback_();
    } catch (const std::exception& e) {
      return Status::Aborted("Exception in callback: " + std::string(e.what()));
    } catch (...) {
      return Status::Aborted("Unknown exception in callback");
    }
  }
  return Status::OK();
}

Status CopyFileWithChecksum(Env* src_env, const std::string& src, Env* dst_env,
                            const std::string& dst, uint64_t limit, bool sync,
                            CopyProgress* progress, FileDigest* digest) {
  std::unique_ptr<SequentialFile> in;
  Status s = src_env->NewSequentialFile(src, &in, EnvOptions());
  if (!s.ok()) return s;
  std::unique_ptr<WritableFile> out;
  s = dst_env->NewWritableFile(dst, &out, EnvOptions());
  if (!s.ok()) return s;
  s = Pump(
      in.get(), limit, progress, [&out](const Slice& chunk) { return out->Append(chunk); }, digest);
  if (s.ok() && sync) s = out->Sync();
  Status closed = out->Close();
  return s.ok() ? closed : s;
}

Status ChecksumFile(Env* env, const std::string& path, uint64_t limit, CopyProgress* progress,
                    FileDigest* digest) {
  std::unique_ptr<SequentialFile> in;
  Status s = env->NewSequentialFile(path, &in, EnvOptions());
  if (!s.ok()) return s;
  return Pump(
      in.get(), limit, progress, [](const Slice&) { return Status::OK(); }, digest);
}

Status SyncDirectory(Env* env, const std::string& dir) {
  std::unique_ptr<Directory> d;
  Status s = env->NewDirectory(dir, &d);
  return s.ok() ? d->Fsync() : s;
}

Status JobRunner::RunAll(std::vector<std::function<Status()>> jobs) {
  if (jobs.empty()) return Status::OK();
  std::vector<Status> results(jobs.size());
  std::atomic<bool> failed{false};
  Mutex mu;
  CondVar done_cv(&mu);
  size_t left = jobs.size();  // guarded by mu
  for (size_t i = 0; i < jobs.size(); i++) {
    pool_->Schedule([&, i] {
      Status s;
      if (!failed.load(std::memory_order_acquire)) s = jobs[i]();
      if (!s.ok()) failed.store(true, std::memory_order_release);
      results[i] = std::move(s);
      MutexLock l(&mu);
      if (--left == 0) done_cv.SignalAll();
    });
  }
  {
    MutexLock l(&mu);
    while (left > 0) done_cv.Wait(&mu);
  }
  for (const Status& s : results) {
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace shale
