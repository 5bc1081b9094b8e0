// CompactionIterator: table-driven cases over a vector-backed input. Each case gives the
// live snapshots, the input entries ("key@seq:Type[:value]", Type P=Put D=Delete
// S=SingleDelete M=Merge) and the entries expected out, plus the drop counters.
//
// The Compaction used for the "bottom" checks outputs into L1 with one file at L3 holding
// keys "m".."n": keys starting with 'm' exist below the output level, others do not.
//
// Merge cases run with a merge operator of their own (see MergeCase); every counter in
// them is also checked to account for each input entry exactly once.
#include "db/compaction_iterator.h"

#include <gtest/gtest.h>

#include <algorithm>
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
#include "tests/testutil/test_util.h"
#include "util/random.h"

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

struct Case {
  const char* snapshots;
  bool flush;  // no Compaction: nothing is known about the levels below
  const char* input;
  const char* expected;
  uint64_t hidden;
  uint64_t obsolete;
};

// clang-format off
const Case kCases[] = {
  // Snapshot stripes: the newest entry of each stripe survives.
  {"",      false, "a@5:P:v5 a@3:P:v3",                 "a@5:P:v5",                 1, 0},
  {"4",     false, "a@5:P:v5 a@3:P:v3 a@2:P:v2",        "a@5:P:v5 a@3:P:v3",        1, 0},
  {"3 4",   false, "a@5:P a@4:P a@3:P a@2:P",           "a@5:P a@4:P a@3:P",        1, 0},
  {"4 4",   false, "a@5:P a@4:P a@3:P",                 "a@5:P a@4:P",              1, 0},
  {"10",    false, "a@5:P b@4:P b@3:P c@2:P",           "a@5:P b@4:P c@2:P",        1, 0},
  // A Delete in the earliest stripe with nothing below the output level goes, and takes
  // the older entries with it.
  {"",      false, "a@5:D a@3:P",                       "",                         1, 1},
  {"6",     false, "a@5:D a@3:P",                       "",                         1, 1},
  {"",      false, "a@5:P a@4:D a@3:P",                 "a@5:P",                    2, 0},
  // ... but not above a snapshot, nor when a deeper level holds the key.
  {"4",     false, "a@5:D a@3:P",                       "a@5:D a@3:P",              0, 0},
  {"",      false, "m@5:D m@3:P",                       "m@5:D",                    1, 0},
  {"",      true,  "a@5:D a@3:P",                       "a@5:D",                    1, 0},
  // SingleDelete meeting its Put in the same stripe: both go (even in a flush).
  {"",      false, "a@5:S a@3:P",                       "",                         1, 1},
  {"",      true,  "a@5:S a@3:P",                       "",                         1, 1},
  {"",      false, "m@5:S m@3:P m@2:P",                 "",                         2, 1},
  // ... separated by a snapshot: both stay.
  {"4",     false, "a@5:S a@3:P",                       "a@5:S a@3:P",              0, 0},
  {"4",     false, "m@5:S m@3:P",                       "m@5:S m@3:P",              0, 0},
  // ... meeting nothing: dropped only where nothing lies below.
  {"",      false, "a@5:S b@3:P",                       "b@3:P",                    0, 1},
  {"",      false, "m@5:S",                             "m@5:S",                    0, 0},
  {"",      true,  "a@5:S",                             "a@5:S",                    0, 0},
  {"2",     false, "a@5:S",                             "a@5:S",                    0, 0},
  // Two SingleDeletes in a row: the first goes, the second meets the Put.
  {"",      false, "m@6:S m@5:S m@3:P",                 "",                         1, 2},
  // A newer Put hides a SingleDelete from readers, but the SingleDelete is still judged
  // on its own: it cancels its Put here...
  {"",      false, "m@6:P m@5:S m@3:P",                 "m@6:P",                    1, 1},
  // ... and stays when its Put is in an older stripe, since a later SingleDelete may
  // cancel the Put above it (history P S P S, snapshots at 400, 424, then 634).
  {"400 424 438", false, "a@582:P a@486:S a@361:P",     "a@582:P a@486:S a@361:P",  0, 0},
  {"400 424 634", false, "a@812:P a@621:S a@582:P a@486:S a@361:P",
                                                        "a@812:P a@486:S a@361:P",  1, 1},
  // Merge operands pass through and do not hide what is below them.
  {"",      false, "a@5:M:x a@4:M:y a@3:P:v a@2:P:w",   "a@5:M:x a@4:M:y a@3:P:v",  1, 0},
  {"",      true,  "m@5:M:x m@3:P:v",                   "m@5:M:x m@3:P:v",          0, 0},
  {"",      false, "a@5:M:x a@4:D a@3:P",               "a@5:M:x",                  1, 1},
  {"",      false, "m@5:M:x m@4:D m@3:P",               "m@5:M:x m@4:D",            1, 0},
  {"",      false, "m@5:M:x m@4:S m@3:P",               "m@5:M:x",                  1, 1},
  {"",      false, "a@5:P a@4:M:x",                     "a@5:P",                    1, 0},
  {"4",     false, "a@6:M:x a@5:P a@3:M:y a@2:P",       "a@6:M:x a@5:P a@3:M:y a@2:P", 0, 0},
};
// clang-format on

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
// first), folding operands as AppendOperator does; "(none)" when nothing is there.
std::string ReadAt(const std::string& entries, SequenceNumber at) {
  std::vector<std::string> operands;  // newest first
  std::string base = "(none)";
  bool has_base = false;
  for (const auto& [ikey, value] : ParseEntries(entries)) {
    ParsedInternalKey ik;
    EXPECT_OK(ParseInternalKey(ikey, &ik));
    if (ik.sequence > at) continue;
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

struct MergeCase {
  char op;  // A: AppendOperator, F: FullOnlyAppendOperator, X: FailingOperator
  const char* snapshots;
  bool flush;
  const char* input;
  const char* expected;
  uint64_t hidden;
  uint64_t obsolete;
  uint64_t merged;  // num_record_drop_merged
};

// clang-format off
const MergeCase kMergeCases[] = {
  // Operands and the Put beneath them in one stripe fold into one Put at the newest
  // operand's sequence; the Put is consumed and hides the rest of the stripe.
  {'A', "",    false, "a@5:M:x a@4:M:y a@3:P:v a@2:P:w",   "a@5:P:v,y,x",          1, 0, 2},
  {'A', "",    false, "m@5:M:x m@4:M:y m@3:P:v",           "m@5:P:v,y,x",          0, 0, 2},
  {'A', "",    true,  "m@5:M:x m@3:P:v",                   "m@5:P:v,x",            0, 0, 1},
  {'F', "",    false, "m@5:M:x m@4:M:y m@3:P:v",           "m@5:P:v,y,x",          0, 0, 2},
  // A Delete beneath: folded onto no value, the Delete consumed.
  {'A', "",    false, "m@5:M:x m@4:D m@3:P",               "m@5:P:x",              1, 0, 1},
  {'A', "",    true,  "a@5:M:x a@4:M:y a@3:D",             "a@5:P:y,x",            0, 0, 2},
  // No base in the inputs: folded onto no value only where no level below holds the key.
  {'A', "",    false, "a@5:M:x a@4:M:y",                   "a@5:P:y,x",            0, 0, 1},
  {'F', "",    false, "a@5:M:x",                           "a@5:P:x",              0, 0, 0},
  // ... else (older data may exist below, or a flush) only combined with each other ...
  {'A', "",    false, "m@5:M:x m@4:M:y m@3:M:z",           "m@5:M:z,y,x",          0, 0, 2},
  {'A', "",    true,  "a@5:M:x a@4:M:y",                   "a@5:M:y,x",            0, 0, 1},
  {'A', "",    false, "m@5:M:x",                           "m@5:M:x",              0, 0, 0},
  // ... or kept apart when the operator declines (or even fails full merges: unused here).
  {'F', "",    false, "m@5:M:x m@4:M:y",                   "m@5:M:x m@4:M:y",      0, 0, 0},
  {'X', "",    true,  "a@5:M:x a@4:M:y",                   "a@5:M:x a@4:M:y",      0, 0, 0},
  {'F', "",    false, "m@5:M:x m@4:M:y b@3:M:z",           "b@3:P:z m@5:M:x m@4:M:y", 0, 0, 0},
  // Never across a snapshot: each stripe is resolved on its own.
  {'A', "4",   false, "a@6:M:x a@5:M:y a@3:M:z a@2:P:v",   "a@6:M:y,x a@3:P:v,z",  0, 0, 2},
  {'A', "4",   false, "a@6:M:x a@5:P:v a@3:M:y a@2:P:w",   "a@6:P:v,x a@3:P:w,y",  0, 0, 2},
  {'A', "5",   false, "a@6:M:x a@5:M:y",                   "a@6:M:x a@5:P:y",      0, 0, 0},
  {'A', "2 4", false, "a@6:M:a a@5:M:b a@4:M:c a@3:M:d a@2:M:e a@1:P:v",
                                                          "a@6:M:b,a a@4:M:d,c a@2:P:v,e", 0, 0, 3},
  {'A', "4",   false, "m@6:M:x m@3:D m@2:P",               "m@6:M:x m@3:D",        1, 0, 0},
  {'A', "5",   false, "a@6:M:x a@4:M:y a@3:D",             "a@6:M:x a@4:P:y",      0, 0, 1},
  // A SingleDelete beneath: folded onto no value, and the SingleDelete is then judged on
  // its own (cancelling its Put of the same stripe, kept above an older stripe's Put,
  // dropped with nothing beneath only where nothing lies below the output).
  {'A', "",    false, "m@5:M:x m@4:S m@3:P",               "m@5:P:x",              1, 1, 0},
  {'A', "",    false, "m@6:M:x m@5:M:y m@4:S m@3:P m@2:P", "m@6:P:y,x",            2, 1, 1},
  {'A', "4",   false, "m@6:M:x m@5:S m@3:P:v",             "m@6:P:x m@5:S m@3:P:v", 0, 0, 0},
  {'A', "",    false, "a@5:M:x a@4:S",                     "a@5:P:x",              0, 1, 0},
  {'A', "",    true,  "a@5:M:x a@4:S",                     "a@5:P:x a@4:S",        0, 0, 0},
  {'A', "",    false, "m@5:M:x m@4:S",                     "m@5:P:x m@4:S",        0, 0, 0},
  // Operands under a newer Put of their stripe are hidden as before.
  {'A', "",    false, "a@6:P:v a@5:M:x a@4:P:w",           "a@6:P:v",              2, 0, 0},
};
// clang-format on

class CompactionIteratorTest : public ::testing::Test {
 protected:
  CompactionIteratorTest() : dir_("compaction_iterator_test"), icmp_(BytewiseComparator()) {
    options_.num_levels = 4;
    table_cache_ = std::make_unique<TableCache>(dir_.path(), options_, &icmp_, -1);
    vset_ = std::make_unique<VersionSet>(dir_.path(), &options_, table_cache_.get(), &icmp_);
    VersionEdit edit;
    edit.AddFile(1, Meta(10, "a", "z"));
    edit.AddFile(3, Meta(11, "m", "n"));
    MutexLock l(&mu_);
    EXPECT_OK(vset_->LogAndApply(&edit, &mu_));
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
                  const MergeOperator* merge_operator = nullptr, Statistics* statistics = nullptr) {
    VectorIterator input(ParseEntries(c.input), &icmp_);
    input.SeekToFirst();
    CompactionIterator iter(&input, BytewiseComparator(), ParseSnapshots(c.snapshots),
                            c.flush ? nullptr : compaction_.get(), nullptr, merge_operator, nullptr,
                            statistics);
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
  for (const Case& c : kCases) {
    SCOPED_TRACE(std::string("snapshots [") + c.snapshots + "] " + (c.flush ? "flush " : "") +
                 "input: " + c.input);
    CompactionIterationStats stats;
    Status s;
    EXPECT_EQ(Run(c, &stats, &s), c.expected);
    EXPECT_OK(s);
    EXPECT_EQ(stats.num_record_drop_hidden, c.hidden);
    EXPECT_EQ(stats.num_record_drop_obsolete, c.obsolete);
    const uint64_t in = ParseEntries(c.input).size();
    EXPECT_EQ(stats.num_input_records, in);
    EXPECT_EQ(stats.num_output_records, ParseEntries(c.expected).size());
    // Every input is either written or dropped for exactly one counted reason (a
    // SingleDelete and the Put it cancels count once hidden, once obsolete).
    EXPECT_EQ(
        stats.num_output_records + stats.num_record_drop_hidden + stats.num_record_drop_obsolete,
        in);
    EXPECT_EQ(stats.num_record_drop_merged, 0u);
  }
}

TEST_F(CompactionIteratorTest, MergeTable) {
  for (const MergeCase& m : kMergeCases) {
    SCOPED_TRACE(std::string("operator ") + m.op + " snapshots [" + m.snapshots + "] " +
                 (m.flush ? "flush " : "") + "input: " + m.input);
    const Case c = {m.snapshots, m.flush, m.input, m.expected, m.hidden, m.obsolete};
    CompactionIterationStats stats;
    Status s;
    EXPECT_EQ(Run(c, &stats, &s, OperatorFor(m.op)), m.expected);
    EXPECT_OK(s);
    EXPECT_EQ(stats.num_record_drop_hidden, m.hidden);
    EXPECT_EQ(stats.num_record_drop_obsolete, m.obsolete);
    EXPECT_EQ(stats.num_record_drop_merged, m.merged);
    EXPECT_EQ(stats.num_merge_failures, 0u);
    const uint64_t in = ParseEntries(m.input).size();
    EXPECT_EQ(stats.num_input_records, in);
    EXPECT_EQ(stats.num_output_records, ParseEntries(m.expected).size());
    EXPECT_EQ(stats.num_output_records + stats.num_record_drop_hidden +
                  stats.num_record_drop_obsolete + stats.num_record_drop_merged,
              in);
  }
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
      const SequenceNumber seq = 20 - i * 2;
      const uint32_t r = rnd.Uniform(10);
      const char type = r < 6 ? 'M' : r < 8 ? 'P' : 'D';
      input += "a@" + std::to_string(seq) + ":" + type;
      if (type != 'D') input += ":" + std::string(1, static_cast<char>('a' + i));
      input += ' ';
    }
    std::string snaps;
    for (SequenceNumber s = 3; s < 21; s += 2) {
      if (rnd.OneIn(4)) snaps += std::to_string(s) + " ";
    }
    SCOPED_TRACE("snapshots [" + snaps + "] input: " + input);
    const bool flush = rnd.OneIn(2);
    const Case c = {snaps.c_str(), flush, input.c_str(), "", 0, 0};
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

TEST_F(CompactionIteratorTest, FailingMergeOperatorStopsWithCorruption) {
  const FailingOperator op;
  std::shared_ptr<Statistics> statistics = CreateDBStatistics();
  for (const char* input : {"a@5:M:x a@4:P:v", "b@6:P:w m@5:M:x m@4:D", "a@5:M:x a@4:S"}) {
    SCOPED_TRACE(input);
    const Case c = {"", false, input, "", 0, 0};
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
  const Case c = {"", false, "a@9:D a@8:P b@7:S b@6:M:x c@5:S d@4:P", "d@4:P", 0, 0};
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
  const Case c = {"", false, "a@9:P a@7:P a@5:P a@3:P a@1:P", "", 0, 0};
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
