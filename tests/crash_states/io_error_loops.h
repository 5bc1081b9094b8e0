// I/O error loops in SQLite's manner: run one workload again and again on an in-memory Env
// behind FaultInjectionTestEnv, failing the 1st, then the 2nd, ... N-th file-system call of
// one kind (write, sync, read, rename, create, directory sync; writes, syncs and reads per
// file type: WAL, SST, MANIFEST, CURRENT's temporary), until a run makes fewer calls than N;
// then again with the N-th and every later call of the kind failing (a device gone bad).
// Every run must satisfy:
//   E1. The error reaches the caller: some call of the workload, or a synced probe write
//       and a flush after it, answers an error (a background job's error fails later
//       writes). Calls the DB may legitimately ignore (deleting obsolete files, the info
//       LOG) are mostly left out by the filters. A run that breaks only E1 is listed as
//       "unreported" with the call that failed, not counted as a violation: the DB may
//       have handled the error (a retry, a best-effort file), which the report's reader
//       judges. Today these are all the OPTIONS file written at Open (see
//       docs/reliability.md).
//   E2. No acknowledged write is lost and nothing reads back wrongly: after the run the DB
//       is closed and reopened without faults (kPointInTimeRecovery), which must succeed
//       (E3), and every key reads its last acknowledged value or the value of a write
//       after it that failed (a failed write may or may not have been applied); the same
//       holds for every Get during the run that answers OK.
// Thread safety: none.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace shale::crash_states {

struct IoLoopReport {
  std::string name;       // kind/filter
  size_t runs = 0;        // runs with an injected failure
  size_t violations = 0;  // E2, E3
  size_t unreported = 0;  // E1 only
  std::vector<std::string> failures;
  std::vector<std::string> notes;  // the E1-only runs
};

// Every kind and filter; stops a loop after max_violations failing runs.
std::vector<IoLoopReport> RunIoErrorLoops(size_t max_violations = 3);

std::string FormatIoLoopReport(const IoLoopReport& r);

}  // namespace shale::crash_states
