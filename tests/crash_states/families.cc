#include "tests/crash_states/families.h"

#include <algorithm>
#include <functional>

namespace shale::crash_states {

std::string FamilyKey(uint32_t id, const std::string& key) {
  return std::to_string(id) + "/" + key;
}

std::string DropMarker(uint32_t id) { return FamilyKey(id, "*"); }

std::string FamilyOf(const std::string& key) {
  const size_t slash = key.find('/');
  return slash == std::string::npos ? "" : key.substr(0, slash);
}

FamilyDb::~FamilyDb() { Close().PermitUncheckedError(); }

Status FamilyDb::Open(const Options& options, const std::string& dbname) {
  std::vector<std::string> names;
  // No DB there yet (or no MANIFEST to list): Open with the default family creates one or
  // says why it cannot.
  if (!DB::ListColumnFamilies(options, dbname, &names).ok() || names.empty()) {
    names = {kDefaultColumnFamilyName};
  }
  std::vector<ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : names) {
    descriptors.emplace_back(name, ColumnFamilyOptions(options));
  }
  return DB::Open(DBOptions(options), dbname, descriptors, &handles_, &db_);
}

Status CloseFamilies(std::unique_ptr<DB>* db, std::vector<ColumnFamilyHandle*>* handles) {
  Status s;
  for (ColumnFamilyHandle* h : *handles) {
    Status d = (*db)->DestroyColumnFamilyHandle(h);
    if (s.ok()) s = d;
  }
  handles->clear();
  Status c = (*db)->Close();
  db->reset();
  return s.ok() ? c : s;
}

Status FamilyDb::Close() { return db_ == nullptr ? Status::OK() : CloseFamilies(&db_, &handles_); }

Status FamilyDb::Read(const std::set<std::string>& keys, std::map<std::string, std::string>* out,
                      std::set<std::string>* present, std::string* disagreement) {
  out->clear();
  present->clear();
  for (ColumnFamilyHandle* h : handles_) {
    present->insert(std::to_string(h->GetID()));
    std::map<std::string, std::string> family;
    Status s = ReadFamily(db_.get(), h, FamilyKey(h->GetID(), ""), keys, &family, disagreement);
    if (!s.ok()) return s;
    out->insert(family.begin(), family.end());
  }
  return Status::OK();
}

namespace {

// The keys of m in family f.
std::map<std::string, std::string> Part(const std::map<std::string, std::string>& m,
                                        const std::string& f) {
  const std::string prefix = f + "/";
  std::map<std::string, std::string> out;
  for (auto it = m.lower_bound(prefix); it != m.end() && it->first.starts_with(prefix); ++it) {
    out.insert(*it);
  }
  return out;
}

bool IsDrop(const Write& w) {
  return w.ops.size() == 1 && !w.ops[0].second.has_value() && w.ops[0].first.ends_with("/*");
}

}  // namespace

std::map<std::string, size_t> FamilyPrefixes(const History& h, size_t hi,
                                             const std::map<std::string, std::string>& got,
                                             const std::set<std::string>& present) {
  std::map<std::string, size_t> out;
  std::map<std::string, std::string> m;
  hi = std::min(hi, h.writes().size());
  for (size_t n = 0;; n++) {
    for (const std::string& f : present) {
      if (out.count(f) == 0 && Part(m, f) == Part(got, f)) out[f] = n;
    }
    if (n >= hi) break;
    Apply(h.writes()[n], &m);
  }
  return out;
}

std::string MatchFamilies(const History& h, size_t point, size_t hi,
                          const std::map<std::string, std::string>& got,
                          const std::set<std::string>& present) {
  const std::vector<Write>& writes = h.writes();
  hi = std::min(hi, writes.size());
  std::set<std::string> families = present;
  std::vector<std::set<std::string>> touched(writes.size());
  for (size_t i = 0; i < writes.size(); i++) {
    for (const auto& op : writes[i].ops) touched[i].insert(FamilyOf(op.first));
    families.insert(touched[i].begin(), touched[i].end());
  }
  for (const auto& [k, v] : got) families.insert(FamilyOf(k));
  std::map<std::string, size_t> lo;
  for (size_t i = 0; i < writes.size(); i++) {
    for (const std::string& f : touched[i]) {
      auto in = writes[i].durable_in.find(f);
      if (writes[i].durable <= point || (in != writes[i].durable_in.end() && in->second <= point)) {
        lo[f] = i + 1;
      }
    }
  }

  // Each family's candidates: the n in [lo_f, hi] that leave it as read, one per count of
  // writes to it below n (n with the same count are the same choice for R7).
  struct Candidate {
    size_t n;
    size_t below;
  };
  std::map<std::string, std::vector<Candidate>> candidates;
  std::map<std::string, size_t> below;
  std::set<std::string> dropped;
  std::map<std::string, std::string> m;
  for (size_t n = 0;; n++) {
    for (const std::string& f : families) {
      if (n < lo[f] || (present.count(f) != 0 && dropped.count(f) != 0)) continue;
      if (Part(m, f) != Part(got, f)) continue;
      std::vector<Candidate>& c = candidates[f];
      if (c.empty() || c.back().below != below[f]) c.push_back({n, below[f]});
    }
    if (n >= hi) break;
    Apply(writes[n], &m);
    if (IsDrop(writes[n])) dropped.insert(FamilyOf(writes[n].ops[0].first));
    for (const std::string& f : touched[n]) below[f]++;
  }
  for (const std::string& f : families) {
    if (candidates[f].empty()) {
      std::string why = "family " + f + (present.count(f) != 0 ? "" : " (absent)") + ": " +
                        ShowContents(Part(got, f)) +
                        " is not its history after n writes for any n in [" +
                        std::to_string(lo[f]) + ", " + std::to_string(hi) + "]";
      if (present.count(f) != 0 && dropped.count(f) != 0) why += " before its drop";
      return why + "; after " + std::to_string(lo[f]) + ": " +
             ShowContents(Part(h.StateAfter(lo[f]), f));
    }
  }

  // WAL writes in real-time order across families: y acknowledged before x was issued.
  // Writes from before the recording (issued at 0: a nested recovery's starting state)
  // come in the order the history gives them.
  auto precedes = [&](size_t y, size_t x) {
    if (writes[x].issued == 0 && writes[y].issued == 0) return y < x;
    return writes[y].acked <= writes[x].issued;
  };
  std::vector<std::pair<size_t, size_t>> before;  // (y, x)
  for (size_t x = 0; x < writes.size(); x++) {
    for (size_t y = 0; y < writes.size(); y++) {
      if (x != y && writes[x].wal && writes[y].wal && precedes(y, x) &&
          !(touched[x] == touched[y] && touched[x].size() == 1)) {
        before.emplace_back(y, x);
      }
    }
  }

  // A choice of n per family that keeps every spanning write whole and every write
  // kept in some family preceded by what was acknowledged before it was issued.
  const std::vector<std::string> order(families.begin(), families.end());
  // A family chosen past its drop says nothing of the writes to it (they are gone).
  std::map<std::string, size_t> drop_at;
  for (size_t i = 0; i < writes.size(); i++) {
    if (IsDrop(writes[i])) drop_at.emplace(FamilyOf(writes[i].ops[0].first), i);
  }
  std::map<std::string, size_t> chosen;
  // Whether write i is in (kept) or out of (!kept) some family chosen so far.
  auto in_some = [&](size_t i, bool kept) {
    for (const std::string& g : touched[i]) {
      auto it = chosen.find(g);
      if (it == chosen.end()) continue;
      auto d = drop_at.find(g);
      if (d != drop_at.end() && it->second > d->second) continue;
      if ((it->second > i) == kept) return true;
    }
    return false;
  };
  auto kept_in_some = [&](size_t i) { return in_some(i, true); };
  auto lost_in_some = [&](size_t i) { return in_some(i, false); };
  auto consistent = [&] {
    for (size_t i = 0; i < writes.size(); i++) {
      if (touched[i].size() > 1 && kept_in_some(i) && lost_in_some(i)) return false;
    }
    for (const auto& [y, x] : before) {
      if (kept_in_some(x) && lost_in_some(y)) return false;
    }
    return true;
  };
  std::function<bool(size_t)> choose = [&](size_t j) {
    if (j == order.size()) return true;
    const std::string& f = order[j];
    for (const Candidate& c : candidates[f]) {
      chosen[f] = c.n;
      if (consistent() && choose(j + 1)) return true;
    }
    chosen.erase(f);
    return false;
  };
  if (choose(0)) return "";
  std::string why =
      "no prefix per family keeps every cross-family batch whole and the WAL's order; per "
      "family, ";
  for (const std::string& f : order) {
    why += "family " + f + " at n in {";
    for (const Candidate& c : candidates[f]) why += " " + std::to_string(c.n);
    why += " } ";
  }
  return why;
}

}  // namespace shale::crash_states
