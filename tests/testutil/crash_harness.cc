#include "tests/testutil/crash_harness.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "tests/testutil/test_util.h"

namespace shale {

int CrashRounds() { return TestKnob("SHALE_CRASH_CYCLES", 3); }

WriteOptions CrashWriterOptions(int thread) {
  WriteOptions wo;
  wo.sync = thread % 2 == 0;
  return wo;
}

namespace {

// The child of KillWritersAfter: never returns.
[[noreturn]] void RunWritersInChild(const int* first, const std::function<Status()>& open,
                                    const KilledStep& step, int fd) {
  if (!open().ok()) _exit(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < kCrashWriters; t++) {
    threads.emplace_back([&, t] {
      for (int i = first[t];; i++) {
        // One 12-byte write per acknowledgement: a pipe delivers it whole.
        const bool ok = step(t, i, [&](int stage) {
          const CrashAck ack{t, i, stage};
          if (write(fd, &ack, sizeof(ack)) != sizeof(ack)) _exit(5);
        });
        if (!ok) _exit(4);
      }
    });
  }
  for (auto& th : threads) th.join();
  _exit(0);
}

}  // namespace

std::string KillWritersAfter(uint64_t delay_us, const int* first,
                             const std::function<Status()>& open_in_child, const KilledStep& step,
                             std::vector<CrashAck>* acks) {
  std::string output;
  const std::string error = RunChildUntilKilled(
      [&](int fd) { RunWritersInChild(first, open_in_child, step, fd); }, delay_us, &output);
  acks->clear();
  for (size_t pos = 0; pos + sizeof(CrashAck) <= output.size(); pos += sizeof(CrashAck)) {
    CrashAck ack;
    memcpy(&ack, output.data() + pos, sizeof(ack));
    acks->push_back(ack);
  }
  return error;
}

Status PowerLossAfter(uint64_t delay_us, const int* first, FaultInjectionTestEnv* env,
                      const PowerLossStep& step, const std::function<void()>& close) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kCrashWriters; t++) {
    threads.emplace_back([&, t] {
      for (int i = first[t]; !stop.load(); i++) {
        if (!step(t, i)) break;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
  env->SetFilesystemActive(false);  // the power goes: nothing more reaches the disk
  stop = true;
  for (auto& th : threads) th.join();
  close();
  Status s = env->SimulatePowerLoss();
  if (!s.ok()) return s;
  env->SetFilesystemActive(true);
  env->ResetState();
  return Status::OK();
}

}  // namespace shale
