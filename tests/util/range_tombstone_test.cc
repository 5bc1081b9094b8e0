// FragmentedRangeTombstones (util/range_tombstone.h): the cases of
// tests/testdata/range_tombstone.txt (see testutil/datadriven.h), and a randomized check
// against a brute force over every tombstone.
//
//   build [snapshots=(S,...)]  input: tombstones "begin-end@seq", several a line.
//                              output: the fragments "[begin,end) seq,seq,...", one a line,
//                              or "(empty)". The list stays for the cases that follow.
//   covers snapshot=S [invisible=(Q,...)]
//                              input: user keys, several a line. output per key
//                              "key: F seq" (F: FindFragment's answer) or "key: F -" when no
//                              visible tombstone covers it; invisible seqs are hidden by a
//                              ReadCallback as a WritePrepared read's would be.
#include "util/range_tombstone.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testutil/datadriven.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

class HidingCallback : public ReadCallback {
 public:
  explicit HidingCallback(std::set<SequenceNumber> hidden, SequenceNumber snapshot)
      : ReadCallback(snapshot), hidden_(std::move(hidden)) {}
  bool IsVisibleFullCheck(SequenceNumber seq) override { return hidden_.count(seq) == 0; }

 private:
  std::set<SequenceNumber> hidden_;
};

std::vector<std::string> Words(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const std::string& line : lines) {
    std::istringstream in(line);
    std::string w;
    while (in >> w) out.push_back(w);
  }
  return out;
}

bool ParseTombstone(const std::string& text, RangeTombstone* t) {
  size_t dash = text.find('-');
  size_t at = text.find('@');
  if (dash == std::string::npos || at == std::string::npos || at < dash) return false;
  t->begin = text.substr(0, dash);
  t->end = text.substr(dash + 1, at - dash - 1);
  t->seq = std::stoull(text.substr(at + 1));
  return true;
}

std::string Describe(const FragmentedRangeTombstones& list) {
  if (list.empty()) return "(empty)\n";
  std::ostringstream out;
  for (size_t i = 0; i < list.size(); i++) {
    const auto& f = list.fragment(i);
    out << "[" << f.begin.ToString() << "," << f.end.ToString() << ")";
    for (size_t s = f.first_seq; s < f.last_seq; s++) {
      out << (s == f.first_seq ? " " : ",") << list.seqs()[s];
    }
    out << "\n";
  }
  return out.str();
}

TEST(RangeTombstoneTest, DataDriven) {
  std::unique_ptr<FragmentedRangeTombstones> list;
  RunDataDriven("range_tombstone.txt", [&](const DataDrivenCase& c) -> std::string {
    if (c.command == "build") {
      std::vector<RangeTombstone> tombstones;
      for (const std::string& w : Words(c.input)) {
        RangeTombstone t;
        if (!ParseTombstone(w, &t)) return "bad tombstone " + w + "\n";
        tombstones.push_back(t);
      }
      std::vector<SequenceNumber> snapshots;
      for (const std::string& s : c.Args("snapshots")) snapshots.push_back(std::stoull(s));
      list = std::make_unique<FragmentedRangeTombstones>(std::move(tombstones),
                                                         BytewiseComparator(), snapshots);
      return Describe(*list);
    }
    if (c.command == "covers") {
      if (list == nullptr) return "no list built\n";
      SequenceNumber snapshot = c.IntArg("snapshot", kMaxSequenceNumber >> 1);
      std::set<SequenceNumber> hidden;
      for (const std::string& s : c.Args("invisible")) hidden.insert(std::stoull(s));
      HidingCallback callback(hidden, snapshot);
      std::ostringstream out;
      for (const std::string& key : Words(c.input)) {
        size_t f = list->FindFragment(key);
        SequenceNumber seq =
            list->MaxCoveringSeq(key, snapshot, hidden.empty() ? nullptr : &callback);
        out << key << ": " << f << " ";
        if (seq == 0) {
          out << "-\n";
        } else {
          out << seq << "\n";
        }
      }
      return out.str();
    }
    return "unknown command " + c.command + "\n";
  });
}

// Random tombstones over a small key space: for every key and snapshot, the fragmented
// answer equals the newest covering tombstone at or below the snapshot found by brute force,
// and with snapshots given, the answer at each snapshot stays the same.
TEST(RangeTombstoneTest, MatchesBruteForce) {
  Random rnd(TestSeed());
  for (int round = 0; round < 200; round++) {
    std::vector<RangeTombstone> tombstones;
    int n = 1 + rnd.Uniform(12);
    for (int i = 0; i < n; i++) {
      std::string a(1, static_cast<char>('a' + rnd.Uniform(12)));
      std::string b(1, static_cast<char>('a' + rnd.Uniform(12)));
      // Some empty or reversed ranges on purpose: they delete nothing.
      tombstones.push_back(RangeTombstone{a, b, 1 + rnd.Uniform(20)});
    }
    std::vector<SequenceNumber> snapshots = {3, 7, 12};
    FragmentedRangeTombstones all(tombstones, BytewiseComparator());
    FragmentedRangeTombstones striped(tombstones, BytewiseComparator(), snapshots);
    for (char k = 'a'; k <= 'm'; k++) {
      std::string key(1, k);
      for (SequenceNumber snap = 0; snap <= 21; snap++) {
        SequenceNumber want = 0;
        for (const RangeTombstone& t : tombstones) {
          if (t.begin <= key && key < t.end && t.seq <= snap) want = std::max(want, t.seq);
        }
        ASSERT_EQ(want, all.MaxCoveringSeq(key, snap)) << "key " << key << " snap " << snap;
        bool at_snapshot = snap == 3 || snap == 7 || snap == 12 || snap == 21;
        if (at_snapshot) {
          ASSERT_EQ(want, striped.MaxCoveringSeq(key, snap)) << "key " << key << " snap " << snap;
        }
      }
    }
    // Rebuilding from the fragments' own tombstones gives the same fragments.
    FragmentedRangeTombstones again(all.ToTombstones(), BytewiseComparator());
    ASSERT_EQ(Describe(all), Describe(again));
  }
}

}  // namespace
}  // namespace shale
