// Merge operands through flush and compaction: operands with their base fold into one Put,
// operands without one are combined (PartialMerge) and reach the bottom as one Put; held
// snapshots keep reading their own values; a merge operator failing in a flush or a
// compaction puts the DB in background-error mode (writes refused, nothing lost), and the
// data reads back after reopening with a working operator. Entries are counted with
// DBImpl::TEST_KeyVersions. The randomized test prints its seed (SHALE_TEST_SEED replays).
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "db/db_impl.h"
#include "shale/db.h"
#include "shale/merge_operator.h"
#include "shale/statistics.h"
#include "shale/utilities/merge_operators.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/random.h"

namespace shale {
namespace {

uint64_t FromU64(const std::string& s) { return s.size() == 8 ? DecodeFixed64(s.data()) : ~0ull; }

// Joins with ',' like stringappend, declines every PartialMerge, and fails a full merge
// that meets the operand "bad".
class PickyAppend final : public MergeOperator {
 public:
  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    bool first = in.existing_value == nullptr;
    if (!first) out->new_value = in.existing_value->ToString();
    for (const Slice& op : in.operand_list) {
      if (op == Slice("bad")) return false;
      if (!first) out->new_value += ',';
      out->new_value.append(op.data(), op.size());
      first = false;
    }
    return true;
  }
  const char* Name() const override { return "PickyAppend"; }
};

class DBMergeCompactionTest : public DBTestBase {
 protected:
  DBMergeCompactionTest() : DBTestBase("db_merge_compaction") {
    options_.merge_operator = MergeOperators::CreateUInt64AddOperator();
    options_.disable_auto_compactions = true;
  }
  // CompactRange over everything, the bottommost level rewritten too (kForce), so operands
  // already there are folded. (The default, kIfHaveCompactionFilter, rewrites it only when
  // the family has a compaction filter, as RocksDB's.)
  Status CompactAll() {
    CompactRangeOptions o;
    o.bottommost_level_compaction = BottommostLevelCompaction::kForce;
    return db_->CompactRange(o, nullptr, nullptr);
  }

  // The types of every stored entry of key, newest first within each source: "PMM".
  std::string Types(const std::string& key) {
    std::istringstream in(static_cast<DBImpl*>(db_.get())->TEST_KeyVersions(key));
    std::string tok;
    std::string types;
    while (in >> tok) {
      while (!tok.empty() && tok.back() == ';') tok.pop_back();
      if (tok.size() >= 2 && isdigit(static_cast<unsigned char>(tok[0])) &&
          std::string("PDSM").find(tok.back()) != std::string::npos) {
        types += tok.back();
      }
    }
    return types;
  }
};

TEST_F(DBMergeCompactionTest, FlushFoldsOperandsOntoTheirBase) {
  Open();
  ASSERT_OK(db_->Put(WriteOptions(), "based", Fixed64String(100)));
  ASSERT_OK(db_->Put(WriteOptions(), "deleted", Fixed64String(7)));
  ASSERT_OK(db_->Delete(WriteOptions(), "deleted"));
  for (int i = 1; i <= 50; i++) {
    ASSERT_OK(db_->Merge(WriteOptions(), "based", Fixed64String(i)));
    ASSERT_OK(db_->Merge(WriteOptions(), "deleted", Fixed64String(i)));
    ASSERT_OK(db_->Merge(WriteOptions(), "bare", Fixed64String(i)));
  }
  EXPECT_EQ(Types("based"), std::string(50, 'M') + "P");
  ASSERT_OK(Flush());
  // A base in the memtable: one Put. No base (the flush cannot know what lies below): the
  // operands are combined into one.
  EXPECT_EQ(Types("based"), "P");
  EXPECT_EQ(Types("deleted"), "P");
  EXPECT_EQ(Types("bare"), "M");
  EXPECT_EQ(FromU64(Get("based")), 100u + 1275);
  EXPECT_EQ(FromU64(Get("deleted")), 1275u);
  EXPECT_EQ(FromU64(Get("bare")), 1275u);
}

TEST_F(DBMergeCompactionTest, ManyOperandsBecomeOnePutAtTheBottom) {
  Open();
  ASSERT_OK(db_->Put(WriteOptions(), "k0", Fixed64String(1000)));
  ASSERT_OK(Flush());
  std::map<std::string, uint64_t> expect = {{"k0", 1000}};
  for (int i = 1; i <= 3000; i++) {
    const std::string key = "k" + std::to_string(i % 7);
    ASSERT_OK(db_->Merge(WriteOptions(), key, Fixed64String(i)));
    expect[key] += i;
    if (i % 400 == 0) ASSERT_OK(Flush());
  }
  ASSERT_OK(Flush());
  EXPECT_GT(Types("k0").size(), 5u) << Types("k0");
  for (const auto& [key, sum] : expect) EXPECT_EQ(FromU64(Get(key)), sum) << key;
  ASSERT_OK(CompactAll());
  for (const auto& [key, sum] : expect) {
    EXPECT_EQ(Types(key), "P") << key;
    EXPECT_EQ(FromU64(Get(key)), sum) << key;
  }
  uint64_t keys = 0;
  ASSERT_TRUE(db_->GetIntProperty(DB::Properties::kEstimateNumKeys, &keys));
  EXPECT_EQ(keys, 7u);
  ASSERT_OK(db_->Close());
  Open();
  for (const auto& [key, sum] : expect) EXPECT_EQ(FromU64(Get(key)), sum) << key;
}

TEST_F(DBMergeCompactionTest, HeldSnapshotsKeepTheirValues) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator();
  Open();
  ASSERT_OK(db_->Put(WriteOptions(), "s", "base"));
  std::vector<const Snapshot*> snaps;
  std::vector<std::string> seen;
  std::string value = "base";
  for (int i = 0; i < 12; i++) {
    ASSERT_OK(db_->Merge(WriteOptions(), "s", std::to_string(i)));
    value += "," + std::to_string(i);
    if (i % 3 == 2) {
      snaps.push_back(db_->GetSnapshot());
      seen.push_back(value);
    }
    if (i % 4 == 3) ASSERT_OK(Flush());
  }
  ASSERT_OK(db_->Merge(WriteOptions(), "s", "last"));
  value += ",last";
  ASSERT_OK(Flush());
  ASSERT_OK(CompactAll());
  // One entry per stripe: four snapshots, so at most five entries, whatever the folding.
  const std::string types = Types("s");
  EXPECT_EQ(types.size(), 5u) << types;
  EXPECT_EQ(types.back(), 'P') << types;
  for (size_t i = 0; i < snaps.size(); i++) EXPECT_EQ(Get("s", snaps[i]), seen[i]) << i;
  EXPECT_EQ(Get("s"), value);
  for (const Snapshot* s : snaps) db_->ReleaseSnapshot(s);
  ASSERT_OK(CompactAll());
  EXPECT_EQ(Types("s"), "P");
  EXPECT_EQ(Get("s"), value);
}

// Random counters with snapshots, flushes and compactions; after the last compaction with
// no snapshot left every key is one Put.
TEST_F(DBMergeCompactionTest, RandomCountersEndAsOnePutEach) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  options_.disable_auto_compactions = false;
  options_.level0_file_num_compaction_trigger = 2;
  options_.write_buffer_size = 4 << 10;
  Open();
  std::map<std::string, uint64_t> model;
  std::vector<std::pair<const Snapshot*, std::map<std::string, uint64_t>>> snaps;
  for (int i = 0; i < 4000; i++) {
    const std::string key = "c" + std::to_string(rnd.Uniform(20));
    const uint32_t r = rnd.Uniform(100);
    if (r < 80) {
      const uint64_t add = rnd.Uniform(1000);
      ASSERT_OK(db_->Merge(WriteOptions(), key, Fixed64String(add)));
      model[key] += add;
    } else if (r < 88) {
      const uint64_t v = rnd.Uniform(1000);
      ASSERT_OK(db_->Put(WriteOptions(), key, Fixed64String(v)));
      model[key] = v;
    } else if (r < 94) {
      ASSERT_OK(db_->Delete(WriteOptions(), key));
      model.erase(key);
    } else if (r < 96 && snaps.size() < 4) {
      snaps.emplace_back(db_->GetSnapshot(), model);
    } else if (r < 98 && !snaps.empty()) {
      db_->ReleaseSnapshot(snaps.front().first);
      snaps.erase(snaps.begin());
    } else if (r < 99) {
      ASSERT_OK(Flush());
    } else {
      ASSERT_OK(CompactAll());
    }
  }
  ASSERT_OK(CompactAll());
  auto check = [&](const Snapshot* snap, const std::map<std::string, uint64_t>& m) {
    for (int k = 0; k < 20; k++) {
      const std::string key = "c" + std::to_string(k);
      auto it = m.find(key);
      const std::string got = Get(key, snap);
      if (it == m.end()) {
        EXPECT_EQ(got, "NOT_FOUND") << key;
      } else {
        EXPECT_EQ(FromU64(got), it->second) << key;
      }
    }
  };
  for (const auto& [snap, m] : snaps) check(snap, m);
  check(nullptr, model);
  for (const auto& [snap, m] : snaps) db_->ReleaseSnapshot(snap);
  ASSERT_OK(CompactAll());
  check(nullptr, model);
  for (int k = 0; k < 20; k++) {
    const std::string key = "c" + std::to_string(k);
    EXPECT_EQ(Types(key), model.count(key) > 0 ? "P" : "") << key;
  }
}

// A failing operator: the job fails with Corruption, the DB refuses writes from then on,
// other keys still read, and after reopening with an operator that works everything is
// there, the operand folded with its base.
TEST_F(DBMergeCompactionTest, FailingOperatorStopsTheDBAndLosesNothing) {
  for (const bool in_flush : {false, true}) {
    SCOPED_TRACE(in_flush ? "failing in flush" : "failing in compaction");
    ASSERT_OK(DestroyDB(dbname_, options_));
    options_.merge_operator = std::make_shared<PickyAppend>();
    options_.statistics = CreateDBStatistics();
    Open();
    ASSERT_OK(db_->Put(WriteOptions(), "k", "v"));
    ASSERT_OK(db_->Put(WriteOptions(), "other", "o"));
    if (!in_flush) ASSERT_OK(Flush());                 // the base in one file,
    ASSERT_OK(db_->Merge(WriteOptions(), "k", "bad"));  // the operand in the next
    Status s = db_->Flush(FlushOptions());
    if (!in_flush) {
      ASSERT_OK(s);
      EXPECT_EQ(Types("k"), "MP");
      s = db_->CompactRange(CompactRangeOptions(), nullptr, nullptr);
    }
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.ToString().find("PickyAppend"), std::string::npos) << s.ToString();
    EXPECT_GE(options_.statistics->getTickerCount(NUMBER_MERGE_FAILURES), 1u);
    s = db_->Put(WriteOptions(), "after", "x");
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_EQ(Get("other"), "o");
    EXPECT_EQ(Get("after"), "NOT_FOUND");
    EXPECT_TRUE(db_->Close().IsCorruption());
    db_.reset();

    options_.merge_operator = MergeOperators::CreateStringAppendOperator();
    Open();
    EXPECT_EQ(Get("k"), "v,bad");
    EXPECT_EQ(Get("other"), "o");
    ASSERT_OK(CompactAll());
    EXPECT_EQ(Types("k"), "P");
    EXPECT_EQ(Get("k"), "v,bad");
    ASSERT_OK(db_->Put(WriteOptions(), "after", "x"));
    EXPECT_EQ(Get("after"), "x");
    ASSERT_OK(db_->Close());
    db_.reset();
  }
}

}  // namespace
}  // namespace shale
