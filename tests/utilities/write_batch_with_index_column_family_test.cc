// WriteBatchWithIndex across column families: the index keeps each family apart, ordered
// by that family's comparator (a reverse-ordered family runs backwards); the index
// iterator, GetFromBatch, GetFromBatchAndDB and NewIteratorWithBase answer for one family
// only, over a real DB whose families hold the same keys; save points and Clear rebuild the
// index with every family; and a randomized run over three families (one reverse-ordered)
// matches a model (a std::map per family), with and without overwrite_key.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "shale/comparator.h"
#include "shale/db.h"
#include "shale/utilities/merge_operators.h"
#include "shale/utilities/write_batch_with_index.h"
#include "tests/testutil/test_util.h"
#include "tests/utilities/iterator_walk.h"
#include "util/random.h"

namespace shale {
namespace {

// A handle of no DB: an id and a comparator, which is all the index reads.
class FakeFamily : public ColumnFamilyHandle {
 public:
  FakeFamily(uint32_t id, const Comparator* cmp) : id_(id), cmp_(cmp) {}
  const std::string& GetName() const override { return name_; }
  uint32_t GetID() const override { return id_; }
  Status GetDescriptor(ColumnFamilyDescriptor*) override { return Status::NotSupported(); }
  const Comparator* GetComparator() const override { return cmp_; }

 private:
  const uint32_t id_;
  const Comparator* const cmp_;
  std::string name_ = "fake";
};

std::string IndexWalk(WBWIIterator* it, bool backward = false) {
  std::string out;
  auto one = [&] {
    WriteEntry e = it->Entry();
    out += e.key.ToString() +
           (e.type == kPutRecord     ? "=" + e.value.ToString()
            : e.type == kMergeRecord ? "+" + e.value.ToString()
                                     : "~") +
           ",";
  };
  if (backward) {
    for (it->SeekToLast(); it->Valid(); it->Prev()) one();
  } else {
    for (it->SeekToFirst(); it->Valid(); it->Next()) one();
  }
  return out;
}

TEST(WriteBatchWithIndexColumnFamilyTest, IndexKeepsFamiliesApartInTheirOrder) {
  FakeFamily one(1, BytewiseComparator());
  FakeFamily rev(7, ReverseBytewiseComparator());
  for (bool overwrite : {false, true}) {
    SCOPED_TRACE(overwrite ? "overwrite_key" : "every record");
    WriteBatchWithIndex b(BytewiseComparator(), 0, overwrite);
    ASSERT_OK(b.Put(&rev, "a", "r1"));
    ASSERT_OK(b.Put("b", "d1"));
    ASSERT_OK(b.Put(&one, "b", "o1"));
    ASSERT_OK(b.Put(&rev, "c", "r2"));
    ASSERT_OK(b.Put("a", "d2"));
    ASSERT_OK(b.Delete(&one, "a"));
    ASSERT_OK(b.Merge(&rev, "b", "m"));
    ASSERT_OK(b.Put(&rev, "a", "r3"));
    EXPECT_EQ(b.GetWriteBatch()->Count(), 8u);

    std::unique_ptr<WBWIIterator> it(b.NewIterator());
    EXPECT_EQ(IndexWalk(it.get()), "a=d2,b=d1,");
    it.reset(b.NewIterator(&one));
    EXPECT_EQ(IndexWalk(it.get()), "a~,b=o1,");
    EXPECT_EQ(IndexWalk(it.get(), /*backward=*/true), "b=o1,a~,");
    it.reset(b.NewIterator(&rev));
    EXPECT_EQ(IndexWalk(it.get()), overwrite ? "c=r2,b+m,a=r3," : "c=r2,b+m,a=r1,a=r3,");
    EXPECT_EQ(IndexWalk(it.get(), true), overwrite ? "a=r3,b+m,c=r2," : "a=r3,a=r1,b+m,c=r2,");
    it->Seek("bb");  // in reverse order: the first key at or after "bb" is "b"
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->Entry().key.ToString(), "b");
    it->SeekForPrev("bb");  // the last key at or before "bb": "c"
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->Entry().key.ToString(), "c");
    it->Prev();
    EXPECT_FALSE(it->Valid());  // never into another family
    it->Seek("0");
    EXPECT_FALSE(it->Valid());
    // A family the batch never saw is empty.
    FakeFamily none(3, BytewiseComparator());
    it.reset(b.NewIterator(&none));
    EXPECT_EQ(IndexWalk(it.get()), "");

    std::string value;
    ASSERT_OK(b.GetFromBatch(DBOptions(), "a", &value));
    EXPECT_EQ(value, "d2");
    ASSERT_OK(b.GetFromBatch(&rev, DBOptions(), "a", &value));
    EXPECT_EQ(value, "r3");
    EXPECT_TRUE(b.GetFromBatch(&one, DBOptions(), "a", &value).IsNotFound());
    ASSERT_OK(b.GetFromBatch(&one, DBOptions(), "b", &value));
    EXPECT_EQ(value, "o1");
    EXPECT_TRUE(b.GetFromBatch(&rev, DBOptions(), "b", &value).IsMergeInProgress());
    EXPECT_TRUE(b.GetFromBatch(&none, DBOptions(), "b", &value).IsNotFound());

    // A save point and a rollback rebuild the index with every family.
    b.SetSavePoint();
    ASSERT_OK(b.Put(&one, "z", "late"));
    ASSERT_OK(b.Delete(&rev, "c"));
    ASSERT_OK(b.RollbackToSavePoint());
    it.reset(b.NewIterator(&rev));
    EXPECT_EQ(IndexWalk(it.get()), overwrite ? "c=r2,b+m,a=r3," : "c=r2,b+m,a=r1,a=r3,");
    it.reset(b.NewIterator(&one));
    EXPECT_EQ(IndexWalk(it.get()), "a~,b=o1,");
    it.reset();
    b.Clear();
    it.reset(b.NewIterator(&rev));
    EXPECT_EQ(IndexWalk(it.get()), "");
    // The family keeps its comparator after Clear.
    ASSERT_OK(b.Put(&rev, "a", "1"));
    ASSERT_OK(b.Put(&rev, "b", "2"));
    EXPECT_EQ(IndexWalk(it.get()), "b=2,a=1,");
  }
}

// A DB with a bytewise and a reverse-ordered family holding the same keys, and a batch
// over it.
class WriteBatchWithIndexOverFamiliesTest : public testing::Test {
 protected:
  WriteBatchWithIndexOverFamiliesTest() : dir_("wbwi_cf") {
    DBOptions o;
    o.create_if_missing = true;
    o.create_missing_column_families = true;
    ColumnFamilyOptions plain;
    plain.merge_operator = MergeOperators::CreateStringAppendOperator(',');
    ColumnFamilyOptions rev = plain;
    rev.comparator = ReverseBytewiseComparator();
    std::vector<ColumnFamilyDescriptor> families = {
        {kDefaultColumnFamilyName, plain}, {"one", plain}, {"rev", rev}};
    DB* db = nullptr;
    EXPECT_OK(DB::Open(o, dir_.path() + "/db", families, &handles_, &db));
    db_.reset(db);
  }
  ~WriteBatchWithIndexOverFamiliesTest() override {
    for (ColumnFamilyHandle* h : handles_) delete h;
    db_.reset();
  }

  TempDirectory dir_;
  std::vector<ColumnFamilyHandle*> handles_;
  std::unique_ptr<DB> db_;
};

TEST_F(WriteBatchWithIndexOverFamiliesTest, ReadsOverTheDBPerFamily) {
  ColumnFamilyHandle* one = handles_[1];
  ColumnFamilyHandle* rev = handles_[2];
  for (ColumnFamilyHandle* h : handles_) {
    ASSERT_OK(db_->Put(WriteOptions(), h, "a", h->GetName() + "-a"));
    ASSERT_OK(db_->Put(WriteOptions(), h, "c", h->GetName() + "-c"));
    ASSERT_OK(db_->Put(WriteOptions(), h, "e", h->GetName() + "-e"));
  }
  ASSERT_OK(db_->Flush(FlushOptions(), rev));
  WriteBatchWithIndex b(BytewiseComparator(), 0, /*overwrite_key=*/true);
  ASSERT_OK(b.Put(rev, "b", "B"));
  ASSERT_OK(b.Delete(rev, "c"));
  ASSERT_OK(b.Merge(rev, "e", "m"));
  ASSERT_OK(b.Merge(one, "a", "x"));
  ASSERT_OK(b.Put("d", "D"));

  std::string value;
  ASSERT_OK(b.GetFromBatchAndDB(db_.get(), ReadOptions(), rev, "e", &value));
  EXPECT_EQ(value, "rev-e,m");
  ASSERT_OK(b.GetFromBatchAndDB(db_.get(), ReadOptions(), rev, "a", &value));
  EXPECT_EQ(value, "rev-a");
  EXPECT_TRUE(b.GetFromBatchAndDB(db_.get(), ReadOptions(), rev, "c", &value).IsNotFound());
  ASSERT_OK(b.GetFromBatchAndDB(db_.get(), ReadOptions(), one, "c", &value));
  EXPECT_EQ(value, "one-c");
  ASSERT_OK(b.GetFromBatchAndDB(db_.get(), ReadOptions(), one, "a", &value));
  EXPECT_EQ(value, "one-a,x");
  ASSERT_OK(b.GetFromBatchAndDB(db_.get(), ReadOptions(), "a", &value));
  EXPECT_EQ(value, "default-a");
  EXPECT_TRUE(b.GetFromBatchAndDB(db_.get(), ReadOptions(), rev, "d", &value).IsNotFound());
  PinnableSlice pinned;
  ASSERT_OK(b.GetFromBatchAndDB(db_.get(), ReadOptions(), "d", &pinned));
  EXPECT_EQ(pinned.ToString(), "D");

  std::unique_ptr<Iterator> it(b.NewIteratorWithBase(rev, db_->NewIterator(ReadOptions(), rev)));
  EXPECT_EQ(Walk(it.get()), "e=rev-e,m,b=B,a=rev-a,");
  EXPECT_EQ(Walk(it.get(), /*backward=*/true), "a=rev-a,b=B,e=rev-e,m,");
  it->Seek("d");  // reverse order: "d" is absent, "b" comes next
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "b");
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "e");
  it->SeekForPrev("d");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "e");
  it.reset(b.NewIteratorWithBase(one, db_->NewIterator(ReadOptions(), one)));
  EXPECT_EQ(Walk(it.get()), "a=one-a,x,c=one-c,e=one-e,");
  it.reset(b.NewIteratorWithBase(db_->NewIterator(ReadOptions())));
  EXPECT_EQ(Walk(it.get()), "a=default-a,c=default-c,d=D,e=default-e,");
  // Bounds apply in the family's order: [lower, upper) runs from "e" down to above "a".
  Slice lower("e");
  Slice upper("a");
  ReadOptions bounded;
  bounded.iterate_lower_bound = &lower;
  bounded.iterate_upper_bound = &upper;
  it.reset(b.NewIteratorWithBase(rev, db_->NewIterator(bounded, rev), &bounded));
  EXPECT_EQ(Walk(it.get()), "e=rev-e,m,b=B,");
  EXPECT_EQ(Walk(it.get(), true), "b=B,e=rev-e,m,");
  it.reset();

  // Written as one batch, every family gets its records.
  ASSERT_OK(db_->Write(WriteOptions(), b.GetWriteBatch()));
  ASSERT_OK(db_->Get(ReadOptions(), rev, "b", &value));
  EXPECT_EQ(value, "B");
  EXPECT_TRUE(db_->Get(ReadOptions(), rev, "c", &value).IsNotFound());
  ASSERT_OK(db_->Get(ReadOptions(), one, "a", &value));
  EXPECT_EQ(value, "one-a,x");
  EXPECT_TRUE(db_->Get(ReadOptions(), one, "d", &value).IsNotFound());
}

// Random Puts, Deletes, save points and rollbacks over three families (the third
// reverse-ordered) against a map per family: after every step each family's newest state
// (GetFromBatch, and the batch over an empty base in both directions) matches its map.
TEST(WriteBatchWithIndexColumnFamilyTest, MatchesAModelPerFamily) {
  const uint64_t seed = TestSeed();
  Random rnd(static_cast<uint32_t>(seed));
  FakeFamily one(1, BytewiseComparator());
  FakeFamily rev(2, ReverseBytewiseComparator());
  std::vector<ColumnFamilyHandle*> families = {nullptr, &one, &rev};
  using Model = std::vector<std::map<std::string, std::string>>;
  for (bool overwrite : {false, true}) {
    SCOPED_TRACE(overwrite ? "overwrite_key" : "every record");
    WriteBatchWithIndex b(BytewiseComparator(), 0, overwrite);
    Model model(3);
    std::vector<Model> saved;
    for (int step = 0; step < 600; step++) {
      const size_t f = rnd.Uniform(3);
      const std::string key(1, static_cast<char>('a' + rnd.Uniform(8)));
      const int op = static_cast<int>(rnd.Uniform(20));
      if (op < 10) {
        const std::string v = std::to_string(step);
        ASSERT_OK(b.Put(families[f], key, v));
        model[f][key] = v;
      } else if (op < 15) {
        ASSERT_OK(b.Delete(families[f], key));
        model[f].erase(key);
      } else if (op < 17) {
        b.SetSavePoint();
        saved.push_back(model);
      } else if (!saved.empty()) {
        ASSERT_OK(b.RollbackToSavePoint());
        model = saved.back();
        saved.pop_back();
      }
      for (size_t g = 0; g < 3; g++) {
        std::string expected;
        for (const auto& [k, v] : model[g]) expected += k + "=" + v + ",";
        std::string reversed;
        for (auto it = model[g].rbegin(); it != model[g].rend(); ++it) {
          reversed += it->first + "=" + it->second + ",";
        }
        std::unique_ptr<Iterator> it(b.NewIteratorWithBase(families[g], NewEmptyIterator()));
        ASSERT_EQ(Walk(it.get()), g == 2 ? reversed : expected)
            << "seed " << seed << " step " << step;
        ASSERT_EQ(Walk(it.get(), true), g == 2 ? expected : reversed) << "seed " << seed;
        std::string value;
        Status s = b.GetFromBatch(families[g], DBOptions(), key, &value);
        auto m = model[g].find(key);
        if (m == model[g].end()) {
          ASSERT_TRUE(s.IsNotFound()) << s.ToString() << " seed " << seed;
        } else {
          ASSERT_OK(s);
          ASSERT_EQ(value, m->second) << "seed " << seed;
        }
      }
    }
  }
}

}  // namespace
}  // namespace shale
