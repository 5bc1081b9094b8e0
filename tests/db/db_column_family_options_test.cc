// The OPTIONS file of a DB with several column families, through a real DB: a
// [CFOptions "name"] and [TableOptions/BlockBasedTable "name"] section per live family,
// written at Open, after SetOptions / SetDBOptions, and after CreateColumnFamily and
// DropColumnFamily; LoadLatestOptions gives back one descriptor per family with its
// options as in effect, and a DB reopens with them.
//
// With SHALE_KEEP_OPTIONS_DIR set, the tests marked below copy the newest OPTIONS file
// there as <test name>.ini, for tools/rocksdb_reads_options.sh (RocksDB reads it).
#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "options/options_file.h"
#include "shale/comparator.h"
#include "shale/db.h"
#include "shale/filter_policy.h"
#include "shale/table.h"
#include "shale/utilities/merge_operators.h"
#include "shale/utilities/options_util.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/family_handles.h"

namespace shale {
namespace {

class DBColumnFamilyOptionsTest : public DBTestBase {
 protected:
  DBColumnFamilyOptionsTest() : DBTestBase("db_column_family_options") {
    options_.stats_dump_period_sec = 0;
    options_.create_missing_column_families = true;
  }
  ~DBColumnFamilyOptionsTest() override { ReleaseHandles(db_.get(), &handles_); }

  // Opens with `descs` (the default family first), handles in handles_.
  Status TryOpenWith(const DBOptions& db_options,
                     const std::vector<ColumnFamilyDescriptor>& descs) {
    ReleaseHandles(db_.get(), &handles_);
    db_.reset();
    DB* db = nullptr;
    Status s = DB::Open(db_options, dbname_, descs, &handles_, &db);
    db_.reset(db);
    return s;
  }
  void CloseAll() {
    ReleaseHandles(db_.get(), &handles_);
    ASSERT_OK(TryClose());
    db_.reset();
  }

  // Three families whose options differ from each other's and from the defaults.
  std::vector<ColumnFamilyDescriptor> ThreeFamilies() {
    ColumnFamilyOptions hot;
    hot.write_buffer_size = 1 << 20;
    hot.comparator = ReverseBytewiseComparator();
    hot.merge_operator = MergeOperators::CreateUInt64AddOperator();
    hot.num_levels = 4;
    hot.level0_file_num_compaction_trigger = 8;
    hot.compression = kNoCompression;
    BlockBasedTableOptions hot_table;
    hot_table.block_size = 8 << 10;
    hot_table.filter_policy.reset(NewBloomFilterPolicy(10));
    hot.table_factory.reset(NewBlockBasedTableFactory(hot_table));

    ColumnFamilyOptions cold;
    cold.write_buffer_size = 2 << 20;
    cold.merge_operator = MergeOperators::CreateStringAppendOperator();
    cold.num_levels = 5;
    cold.disable_auto_compactions = true;
    cold.max_bytes_for_level_base = 64 << 20;
    BlockBasedTableOptions cold_table;
    cold_table.block_size = 32 << 10;
    cold_table.filter_policy.reset(NewRibbonFilterPolicy(12, 1));
    cold.table_factory.reset(NewBlockBasedTableFactory(cold_table));
    return {{kDefaultColumnFamilyName, options_}, {"hot", hot}, {"cold", cold}};
  }

  // The newest OPTIONS file, as LoadLatestOptions reads it.
  void Load(DBOptions* db_options, std::vector<ColumnFamilyDescriptor>* descs) {
    ConfigOptions config;
    ASSERT_OK(LoadLatestOptions(config, dbname_, db_options, descs));
  }
  // The loaded families by name.
  std::map<std::string, ColumnFamilyOptions> LoadByName(DBOptions* db_options) {
    std::vector<ColumnFamilyDescriptor> descs;
    Load(db_options, &descs);
    std::map<std::string, ColumnFamilyOptions> by_name;
    for (const ColumnFamilyDescriptor& d : descs) by_name[d.name] = d.options;
    EXPECT_EQ(by_name.size(), descs.size());
    return by_name;
  }
  std::vector<std::string> LoadedNames() {
    DBOptions db_options;
    std::vector<ColumnFamilyDescriptor> descs;
    Load(&db_options, &descs);
    std::vector<std::string> names;
    for (const ColumnFamilyDescriptor& d : descs) names.push_back(d.name);
    return names;
  }
  std::string LatestText() {
    std::string name, text;
    EXPECT_OK(GetLatestOptionsFileName(dbname_, Env::Default(), &name));
    EXPECT_OK(ReadFileToString(Env::Default(), dbname_ + "/" + name, &text));
    return text;
  }
  ColumnFamilyHandle* Handle(const std::string& name) {
    for (ColumnFamilyHandle* h : handles_) {
      if (h->GetName() == name) return h;
    }
    ADD_FAILURE() << "no handle for " << name;
    return db_->DefaultColumnFamily();
  }
  // The file's order: by id, which is the order of creation.
  static std::vector<ColumnFamilyHandle*> ById(std::vector<ColumnFamilyHandle*> handles) {
    std::sort(handles.begin(), handles.end(),
              [](ColumnFamilyHandle* a, ColumnFamilyHandle* b) { return a->GetID() < b->GetID(); });
    return handles;
  }
  static std::vector<std::string> NamesById(const std::vector<ColumnFamilyHandle*>& handles) {
    std::vector<std::string> names;
    for (ColumnFamilyHandle* h : ById(handles)) names.push_back(h->GetName());
    return names;
  }
  // What the open DB runs with, in the file's spelling: every option of every family, in
  // the file's order.
  std::string InEffect(const std::vector<ColumnFamilyHandle*>& handles) {
    std::vector<std::string> names;
    std::vector<ColumnFamilyOptions> families;
    for (ColumnFamilyHandle* h : ById(handles)) {
      names.push_back(h->GetName());
      families.push_back(db_->GetOptions(h));
    }
    return SerializeOptions(db_->GetDBOptions(), names, families);
  }
  std::string Loaded() {
    DBOptions db_options;
    std::vector<ColumnFamilyDescriptor> descs;
    Load(&db_options, &descs);
    std::vector<std::string> names;
    std::vector<ColumnFamilyOptions> families;
    for (const ColumnFamilyDescriptor& d : descs) {
      names.push_back(d.name);
      families.push_back(d.options);
    }
    return SerializeOptions(db_options, names, families);
  }
  // For tools/rocksdb_reads_options.sh (see the top of the file).
  void KeepForRocksDB() {
    const char* dir = std::getenv("SHALE_KEEP_OPTIONS_DIR");
    if (dir == nullptr) return;
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_OK(
        WriteStringToFile(Env::Default(), LatestText(), std::string(dir) + "/" + name + ".ini"));
  }

  std::vector<ColumnFamilyHandle*> handles_;
};

// Kept for RocksDB.
TEST_F(DBColumnFamilyOptionsTest, EveryFamilyHasItsSectionsWithItsOptions) {
  ASSERT_OK(TryOpenWith(options_, ThreeFamilies()));
  const std::string text = LatestText();
  for (const char* name : {"default", "hot", "cold"}) {
    for (const std::string section : {"CFOptions", "TableOptions/BlockBasedTable"}) {
      const std::string header = "[" + section + " \"" + name + "\"]";
      EXPECT_NE(text.find(header), std::string::npos) << header << " missing in\n" << text;
    }
  }
  EXPECT_EQ(LoadedNames(), NamesById(handles_));
  // Every option of every family as in effect, and they do differ.
  EXPECT_EQ(Loaded(), InEffect(handles_));
  DBOptions db_options;
  std::map<std::string, ColumnFamilyOptions> by_name = LoadByName(&db_options);
  ASSERT_EQ(by_name.size(), 3u);
  const ColumnFamilyOptions& hot = by_name["hot"];
  const ColumnFamilyOptions& cold = by_name["cold"];
  EXPECT_EQ(by_name["default"].write_buffer_size, options_.write_buffer_size);
  EXPECT_EQ(hot.write_buffer_size, 1u << 20);
  EXPECT_EQ(hot.comparator, ReverseBytewiseComparator());
  ASSERT_NE(hot.merge_operator, nullptr);
  EXPECT_STREQ(hot.merge_operator->Name(), "UInt64AddOperator");
  EXPECT_EQ(hot.num_levels, 4);
  EXPECT_EQ(hot.level0_file_num_compaction_trigger, 8);
  EXPECT_EQ(hot.compression, kNoCompression);
  EXPECT_EQ(cold.write_buffer_size, 2u << 20);
  EXPECT_EQ(cold.comparator, BytewiseComparator());
  ASSERT_NE(cold.merge_operator, nullptr);
  EXPECT_STREQ(cold.merge_operator->Name(), "StringAppendOperator");
  EXPECT_EQ(cold.num_levels, 5);
  EXPECT_TRUE(cold.disable_auto_compactions);
  EXPECT_EQ(cold.max_bytes_for_level_base, 64u << 20);
  EXPECT_NE(text.find("block_size=8192"), std::string::npos);
  EXPECT_NE(text.find("block_size=32768"), std::string::npos);
  EXPECT_NE(text.find("filter_policy=ribbonfilter:12:1"), std::string::npos);
  KeepForRocksDB();
}

TEST_F(DBColumnFamilyOptionsTest, TheLoadedDescriptorsReopenTheDB) {
  ASSERT_OK(TryOpenWith(options_, ThreeFamilies()));
  std::string one(8, '\0'), two(8, '\0');
  one[0] = 1;
  two[0] = 2;
  ASSERT_OK(db_->Merge(WriteOptions(), Handle("hot"), "a", one));
  ASSERT_OK(db_->Merge(WriteOptions(), Handle("hot"), "a", two));
  ASSERT_OK(db_->Put(WriteOptions(), Handle("hot"), "b", "x"));
  ASSERT_OK(db_->Merge(WriteOptions(), Handle("cold"), "k", "p"));
  ASSERT_OK(db_->Merge(WriteOptions(), Handle("cold"), "k", "q"));
  ASSERT_OK(db_->Flush(FlushOptions(), handles_));
  const std::string before = InEffect(handles_);
  CloseAll();

  DBOptions db_options;
  std::vector<ColumnFamilyDescriptor> descs;
  Load(&db_options, &descs);
  // The comparators are checked against the MANIFEST's names: a lost one would refuse.
  ASSERT_OK(TryOpenWith(db_options, descs));
  EXPECT_EQ(InEffect(handles_), before);
  std::string v;
  ASSERT_OK(db_->Get(ReadOptions(), Handle("hot"), "a", &v));
  ASSERT_EQ(v.size(), 8u);
  EXPECT_EQ(v[0], 3);  // added, not appended
  ASSERT_OK(db_->Get(ReadOptions(), Handle("cold"), "k", &v));
  EXPECT_EQ(v, "p,q");
  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions(), Handle("hot")));
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "b");  // reverse order
}

TEST_F(DBColumnFamilyOptionsTest, CreateAndDropRewriteTheFile) {
  ASSERT_OK(TryOpenWith(options_, {{kDefaultColumnFamilyName, options_}}));
  EXPECT_EQ(LoadedNames(), (std::vector<std::string>{"default"}));
  std::vector<ColumnFamilyDescriptor> families = ThreeFamilies();
  ColumnFamilyHandle* hot = nullptr;
  ColumnFamilyHandle* cold = nullptr;
  ASSERT_OK(db_->CreateColumnFamily(families[1].options, "hot", &hot));
  EXPECT_EQ(LoadedNames(), (std::vector<std::string>{"default", "hot"}));
  ASSERT_OK(db_->CreateColumnFamily(families[2].options, "cold", &cold));
  EXPECT_EQ(LoadedNames(), (std::vector<std::string>{"default", "hot", "cold"}));
  EXPECT_EQ(Loaded(), InEffect({db_->DefaultColumnFamily(), hot, cold}));

  ASSERT_OK(db_->DropColumnFamily(hot));
  EXPECT_EQ(LoadedNames(), (std::vector<std::string>{"default", "cold"}));
  EXPECT_EQ(Loaded(), InEffect({db_->DefaultColumnFamily(), cold}));
  ASSERT_OK(db_->DestroyColumnFamilyHandle(hot));
  ASSERT_OK(db_->DestroyColumnFamilyHandle(cold));
  CloseAll();

  // The file names exactly the families the DB has: they open it.
  DBOptions db_options;
  std::vector<ColumnFamilyDescriptor> descs;
  Load(&db_options, &descs);
  db_options.create_missing_column_families = false;
  ASSERT_OK(TryOpenWith(db_options, descs));
  EXPECT_EQ(handles_.size(), 2u);
}

TEST_F(DBColumnFamilyOptionsTest, SetOptionsChangesOnlyItsFamilysSection) {
  ASSERT_OK(TryOpenWith(options_, ThreeFamilies()));
  ASSERT_OK(db_->SetOptions(Handle("hot"), {{"write_buffer_size", "3145728"},
                                            {"level0_file_num_compaction_trigger", "6"}}));
  ASSERT_OK(db_->SetDBOptions({{"max_background_jobs", "3"}}));
  EXPECT_EQ(Loaded(), InEffect(handles_));
  DBOptions db_options;
  std::map<std::string, ColumnFamilyOptions> by_name = LoadByName(&db_options);
  ASSERT_EQ(by_name.size(), 3u);
  EXPECT_EQ(db_options.max_background_jobs, 3);
  EXPECT_EQ(by_name["default"].write_buffer_size, options_.write_buffer_size);
  EXPECT_EQ(by_name["hot"].write_buffer_size, 3u << 20);
  EXPECT_EQ(by_name["hot"].level0_file_num_compaction_trigger, 6);
  EXPECT_EQ(by_name["cold"].write_buffer_size, 2u << 20);
  EXPECT_EQ(by_name["cold"].level0_file_num_compaction_trigger,
            ColumnFamilyOptions().level0_file_num_compaction_trigger);
}

// RocksDB escapes '\', '#', ':', CR and LF in a section's family name. Kept for RocksDB.
TEST_F(DBColumnFamilyOptionsTest, NamesWithRocksDBsSpecialCharactersReadBack) {
  const std::vector<std::string> odd = {"a:b",          "x#y",        "back\\slash",
                                        "two\nlines\r", "quote\"d ]", " spaced "};
  std::vector<ColumnFamilyDescriptor> descs = {{kDefaultColumnFamilyName, options_}};
  for (size_t i = 0; i < odd.size(); ++i) {
    ColumnFamilyOptions cf;
    cf.write_buffer_size = (i + 1) << 20;
    descs.emplace_back(odd[i], cf);
  }
  ASSERT_OK(TryOpenWith(options_, descs));
  EXPECT_EQ(LoadedNames(), NamesById(handles_));
  EXPECT_EQ(Loaded(), InEffect(handles_));
  KeepForRocksDB();
  CloseAll();
  DBOptions db_options;
  std::vector<ColumnFamilyDescriptor> loaded;
  Load(&db_options, &loaded);
  ASSERT_OK(TryOpenWith(db_options, loaded));
  ASSERT_EQ(handles_.size(), odd.size() + 1);
  for (size_t i = 0; i < odd.size(); ++i) {
    EXPECT_EQ(db_->GetOptions(Handle(odd[i])).write_buffer_size, (i + 1) << 20) << odd[i];
  }
}

}  // namespace
}  // namespace shale
