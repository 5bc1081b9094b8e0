// DBTestBase itself: the helpers every DB suite relies on must report what the DB holds,
// or a suite built on them could pass while the DB is wrong.
#include "tests/testutil/db_test_base.h"

#include <gtest/gtest.h>

#include <string>

namespace shale {
namespace {

class DBTestBaseTest : public DBTestBase {
 protected:
  DBTestBaseTest() : DBTestBase("db_test_base") { options_.disable_auto_compactions = true; }
};

TEST_F(DBTestBaseTest, ReadsShowValuesDeletionsAndSnapshots) {
  Open();
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  EXPECT_EQ(Contents(), "");
  ASSERT_OK(Put("a", "1"));
  ASSERT_OK(Put("b", "2"));
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_OK(Delete("a"));
  ASSERT_OK(Put("c", "3"));
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  EXPECT_EQ(Get("a", snap), "1");
  EXPECT_EQ(Contents(), "b=2,c=3,");
  EXPECT_EQ(Contents(ReadOptions(), /*reverse=*/true), "c=3,b=2,");
  ReadOptions at_snap;
  at_snap.snapshot = snap;
  EXPECT_EQ(Contents(at_snap), "a=1,b=2,");
  db_->ReleaseSnapshot(snap);
  Reopen();
  EXPECT_EQ(Contents(), "b=2,c=3,");
}

TEST_F(DBTestBaseTest, FilesPerLevelFollowsFlushesAndCompactions) {
  Open();
  EXPECT_EQ(FilesPerLevel(), "");
  ASSERT_OK(Put("a", "1"));
  ASSERT_OK(Flush());
  EXPECT_EQ(FilesPerLevel(), "1");
  ASSERT_OK(Put("b", "2"));
  ASSERT_OK(Flush());
  EXPECT_EQ(FilesPerLevel(), "2");
  ASSERT_OK(CompactAll());
  // Whatever level the compaction wrote to, the shape lists it and nothing in L0.
  const std::string shape = FilesPerLevel();
  EXPECT_EQ(shape.substr(0, 2), "0,") << shape;
  EXPECT_EQ(shape.back(), '1') << shape;
  uint64_t total = 0;
  for (int level = 0; level < options_.num_levels; level++) {
    total += IntProperty("rocksdb.num-files-at-level" + std::to_string(level));
  }
  EXPECT_EQ(total, 1u);
}

TEST_F(DBTestBaseTest, DestroyRemovesTheDBAndTryReopenReportsIt) {
  Open();
  ASSERT_OK(Put("a", "1"));
  Destroy();
  options_.create_if_missing = false;
  EXPECT_TRUE(TryReopen().IsInvalidArgument());
  EXPECT_EQ(db_, nullptr);
}

TEST_F(DBTestBaseTest, FaultInjectionEnvReachesTheDB) {
  FaultInjectionTestEnv* env = UseFaultInjectionEnv();
  EXPECT_EQ(options_.env, env);
  Open();
  ASSERT_OK(Put("a", "1"));
  env->SetFilesystemActive(false);
  EXPECT_NOK(Put("b", "2"));
  env->SetFilesystemActive(true);
  // The DB stays in its error state; the base's close may report it again.
  TryClose().PermitUncheckedError();
}

}  // namespace
}  // namespace shale
