// GatedSstEnv: an Env (over Env::Default(), or another Env) that can hold back the creation of SST
// files, so a test can keep a flush or compaction in flight (an immutable memtable stays immutable,
// a stalled writer stays stalled) for as long as it needs, without sleeping.
//
// Thread safety: every method may be called from any thread. Open the gate before the DB
// using it is closed, or Close waits for the held job forever.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "shale/env.h"

namespace shale {

// Creation of an SST file waits while the gate is closed: flushes and compactions hang at
// their first output file until the test opens it.
class GatedSstEnv : public EnvWrapper {
 public:
  explicit GatedSstEnv(Env* target = Env::Default()) : EnvWrapper(target) {}

  Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result,
                         const EnvOptions& options) override {
    if (fname.size() > 4 && fname.compare(fname.size() - 4, 4, ".sst") == 0) {
      std::unique_lock<std::mutex> l(mu_);
      if (!open_ && passes_ > 0) {
        passes_--;
      } else {
        waiting_++;
        cv_.notify_all();
        cv_.wait(l, [this] { return open_; });
        waiting_--;
      }
    }
    return EnvWrapper::NewWritableFile(fname, result, options);
  }

  void SetOpen(bool open) {
    std::lock_guard<std::mutex> l(mu_);
    open_ = open;
    cv_.notify_all();
  }
  // While closed, lets the next n files through.
  void AllowFiles(int n) {
    std::lock_guard<std::mutex> l(mu_);
    passes_ = n;
  }
  // Waits until a background job is held at the gate.
  void WaitForBlockedJob() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [this] { return waiting_ > 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int passes_ = 0;
  int waiting_ = 0;
};

}  // namespace shale
