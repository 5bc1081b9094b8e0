// Runs one workload end to end: record it, generate its crash states (persistence_model.h),
// check each against the oracle (oracle.h), save the states that fail.
//
// A state is checked once per distinct (contents, lo, hi): the same disk at two crash points
// with the same bounds is one check. A failing state is saved as save_dir/<workload>-<n>/
// and its report line carries the command that replays it:
//   crash_states --replay=<dir>
// Thread safety: none.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tests/crash_states/persistence_model.h"
#include "tests/crash_states/workloads.h"

namespace shale::crash_states {

struct RunOptions {
  GeneratorOptions gen;
  std::string save_dir;                        // empty: failing states are not saved
  size_t max_violations = 3;                   // stop the workload after this many failing states
  size_t max_states = 0;                       // stop after this many checked states (0: no limit)
  std::string replay_binary = "crash_states";  // named in the replay command
};

struct RunReport {
  std::string workload;
  size_t ops = 0;        // calls recorded
  size_t writes = 0;     // writes in the history
  size_t generated = 0;  // states generated, all points
  size_t checked = 0;    // distinct states checked
  size_t opens = 0;
  size_t refusals = 0;  // documented refusals (oracle.h R1)
  size_t violations = 0;
  double seconds = 0;
  size_t nested = 0;  // RunNestedRecovery: first-level states whose recovery was recorded
  size_t saved = 0;   // failing states saved
  Status status;      // the workload's own failure, if any
  std::vector<std::string> failures;  // one paragraph per failing state
};

RunReport RunWorkload(const Workload& workload, const RunOptions& options);

// Recovery cut by a second power loss: the workload's distinct crash states (up to
// max_first_states, evenly spread), each recovered through a RecordingEnv (Open, read,
// Close) and every state of that recovery checked. A write below the first state's lo
// must survive; one the first recovery showed must survive once its Open returned; none
// past the first state's hi may appear. With column families the recovery opens every
// family, and what it showed of each must survive in that family (oracle.h R7). Not for
// TransactionDB workloads.
RunReport RunNestedRecovery(const Workload& workload, const RunOptions& options,
                            size_t max_first_states);

// Replays a saved state; prints what it finds and returns the violations.
std::vector<std::string> ReplayState(const std::string& dir, const CheckOptions& options);

// One line for the report table.
std::string FormatReport(const RunReport& r);

}  // namespace shale::crash_states
