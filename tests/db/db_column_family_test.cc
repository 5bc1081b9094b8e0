// Column families through the public API: their life (Open with descriptors, create, drop,
// list, handles), per-family options, writes and reads per family and across families,
// and what recovery gives back per family (each family's own log number: nothing lost,
// nothing applied twice, nothing into a dropped family). The randomized model test is
// db_column_family_model_test.cc.
#include <algorithm>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "db/filename.h"
#include "shale/comparator.h"
#include "shale/db.h"
#include "shale/merge_operator.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/family_handles.h"

namespace shale {
namespace {

class DBColumnFamilyTest : public DBTestBase {
 protected:
  DBColumnFamilyTest() : DBTestBase("db_column_family") {}
  ~DBColumnFamilyTest() override { CloseFamilies(); }

  // Opens with the default family and `names`, each with family_options_ (or the options
  // given in per_family).
  Status TryOpenFamilies(const std::vector<std::string>& names) {
    CloseFamilies();
    db_.reset();
    std::vector<ColumnFamilyDescriptor> descs;
    descs.emplace_back(kDefaultColumnFamilyName, options_);
    for (const std::string& n : names) {
      auto it = std::find_if(per_family_.begin(), per_family_.end(),
                             [&](const ColumnFamilyDescriptor& d) { return d.name == n; });
      descs.emplace_back(n, it != per_family_.end() ? it->options : family_options_);
    }
    DB* db = nullptr;
    Status s = DB::Open(options_, dbname_, descs, &handles_, &db);
    db_.reset(db);
    return s;
  }
  void OpenFamilies(const std::vector<std::string>& names) { ASSERT_OK(TryOpenFamilies(names)); }
  void CloseFamilies() { ReleaseHandles(db_.get(), &handles_); }
  ColumnFamilyHandle* Family(size_t i) { return handles_.at(i); }
  std::string GetIn(size_t i, const std::string& k) {
    std::string v;
    Status s = db_->Get(ReadOptions(), Family(i), k, &v);
    return s.ok() ? v : s.IsNotFound() ? "NOT_FOUND" : s.ToString();
  }
  std::string ContentsOf(ColumnFamilyHandle* cf) {
    std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions(), cf));
    std::string out;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out += it->key().ToString() + "=" + it->value().ToString() + ",";
    }
    if (!it->status().ok()) out += "[" + it->status().ToString() + "]";
    return out;
  }
  uint64_t IntPropertyIn(ColumnFamilyHandle* cf, const std::string& name) {
    uint64_t v = 0;
    EXPECT_TRUE(db_->GetIntProperty(cf, name, &v)) << name;
    return v;
  }
  std::vector<std::string> List() {
    std::vector<std::string> names;
    EXPECT_OK(DB::ListColumnFamilies(options_, dbname_, &names));
    return names;
  }
  int WalFiles() {
    std::vector<std::string> children;
    EXPECT_OK(Env::Default()->GetChildren(dbname_, &children));
    int n = 0;
    for (const std::string& c : children) {
      uint64_t number;
      FileType type;
      if (ParseFileName(c, &number, &type) && type == kWalFile) n++;
    }
    return n;
  }

  ColumnFamilyOptions family_options_;
  std::vector<ColumnFamilyDescriptor> per_family_;
  std::vector<ColumnFamilyHandle*> handles_;
};

TEST_F(DBColumnFamilyTest, CreateListReopenAndTheOpenRules) {
  OpenFamilies({});
  ColumnFamilyHandle* a = nullptr;
  ASSERT_OK(db_->CreateColumnFamily(family_options_, "a", &a));
  handles_.push_back(a);
  std::vector<ColumnFamilyHandle*> more;
  ASSERT_OK(db_->CreateColumnFamilies(family_options_, {"b", "c"}, &more));
  handles_.insert(handles_.end(), more.begin(), more.end());
  EXPECT_EQ("a", a->GetName());
  EXPECT_NE(a->GetID(), more[0]->GetID());
  EXPECT_EQ(0u, db_->DefaultColumnFamily()->GetID());
  ColumnFamilyDescriptor desc;
  ASSERT_OK(a->GetDescriptor(&desc));
  EXPECT_EQ("a", desc.name);

  // The same key in each family is a different key.
  ASSERT_OK(db_->Put(WriteOptions(), Family(0), "k", "default"));
  ASSERT_OK(db_->Put(WriteOptions(), Family(1), "k", "in a"));
  ASSERT_OK(db_->Put(WriteOptions(), Family(2), "k", "in b"));
  EXPECT_EQ("in a", GetIn(1, "k"));
  EXPECT_EQ("NOT_FOUND", GetIn(3, "k"));
  EXPECT_EQ((std::vector<std::string>{"default", "a", "b", "c"}), List());

  // Every family must be named; a family the DB lacks needs create_missing_column_families.
  Status s = TryOpenFamilies({"a", "b"});
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("Column families not opened: c"));
  s = TryOpenFamilies({"a", "b", "c", "d"});
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("Column family not found: d"));
  // The plain Open names only the default.
  db_.reset();
  s = TryReopen();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  options_.create_missing_column_families = true;
  OpenFamilies({"a", "b", "c", "d"});
  EXPECT_EQ("default", GetIn(0, "k"));
  EXPECT_EQ("in a", GetIn(1, "k"));
  EXPECT_EQ("in b", GetIn(2, "k"));
  EXPECT_EQ("NOT_FOUND", GetIn(4, "k"));
  EXPECT_EQ((std::vector<std::string>{"default", "a", "b", "c", "d"}), List());
}

TEST_F(DBColumnFamilyTest, FamiliesCreatedAtOpenTakeIdsInTheDescriptorsOrder) {
  options_.create_missing_column_families = true;
  OpenFamilies({"zeta", "alpha"});
  EXPECT_LT(Family(1)->GetID(), Family(2)->GetID());
  EXPECT_EQ((std::vector<std::string>{"default", "zeta", "alpha"}), List());
}

TEST_F(DBColumnFamilyTest, RefusalsAndADroppedFamilysHandle) {
  OpenFamilies({});
  ColumnFamilyHandle* a = nullptr;
  ASSERT_OK(db_->CreateColumnFamily(family_options_, "a", &a));
  handles_.push_back(a);
  ColumnFamilyHandle* twice = nullptr;
  EXPECT_TRUE(db_->CreateColumnFamily(family_options_, "a", &twice).IsInvalidArgument());
  EXPECT_EQ(nullptr, twice);
  EXPECT_TRUE(db_->DropColumnFamily(db_->DefaultColumnFamily()).IsInvalidArgument());
  EXPECT_TRUE(db_->DestroyColumnFamilyHandle(db_->DefaultColumnFamily()).IsInvalidArgument());

  ASSERT_OK(db_->Put(WriteOptions(), a, "k", "v"));
  ASSERT_OK(db_->Flush(FlushOptions(), a));
  ASSERT_OK(db_->Put(WriteOptions(), a, "m", "mem"));
  ASSERT_OK(db_->DropColumnFamily(a));
  EXPECT_TRUE(db_->DropColumnFamily(a).IsInvalidArgument());
  // Reads go on through the handle; writes fail, alone or in a batch, and change nothing.
  EXPECT_EQ("v", GetIn(1, "k"));
  EXPECT_EQ("k=v,m=mem,", ContentsOf(a));
  Status s = db_->Put(WriteOptions(), a, "k2", "v2");
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  WriteBatch batch;
  ASSERT_OK(batch.Put("x", "default"));
  ASSERT_OK(batch.Put(a, "x", "dropped"));
  EXPECT_TRUE(db_->Write(WriteOptions(), &batch).IsInvalidArgument());
  EXPECT_EQ("NOT_FOUND", GetIn(0, "x"));
  EXPECT_TRUE(db_->Flush(FlushOptions(), a).IsColumnFamilyDropped());
  EXPECT_EQ((std::vector<std::string>{"default"}), List());

  // A new family of the same name starts empty, with another id.
  ColumnFamilyHandle* again = nullptr;
  ASSERT_OK(db_->CreateColumnFamily(family_options_, "a", &again));
  handles_.push_back(again);
  EXPECT_NE(a->GetID(), again->GetID());
  EXPECT_EQ("NOT_FOUND", GetIn(2, "k"));
  OpenFamilies({"a"});
  EXPECT_EQ("NOT_FOUND", GetIn(1, "k"));
  EXPECT_EQ("", ContentsOf(Family(1)));
}

TEST_F(DBColumnFamilyTest, EachFamilyKeepsItsOwnOptions) {
  ColumnFamilyOptions reversed;
  reversed.comparator = ReverseBytewiseComparator();
  ColumnFamilyOptions merging;
  merging.merge_operator = std::make_shared<JoinOperator>();
  merging.write_buffer_size = 64 << 10;
  per_family_ = {{"rev", reversed}, {"merge", merging}};
  options_.create_missing_column_families = true;
  OpenFamilies({"rev", "merge"});
  for (const char* k : {"a", "b", "c"}) {
    ASSERT_OK(db_->Put(WriteOptions(), Family(0), k, "1"));
    ASSERT_OK(db_->Put(WriteOptions(), Family(1), k, "1"));
  }
  EXPECT_EQ("a=1,b=1,c=1,", ContentsOf(Family(0)));
  EXPECT_EQ("c=1,b=1,a=1,", ContentsOf(Family(1)));
  // Only the family with a merge operator takes Merges.
  EXPECT_TRUE(db_->Merge(WriteOptions(), Family(0), "m", "x").IsNotSupported());
  ASSERT_OK(db_->Merge(WriteOptions(), Family(2), "m", "x"));
  ASSERT_OK(db_->Merge(WriteOptions(), Family(2), "m", "y"));
  EXPECT_EQ("x,y", GetIn(2, "m"));
  // The family's write buffer: 64 KiB fills many times over, the default's never.
  const std::string value(1000, 'v');
  for (int i = 0; i < 400; i++) {
    ASSERT_OK(db_->Put(WriteOptions(), Family(2), "key" + std::to_string(i), value));
  }
  ASSERT_OK(db_->WaitForCompact(WaitForCompactOptions()));
  EXPECT_GT(IntPropertyIn(Family(2), "shale.num-files-at-level0") +
                IntPropertyIn(Family(2), "shale.num-files-at-level1"),
            0u);
  EXPECT_EQ(0u, IntPropertyIn(Family(0), "shale.num-files-at-level0"));
  // SetOptions reaches the family it names only.
  ASSERT_OK(db_->SetOptions(Family(2), {{"disable_auto_compactions", "true"}}));
  EXPECT_TRUE(db_->GetOptions(Family(2)).disable_auto_compactions);
  EXPECT_FALSE(db_->GetOptions(Family(1)).disable_auto_compactions);

  // Reopened, each family is checked against the comparator it was made with.
  per_family_[0].options.comparator = BytewiseComparator();
  Status s = TryOpenFamilies({"rev", "merge"});
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  per_family_[0].options.comparator = ReverseBytewiseComparator();
  OpenFamilies({"rev", "merge"});
  EXPECT_EQ("c=1,b=1,a=1,", ContentsOf(Family(1)));
  EXPECT_EQ("x,y", GetIn(2, "m"));
}

TEST_F(DBColumnFamilyTest, ABatchAcrossFamiliesIsOneWrite) {
  options_.create_missing_column_families = true;
  family_options_.merge_operator = std::make_shared<JoinOperator>();
  OpenFamilies({"a", "b"});
  WriteBatch batch;
  ASSERT_OK(batch.Put(Family(0), "k", "0"));
  ASSERT_OK(batch.Put(Family(1), "k", "1"));
  ASSERT_OK(batch.Merge(Family(2), "k", "2"));
  ASSERT_OK(batch.Delete(Family(1), "gone"));
  const SequenceNumber before = db_->GetLatestSequenceNumber();
  ASSERT_OK(db_->Write(WriteOptions(), &batch));
  EXPECT_EQ(before + 4, db_->GetLatestSequenceNumber());
  // A snapshot taken before it sees none of it in any family.
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_OK(db_->Put(WriteOptions(), Family(2), "k2", "later"));
  std::vector<ColumnFamilyHandle*> all = {Family(0), Family(1), Family(2)};
  std::vector<std::string> values;
  std::vector<Status> st =
      db_->MultiGet(ReadOptions(), all, {Slice("k"), Slice("k"), Slice("k")}, &values);
  EXPECT_EQ((std::vector<std::string>{"0", "1", "2"}), values);
  ReadOptions at;
  at.snapshot = snap;
  std::vector<Iterator*> iters;
  ASSERT_OK(db_->NewIterators(at, all, &iters));
  ASSERT_EQ(3u, iters.size());
  std::string seen;
  for (Iterator* it : iters) {
    for (it->SeekToFirst(); it->Valid(); it->Next()) seen += it->key().ToString() + ";";
    delete it;
  }
  EXPECT_EQ("k;k;k;", seen);  // not k2, written after the snapshot
  db_->ReleaseSnapshot(snap);
  // The WAL gives it back whole.
  OpenFamilies({"a", "b"});
  EXPECT_EQ("0", GetIn(0, "k"));
  EXPECT_EQ("1", GetIn(1, "k"));
  EXPECT_EQ("2", GetIn(2, "k"));
}

// The case recovery must get right: family a flushed past the WAL that b still needs.
// Replaying that WAL must give b its records and not give a its own again (merge operands
// would then appear twice).
TEST_F(DBColumnFamilyTest, FamiliesFlushedAtDifferentTimesRecoverExactlyOnce) {
  options_.create_missing_column_families = true;
  family_options_.merge_operator = std::make_shared<JoinOperator>();
  OpenFamilies({"a", "b"});
  for (int round = 0; round < 3; round++) {
    for (size_t f = 1; f <= 2; f++) {
      ASSERT_OK(db_->Merge(WriteOptions(), Family(f), "k", std::to_string(round)));
    }
    ASSERT_OK(db_->Flush(FlushOptions(), Family(1)));  // only a is flushed
  }
  ASSERT_OK(db_->Merge(WriteOptions(), Family(1), "k", "3"));
  EXPECT_EQ("0,1,2,3", GetIn(1, "k"));
  EXPECT_EQ("0,1,2", GetIn(2, "k"));
  // b's unflushed data keeps the WALs it is in.
  EXPECT_GE(WalFiles(), 2);
  for (int reopen = 0; reopen < 2; reopen++) {
    OpenFamilies({"a", "b"});
    EXPECT_EQ("0,1,2,3", GetIn(1, "k"));
    EXPECT_EQ("0,1,2", GetIn(2, "k"));
  }
  // Once b is flushed too, the older WALs go.
  ASSERT_OK(db_->Flush(FlushOptions(), Family(2)));
  ASSERT_OK(db_->Flush(FlushOptions(), Family(1)));
  ASSERT_OK(db_->Flush(FlushOptions(), Family(0)));
  EXPECT_EQ(1, WalFiles());
  OpenFamilies({"a", "b"});
  EXPECT_EQ("0,1,2,3", GetIn(1, "k"));
  EXPECT_EQ("0,1,2", GetIn(2, "k"));
}

TEST_F(DBColumnFamilyTest, RecoveryPassesOverADroppedFamilysRecords) {
  options_.create_missing_column_families = true;
  OpenFamilies({"a", "b"});
  ASSERT_OK(db_->Put(WriteOptions(), Family(1), "k", "a"));
  ASSERT_OK(db_->Put(WriteOptions(), Family(2), "k", "b"));
  ASSERT_OK(db_->DropColumnFamily(Family(2)));
  ASSERT_OK(db_->Put(WriteOptions(), Family(1), "k2", "a2"));
  options_.create_missing_column_families = false;
  OpenFamilies({"a"});
  EXPECT_EQ("a", GetIn(1, "k"));
  EXPECT_EQ("a2", GetIn(1, "k2"));
  EXPECT_EQ((std::vector<std::string>{"default", "a"}), List());
  // A family created anew under the old name gets none of the dropped one's records.
  options_.create_missing_column_families = true;
  OpenFamilies({"a", "b"});
  EXPECT_EQ("NOT_FOUND", GetIn(2, "k"));
}

// max_successive_merges is each family's own: Merges fold into a Put in the family that
// asks for it, as SetOptions on that family says, and stack in the others.
TEST_F(DBColumnFamilyTest, EachFamilyFoldsMergesByItsOwnLimit) {
  ColumnFamilyOptions folding;
  folding.merge_operator = std::make_shared<JoinOperator>();
  folding.max_successive_merges = 2;
  ColumnFamilyOptions stacking = folding;
  stacking.max_successive_merges = 0;
  per_family_ = {{"folding", folding}, {"stacking", stacking}};
  options_.create_missing_column_families = true;
  OpenFamilies({"folding", "stacking"});
  auto operands = [this](size_t family, const std::string& key) {
    std::vector<PinnableSlice> out(20);
    GetMergeOperandsOptions gmo;
    gmo.expected_max_number_of_operands = 20;
    int n = 0;
    EXPECT_OK(db_->GetMergeOperands(ReadOptions(), Family(family), key, out.data(), &gmo, &n));
    return n;
  };
  for (int i = 0; i < 6; i++) {
    for (size_t f : {1, 2}) {
      ASSERT_OK(db_->Merge(WriteOptions(), Family(f), "k", std::to_string(i)));
    }
  }
  EXPECT_EQ("0,1,2,3,4,5", GetIn(1, "k"));
  EXPECT_EQ("0,1,2,3,4,5", GetIn(2, "k"));
  EXPECT_LE(operands(1, "k"), 3);  // a Put and at most two operands above it
  EXPECT_EQ(6, operands(2, "k"));
  // The limit follows SetOptions, family by family.
  ASSERT_OK(db_->SetOptions(Family(1), {{"max_successive_merges", "0"}}));
  ASSERT_OK(db_->SetOptions(Family(2), {{"max_successive_merges", "2"}}));
  for (int i = 0; i < 6; i++) {
    for (size_t f : {1, 2}) {
      ASSERT_OK(db_->Merge(WriteOptions(), Family(f), "j", std::to_string(i)));
    }
  }
  EXPECT_EQ(6, operands(1, "j"));
  EXPECT_LE(operands(2, "j"), 3);
  EXPECT_EQ("0,1,2,3,4,5", GetIn(2, "j"));
}

// Each family's flushes and compactions count in its own table, named as RocksDB names it;
// "stats" adds the DB's writes and stalls, and "dbstats" is those alone.
TEST_F(DBColumnFamilyTest, CompactionStatsArePerFamily) {
  options_.create_missing_column_families = true;
  OpenFamilies({"one"});
  for (int i = 0; i < 3; i++) {
    ASSERT_OK(db_->Put(WriteOptions(), Family(1), "k" + std::to_string(i), "v"));
    ASSERT_OK(db_->Flush(FlushOptions(), Family(1)));
  }
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), Family(1), nullptr, nullptr));
  // The L0 row's Comp(cnt) (its 15th field, the size being two): flushes into L0.
  auto l0_jobs = [](const std::string& stats) -> std::string {
    const size_t at = stats.find("\n  L0 ");
    if (at == std::string::npos) return "no L0 row";
    std::istringstream row(stats.substr(at + 1, stats.find('\n', at + 1) - at - 1));
    std::string field;
    for (int i = 0; i < 15; i++) row >> field;
    return field;
  };
  std::string one, dflt, db_stats, both;
  ASSERT_TRUE(db_->GetProperty(Family(1), "shale.cfstats", &one));
  ASSERT_TRUE(db_->GetProperty(Family(0), "rocksdb.cfstats", &dflt));
  ASSERT_TRUE(db_->GetProperty(Family(1), DB::Properties::kDBStats, &db_stats));
  ASSERT_TRUE(db_->GetProperty(Family(1), DB::Properties::kStats, &both));
  EXPECT_NE(std::string::npos, one.find("** Compaction Stats [one] **")) << one;
  EXPECT_EQ("3", l0_jobs(one)) << one;
  EXPECT_NE(std::string::npos, one.find("\n  L1 ")) << one;  // the compaction's output
  EXPECT_NE(std::string::npos, dflt.find("** Compaction Stats [default] **")) << dflt;
  EXPECT_EQ("no L0 row", l0_jobs(dflt)) << dflt;
  EXPECT_EQ(std::string::npos, one.find("Cumulative writes")) << one;
  EXPECT_NE(std::string::npos, db_stats.find("Cumulative writes: 3 writes")) << db_stats;
  EXPECT_NE(std::string::npos, both.find("** Compaction Stats [one] **")) << both;
  EXPECT_NE(std::string::npos, both.find("Cumulative stall:")) << both;

  // The same figures as maps, with RocksDB's keys.
  std::map<std::string, std::string> one_map, dflt_map, db_map, none;
  ASSERT_TRUE(db_->GetMapProperty(Family(1), "rocksdb.cfstats", &one_map));
  ASSERT_TRUE(db_->GetMapProperty(DB::Properties::kCFStats, &dflt_map));
  ASSERT_TRUE(db_->GetMapProperty(Family(1), DB::Properties::kDBStats, &db_map));
  EXPECT_EQ(3.0, std::stod(one_map["compaction.L0.CompCount"]));
  EXPECT_EQ(1.0, std::stod(one_map["compaction.L1.CompCount"]));
  EXPECT_EQ(1.0, std::stod(one_map["compaction.Sum.NumFiles"]));
  EXPECT_EQ(0u, dflt_map.count("compaction.L0.CompCount"));
  EXPECT_EQ("3", db_map["db.user_keys_written"]);
  EXPECT_EQ(1u, db_map.count("db.uptime"));
  EXPECT_FALSE(db_->GetMapProperty(Family(1), DB::Properties::kStats, &none));
  EXPECT_FALSE(db_->GetMapProperty(Family(1), "shale.no-such-property", &none));
}

TEST_F(DBColumnFamilyTest, AForeignHandleIsRefused) {
  OpenFamilies({});
  class Foreign : public ColumnFamilyHandle {
   public:
    const std::string& GetName() const override { return name_; }
    uint32_t GetID() const override { return 7; }
    Status GetDescriptor(ColumnFamilyDescriptor*) override { return Status::OK(); }
    const Comparator* GetComparator() const override { return BytewiseComparator(); }

   private:
    std::string name_ = "foreign";
  } foreign;
  std::string v;
  EXPECT_TRUE(db_->Get(ReadOptions(), &foreign, "k", &v).IsInvalidArgument());
  EXPECT_TRUE(db_->Put(WriteOptions(), &foreign, "k", "v").IsInvalidArgument());
  EXPECT_TRUE(db_->DropColumnFamily(&foreign).IsInvalidArgument());
  EXPECT_TRUE(db_->Flush(FlushOptions(), &foreign).IsInvalidArgument());
  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions(), &foreign));
  EXPECT_TRUE(it->status().IsInvalidArgument());
}

}  // namespace
}  // namespace shale
