// KillPointEnv: db_stress's whitebox crash test. An Env over another that, at each kill
// point inside the engine's file I/O, SIGKILLs the whole process with probability
// 1/one_in: WAL append and sync, SST append and sync, MANIFEST append and sync, the rename
// that switches CURRENT, and file deletion. A point that fires kills either before the call
// or right after it (a coin toss), so both "not done" and "done but not acknowledged"
// crashes happen. One point may be singled out (`only`): then no other point fires, and
// with one_in 1 it fires at its first hit, which reaches points that run once per open,
// like the CURRENT rename. The engine has no kill-point code of its own: everything is in
// this wrapper.
//
// Thread safety: as the Env it wraps; the random draw is per thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "shale/env.h"

namespace shale::stress {

enum class KillPoint {
  kWalAppend,
  kWalSync,
  kSstAppend,
  kSstSync,
  kManifestAppend,
  kManifestSync,
  kCurrentRename,
  kDelete,
  kNone  // no point singled out
};

class KillPointEnv : public EnvWrapper {
 public:
  // one_in == 0 never kills. seed varies the draws between runs. only != kNone: no other
  // point fires.
  KillPointEnv(Env* base, uint32_t one_in, uint64_t seed, KillPoint only = KillPoint::kNone);

  Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result,
                         const EnvOptions& options) override;
  Status RenameFile(const std::string& src, const std::string& target) override;
  Status DeleteFile(const std::string& fname) override;

  // Called around every kill point; kills the process (never returns) when the draw says
  // so. `after` tells which side of the call it is on.
  void MaybeKill(KillPoint point, bool after);

  // No kills until enabled (db_stress enables them once its verification at start is done,
  // or at once to crash recovery as well).
  void SetEnabled(bool on) { enabled_.store(on); }

 private:
  const uint32_t one_in_;
  const uint64_t seed_;
  const KillPoint only_;
  std::atomic<bool> enabled_{false};
};

// "CURRENT rename", ...
const char* KillPointName(KillPoint point);
// The point a flag names: wal_append, wal_sync, sst_append, sst_sync, manifest_append,
// manifest_sync, current_rename, delete. False for another name.
bool ParseKillPoint(const std::string& name, KillPoint* point);

}  // namespace shale::stress
