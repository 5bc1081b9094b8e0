// DBIter over a vector-backed internal iterator: fixed cases for each rule (versions,
// tombstones, snapshots, callbacks, bounds, merge, corruption, child errors, the skip-to-seek
// switch) and a randomized comparison with a std::map-style model.
#include "db/db_iter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

struct Rec {
  std::string key;
  SequenceNumber seq;
  ValueType type;
  std::string value;
};

struct Entry {
  std::string ikey;
  std::string value;
};

// Entries in internal-key order. When not "pinned", key() and value() come from scratch
// buffers rewritten at every move, so a DBIter holding on to them would read wrong bytes.
class VectorIter final : public InternalIterator {
 public:
  static constexpr size_t kNone = std::numeric_limits<size_t>::max();

  VectorIter(const InternalKeyComparator* icmp, std::vector<Entry> entries, bool pinned)
      : icmp_(icmp), entries_(std::move(entries)), pinned_(pinned) {}

  // Arriving at entry `index` fails the iterator with IOError (until the next seek).
  void FailAt(size_t index) { fail_at_ = index; }

  bool Valid() const override { return pos_ != kNone; }
  void SeekToFirst() override {
    ++seeks;
    Reset();
    Set(0);
  }
  void SeekToLast() override {
    ++seeks;
    Reset();
    Set(entries_.empty() ? kNone : entries_.size() - 1);
  }
  void Seek(const Slice& target) override {
    ++seeks;
    Reset();
    auto it = std::lower_bound(
        entries_.begin(), entries_.end(), target,
        [&](const Entry& e, const Slice& t) { return icmp_->Compare(e.ikey, t) < 0; });
    Set(it - entries_.begin());
  }
  void SeekForPrev(const Slice& target) override {
    ++seeks;
    Reset();
    auto it = std::upper_bound(
        entries_.begin(), entries_.end(), target,
        [&](const Slice& t, const Entry& e) { return icmp_->Compare(t, e.ikey) < 0; });
    Set(it == entries_.begin() ? kNone : (it - entries_.begin()) - 1);
  }
  void Next() override {
    ++nexts;
    Set(pos_ + 1);
  }
  void Prev() override {
    ++prevs;
    Set(pos_ == 0 ? kNone : pos_ - 1);
  }
  Slice key() const override { return pinned_ ? Slice(entries_[pos_].ikey) : Slice(key_); }
  Slice value() const override { return pinned_ ? Slice(entries_[pos_].value) : Slice(value_); }
  Status status() const override { return status_; }
  bool IsKeyPinned() const override { return pinned_; }
  bool IsValuePinned() const override { return pinned_; }

  int seeks = 0, nexts = 0, prevs = 0;

 private:
  void Reset() { status_ = Status::OK(); }
  void Set(size_t i) {
    if (i >= entries_.size()) {
      pos_ = kNone;
      return;
    }
    if (i == fail_at_) {
      status_ = Status::IOError("injected read error");
      pos_ = kNone;
      return;
    }
    pos_ = i;
    if (!pinned_) {
      key_ = entries_[i].ikey;
      value_ = entries_[i].value;
      // Make a stale Slice visible as garbage instead of the right bytes.
      key_.reserve(key_.size() + 64 + (i % 7));
      value_.reserve(value_.size() + 64 + (i % 5));
    }
  }

  const InternalKeyComparator* icmp_;
  std::vector<Entry> entries_;
  bool pinned_;
  size_t pos_ = kNone;
  size_t fail_at_ = kNone;
  Status status_;
  std::string key_, value_;
};

class HideSeqs final : public ReadCallback {
 public:
  explicit HideSeqs(std::set<SequenceNumber> hidden) : hidden_(std::move(hidden)) {}
  bool IsVisibleFullCheck(SequenceNumber seq) override { return hidden_.count(seq) == 0; }

 private:
  std::set<SequenceNumber> hidden_;
};

// Builds a DBIter over records; keeps the comparator and bounds alive for it.
class Fixture {
 public:
  explicit Fixture(std::vector<Rec> recs, const Comparator* ucmp = BytewiseComparator())
      : ucmp_(ucmp), icmp_(ucmp) {
    for (const Rec& r : recs) entries_.push_back({IKey(r.key, r.seq, r.type), r.value});
    std::sort(entries_.begin(), entries_.end(),
              [&](const Entry& a, const Entry& b) { return icmp_.Compare(a.ikey, b.ikey) < 0; });
  }
  // Keeps the records in the given order (for keys the comparator cannot order).
  static Fixture Raw(std::vector<Entry> entries) {
    Fixture f({});
    f.entries_ = std::move(entries);
    return f;
  }

  std::unique_ptr<Iterator> Make(SequenceNumber seq = kMaxSequenceNumber,
                                 ReadCallback* cb = nullptr, bool pinned = false,
                                 uint64_t max_skip = kDefaultMaxSequentialSkip,
                                 size_t fail_at = VectorIter::kNone) {
    auto* vi = new VectorIter(&icmp_, entries_, pinned);
    vi->FailAt(fail_at);
    last_ = vi;
    ReadOptions ro;
    if (lower_set_) ro.iterate_lower_bound = &lower_;
    if (upper_set_) ro.iterate_upper_bound = &upper_;
    return std::unique_ptr<Iterator>(NewDBIterator(ro, ucmp_, vi, seq, cb, max_skip));
  }
  void SetLower(const std::string& s) {
    lower_str_ = s;
    lower_ = lower_str_;
    lower_set_ = true;
  }
  void SetUpper(const std::string& s) {
    upper_str_ = s;
    upper_ = upper_str_;
    upper_set_ = true;
  }
  VectorIter* last() const { return last_; }

 private:
  const Comparator* ucmp_;
  InternalKeyComparator icmp_;
  std::vector<Entry> entries_;
  std::string lower_str_, upper_str_;
  Slice lower_, upper_;
  bool lower_set_ = false, upper_set_ = false;
  VectorIter* last_ = nullptr;
};

// Built by appending: GCC 12 at -O3 warns (-Wrestrict, a false positive) on "(" + string.
std::string Parens(const std::string& s) {
  std::string r = "(";
  r.append(s).append(")");
  return r;
}

std::string Cur(const Iterator* it) {
  if (!it->Valid()) return it->status().ok() ? "(end)" : Parens(it->status().ToString());
  return it->key().ToString() + "=" + it->value().ToString();
}

std::string ScanForward(Iterator* it) {
  std::string r;
  for (it->SeekToFirst(); it->Valid(); it->Next()) r += Cur(it) + " ";
  if (!it->status().ok()) r += Parens(it->status().ToString());
  return r;
}

std::string ScanBackward(Iterator* it) {
  std::string r;
  for (it->SeekToLast(); it->Valid(); it->Prev()) r += Cur(it) + " ";
  if (!it->status().ok()) r += Parens(it->status().ToString());
  return r;
}

const ValueType kPut = kTypeValue;
const ValueType kDel = kTypeDeletion;
const ValueType kSDel = kTypeSingleDeletion;

TEST(DBIterTest, Empty) {
  Fixture f({});
  auto it = f.Make();
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  it->Seek("a");
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev("a");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
}

TEST(DBIterTest, NewestVersionWins) {
  Fixture f({{"a", 1, kPut, "a1"},
             {"a", 3, kPut, "a3"},
             {"b", 2, kPut, "b2"},
             {"c", 4, kPut, "c4"},
             {"c", 5, kPut, "c5"},
             {"c", 6, kPut, "c6"}});
  for (bool pinned : {false, true}) {
    auto it = f.Make(kMaxSequenceNumber, nullptr, pinned);
    EXPECT_EQ(ScanForward(it.get()), "a=a3 b=b2 c=c6 ");
    EXPECT_EQ(ScanBackward(it.get()), "c=c6 b=b2 a=a3 ");
  }
}

TEST(DBIterTest, SnapshotSequence) {
  Fixture f({{"a", 1, kPut, "a1"},
             {"a", 3, kPut, "a3"},
             {"b", 2, kPut, "b2"},
             {"b", 4, kDel, ""},
             {"c", 5, kPut, "c5"}});
  EXPECT_EQ(ScanForward(f.Make(0).get()), "");
  EXPECT_EQ(ScanForward(f.Make(1).get()), "a=a1 ");
  EXPECT_EQ(ScanForward(f.Make(2).get()), "a=a1 b=b2 ");
  EXPECT_EQ(ScanBackward(f.Make(3).get()), "b=b2 a=a3 ");
  EXPECT_EQ(ScanBackward(f.Make(4).get()), "a=a3 ");
  EXPECT_EQ(ScanForward(f.Make(5).get()), "a=a3 c=c5 ");
}

TEST(DBIterTest, DeletionsHideOlderVersions) {
  Fixture f({{"a", 1, kPut, "a1"},
             {"a", 2, kDel, ""},
             {"b", 3, kPut, "b3"},
             {"b", 4, kSDel, ""},
             {"c", 5, kDel, ""},
             {"c", 6, kPut, "c6"},
             {"d", 7, kPut, "d7"},
             {"e", 8, kSDel, ""}});
  auto it = f.Make();
  EXPECT_EQ(ScanForward(it.get()), "c=c6 d=d7 ");
  EXPECT_EQ(ScanBackward(it.get()), "d=d7 c=c6 ");
  it->Seek("a");
  EXPECT_EQ(Cur(it.get()), "c=c6");
  it->SeekForPrev("b");
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev("cc");
  EXPECT_EQ(Cur(it.get()), "c=c6");
  EXPECT_EQ(ScanForward(f.Make(3).get()), "b=b3 ");
  EXPECT_EQ(ScanBackward(f.Make(1).get()), "a=a1 ");
}

TEST(DBIterTest, ReadCallbackHidesSequences) {
  Fixture f({{"a", 1, kPut, "a1"},
             {"a", 2, kPut, "a2"},
             {"b", 3, kPut, "b3"},
             {"b", 4, kDel, ""},
             {"c", 5, kPut, "c5"}});
  HideSeqs hide({2, 4, 5});
  auto it = f.Make(kMaxSequenceNumber, &hide);
  EXPECT_EQ(ScanForward(it.get()), "a=a1 b=b3 ");
  EXPECT_EQ(ScanBackward(it.get()), "b=b3 a=a1 ");
  HideSeqs hide_all({1, 2, 3, 4, 5});
  EXPECT_EQ(ScanForward(f.Make(kMaxSequenceNumber, &hide_all).get()), "");
  // Both rules apply at once.
  HideSeqs hide1({1});
  EXPECT_EQ(ScanForward(f.Make(3, &hide1).get()), "a=a2 b=b3 ");
}

TEST(DBIterTest, SeekAndSeekForPrev) {
  Fixture f({{"b", 1, kPut, "b"}, {"d", 2, kPut, "d"}, {"f", 3, kPut, "f"}});
  auto it = f.Make();
  it->Seek("a");
  EXPECT_EQ(Cur(it.get()), "b=b");
  it->Seek("d");
  EXPECT_EQ(Cur(it.get()), "d=d");
  it->Seek("e");
  EXPECT_EQ(Cur(it.get()), "f=f");
  it->Seek("g");
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev("a");
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev("d");
  EXPECT_EQ(Cur(it.get()), "d=d");
  it->SeekForPrev("c");
  EXPECT_EQ(Cur(it.get()), "b=b");
  it->SeekForPrev("z");
  EXPECT_EQ(Cur(it.get()), "f=f");
  // Seeking to the iterator's own key (which the seek overwrites) must work.
  it->Seek("d");
  it->Seek(it->key());
  EXPECT_EQ(Cur(it.get()), "d=d");
  it->SeekForPrev(it->key());
  EXPECT_EQ(Cur(it.get()), "d=d");
}

TEST(DBIterTest, DirectionSwitches) {
  // Every key has hidden newer versions and older ones, so a switch must skip them all.
  std::vector<Rec> recs;
  SequenceNumber seq = 1;
  for (const char* k : {"a", "b", "c", "d"}) {
    for (int v = 0; v < 3; ++v) recs.push_back({k, seq++, kPut, std::string(k) + "old"});
  }
  for (const char* k : {"a", "b", "c", "d"}) recs.push_back({k, seq++, kPut, std::string(k)});
  const SequenceNumber snap = seq - 1;
  for (const char* k : {"a", "b", "c", "d"}) {
    for (int v = 0; v < 3; ++v) recs.push_back({k, seq++, kPut, std::string(k) + "new"});
  }
  Fixture f(recs);
  for (uint64_t max_skip : {1, 2, 8, 100}) {
    for (bool pinned : {false, true}) {
      auto it = f.Make(snap, nullptr, pinned, max_skip);
      it->Seek("b");
      EXPECT_EQ(Cur(it.get()), "b=b");
      it->Prev();
      EXPECT_EQ(Cur(it.get()), "a=a");
      it->Next();
      EXPECT_EQ(Cur(it.get()), "b=b");
      it->Next();
      EXPECT_EQ(Cur(it.get()), "c=c");
      it->Prev();
      EXPECT_EQ(Cur(it.get()), "b=b");
      it->Prev();
      EXPECT_EQ(Cur(it.get()), "a=a");
      it->Prev();
      EXPECT_FALSE(it->Valid());
      it->SeekToLast();
      EXPECT_EQ(Cur(it.get()), "d=d");
      it->Next();
      EXPECT_FALSE(it->Valid());
      it->SeekForPrev("c");
      EXPECT_EQ(Cur(it.get()), "c=c");
      it->Next();
      EXPECT_EQ(Cur(it.get()), "d=d");
      it->Prev();
      EXPECT_EQ(Cur(it.get()), "c=c");
      EXPECT_TRUE(it->status().ok());
    }
  }
}

TEST(DBIterTest, Bounds) {
  Fixture f({{"a", 1, kPut, "a"},
             {"b", 2, kPut, "b"},
             {"c", 3, kPut, "c"},
             {"d", 4, kPut, "d"},
             {"e", 5, kPut, "e"}});
  f.SetLower("b");
  f.SetUpper("d");
  auto it = f.Make();
  EXPECT_EQ(ScanForward(it.get()), "b=b c=c ");
  EXPECT_EQ(ScanBackward(it.get()), "c=c b=b ");
  it->Seek("a");
  EXPECT_EQ(Cur(it.get()), "b=b");
  it->Prev();
  EXPECT_FALSE(it->Valid());
  it->Seek("d");
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev("z");
  EXPECT_EQ(Cur(it.get()), "c=c");
  it->Next();
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev("d");
  EXPECT_EQ(Cur(it.get()), "c=c");
  it->SeekForPrev("a");
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev("bb");
  EXPECT_EQ(Cur(it.get()), "b=b");

  // Bounds that do not name an existing key, and an empty range.
  Fixture g({{"a", 1, kPut, "a"}, {"b", 2, kPut, "b"}, {"c", 3, kPut, "c"}});
  g.SetLower("aa");
  g.SetUpper("bb");
  EXPECT_EQ(ScanForward(g.Make().get()), "b=b ");
  EXPECT_EQ(ScanBackward(g.Make().get()), "b=b ");
  g.SetLower("bb");
  g.SetUpper("bb");
  EXPECT_EQ(ScanForward(g.Make().get()), "");
  EXPECT_EQ(ScanBackward(g.Make().get()), "");
  g.SetLower("c");
  g.SetUpper("b");
  EXPECT_EQ(ScanForward(g.Make().get()), "");
  EXPECT_EQ(ScanBackward(g.Make().get()), "");
}

TEST(DBIterTest, UpperBoundStopsBeforeHiddenEntries) {
  // The only entry at or past the bound is never parsed as a result.
  Fixture f({{"a", 1, kPut, "a"}, {"b", 2, kPut, "b"}, {"c", 3, kTypeMerge, "m"}});
  f.SetUpper("c");
  auto it = f.Make();
  EXPECT_EQ(ScanForward(it.get()), "a=a b=b ");
  EXPECT_TRUE(it->status().ok());
}

TEST(DBIterTest, ReverseComparator) {
  const Comparator* rev = ReverseBytewiseComparator();
  Fixture f({{"a", 1, kPut, "a1"},
             {"a", 4, kPut, "a4"},
             {"b", 2, kPut, "b2"},
             {"c", 3, kPut, "c3"},
             {"c", 5, kDel, ""},
             {"d", 6, kPut, "d6"}},
            rev);
  auto it = f.Make();
  EXPECT_EQ(ScanForward(it.get()), "d=d6 b=b2 a=a4 ");
  EXPECT_EQ(ScanBackward(it.get()), "a=a4 b=b2 d=d6 ");
  it->Seek("c");
  EXPECT_EQ(Cur(it.get()), "b=b2");
  it->SeekForPrev("c");
  EXPECT_EQ(Cur(it.get()), "d=d6");
  EXPECT_EQ(ScanForward(f.Make(3).get()), "c=c3 b=b2 a=a1 ");
  // Bounds follow the comparator: lower "c" is inclusive, upper "a" exclusive.
  f.SetLower("c");
  f.SetUpper("a");
  EXPECT_EQ(ScanForward(f.Make(3).get()), "c=c3 b=b2 ");
  EXPECT_EQ(ScanBackward(f.Make(3).get()), "b=b2 c=c3 ");
}

TEST(DBIterTest, MergeIsNotSupported) {
  Fixture f({{"a", 1, kPut, "a"},
             {"b", 2, kTypeMerge, "m"},
             {"c", 3, kPut, "c"},
             {"d", 4, kTypeMerge, "m"},
             {"d", 5, kPut, "d5"}});
  auto it = f.Make();
  it->SeekToFirst();
  EXPECT_EQ(Cur(it.get()), "a=a");
  it->Next();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsNotSupported()) << it->status().ToString();
  // A merge operand under a newer Put is never consulted, in either direction.
  it->Seek("c");
  EXPECT_EQ(Cur(it.get()), "c=c");
  EXPECT_TRUE(it->status().ok());
  it->Next();
  EXPECT_EQ(Cur(it.get()), "d=d5");
  it->SeekToLast();
  EXPECT_EQ(Cur(it.get()), "d=d5");
  it->Prev();
  EXPECT_EQ(Cur(it.get()), "c=c");
  it->Prev();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsNotSupported());
  // A seek clears the error.
  it->SeekToFirst();
  EXPECT_TRUE(it->status().ok());
  // Under snapshot 4 the operand of d is the newest visible entry.
  auto snap = f.Make(4);
  snap->SeekToLast();
  EXPECT_FALSE(snap->Valid());
  EXPECT_TRUE(snap->status().IsNotSupported());
}

TEST(DBIterTest, CorruptKeyType) {
  std::string bad = "b";
  PutFixed64(&bad, PackSequenceAndType(2, static_cast<ValueType>(0x55)));
  Fixture f = Fixture::Raw({{IKey("a", 1, kPut), "a"}, {bad, "x"}, {IKey("c", 3, kPut), "c"}});
  auto it = f.Make();
  it->SeekToFirst();
  EXPECT_EQ(Cur(it.get()), "a=a");
  it->Next();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  // Backward, c's versions only end where the bad key starts, so c is not reported either.
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
  it->Seek("c");
  EXPECT_EQ(Cur(it.get()), "c=c");
  EXPECT_TRUE(it->status().ok());
}

TEST(DBIterTest, CorruptShortKey) {
  Fixture f = Fixture::Raw({{IKey("a", 1, kPut), "a"}, {"short", "x"}});
  auto it = f.Make();
  it->SeekToFirst();
  EXPECT_EQ(Cur(it.get()), "a=a");
  it->Next();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
}

TEST(DBIterTest, RangeDeletionInPointDataIsCorruption) {
  Fixture f({{"a", 1, kTypeRangeDeletion, "z"}});
  auto it = f.Make();
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
}

TEST(DBIterTest, ChildErrorPropagates) {
  // Sorted order: a@1, b@3, b@2, c@4.
  Fixture f({{"a", 1, kPut, "a"}, {"b", 2, kPut, "b2"}, {"b", 3, kPut, "b3"}, {"c", 4, kPut, "c"}});
  auto fwd = f.Make(kMaxSequenceNumber, nullptr, false, kDefaultMaxSequentialSkip, 2);
  EXPECT_EQ(ScanForward(fwd.get()), "a=a b=b3 (IO error: injected read error)");
  // Backward, the failure comes while b's versions are being collected: b must not be
  // returned on the strength of a partial scan.
  auto bwd = f.Make(kMaxSequenceNumber, nullptr, false, kDefaultMaxSequentialSkip, 1);
  bwd->SeekToLast();
  EXPECT_EQ(Cur(bwd.get()), "c=c");
  bwd->Prev();
  EXPECT_FALSE(bwd->Valid());
  EXPECT_TRUE(bwd->status().IsIOError()) << bwd->status().ToString();
  // Failing before anything is found.
  auto first = f.Make(kMaxSequenceNumber, nullptr, false, kDefaultMaxSequentialSkip, 0);
  first->SeekToFirst();
  EXPECT_FALSE(first->Valid());
  EXPECT_TRUE(first->status().IsIOError());
}

// Many hidden versions of one key: the iterator seeks past them instead of stepping.
TEST(DBIterTest, ManyVersionsSwitchToSeek) {
  std::vector<Rec> recs;
  const int kVersions = 1000;
  recs.push_back({"a", 1, kPut, "a"});
  for (int i = 0; i < kVersions; ++i) recs.push_back({"b", 10 + SequenceNumber(i), kPut, "b"});
  recs.push_back({"c", 5000, kPut, "c"});
  Fixture f(recs);

  auto it = f.Make();  // all visible: b's newest then 999 older versions to skip
  it->Seek("b");
  EXPECT_EQ(Cur(it.get()), "b=b");
  int nexts = f.last()->nexts;
  it->Next();
  EXPECT_EQ(Cur(it.get()), "c=c");
  EXPECT_LT(f.last()->nexts - nexts, 20);
  int prevs = f.last()->prevs;
  it->Prev();
  EXPECT_EQ(Cur(it.get()), "b=b");
  it->Prev();
  EXPECT_EQ(Cur(it.get()), "a=a");
  EXPECT_LT(f.last()->prevs - prevs, 40);

  // Snapshot in the middle: newer versions are hidden, in front of the visible one.
  auto snap = f.Make(10 + kVersions / 2);
  snap->SeekToFirst();
  EXPECT_EQ(Cur(snap.get()), "a=a");
  snap->Next();
  EXPECT_EQ(Cur(snap.get()), "b=b");
  snap->Next();
  EXPECT_FALSE(snap->Valid());  // c@5000 is too new
  EXPECT_LT(f.last()->nexts, 40);
  snap->SeekToLast();
  EXPECT_EQ(Cur(snap.get()), "b=b");
  snap->Prev();
  EXPECT_EQ(Cur(snap.get()), "a=a");
  snap->Next();
  EXPECT_EQ(Cur(snap.get()), "b=b");
  EXPECT_LT(f.last()->nexts + f.last()->prevs, 120);
}

TEST(DBIterTest, ValueSurvivesUnpinnedSourceInReverse) {
  Fixture f({{"a", 1, kPut, "value-of-a"}, {"a", 2, kPut, "newer-a"}, {"b", 3, kPut, "b"}});
  auto it = f.Make(kMaxSequenceNumber, nullptr, /*pinned=*/false);
  it->SeekToLast();
  it->Prev();
  EXPECT_EQ(Cur(it.get()), "a=newer-a");
  it->Next();
  EXPECT_EQ(Cur(it.get()), "b=b");
}

// ---------------------------------------------------------------------------------------
// Randomized comparison with a model.

// The user-visible state: for each user key (in comparator order, within the bounds) its
// value, or is_merge when the newest visible entry is a merge operand.
struct ModelEntry {
  std::string key;
  std::string value;
  bool is_merge;
};

class Model {
 public:
  Model(const Comparator* cmp, std::vector<ModelEntry> entries)
      : cmp_(cmp), e_(std::move(entries)) {}
  size_t size() const { return e_.size(); }
  const ModelEntry& at(size_t i) const { return e_[i]; }
  // First index with key >= t, or size().
  size_t LowerBound(const Slice& t) const {
    size_t i = 0;
    while (i < e_.size() && cmp_->Compare(e_[i].key, t) < 0) ++i;
    return i;
  }
  // Last index with key <= t, or npos.
  size_t LastAtOrBefore(const Slice& t) const {
    size_t i = e_.size();
    while (i > 0 && cmp_->Compare(e_[i - 1].key, t) > 0) --i;
    return i == 0 ? VectorIter::kNone : i - 1;
  }

 private:
  const Comparator* cmp_;
  std::vector<ModelEntry> e_;
};

Model BuildModel(const Comparator* cmp, const std::vector<Rec>& recs, SequenceNumber snap,
                 const std::set<SequenceNumber>& hidden, const std::string* lower,
                 const std::string* upper) {
  std::vector<const Rec*> newest;  // per user key, the newest visible record
  for (const Rec& r : recs) {
    if (r.seq > snap || hidden.count(r.seq)) continue;
    auto it = std::find_if(newest.begin(), newest.end(),
                           [&](const Rec* n) { return cmp->Compare(n->key, r.key) == 0; });
    if (it == newest.end()) {
      newest.push_back(&r);
    } else if ((*it)->seq < r.seq) {
      *it = &r;
    }
  }
  std::vector<ModelEntry> out;
  for (const Rec* r : newest) {
    if (r->type == kTypeDeletion || r->type == kTypeSingleDeletion) continue;
    if (lower && cmp->Compare(r->key, *lower) < 0) continue;
    if (upper && cmp->Compare(r->key, *upper) >= 0) continue;
    out.push_back({r->key, r->value, r->type == kTypeMerge});
  }
  std::sort(out.begin(), out.end(), [&](const ModelEntry& a, const ModelEntry& b) {
    return cmp->Compare(a.key, b.key) < 0;
  });
  return Model(cmp, std::move(out));
}

std::string RandomKey(Random* rnd, int alphabet, int max_len) {
  std::string k;
  const int len = static_cast<int>(rnd->Uniform(max_len + 1));
  for (int i = 0; i < len; ++i) k.push_back(static_cast<char>('a' + rnd->Uniform(alphabet)));
  return k;
}

TEST(DBIterTest, RandomizedAgainstModel) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  const int kRuns = 400;
  for (int run = 0; run < kRuns; ++run) {
    std::string where = "run ";
    where.append(std::to_string(run)).append(" seed ").append(std::to_string(seed));
    SCOPED_TRACE(where);
    const Comparator* cmp = rnd.OneIn(3) ? ReverseBytewiseComparator() : BytewiseComparator();
    const int alphabet = 1 + static_cast<int>(rnd.Uniform(3));
    const int max_len = 1 + static_cast<int>(rnd.Uniform(3));
    const bool merges = rnd.OneIn(4);
    const int num_recs = static_cast<int>(rnd.Uniform(rnd.OneIn(2) ? 30 : 250));

    std::vector<Rec> recs;
    for (int i = 0; i < num_recs; ++i) {
      const uint32_t r = rnd.Uniform(100);
      ValueType t = r < 60   ? kTypeValue
                    : r < 80 ? kTypeDeletion
                    : r < 93 ? kTypeSingleDeletion
                             : kTypeMerge;
      if (t == kTypeMerge && !merges) t = kTypeValue;
      // Sequence 0 appears too: compaction zeroes the sequence of old entries.
      const SequenceNumber seq = static_cast<SequenceNumber>(i);
      recs.push_back({RandomKey(&rnd, alphabet, max_len), seq, t,
                      t == kTypeValue ? std::to_string(seq).insert(0, 1, 'v') : std::string()});
    }
    const SequenceNumber snap =
        rnd.OneIn(4) ? kMaxSequenceNumber : rnd.Uniform(static_cast<uint32_t>(num_recs) + 2);
    std::set<SequenceNumber> hidden;
    const bool use_cb = rnd.OneIn(3);
    if (use_cb) {
      // From 1: sequence 0 is always visible (ReadCallback's contract).
      for (int i = 1; i < num_recs; ++i) {
        if (rnd.OneIn(4)) hidden.insert(i);
      }
    }
    HideSeqs cb(hidden);
    std::string lower_s, upper_s;
    const std::string* lower = nullptr;
    const std::string* upper = nullptr;
    Fixture f(recs, cmp);
    if (rnd.OneIn(3)) {
      lower_s = RandomKey(&rnd, alphabet, max_len);
      lower = &lower_s;
      f.SetLower(lower_s);
    }
    if (rnd.OneIn(3)) {
      upper_s = RandomKey(&rnd, alphabet, max_len);
      upper = &upper_s;
      f.SetUpper(upper_s);
    }
    const uint64_t max_skips[] = {1, 2, 3, kDefaultMaxSequentialSkip, 1000};
    const uint64_t max_skip = max_skips[rnd.Uniform(5)];
    const Model model = BuildModel(cmp, recs, snap, hidden, lower, upper);
    auto it = f.Make(snap, use_cb ? &cb : nullptr, rnd.OneIn(2), max_skip);

    size_t pos = VectorIter::kNone;  // model position; kNone = not valid
    bool expect_error = false;
    const int kOps = 60;
    std::string trace;
    for (int op = 0; op < kOps; ++op) {
      const uint32_t what = rnd.Uniform(6);
      const bool valid = it->Valid();
      if ((what == 4 || what == 5) && !valid) continue;
      switch (what) {
        case 0: {
          const std::string t = RandomKey(&rnd, alphabet, max_len);
          trace.append("Seek(").append(t).append(") ");
          it->Seek(t);
          pos = model.LowerBound(t);
          if (pos == model.size()) pos = VectorIter::kNone;
          break;
        }
        case 1: {
          const std::string t = RandomKey(&rnd, alphabet, max_len);
          trace.append("SeekForPrev(").append(t).append(") ");
          it->SeekForPrev(t);
          pos = model.LastAtOrBefore(t);
          break;
        }
        case 2:
          trace += "SeekToFirst ";
          it->SeekToFirst();
          pos = model.size() == 0 ? VectorIter::kNone : 0;
          break;
        case 3:
          trace += "SeekToLast ";
          it->SeekToLast();
          pos = model.size() == 0 ? VectorIter::kNone : model.size() - 1;
          break;
        case 4:
          trace += "Next ";
          it->Next();
          pos = pos + 1 == model.size() ? VectorIter::kNone : pos + 1;
          break;
        case 5:
          trace += "Prev ";
          it->Prev();
          pos = pos == 0 ? VectorIter::kNone : pos - 1;
          break;
      }
      SCOPED_TRACE(trace);
      expect_error = pos != VectorIter::kNone && model.at(pos).is_merge;
      if (pos == VectorIter::kNone || expect_error) {
        ASSERT_FALSE(it->Valid()) << "at " << Cur(it.get());
        if (expect_error) {
          ASSERT_TRUE(it->status().IsNotSupported()) << it->status().ToString();
        } else {
          ASSERT_TRUE(it->status().ok()) << it->status().ToString();
        }
        pos = VectorIter::kNone;
      } else {
        ASSERT_TRUE(it->Valid()) << it->status().ToString() << " expected " << model.at(pos).key;
        ASSERT_EQ(it->key().ToString(), model.at(pos).key);
        ASSERT_EQ(it->value().ToString(), model.at(pos).value);
        ASSERT_TRUE(it->status().ok());
      }
    }
  }
}

}  // namespace
}  // namespace shale
