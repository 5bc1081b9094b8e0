#include "tests/crash_states/io_error_loops.h"

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "shale/db.h"
#include "shale/write_batch.h"
#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/recording_env.h"

namespace shale::crash_states {
namespace {

// Per key, the values a read may answer: the last acknowledged one ("" for absent, with
// `absent`), then those of failed writes after it.
struct KeyModel {
  std::set<std::string> allowed = {""};
  bool absent_allowed = true;
};

// Above the faults: remembers the first rename or create that failed, for the report.
class FailedCallEnv : public EnvWrapper {
 public:
  explicit FailedCallEnv(Env* target) : EnvWrapper(target) {}
  Status RenameFile(const std::string& src, const std::string& dst) override {
    return Note(EnvWrapper::RenameFile(src, dst), "rename " + src + " -> " + dst);
  }
  Status NewWritableFile(const std::string& f, std::unique_ptr<WritableFile>* r,
                         const EnvOptions& o) override {
    return Note(EnvWrapper::NewWritableFile(f, r, o), "create " + f);
  }
  std::string failed;

 private:
  Status Note(Status s, const std::string& what) {
    if (!s.ok() && failed.empty()) failed = what;
    return s;
  }
};

class LoopRun {
 public:
  LoopRun(FailOn kind, int n, const std::string& filter, FailMode mode = FailMode::kNth)
      : mem_(NewMemEnv(Env::Default())), recording_(mem_.get()), env_(&recording_), top_(&env_) {
    env_.SetFailure(kind, n, mode, filter);
    kind_ = kind;
  }

  // The calls that reached the Env below the faults.
  std::vector<FsOp> Ops() { return recording_.Ops(); }

  // Runs the workload; returns "" or what went wrong. *injected: whether the failure fired.
  std::string Run(bool* injected) {
    Options o;
    o.env = &top_;
    o.create_if_missing = true;
    o.write_buffer_size = 4096;
    o.disable_auto_compactions = true;
    std::unique_ptr<DB> db;
    Status s = DB::Open(o, "/db", &db);
    Note(s);
    if (s.ok()) {
      for (int round = 0; round < 3 && s.ok(); round++) {
        for (int i = 0; i < 5; i++) {
          WriteOptions wo;
          wo.sync = i == 2;
          Write(db.get(), wo, {{Key(i + round), Value(i, round)}});
        }
        Write(db.get(), WriteOptions(), {{Key(7), Value(7, round)}, {Key(round), std::nullopt}});
        std::string bad = ReadAll(db.get());
        if (!bad.empty()) return bad;
        Note(db->Flush(FlushOptions()));
      }
      Note(db->CompactRange(CompactRangeOptions(), nullptr, nullptr));
      std::string bad = ReadAll(db.get());
      if (!bad.empty()) return bad;
      Note(db->Close());
      db.reset();
      s = DB::Open(o, "/db", &db);
      Note(s);
      if (s.ok()) {
        WriteOptions wo;
        wo.sync = true;
        Write(db.get(), wo, {{Key(9), "last"}});  // also the probe of E1
        Note(db->Flush(FlushOptions()));
        Note(db->Close());
      }
      db.reset();
    }
    *injected = env_.InjectedCount(kind_) > 0;
    if (!*injected) return "";
    if (!saw_error_) {
      return "E1: the injected error reached no caller" +
             (top_.failed.empty() ? "" : " (failed: " + top_.failed + ")");
    }
    // E2/E3: reopen without faults.
    env_.ResetState();
    o.env = mem_.get();
    s = DB::Open(o, "/db", &db);
    if (!s.ok()) return "E3: reopen without faults failed: " + s.ToString();
    std::string bad = ReadAll(db.get());
    db->Close().PermitUncheckedError();
    return bad.empty() ? "" : "E2 after reopen: " + bad;
  }

 private:
  static std::string Key(int i) { return "k" + std::to_string(i); }
  static std::string Value(int i, int round) {
    return "v" + std::to_string(round) + "." + std::to_string(i) + std::string(300, 'x');
  }

  void Note(const Status& s) {
    if (!s.ok()) saw_error_ = true;
  }

  void Write(DB* db, const WriteOptions& wo,
             const std::vector<std::pair<std::string, std::optional<std::string>>>& ops) {
    WriteBatch b;
    for (const auto& [k, v] : ops) {
      if (v.has_value()) {
        b.Put(k, *v).PermitUncheckedError();
      } else {
        b.Delete(k).PermitUncheckedError();
      }
    }
    const Status s = db->Write(wo, &b);
    Note(s);
    for (const auto& [k, v] : ops) {
      KeyModel& m = model_[k];
      if (s.ok()) {  // acknowledged: the only answer from now on
        m.allowed.clear();
        m.absent_allowed = !v.has_value();
      }
      if (v.has_value()) m.allowed.insert(*v);
      if (!v.has_value() && !s.ok()) m.absent_allowed = true;
    }
  }

  // Every key of the model through Get; an error answer is allowed (it is reported).
  std::string ReadAll(DB* db) {
    for (const auto& [k, m] : model_) {
      std::string v;
      const Status s = db->Get(ReadOptions(), k, &v);
      if (s.IsNotFound()) {
        if (!m.absent_allowed) return "key " + k + " lost an acknowledged value";
      } else if (s.ok()) {
        if (m.allowed.count(v) == 0) return "key " + k + " reads a value it never had";
      } else {
        Note(s);
      }
    }
    return "";
  }

  std::unique_ptr<Env> mem_;
  RecordingEnv recording_;
  FaultInjectionTestEnv env_;
  FailedCallEnv top_;
  FailOn kind_;
  bool saw_error_ = false;
  std::map<std::string, KeyModel> model_;
};

struct Loop {
  FailOn kind;
  const char* kind_name;
  const char* filter;
};

// The n-th call a loop fails, as a run without faults makes it (calls are made in the same
// order up to the failure, background jobs aside).
std::string NthCall(const Loop& loop, int n) {
  LoopRun clean(loop.kind, 1 << 30, loop.filter);
  bool injected = false;
  clean.Run(&injected).size();
  std::map<uint64_t, std::string> paths;
  int seen = 0;
  for (const FsOp& op : clean.Ops()) {
    if (op.kind == FsOp::kCreate) paths[op.file] = op.path;
    const std::string path = op.file != 0 ? paths[op.file] : op.path;
    bool match = false;
    switch (loop.kind) {
      case FailOn::kWrite: match = op.kind == FsOp::kAppend; break;
      case FailOn::kSync: match = op.kind == FsOp::kSync; break;
      case FailOn::kRename: match = op.kind == FsOp::kRename; break;
      case FailOn::kCreate: match = op.kind == FsOp::kCreate; break;
      case FailOn::kDirSync: match = op.kind == FsOp::kDirSync; break;
      case FailOn::kRead: return "";  // reads are not logged
    }
    const bool named =
        path.find(loop.filter) != std::string::npos ||
        (op.kind == FsOp::kRename && op.path2.find(loop.filter) != std::string::npos);
    if (match && named && ++seen == n) {
      return " (" + DescribeOp(op) + (op.file != 0 ? " " + path : "") + ")";
    }
  }
  return "";
}

}  // namespace

std::vector<IoLoopReport> RunIoErrorLoops(size_t max_violations) {
  const std::vector<Loop> loops = {
      {FailOn::kWrite, "write", ".log"},      {FailOn::kWrite, "write", ".sst"},
      {FailOn::kWrite, "write", "MANIFEST-"}, {FailOn::kWrite, "write", ".dbtmp"},
      {FailOn::kSync, "sync", ".log"},        {FailOn::kSync, "sync", ".sst"},
      {FailOn::kSync, "sync", "MANIFEST-"},   {FailOn::kSync, "sync", ".dbtmp"},
      {FailOn::kRead, "read", ".sst"},        {FailOn::kRead, "read", "MANIFEST-"},
      {FailOn::kRead, "read", ".log"},        {FailOn::kRead, "read", "CURRENT"},
      {FailOn::kRename, "rename", ""},        {FailOn::kCreate, "create", ""},
      {FailOn::kDirSync, "dirsync", ""},
  };
  std::vector<IoLoopReport> out;
  for (FailMode mode : {FailMode::kNth, FailMode::kFromNth})
    for (const Loop& loop : loops) {
      IoLoopReport r;
      r.name = std::string(loop.kind_name) + (*loop.filter ? std::string(" ") + loop.filter : "") +
               (mode == FailMode::kFromNth ? " (from n on)" : "");
      for (int n = 1; n < 10000; n++) {
        bool injected = false;
        LoopRun run(loop.kind, n, loop.filter, mode);
        const std::string bad = run.Run(&injected);
        if (!injected) break;
        r.runs++;
        if (bad.rfind("E1", 0) == 0) {  // reported, not counted: see the header
          r.unreported++;
          r.notes.push_back(r.name + " failing call " + std::to_string(n) + NthCall(loop, n) +
                            ": " + bad);
        } else if (!bad.empty()) {
          r.violations++;
          r.failures.push_back(r.name + " failing call " + std::to_string(n) + NthCall(loop, n) +
                               ": " + bad);
          if (r.violations >= max_violations) break;
        }
      }
      out.push_back(std::move(r));
    }
  return out;
}

std::string FormatIoLoopReport(const IoLoopReport& r) {
  char line[160];
  std::snprintf(line, sizeof(line), "io errors %-30s runs %4zu  violations %zu  unreported %zu",
                r.name.c_str(), r.runs, r.violations, r.unreported);
  return line;
}

}  // namespace shale::crash_states
