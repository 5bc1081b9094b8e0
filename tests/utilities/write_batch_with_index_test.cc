// WriteBatchWithIndex: the index iterator, GetFromBatch, GetFromBatchAndDB with merges
// across batch and DB, the iterator over a real DB (deletes, bounds, both directions),
// save points, and a randomized comparison against a model (std::map) with and without
// overwrite_key. Column families: write_batch_with_index_column_family_test.cc.
#include "shale/utilities/write_batch_with_index.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "db/write_batch_internal.h"
#include "shale/db.h"
#include "shale/utilities/merge_operators.h"
#include "shale/utilities/stackable_db.h"
#include "tests/testutil/db_test_base.h"
#include "tests/utilities/iterator_walk.h"

namespace shale {
namespace {

const char* TypeName(WriteType t) {
  switch (t) {
    case kPutRecord: return "Put";
    case kMergeRecord: return "Merge";
    case kDeleteRecord: return "Delete";
    case kSingleDeleteRecord: return "SingleDelete";
    case kLogDataRecord: return "LogData";
    case kUnknownRecord: break;
  }
  return "Unknown";
}

std::string Describe(const WriteEntry& e) {
  std::string s = std::string(TypeName(e.type)) + "(" + e.key.ToString();
  if (e.type == kPutRecord || e.type == kMergeRecord) s += "," + e.value.ToString();
  return s + ")";
}

// The index as "Type(key[,value]) ...", forward; the backward walk must be its mirror.
std::string IndexContents(WriteBatchWithIndex* b) {
  std::unique_ptr<WBWIIterator> it(b->NewIterator());
  std::vector<std::string> forward, backward;
  for (it->SeekToFirst(); it->Valid(); it->Next()) forward.push_back(Describe(it->Entry()));
  for (it->SeekToLast(); it->Valid(); it->Prev()) backward.push_back(Describe(it->Entry()));
  EXPECT_OK(it->status());
  EXPECT_EQ(std::vector<std::string>(backward.rbegin(), backward.rend()), forward);
  std::string out;
  for (const auto& e : forward) out += (out.empty() ? "" : " ") + e;
  return out;
}

TEST(WriteBatchWithIndexTest, IndexKeepsEveryRecordSorted) {
  WriteBatchWithIndex b;
  ASSERT_OK(b.Put("b", "1"));
  ASSERT_OK(b.Merge("a", "m"));
  ASSERT_OK(b.PutLogData("blob"));
  ASSERT_OK(b.Delete("c"));
  ASSERT_OK(b.Put("b", "2"));
  ASSERT_OK(b.SingleDelete("d"));
  EXPECT_EQ(IndexContents(&b), "Merge(a,m) Put(b,1) Put(b,2) Delete(c) SingleDelete(d)");
  EXPECT_EQ(b.GetWriteBatch()->Count(), 5u);
  EXPECT_EQ(b.GetDataSize(), b.GetWriteBatch()->GetDataSize());

  std::unique_ptr<WBWIIterator> it(b.NewIterator());
  it->Seek("b");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->Entry().value.ToString(), "1");  // the first record of b
  it->SeekForPrev("b");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->Entry().value.ToString(), "2");  // the last record of b
  it->Seek("bb");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->Entry().key.ToString(), "c");
  EXPECT_EQ(it->Entry().type, kDeleteRecord);
  it->Seek("e");
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev("0");
  EXPECT_FALSE(it->Valid());

  b.Clear();
  EXPECT_EQ(IndexContents(&b), "");
  EXPECT_EQ(b.GetWriteBatch()->Count(), 0u);
}

TEST(WriteBatchWithIndexTest, OverwriteKeyKeepsOneRecordPerKey) {
  WriteBatchWithIndex b(BytewiseComparator(), 0, true);
  ASSERT_OK(b.Put("a", "1"));
  ASSERT_OK(b.Put("a", "2"));
  ASSERT_OK(b.Delete("b"));
  ASSERT_OK(b.Put("b", "3"));
  ASSERT_OK(b.Put("c", "4"));
  ASSERT_OK(b.SingleDelete("c"));
  EXPECT_EQ(IndexContents(&b), "Put(a,2) Put(b,3) SingleDelete(c)");
  // Merge operands pile up; a later Put replaces the newest of them.
  ASSERT_OK(b.Merge("a", "x"));
  ASSERT_OK(b.Merge("a", "y"));
  EXPECT_EQ(IndexContents(&b), "Put(a,2) Merge(a,x) Merge(a,y) Put(b,3) SingleDelete(c)");
  ASSERT_OK(b.Put("a", "z"));
  EXPECT_EQ(IndexContents(&b), "Put(a,2) Merge(a,x) Put(a,z) Put(b,3) SingleDelete(c)");
  std::string value;
  ASSERT_OK(b.GetFromBatch(DBOptions(), "a", &value));
  EXPECT_EQ(value, "z");
  EXPECT_EQ(b.GetWriteBatch()->Count(), 9u);  // the batch keeps every record
}

TEST(WriteBatchWithIndexTest, GetFromBatch) {
  WriteBatchWithIndex b;
  std::string value;
  EXPECT_TRUE(b.GetFromBatch(DBOptions(), "a", &value).IsNotFound());
  ASSERT_OK(b.Put("a", "1"));
  ASSERT_OK(b.Put("a", "2"));
  ASSERT_OK(b.GetFromBatch(DBOptions(), "a", &value));
  EXPECT_EQ(value, "2");
  ASSERT_OK(b.Delete("a"));
  EXPECT_TRUE(b.GetFromBatch(DBOptions(), "a", &value).IsNotFound());
  ASSERT_OK(b.Put("a", "3"));
  ASSERT_OK(b.GetFromBatch(nullptr, DBOptions(), "a", &value));
  EXPECT_EQ(value, "3");
  ASSERT_OK(b.SingleDelete("a"));
  EXPECT_TRUE(b.GetFromBatch(DBOptions(), "a", &value).IsNotFound());
  // No merge operator in reach: operands give MergeInProgress, on a value or not.
  ASSERT_OK(b.Merge("m", "x"));
  EXPECT_TRUE(b.GetFromBatch(DBOptions(), "m", &value).IsMergeInProgress());
  ASSERT_OK(b.Put("p", "v"));
  ASSERT_OK(b.Merge("p", "x"));
  EXPECT_TRUE(b.GetFromBatch(DBOptions(), "p", &value).IsMergeInProgress());
  EXPECT_TRUE(b.GetFromBatch(DBOptions(), "n", &value).IsNotFound());
}

TEST(WriteBatchWithIndexTest, GetFromBatchAndDBNeedsADB) {
  WriteBatchWithIndex b;
  std::string value;
  EXPECT_TRUE(b.GetFromBatchAndDB(nullptr, ReadOptions(), "a", &value).IsInvalidArgument());
}

TEST(WriteBatchWithIndexTest, SavePoints) {
  for (bool overwrite : {false, true}) {
    SCOPED_TRACE(overwrite ? "overwrite_key" : "every record");
    WriteBatchWithIndex b(BytewiseComparator(), 0, overwrite);
    EXPECT_TRUE(b.RollbackToSavePoint().IsNotFound());
    EXPECT_TRUE(b.PopSavePoint().IsNotFound());
    ASSERT_OK(b.Put("a", "1"));
    b.SetSavePoint();
    ASSERT_OK(b.Put("a", "2"));
    ASSERT_OK(b.Delete("b"));
    b.SetSavePoint();
    ASSERT_OK(b.Put("c", "3"));
    ASSERT_OK(b.PopSavePoint());  // drops the second save point, keeps c
    b.SetSavePoint();
    ASSERT_OK(b.Merge("c", "4"));
    ASSERT_OK(b.RollbackToSavePoint());
    EXPECT_EQ(IndexContents(&b),
              overwrite ? "Put(a,2) Delete(b) Put(c,3)" : "Put(a,1) Put(a,2) Delete(b) Put(c,3)");
    ASSERT_OK(b.RollbackToSavePoint());  // the first: only a=1 is left
    EXPECT_EQ(IndexContents(&b), "Put(a,1)");
    std::string value;
    ASSERT_OK(b.GetFromBatch(DBOptions(), "a", &value));
    EXPECT_EQ(value, "1");  // with overwrite_key the entry is back on the first record
    EXPECT_EQ(b.GetWriteBatch()->Count(), 1u);
    EXPECT_TRUE(b.RollbackToSavePoint().IsNotFound());
    ASSERT_OK(b.Put("d", "5"));  // the index keeps working after a rollback
    EXPECT_EQ(IndexContents(&b), "Put(a,1) Put(d,5)");
  }
}

// A transaction marks its batch (RocksDB's two-phase commit markers, written through
// WriteBatchInternal); a rollback's rebuild of the index passes over them.
TEST(WriteBatchWithIndexTest, RebuildPassesOverTransactionMarkers) {
  WriteBatchWithIndex b;
  WriteBatchInternal::InsertNoop(b.GetWriteBatch());
  ASSERT_OK(b.Put("a", "1"));
  WriteBatchInternal::MarkCommit(b.GetWriteBatch(), "t1");
  WriteBatchInternal::MarkRollback(b.GetWriteBatch(), "t2");
  b.SetSavePoint();
  ASSERT_OK(b.Put("b", "2"));
  ASSERT_OK(WriteBatchInternal::MarkEndPrepare(b.GetWriteBatch(), "t3"));  // Noop -> Begin
  ASSERT_OK(b.RollbackToSavePoint());
  EXPECT_EQ(IndexContents(&b), "Put(a,1)");
  EXPECT_TRUE(b.GetWriteBatch()->HasBeginPrepare());
  ASSERT_OK(b.Put("c", "3"));
  EXPECT_EQ(IndexContents(&b), "Put(a,1) Put(c,3)");
}

class WriteBatchWithIndexDBTest : public DBTestBase {
 protected:
  WriteBatchWithIndexDBTest() : DBTestBase("wbwi") {
    options_.merge_operator = MergeOperators::CreateStringAppendOperator();
  }
  std::string BatchAndDB(WriteBatchWithIndex* b, const std::string& key,
                         const ReadOptions& ro = ReadOptions()) {
    std::string value;
    Status s = b->GetFromBatchAndDB(db_.get(), ro, key, &value);
    PinnableSlice pinned;
    Status s2 = b->GetFromBatchAndDB(db_.get(), ro, key, &pinned);
    EXPECT_EQ(s.ToString(), s2.ToString());
    if (s.ok()) EXPECT_EQ(value, pinned.ToString());
    if (s.IsNotFound()) return "NOT_FOUND";  // as DBTestBase::Get says it
    return s.ok() ? value : s.ToString();
  }
};

TEST_F(WriteBatchWithIndexDBTest, GetFromBatchAndDBResolvesMerges) {
  Open();
  ASSERT_OK(Put("base", "b"));
  ASSERT_OK(Put("flushed", "f"));
  ASSERT_OK(Flush());
  ASSERT_OK(Merge("flushed", "g"));
  ASSERT_OK(Put("gone", "x"));

  WriteBatchWithIndex b;
  EXPECT_EQ(BatchAndDB(&b, "base"), "b");
  EXPECT_EQ(BatchAndDB(&b, "none"), "NOT_FOUND");
  ASSERT_OK(b.Merge("base", "1"));
  ASSERT_OK(b.Merge("base", "2"));
  EXPECT_EQ(BatchAndDB(&b, "base"), "b,1,2");
  ASSERT_OK(b.Merge("flushed", "h"));
  EXPECT_EQ(BatchAndDB(&b, "flushed"), "f,g,h");  // operands in the DB and in the batch
  ASSERT_OK(b.Merge("none", "n"));
  EXPECT_EQ(BatchAndDB(&b, "none"), "n");  // no value anywhere beneath
  ASSERT_OK(b.Delete("gone"));
  EXPECT_EQ(BatchAndDB(&b, "gone"), "NOT_FOUND");
  ASSERT_OK(b.Merge("gone", "again"));
  EXPECT_EQ(BatchAndDB(&b, "gone"), "again");  // the batch's Delete hides the DB's value
  ASSERT_OK(b.Put("base", "p"));
  ASSERT_OK(b.Merge("base", "3"));
  EXPECT_EQ(BatchAndDB(&b, "base"), "p,3");  // the batch's Put decides, the DB is not read

  // The read options reach the DB: a snapshot from before the DB's merge.
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_OK(Merge("flushed", "late"));
  ReadOptions at_snap;
  at_snap.snapshot = snap;
  EXPECT_EQ(BatchAndDB(&b, "flushed", at_snap), "f,g,h");
  EXPECT_EQ(BatchAndDB(&b, "flushed"), "f,g,late,h");
  db_->ReleaseSnapshot(snap);

  // What GetFromBatchAndDB promised is what the DB says once the batch is written.
  std::map<std::string, std::string> promised;
  for (const char* k : {"base", "flushed", "none", "gone"}) promised[k] = BatchAndDB(&b, k);
  ASSERT_OK(db_->Write(WriteOptions(), b.GetWriteBatch()));
  for (const auto& [k, v] : promised) EXPECT_EQ(Get(k), v) << k;
}

TEST_F(WriteBatchWithIndexDBTest, MergesWithoutAnOperatorAreInProgress) {
  options_.merge_operator = nullptr;
  Open();
  ASSERT_OK(Put("a", "1"));
  WriteBatchWithIndex b;
  ASSERT_OK(b.Merge("a", "2"));
  EXPECT_EQ(BatchAndDB(&b, "a"), "Merge in progress: ");
  ASSERT_OK(b.Put("b", "v"));
  EXPECT_EQ(BatchAndDB(&b, "b"), "v");
  EXPECT_EQ(BatchAndDB(&b, "c"), "NOT_FOUND");
}

TEST_F(WriteBatchWithIndexDBTest, IteratorOverTheDB) {
  Open();
  for (const char* k : {"a", "c", "e", "g"}) ASSERT_OK(Put(k, std::string("db") + k));
  ASSERT_OK(Flush());
  WriteBatchWithIndex b;
  ASSERT_OK(b.Put("b", "wb"));
  ASSERT_OK(b.Put("c", "wc"));     // replaces the DB's c
  ASSERT_OK(b.Delete("e"));        // hides the DB's e
  ASSERT_OK(b.SingleDelete("f"));  // deletes nothing visible
  ASSERT_OK(b.Put("h", "wh"));
  ASSERT_OK(b.Put("h", "wh2"));
  ASSERT_OK(b.Delete("i"));
  std::unique_ptr<Iterator> it(b.NewIteratorWithBase(db_->NewIterator(ReadOptions())));
  EXPECT_EQ(Walk(it.get()), "a=dba,b=wb,c=wc,g=dbg,h=wh2,");
  EXPECT_EQ(Walk(it.get(), true), "h=wh2,g=dbg,c=wc,b=wb,a=dba,");

  // Seeks and turns.
  it->Seek("d");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "g");
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "c");
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "g");
  it->SeekForPrev("f");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "c");
  it->SeekForPrev("e");
  EXPECT_EQ(it->key().ToString(), "c");
  it->Seek("i");
  EXPECT_FALSE(it->Valid());
  ASSERT_OK(it->status());

  // Later writes to the batch show in the same iterator.
  ASSERT_OK(b.Put("d", "wd"));
  EXPECT_EQ(Walk(it.get()), "a=dba,b=wb,c=wc,d=wd,g=dbg,h=wh2,");
  // Writes while the iterator stands on a batch key: it moves on past that key, both ways,
  // and shows a key written ahead of it.
  it->Seek("c");
  ASSERT_OK(b.Put("c", "wc2"));
  ASSERT_OK(b.Put("cc", "wcc"));
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "cc");
  ASSERT_OK(b.Put("cc", "wcc2"));
  ASSERT_OK(b.Put("bb", "wbb"));
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "c");
  EXPECT_EQ(it->value().ToString(), "wc2");
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "bb");
  ASSERT_OK(b.Delete("bb"));
  ASSERT_OK(b.Delete("cc"));

  // Bounds: [b, h), on the batch's keys and the DB's.
  Slice lower("b"), upper("h");
  ReadOptions ro;
  ro.iterate_lower_bound = &lower;
  ro.iterate_upper_bound = &upper;
  it.reset(b.NewIteratorWithBase(nullptr, db_->NewIterator(ReadOptions()), &ro));
  EXPECT_EQ(Walk(it.get()), "b=wb,c=wc2,d=wd,g=dbg,");
  EXPECT_EQ(Walk(it.get(), true), "g=dbg,d=wd,c=wc2,b=wb,");
  it->Seek("a");
  EXPECT_EQ(it->key().ToString(), "b");
  it->SeekForPrev("z");
  EXPECT_EQ(it->key().ToString(), "g");
  it->Prev();
  it->Prev();
  it->Prev();
  EXPECT_EQ(it->key().ToString(), "b");
  it->Prev();
  EXPECT_FALSE(it->Valid());

  // A Merge in the batch cannot be shown without the operator (a null handle): the
  // iterator says so.
  ASSERT_OK(b.Merge("c", "m"));
  it.reset(b.NewIteratorWithBase(db_->NewIterator(ReadOptions())));
  EXPECT_EQ(Walk(it.get()),
            "a=dba,b=wb,[Not implemented: WriteBatchWithIndex iterator: key has Merge operands "
            "in the batch and no merge operator is known; pass the DB's column family handle to "
            "NewIteratorWithBase]");
}

TEST_F(WriteBatchWithIndexDBTest, MergesWithTheFamilysOperator) {
  Open();
  ASSERT_OK(Put("a", "1"));
  ASSERT_OK(Put("b", "2"));
  ASSERT_OK(Flush());
  ASSERT_OK(Put("c", "3"));
  ASSERT_OK(Put("d", "4"));
  ASSERT_OK(Merge("d", "x"));
  WriteBatchWithIndex b;
  ASSERT_OK(b.Merge("a", "m"));  // over the DB's value
  ASSERT_OK(b.Put("b", "p"));
  ASSERT_OK(b.Merge("b", "q"));  // over the batch's Put
  ASSERT_OK(b.Delete("c"));
  ASSERT_OK(b.Merge("c", "r"));  // over the batch's Delete: nothing beneath
  ASSERT_OK(b.Merge("d", "t"));  // over the DB's operands
  ASSERT_OK(b.Merge("e", "s"));  // over no value anywhere
  ColumnFamilyHandle* cf = db_->DefaultColumnFamily();
  std::unique_ptr<Iterator> it(b.NewIteratorWithBase(cf, db_->NewIterator(ReadOptions())));
  EXPECT_EQ(Walk(it.get()), "a=1,m,b=p,q,c=r,d=4,x,t,e=s,");
  EXPECT_EQ(Walk(it.get(), true), "e=s,d=4,x,t,c=r,b=p,q,a=1,m,");
  it->Seek("c");
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "p,q");
  it->Next();
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "4,x,t");

  // GetFromBatch folds what the batch alone decides, given the family.
  std::string value;
  ASSERT_OK(b.GetFromBatch(cf, DBOptions(), "b", &value));
  EXPECT_EQ(value, "p,q");
  ASSERT_OK(b.GetFromBatch(cf, DBOptions(), "c", &value));
  EXPECT_EQ(value, "r");
  EXPECT_TRUE(b.GetFromBatch(cf, DBOptions(), "a", &value).IsMergeInProgress());
  EXPECT_TRUE(b.GetFromBatch(DBOptions(), "b", &value).IsMergeInProgress());

  // The iterator and GetFromBatchAndDB agree, and both match the DB once the batch is in.
  std::string walked;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    walked += it->key().ToString() + "=" + BatchAndDB(&b, it->key().ToString()) + ",";
  }
  EXPECT_EQ(walked, Walk(it.get()));
  it.reset();
  ASSERT_OK(db_->Write(WriteOptions(), b.GetWriteBatch()));
  EXPECT_EQ(Contents(), walked);
}

// A DB of another kind than shale's own: its handle does not lead to the family's options,
// so GetFromBatchAndDB asks GetOptions for the merge operator.
class ForeignHandleDB : public StackableDB {
 public:
  explicit ForeignHandleDB(DB* db) : StackableDB(db) {}
  ~ForeignHandleDB() override { db_ = nullptr; }  // the fixture still owns the DB
  ColumnFamilyHandle* DefaultColumnFamily() const override { return &handle_; }
  using StackableDB::Get;
  Status Get(const ReadOptions& options, ColumnFamilyHandle*, const Slice& key,
             PinnableSlice* value) override {
    return db_->Get(options, db_->DefaultColumnFamily(), key, value);
  }
  using StackableDB::GetOptions;
  Options GetOptions(ColumnFamilyHandle*) const override {
    get_options_calls++;
    return db_->GetOptions();
  }
  mutable int get_options_calls = 0;

 private:
  class Handle : public ColumnFamilyHandle {
   public:
    const std::string& GetName() const override { return kDefaultColumnFamilyName; }
    uint32_t GetID() const override { return 0; }
    Status GetDescriptor(ColumnFamilyDescriptor*) override { return Status::NotSupported(); }
    const Comparator* GetComparator() const override { return BytewiseComparator(); }
  };
  mutable Handle handle_;
};

TEST_F(WriteBatchWithIndexDBTest, MergeOperatorOfAnotherKindOfDB) {
  Open();
  ASSERT_OK(Put("a", "1"));
  ForeignHandleDB foreign(db_.get());
  WriteBatchWithIndex b;
  ASSERT_OK(b.Merge("a", "2"));
  std::string value;
  ASSERT_OK(b.GetFromBatchAndDB(&foreign, ReadOptions(), "a", &value));
  EXPECT_EQ(value, "1,2");
  EXPECT_EQ(foreign.get_options_calls, 1);
  // shale's own handle reaches the operator without copying the options.
  ASSERT_OK(b.GetFromBatchAndDB(db_.get(), ReadOptions(), "a", &value));
  EXPECT_EQ(value, "1,2");
}

TEST_F(WriteBatchWithIndexDBTest, FollowsTheIndexComparator) {
  options_.comparator = ReverseBytewiseComparator();
  Open();
  ASSERT_OK(Put("a", "1"));
  ASSERT_OK(Put("c", "3"));
  WriteBatchWithIndex b(ReverseBytewiseComparator());
  ASSERT_OK(b.Put("b", "2"));
  ASSERT_OK(b.Delete("c"));
  ASSERT_OK(b.Put("d", "4"));
  EXPECT_EQ(IndexContents(&b), "Put(d,4) Delete(c) Put(b,2)");
  std::unique_ptr<Iterator> it(b.NewIteratorWithBase(db_->NewIterator(ReadOptions())));
  EXPECT_EQ(Walk(it.get()), "d=4,b=2,a=1,");
  EXPECT_EQ(Walk(it.get(), true), "a=1,b=2,d=4,");
  it->Seek("c");  // the first key at or after c in this order
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "b");
}

TEST(WriteBatchWithIndexTest, BaseIteratorErrorsShow) {
  WriteBatchWithIndex b;
  ASSERT_OK(b.Put("a", "1"));
  std::unique_ptr<Iterator> it(
      b.NewIteratorWithBase(NewErrorIterator(Status::Corruption("broken base"))));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
  it->SeekForPrev("z");
  EXPECT_FALSE(it->Valid());
  EXPECT_EQ(it->status().ToString(), "Corruption: broken base");
}

TEST_F(WriteBatchWithIndexDBTest, EmptyBatchShowsTheBase) {
  Open();
  ASSERT_OK(Put("a", "1"));
  ASSERT_OK(Put("b", "2"));
  WriteBatchWithIndex b;
  std::unique_ptr<Iterator> it(b.NewIteratorWithBase(db_->NewIterator(ReadOptions())));
  EXPECT_EQ(Walk(it.get()), "a=1,b=2,");
  EXPECT_EQ(Walk(it.get(), true), "b=2,a=1,");
  WriteBatchWithIndex only_batch;
  ASSERT_OK(only_batch.Put("x", "y"));
  it.reset(only_batch.NewIteratorWithBase(NewEmptyIterator()));
  EXPECT_EQ(Walk(it.get(), true), "x=y,");
}

// A random sequence of batch operations over a small key space, on top of a DB with data
// of its own (in an SST file and the memtable), compared after every round with a model:
// the DB's contents in a std::map, the batch's records in a list. Checks the index
// iterator, GetFromBatchAndDB for every key, and the iterator over the DB through random
// seeks and steps in both directions, with random bounds (rounds with Merge give it the
// family's handle, for the merge operator).
class WriteBatchWithIndexModelTest : public WriteBatchWithIndexDBTest,
                                     public testing::WithParamInterface<bool> {};

using Model = std::map<std::string, std::string>;
struct Record {
  WriteType type;
  std::string key, value;
};

std::string ModelKey(std::mt19937_64& rnd) {
  char buf[8];
  snprintf(buf, sizeof(buf), "k%02d", static_cast<int>(rnd() % 24));
  return buf;
}

// The DB as it would be once the records are written (SingleDelete taken as Delete).
Model Apply(Model db, const std::vector<Record>& records) {
  for (const Record& r : records) {
    if (r.type == kPutRecord) {
      db[r.key] = r.value;
    } else if (r.type == kMergeRecord) {
      auto it = db.find(r.key);
      db[r.key] = it == db.end() ? r.value : it->second + "," + r.value;
    } else {
      db.erase(r.key);
    }
  }
  return db;
}

// The index the records should give: per key every record, or with overwrite_key one per
// key where a non-Merge record replaces the key's newest entry.
std::string ExpectedIndex(const std::vector<Record>& records, bool overwrite) {
  std::map<std::string, std::vector<Record>> per_key;
  for (const Record& r : records) {
    auto& list = per_key[r.key];
    if (overwrite && r.type != kMergeRecord && !list.empty()) {
      list.back() = r;
    } else {
      list.push_back(r);
    }
  }
  std::string out;
  for (const auto& [key, list] : per_key) {
    for (const Record& r : list) {
      out += (out.empty() ? "" : " ") + Describe(WriteEntry{r.type, r.key, r.value});
    }
  }
  return out;
}

TEST_P(WriteBatchWithIndexModelTest, MatchesModel) {
  const bool overwrite = GetParam();
  std::mt19937_64 rnd(TestSeed());
  Open();
  Model db_model;
  for (int i = 0; i < 40; i++) {
    const std::string k = ModelKey(rnd);
    if (rnd() % 4 == 0) {
      ASSERT_OK(Delete(k));
      db_model.erase(k);
    } else {
      const std::string v = "db" + std::to_string(i);
      ASSERT_OK(Put(k, v));
      db_model[k] = v;
    }
    if (i == 20) ASSERT_OK(Flush());
  }

  const int rounds = TestKnob("SHALE_WBWI_ROUNDS", 30);
  for (int round = 0; round < rounds; round++) {
    SCOPED_TRACE("round " + std::to_string(round));
    const bool merges = round % 2 == 1;
    WriteBatchWithIndex b(BytewiseComparator(), 0, overwrite);
    std::vector<Record> records;
    std::vector<size_t> save_points;
    const int ops = 1 + static_cast<int>(rnd() % 40);
    for (int i = 0; i < ops; i++) {
      const std::string k = ModelKey(rnd);
      const std::string v = "v" + std::to_string(round) + "." + std::to_string(i);
      switch (rnd() % 10) {
        case 0:
          ASSERT_OK(b.Delete(k));
          records.push_back({kDeleteRecord, k, ""});
          break;
        case 1:
          ASSERT_OK(b.SingleDelete(k));
          records.push_back({kSingleDeleteRecord, k, ""});
          break;
        case 2:
          if (merges) {
            ASSERT_OK(b.Merge(k, v));
            records.push_back({kMergeRecord, k, v});
          }
          break;
        case 3:
          b.SetSavePoint();
          save_points.push_back(records.size());
          break;
        case 4:
          if (rnd() % 2 == 0) {
            ASSERT_EQ(b.PopSavePoint().ok(), !save_points.empty());
            if (!save_points.empty()) save_points.pop_back();
          } else {
            ASSERT_EQ(b.RollbackToSavePoint().ok(), !save_points.empty());
            if (!save_points.empty()) {
              records.resize(save_points.back());
              save_points.pop_back();
            }
          }
          break;
        default: ASSERT_OK(b.Put(k, v)); records.push_back({kPutRecord, k, v});
      }
    }
    const Model expected = Apply(db_model, records);
    ASSERT_EQ(IndexContents(&b), ExpectedIndex(records, overwrite));
    ASSERT_EQ(b.GetWriteBatch()->Count(), records.size());

    for (int i = 0; i < 24; i++) {
      char k[8];
      snprintf(k, sizeof(k), "k%02d", i);
      auto it = expected.find(k);
      ASSERT_EQ(BatchAndDB(&b, k), it == expected.end() ? "NOT_FOUND" : it->second) << k;
    }
    // Random bounds (or none), then a random walk compared step by step.
    std::string lower_key = ModelKey(rnd), upper_key = ModelKey(rnd);
    if (upper_key < lower_key) std::swap(lower_key, upper_key);
    Slice lower(lower_key), upper(upper_key);
    ReadOptions ro;
    if (rnd() % 2 == 0) ro.iterate_lower_bound = &lower;
    if (rnd() % 2 == 0) ro.iterate_upper_bound = &upper;
    Model view;
    for (const auto& [k, v] : expected) {
      if (ro.iterate_lower_bound != nullptr && k < lower_key) continue;
      if (ro.iterate_upper_bound != nullptr && k >= upper_key) continue;
      view[k] = v;
    }
    ColumnFamilyHandle* cf = merges || rnd() % 2 == 0 ? db_->DefaultColumnFamily() : nullptr;
    std::unique_ptr<Iterator> iter(b.NewIteratorWithBase(cf, db_->NewIterator(ro), &ro));
    auto pos = view.end();  // end(): not valid
    std::string trace;
    for (int step = 0; step < 60; step++) {
      const std::string target = ModelKey(rnd) + (rnd() % 3 == 0 ? "x" : "");
      const int op = static_cast<int>(rnd() % 6);
      if ((op == 4 || op == 5) && pos == view.end()) continue;  // Next/Prev need Valid()
      switch (op) {
        case 0:
          iter->SeekToFirst();
          pos = view.begin();
          trace += " SeekToFirst";
          break;
        case 1:
          iter->SeekToLast();
          pos = view.empty() ? view.end() : std::prev(view.end());
          trace += " SeekToLast";
          break;
        case 2:
          iter->Seek(target);
          pos = view.lower_bound(target);
          trace += " Seek(" + target + ")";
          break;
        case 3: {
          iter->SeekForPrev(target);
          auto ub = view.upper_bound(target);
          pos = ub == view.begin() ? view.end() : std::prev(ub);
          trace += " SeekForPrev(" + target + ")";
          break;
        }
        case 4:
          iter->Next();
          ++pos;
          trace += " Next";
          break;
        case 5:
          iter->Prev();
          pos = pos == view.begin() ? view.end() : std::prev(pos);
          trace += " Prev";
          break;
      }
      ASSERT_OK(iter->status()) << trace;
      ASSERT_EQ(iter->Valid(), pos != view.end()) << trace;
      if (pos != view.end()) {
        ASSERT_EQ(iter->key().ToString(), pos->first) << trace;
        ASSERT_EQ(iter->value().ToString(), pos->second) << trace;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(OverwriteKey, WriteBatchWithIndexModelTest, testing::Bool());

}  // namespace
}  // namespace shale
