// CompactionIterator: table-driven cases over a vector-backed input. Each case gives the
// live snapshots, the input entries ("key@seq:Type[:value]", Type P=Put D=Delete
// S=SingleDelete M=Merge) and the entries expected out, plus the drop counters.
//
// The Compaction used for the "bottom" checks outputs into L1 with one file at L3 holding
// keys "m".."n": keys starting with 'm' exist below the output level, others do not.
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
#include "tests/testutil/test_util.h"

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

  std::string Run(const Case& c, CompactionIterationStats* stats, Status* status) {
    VectorIterator input(ParseEntries(c.input), &icmp_);
    input.SeekToFirst();
    CompactionIterator iter(&input, BytewiseComparator(), ParseSnapshots(c.snapshots),
                            c.flush ? nullptr : compaction_.get());
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
  }
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
