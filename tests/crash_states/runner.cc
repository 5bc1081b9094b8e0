#include "tests/crash_states/runner.h"

#include <chrono>
#include <cstdio>
#include <string_view>
#include <unordered_set>

namespace shale::crash_states {

RunReport RunWorkload(const Workload& workload, const RunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  RunReport report;
  report.workload = workload.name;
  Context context;
  report.status = workload.run(&context);
  Recording rec = context.Finish();
  report.ops = rec.ops.size();
  report.writes = rec.history.writes().size();
  if (!report.status.ok()) return report;

  CrashStateGenerator gen(rec.initial, rec.ops, options.gen);
  std::unordered_set<std::string> seen;
  size_t saved = 0;
  report.generated = gen.ForEach([&](const CrashState& state) {
    size_t lo, hi;
    rec.history.Bounds(state.point, &lo, &hi);
    std::string key = std::to_string(lo) + "/" + std::to_string(hi);
    for (const auto& [path, data] : state.files) {
      key += "|" + path + ":" + std::to_string(data.size()) + ":" +
             std::to_string(std::hash<std::string_view>()(data));
    }
    for (const std::string& d : state.dirs) key += "|d" + d;
    if (!seen.insert(key).second) return true;
    report.checked++;
    CheckResult r = CheckState(state, rec.history, lo, hi, rec.check);
    report.opens += r.opens;
    report.refusals += r.refusals;
    if (!r.violations.empty()) {
      report.violations++;
      std::string text = workload.name + " at call " + std::to_string(state.point) + " of " +
                         std::to_string(rec.ops.size());
      if (state.point < rec.ops.size())
        text += " (before: " + DescribeOp(rec.ops[state.point]) + ")";
      text += "\n  state: " + (state.description.empty() ? "everything pushed reached the disk"
                                                         : state.description);
      for (const std::string& v : r.violations) text += "\n  " + v;
      if (!options.save_dir.empty()) {
        const std::string dir =
            options.save_dir + "/" + workload.name + "-" + std::to_string(saved++);
        Status s = Env::Default()->CreateDirIfMissing(options.save_dir);
        if (s.ok()) s = SaveState(dir, state, rec.history, lo, hi, rec.check.txn);
        text += s.ok() ? "\n  replay: " + options.replay_binary + " --replay=" + dir
                       : "\n  (not saved: " + s.ToString() + ")";
      }
      report.failures.push_back(text);
      if (report.violations >= options.max_violations) return false;
    }
    return options.max_states == 0 || report.checked < options.max_states;
  });
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

std::vector<std::string> ReplayState(const std::string& dir, const CheckOptions& options) {
  CrashState state;
  History history;
  size_t lo = 0, hi = 0;
  CheckOptions o = options;
  Status s = LoadState(dir, &state, &history, &lo, &hi, &o.txn);
  if (!s.ok()) return {"load: " + s.ToString()};
  std::printf("state at call %zu: %s\nbounds [%zu, %zu] of %zu writes\n", state.point,
              state.description.c_str(), lo, hi, history.writes().size());
  return CheckState(state, history, lo, hi, o).violations;
}

std::string FormatReport(const RunReport& r) {
  char line[256];
  std::snprintf(line, sizeof(line),
                "%-22s calls %5zu  writes %4zu  states %7zu  checked %6zu  opens %7zu  "
                "refused %5zu  violations %zu  %.1fs",
                r.workload.c_str(), r.ops, r.writes, r.generated, r.checked, r.opens, r.refusals,
                r.violations, r.seconds);
  std::string s = line;
  if (!r.status.ok()) s += "  WORKLOAD FAILED: " + r.status.ToString();
  return s;
}

}  // namespace shale::crash_states
