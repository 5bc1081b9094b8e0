// KillPointEnv: db_stress's whitebox crash test. An Env over another that, at each kill
// point inside the engine's file I/O, SIGKILLs the whole process with probability
// 1/one_in: WAL append and sync, SST append and sync, MANIFEST append and sync, the rename
// that switches CURRENT, and file deletion. Each point fires either before the call or
// right after it (a coin toss), so both "not done" and "done but not acknowledged" crashes
// happen. The engine has no kill-point code of its own: everything is in this wrapper.
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
  kDelete
};

class KillPointEnv : public EnvWrapper {
 public:
  // one_in == 0 never kills. seed varies the draws between runs.
  KillPointEnv(Env* base, uint32_t one_in, uint64_t seed);

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
  std::atomic<bool> enabled_{false};
};

const char* KillPointName(KillPoint point);

}  // namespace shale::stress
