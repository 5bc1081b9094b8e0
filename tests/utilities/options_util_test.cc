// LoadLatestOptions / LoadOptionsFromFile / GetLatestOptionsFileName over OPTIONS files
// written by the options layer and by RocksDB.
#include "shale/utilities/options_util.h"

#include <gtest/gtest.h>

#include "options/options_file.h"
#include "shale/merge_operator.h"
#include "shale/utilities/merge_operators.h"
#include "table/table_factory.h"

namespace shale {
namespace {

const BlockBasedTableOptions& TableOptionsOf(const ColumnFamilyOptions& cf) {
  return static_cast<const BlockBasedTableFactory*>(cf.table_factory.get())->table_options();
}

class OptionsUtilTest : public testing::Test {
 protected:
  OptionsUtilTest() : env_(NewMemEnv(Env::Default())) {
    EXPECT_TRUE(env_->CreateDirIfMissing(dir_).ok());
    config_.env = env_.get();
  }
  std::unique_ptr<Env> env_;
  const std::string dir_ = "/db";
  ConfigOptions config_;
};

TEST_F(OptionsUtilTest, LatestFileWinsAndObjectsAreRebuilt) {
  DBOptions db;
  ColumnFamilyOptions cf;
  cf.write_buffer_size = 1 << 20;
  ASSERT_TRUE(WriteOptionsFile(env_.get(), dir_, 4, db, cf, nullptr).ok());
  db.max_background_jobs = 6;
  cf.write_buffer_size = 3 << 20;
  cf.merge_operator = MergeOperators::CreateUInt64AddOperator();
  BlockBasedTableOptions t;
  t.block_size = 16384;
  t.filter_policy.reset(NewBloomFilterPolicy(7));
  cf.table_factory.reset(NewBlockBasedTableFactory(t));
  ASSERT_TRUE(WriteOptionsFile(env_.get(), dir_, 11, db, cf, nullptr).ok());

  std::string name;
  ASSERT_TRUE(GetLatestOptionsFileName(dir_, env_.get(), &name).ok());
  EXPECT_EQ(name, "OPTIONS-000011");
  DBOptions loaded;
  std::vector<ColumnFamilyDescriptor> descs;
  std::shared_ptr<Cache> cache = NewLRUCache(1 << 20);
  ASSERT_TRUE(LoadLatestOptions(config_, dir_, &loaded, &descs, &cache).ok());
  EXPECT_EQ(loaded.max_background_jobs, 6);
  EXPECT_EQ(loaded.env, env_.get());
  ASSERT_EQ(descs.size(), 1u);
  EXPECT_EQ(descs[0].name, "default");
  EXPECT_EQ(descs[0].options.write_buffer_size, size_t{3} << 20);
  ASSERT_NE(descs[0].options.merge_operator, nullptr);
  EXPECT_STREQ(descs[0].options.merge_operator->Name(), "UInt64AddOperator");
  const BlockBasedTableOptions& lt = TableOptionsOf(descs[0].options);
  EXPECT_EQ(lt.block_size, 16384u);
  ASSERT_NE(lt.filter_policy, nullptr);
  EXPECT_EQ(lt.filter_policy->GetBitsPerKey(), 7);
  EXPECT_EQ(lt.block_cache, cache);

  ASSERT_TRUE(LoadOptionsFromFile(config_, dir_ + "/OPTIONS-000004", &loaded, &descs).ok());
  EXPECT_EQ(descs[0].options.write_buffer_size, size_t{1} << 20);
  EXPECT_EQ(descs[0].options.merge_operator, nullptr);
}

TEST_F(OptionsUtilTest, RefusalsAndNotFound) {
  DBOptions db;
  std::vector<ColumnFamilyDescriptor> descs;
  EXPECT_TRUE(LoadLatestOptions(config_, dir_, &db, &descs).IsNotFound());
  std::string text = SerializeOptions(DBOptions(), {"default"}, {ColumnFamilyOptions()});
  text.replace(text.find("merge_operator=nullptr"), 22, "merge_operator=NoSuchOperator");
  ASSERT_TRUE(WriteStringToFile(env_.get(), text, OptionsFilePath(dir_, 3)).ok());
  Status s = LoadLatestOptions(config_, dir_, &db, &descs);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("NoSuchOperator"), std::string::npos);
}

// RocksDB writes a configured operator as {id=...;delimiter=...;}; the delimiter is kept.
TEST_F(OptionsUtilTest, ReadsRocksDBsConfiguredMergeOperator) {
  std::string text = SerializeOptions(DBOptions(), {"default"}, {ColumnFamilyOptions()});
  text.replace(text.find("merge_operator=nullptr"), 22,
               "merge_operator={id=StringAppendOperator;delimiter=\\:;}");
  ASSERT_TRUE(WriteStringToFile(env_.get(), text, OptionsFilePath(dir_, 3)).ok());
  DBOptions db;
  std::vector<ColumnFamilyDescriptor> descs;
  ASSERT_TRUE(LoadLatestOptions(config_, dir_, &db, &descs).ok());
  ASSERT_NE(descs[0].options.merge_operator, nullptr);
  std::string merged;
  std::vector<Slice> operands = {Slice("b")};
  Slice existing_operand;
  MergeOperator::MergeOperationOutput out(merged, existing_operand);
  // Fold "a" with "b": the delimiter read from the file goes between them.
  Slice existing("a");
  MergeOperator::MergeOperationInput in(Slice("k"), &existing, operands, nullptr);
  ASSERT_TRUE(descs[0].options.merge_operator->FullMergeV2(in, &out));
  EXPECT_EQ(merged, "a:b");
}

}  // namespace
}  // namespace shale
