// DBImpl's reads through a ReadCallback, the hook WritePrepared transactions hide
// uncommitted data with. GetWithCallback, MultiGetWithCallback, NewIteratorWithCallback
// (forward, backward, every seek) and GetMergeOperandsWithCallback must answer as if the
// entries the callback hides had never been written, wherever those entries sit (active or
// immutable memtable, L0, a deeper level) and whatever mix of Puts, Merges, Deletes and
// SingleDeletes a key has. Targeted cases, one per rule and per place the data sits, then a
// randomized model test that prints its seed (TestSeed; SHALE_TEST_SEED replays a run).
//
// A snapshot is taken after every write, so flushes and compactions keep every version
// (each is alone in its snapshot stripe): the callback alone decides what a read sees, as
// the snapshot checker of a WritePrepared DB arranges for uncommitted data.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "db/db_impl.h"
#include "shale/db.h"
#include "shale/table.h"
#include "shale/utilities/merge_operators.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/gated_sst_env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

enum class Op { kPut, kMerge, kDelete, kSingleDelete };

struct Entry {
  std::string key;
  SequenceNumber seq;
  Op op;
  std::string value;
};

// Hides the sequences in *hidden. Counts the calls that got past the callback's bounds in
// *full_checks (when given) and remembers the bound the last one saw.
class HideSeqs final : public ReadCallback {
 public:
  explicit HideSeqs(const std::set<SequenceNumber>* hidden,
                    SequenceNumber max_visible = kMaxSequenceNumber,
                    SequenceNumber min_uncommitted = kMinUnCommittedSeq,
                    uint64_t* full_checks = nullptr)
      : ReadCallback(max_visible, min_uncommitted), hidden_(hidden), full_checks_(full_checks) {}
  bool IsVisibleFullCheck(SequenceNumber seq) override {
    if (full_checks_ != nullptr) ++*full_checks_;
    return hidden_->count(seq) == 0;
  }

 private:
  const std::set<SequenceNumber>* const hidden_;
  uint64_t* const full_checks_;
};

using Model = std::map<std::string, std::string>;

// The entries of log a read at snapshot `snap` sees, oldest first: not hidden, not newer.
std::vector<const Entry*> VisibleEntries(const std::vector<Entry>& log,
                                         const std::set<SequenceNumber>& hidden,
                                         SequenceNumber snap) {
  std::vector<const Entry*> out;
  for (const Entry& e : log) {
    if (e.seq <= snap && hidden.count(e.seq) == 0) out.push_back(&e);
  }
  return out;
}

// Every key's value as such a read sees it, operands joined by ',' onto their base.
Model ModelAt(const std::vector<Entry>& log, const std::set<SequenceNumber>& hidden,
              SequenceNumber snap) {
  Model m;
  for (const Entry* e : VisibleEntries(log, hidden, snap)) {
    switch (e->op) {
      case Op::kPut: m[e->key] = e->value; break;
      case Op::kDelete:
      case Op::kSingleDelete: m.erase(e->key); break;
      case Op::kMerge: {
        auto it = m.find(e->key);
        if (it == m.end()) {
          m[e->key] = e->value;
        } else {
          it->second += "," + e->value;
        }
        break;
      }
    }
  }
  return m;
}

// GetMergeOperands' answer: the visible operands above the newest visible Put (included,
// first) or tombstone, oldest first.
std::vector<std::string> ModelOperands(const std::vector<Entry>& log,
                                       const std::set<SequenceNumber>& hidden, SequenceNumber snap,
                                       const std::string& key) {
  std::vector<std::string> ops;
  for (const Entry* e : VisibleEntries(log, hidden, snap)) {
    if (e->key != key) continue;
    if (e->op == Op::kDelete || e->op == Op::kSingleDelete) ops.clear();
    if (e->op == Op::kPut) ops.assign(1, e->value);
    if (e->op == Op::kMerge) ops.push_back(e->value);
  }
  return ops;
}

std::string Show(const Status& s, const Slice& v) {
  if (s.IsNotFound()) return "NOT_FOUND";
  return s.ok() ? v.ToString() : s.ToString();
}

std::string Expected(const Model& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? "NOT_FOUND" : it->second;
}

// Where a test's entries are put before it reads them.
enum class Place { kMemtable, kImmutable, kL0, kDeeper };

class DBReadCallbackTest : public DBTestBase {
 protected:
  DBReadCallbackTest() : DBTestBase("db_read_callback") {
    options_.env = &gate_;
    options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
    options_.disable_auto_compactions = true;
    options_.write_buffer_size = 8 << 20;
    options_.max_write_buffer_number = 4;
    BlockBasedTableOptions t;
    t.block_size = 256;  // a key's versions span blocks
    options_.table_factory.reset(NewBlockBasedTableFactory(t));
  }
  ~DBReadCallbackTest() override {
    gate_.SetOpen(true);
    for (const Snapshot* s : snapshots_) {
      if (db_ != nullptr) db_->ReleaseSnapshot(s);
    }
    TryClose().PermitUncheckedError();  // before the env goes
  }

  DBImpl* impl() { return static_cast<DBImpl*>(db_.get()); }

  // Writes one entry, logs it with its sequence and takes a snapshot after it.
  SequenceNumber Write(Op op, const std::string& key, const std::string& value = "") {
    Status s;
    switch (op) {
      case Op::kPut: s = Put(key, value); break;
      case Op::kMerge: s = Merge(key, value); break;
      case Op::kDelete: s = Delete(key); break;
      case Op::kSingleDelete: s = SingleDelete(key); break;
    }
    EXPECT_OK(s);
    const SequenceNumber seq = db_->GetLatestSequenceNumber();
    log_.push_back({key, seq, op, value});
    snapshots_.push_back(db_->GetSnapshot());
    return seq;
  }

  void OpenWithFirstSnapshot() {
    Open();
    // Nothing is older than this one: compaction keeps every written sequence as is.
    snapshots_.push_back(db_->GetSnapshot());
  }

  // Moves what the memtable holds to `place` (deeper: below L0, by a full compaction).
  void MoveTo(Place place) {
    switch (place) {
      case Place::kMemtable: return;
      case Place::kImmutable: {
        gate_.SetOpen(false);
        FlushOptions no_wait;
        no_wait.wait = false;
        ASSERT_OK(db_->Flush(no_wait));
        gate_.WaitForBlockedJob();  // the memtable stays immutable until the gate opens
        return;
      }
      case Place::kL0: ASSERT_OK(Flush()); return;
      case Place::kDeeper:
        ASSERT_OK(Flush());
        ASSERT_OK(CompactAll());
        return;
    }
  }

  void ReleaseGate() {
    gate_.SetOpen(true);
    for (int i = 0; i < 5000 && IntProperty("shale.num-immutable-mem-table") > 0; i++) {
      Env::Default()->SleepForMicroseconds(1000);
    }
    ASSERT_EQ(IntProperty("shale.num-immutable-mem-table"), 0u);
  }

  ReadOptions At(const Snapshot* snap) {
    ReadOptions ro;
    ro.snapshot = snap;
    return ro;
  }
  SequenceNumber Bound(const Snapshot* snap) {
    return snap == nullptr ? kMaxSequenceNumber : snap->GetSequenceNumber();
  }

  std::string GetCb(const std::string& key, const Snapshot* snap = nullptr,
                    SequenceNumber min_uncommitted = kMinUnCommittedSeq) {
    HideSeqs cb(&hidden_, Bound(snap), min_uncommitted);
    PinnableSlice v;
    Status s = impl()->GetWithCallback(At(snap), nullptr, key, &v, &cb);
    return Show(s, v);
  }

  std::unique_ptr<Iterator> IterCb(const Snapshot* snap = nullptr,
                                   SequenceNumber min_uncommitted = kMinUnCommittedSeq) {
    return std::unique_ptr<Iterator>(impl()->NewIteratorWithCallback(
        At(snap), nullptr, std::make_unique<HideSeqs>(&hidden_, Bound(snap), min_uncommitted)));
  }

  // Every read path's answer for every key in keys, against the model at snap.
  void CheckAll(const std::vector<std::string>& keys, const Snapshot* snap,
                SequenceNumber min_uncommitted, Random* rnd);
  // A random walk of Seek, SeekForPrev, SeekToFirst/Last, Next and Prev on it.
  void Walk(Iterator* it, const Model& m, const std::vector<std::string>& keys, Random* rnd,
            int steps);

  GatedSstEnv gate_;
  std::vector<Entry> log_;
  std::set<SequenceNumber> hidden_;
  std::vector<const Snapshot*> snapshots_;
};

void DBReadCallbackTest::CheckAll(const std::vector<std::string>& keys, const Snapshot* snap,
                                  SequenceNumber min_uncommitted, Random* rnd) {
  const Model m = ModelAt(log_, hidden_, Bound(snap));
  const ReadOptions ro = At(snap);
  for (const std::string& k : keys) {
    EXPECT_EQ(GetCb(k, snap, min_uncommitted), Expected(m, k)) << "Get " << k;
  }
  // MultiGet: sorted and in reverse order, one callback for the batch.
  for (bool sorted : {true, false}) {
    std::vector<Slice> ks(keys.begin(), keys.end());
    if (!sorted) std::reverse(ks.begin(), ks.end());
    std::vector<PinnableSlice> values(ks.size());
    std::vector<Status> statuses(ks.size());
    HideSeqs cb(&hidden_, Bound(snap), min_uncommitted);
    impl()->MultiGetWithCallback(ro, nullptr, ks.size(), ks.data(), values.data(), statuses.data(),
                                 sorted, &cb);
    for (size_t i = 0; i < ks.size(); i++) {
      EXPECT_EQ(Show(statuses[i], values[i]), Expected(m, ks[i].ToString()))
          << "MultiGet " << ks[i].ToString();
    }
  }
  for (const std::string& k : keys) {
    HideSeqs cb(&hidden_, Bound(snap), min_uncommitted);
    std::vector<PinnableSlice> ops(64);
    GetMergeOperandsOptions gmo;
    gmo.expected_max_number_of_operands = static_cast<int>(ops.size());
    int n = 0;
    Status s = impl()->GetMergeOperandsWithCallback(ro, nullptr, k, ops.data(), &gmo, &n, &cb);
    const std::vector<std::string> want = ModelOperands(log_, hidden_, Bound(snap), k);
    std::vector<std::string> got;
    if (s.ok()) {
      for (int i = 0; i < n; i++) got.push_back(ops[i].ToString());
    } else {
      EXPECT_TRUE(s.IsNotFound()) << s.ToString();
    }
    EXPECT_EQ(got, want) << "GetMergeOperands " << k;
  }
  std::unique_ptr<Iterator> it = IterCb(snap, min_uncommitted);
  std::string forward;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    forward += it->key().ToString() + "=" + it->value().ToString() + ";";
  }
  EXPECT_OK(it->status());
  std::string backward;
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    backward = it->key().ToString() + "=" + it->value().ToString() + ";" + backward;
  }
  EXPECT_OK(it->status());
  std::string want;
  for (const auto& [k, v] : m) want += k + "=" + v + ";";
  EXPECT_EQ(forward, want) << "forward scan";
  EXPECT_EQ(backward, want) << "backward scan";
  Walk(it.get(), m, keys, rnd, 200);
}

void DBReadCallbackTest::Walk(Iterator* it, const Model& m, const std::vector<std::string>& keys,
                              Random* rnd, int steps) {
  auto pos = m.end();
  std::string trace;
  for (int i = 0; i < steps; i++) {
    std::string target = keys[rnd->Uniform(static_cast<int>(keys.size()))];
    if (rnd->OneIn(3)) target += "a";  // between two keys
    switch (rnd->Uniform(6)) {
      case 0:
        it->Seek(target);
        pos = m.lower_bound(target);
        trace += " Seek(" + target + ")";
        break;
      case 1:
        it->SeekForPrev(target);
        pos = m.upper_bound(target);
        pos = pos == m.begin() ? m.end() : std::prev(pos);
        trace += " SeekForPrev(" + target + ")";
        break;
      case 2:
        it->SeekToFirst();
        pos = m.begin();
        trace += " SeekToFirst";
        break;
      case 3:
        it->SeekToLast();
        pos = m.empty() ? m.end() : std::prev(m.end());
        trace += " SeekToLast";
        break;
      case 4:
        if (!it->Valid()) continue;
        it->Next();
        ++pos;
        trace += " Next";
        break;
      default:
        if (!it->Valid()) continue;
        it->Prev();
        pos = pos == m.begin() ? m.end() : std::prev(pos);
        trace += " Prev";
        break;
    }
    ASSERT_OK(it->status()) << trace;
    ASSERT_EQ(it->Valid(), pos != m.end()) << trace;
    if (it->Valid()) {
      ASSERT_EQ(it->key().ToString(), pos->first) << trace;
      ASSERT_EQ(it->value().ToString(), pos->second) << trace;
    }
  }
}

// ---- One rule at a time, with the test's entries in each place a read looks.

class DBReadCallbackPlaceTest : public DBReadCallbackTest,
                                public testing::WithParamInterface<Place> {
 protected:
  // Every read path against the model at the latest state, then the same with a min
  // uncommitted bound (everything below the oldest hidden entry visible without a check).
  void Check(const std::vector<std::string>& keys) {
    Random rnd(301);
    CheckAll(keys, nullptr, kMinUnCommittedSeq, &rnd);
    if (!hidden_.empty()) CheckAll(keys, nullptr, *hidden_.begin(), &rnd);
  }
};

std::string PlaceName(const testing::TestParamInfo<Place>& info) {
  switch (info.param) {
    case Place::kMemtable: return "Memtable";
    case Place::kImmutable: return "Immutable";
    case Place::kL0: return "L0";
    case Place::kDeeper: return "Deeper";
  }
  return "?";
}

INSTANTIATE_TEST_SUITE_P(Places, DBReadCallbackPlaceTest,
                         testing::Values(Place::kMemtable, Place::kImmutable, Place::kL0,
                                         Place::kDeeper),
                         PlaceName);

TEST_P(DBReadCallbackPlaceTest, HiddenPutShowsTheOlderValue) {
  OpenWithFirstSnapshot();
  Write(Op::kPut, "a", "a1");
  Write(Op::kPut, "k", "v1");
  hidden_.insert(Write(Op::kPut, "k", "v2"));
  hidden_.insert(Write(Op::kPut, "z", "z1"));
  MoveTo(GetParam());
  EXPECT_EQ(Get("k"), "v2");  // the public read hides nothing
  EXPECT_EQ(GetCb("k"), "v1");
  EXPECT_EQ(GetCb("z"), "NOT_FOUND");
  Check({"a", "k", "z"});
}

TEST_P(DBReadCallbackPlaceTest, HiddenTombstoneDoesNotHideAnOlderValue) {
  OpenWithFirstSnapshot();
  Write(Op::kPut, "d", "d1");
  hidden_.insert(Write(Op::kDelete, "d"));
  Write(Op::kPut, "s", "s1");
  hidden_.insert(Write(Op::kSingleDelete, "s"));
  // A visible tombstone under a hidden Put still deletes.
  Write(Op::kPut, "t", "t1");
  Write(Op::kDelete, "t");
  hidden_.insert(Write(Op::kPut, "t", "t2"));
  MoveTo(GetParam());
  EXPECT_EQ(GetCb("d"), "d1");
  EXPECT_EQ(GetCb("s"), "s1");
  EXPECT_EQ(GetCb("t"), "NOT_FOUND");
  Check({"d", "s", "t"});
}

TEST_P(DBReadCallbackPlaceTest, MergeSkipsHiddenOperandsAndBases) {
  OpenWithFirstSnapshot();
  Write(Op::kPut, "m", "base");
  hidden_.insert(Write(Op::kPut, "m", "hidden-base"));
  Write(Op::kMerge, "m", "a");
  hidden_.insert(Write(Op::kMerge, "m", "hidden-op"));
  Write(Op::kMerge, "m", "b");
  // A hidden tombstone between operands and their base does not cut them off.
  Write(Op::kPut, "n", "n0");
  hidden_.insert(Write(Op::kDelete, "n"));
  Write(Op::kMerge, "n", "x");
  // Operands with only a hidden base fold onto nothing.
  hidden_.insert(Write(Op::kPut, "o", "hidden-base"));
  Write(Op::kMerge, "o", "y");
  MoveTo(GetParam());
  EXPECT_EQ(GetCb("m"), "base,a,b");
  EXPECT_EQ(GetCb("n"), "n0,x");
  EXPECT_EQ(GetCb("o"), "y");
  Check({"m", "n", "o"});
}

TEST_P(DBReadCallbackPlaceTest, ManyHiddenVersionsAreSteppedOver) {
  // More hidden entries of one key than the iterator steps over before it reseeks
  // (kDefaultMaxSequentialSkip), in each direction, for a Put and for operands.
  OpenWithFirstSnapshot();
  Write(Op::kPut, "a", "a1");
  Write(Op::kPut, "k", "old");
  for (int i = 0; i < 20; i++) hidden_.insert(Write(Op::kPut, "k", "new" + std::to_string(i)));
  Write(Op::kPut, "m", "base");
  for (int i = 0; i < 20; i++) hidden_.insert(Write(Op::kMerge, "m", "op" + std::to_string(i)));
  Write(Op::kMerge, "m", "last");
  for (int i = 0; i < 20; i++) hidden_.insert(Write(Op::kDelete, "p"));
  Write(Op::kPut, "q", "q1");
  // At a snapshot under twenty newer versions, the forward skip seeks to the snapshot and
  // must still pass the hidden ones below it.
  const Snapshot* snap = snapshots_.back();
  for (int i = 0; i < 20; i++) Write(Op::kPut, "k", "newer" + std::to_string(i));
  for (int i = 0; i < 20; i++) Write(Op::kMerge, "m", "newer" + std::to_string(i));
  MoveTo(GetParam());
  EXPECT_EQ(GetCb("k", snap), "old");
  EXPECT_EQ(GetCb("m", snap), "base,last");
  Check({"a", "k", "m", "p", "q"});
  Random rnd(7);
  CheckAll({"a", "k", "m", "p", "q"}, snap, kMinUnCommittedSeq, &rnd);
}

TEST_P(DBReadCallbackPlaceTest, SnapshotAndCallbackBothApply) {
  OpenWithFirstSnapshot();
  Write(Op::kPut, "k", "v1");
  hidden_.insert(Write(Op::kPut, "k", "v2"));
  Write(Op::kMerge, "k", "a");
  const Snapshot* snap = snapshots_.back();
  Write(Op::kPut, "k", "v3");  // newer than the snapshot
  MoveTo(GetParam());
  EXPECT_EQ(GetCb("k", snap), "v1,a");
  EXPECT_EQ(GetCb("k"), "v3");
  Random rnd(17);
  CheckAll({"k"}, snap, kMinUnCommittedSeq, &rnd);
}

// The versions of one key spread over every place at once: the newest visible one wins
// wherever it sits, and hidden ones anywhere are passed over.
TEST_F(DBReadCallbackTest, VersionsSpreadOverEveryPlace) {
  OpenWithFirstSnapshot();
  Write(Op::kPut, "k", "deep");
  Write(Op::kPut, "j", "deep");
  MoveTo(Place::kDeeper);
  hidden_.insert(Write(Op::kPut, "k", "l0"));
  Write(Op::kMerge, "j", "l0");
  MoveTo(Place::kL0);
  Write(Op::kMerge, "k", "imm");
  hidden_.insert(Write(Op::kDelete, "j"));
  MoveTo(Place::kImmutable);
  hidden_.insert(Write(Op::kSingleDelete, "k"));
  Write(Op::kMerge, "j", "mem");
  EXPECT_EQ(GetCb("k"), "deep,imm");
  EXPECT_EQ(GetCb("j"), "deep,l0,mem");
  Random rnd(5);
  CheckAll({"j", "k"}, nullptr, kMinUnCommittedSeq, &rnd);
  ReleaseGate();
  CheckAll({"j", "k"}, nullptr, kMinUnCommittedSeq, &rnd);
}

// ---- The callback's bounds.

// Every read without a snapshot tells the callback the sequence of its view before it asks
// about any entry; a read with one leaves the caller's bound alone.
TEST_F(DBReadCallbackTest, ReadsWithoutSnapshotLearnTheirViewSequence) {
  OpenWithFirstSnapshot();
  Write(Op::kPut, "k", "v1");
  const SequenceNumber view = Write(Op::kMerge, "k", "a");
  const std::set<SequenceNumber> none;
  {
    HideSeqs cb(&none);
    PinnableSlice v;
    ASSERT_OK(impl()->GetWithCallback(ReadOptions(), nullptr, "k", &v, &cb));
    EXPECT_EQ(cb.max_visible_seq(), view) << "Get";
  }
  {
    HideSeqs cb(&none);
    Slice key("k");
    PinnableSlice v;
    Status s;
    impl()->MultiGetWithCallback(ReadOptions(), nullptr, 1, &key, &v, &s, true, &cb);
    ASSERT_OK(s);
    EXPECT_EQ(cb.max_visible_seq(), view) << "MultiGet";
  }
  {
    HideSeqs cb(&none);
    PinnableSlice ops[2];
    GetMergeOperandsOptions gmo;
    gmo.expected_max_number_of_operands = 2;
    int n = 0;
    ASSERT_OK(
        impl()->GetMergeOperandsWithCallback(ReadOptions(), nullptr, "k", ops, &gmo, &n, &cb));
    EXPECT_EQ(cb.max_visible_seq(), view) << "GetMergeOperands";
  }
  {
    // The snapshot's caller chose the bound; the read leaves it.
    HideSeqs cb(&none, kMaxSequenceNumber);
    PinnableSlice v;
    ASSERT_OK(impl()->GetWithCallback(At(snapshots_.back()), nullptr, "k", &v, &cb));
    EXPECT_EQ(cb.max_visible_seq(), kMaxSequenceNumber) << "Get at a snapshot";
  }
}

// A callback deciding by commit sequence, as a WritePrepared DB does: data is visible when
// committed at or below the read's bound. Without the refresh a read without a snapshot
// would judge against "anything" and see data committed after its view was taken.
class CommittedBy final : public ReadCallback {
 public:
  explicit CommittedBy(const std::map<SequenceNumber, SequenceNumber>* commits)
      : commits_(commits) {}
  bool IsVisibleFullCheck(SequenceNumber seq) override {
    auto it = commits_->find(seq);
    return it == commits_->end() || it->second <= max_visible_seq();
  }

 private:
  const std::map<SequenceNumber, SequenceNumber>* const commits_;
};

TEST_F(DBReadCallbackTest, DataCommittedAfterTheViewIsHiddenWithoutASnapshot) {
  OpenWithFirstSnapshot();
  Write(Op::kPut, "k", "v1");
  Write(Op::kPut, "i", "i1");
  std::map<SequenceNumber, SequenceNumber> commits;
  commits[Write(Op::kPut, "k", "v2")] = kMaxSequenceNumber - 1;  // committed later
  commits[Write(Op::kMerge, "i", "op")] = kMaxSequenceNumber - 1;
  CommittedBy cb(&commits);
  PinnableSlice v;
  ASSERT_OK(impl()->GetWithCallback(ReadOptions(), nullptr, "k", &v, &cb));
  EXPECT_EQ(v.ToString(), "v1");
  std::unique_ptr<Iterator> it(impl()->NewIteratorWithCallback(
      ReadOptions(), nullptr, std::make_unique<CommittedBy>(&commits)));
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString() + "=" + it->value().ToString(), "i=i1");
}

// Below min_uncommitted every entry is visible without the virtual call: with the bound
// above every written sequence, no read path makes one.
TEST_F(DBReadCallbackTest, MinUncommittedSkipsTheFullCheck) {
  OpenWithFirstSnapshot();
  Write(Op::kPut, "a", "a1");
  Write(Op::kPut, "k", "v1");
  Write(Op::kMerge, "k", "x");
  MoveTo(Place::kL0);
  Write(Op::kMerge, "k", "y");
  const SequenceNumber above = db_->GetLatestSequenceNumber() + 1;
  for (SequenceNumber min_uncommitted : {kMinUnCommittedSeq, above}) {
    uint64_t checks = 0;
    HideSeqs cb(&hidden_, kMaxSequenceNumber, min_uncommitted, &checks);
    PinnableSlice v;
    ASSERT_OK(impl()->GetWithCallback(ReadOptions(), nullptr, "k", &v, &cb));
    EXPECT_EQ(v.ToString(), "v1,x,y");
    std::vector<Slice> keys = {"a", "k"};
    std::vector<PinnableSlice> values(2);
    std::vector<Status> statuses(2);
    impl()->MultiGetWithCallback(ReadOptions(), nullptr, 2, keys.data(), values.data(),
                                 statuses.data(), true, &cb);
    PinnableSlice ops[3];
    GetMergeOperandsOptions gmo;
    gmo.expected_max_number_of_operands = 3;
    int n = 0;
    ASSERT_OK(
        impl()->GetMergeOperandsWithCallback(ReadOptions(), nullptr, "k", ops, &gmo, &n, &cb));
    std::unique_ptr<Iterator> it(impl()->NewIteratorWithCallback(
        ReadOptions(), nullptr,
        std::make_unique<HideSeqs>(&hidden_, kMaxSequenceNumber, min_uncommitted, &checks)));
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
    }
    if (min_uncommitted == above) {
      EXPECT_EQ(checks, 0u);
    } else {
      EXPECT_GT(checks, 0u);
    }
  }
}

// ---- Random writes in every place, a random subset hidden, every read path against the
// model; under the binary-search and the hash data block index.

// Without a merge operator no operands are written, and a Get's value found in a file is
// pinned in its block rather than copied: another handler of the file lookup.
struct ModelParam {
  bool hash_index;
  bool merge_operator;
};

class DBReadCallbackModelTest : public DBReadCallbackTest,
                                public testing::WithParamInterface<ModelParam> {};

INSTANTIATE_TEST_SUITE_P(Options, DBReadCallbackModelTest,
                         testing::Values(ModelParam{false, true}, ModelParam{true, true},
                                         ModelParam{false, false}, ModelParam{true, false}),
                         [](const testing::TestParamInfo<ModelParam>& info) {
                           return std::string(info.param.hash_index ? "Hash" : "Binary") +
                                  (info.param.merge_operator ? "Merge" : "NoMerge");
                         });

TEST_P(DBReadCallbackModelTest, EveryReadMatchesTheModel) {
  BlockBasedTableOptions t;
  t.block_size = 256;
  if (GetParam().hash_index) {
    t.data_block_index_type = BlockBasedTableOptions::kDataBlockBinaryAndHash;
  }
  options_.table_factory.reset(NewBlockBasedTableFactory(t));
  if (!GetParam().merge_operator) options_.merge_operator = nullptr;
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  OpenWithFirstSnapshot();
  std::vector<std::string> keys;
  for (int i = 0; i < 24; i++) keys.push_back(Key(i));
  const int writes = TestKnob("SHALE_READ_CALLBACK_WRITES", 120);
  auto write_some = [&] {
    for (int i = 0; i < writes; i++) {
      const std::string& k = keys[rnd.Uniform(static_cast<int>(keys.size()))];
      // Sometimes a burst of versions of one key, past what the iterator steps over.
      const int n = rnd.OneIn(15) ? 10 + static_cast<int>(rnd.Uniform(10)) : 1;
      for (int j = 0; j < n; j++) {
        const uint32_t r = rnd.Uniform(20);
        const std::string v = std::to_string(log_.size());
        if (r < 9) {
          Write(Op::kPut, k, v);
        } else if (r < 15) {
          Write(GetParam().merge_operator ? Op::kMerge : Op::kPut, k, v);
        } else if (r < 18) {
          Write(Op::kDelete, k);
        } else {
          Write(Op::kSingleDelete, k);
        }
      }
    }
  };
  write_some();
  MoveTo(Place::kDeeper);
  write_some();
  MoveTo(Place::kL0);
  write_some();
  MoveTo(Place::kL0);
  write_some();
  MoveTo(Place::kImmutable);
  write_some();
  // Hide about a third of the sequences, and whole runs now and then.
  for (size_t i = 0; i < log_.size(); i++) {
    if (rnd.OneIn(100)) {
      for (size_t j = i; j < log_.size() && j < i + 15; j++) hidden_.insert(log_[j].seq);
    } else if (rnd.OneIn(3)) {
      hidden_.insert(log_[i].seq);
    }
  }
  auto check = [&](const char* when) {
    SCOPED_TRACE(std::string(when) + ", seed " + std::to_string(seed));
    CheckAll(keys, nullptr, kMinUnCommittedSeq, &rnd);
    CheckAll(keys, nullptr, hidden_.empty() ? kMinUnCommittedSeq : *hidden_.begin(), &rnd);
    for (int i = 0; i < 3; i++) {
      const Snapshot* snap = snapshots_[rnd.Uniform(static_cast<int>(snapshots_.size()))];
      CheckAll(keys, snap, kMinUnCommittedSeq, &rnd);
    }
  };
  check("memtables, L0 and deeper");
  ReleaseGate();
  check("after the flush");
  ASSERT_OK(CompactAll());
  check("after a full compaction");
}

// ---- Reads at a snapshot while writes, flushes and compactions move the data under them:
// every answer equals the model at that snapshot, whichever SuperVersion a read pins and
// whatever files it finds. (Run under ThreadSanitizer too.)
TEST_F(DBReadCallbackTest, ReadsAgreeWhileFlushesAndCompactionsRun) {
  options_.disable_auto_compactions = false;
  options_.write_buffer_size = 64 << 10;
  options_.level0_file_num_compaction_trigger = 2;
  options_.target_file_size_base = 64 << 10;
  options_.max_bytes_for_level_base = 256 << 10;
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  OpenWithFirstSnapshot();
  std::vector<std::string> keys;
  for (int i = 0; i < 40; i++) keys.push_back(Key(i));
  for (int i = 0; i < 400; i++) {
    const std::string& k = keys[rnd.Uniform(static_cast<int>(keys.size()))];
    const uint32_t r = rnd.Uniform(10);
    const Op op = r < 5 ? Op::kPut : r < 8 ? Op::kMerge : Op::kDelete;
    const SequenceNumber seq = Write(op, k, std::to_string(i));
    if (rnd.OneIn(3)) hidden_.insert(seq);
  }
  const Snapshot* snap = snapshots_.back();
  const Model m = ModelAt(log_, hidden_, snap->GetSequenceNumber());
  std::string want_scan;
  for (const auto& [k, v] : m) want_scan += k + "=" + v + ";";

  std::atomic<bool> stop{false};
  std::mutex mu;
  std::string failure;  // the first disagreement, guarded by mu
  auto fail = [&](const std::string& what) {
    std::lock_guard<std::mutex> l(mu);
    if (failure.empty()) failure = what;
  };
  auto reader = [&](uint64_t thread_seed) {
    Random r(thread_seed);
    while (!stop.load()) {
      const std::string& k = keys[r.Uniform(static_cast<int>(keys.size()))];
      const std::string got = GetCb(k, snap);
      if (got != Expected(m, k)) fail("Get " + k + ": " + got);
      std::vector<Slice> ks(keys.begin(), keys.end());
      std::vector<PinnableSlice> values(ks.size());
      std::vector<Status> statuses(ks.size());
      HideSeqs cb(&hidden_, snap->GetSequenceNumber());
      impl()->MultiGetWithCallback(At(snap), nullptr, ks.size(), ks.data(), values.data(),
                                   statuses.data(), true, &cb);
      for (size_t i = 0; i < ks.size(); i++) {
        if (Show(statuses[i], values[i]) != Expected(m, keys[i])) fail("MultiGet " + keys[i]);
      }
      std::unique_ptr<Iterator> it = IterCb(snap);
      std::string scan;
      for (it->SeekToLast(); it->Valid(); it->Prev()) {
        scan = it->key().ToString() + "=" + it->value().ToString() + ";" + scan;
      }
      if (!it->status().ok() || scan != want_scan) fail("backward scan: " + scan);
      scan.clear();
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        scan += it->key().ToString() + "=" + it->value().ToString() + ";";
      }
      if (!it->status().ok() || scan != want_scan) fail("forward scan: " + scan);
    }
  };
  std::vector<std::thread> readers;
  for (uint64_t t = 1; t <= 2; t++) readers.emplace_back(reader, seed + t);
  // Newer writes, large enough to fill a memtable every few dozen: flushes and compactions
  // run while the readers read.
  const std::string big(1000, 'x');
  const int writes = TestKnob("SHALE_READ_CALLBACK_RACE_WRITES", 2000);
  for (int i = 0; i < writes && failure.empty(); i++) {
    const std::string& k = keys[rnd.Uniform(static_cast<int>(keys.size()))];
    Status s = rnd.OneIn(4) ? Merge(k, big) : rnd.OneIn(5) ? Delete(k) : Put(k, big);
    ASSERT_OK(s);
  }
  ASSERT_OK(WaitForCompact());
  stop = true;
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(failure, "") << "seed " << seed;
  EXPECT_GT(IntProperty("shale.num-files-at-level1") + IntProperty("shale.num-files-at-level2"), 0u)
      << "no compaction ran under the readers";
}

}  // namespace
}  // namespace shale
