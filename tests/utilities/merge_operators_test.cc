// The built-in merge operators (uint64add, stringappend, max, put): their FullMergeV2 and
// PartialMerge results called directly, the name lookup tools use, and each one through a
// DB with operands spread over the memtable and a file.
#include "shale/utilities/merge_operators.h"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "shale/db.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"

namespace shale {
namespace {

// FullMergeV2 on (existing, operands), or "FAILED".
std::string Full(const MergeOperator& op, const std::string* existing,
                 const std::vector<std::string>& operands) {
  std::vector<Slice> ops(operands.begin(), operands.end());
  Slice base;
  if (existing != nullptr) base = *existing;
  std::string out;
  Slice chosen(nullptr, 0);
  MergeOperator::MergeOperationInput in("key", existing != nullptr ? &base : nullptr, ops, nullptr);
  MergeOperator::MergeOperationOutput mo(out, chosen);
  if (!op.FullMergeV2(in, &mo)) return "FAILED";
  return chosen.data() != nullptr ? chosen.ToString() : out;
}

std::string Partial(const MergeOperator& op, const std::vector<std::string>& operands) {
  std::deque<Slice> ops(operands.begin(), operands.end());
  std::string out;
  if (!op.PartialMergeMulti("key", ops, &out, nullptr)) return "FAILED";
  return out;
}

TEST(MergeOperatorsTest, UInt64Add) {
  auto op = MergeOperators::CreateUInt64AddOperator();
  EXPECT_STREQ(op->Name(), "UInt64AddOperator");
  const std::string base = Fixed64String(40);
  EXPECT_EQ(Full(*op, &base, {Fixed64String(1), Fixed64String(1)}), Fixed64String(42));
  EXPECT_EQ(Full(*op, nullptr, {Fixed64String(7)}), Fixed64String(7));
  // Wraps around like unsigned arithmetic.
  EXPECT_EQ(Full(*op, nullptr, {Fixed64String(~0ull), Fixed64String(2)}), Fixed64String(1));
  // A value or operand that is not 8 bytes counts as 0.
  const std::string bad = "abc";
  EXPECT_EQ(Full(*op, &bad, {Fixed64String(5)}), Fixed64String(5));
  EXPECT_EQ(Full(*op, &base, {"x", Fixed64String(2)}), Fixed64String(42));
  EXPECT_EQ(Partial(*op, {Fixed64String(3), Fixed64String(4), Fixed64String(5)}),
            Fixed64String(12));
}

TEST(MergeOperatorsTest, StringAppend) {
  auto op = MergeOperators::CreateStringAppendOperator();
  EXPECT_STREQ(op->Name(), "StringAppendOperator");
  const std::string base = "a";
  EXPECT_EQ(Full(*op, &base, {"b", "c"}), "a,b,c");
  EXPECT_EQ(Full(*op, nullptr, {"b"}), "b");
  EXPECT_EQ(Full(*op, nullptr, {"b", "", "c"}), "b,,c");
  const std::string empty;
  EXPECT_EQ(Full(*op, &empty, {"x"}), ",x");
  EXPECT_EQ(Partial(*op, {"x", "y"}), "x,y");
  auto dash = MergeOperators::CreateStringAppendOperator('-');
  EXPECT_EQ(Full(*dash, &base, {"b"}), "a-b");
  auto word = MergeOperators::CreateStringAppendOperator(std::string(" and "));
  EXPECT_EQ(Full(*word, &base, {"b", "c"}), "a and b and c");
}

TEST(MergeOperatorsTest, MaxAndPut) {
  auto max = MergeOperators::CreateMaxOperator();
  EXPECT_STREQ(max->Name(), "MaxOperator");
  const std::string base = "m";
  EXPECT_EQ(Full(*max, &base, {"a", "z", "q"}), "z");
  EXPECT_EQ(Full(*max, &base, {"a", "b"}), "m");
  EXPECT_EQ(Full(*max, nullptr, {"b", "ba"}), "ba");
  EXPECT_EQ(Partial(*max, {"c", "x", "b"}), "x");
  auto put = MergeOperators::CreatePutOperator();
  EXPECT_STREQ(put->Name(), "PutOperator");
  EXPECT_EQ(Full(*put, &base, {"1", "2", "3"}), "3");
  EXPECT_EQ(Partial(*put, {"1", "2"}), "2");
}

TEST(MergeOperatorsTest, LookupByName) {
  for (const char* name : {"uint64add", "UInt64AddOperator"}) {
    auto op = MergeOperators::CreateFromStringId(name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_STREQ(op->Name(), "UInt64AddOperator");
  }
  EXPECT_STREQ(MergeOperators::CreateFromStringId("stringappend")->Name(), "StringAppendOperator");
  EXPECT_STREQ(MergeOperators::CreateFromStringId("max")->Name(), "MaxOperator");
  EXPECT_STREQ(MergeOperators::CreateFromStringId("put")->Name(), "PutOperator");
  EXPECT_EQ(MergeOperators::CreateFromStringId(""), nullptr);
  EXPECT_EQ(MergeOperators::CreateFromStringId("nosuch"), nullptr);
}

// Each operator through a DB: a base, operands before and after a flush, a reopen.
TEST(MergeOperatorsTest, ThroughTheDB) {
  struct Case {
    const char* name;
    std::string base;
    std::vector<std::string> operands;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"uint64add",
       Fixed64String(100),
       {Fixed64String(1), Fixed64String(2), Fixed64String(3)},
       Fixed64String(106)},
      {"stringappend", "x", {"a", "b", "c"}, "x,a,b,c"},
      {"max", "k", {"c", "r", "d"}, "r"},
      {"put", "old", {"v1", "v2", "v3"}, "v3"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDirectory dir("merge_operators");
    Options options;
    options.create_if_missing = true;
    options.merge_operator = MergeOperators::CreateFromStringId(c.name);
    std::unique_ptr<DB> db;
    ASSERT_OK(DB::Open(options, dir.path() + "/db", &db));
    ASSERT_OK(db->Put(WriteOptions(), "key", c.base));
    ASSERT_OK(db->Merge(WriteOptions(), "key", c.operands[0]));
    ASSERT_OK(db->Flush(FlushOptions()));
    for (size_t i = 1; i < c.operands.size(); i++) {
      ASSERT_OK(db->Merge(WriteOptions(), "key", c.operands[i]));
    }
    std::string v;
    ASSERT_OK(db->Get(ReadOptions(), "key", &v));
    EXPECT_EQ(v, c.expect);
    ASSERT_OK(db->Close());
    ASSERT_OK(DB::Open(options, dir.path() + "/db", &db));
    ASSERT_OK(db->Get(ReadOptions(), "key", &v));
    EXPECT_EQ(v, c.expect);
    std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions()));
    it->SeekToLast();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->value().ToString(), c.expect);
    it.reset();
    ASSERT_OK(db->Close());
  }
}

}  // namespace
}  // namespace shale
