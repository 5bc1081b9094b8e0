// Tests for NewMergingIterator: random children (sorted vectors of internal keys, sharing
// keys on purpose) against a merged model under random operation sequences in both
// directions, plus error propagation and the n == 0 / n == 1 shortcuts.

#include "table/merging_iterator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "shale/comparator.h"
#include "util/dbformat.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

// A child over sorted (internal key, value) pairs. Landing on index fail_at (by any move)
// makes it invalid with a Corruption, as a block with a bad checksum would.
class VectorIterator final : public InternalIterator {
 public:
  VectorIterator(const InternalKeyComparator* cmp, Entries entries, int fail_at = -1,
                 std::string name = "child")
      : cmp_(cmp), entries_(std::move(entries)), fail_at_(fail_at), name_(std::move(name)) {}

  bool Valid() const override { return InRange() && !failed_; }
  void SeekToFirst() override { Land(0); }
  void SeekToLast() override { Land(static_cast<int>(entries_.size()) - 1); }
  void Seek(const Slice& target) override {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), target,
                               [&](const auto& e, const Slice& t) { return Less(e.first, t); });
    Land(static_cast<int>(it - entries_.begin()));
  }
  void SeekForPrev(const Slice& target) override {
    auto it = std::upper_bound(entries_.begin(), entries_.end(), target,
                               [&](const Slice& t, const auto& e) { return Less(t, e.first); });
    Land(static_cast<int>(it - entries_.begin()) - 1);
  }
  void Next() override {
    ASSERT_TRUE(Valid());
    Land(pos_ + 1);
  }
  void Prev() override {
    ASSERT_TRUE(Valid());
    Land(pos_ - 1);
  }
  Slice key() const override { return entries_[pos_].first; }
  Slice value() const override { return entries_[pos_].second; }
  Status status() const override {
    return failed_ ? Status::Corruption(name_, "injected") : Status::OK();
  }
  bool IsKeyPinned() const override { return true; }

 private:
  bool Less(const Slice& a, const Slice& b) const { return cmp_->Compare(a, b) < 0; }
  bool InRange() const { return pos_ >= 0 && pos_ < static_cast<int>(entries_.size()); }
  void Land(int pos) {
    pos_ = pos;
    failed_ = InRange() && pos_ == fail_at_;
  }

  const InternalKeyComparator* cmp_;
  Entries entries_;
  int fail_at_;
  std::string name_;
  int pos_ = -1;
  bool failed_ = false;
};

std::string UserKey(Random* rnd, int space) {
  char buf[16];
  snprintf(buf, sizeof(buf), "k%03u", rnd->Uniform(space));
  return buf;
}

std::string Describe(const char* op, const std::string& ikey) {
  ParsedInternalKey p(ExtractUserKey(ikey), ExtractSequence(ikey), ExtractValueType(ikey));
  std::string r = " ";
  r.append(op).append("(").append(p.DebugString()).append(")");
  return r;
}

struct ModelEntry {
  std::string key, value;
  int child;
};

class MergingIteratorTest : public ::testing::TestWithParam<bool> {
 protected:
  MergingIteratorTest() : icmp_(GetParam() ? ReverseBytewiseComparator() : BytewiseComparator()) {}

  Entries RandomChild(Random* rnd, int child, int key_space) {
    std::set<std::string, std::function<bool(const std::string&, const std::string&)>> keys(
        [&](const std::string& a, const std::string& b) { return icmp_.Compare(a, b) < 0; });
    const int n = rnd->OneIn(5) ? 0 : static_cast<int>(rnd->Uniform(40));
    for (int i = 0; i < n; i++) {
      // Few sequence numbers and types so that children share internal keys.
      keys.insert(IKey(UserKey(rnd, key_space), 1 + rnd->Uniform(4),
                       rnd->OneIn(3) ? kTypeDeletion : kTypeValue));
    }
    Entries entries;
    int i = 0;
    for (const std::string& k : keys) {
      char value[32];
      snprintf(value, sizeof(value), "c%d#%d", child, i++);
      entries.emplace_back(k, value);
    }
    return entries;
  }

  std::string RandomTarget(Random* rnd, int key_space) {
    const SequenceNumber seq = rnd->Uniform(6);
    return IKey(UserKey(rnd, key_space + 2), seq,
                rnd->OneIn(2) ? kValueTypeForSeek : static_cast<ValueType>(rnd->Uniform(2)));
  }

  // Merged order: internal key, then child index.
  std::vector<ModelEntry> Merge(const std::vector<Entries>& children) {
    std::vector<ModelEntry> model;
    for (size_t c = 0; c < children.size(); c++) {
      for (const auto& [k, v] : children[c]) model.push_back({k, v, static_cast<int>(c)});
    }
    std::stable_sort(model.begin(), model.end(), [&](const ModelEntry& a, const ModelEntry& b) {
      return icmp_.Compare(a.key, b.key) < 0;
    });
    return model;
  }

  InternalIterator* Make(const std::vector<Entries>& children) {
    std::vector<InternalIterator*> iters;
    for (const Entries& e : children) iters.push_back(new VectorIterator(&icmp_, e));
    return NewMergingIterator(&icmp_, iters.data(), static_cast<int>(iters.size()));
  }

  InternalKeyComparator icmp_;
};

TEST_P(MergingIteratorTest, RandomOperationsMatchModel) {
  Random rnd(TestSeed() + GetParam());
  for (int round = 0; round < 400; round++) {
    const int num_children = static_cast<int>(rnd.Uniform(7));
    const int key_space = 1 + static_cast<int>(rnd.Uniform(30));
    std::vector<Entries> children;
    for (int c = 0; c < num_children; c++) children.push_back(RandomChild(&rnd, c, key_space));
    const std::vector<ModelEntry> model = Merge(children);
    std::unique_ptr<InternalIterator> iter(Make(children));
    const int size = static_cast<int>(model.size());
    int pos = -1;  // model position; outside [0, size) means invalid
    std::string trace;
    for (int op = 0; op < 200; op++) {
      const bool valid = pos >= 0 && pos < size;
      const uint32_t choice = rnd.Uniform(valid ? 10 : 4);
      if (choice == 0) {
        trace += " SeekToFirst";
        iter->SeekToFirst();
        pos = 0;
      } else if (choice == 1) {
        trace += " SeekToLast";
        iter->SeekToLast();
        pos = size - 1;
      } else if (choice == 2) {
        std::string t = RandomTarget(&rnd, key_space);
        trace += Describe("Seek", t);
        iter->Seek(t);
        pos = static_cast<int>(
            std::partition_point(model.begin(), model.end(),
                                 [&](const ModelEntry& e) { return icmp_.Compare(e.key, t) < 0; }) -
            model.begin());
      } else if (choice == 3) {
        std::string t = RandomTarget(&rnd, key_space);
        trace += Describe("SeekForPrev", t);
        iter->SeekForPrev(t);
        pos = static_cast<int>(std::partition_point(model.begin(), model.end(),
                                                    [&](const ModelEntry& e) {
                                                      return icmp_.Compare(e.key, t) <= 0;
                                                    }) -
                               model.begin()) -
              1;
      } else if (choice < 7) {
        trace += " Next";
        iter->Next();
        pos++;
      } else {
        trace += " Prev";
        iter->Prev();
        pos--;
      }
      ASSERT_TRUE(iter->status().ok()) << trace;
      const bool want_valid = pos >= 0 && pos < size;
      ASSERT_EQ(iter->Valid(), want_valid) << "round " << round << ":" << trace;
      if (want_valid) {
        ASSERT_EQ(iter->key().ToString(), model[pos].key) << "round " << round << ":" << trace;
        ASSERT_EQ(iter->value().ToString(), model[pos].value) << "round " << round << ":" << trace;
        ASSERT_TRUE(iter->IsKeyPinned());
      }
    }
  }
}

TEST_P(MergingIteratorTest, FullScansBothWays) {
  Random rnd(TestSeed() * 3 + GetParam());
  for (int round = 0; round < 50; round++) {
    std::vector<Entries> children;
    for (int c = 0; c < 2 + static_cast<int>(rnd.Uniform(8)); c++) {
      children.push_back(RandomChild(&rnd, c, 50));
    }
    const std::vector<ModelEntry> model = Merge(children);
    std::unique_ptr<InternalIterator> iter(Make(children));
    size_t i = 0;
    for (iter->SeekToFirst(); iter->Valid(); iter->Next(), i++) {
      ASSERT_LT(i, model.size());
      ASSERT_EQ(iter->value().ToString(), model[i].value);
    }
    ASSERT_EQ(i, model.size());
    for (iter->SeekToLast(); iter->Valid(); iter->Prev()) {
      ASSERT_GT(i, 0u);
      ASSERT_EQ(iter->value().ToString(), model[--i].value);
    }
    ASSERT_EQ(i, 0u);
    ASSERT_TRUE(iter->status().ok());
  }
}

TEST_P(MergingIteratorTest, NoChildrenIsEmpty) {
  std::unique_ptr<InternalIterator> iter(NewMergingIterator(&icmp_, nullptr, 0));
  iter->SeekToFirst();
  EXPECT_FALSE(iter->Valid());
  iter->SeekForPrev(IKey("a", 1, kTypeValue));
  EXPECT_FALSE(iter->Valid());
  EXPECT_TRUE(iter->status().ok());
}

TEST_P(MergingIteratorTest, OneChildIsReturnedItself) {
  InternalIterator* child = new VectorIterator(&icmp_, {{IKey("a", 1, kTypeValue), "v"}});
  std::unique_ptr<InternalIterator> iter(NewMergingIterator(&icmp_, &child, 1));
  EXPECT_EQ(iter.get(), child);
  iter->SeekToFirst();
  ASSERT_TRUE(iter->Valid());
  EXPECT_EQ(iter->value().ToString(), "v");
}

TEST_P(MergingIteratorTest, ChildErrorStopsIterationBothWays) {
  Random rnd(TestSeed() * 7 + GetParam());
  for (int round = 0; round < 100; round++) {
    std::vector<Entries> children;
    const int n = 2 + static_cast<int>(rnd.Uniform(4));
    for (int c = 0; c < n; c++) children.push_back(RandomChild(&rnd, c, 20));
    const int bad = static_cast<int>(rnd.Uniform(n));
    if (children[bad].size() < 2) continue;
    const int fail_at = 1 + static_cast<int>(rnd.Uniform(children[bad].size() - 1));
    const bool forward = rnd.OneIn(2);
    const int reached_from = forward ? fail_at - 1 : fail_at + 1;  // the last good entry
    std::vector<InternalIterator*> iters;
    for (int c = 0; c < n; c++) {
      iters.push_back(new VectorIterator(&icmp_, children[c], c == bad ? fail_at : -1,
                                         "child" + std::to_string(c)));
    }
    std::unique_ptr<InternalIterator> iter(NewMergingIterator(&icmp_, iters.data(), n));
    std::vector<ModelEntry> model = Merge(children);
    if (!forward) std::reverse(model.begin(), model.end());
    if (!forward && reached_from >= static_cast<int>(children[bad].size())) continue;
    const std::string last_good = children[bad][reached_from].second;
    size_t i = 0;
    forward ? iter->SeekToFirst() : iter->SeekToLast();
    bool saw_last_good = false;
    while (iter->Valid()) {
      ASSERT_LT(i, model.size());
      ASSERT_EQ(iter->value().ToString(), model[i].value) << round;
      ASSERT_FALSE(saw_last_good) << "moved on past a failed child";
      saw_last_good = iter->value().ToString() == last_good;
      forward ? iter->Next() : iter->Prev();
      i++;
    }
    ASSERT_TRUE(saw_last_good) << round;
    ASSERT_TRUE(iter->status().IsCorruption()) << iter->status().ToString();
    EXPECT_NE(iter->status().ToString().find("child" + std::to_string(bad)), std::string::npos);

    // A new seek that keeps clear of the bad entry recovers.
    iter->Seek(children[bad][0].first);
    EXPECT_TRUE(iter->status().ok());
    EXPECT_TRUE(iter->Valid());
  }
}

TEST_P(MergingIteratorTest, ErrorDuringDirectionSwitch) {
  // The child holding the smaller key fails when a switch to reverse lands it there.
  const std::string lo = GetParam() ? "b" : "a";
  const std::string hi = GetParam() ? "a" : "b";
  std::vector<InternalIterator*> iters = {
      new VectorIterator(&icmp_, {{IKey(hi, 1, kTypeValue), "hi"}}),
      new VectorIterator(&icmp_, {{IKey(lo, 1, kTypeValue), "lo"}}, 0, "child1")};
  std::unique_ptr<InternalIterator> iter(NewMergingIterator(&icmp_, iters.data(), 2));
  iter->Seek(IKey(hi, 1, kTypeValue));
  ASSERT_TRUE(iter->Valid());
  ASSERT_TRUE(iter->status().ok());
  ASSERT_EQ(iter->value().ToString(), "hi");
  iter->Prev();
  EXPECT_FALSE(iter->Valid());
  EXPECT_TRUE(iter->status().IsCorruption());
  EXPECT_NE(iter->status().ToString().find("child1"), std::string::npos);
}

TEST_P(MergingIteratorTest, FirstChildErrorWins) {
  std::vector<InternalIterator*> iters = {
      new VectorIterator(&icmp_, {{IKey("a", 1, kTypeValue), "x"}}),
      NewEmptyInternalIterator(Status::Corruption("first")),
      new VectorIterator(&icmp_, {{IKey("b", 1, kTypeValue), "y"}}),
      NewEmptyInternalIterator(Status::IOError("second")),
  };
  std::unique_ptr<InternalIterator> iter(NewMergingIterator(&icmp_, iters.data(), 4));
  iter->SeekToFirst();
  EXPECT_FALSE(iter->Valid());
  EXPECT_TRUE(iter->status().IsCorruption());
  EXPECT_NE(iter->status().ToString().find("first"), std::string::npos);
  iter->SeekForPrev(IKey("z", 1, kTypeValue));
  EXPECT_FALSE(iter->Valid());
  EXPECT_TRUE(iter->status().IsCorruption());
}

INSTANTIATE_TEST_SUITE_P(Comparators, MergingIteratorTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Reverse" : "Bytewise"; });

}  // namespace
}  // namespace shale
