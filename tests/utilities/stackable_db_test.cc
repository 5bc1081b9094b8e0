// StackableDB: every DB call made through it reaches the base DB (checked by its effects on
// a real DB), GetBaseDB / GetRootDB, a subclass that changes one call, and ownership (the
// base DB is deleted with the StackableDB).
#include "shale/utilities/stackable_db.h"

#include <gtest/gtest.h>

#include <cctype>
#include <memory>
#include <string>
#include <vector>

#include "shale/utilities/merge_operators.h"
#include "tests/testutil/db_test_base.h"

namespace shale {
namespace {

class StackableDBTest : public DBTestBase {
 protected:
  StackableDBTest() : DBTestBase("stackable_db") {
    options_.merge_operator = MergeOperators::CreateStringAppendOperator();
  }

  // Moves the fixture's open DB under a StackableDB, which then owns it.
  std::unique_ptr<StackableDB> Stack() {
    Open();
    return std::make_unique<StackableDB>(db_.release());
  }
};

std::string Read(DB* db, const std::string& key, const Snapshot* snapshot = nullptr) {
  ReadOptions ro;
  ro.snapshot = snapshot;
  std::string value;
  Status s = db->Get(ro, key, &value);
  return s.ok() ? value : s.ToString();
}

TEST_F(StackableDBTest, WritesAndPointReadsReachTheBase) {
  auto db = Stack();
  DB* base = db->GetBaseDB();
  const WriteOptions wo;
  ColumnFamilyHandle* cf = db->DefaultColumnFamily();
  EXPECT_EQ(cf, base->DefaultColumnFamily());

  ASSERT_OK(db->Put(wo, "a", "1"));
  ASSERT_OK(db->Put(wo, cf, "b", "2"));
  ASSERT_OK(db->Put(wo, "c", "3"));
  ASSERT_OK(db->Put(wo, "d", "4"));
  ASSERT_OK(db->Delete(wo, "a"));
  ASSERT_OK(db->Delete(wo, cf, "b"));
  ASSERT_OK(db->SingleDelete(wo, "c"));
  ASSERT_OK(db->Merge(wo, "d", "x"));
  ASSERT_OK(db->Merge(wo, cf, "d", "y"));
  WriteBatch batch;
  ASSERT_OK(batch.Put("e", "5"));
  ASSERT_OK(batch.SingleDelete("e"));
  ASSERT_OK(batch.Put("f", "6"));
  ASSERT_OK(db->Write(wo, &batch));
  ASSERT_OK(db->Put(wo, "g", "7"));
  ASSERT_OK(db->SingleDelete(wo, cf, "g"));

  // What the base DB holds, read from the base itself.
  EXPECT_EQ(Read(base, "a"), "NotFound: ");
  EXPECT_EQ(Read(base, "b"), "NotFound: ");
  EXPECT_EQ(Read(base, "c"), "NotFound: ");
  EXPECT_EQ(Read(base, "d"), "4,x,y");
  EXPECT_EQ(Read(base, "e"), "NotFound: ");
  EXPECT_EQ(Read(base, "f"), "6");
  EXPECT_EQ(Read(base, "g"), "NotFound: ");

  // Every read overload, through the StackableDB.
  std::string value;
  ASSERT_OK(db->Get(ReadOptions(), "f", &value));
  EXPECT_EQ(value, "6");
  ASSERT_OK(db->Get(ReadOptions(), cf, "d", &value));
  EXPECT_EQ(value, "4,x,y");
  PinnableSlice pinned;
  ASSERT_OK(db->Get(ReadOptions(), cf, "f", &pinned));
  EXPECT_EQ(pinned.ToString(), "6");
  EXPECT_TRUE(db->Get(ReadOptions(), "a", &value).IsNotFound());

  std::vector<std::string> values;
  std::vector<Status> statuses = db->MultiGet(ReadOptions(), {"d", "a"}, &values);
  ASSERT_EQ(statuses.size(), 2u);
  ASSERT_OK(statuses[0]);
  EXPECT_EQ(values[0], "4,x,y");
  EXPECT_TRUE(statuses[1].IsNotFound());
  statuses = db->MultiGet(ReadOptions(), {cf}, {"f"}, &values);
  ASSERT_OK(statuses[0]);
  EXPECT_EQ(values[0], "6");
  Slice keys[2] = {"d", "f"};
  PinnableSlice pinned_values[2];
  Status pinned_statuses[2];
  db->MultiGet(ReadOptions(), cf, 2, keys, pinned_values, pinned_statuses);
  ASSERT_OK(pinned_statuses[0]);
  ASSERT_OK(pinned_statuses[1]);
  EXPECT_EQ(pinned_values[0].ToString(), "4,x,y");
  EXPECT_EQ(pinned_values[1].ToString(), "6");

  PinnableSlice operands[3];
  GetMergeOperandsOptions gmo;
  gmo.expected_max_number_of_operands = 3;
  int n = 0;
  ASSERT_OK(db->GetMergeOperands(ReadOptions(), cf, "d", operands, &gmo, &n));
  ASSERT_EQ(n, 3);
  EXPECT_EQ(operands[0].ToString(), "4");
  EXPECT_EQ(operands[2].ToString(), "y");
}

TEST_F(StackableDBTest, IteratorsSnapshotsAndSequence) {
  auto db = Stack();
  const WriteOptions wo;
  ASSERT_OK(db->Put(wo, "a", "1"));
  const SequenceNumber before = db->GetLatestSequenceNumber();
  EXPECT_EQ(before, db->GetBaseDB()->GetLatestSequenceNumber());
  const Snapshot* snap = db->GetSnapshot();
  ASSERT_OK(db->Put(wo, "b", "2"));
  EXPECT_EQ(db->GetLatestSequenceNumber(), before + 1);
  EXPECT_EQ(Read(db.get(), "b", snap), "NotFound: ");
  EXPECT_EQ(Read(db.get(), "b"), "2");
  db->ReleaseSnapshot(snap);

  for (bool with_family : {false, true}) {
    std::unique_ptr<Iterator> it(with_family
                                     ? db->NewIterator(ReadOptions(), db->DefaultColumnFamily())
                                     : db->NewIterator(ReadOptions()));
    it->SeekToLast();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key().ToString(), "b");
    it->Prev();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->value().ToString(), "1");
    ASSERT_OK(it->status());
  }
}

TEST_F(StackableDBTest, MaintenancePropertiesAndOptions) {
  auto db = Stack();
  ASSERT_OK(db->Put(WriteOptions(), "a", "1"));
  ASSERT_OK(db->Flush(FlushOptions()));
  ASSERT_OK(db->Put(WriteOptions(), "b", "2"));
  ASSERT_OK(db->Flush(FlushOptions(), db->DefaultColumnFamily()));
  uint64_t files = 0;
  ASSERT_TRUE(db->GetIntProperty("shale.num-files-at-level0", &files));
  EXPECT_EQ(files, 2u);
  ASSERT_OK(db->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  ASSERT_OK(db->WaitForCompact(WaitForCompactOptions()));
  ASSERT_TRUE(db->GetIntProperty(db->DefaultColumnFamily(), "shale.num-files-at-level0", &files));
  EXPECT_EQ(files, 0u);
  ASSERT_OK(db->Put(WriteOptions(), "c", "3"));
  ASSERT_OK(db->Flush(FlushOptions()));
  ASSERT_OK(db->CompactRange(CompactRangeOptions(), db->DefaultColumnFamily(), nullptr, nullptr));
  std::string text;
  EXPECT_TRUE(db->GetProperty("shale.num-files-at-level0", &text));
  EXPECT_EQ(text, "0");
  EXPECT_TRUE(db->GetProperty(db->DefaultColumnFamily(), "shale.stats", &text));
  EXPECT_FALSE(db->GetProperty("shale.no-such-property", &text));

  EXPECT_EQ(db->GetName(), dbname_);
  EXPECT_EQ(db->GetEnv(), db->GetBaseDB()->GetEnv());
  ASSERT_OK(db->SetOptions({{"write_buffer_size", "1048576"}}));
  EXPECT_EQ(db->GetOptions().write_buffer_size, 1048576u);
  ASSERT_OK(db->SetOptions(db->DefaultColumnFamily(), {{"write_buffer_size", "2097152"}}));
  EXPECT_EQ(db->GetBaseDB()->GetOptions(db->DefaultColumnFamily()).write_buffer_size, 2097152u);
  EXPECT_TRUE(db->SetOptions({{"no_such_option", "1"}}).IsInvalidArgument());
  ASSERT_OK(db->SetDBOptions({{"max_background_jobs", "3"}}));
  EXPECT_EQ(db->GetDBOptions().max_background_jobs, 3);
  ASSERT_OK(db->Close());
}

// A subclass that changes one call and lets the rest through, the way StackableDB is used.
class UpperCasingDB : public StackableDB {
 public:
  UpperCasingDB(DB* db, bool* deleted) : StackableDB(db), deleted_(deleted) {}
  ~UpperCasingDB() override { *deleted_ = true; }
  using StackableDB::Put;
  Status Put(const WriteOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
             const Slice& value) override {
    std::string upper = value.ToString();
    for (char& c : upper) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
    return StackableDB::Put(options, column_family, key, upper);
  }

 private:
  bool* deleted_;
};

TEST_F(StackableDBTest, StacksAndOwnsTheBase) {
  Open();
  DB* root = db_.get();
  bool inner_deleted = false;
  auto* inner = new UpperCasingDB(db_.release(), &inner_deleted);
  {
    StackableDB outer(inner);  // owns inner, which owns root
    EXPECT_EQ(outer.GetBaseDB(), inner);
    EXPECT_EQ(outer.GetRootDB(), root);
    EXPECT_EQ(inner->GetRootDB(), root);
    ASSERT_OK(outer.Put(WriteOptions(), outer.DefaultColumnFamily(), "k", "value"));
    EXPECT_EQ(Read(root, "k"), "VALUE");
    EXPECT_FALSE(inner_deleted);
  }
  EXPECT_TRUE(inner_deleted);
  // The root DB was deleted too (it released the directory lock): the directory opens again.
  Open();
  EXPECT_EQ(Get("k"), "VALUE");
}

}  // namespace
}  // namespace shale
