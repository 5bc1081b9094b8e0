#include "tests/crash_states/runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string_view>
#include <unordered_set>

namespace shale::crash_states {

namespace {

// Identifies a state with its bounds: one check per distinct pair.
std::string StateKey(const CrashState& state, size_t lo, size_t hi, const CheckOptions& check) {
  std::string key = std::to_string(lo) + "/" + std::to_string(hi);
  // R8 asks more of a state once a checkpoint has returned.
  for (const CheckpointCheck& c : check.checkpoints) key += state.point >= c.acked ? "+" : "-";
  for (const auto& [path, data] : state.files) {
    key += "|" + path + ":" + std::to_string(data.size()) + ":" +
           std::to_string(std::hash<std::string_view>()(data));
  }
  for (const std::string& d : state.dirs) key += "|d" + d;
  return key;
}

// Generates and checks the states of one recording into *report (adding to its counts).
// inherit: the crash state a nested recording started from; its damage and unclean WALs
// stay what the recovery modes may refuse.
void CheckRecording(const std::string& name, const Recording& rec, const RunOptions& options,
                    RunReport* report, const CrashState* inherit = nullptr) {
  report->ops += rec.ops.size();
  report->writes = std::max(report->writes, rec.history.writes().size());
  CrashStateGenerator gen(rec.initial, rec.ops, options.gen, rec.initial_dirs);
  std::unordered_set<std::string> seen;
  report->generated += gen.ForEach([&](const CrashState& generated) {
    CrashState inherited;
    if (inherit != nullptr) {
      inherited = generated;
      inherited.damaged = inherited.damaged || inherit->damaged;
      for (const std::string& w : inherit->unclean_wals) {
        if (inherited.files.count(w) != 0) inherited.unclean_wals.push_back(w);
      }
    }
    const CrashState& state = inherit != nullptr ? inherited : generated;
    size_t lo, hi;
    rec.history.Bounds(state.point, &lo, &hi);
    if (!seen.insert(StateKey(state, lo, hi, rec.check)).second) return true;
    report->checked++;
    CheckResult r = CheckState(state, rec.history, lo, hi, rec.check);
    report->opens += r.opens;
    report->refusals += r.refusals;
    if (!r.violations.empty()) {
      report->violations++;
      std::string text = name + " at call " + std::to_string(state.point) + " of " +
                         std::to_string(rec.ops.size());
      if (state.point < rec.ops.size())
        text += " (before: " + DescribeOp(rec.ops[state.point]) + ")";
      text += "\n  state: " + (state.description.empty() ? "everything pushed reached the disk"
                                                         : state.description);
      for (const std::string& v : r.violations) text += "\n  " + v;
      if (!options.save_dir.empty()) {
        const std::string dir =
            options.save_dir + "/" + name + "-" + std::to_string(report->saved++);
        Status s = Env::Default()->CreateDirIfMissing(options.save_dir);
        if (s.ok()) s = SaveState(dir, state, rec.history, lo, hi, rec.check);
        text += s.ok() ? "\n  replay: " + options.replay_binary + " --replay=" + dir
                       : "\n  (not saved: " + s.ToString() + ")";
      }
      report->failures.push_back(text);
      if (report->violations >= options.max_violations) return false;
    }
    return options.max_states == 0 || report->checked < options.max_states;
  });
}

}  // namespace

RunReport RunWorkload(const Workload& workload, const RunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  RunReport report;
  report.workload = workload.name;
  Context context;
  report.status = workload.run(&context);
  Recording rec = context.Finish();
  if (report.status.ok()) {
    CheckRecording(workload.name, rec, options, &report);
  } else {
    report.ops = rec.ops.size();
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

RunReport RunNestedRecovery(const Workload& workload, const RunOptions& options,
                            size_t max_first_states) {
  const auto start = std::chrono::steady_clock::now();
  RunReport report;
  report.workload = workload.name + "+recovery";
  Context first;
  report.status = workload.run(&first);
  const Recording rec = first.Finish();
  if (!report.status.ok() || rec.check.txn != 0) return report;

  // The distinct first-level states, with their bounds.
  struct First {
    CrashState state;
    size_t lo, hi;
  };
  std::vector<First> firsts;
  std::unordered_set<std::string> seen;
  CrashStateGenerator(rec.initial, rec.ops, options.gen, rec.initial_dirs)
      .ForEach([&](const CrashState& st) {
        size_t lo, hi;
        rec.history.Bounds(st.point, &lo, &hi);
        if (seen.insert(StateKey(st, lo, hi, rec.check)).second) firsts.push_back({st, lo, hi});
        return true;
      });
  const size_t n = std::min(firsts.size(), max_first_states);
  for (size_t i = 0; i < n; i++) {
    const First& f = firsts[n == 1 ? 0 : i * (firsts.size() - 1) / (n - 1)];
    Context second;
    second.options = rec.check.options;
    Status s = second.Seed(f.state);
    if (s.ok()) s = second.StartRecording();
    std::map<std::string, std::string> got;
    size_t open_end = 0;
    long n1 = -1;
    std::map<std::string, size_t> shown;  // with families: each family's recovered prefix
    if (rec.check.families) {
      FamilyDb db;
      if (s.ok()) s = second.OpenAllFamilies(&db);
      open_end = second.Count();
      std::set<std::string> present;
      std::string ignored;
      if (s.ok()) s = db.Read({}, &got, &present, &ignored);
      if (s.ok() && MatchFamilies(rec.history, f.state.point, f.hi, got, present).empty()) {
        n1 = static_cast<long>(f.lo);
        shown = FamilyPrefixes(rec.history, f.hi, got, present);
      }
      Status c = db.Close();
      if (s.ok()) s = c;
    } else {
      std::unique_ptr<DB> db;
      if (s.ok()) s = second.Open(&db);
      open_end = second.Count();
      if (s.ok()) s = Scan(db.get(), &got);
      n1 = s.ok() ? MatchPrefix(rec.history, f.lo, f.hi, got) : -1;
      if (db != nullptr) s = db->Close();
    }
    if (n1 < 0 || !s.ok()) continue;  // the first level's own check reports it
    Recording nested = second.Finish();
    // Writes up to lo are durable from the start; those the first recovery showed, from
    // the end of its Open on (with families, in each family up to the prefix it showed);
    // none past hi was ever on the disk.
    History h;
    for (size_t w = 0; w < f.hi; w++) {
      Write copy = rec.history.writes()[w];
      copy.issued = copy.acked = 0;
      copy.durable = w < f.lo ? 0 : w < static_cast<size_t>(n1) ? open_end : -1;
      for (auto& [family, at] : copy.durable_in) {
        if (at <= f.state.point) at = 0;
      }
      for (const auto& [family, n] : shown) {
        if (w < n) copy.durable_in.emplace(family, open_end);  // an earlier mark stays
      }
      h.Add(std::move(copy));
    }
    nested.history = std::move(h);
    nested.check = rec.check;
    CheckRecording(report.workload, nested, options, &report, &f.state);
    report.nested++;
    if (report.violations >= options.max_violations) break;
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

std::vector<std::string> ReplayState(const std::string& dir, const CheckOptions& options) {
  CrashState state;
  History history;
  size_t lo = 0, hi = 0;
  CheckOptions o = options;
  Status s = LoadState(dir, &state, &history, &lo, &hi, &o);
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
