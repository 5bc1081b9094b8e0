#include "tests/crash_states/oracle.h"

#include <algorithm>
#include <memory>
#include <set>
#include <sstream>

#include "shale/db.h"
#include "shale/env.h"
#include "shale/iterator.h"
#include "shale/utilities/transaction.h"
#include "shale/utilities/transaction_db.h"
#include "tests/crash_states/absolute_consistency.h"
#include "tests/crash_states/families.h"

namespace shale::crash_states {

void History::MarkDurable(size_t at, bool wal_only, size_t acked_by) {
  for (Write& w : writes_) {
    if (w.durable == static_cast<size_t>(-1) && (w.wal || !wal_only) && w.acked <= acked_by) {
      w.durable = at;
    }
  }
}

void History::MarkDurableIn(size_t at, const std::string& family) {
  for (Write& w : writes_) w.durable_in.emplace(family, at);  // an earlier mark stays
}

bool History::OrderBySequence() {
  for (const Write& w : writes_) {
    if (w.wal && w.seq == 0) return false;
  }
  std::stable_sort(writes_.begin(), writes_.end(),
                   [](const Write& a, const Write& b) { return a.seq < b.seq; });
  size_t durable = static_cast<size_t>(-1);  // the earliest durability of a later WAL write
  for (size_t i = writes_.size(); i-- > 0;) {
    Write& w = writes_[i];
    if (!w.wal) continue;
    durable = std::min(durable, w.durable);
    w.durable = durable;
  }
  by_sequence_ = true;
  return true;
}

void Apply(const Write& w, std::map<std::string, std::string>* m) {
  for (const auto& [k, v] : w.ops) {
    if (v.has_value()) {
      (*m)[k] = *v;
    } else if (k.ends_with('*')) {
      const std::string prefix = k.substr(0, k.size() - 1);
      auto it = m->lower_bound(prefix);
      while (it != m->end() && it->first.starts_with(prefix)) it = m->erase(it);
    } else {
      m->erase(k);
    }
  }
}

void History::Bounds(size_t point, size_t* lo, size_t* hi) const {
  *lo = 0;
  *hi = 0;
  bool leading = true;
  for (size_t i = 0; i < writes_.size(); i++) {
    if (writes_[i].durable <= point) *lo = i + 1;
    // Issued at 0: before the recording began (a nested recovery's starting state).
    const bool issued = writes_[i].issued < point || writes_[i].issued == 0;
    leading = leading && issued;
    if (issued && (leading || !by_sequence_)) *hi = i + 1;
  }
  if (*hi < *lo) *hi = *lo;
}

std::map<std::string, std::string> History::StateAfter(size_t n) const {
  std::map<std::string, std::string> m;
  for (size_t i = 0; i < n && i < writes_.size(); i++) Apply(writes_[i], &m);
  return m;
}

std::string History::Encode() const {
  std::ostringstream out;
  auto count = [](size_t v) {
    return static_cast<long long>(v == static_cast<size_t>(-1) ? -1 : v);
  };
  for (const Prepare& p : prepares_) {
    out << "prepare " << p.name << ' ' << p.issued << ' ' << p.acked << ' ' << count(p.resolved)
        << '\n';
  }
  if (by_sequence_) out << "by_sequence\n";
  for (const Write& w : writes_) {
    out << "write " << w.wal << ' ' << w.issued << ' ' << w.acked << ' '
        << static_cast<long long>(w.durable == static_cast<size_t>(-1) ? -1 : w.durable) << ' '
        << w.ops.size() << '\n';
    for (const auto& [f, at] : w.durable_in) out << "in " << f << ' ' << at << '\n';
    for (const auto& [k, v] : w.ops) {
      if (v.has_value()) {
        out << "put " << k << ' ' << *v << '\n';
      } else {
        out << "del " << k << '\n';
      }
    }
  }
  return out.str();
}

Status History::Decode(const std::string& text, History* history) {
  std::istringstream in(text);
  std::string word;
  *history = History();
  while (in >> word) {
    if (word == "prepare") {
      Prepare p;
      long long resolved;
      in >> p.name >> p.issued >> p.acked >> resolved;
      p.resolved = resolved < 0 ? static_cast<size_t>(-1) : static_cast<size_t>(resolved);
      history->AddPrepare(std::move(p));
      continue;
    }
    if (word == "by_sequence") {  // the writes come in sequence order (OrderBySequence)
      history->by_sequence_ = true;
      continue;
    }
    if (word != "write") return Status::Corruption("history: expected write, got " + word);
    Write w;
    long long durable;
    size_t n;
    in >> w.wal >> w.issued >> w.acked >> durable >> n;
    w.durable = durable < 0 ? static_cast<size_t>(-1) : static_cast<size_t>(durable);
    while (in && w.ops.size() < n) {
      std::string kind, k, v;
      in >> kind >> k;
      if (kind == "in") {  // durable in family k from a call count (not one of the n ops)
        in >> w.durable_in[k];
      } else if (kind == "put") {
        in >> v;
        w.ops.emplace_back(k, v);
      } else {
        w.ops.emplace_back(k, std::nullopt);
      }
    }
    if (!in) return Status::Corruption("history: truncated");
    history->Add(std::move(w));
  }
  return Status::OK();
}

namespace {

const char* ModeName(WALRecoveryMode m) {
  switch (m) {
    case WALRecoveryMode::kTolerateCorruptedTailRecords: return "kTolerateCorruptedTailRecords";
    case WALRecoveryMode::kAbsoluteConsistency: return "kAbsoluteConsistency";
    case WALRecoveryMode::kPointInTimeRecovery: return "kPointInTimeRecovery";
    case WALRecoveryMode::kSkipAnyCorruptedRecords: return "kSkipAnyCorruptedRecords";
  }
  return "?";
}

Status Materialize(const CrashState& state, Env* env) {
  for (const std::string& d : state.dirs) {
    if (d.empty() || d == "/") continue;
    Status s = env->CreateDirIfMissing(d);
    if (!s.ok()) return s;
  }
  for (const auto& [path, data] : state.files) {
    Status s = WriteStringToFile(env, data, path);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace

Status Scan(DB* db, std::map<std::string, std::string>* out) {
  std::string unused;
  return ReadFamily(db, db->DefaultColumnFamily(), "", {}, out, &unused);
}

Status ReadFamily(DB* db, ColumnFamilyHandle* family, const std::string& prefix,
                  const std::set<std::string>& keys, std::map<std::string, std::string>* out,
                  std::string* disagreement) {
  out->clear();
  std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions(), family));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    (*out)[prefix + it->key().ToString()] = it->value().ToString();
  }
  if (!it->status().ok()) return it->status();
  for (const std::string& k : keys) {  // R4
    if (!k.starts_with(prefix) || !disagreement->empty()) continue;
    std::string v;
    Status g = db->Get(ReadOptions(), family, k.substr(prefix.size()), &v);
    auto found = out->find(k);
    const bool agree =
        g.IsNotFound() ? found == out->end() : g.ok() && found != out->end() && found->second == v;
    if (!agree) {
      *disagreement = "Get(" + k + ") = " + g.ToString() + " " + v.substr(0, 16) +
                      " disagrees with the iterator";
    }
  }
  return Status::OK();
}

std::string ShowContents(const std::map<std::string, std::string>& m) {
  std::string s = "{";
  size_t n = 0;
  for (const auto& [k, v] : m) {
    if (n++ == 8) {
      s += " ... (" + std::to_string(m.size()) + " keys)";
      break;
    }
    s += " " + k + "=" + (v.size() > 12 ? v.substr(0, 12) + ".." : v);
  }
  return s + " }";
}

long MatchPrefix(const History& h, size_t lo, size_t hi,
                 const std::map<std::string, std::string>& got) {
  std::map<std::string, std::string> m = h.StateAfter(lo);
  for (size_t n = lo;; n++) {
    if (m == got) return static_cast<long>(n);
    if (n >= hi || n >= h.writes().size()) return -1;
    Apply(h.writes()[n], &m);
  }
}

namespace {

// R3: every key reads a value it held at some point (absent counts where it was absent).
std::string CheckSalvage(const History& h, const std::map<std::string, std::string>& got) {
  std::map<std::string, std::set<std::string>> held;
  for (const Write& w : h.writes()) {
    for (const auto& [k, v] : w.ops) {
      if (v.has_value()) held[k].insert(*v);
    }
  }
  for (const auto& [k, v] : got) {
    auto it = held.find(k);
    if (it == held.end() || it->second.count(v) == 0) {
      return "key " + k + " reads a value it never had: " + v.substr(0, 32);
    }
  }
  return "";
}

// Opens the DB (through a TransactionDB with co.txn), rolls back the transactions that
// come back prepared and names them in *prepared.
Status OpenDb(const Options& o, const CheckOptions& co, std::unique_ptr<DB>* db,
              std::set<std::string>* prepared) {
  prepared->clear();
  if (co.txn == 0) return DB::Open(o, co.dbname, db);
  TransactionDBOptions to;
  to.write_policy =
      co.txn == 2 ? TxnDBWritePolicy::WRITE_PREPARED : TxnDBWritePolicy::WRITE_COMMITTED;
  TransactionDB* raw = nullptr;
  Status s = TransactionDB::Open(o, to, co.dbname, &raw);
  if (!s.ok()) return s;
  db->reset(raw);
  std::vector<Transaction*> txns;
  raw->GetAllPreparedTransactions(&txns);
  for (Transaction* t : txns) {
    prepared->insert(t->GetName());
    if (s.ok()) s = t->Rollback();
    delete t;
  }
  return s;
}

bool InDb(const std::string& path, const std::string& dbname) {
  return path.size() > dbname.size() && path.compare(0, dbname.size(), dbname) == 0 &&
         path[dbname.size()] == '/';
}

// R8, for one checkpoint.
std::string CheckCheckpoint(const CrashState& state, const History& h, const CheckpointCheck& c,
                            const CheckOptions& co, int* opens) {
  const std::string what = "checkpoint " + c.dir;
  if (std::find(state.dirs.begin(), state.dirs.end(), c.dir) == state.dirs.end()) {
    if (state.point < c.acked) return "";
    return what + " is missing, though CreateCheckpoint returned at call " +
           std::to_string(c.acked);
  }
  std::unique_ptr<Env> env(NewMemEnv(Env::Default()));
  Status s = Materialize(state, env.get());
  Options o = co.options;
  o.env = env.get();
  o.create_if_missing = false;
  o.wal_recovery_mode = WALRecoveryMode::kPointInTimeRecovery;
  o.paranoid_checks = true;
  std::unique_ptr<DB> db;
  std::map<std::string, std::string> got;
  if (s.ok()) s = DB::Open(o, c.dir, &db);
  (*opens)++;
  if (s.ok()) s = Scan(db.get(), &got);
  if (s.ok()) s = db->Close();
  if (!s.ok()) return what + ": " + s.ToString();
  const std::map<std::string, std::string> want = h.StateAfter(c.writes);
  if (got == want) return "";
  return what + " reads " + ShowContents(got) + ", not the contents at its call " +
         ShowContents(want);
}

// R6.
std::string CheckPrepared(const History& h, size_t point, const std::set<std::string>& got) {
  for (const Prepare& p : h.prepares()) {
    const bool required = p.acked <= point && point <= p.resolved;
    if (required && got.count(p.name) == 0) {
      return "transaction " + p.name + " was prepared (synced) and not resolved, but " +
             "did not come back prepared";
    }
  }
  for (const std::string& name : got) {
    bool allowed = false;
    for (const Prepare& p : h.prepares()) allowed = allowed || (p.name == name && p.issued < point);
    if (!allowed) return "transaction " + name + " came back prepared before its Prepare";
  }
  return "";
}

}  // namespace

CheckResult CheckState(const CrashState& state, const History& history, size_t lo, size_t hi,
                       const CheckOptions& co) {
  CheckResult r;
  std::set<std::string> keys;
  for (const Write& w : history.writes()) {
    for (const auto& op : w.ops) keys.insert(op.first);
  }
  const std::vector<bool> paranoid =
      co.both_paranoid ? std::vector<bool>{true, false} : std::vector<bool>{true};
  for (WALRecoveryMode mode : co.modes) {
    for (bool para : paranoid) {
      const std::string where =
          std::string(ModeName(mode)) + (para ? " paranoid" : " non-paranoid") + ": ";
      std::unique_ptr<Env> env(NewMemEnv(Env::Default()));
      Status s = Materialize(state, env.get());
      if (!s.ok()) {
        r.violations.push_back("materialize: " + s.ToString());
        return r;
      }
      Options o = co.options;
      o.env = env.get();
      o.create_if_missing = true;
      o.wal_recovery_mode = mode;
      o.paranoid_checks = para;
      // A plain DB (or TransactionDB), or every family of the state (R7).
      std::unique_ptr<DB> db;
      FamilyDb families;
      std::set<std::string> prepared;
      auto open = [&] {
        return co.families ? families.Open(o, co.dbname) : OpenDb(o, co, &db, &prepared);
      };
      auto read = [&](std::map<std::string, std::string>* out, std::set<std::string>* present,
                      std::string* disagreement) {
        return co.families
                   ? families.Read(keys, out, present, disagreement)
                   : ReadFamily(db.get(), db->DefaultColumnFamily(), "", keys, out, disagreement);
      };
      auto close = [&] {
        if (co.families) return families.Close();
        Status c = db->Close();
        db.reset();
        return c;
      };
      s = open();
      r.opens++;
      if (!s.ok()) {
        const bool unclean_wal =
            std::any_of(state.unclean_wals.begin(), state.unclean_wals.end(),
                        [&](const std::string& w) { return InDb(w, co.dbname); });
        const bool may_refuse =
            s.IsCorruption() &&
            ((mode == WALRecoveryMode::kAbsoluteConsistency && (state.damaged || unclean_wal)) ||
             (mode == WALRecoveryMode::kTolerateCorruptedTailRecords && state.damaged));
        if (may_refuse) {
          r.refusals++;
        } else {
          r.violations.push_back(where + "open failed: " + s.ToString());
        }
        continue;
      }
      if (mode == WALRecoveryMode::kAbsoluteConsistency) {
        const std::string why = AbsoluteConsistencyMustRefuse(state, co.dbname);
        if (!why.empty()) r.violations.push_back(where + "opened, though " + why);
      }
      if (co.txn != 0) {
        const std::string bad = CheckPrepared(history, state.point, prepared);
        if (!bad.empty()) r.violations.push_back(where + bad);
      }
      std::map<std::string, std::string> got;
      std::set<std::string> present;
      std::string disagreement;
      s = read(&got, &present, &disagreement);
      if (!s.ok()) {
        r.violations.push_back(where + "iterator: " + s.ToString());
        close().PermitUncheckedError();
        continue;
      }
      if (!disagreement.empty()) r.violations.push_back(where + disagreement);
      if (mode == WALRecoveryMode::kSkipAnyCorruptedRecords) {
        const std::string bad = CheckSalvage(history, got);
        if (!bad.empty()) r.violations.push_back(where + bad);
      } else if (co.families || (co.writers && !history.by_sequence())) {
        const std::string bad = MatchFamilies(history, state.point, hi, got, present);
        if (!bad.empty()) r.violations.push_back(where + bad);
      } else if (MatchPrefix(history, lo, hi, got) < 0) {
        r.violations.push_back(where + "contents " + ShowContents(got) +
                               " are not the history after n writes for any n in [" +
                               std::to_string(lo) + ", " + std::to_string(hi) + "]; after " +
                               std::to_string(lo) + ": " + ShowContents(history.StateAfter(lo)));
      }
      if (co.reopen && para && mode == WALRecoveryMode::kPointInTimeRecovery) {  // R5
        s = close();
        if (s.ok()) s = open();
        std::map<std::string, std::string> again;
        std::set<std::string> present_again;
        std::string ignored;
        if (s.ok()) s = read(&again, &present_again, &ignored);
        if (!s.ok()) {
          r.violations.push_back(where + "reopen after recovery: " + s.ToString());
        } else if (again != got || present_again != present) {
          r.violations.push_back(where + "reopen after recovery reads " + ShowContents(again) +
                                 ", recovery read " + ShowContents(got));
        }
      }
      close().PermitUncheckedError();
    }
  }
  for (const CheckpointCheck& c : co.checkpoints) {
    const std::string bad = CheckCheckpoint(state, history, c, co, &r.opens);
    if (!bad.empty()) r.violations.push_back(bad);
  }
  return r;
}

Status SaveState(const std::string& dir, const CrashState& state, const History& history, size_t lo,
                 size_t hi, const CheckOptions& check) {
  Env* env = Env::Default();
  Status s = env->CreateDirIfMissing(dir);
  if (!s.ok()) return s;
  std::ostringstream meta;
  meta << "point " << state.point << "\nlo " << lo << "\nhi " << hi << "\ndamaged " << state.damaged
       << "\ntxn " << check.txn << "\nfamilies " << check.families << "\nwriters " << check.writers
       << '\n';
  for (const CheckpointCheck& c : check.checkpoints) {
    meta << "checkpoint " << c.dir << ' ' << c.issued << ' ' << c.acked << ' ' << c.writes << '\n';
  }
  for (const std::string& d : state.dirs) meta << "dir " << d << '\n';
  size_t i = 0;
  for (const auto& [path, data] : state.files) {
    const std::string name = "f" + std::to_string(i++);
    meta << "file " << name << ' ' << path << '\n';
    s = WriteStringToFile(env, data, dir + "/" + name);
    if (!s.ok()) return s;
  }
  for (const std::string& w : state.unclean_wals) meta << "unclean " << w << '\n';
  for (const std::string& w : state.torn_wals) meta << "torn " << w << '\n';
  s = WriteStringToFile(env, meta.str(), dir + "/state.txt");
  if (s.ok()) s = WriteStringToFile(env, history.Encode(), dir + "/history.txt");
  if (s.ok()) s = WriteStringToFile(env, state.description + "\n", dir + "/description.txt");
  return s;
}

Status LoadState(const std::string& dir, CrashState* state, History* history, size_t* lo,
                 size_t* hi, CheckOptions* check) {
  Env* env = Env::Default();
  std::string meta, hist;
  Status s = ReadFileToString(env, dir + "/state.txt", &meta);
  if (s.ok()) s = ReadFileToString(env, dir + "/history.txt", &hist);
  if (s.ok()) s = History::Decode(hist, history);
  if (!s.ok()) return s;
  *state = CrashState();
  check->txn = 0;
  check->families = false;
  check->writers = false;
  check->checkpoints.clear();
  std::istringstream in(meta);
  std::string word;
  while (in >> word) {
    if (word == "point") {
      in >> state->point;
    } else if (word == "lo") {
      in >> *lo;
    } else if (word == "hi") {
      in >> *hi;
    } else if (word == "txn") {
      in >> check->txn;
    } else if (word == "families") {
      in >> check->families;
    } else if (word == "writers") {
      in >> check->writers;
    } else if (word == "damaged") {
      in >> state->damaged;
    } else if (word == "checkpoint") {
      CheckpointCheck c;
      in >> c.dir >> c.issued >> c.acked >> c.writes;
      check->checkpoints.push_back(c);
    } else if (word == "dir") {
      std::string d;
      in >> d;
      state->dirs.push_back(d);
    } else if (word == "torn") {
      std::string w;
      in >> w;
      state->torn_wals.push_back(w);
    } else if (word == "unclean") {
      std::string w;
      in >> w;
      state->unclean_wals.push_back(w);
    } else if (word == "file") {
      std::string name, path, data;
      in >> name >> path;
      s = ReadFileToString(env, dir + "/" + name, &data);
      if (!s.ok()) return s;
      state->files[path] = std::move(data);
    } else {
      return Status::Corruption(dir + "/state.txt: unknown word " + word);
    }
  }
  ReadFileToString(env, dir + "/description.txt", &state->description).PermitUncheckedError();
  return Status::OK();
}

}  // namespace shale::crash_states
