// The generator of persistence_model.h: replays the log call by call, keeping what the OS
// and the disk hold, and at each crash point combines the choices the model leaves.
#include <algorithm>
#include <set>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "tests/crash_states/persistence_model.h"

namespace shale::crash_states {

bool IsPersistenceOp(const FsOp& op) {
  return op.kind == FsOp::kSync || op.kind == FsOp::kDirSync || op.kind == FsOp::kRename ||
         op.kind == FsOp::kDelete || op.kind == FsOp::kClose || op.kind == FsOp::kLink ||
         op.kind == FsOp::kRmdir;
}

namespace {

struct Inode {
  std::string durable;  // on the disk whatever happens (D1), or the old bytes (D5)
  std::string data;     // what the OS holds
  uint64_t pushed = 0;  // data[0, pushed) reached the OS (D2)
  uint64_t unpushed = 0;
  uint64_t capacity = 0;
  bool mmap = false;
  bool open = false;
  std::set<uint64_t> ends;  // sizes at which bytes were pushed: where records end
  // Where appends ended: a superset of the record ends (a mapped WAL's last record may
  // be whole before the push that follows it), so a cut elsewhere is inside a record.
  std::set<uint64_t> append_ends;
};

// An entry change not yet made durable by a directory sync.
struct NameOp {
  FsOp::Kind kind;
  std::string path;
  std::string path2;
  uint64_t inode = 0;
};

struct Names {
  std::map<std::string, uint64_t> files;
  std::set<std::string> dirs;
  // Directories renamed: old path -> new. An entry change recorded under the old path (before
  // the rename) and applied after it lands in the directory's new place (N5); a directory
  // made again under the old path ends this.
  std::map<std::string, std::string> moved;

  // Where path is now, its renamed ancestors followed.
  std::string Resolve(std::string path) const {
    for (size_t guard = 0; guard <= moved.size(); guard++) {
      bool changed = false;
      for (const auto& [from, to] : moved) {
        if (path == from || (path.size() > from.size() && path.compare(0, from.size(), from) == 0 &&
                             path[from.size()] == '/')) {
          path = to + path.substr(from.size());
          changed = true;
          break;
        }
      }
      if (!changed) break;
    }
    return path;
  }

  static bool Under(const std::string& path, const std::string& dir) {
    return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
           path[dir.size()] == '/';
  }

  // Moves directory src and everything under it to dst.
  void MoveDir(const std::string& src, const std::string& dst) {
    std::map<std::string, uint64_t> f;
    for (const auto& [path, id] : files)
      f[Under(path, src) ? dst + path.substr(src.size()) : path] = id;
    files = std::move(f);
    std::set<std::string> d;
    for (const std::string& path : dirs) {
      d.insert(path == src || Under(path, src) ? dst + path.substr(src.size()) : path);
    }
    dirs = std::move(d);
    moved[src] = dst;
  }

  void Apply(const NameOp& op) {
    if (op.kind == FsOp::kMkdir) moved.erase(op.path);
    const std::string path = Resolve(op.path);
    const std::string path2 = op.path2.empty() ? "" : Resolve(op.path2);
    switch (op.kind) {
      case FsOp::kCreate: files[path] = op.inode; break;
      case FsOp::kRename: {
        auto it = files.find(path);
        if (it != files.end()) {
          const uint64_t inode = it->second;
          files.erase(it);
          files[path2] = inode;
        } else if (dirs.count(path) != 0) {
          MoveDir(path, path2);
        }
        break;
      }
      case FsOp::kLink: {
        auto it = files.find(path);
        if (it != files.end()) files[path2] = it->second;
        break;
      }
      case FsOp::kDelete: files.erase(path); break;
      case FsOp::kMkdir: dirs.insert(path); break;
      case FsOp::kRmdir: dirs.erase(path); break;
      default: break;
    }
  }
};

// One choice for a file's contents.
struct Alt {
  std::string content;
  bool damaged = false;  // hole before data, or garbage
  bool cut = false;      // not at a record end (zeros past it aside)
  bool torn = false;     // undamaged, with bytes past the last record end that are not zeros
  std::string desc;      // empty for "everything pushed"
};

std::string_view StripZeros(const std::string& s) {
  size_t n = s.size();
  while (n > 0 && s[n - 1] == '\0') n--;
  return std::string_view(s.data(), n);
}

uint64_t WindowEnd(uint64_t size) {
  uint64_t end = 0;
  uint64_t w = 0;
  while (end < size) {
    w = w == 0 ? (64u << 10) : std::min<uint64_t>(w * 2, 4u << 20);
    end += w;
  }
  return end;
}

// n indices from [0, count), evenly spread, always the first and the last.
std::vector<size_t> Sample(size_t count, size_t n) {
  std::vector<size_t> out;
  if (count <= n) {
    for (size_t i = 0; i < count; i++) out.push_back(i);
    return out;
  }
  for (size_t i = 0; i < n; i++) out.push_back(n == 1 ? 0 : i * (count - 1) / (n - 1));
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

class FileAlternatives {
 public:
  FileAlternatives(const Inode& f, const GeneratorOptions& o) : f_(f), o_(o) {}

  // [0] is the least persisted choice, [1] the most (both may be equal).
  std::vector<Alt> Build() {
    const std::string v = f_.data.substr(0, f_.pushed);
    size_t c = 0;
    while (c < v.size() && c < f_.durable.size() && v[c] == f_.durable[c]) c++;
    const bool truncated = c < f_.durable.size();
    s_ = c;
    e_ = v.size();
    v_ = &v;
    std::vector<Alt> out;
    Alt min;
    if (truncated) {
      min.content = f_.durable;
      min.desc = "truncate lost";
    } else {
      min = Cut(s_);
    }
    out.push_back(min);
    out.push_back(Cut(e_));
    if (s_ < e_) {
      for (uint64_t len : Lengths()) {
        if (len != s_ && len != e_) out.push_back(Cut(len));
      }
      if (truncated) out.push_back(Cut(s_));
      AddHoles(&out);
      AddGarbage(e_, &out);
      if (e_ - s_ > o_.unit) AddGarbage(s_ + (e_ - s_) / 2, &out);
      const uint64_t aligned = (e_ + o_.unit - 1) / o_.unit * o_.unit;
      if (aligned > e_) {
        Alt a = Cut(e_);
        a.content.append(aligned - e_, '\0');
        a.desc = "zeros past the end";
        out.push_back(std::move(a));
      }
    }
    if (f_.mmap && f_.open) {
      const uint64_t window = WindowEnd(f_.data.size());
      const size_t n = out.size();
      for (size_t i = 0; i < n; i++) {
        if (out[i].content.size() >= window) continue;
        Alt padded = out[i];
        padded.content.resize(window, '\0');
        padded.desc += padded.desc.empty() ? "mapped window" : ", mapped window";
        if (i < 2) {
          out.push_back(std::move(padded));  // keep the unpadded min and max as well
        } else {
          out[i] = std::move(padded);
        }
      }
    }
    for (Alt& a : out) {
      // Torn unless it is the data up to a record end (or the synced bytes), then zeros.
      bool clean = a.damaged || a.content == f_.durable ||
                   a.content.find_first_not_of('\0') == std::string::npos;
      for (const std::set<uint64_t>* set : {&f_.ends, &f_.append_ends}) {
        for (uint64_t b : *set) {
          clean = clean || (b <= a.content.size() && b <= v.size() &&
                            a.content.compare(0, b, v, 0, b) == 0 &&
                            a.content.find_first_not_of('\0', b) == std::string::npos);
        }
      }
      a.torn = !clean;
    }
    return out;
  }

 private:
  bool IsEnd(uint64_t len) const {
    return len == 0 || len == f_.durable.size() || f_.ends.count(len) != 0;
  }

  Alt Cut(uint64_t len) const {
    Alt a;
    a.content = v_->substr(0, len);
    a.cut = !IsEnd(len);
    if (len != e_) a.desc = "cut at " + std::to_string(len) + " of " + std::to_string(e_);
    return a;
  }

  std::vector<uint64_t> Lengths() const {
    std::vector<uint64_t> ends;
    std::vector<uint64_t> units;
    for (uint64_t end : f_.ends) {
      if (end > s_ && end < e_) ends.push_back(end);
    }
    for (uint64_t u = (s_ / o_.unit + 1) * o_.unit; u < e_; u += o_.unit) units.push_back(u);
    std::vector<uint64_t> out;
    const size_t budget = o_.max_lengths;
    for (size_t i : Sample(ends.size(), budget / 2)) out.push_back(ends[i]);
    for (size_t i : Sample(units.size(), budget - out.size())) out.push_back(units[i]);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  // Units of the unsynced region: [start, end) pairs.
  std::vector<std::pair<uint64_t, uint64_t>> Units() const {
    std::vector<std::pair<uint64_t, uint64_t>> units;
    uint64_t a = s_;
    while (a < e_) {
      const uint64_t b = std::min<uint64_t>((a / o_.unit + 1) * o_.unit, e_);
      units.emplace_back(a, b);
      a = b;
    }
    return units;
  }

  void AddHoles(std::vector<Alt>* out) const {
    if (o_.k < 1) return;
    const auto units = Units();
    std::vector<std::vector<size_t>> combos;
    for (size_t i : Sample(units.size(), o_.max_holes)) combos.push_back({i});
    if (o_.k >= 2) {
      // Pairs: each unit with the last, and neighbours, within the budget.
      for (size_t i : Sample(units.size(), o_.max_holes / 2)) {
        if (i + 1 < units.size()) combos.push_back({i, units.size() - 1});
        if (i + 2 < units.size()) combos.push_back({i, i + 1});
      }
    }
    for (const auto& combo : combos) {
      Alt a = Cut(e_);
      size_t last_zeroed = 0;
      std::string where;
      for (size_t i : combo) {
        std::fill(a.content.begin() + static_cast<std::ptrdiff_t>(units[i].first),
                  a.content.begin() + static_cast<std::ptrdiff_t>(units[i].second), '\0');
        last_zeroed = std::max(last_zeroed, i);
        where += (where.empty() ? "" : ",") + std::to_string(units[i].first);
      }
      // A hole with data after it is damage; zeros to the end are a cut.
      a.damaged = last_zeroed + 1 < units.size() || combo.size() > 1;
      a.cut = true;
      a.desc = "hole at " + where + " of " + std::to_string(e_);
      out->push_back(std::move(a));
    }
  }

  void AddGarbage(uint64_t len, std::vector<Alt>* out) const {
    if (o_.k < 1 || len <= s_) return;
    Alt a = Cut(len);
    const uint64_t from = std::max<uint64_t>(s_, (len - 1) / o_.unit * o_.unit);
    for (uint64_t i = from; i < len; i++) a.content[i] = static_cast<char>(0xA5 ^ (i & 0x3F));
    a.damaged = true;
    a.cut = true;
    a.desc = "garbage at " + std::to_string(from) + ".." + std::to_string(len);
    out->push_back(std::move(a));
  }

  const Inode& f_;
  const GeneratorOptions& o_;
  uint64_t s_ = 0;
  uint64_t e_ = 0;
  const std::string* v_ = nullptr;
};

class Replay {
 public:
  Replay(const std::map<std::string, std::string>& initial,
         const std::vector<std::string>& initial_dirs, const GeneratorOptions& o)
      : o_(o) {
    for (const std::string& d : initial_dirs) live_.dirs.insert(d);
    for (const auto& [path, data] : initial) {
      const uint64_t id = next_inode_++;
      Inode& f = inodes_[id];
      f.durable = data;
      f.data = data;
      f.pushed = data.size();
      f.ends.insert(data.size());
      live_.files[path] = id;
      live_.dirs.insert(ParentDir(path));
    }
    durable_ = live_;
  }

  void Apply(const FsOp& op) {
    switch (op.kind) {
      case FsOp::kCreate: {
        auto it = live_.files.find(op.path);
        uint64_t id;
        if (it != live_.files.end()) {
          id = it->second;  // truncated in place (D5)
          Inode& f = inodes_[id];
          f.data.clear();
          f.pushed = 0;
          f.unpushed = 0;
          f.ends = {0};
          f.append_ends.clear();
        } else {
          id = next_inode_++;
          live_.files[op.path] = id;
          Pending({FsOp::kCreate, op.path, "", id});
        }
        Inode& f = inodes_[id];
        f.mmap = op.mmap;
        f.capacity = op.size;
        f.open = true;
        file_inode_[op.file] = id;
        break;
      }
      case FsOp::kAppend: {
        Inode& f = File(op.file);
        if (f.data.size() < op.offset + op.data.size()) f.data.resize(op.offset + op.data.size());
        f.data.replace(op.offset, op.data.size(), op.data);
        f.append_ends.insert(op.offset + op.data.size());
        if (f.mmap) {
          f.pushed = f.data.size();
        } else {
          f.unpushed += op.data.size();
          if (f.unpushed > f.capacity) Push(&f);
        }
        break;
      }
      case FsOp::kFlush: Push(&File(op.file)); break;
      case FsOp::kSync: {
        Inode& f = File(op.file);
        Push(&f);
        f.durable = f.data;
        if (o_.model == NameModel::kJournal) CommitNames("");
        break;
      }
      case FsOp::kClose: {
        Inode& f = File(op.file);
        Push(&f);
        f.open = false;
        break;
      }
      case FsOp::kRename:
      case FsOp::kLink:
        Pending({op.kind, op.path, op.path2, 0});
        live_.Apply(pending_.back());
        break;
      case FsOp::kRmdir:
        Pending({FsOp::kRmdir, op.path, "", 0});
        live_.Apply(pending_.back());
        break;
      case FsOp::kDelete:
        Pending({FsOp::kDelete, op.path, "", 0});
        live_.Apply(pending_.back());
        break;
      case FsOp::kTruncate: {
        auto it = live_.files.find(op.path);
        if (it != live_.files.end()) {
          Inode& f = inodes_[it->second];
          f.data.resize(op.size);
          f.pushed = std::min<uint64_t>(f.pushed, op.size);
          f.ends.insert(op.size);
        }
        break;
      }
      case FsOp::kMkdir:
        Pending({FsOp::kMkdir, op.path, "", 0});
        live_.Apply(pending_.back());
        break;
      case FsOp::kDirSync: CommitNames(op.path); break;
    }
  }

  // Every state at this point, each passed to emit once.
  size_t Emit(size_t point, const std::function<bool(const CrashState&)>& emit, bool* stop) {
    const std::vector<std::vector<bool>> subsets = NameSubsets();
    std::vector<Names> spaces;
    std::set<uint64_t> reachable;
    for (const auto& subset : subsets) {
      Names n = durable_;
      for (size_t i = 0; i < pending_.size(); i++) {
        if (subset[i]) n.Apply(pending_[i]);
      }
      for (const auto& [path, id] : n.files) reachable.insert(id);
      spaces.push_back(std::move(n));
    }
    std::vector<uint64_t> ids(reachable.begin(), reachable.end());
    std::map<uint64_t, std::vector<Alt>> alts;
    for (uint64_t id : ids) alts[id] = FileAlternatives(inodes_[id], o_).Build();

    // Dimension 0: the name subsets; then one per reachable inode.
    std::vector<size_t> radix = {spaces.size()};
    for (uint64_t id : ids) radix.push_back(alts[id].size());
    double product = 1;
    for (size_t r : radix) product *= static_cast<double>(r);

    std::vector<std::vector<size_t>> choices;
    if (product <= static_cast<double>(o_.max_states_per_point)) {
      std::vector<size_t> c(radix.size(), 0);
      while (true) {
        choices.push_back(c);
        size_t d = 0;
        while (d < c.size() && ++c[d] == radix[d]) c[d++] = 0;
        if (d == c.size()) break;
      }
    } else {
      // Each dimension alone, the others at their most (1) and at their least (0) choice.
      for (size_t base : {size_t{1}, size_t{0}}) {
        std::vector<size_t> c(radix.size());
        for (size_t d = 0; d < radix.size(); d++) c[d] = std::min(base, radix[d] - 1);
        choices.push_back(c);
        for (size_t d = 0; d < radix.size(); d++) {
          for (size_t a = 0; a < radix[d]; a++) {
            std::vector<size_t> v = c;
            v[d] = a;
            choices.push_back(std::move(v));
          }
        }
      }
    }

    std::unordered_set<std::string> seen;
    size_t emitted = 0;
    for (const auto& c : choices) {
      CrashState st;
      st.point = point;
      const Names& n = spaces[c[0]];
      std::string key;
      for (const auto& [path, id] : n.files) {
        const size_t di =
            1 + static_cast<size_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
        const Alt& a = alts[id][c[di]];
        st.files[path] = a.content;
        st.damaged = st.damaged || a.damaged;
        // Bytes pushed to a WAL and not on the disk (zeros past the end aside).
        const bool lost = StripZeros(a.content) != StripZeros(alts[id][1].content);
        if ((a.cut || lost) && path.size() > 4 && path.compare(path.size() - 4, 4, ".log") == 0) {
          st.unclean_wals.push_back(path);
          if (a.torn) st.torn_wals.push_back(path);
        }
        if (!a.desc.empty())
          st.description += path.substr(path.rfind('/') + 1) + ": " + a.desc + "; ";
        key += path + '\0' + std::to_string(std::hash<std::string_view>()(a.content)) + '\0' +
               std::to_string(a.content.size()) + '\0';
      }
      for (const std::string& d : n.dirs) {
        st.dirs.push_back(d);
        key += "d" + d + '\0';
      }
      if (!seen.insert(key).second) continue;
      if (c[0] != 1 && !pending_.empty()) st.description += DescribeNames(subsets[c[0]]);
      emitted++;
      if (!emit(st)) {
        *stop = true;
        break;
      }
    }
    return emitted;
  }

 private:
  Inode& File(uint64_t file) { return inodes_[file_inode_[file]]; }

  static void Push(Inode* f) {
    f->pushed = f->data.size();
    f->unpushed = 0;
    f->ends.insert(f->data.size());
  }

  void Pending(NameOp op) { pending_.push_back(std::move(op)); }

  // N1: changes in dir become durable ("" commits all: N3). A change recorded in a
  // directory renamed since is in the directory's new place (N5).
  void CommitNames(const std::string& dir) {
    std::vector<NameOp> rest;
    for (const NameOp& op : pending_) {
      const std::string path = live_.Resolve(op.path);
      // N4: syncing a directory makes its own creation durable too.
      const bool self =
          op.kind == FsOp::kMkdir && !dir.empty() && (path == dir || Names::Under(dir, path));
      const bool two_names = op.kind == FsOp::kRename || op.kind == FsOp::kLink;
      const bool covered = dir.empty() || self || ParentDir(path) == dir ||
                           ParentDir(op.path) == dir ||
                           (two_names && ParentDir(live_.Resolve(op.path2)) == dir);
      if (covered) {
        durable_.Apply(op);
      } else {
        rest.push_back(op);
      }
    }
    pending_ = std::move(rest);
  }

  // Whether pending change j must follow pending change i (N2).
  bool DependsOn(size_t j, size_t i) const {
    const NameOp& a = pending_[i];
    const NameOp& b = pending_[j];
    auto names = [](const NameOp& op) {
      std::vector<std::string> v = {op.path};
      if (!op.path2.empty()) v.push_back(op.path2);
      return v;
    };
    // A directory made or renamed into place comes before anything recorded inside it.
    const bool makes_dir = a.kind == FsOp::kMkdir || a.kind == FsOp::kRename;
    for (const std::string& x : names(a)) {
      for (const std::string& y : names(b)) {
        if (x == y) return true;
        if (makes_dir && Names::Under(y, x)) return true;
      }
    }
    return false;
  }

  // Valid subsets of the pending changes: [0] none, [1] all (when any is pending).
  std::vector<std::vector<bool>> NameSubsets() const {
    const size_t n = pending_.size();
    std::vector<std::vector<bool>> out = {std::vector<bool>(n, false)};
    if (n == 0) return out;
    out.push_back(std::vector<bool>(n, true));
    auto valid = [&](const std::vector<bool>& s) {
      for (size_t j = 0; j < n; j++) {
        if (!s[j]) continue;
        for (size_t i = 0; i < j; i++) {
          if (!s[i] && DependsOn(j, i)) return false;
        }
      }
      return true;
    };
    auto add = [&](std::vector<bool> s) {
      if (std::find(out.begin(), out.end(), s) == out.end() && valid(s))
        out.push_back(std::move(s));
    };
    // Prefixes: the only choices under N3, and part of every bounded set.
    for (size_t len = 1; len < n; len++) {
      std::vector<bool> s(n, false);
      std::fill(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(len), true);
      add(std::move(s));
    }
    if (o_.model == NameModel::kJournal) return out;
    if (n <= o_.max_exhaustive_names) {
      for (uint64_t mask = 1; mask + 1 < (uint64_t{1} << n); mask++) {
        std::vector<bool> s(n);
        for (size_t i = 0; i < n; i++) s[i] = (mask >> i) & 1;
        add(std::move(s));
      }
    } else {
      for (size_t skip = 0; skip < n; skip++) {  // all but one, and what depends on it
        std::vector<bool> s(n, true);
        s[skip] = false;
        for (size_t j = skip + 1; j < n; j++) {
          for (size_t i = skip; i < j; i++) {
            if (!s[i] && DependsOn(j, i)) s[j] = false;
          }
        }
        add(std::move(s));
      }
    }
    return out;
  }

  std::string DescribeNames(const std::vector<bool>& subset) const {
    std::string lost;
    for (size_t i = 0; i < pending_.size(); i++) {
      if (subset[i]) continue;
      const NameOp& op = pending_[i];
      FsOp f;
      f.kind = op.kind;
      f.path = op.path;
      f.path2 = op.path2;
      lost += (lost.empty() ? "" : ", ") + DescribeOp(f);
    }
    return "not durable: " + lost + "; ";
  }

  const GeneratorOptions& o_;
  std::map<uint64_t, Inode> inodes_;
  std::map<uint64_t, uint64_t> file_inode_;
  uint64_t next_inode_ = 1;
  Names live_;
  Names durable_;
  std::vector<NameOp> pending_;
};

}  // namespace

CrashStateGenerator::CrashStateGenerator(std::map<std::string, std::string> initial,
                                         std::vector<FsOp> ops, GeneratorOptions options,
                                         std::vector<std::string> initial_dirs)
    : initial_(std::move(initial)),
      initial_dirs_(std::move(initial_dirs)),
      ops_(std::move(ops)),
      options_(options) {}

size_t CrashStateGenerator::ForEach(const std::function<bool(const CrashState&)>& fn) {
  Replay replay(initial_, initial_dirs_, options_);
  size_t total = 0;
  bool stop = false;
  for (size_t p = 0; p <= ops_.size() && !stop; p++) {
    const bool crash_here =
        options_.points == CrashPoints::kAll || p == ops_.size() || IsPersistenceOp(ops_[p]);
    if (crash_here) total += replay.Emit(p, fn, &stop);
    if (p < ops_.size()) replay.Apply(ops_[p]);
  }
  return total;
}

}  // namespace shale::crash_states
