// DB::GetMergeOperands: the operands in insertion order (with the base value first),
// Incomplete with the count when the caller's array is too small, snapshots, and the
// pinned slices of large operands staying valid and unchanged across later writes, flushes
// and compactions until Reset() (AddressSanitizer catches a slice left dangling).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "shale/cache.h"
#include "shale/db.h"
#include "shale/table.h"
#include "shale/utilities/merge_operators.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

// Joins with ',' like stringappend but declines PartialMerge, so flushes and compactions
// keep the operands apart and GetMergeOperands sees each one.
class AppendNoPartial : public MergeOperator {
 public:
  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    bool first = in.existing_value == nullptr;
    if (!first) out->new_value = in.existing_value->ToString();
    for (const Slice& op : in.operand_list) {
      if (!first) out->new_value += ',';
      out->new_value.append(op.data(), op.size());
      first = false;
    }
    return true;
  }
  const char* Name() const override { return "AppendNoPartial"; }
};

class DBMergeOperandsTest : public DBTestBase, public testing::WithParamInterface<bool> {
 protected:
  DBMergeOperandsTest() : DBTestBase("db_merge_operands") {
    options_.merge_operator = std::make_shared<AppendNoPartial>();
    options_.disable_auto_compactions = true;
    BlockBasedTableOptions t;
    if (GetParam()) {
      t.block_cache = NewLRUCache(1 << 20);  // small: later reads evict the pinned blocks
    } else {
      t.no_block_cache = true;  // pins own their uncached blocks
    }
    options_.table_factory.reset(NewBlockBasedTableFactory(t));
  }
  void SetUp() override { Open(); }

  Status Operands(const std::string& key, std::vector<PinnableSlice>* out, int max, int* n,
                  const Snapshot* snap = nullptr) {
    out->clear();
    out->resize(std::max(max, 1));
    GetMergeOperandsOptions gmo;
    gmo.expected_max_number_of_operands = max;
    ReadOptions ro;
    ro.snapshot = snap;
    return db_->GetMergeOperands(ro, db_->DefaultColumnFamily(), key, out->data(), &gmo, n);
  }
  static std::vector<std::string> Strings(const std::vector<PinnableSlice>& v, int n) {
    std::vector<std::string> r;
    for (int i = 0; i < n; i++) r.push_back(v[i].ToString());
    return r;
  }
};

TEST_P(DBMergeOperandsTest, OrderIncompleteAndNotFound) {
  const WriteOptions wo;
  ASSERT_OK(db_->Merge(wo, "k", "1"));
  ASSERT_OK(db_->Merge(wo, "k", "2"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_OK(db_->Merge(wo, "k", "3"));
  ASSERT_OK(db_->Merge(wo, "k", "4"));
  std::vector<PinnableSlice> ops;
  int n = -1;
  ASSERT_OK(Operands("k", &ops, 10, &n));
  EXPECT_EQ(Strings(ops, n), (std::vector<std::string>{"1", "2", "3", "4"}));
  ASSERT_OK(Operands("k", &ops, 10, &n, snap));
  EXPECT_EQ(Strings(ops, n), (std::vector<std::string>{"1", "2"}));
  db_->ReleaseSnapshot(snap);

  Status s = Operands("k", &ops, 3, &n);
  EXPECT_TRUE(s.IsIncomplete()) << s.ToString();
  EXPECT_EQ(n, 4);
  s = Operands("k", &ops, 0, &n);
  EXPECT_TRUE(s.IsIncomplete()) << s.ToString();
  EXPECT_EQ(n, 4);
  // No slots at all: counting only; slots promised but missing: an error, not a crash.
  GetMergeOperandsOptions gmo;
  gmo.expected_max_number_of_operands = 0;
  n = -1;
  s = db_->GetMergeOperands(ReadOptions(), db_->DefaultColumnFamily(), "k", nullptr, &gmo, &n);
  EXPECT_TRUE(s.IsIncomplete()) << s.ToString();
  EXPECT_EQ(n, 4);
  gmo.expected_max_number_of_operands = 5;
  s = db_->GetMergeOperands(ReadOptions(), db_->DefaultColumnFamily(), "k", nullptr, &gmo, &n);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();

  // A Put beneath the operands comes first; a Delete ends them.
  ASSERT_OK(db_->Put(wo, "p", "base"));
  ASSERT_OK(db_->Merge(wo, "p", "x"));
  ASSERT_OK(Operands("p", &ops, 5, &n));
  EXPECT_EQ(Strings(ops, n), (std::vector<std::string>{"base", "x"}));
  ASSERT_OK(db_->Delete(wo, "p"));
  EXPECT_TRUE(Operands("p", &ops, 5, &n).IsNotFound());
  EXPECT_EQ(n, 0);
  ASSERT_OK(db_->Merge(wo, "p", "y"));
  ASSERT_OK(Operands("p", &ops, 5, &n));
  EXPECT_EQ(Strings(ops, n), (std::vector<std::string>{"y"}));
  ASSERT_OK(db_->Put(wo, "plain", "v"));
  ASSERT_OK(Operands("plain", &ops, 5, &n));
  EXPECT_EQ(Strings(ops, n), (std::vector<std::string>{"v"}));
  EXPECT_TRUE(Operands("absent", &ops, 5, &n).IsNotFound());
  // Small operands are copies.
  ASSERT_OK(Operands("k", &ops, 10, &n));
  EXPECT_FALSE(ops[0].IsPinned());
}

TEST_P(DBMergeOperandsTest, LargeOperandsStayPinnedUntilReset) {
  const WriteOptions wo;
  // 150 operands of 400 bytes: past both thresholds. Half go to a file, half stay in the
  // memtable.
  std::vector<std::string> expect;
  for (int i = 0; i < 150; i++) {
    std::string v(400, static_cast<char>('a' + i % 26));
    v.replace(0, std::to_string(i).size(), std::to_string(i));
    expect.push_back(v);
    ASSERT_OK(db_->Merge(wo, "big", v));
    if (i == 74) {
      ASSERT_OK(db_->Flush(FlushOptions()));
    }
  }
  std::vector<PinnableSlice> ops;
  int n = 0;
  ASSERT_OK(Operands("big", &ops, 200, &n));
  ASSERT_EQ(n, 150);
  for (int i = 0; i < n; i++) {
    EXPECT_TRUE(ops[i].IsPinned()) << i;
    ASSERT_EQ(ops[i].ToString(), expect[i]) << i;
  }
  // Overwrite, flush (the memtable the slices point into is released by the DB), compact
  // (the file they point into is deleted), and churn the block cache.
  ASSERT_OK(db_->Delete(wo, "big"));
  for (int i = 0; i < 2000; i++) {
    ASSERT_OK(db_->Put(wo, "filler" + std::to_string(i), std::string(500, 'z')));
  }
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  std::string v;
  for (int i = 0; i < 2000; i += 7)
    ASSERT_OK(db_->Get(ReadOptions(), "filler" + std::to_string(i), &v));
  EXPECT_TRUE(db_->Get(ReadOptions(), "big", &v).IsNotFound());
  for (int i = 0; i < n; i++) ASSERT_EQ(ops[i].ToString(), expect[i]) << i;
  for (int i = 0; i < n; i += 2) ops[i].Reset();  // release half now, the rest at the end
  ASSERT_OK(db_->Put(wo, "after", "x"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  for (int i = 1; i < n; i += 2) ASSERT_EQ(ops[i].ToString(), expect[i]) << i;
  ops.clear();
}

INSTANTIATE_TEST_SUITE_P(BlockCache, DBMergeOperandsTest, testing::Values(true, false),
                         [](const testing::TestParamInfo<bool>& i) {
                           return i.param ? "WithCache" : "NoCache";
                         });

}  // namespace
}  // namespace shale
