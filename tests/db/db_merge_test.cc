// Merge operators through the DB: Get folding operands across the memtable, immutable
// memtables and L0/deeper files; iterators folding in both directions; snapshots; reopen;
// ShouldMerge; max_successive_merges; failing and missing operators. GetMergeOperands has
// its own suite (db_merge_operands_test.cc).
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "shale/db.h"
#include "shale/merge_operator.h"
#include "shale/utilities/merge_operators.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"

namespace shale {
namespace {

uint64_t FromU64(const std::string& s) { return s.size() == 8 ? DecodeFixed64(s.data()) : ~0ull; }

// Appends operands with '.', counting calls and the operands/base each FullMergeV2 saw.
// ShouldMerge says stop once `stop_after` operands are gathered (0: never).
class RecordingAppend : public MergeOperator {
 public:
  explicit RecordingAppend(size_t stop_after = 0, bool partial = true)
      : stop_after_(stop_after), partial_(partial) {}
  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    calls++;
    last_num_operands = in.operand_list.size();
    last_had_base = in.existing_value != nullptr;
    if (in.existing_value != nullptr) out->new_value = in.existing_value->ToString();
    for (const Slice& op : in.operand_list) {
      if (!out->new_value.empty()) out->new_value += '.';
      out->new_value.append(op.data(), op.size());
    }
    return true;
  }
  // Non-associative pieces are fine to concatenate: "a.b" then ".c".
  bool PartialMerge(const Slice&, const Slice& l, const Slice& r, std::string* v,
                    Logger*) const override {
    if (!partial_) return false;
    *v = l.ToString() + "." + r.ToString();
    return true;
  }
  bool ShouldMerge(const std::vector<Slice>& operands) const override {
    return stop_after_ > 0 && operands.size() >= stop_after_;
  }
  const char* Name() const override { return "RecordingAppend"; }

  mutable std::atomic<int> calls{0};
  mutable std::atomic<size_t> last_num_operands{0};
  mutable std::atomic<bool> last_had_base{false};

 private:
  const size_t stop_after_;
  const bool partial_;  // false: declines PartialMerge, so flushes keep operands apart
};

// Refuses every merge.
class FailingOperator : public MergeOperator {
 public:
  bool FullMergeV2(const MergeOperationInput&, MergeOperationOutput*) const override {
    return false;
  }
  const char* Name() const override { return "FailingOperator"; }
};

class DBMergeTest : public DBTestBase {
 protected:
  DBMergeTest() : DBTestBase("db_merge") {
    options_.merge_operator = MergeOperators::CreateUInt64AddOperator();
  }

  // "k=v," for every key, forward or backward.
  std::string Scan(bool reverse, const Snapshot* snap = nullptr) {
    ReadOptions ro;
    ro.snapshot = snap;
    return Contents(ro, reverse);
  }
};

TEST_F(DBMergeTest, ThousandsOfOperandsAcrossMemtableAndFiles) {
  options_.disable_auto_compactions = true;  // keep every flush as its own L0 file
  Open();
  uint64_t expect = 0;
  for (int i = 1; i <= 4000; i++) {
    ASSERT_OK(Merge("counter", Fixed64String(i)));
    expect += i;
    if (i % 700 == 0) ASSERT_OK(Flush());
  }
  EXPECT_EQ(FromU64(Get("counter")), expect);
  uint64_t files = 0;
  ASSERT_TRUE(db_->GetIntProperty("shale.num-files-at-level0", &files));
  EXPECT_GE(files, 5u);
  EXPECT_EQ(Scan(false), "counter=" + Fixed64String(expect) + ",");
  EXPECT_EQ(Scan(true), "counter=" + Fixed64String(expect) + ",");
  // A Put beneath the operands is their base, wherever it lies.
  ASSERT_OK(db_->Put(WriteOptions(), "counter", Fixed64String(1000000)));
  for (int i = 0; i < 1500; i++) {
    ASSERT_OK(Merge("counter", Fixed64String(2)));
    if (i == 600) ASSERT_OK(Flush());
  }
  EXPECT_EQ(FromU64(Get("counter")), 1000000u + 3000u);
  // Compaction carries the operands down; the result is the same from deeper levels.
  ASSERT_OK(CompactAll());
  EXPECT_EQ(FromU64(Get("counter")), 1000000u + 3000u);
  Reopen();
  EXPECT_EQ(FromU64(Get("counter")), 1000000u + 3000u);
  EXPECT_EQ(Scan(true), "counter=" + Fixed64String(1003000) + ",");
}

TEST_F(DBMergeTest, StringAppendOverPutsAndDeletes) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator();
  Open();
  ASSERT_OK(db_->Put(WriteOptions(), "k", "a"));
  ASSERT_OK(Merge("k", "b"));
  ASSERT_OK(Flush());
  ASSERT_OK(Merge("k", "c"));
  EXPECT_EQ(Get("k"), "a,b,c");
  ASSERT_OK(db_->Delete(WriteOptions(), "k"));
  EXPECT_EQ(Get("k"), "NOT_FOUND");
  ASSERT_OK(Merge("k", "d"));  // the Delete ends the fold: no base
  EXPECT_EQ(Get("k"), "d");
  ASSERT_OK(Flush());
  ASSERT_OK(Merge("k", "e"));
  EXPECT_EQ(Get("k"), "d,e");
  // Operands in a write batch are applied in order, with the batch's own Put beneath.
  WriteBatch b;
  ASSERT_OK(b.Put("j", "x"));
  ASSERT_OK(b.Merge("j", "y"));
  ASSERT_OK(b.Merge("j", "z"));
  ASSERT_OK(db_->Write(WriteOptions(), &b));
  EXPECT_EQ(Get("j"), "x,y,z");
  EXPECT_EQ(Scan(false), "j=x,y,z,k=d,e,");
  EXPECT_EQ(Scan(true), "k=d,e,j=x,y,z,");
}

TEST_F(DBMergeTest, PartialMergeOperatorReadsAndCompaction) {
  auto op = std::make_shared<RecordingAppend>();
  options_.merge_operator = op;
  Open();
  ASSERT_OK(db_->Put(WriteOptions(), "p", "base"));
  for (int i = 0; i < 30; i++) {
    ASSERT_OK(Merge("p", std::to_string(i)));
    if (i % 10 == 9) ASSERT_OK(Flush());
  }
  std::string expect = "base";
  for (int i = 0; i < 30; i++) expect.append(".").append(std::to_string(i));
  EXPECT_EQ(Get("p"), expect);
  EXPECT_TRUE(op->last_had_base);
  ASSERT_OK(CompactAll());
  EXPECT_EQ(Get("p"), expect);
  EXPECT_EQ(Scan(true), "p=" + expect + ",");
  // The default PartialMergeMulti folds pairwise through PartialMerge.
  std::deque<Slice> ops = {"x", "y", "z"};
  std::string out;
  ASSERT_TRUE(op->PartialMergeMulti("p", ops, &out, nullptr));
  EXPECT_EQ(out, "x.y.z");
}

TEST_F(DBMergeTest, ShouldMergeStopsGetEarly) {
  auto op = std::make_shared<RecordingAppend>(/*stop_after=*/3, /*partial=*/false);
  options_.merge_operator = op;
  // A compaction would fold the operands into the base: keep the files as flushed.
  options_.disable_auto_compactions = true;
  Open();
  ASSERT_OK(db_->Put(WriteOptions(), "s", "base"));
  for (int i = 0; i < 8; i++) {
    ASSERT_OK(Merge("s", std::to_string(i)));
    if (i == 2 || i == 5) ASSERT_OK(Flush());
  }
  // Only the newest three operands, no base: the operator said they suffice.
  EXPECT_EQ(Get("s"), "5.6.7");
  EXPECT_EQ(op->last_num_operands, 3u);
  EXPECT_FALSE(op->last_had_base);
  // Fewer operands than the limit: the search reaches the base.
  ASSERT_OK(db_->Put(WriteOptions(), "t", "base"));
  ASSERT_OK(Flush());
  ASSERT_OK(Merge("t", "x"));
  EXPECT_EQ(Get("t"), "base.x");
  EXPECT_TRUE(op->last_had_base);
  // Operands that all sit in files stop early too.
  ASSERT_OK(Flush());
  EXPECT_EQ(Get("s"), "5.6.7");
  EXPECT_EQ(op->last_num_operands, 3u);
  // Iterators do not consult ShouldMerge.
  EXPECT_EQ(Scan(false), "s=base.0.1.2.3.4.5.6.7,t=base.x,");
}

TEST_F(DBMergeTest, MaxSuccessiveMergesFoldsOnWrite) {
  options_.max_successive_merges = 3;
  Open();
  const Snapshot* snap = nullptr;
  for (int i = 1; i <= 10; i++) {
    ASSERT_OK(Merge("m", Fixed64String(1)));
    if (i == 2) snap = db_->GetSnapshot();
  }
  EXPECT_EQ(FromU64(Get("m")), 10u);
  EXPECT_EQ(FromU64(Get("m", snap)), 2u);
  // Folding at the 4th and 8th writes left a Put and at most three operands above it.
  std::vector<PinnableSlice> operands(20);
  GetMergeOperandsOptions gmo;
  gmo.expected_max_number_of_operands = 20;
  int n = 0;
  ASSERT_OK(db_->GetMergeOperands(ReadOptions(), db_->DefaultColumnFamily(), "m", operands.data(),
                                  &gmo, &n));
  ASSERT_EQ(n, 3);
  EXPECT_EQ(FromU64(operands[0].ToString()), 8u);
  EXPECT_EQ(FromU64(operands[1].ToString()), 1u);
  db_->ReleaseSnapshot(snap);
  // The fold reads through files too.
  ASSERT_OK(db_->Put(WriteOptions(), "f", Fixed64String(100)));
  ASSERT_OK(Flush());
  for (int i = 0; i < 7; i++) ASSERT_OK(Merge("f", Fixed64String(1)));
  EXPECT_EQ(FromU64(Get("f")), 107u);
  ASSERT_OK(db_->GetMergeOperands(ReadOptions(), db_->DefaultColumnFamily(), "f", operands.data(),
                                  &gmo, &n));
  EXPECT_LE(n, 4);
  EXPECT_EQ(FromU64(operands[0].ToString()), 104u);
  // Operands of one batch count as they are inserted.
  WriteBatch b;
  for (int i = 0; i < 9; i++) ASSERT_OK(b.Merge("b", Fixed64String(2)));
  ASSERT_OK(db_->Write(WriteOptions(), &b));
  EXPECT_EQ(FromU64(Get("b")), 18u);
  Reopen();  // recovery replays the operands as written; the sum is the same
  EXPECT_EQ(FromU64(Get("b")), 18u);
  EXPECT_EQ(FromU64(Get("m")), 10u);
}

TEST_F(DBMergeTest, FailingOperatorIsCorruption) {
  options_.merge_operator = std::make_shared<FailingOperator>();
  Open();
  ASSERT_OK(db_->Put(WriteOptions(), "a", "1"));
  ASSERT_OK(Merge("b", "x"));
  ASSERT_OK(db_->Put(WriteOptions(), "c", "3"));
  std::string v;
  Status s = db_->Get(ReadOptions(), "b", &v);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_EQ(Get("a"), "1");  // keys without operands are unaffected
  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "a");
  it->Next();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  it->SeekToLast();
  ASSERT_TRUE(it->Valid());
  it->Prev();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  ASSERT_OK(Flush());
  s = db_->Get(ReadOptions(), "b", &v);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}

TEST_F(DBMergeTest, NoOperatorIsNotSupported) {
  options_.merge_operator = nullptr;
  Open();
  EXPECT_TRUE(Merge("k", "x").IsNotSupported());
  WriteBatch b;
  ASSERT_OK(b.Merge("k", "x"));
  ASSERT_OK(db_->Write(WriteOptions(), &b));
  std::string v;
  EXPECT_TRUE(db_->Get(ReadOptions(), "k", &v).IsNotSupported());
  ASSERT_OK(Flush());
  EXPECT_TRUE(db_->Get(ReadOptions(), "k", &v).IsNotSupported());
  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsNotSupported());
  // Reopened with an operator, the stored operand reads back.
  it.reset();
  ASSERT_OK(db_->Close());
  options_.merge_operator = MergeOperators::CreateStringAppendOperator();
  Open();
  EXPECT_EQ(Get("k"), "x");
}

TEST_F(DBMergeTest, IteratorsFoldBothWays) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator();
  Open();
  ASSERT_OK(db_->Put(WriteOptions(), "a", "A"));
  ASSERT_OK(Merge("a", "a1"));
  ASSERT_OK(Merge("b", "b1"));
  ASSERT_OK(db_->Put(WriteOptions(), "c", "C"));
  ASSERT_OK(db_->Delete(WriteOptions(), "c"));
  ASSERT_OK(Flush());
  ASSERT_OK(Merge("a", "a2"));
  ASSERT_OK(Merge("b", "b2"));
  ASSERT_OK(Merge("c", "c1"));
  ASSERT_OK(Merge("d", "d1"));
  ASSERT_OK(db_->Delete(WriteOptions(), "d"));  // operands under a Delete are gone
  ASSERT_OK(db_->Put(WriteOptions(), "e", "E"));
  // Many operands on one key: more than the iterator steps over before it seeks.
  for (int i = 0; i < 20; i++) ASSERT_OK(Merge("f", std::string(1, static_cast<char>('a' + i))));
  std::string f = "a";
  for (int i = 1; i < 20; i++) f += std::string(",") + static_cast<char>('a' + i);
  const std::string fwd = "a=A,a1,a2,b=b1,b2,c=c1,e=E,f=" + f + ",";
  const std::string bwd = "f=" + f + ",e=E,c=c1,b=b1,b2,a=A,a1,a2,";
  EXPECT_EQ(Scan(false), fwd);
  EXPECT_EQ(Scan(true), bwd);

  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
  it->Seek("b");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "b1,b2");
  it->Prev();  // from a merged entry back to a merged entry
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "a");
  EXPECT_EQ(it->value().ToString(), "A,a1,a2");
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "b");
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "c");
  EXPECT_EQ(it->value().ToString(), "c1");
  it->SeekForPrev("d");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "c");
  it->Seek("f");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), f);
  it->Next();  // the merge consumed the last entries: the end
  EXPECT_FALSE(it->Valid());
  EXPECT_OK(it->status());
  it->Seek("f");
  it->Prev();  // from a merged last key, whose entries ran to the end
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "e");
  it->SeekToLast();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), f);
  it->Next();
  EXPECT_FALSE(it->Valid());
  it.reset();
  ASSERT_OK(Flush());
  EXPECT_EQ(Scan(false), fwd);
  EXPECT_EQ(Scan(true), bwd);
}

TEST_F(DBMergeTest, SnapshotsSeeOnlyOlderOperands) {
  Open();
  ASSERT_OK(Merge("k", Fixed64String(1)));
  const Snapshot* s1 = db_->GetSnapshot();
  ASSERT_OK(Merge("k", Fixed64String(10)));
  ASSERT_OK(Flush());
  const Snapshot* s2 = db_->GetSnapshot();
  ASSERT_OK(Merge("k", Fixed64String(100)));
  ASSERT_OK(db_->Put(WriteOptions(), "j", Fixed64String(5)));
  const Snapshot* s3 = db_->GetSnapshot();
  ASSERT_OK(db_->Delete(WriteOptions(), "k"));
  ASSERT_OK(Merge("j", Fixed64String(5)));
  EXPECT_EQ(FromU64(Get("k", s1)), 1u);
  EXPECT_EQ(FromU64(Get("k", s2)), 11u);
  EXPECT_EQ(FromU64(Get("k", s3)), 111u);
  EXPECT_EQ(Get("k"), "NOT_FOUND");
  EXPECT_EQ(Get("j", s2), "NOT_FOUND");
  EXPECT_EQ(FromU64(Get("j", s3)), 5u);
  EXPECT_EQ(FromU64(Get("j")), 10u);
  EXPECT_EQ(Scan(false, s3), "j=" + Fixed64String(5) + ",k=" + Fixed64String(111) + ",");
  EXPECT_EQ(Scan(true, s2), "k=" + Fixed64String(11) + ",");
  ASSERT_OK(Flush());
  ASSERT_OK(CompactAll());
  EXPECT_EQ(FromU64(Get("k", s1)), 1u);
  EXPECT_EQ(FromU64(Get("k", s2)), 11u);
  EXPECT_EQ(Scan(true, s3), "k=" + Fixed64String(111) + ",j=" + Fixed64String(5) + ",");
  db_->ReleaseSnapshot(s1);
  db_->ReleaseSnapshot(s2);
  db_->ReleaseSnapshot(s3);
}

TEST_F(DBMergeTest, OperandsSurviveReopen) {
  Open();
  for (int i = 0; i < 50; i++) ASSERT_OK(Merge("w", Fixed64String(3)));  // WAL only
  Reopen();
  EXPECT_EQ(FromU64(Get("w")), 150u);
  ASSERT_OK(Flush());
  for (int i = 0; i < 50; i++) ASSERT_OK(Merge("w", Fixed64String(1)));
  Reopen();
  EXPECT_EQ(FromU64(Get("w")), 200u);
  EXPECT_EQ(Scan(false), "w=" + Fixed64String(200) + ",");
  // A malformed counter counts as 0, as uint64add documents.
  ASSERT_OK(Merge("w", "xyz"));
  EXPECT_EQ(FromU64(Get("w")), 200u);
}

}  // namespace
}  // namespace shale
