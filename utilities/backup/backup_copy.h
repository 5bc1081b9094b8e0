// The file work of backups and restores: copies that compute the crc32c of what they copy,
// checksums of files in place, and a runner that spreads such jobs over the engine's
// threads (BackupEngineOptions::max_background_operations).
//
// A copy reads its source once, sequentially, and writes a new file (replacing any file of
// that name); it syncs the copy when asked, never its directory (the caller syncs each
// directory once, before it makes the result visible). A failed copy may leave a partial
// file behind: the caller owns cleaning it up.
//
// Thread safety: the functions are as thread-safe as the Envs; CopyProgress may be shared
// by the jobs of one operation; JobRunner::RunAll may be called from several threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "shale/env.h"
#include "shale/status.h"
#include "util/mutexlock.h"
#include "util/thread_pool.h"

namespace shale {

inline constexpr uint64_t kWholeFile = UINT64_MAX;

struct FileDigest {
  uint64_t size = 0;
  uint32_t crc32c = 0;
};

// Counts the bytes the copies of one operation move, calls the user's progress callback
// each `interval` bytes (one call at a time), and tells the copies to stop when asked.
class CopyProgress {
 public:
  CopyProgress(std::function<void()> callback, uint64_t interval, const std::atomic<bool>* stop)
      : callback_(std::move(callback)), interval_(interval == 0 ? 1 : interval), stop_(stop) {}

  // After `bytes` more were copied. Incomplete once a stop was asked for; Aborted when the
  // callback threw.
  Status Add(uint64_t bytes) EXCLUDES(mu_);

 private:
  const std::function<void()> callback_;
  const uint64_t interval_;
  const std::atomic<bool>* const stop_;  // may be null
  Mutex mu_;
  uint64_t since_last_call_ GUARDED_BY(mu_) = 0;
};

// Copies the first `limit` bytes of src (all with kWholeFile; fewer if it is shorter) from
// src_env to a new file dst in dst_env, synced when `sync`. *digest describes the bytes
// copied. progress may be null.
Status CopyFileWithChecksum(Env* src_env, const std::string& src, Env* dst_env,
                            const std::string& dst, uint64_t limit, bool sync,
                            CopyProgress* progress, FileDigest* digest);

// The digest of the first `limit` bytes of path (all with kWholeFile).
Status ChecksumFile(Env* env, const std::string& path, uint64_t limit, CopyProgress* progress,
                    FileDigest* digest);

// Fsyncs directory dir, making the entries created and renamed in it durable.
Status SyncDirectory(Env* env, const std::string& dir);

// Runs jobs on a pool and waits for all of them.
class JobRunner {
 public:
  explicit JobRunner(ThreadPool* pool) : pool_(pool) {}

  // Runs the jobs on the pool's threads and returns the first error by job order, or OK.
  // Once one has failed, the jobs not yet started are skipped.
  Status RunAll(std::vector<std::function<Status()>> jobs);

 private:
  ThreadPool* const pool_;
};

}  // namespace shale
