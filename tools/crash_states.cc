// crash_states: records each workload of tests/crash_states, builds every crash state the
// persistence model allows (tests/crash_states/persistence_model.h), recovers each in every
// WAL recovery mode and checks it against the oracle (tests/crash_states/oracle.h).
//
//   crash_states                  short workloads at every call, long ones at persistence
//                                 points, nested recoveries, I/O error loops, under the
//                                 default posix model (CI runs it, then --model=journal
//                                 with pages and K=2; the posix model's finding in
//                                 docs/reliability.md is fixed)
//   crash_states --long           every workload at every call, K=2, larger bounds,
//                                 10 recordings each, every nested recovery
//   crash_states --workload=NAME  one workload (repeatable: comma-separated)
//   crash_states --replay=DIR     re-check a saved failing state
// Other flags: --k=N --unit=BYTES --model=posix|journal --points=all|persistence
//   --max_states_per_point=N --max_lengths=N --save_dir=DIR --list
//   --dump (print the call log of one recording of --workload=NAME)
//   --max_violations=N (failing states kept per workload before it stops; default 3)
//   --nested=0 (skip the recoveries cut by a second power loss, runner.h RunNestedRecovery:
//   from 12 states of each of six workloads, 1,000 with --long; run unless --workload is
//   given without "nested_recovery")
//   --repeat=N (record each workload N times: background jobs interleave differently;
//   default 1, 10 with --long) --io_errors=0 (skip the I/O error loops, io_error_loops.h,
//   which run after the workloads unless --workload is given without "io_errors")
// Prints one line per workload (calls, writes, states, checked, opens, refusals,
// violations, seconds), then each failure with its replay command. Exit status 1 if any
// state failed or a workload could not run.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/crash_states/io_error_loops.h"
#include "tests/crash_states/runner.h"

using namespace shale;
using namespace shale::crash_states;

namespace {

bool Flag(const char* arg, const char* name, std::string* value) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0) return false;
  if (arg[n] == '\0') {
    *value = "1";
    return true;
  }
  if (arg[n] != '=') return false;
  *value = arg + n + 1;
  return true;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const size_t end = comma == std::string::npos ? s.size() : comma;
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string long_flag, list, replay, only, save_dir = "crash_states_failures";
  std::string k, unit, model, points, max_per_point, max_lengths, repeat, dump, max_violations,
      nested = "1", io_errors = "1";
  const std::vector<std::pair<const char*, std::string*>> flags = {
      {"--long", &long_flag},
      {"--list", &list},
      {"--replay", &replay},
      {"--workload", &only},
      {"--save_dir", &save_dir},
      {"--k", &k},
      {"--unit", &unit},
      {"--model", &model},
      {"--points", &points},
      {"--max_states_per_point", &max_per_point},
      {"--max_lengths", &max_lengths},
      {"--repeat", &repeat},
      {"--io_errors", &io_errors},
      {"--dump", &dump},
      {"--max_violations", &max_violations},
      {"--nested", &nested},
  };
  for (int i = 1; i < argc; i++) {
    bool known = false;
    for (const auto& [name, value] : flags) known = known || Flag(argv[i], name, value);
    if (!known) {
      std::fprintf(stderr, "unknown flag %s (see the header of tools/crash_states.cc)\n", argv[i]);
      return 2;
    }
  }
  const bool long_mode = !long_flag.empty() && long_flag != "0";

  if (!list.empty()) {
    for (const Workload& w : AllWorkloads()) {
      std::printf("%-22s %s%s\n", w.name.c_str(), w.what.c_str(), w.long_run ? " (long)" : "");
    }
    return 0;
  }
  if (!dump.empty()) {  // the call log of one recording of --workload
    for (const Workload& w : AllWorkloads()) {
      if (w.name != only) continue;
      Context context;
      const Status s = w.run(&context);
      const Recording rec = context.Finish();
      for (size_t i = 0; i < rec.ops.size(); i++) {
        std::printf("%4zu %s\n", i, DescribeOp(rec.ops[i]).c_str());
      }
      std::printf("%s\n", s.ToString().c_str());
    }
    return 0;
  }
  if (!replay.empty()) {
    const std::vector<std::string> violations = ReplayState(replay, CheckOptions());
    for (const std::string& v : violations) std::printf("  %s\n", v.c_str());
    std::printf("%s\n", violations.empty() ? "state passes" : "VIOLATION");
    return violations.empty() ? 0 : 1;
  }

  RunOptions base;
  base.save_dir = save_dir;
  base.replay_binary = argv[0];
  if (long_mode) {
    base.gen.k = 2;
    base.gen.max_states_per_point = 1024;
    base.gen.max_lengths = 48;
    base.gen.max_holes = 48;
    base.gen.max_exhaustive_names = 10;
  }
  if (!max_violations.empty())
    base.max_violations = std::strtoul(max_violations.c_str(), nullptr, 10);
  if (!k.empty()) base.gen.k = std::atoi(k.c_str());
  if (!unit.empty()) base.gen.unit = std::strtoul(unit.c_str(), nullptr, 10);
  if (model == "journal") base.gen.model = NameModel::kJournal;
  if (!max_per_point.empty())
    base.gen.max_states_per_point = std::strtoul(max_per_point.c_str(), nullptr, 10);
  if (!max_lengths.empty()) base.gen.max_lengths = std::strtoul(max_lengths.c_str(), nullptr, 10);
  std::printf("model %s, unit %zu, K %d, states per point <= %zu%s\n",
              base.gen.model == NameModel::kJournal ? "journal" : "posix", base.gen.unit,
              base.gen.k, base.gen.max_states_per_point, long_mode ? ", long mode" : "");

  const std::vector<std::string> names = Split(only);
  const int repeats = !repeat.empty() ? std::atoi(repeat.c_str()) : long_mode ? 10 : 1;
  size_t violations = 0, checked = 0;
  bool failed = false;
  std::vector<std::string> failures;
  for (const Workload& w : AllWorkloads()) {
    if (!names.empty() && std::find(names.begin(), names.end(), w.name) == names.end()) continue;
    RunOptions o = base;
    o.gen.points = (w.long_run && !long_mode) ? CrashPoints::kPersistence : CrashPoints::kAll;
    if (points == "all") o.gen.points = CrashPoints::kAll;
    if (points == "persistence") o.gen.points = CrashPoints::kPersistence;
    for (int rep = 0; rep < repeats; rep++) {  // each recording is one interleaving
      RunReport r = RunWorkload(w, o);
      std::printf("%s%s\n", FormatReport(r).c_str(),
                  o.gen.points == CrashPoints::kPersistence ? "  (persistence points)" : "");
      std::fflush(stdout);
      violations += r.violations;
      checked += r.checked;
      failed = failed || !r.status.ok();
      failures.insert(failures.end(), r.failures.begin(), r.failures.end());
    }
  }
  // Recoveries cut by a second power loss, from the states of six short workloads (three
  // with column families).
  const std::set<std::string> nested_from = {"puts_nosync", "memtable_switch",  "flush",
                                             "cf_batches",  "cf_drop_recreate", "cf_atomic_flush"};
  const bool want_nested =
      names.empty() || std::find(names.begin(), names.end(), "nested_recovery") != names.end();
  if (nested != "0" && want_nested) {
    for (const Workload& w : AllWorkloads()) {
      if (nested_from.count(w.name) == 0) continue;
      RunReport r = RunNestedRecovery(w, base, long_mode ? 1000 : 12);
      std::printf("%s  (%zu recoveries)\n", FormatReport(r).c_str(), r.nested);
      std::fflush(stdout);
      violations += r.violations;
      checked += r.checked;
      failed = failed || !r.status.ok();
      failures.insert(failures.end(), r.failures.begin(), r.failures.end());
    }
  }
  if (io_errors != "0" &&
      (names.empty() || std::find(names.begin(), names.end(), "io_errors") != names.end())) {
    for (const IoLoopReport& r : RunIoErrorLoops()) {
      std::printf("%s\n", FormatIoLoopReport(r).c_str());
      violations += r.violations;
      failures.insert(failures.end(), r.failures.begin(), r.failures.end());
      for (const std::string& n : r.notes) std::printf("  unreported: %s\n", n.c_str());
    }
  }
  for (const std::string& f : failures) std::printf("\nFAIL %s\n", f.c_str());
  std::printf("\n%zu states checked, %zu violations\n", checked, violations);
  return (violations == 0 && !failed) ? 0 : 1;
}
