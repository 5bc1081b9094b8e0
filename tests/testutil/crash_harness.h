// The crash harness of the concurrent crash tests (db_2pc_crash_test,
// db_write_modes_crash_test, write_prepared_crash_test): a few writer threads run numbered
// operations on a DB, and the run ends in (a) a SIGKILL of the process that writes, or
// (b) a power loss through the fault-injecting Env. The tests own what an operation is,
// what it acknowledges and what must hold after the reopen; this file owns only the
// crash.
//
// An operation is a call step(thread, index) for index = first[thread], first[thread]+1,
// ... in each of kCrashWriters threads; the thread stops at the first step that returns
// false. A step acknowledges what the DB has confirmed by calling its ack(stage) (a test's
// own numbering: a prepare and a commit of one transaction are two stages).
//
// (a) KillWritersAfter runs the threads in a forked child, which opens its DB first
// (open_in_child; a failure exits the child with 3), reports every acknowledgement
// through a pipe as it happens (a failed step exits with 4, a failed report with 5), and
// is killed after delay_us microseconds. What reached the pipe before the kill is what
// the child had acknowledged: a process crash keeps everything the OS had.
//
// (b) PowerLossAfter runs the threads in this process on a DB the caller opened on env.
// After delay_us microseconds env's file system stops (nothing more reaches the disk),
// the threads stop after their current step and are joined, close() drops the DB, and
// env loses whatever was not synced; then env is made ready for the reopen. The steps
// record their own acknowledgements (only synced ones count after a power loss).
//
// Thread safety: call from the test's thread. Steps run concurrently, one thread per
// writer; ack and step are called from those threads (in the child, for (a)).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "shale/options.h"
#include "shale/status.h"
#include "tests/testutil/fault_injection_env.h"

namespace shale {

// Writer threads per round.
inline constexpr int kCrashWriters = 4;

// Rounds per test and configuration: $SHALE_CRASH_CYCLES, default 3.
int CrashRounds();

// Writer t writes with sync=true when t is even: half the threads' acknowledgements
// survive a power loss, the other half's only a process crash.
WriteOptions CrashWriterOptions(int thread);

// One acknowledgement the child of (a) reported: operation `index` of writer `thread`
// reached `stage`.
struct CrashAck {
  int32_t thread;
  int32_t index;
  int32_t stage;
};

using CrashAckFn = std::function<void(int stage)>;
// Operation `index` of writer `thread`; ack(stage) for each stage the DB confirmed; false
// on a failure.
using KilledStep = std::function<bool(int thread, int index, const CrashAckFn& ack)>;
using PowerLossStep = std::function<bool(int thread, int index)>;

// (a) above. first holds kCrashWriters indexes. Returns an error message, empty if the
// child was killed as planned; *acks gets what the child reported, in the order each
// writer reported it.
std::string KillWritersAfter(uint64_t delay_us, const int* first,
                             const std::function<Status()>& open_in_child, const KilledStep& step,
                             std::vector<CrashAck>* acks);

// (b) above. first holds kCrashWriters indexes. Returns the power loss's status (OK: env
// is ready for the reopen).
Status PowerLossAfter(uint64_t delay_us, const int* first, FaultInjectionTestEnv* env,
                      const PowerLossStep& step, const std::function<void()>& close);

}  // namespace shale
