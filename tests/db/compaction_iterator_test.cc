// CompactionIterator over a vector-backed input. The table cases are data, in
// tests/testdata/compaction_iterator.txt and compaction_iterator_merge.txt: the live
// snapshots, the input entries ("key@seq:Type[:value]", Type P=Put D=Delete S=SingleDelete
// M=Merge), the merge operator, and the entries expected out with the drop counters. Every
// case is also checked to account for each input entry exactly once.
//
// The Compaction used for the "bottom" checks outputs into L1 with one file at L3 holding
// keys "m".."n": keys starting with 'm' exist below the output level, others do not.
#include "db/compaction_iterator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "db/compaction.h"
#include "db/table_cache.h"
#include "db/version_set.h"
#include "shale/merge_operator.h"
#include "shale/statistics.h"
#include "tests/testutil/datadriven.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"
#include "util/range_tombstone.h"

namespace shale {
namespace {

// Sorted (key, value) pairs as an InternalIterator.
class VectorIterator final : public InternalIterator {
 public:
  VectorIterator(std::vector<std::pair<std::string, std::string>> entries,
                 const InternalKeyComparator* icmp, bool sort = true)
      : entries_(std::move(entries)) {
    if (!sort) return;
    std::sort(entries_.begin(), entries_.end(),
              [icmp](const auto& a, const auto& b) { return icmp->Compare(a.first, b.first) < 0; });
  }
  bool Valid() const override { return pos_ < entries_.size(); }
  void SeekToFirst() override { pos_ = 0; }
  void SeekToLast() override { pos_ = entries_.empty() ? 0 : entries_.size() - 1; }
  void Seek(const Slice&) override { pos_ = 0; }
  void SeekForPrev(const Slice&) override { pos_ = 0; }
  void Next() override { pos_++; }
  void Prev() override { pos_ = pos_ == 0 ? entries_.size() : pos_ - 1; }
  Slice key() const override { return entries_[pos_].first; }
  Slice value() const override { return entries_[pos_].second; }
  Status status() const override { return Status::OK(); }

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
  size_t pos_ = 0;
};

ValueType TypeOf(char c) {
  switch (c) {
    case 'P': return kTypeValue;
    case 'D': return kTypeDeletion;
    case 'S': return kTypeSingleDeletion;
    case 'M': return kTypeMerge;
  }
  ADD_FAILURE() << "bad type " << c;
  return kTypeValue;
}

char LetterOf(ValueType t) {
  switch (t) {
    case kTypeValue: return 'P';
    case kTypeDeletion: return 'D';
    case kTypeSingleDeletion: return 'S';
    case kTypeMerge: return 'M';
    default: return '?';
  }
}

// "a@5:P:v a@3:D" -> internal keys and values.
std::vector<std::pair<std::string, std::string>> ParseEntries(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> r;
  std::istringstream in(text);
  std::string tok;
  while (in >> tok) {
    const size_t at = tok.find('@');
    const size_t c1 = tok.find(':', at);
    const size_t c2 = tok.find(':', c1 + 1);
    const std::string key = tok.substr(0, at);
    const SequenceNumber seq = std::stoull(tok.substr(at + 1, c1 - at - 1));
    const ValueType type = TypeOf(tok[c1 + 1]);
    const std::string value = c2 == std::string::npos ? "" : tok.substr(c2 + 1);
    std::string ikey;
    AppendInternalKey(&ikey, key, seq, type);
    r.emplace_back(ikey, value);
  }
  return r;
}

std::vector<SequenceNumber> ParseSnapshots(const std::string& text) {
  std::vector<SequenceNumber> r;
  std::istringstream in(text);
  SequenceNumber s;
  while (in >> s) r.push_back(s);
  return r;
}

// Commits for a SnapshotChecker, from a case's commits=(5>8,6>-): the entry at 5 commits
// at 8, the one at 6 never does; every other sequence commits at itself.
class TableChecker final : public SnapshotChecker {
 public:
  explicit TableChecker(const std::vector<std::string>& specs) {
    for (const std::string& spec : specs) {
      const size_t gt = spec.find('>');
      const SequenceNumber seq = std::stoull(spec.substr(0, gt));
      const std::string to = spec.substr(gt + 1);
      commit_[seq] = to == "-" ? kMaxSequenceNumber : std::stoull(to);
    }
  }
  Result CheckInSnapshot(SequenceNumber seq, SequenceNumber snapshot_seq) const override {
    auto it = commit_.find(seq);
    const SequenceNumber commit = it == commit_.end() ? seq : it->second;
    if (commit == kMaxSequenceNumber) return Result::kNotInSnapshot;  // never committed
    return commit <= snapshot_seq ? Result::kInSnapshot : Result::kNotInSnapshot;
  }

 private:
  std::map<SequenceNumber, SequenceNumber> commit_;
};

// One run of the iterator: live snapshots ("4 7"), flush or compaction, input entries.
struct Case {
  const char* snapshots;
  bool flush;  // no Compaction: nothing is known about the levels below
  const char* input;
};

// Joins with ',' like stringappend; combines operands pairwise (PartialMerge) as well.
class AppendOperator final : public AssociativeMergeOperator {
 public:
  bool Merge(const Slice&, const Slice* existing, const Slice& value, std::string* new_value,
             Logger*) const override {
    if (existing != nullptr) *new_value = existing->ToString() + ",";
    new_value->append(value.data(), value.size());
    return true;
  }
  const char* Name() const override { return "TestAppend"; }
};

// The same join, but it declines every PartialMerge: operands without a base stay apart.
class FullOnlyAppendOperator final : public MergeOperator {
 public:
  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    bool first = in.existing_value == nullptr;
    if (!first) out->new_value = in.existing_value->ToString();
    for (const Slice& op : in.operand_list) {
      if (!first) out->new_value += ",";
      out->new_value.append(op.data(), op.size());
      first = false;
    }
    return true;
  }
  const char* Name() const override { return "TestFullOnlyAppend"; }
};

// Fails every full merge; declines every partial one.
class FailingOperator final : public MergeOperator {
 public:
  bool FullMergeV2(const MergeOperationInput&, MergeOperationOutput*) const override {
    return false;
  }
  const char* Name() const override { return "TestFailing"; }
};

const MergeOperator* OperatorFor(char kind) {
  static const AppendOperator append;
  static const FullOnlyAppendOperator full_only;
  static const FailingOperator failing;
  switch (kind) {
    case 'A': return &append;
    case 'F': return &full_only;
    case 'X': return &failing;
  }
  ADD_FAILURE() << "bad operator " << kind;
  return nullptr;
}

// What a read at sequence `at` returns from one key's entries ("a@5:M:x a@3:P:v", newest
// first), folding operands as AppendOperator does; "(none)" when nothing is there. With a
// checker, what it says is invisible at `at` is skipped, as a WritePrepared read does.
std::string ReadAt(const std::string& entries, SequenceNumber at,
                   const SnapshotChecker* checker = nullptr,
                   const std::vector<RangeTombstone>* tombstones = nullptr) {
  const auto visible = [&](SequenceNumber seq) {
    return seq <= at && (checker == nullptr || checker->CheckInSnapshot(seq, at) !=
                                                   SnapshotChecker::Result::kNotInSnapshot);
  };
  // The newest visible tombstone over the entry's key deletes every entry older than it.
  SequenceNumber covered = 0;
  std::vector<std::string> operands;  // newest first
  std::string base = "(none)";
  bool has_base = false;
  for (const auto& [ikey, value] : ParseEntries(entries)) {
    ParsedInternalKey ik;
    EXPECT_OK(ParseInternalKey(ikey, &ik));
    if (!visible(ik.sequence)) continue;
    if (tombstones != nullptr) {
      for (const RangeTombstone& t : *tombstones) {
        if (t.begin <= ik.user_key.ToString() && ik.user_key.ToString() < t.end && visible(t.seq)) {
          covered = std::max(covered, t.seq);
        }
      }
    }
    if (ik.sequence < covered) break;  // deleted, and so is everything older
    if (ik.type == kTypeMerge) {
      operands.push_back(value);
      continue;
    }
    if (ik.type == kTypeValue) {
      base = value;
      has_base = true;
    }
    break;
  }
  if (operands.empty()) return base;
  std::string r = has_base ? base : "";
  for (auto it = operands.rbegin(); it != operands.rend(); ++it) {
    if (!r.empty() || has_base) r += ",";
    r += *it;
  }
  return r;
}

// One random entry of key "a" at seq, the i-th newest ("a@18:M:c "): a Merge in
// merges_in_10 cases of 10, a Put up to 8, else a Delete. No SingleDelete: it is defined
// only over one Put, which a random history is not.
std::string RandomEntry(Random* rnd, int i, SequenceNumber seq, uint32_t merges_in_10) {
  const uint32_t r = rnd->Uniform(10);
  const char type = r < merges_in_10 ? 'M' : r < 8 ? 'P' : 'D';
  std::string e = "a@" + std::to_string(seq) + ":" + type;
  if (type != 'D') e += ":" + std::string(1, static_cast<char>('a' + i));
  return e + " ";
}

class CompactionIteratorTest : public ::testing::Test {
 protected:
  CompactionIteratorTest() : dir_("compaction_iterator_test"), icmp_(BytewiseComparator()) {
    options_.num_levels = 4;
    table_cache_ = std::make_unique<TableCache>(dir_.path(), options_, &icmp_, -1);
    vset_ = std::make_unique<VersionSet>(dir_.path(), &options_, table_cache_.get(), &icmp_, &mu_);
    VersionEdit edit;
    edit.AddFile(1, Meta(10, "a", "z"));
    edit.AddFile(3, Meta(11, "m", "n"));
    MutexLock l(&mu_);
    EXPECT_OK(vset_->LogAndApply(&edit));
    std::vector<CompactionInputFiles> inputs(1);
    inputs[0].level = 1;
    inputs[0].files = vset_->current()->files(1);
    compaction_ =
        std::make_unique<Compaction>(vset_->current(), &icmp_, 1, 1, std::move(inputs),
                                     std::vector<FileMetaPtr>(), 1 << 20, 1 << 20, 1.0, true);
  }

  ~CompactionIteratorTest() override {
    MutexLock l(&mu_);
    compaction_.reset();
    vset_.reset();
  }

  static FileMetaData Meta(uint64_t number, const std::string& smallest,
                           const std::string& largest) {
    FileMetaData f;
    f.number = number;
    f.file_size = 100;
    f.smallest = InternalKey(smallest, 1, kTypeValue);
    f.largest = InternalKey(largest, 1, kTypeValue);
    f.smallest_seqno = f.largest_seqno = 1;
    return f;
  }

  std::string Run(const Case& c, CompactionIterationStats* stats, Status* status,
                  const MergeOperator* merge_operator = nullptr, Statistics* statistics = nullptr,
                  const SnapshotChecker* checker = nullptr,
                  const FragmentedRangeTombstones* tombstones = nullptr) {
    VectorIterator input(ParseEntries(c.input), &icmp_);
    input.SeekToFirst();
    CompactionIterator iter(&input, BytewiseComparator(), ParseSnapshots(c.snapshots),
                            c.flush ? nullptr : compaction_.get(), nullptr, merge_operator, nullptr,
                            statistics, checker);
    iter.SetRangeTombstones(tombstones);
    std::string out;
    for (iter.SeekToFirst(); iter.Valid(); iter.Next()) {
      if (!out.empty()) out += ' ';
      out += iter.user_key().ToString() + "@" + std::to_string(iter.ikey().sequence) + ":" +
             LetterOf(iter.ikey().type);
      EXPECT_EQ(ExtractUserKey(iter.key()), iter.user_key());
      if (!iter.value().empty()) out += ":" + iter.value().ToString();
    }
    *stats = iter.stats();
    *status = iter.status();
    return out;
  }

  // One `compact` case of a compaction_iterator*.txt file (their header says the format):
  // the entries written and the drop counters. Whatever the case, every input entry must be
  // written or dropped for exactly one counted reason (a SingleDelete and the Put it
  // cancels count once hidden, once obsolete), and no merge may fail.
  std::string RunFileCase(const DataDrivenCase& dc) {
    if (dc.command != "compact") return "unknown command " + dc.command;
    std::string input, snapshots;
    for (const std::string& line : dc.input) input += line + " ";
    for (const std::string& s : dc.Args("snapshots")) snapshots += s + " ";
    const MergeOperator* op = nullptr;
    if (dc.HasArg("merge")) {
      const std::string name = dc.Arg("merge");
      op = OperatorFor(name == "append"      ? 'A'
                       : name == "full-only" ? 'F'
                       : name == "failing"   ? 'X'
                                             : '?');
    }
    const Case c = {snapshots.c_str(), dc.HasArg("flush"), input.c_str()};
    CompactionIterationStats stats;
    Status s;
    std::unique_ptr<TableChecker> checker;
    if (dc.HasArg("commits")) checker = std::make_unique<TableChecker>(dc.Args("commits"));
    // rangedel=(a-z@20,...): the input's range tombstones [a, z) at 20 (the entries they
    // cover are still in the input: under a checker nothing is left out beforehand).
    std::vector<RangeTombstone> ranges;
    for (const std::string& spec : dc.Args("rangedel")) {
      const size_t dash = spec.find('-');
      const size_t at = spec.find('@');
      ranges.push_back({spec.substr(0, dash), spec.substr(dash + 1, at - dash - 1),
                        std::stoull(spec.substr(at + 1))});
    }
    const FragmentedRangeTombstones tombstones(std::move(ranges), BytewiseComparator());
    const std::string out = Run(c, &stats, &s, op, nullptr, checker.get(), &tombstones);
    EXPECT_OK(s) << dc.Where();
    const uint64_t in = ParseEntries(input).size();
    EXPECT_EQ(stats.num_input_records, in) << dc.Where();
    EXPECT_EQ(stats.num_output_records, ParseEntries(out).size()) << dc.Where();
    EXPECT_EQ(stats.num_output_records + stats.num_record_drop_hidden +
                  stats.num_record_drop_obsolete + stats.num_record_drop_merged,
              in)
        << dc.Where();
    EXPECT_EQ(stats.num_merge_failures, 0u) << dc.Where();
    return (out.empty() ? "(nothing)" : out) +
           "\nhidden=" + std::to_string(stats.num_record_drop_hidden) +
           " obsolete=" + std::to_string(stats.num_record_drop_obsolete) +
           " merged=" + std::to_string(stats.num_record_drop_merged) + "\n";
  }

  TempDirectory dir_;
  InternalKeyComparator icmp_;
  Options options_;
  Mutex mu_;
  std::unique_ptr<TableCache> table_cache_;
  std::unique_ptr<VersionSet> vset_;
  std::unique_ptr<Compaction> compaction_;
};

TEST_F(CompactionIteratorTest, Table) {
  ASSERT_FALSE(compaction_->bottommost_level());
  ASSERT_TRUE(compaction_->KeyNotExistsBeyondOutputLevel("a"));
  ASSERT_FALSE(compaction_->KeyNotExistsBeyondOutputLevel("m"));
  RunDataDriven("compaction_iterator.txt",
                [this](const DataDrivenCase& c) { return RunFileCase(c); });
}

TEST_F(CompactionIteratorTest, MergeTable) {
  RunDataDriven("compaction_iterator_merge.txt",
                [this](const DataDrivenCase& c) { return RunFileCase(c); });
}

// Operands that pass through unchanged (no operator) and folded ones (an operator) must
// read the same at every snapshot and at the latest state.
TEST_F(CompactionIteratorTest, MergeFoldingKeepsWhatEachSnapshotReads) {
  const uint64_t seed = TestSeed();
  Random rnd(static_cast<uint32_t>(seed));
  const AppendOperator op;
  for (int round = 0; round < 300; round++) {
    // One key's history, newest first, over a random set of snapshots.
    std::string input;
    const int n = 1 + static_cast<int>(rnd.Uniform(8));
    for (int i = 0; i < n; i++) {
      input += RandomEntry(&rnd, i, 20 - i * 2, /*merges_in_10=*/6);
    }
    std::string snaps;
    for (SequenceNumber s = 3; s < 21; s += 2) {
      if (rnd.OneIn(4)) snaps += std::to_string(s) + " ";
    }
    SCOPED_TRACE("snapshots [" + snaps + "] input: " + input);
    const bool flush = rnd.OneIn(2);
    const Case c = {snaps.c_str(), flush, input.c_str()};
    CompactionIterationStats stats;
    Status s;
    const std::string folded = Run(c, &stats, &s, &op);
    ASSERT_OK(s);
    // Reads at every snapshot and the latest state, by folding the visible entries.
    std::vector<SequenceNumber> reads = ParseSnapshots(snaps);
    reads.push_back(kMaxSequenceNumber);
    for (SequenceNumber at : reads) {
      EXPECT_EQ(ReadAt(folded, at), ReadAt(input, at)) << "at " << at << " out: " << folded;
    }
  }
}

// The same with WritePrepared data: entries committing after their sequence, the newest
// perhaps not at all. Histories follow the locking protocol (or what
// skip_concurrency_control promises): a key's next write comes after the previous one
// committed. Every snapshot and the latest state read the same before and after; and once
// the uncommitted entry commits (after every snapshot), the latest state still reads the
// same: an uncommitted version never made a committed one go.
TEST_F(CompactionIteratorTest, CheckerKeepsWhatEachSnapshotReads) {
  const uint64_t seed = TestSeed();
  Random rnd(static_cast<uint32_t>(seed));
  const AppendOperator op;
  for (int round = 0; round < 300; round++) {
    std::string input;
    std::vector<std::string> commits;
    std::vector<std::string> committed_later;  // the same, the uncommitted one committed
    const int n = 1 + static_cast<int>(rnd.Uniform(8));
    for (int i = 0; i < n; i++) {  // newest first
      const SequenceNumber seq = 40 - i * 4;
      input += RandomEntry(&rnd, i, seq, /*merges_in_10=*/5);
      if (i == 0 && rnd.OneIn(2)) {
        commits.push_back(std::to_string(seq) + ">-");
        committed_later.push_back(std::to_string(seq) + ">100");
        continue;
      }
      // Committed before the next write of the key (4 sequences later).
      const std::string at = std::to_string(seq) + ">" + std::to_string(seq + rnd.Uniform(4));
      commits.push_back(at);
      committed_later.push_back(at);
    }
    std::string snaps;
    for (SequenceNumber s = 7; s < 46; s += 1) {
      if (rnd.OneIn(6)) snaps += std::to_string(s) + " ";
    }
    const TableChecker checker(commits);
    const TableChecker later(committed_later);
    std::string commit_text;
    for (const std::string& c : commits) commit_text += c + " ";
    SCOPED_TRACE("snapshots [" + snaps + "] commits [" + commit_text + "] input: " + input);
    const Case c = {snaps.c_str(), rnd.OneIn(2), input.c_str()};
    CompactionIterationStats stats;
    Status s;
    const std::string out = Run(c, &stats, &s, &op, nullptr, &checker);
    ASSERT_OK(s);
    std::vector<SequenceNumber> reads = ParseSnapshots(snaps);
    reads.push_back(kMaxSequenceNumber);
    for (SequenceNumber at : reads) {
      EXPECT_EQ(ReadAt(out, at, &checker), ReadAt(input, at, &checker))
          << "at " << at << " out: " << out;
    }
    EXPECT_EQ(ReadAt(out, kMaxSequenceNumber, &later), ReadAt(input, kMaxSequenceNumber, &later))
        << "after the commit, out: " << out;
  }
}

// The same with range tombstones over the key between its entries (with or without a
// checker; the entries they cover still in the input, as under a checker): every snapshot
// and the latest state read the same before and after, the tombstones applied to both.
TEST_F(CompactionIteratorTest, RangeTombstonesKeepWhatEachSnapshotReads) {
  const uint64_t seed = TestSeed();
  Random rnd(static_cast<uint32_t>(seed));
  const AppendOperator op;
  for (int round = 0; round < 600; round++) {
    std::string input;
    std::vector<std::string> commits;
    std::vector<RangeTombstone> ranges;
    const int n = 1 + static_cast<int>(rnd.Uniform(8));
    for (int i = 0; i < n; i++) {  // newest first
      const SequenceNumber seq = 40 - i * 4;
      input += RandomEntry(&rnd, i, seq, /*merges_in_10=*/6);
      commits.push_back(std::to_string(seq) + ">" + std::to_string(seq + rnd.Uniform(2)));
      if (rnd.OneIn(3)) {  // a tombstone just above the entry, committed before the next
        const SequenceNumber t = seq + 2;
        ranges.push_back({rnd.OneIn(2) ? "a" : "0", rnd.OneIn(2) ? "b" : "z", t});
        commits.push_back(std::to_string(t) + ">" + std::to_string(t + rnd.Uniform(2)));
      }
    }
    std::string snaps;
    for (SequenceNumber s = 7; s < 46; s += 1) {
      if (rnd.OneIn(6)) snaps += std::to_string(s) + " ";
    }
    const bool with_checker = rnd.OneIn(2);
    const TableChecker checker(commits);
    const SnapshotChecker* used = with_checker ? &checker : nullptr;
    std::string text;
    for (const RangeTombstone& t : ranges) {
      text += "[" + t.begin + "," + t.end + ")@" + std::to_string(t.seq) + " ";
    }
    if (with_checker) {
      text += "commits [";
      for (const std::string& c : commits) text += c + " ";
      text += "]";
    }
    SCOPED_TRACE("snapshots [" + snaps + "] tombstones " + text + " input: " + input);
    const FragmentedRangeTombstones tombstones(ranges, BytewiseComparator());
    const Case c = {snaps.c_str(), rnd.OneIn(2), input.c_str()};
    CompactionIterationStats stats;
    Status s;
    const std::string out = Run(c, &stats, &s, &op, nullptr, used, &tombstones);
    ASSERT_OK(s);
    std::vector<SequenceNumber> reads = ParseSnapshots(snaps);
    reads.push_back(kMaxSequenceNumber);
    for (SequenceNumber at : reads) {
      EXPECT_EQ(ReadAt(out, at, used, &ranges), ReadAt(input, at, used, &ranges))
          << "at " << at << " out: " << out;
    }
  }
}

TEST_F(CompactionIteratorTest, FailingMergeOperatorStopsWithCorruption) {
  const FailingOperator op;
  std::shared_ptr<Statistics> statistics = CreateDBStatistics();
  for (const char* input : {"a@5:M:x a@4:P:v", "b@6:P:w m@5:M:x m@4:D", "a@5:M:x a@4:S"}) {
    SCOPED_TRACE(input);
    const Case c = {"", false, input};
    CompactionIterationStats stats;
    Status s;
    const std::string out = Run(c, &stats, &s, &op, statistics.get());
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.ToString().find("TestFailing"), std::string::npos) << s.ToString();
    EXPECT_EQ(stats.num_merge_failures, 1u);
    EXPECT_EQ(out.find('M'), std::string::npos) << out;  // nothing of the key came out
  }
  EXPECT_EQ(statistics->getTickerCount(NUMBER_MERGE_FAILURES), 3u);
}

TEST_F(CompactionIteratorTest, CountersByReason) {
  const Case c = {"", false, "a@9:D a@8:P b@7:S b@6:M:x c@5:S d@4:P"};
  CompactionIterationStats stats;
  Status s;
  EXPECT_EQ(Run(c, &stats, &s), "d@4:P");
  EXPECT_EQ(stats.num_input_deletion_records, 3u);
  EXPECT_EQ(stats.num_single_del_mismatch, 1u);          // b's SingleDelete met a Merge
  EXPECT_EQ(stats.num_single_del_fallthru, 1u);          // c's met nothing
  EXPECT_EQ(stats.num_optimized_del_drop_obsolete, 2u);  // a's Delete, c's SingleDelete
  EXPECT_EQ(stats.total_input_raw_key_bytes, 6u * 9);
  EXPECT_EQ(stats.total_input_raw_value_bytes, 1u);
  CompactionIterationStats sum;
  sum.Add(stats);
  sum.Add(stats);
  EXPECT_EQ(sum.num_input_records, 12u);
}

TEST_F(CompactionIteratorTest, EndBoundAndCorruption) {
  auto entries = ParseEntries("a@3:P:1 b@2:P:2 c@1:P:3");
  {
    VectorIterator input(entries, &icmp_);
    input.SeekToFirst();
    const Slice end("c");
    CompactionIterator iter(&input, BytewiseComparator(), {}, nullptr, &end);
    int n = 0;
    for (iter.SeekToFirst(); iter.Valid(); iter.Next()) n++;
    EXPECT_EQ(n, 2);
    EXPECT_OK(iter.status());
    EXPECT_EQ(iter.stats().num_input_records, 2u);
  }
  entries.insert(entries.begin() + 1, {std::string("bad"), std::string("x")});  // < 8 bytes
  VectorIterator input(entries, &icmp_, /*sort=*/false);
  input.SeekToFirst();
  CompactionIterator iter(&input, BytewiseComparator(), {}, nullptr);
  iter.SeekToFirst();
  while (iter.Valid()) iter.Next();
  EXPECT_TRUE(iter.status().IsCorruption()) << iter.status().ToString();
}

TEST_F(CompactionIteratorTest, SnapshotsNeedNotBeSorted) {
  const Case c = {"", false, "a@9:P a@7:P a@5:P a@3:P a@1:P"};
  VectorIterator input(ParseEntries(c.input), &icmp_);
  input.SeekToFirst();
  CompactionIterator iter(&input, BytewiseComparator(), {6, 2, 2}, compaction_.get());
  EXPECT_EQ(iter.earliest_snapshot(), 2u);
  std::vector<SequenceNumber> seqs;
  for (iter.SeekToFirst(); iter.Valid(); iter.Next()) seqs.push_back(iter.ikey().sequence);
  EXPECT_EQ(seqs, (std::vector<SequenceNumber>{9, 5, 1}));
}

}  // namespace
}  // namespace shale
