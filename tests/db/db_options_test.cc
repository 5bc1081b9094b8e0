// Options at DB::Open: the option tables' bounds (clamped with a LOG line, or refused), the
// options written to the LOG, and the OPTIONS file Open writes.
#include <gtest/gtest.h>

#include <string>

#include "shale/db.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

class DBOptionsTest : public DBTestBase {
 protected:
  DBOptionsTest() : DBTestBase("db_options") { options_.stats_dump_period_sec = 0; }
  // The LOG, after closing the DB (which flushes it).
  std::string Log() {
    Close();
    std::string text;
    EXPECT_OK(ReadFileToString(Env::Default(), dbname_ + "/LOG", &text));
    return text;
  }
};

TEST_F(DBOptionsTest, OpenRefusesOutOfBoundsValuesNamingThem) {
  options_.num_levels = 1;
  Status s = TryReopen();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("num_levels"), std::string::npos) << s.ToString();
  options_.num_levels = 7;
  BlockBasedTableOptions t;
  t.format_version = 4;
  options_.table_factory.reset(NewBlockBasedTableFactory(t));
  s = TryReopen();
  EXPECT_NE(s.ToString().find("format_version"), std::string::npos) << s.ToString();
}

TEST_F(DBOptionsTest, OpenClampsAsRocksDBDoesAndLogsIt) {
  options_.write_buffer_size = 10;
  options_.min_write_buffer_number_to_merge = 3;
  options_.max_background_flushes = 2;
  Open();
  EXPECT_EQ(db_->GetOptions().write_buffer_size, 4096u);
  EXPECT_EQ(db_->GetOptions().min_write_buffer_number_to_merge, 1);
  const std::string log = Log();
  EXPECT_NE(log.find("write_buffer_size 10 is out of bounds; using 4096"), std::string::npos)
      << log;
  EXPECT_NE(log.find("min_write_buffer_number_to_merge 3 is out of bounds; using 1"),
            std::string::npos);
  EXPECT_NE(log.find("max_background_flushes 2: flushes run one at a time"), std::string::npos);
}

TEST_F(DBOptionsTest, LogListsEveryOption) {
  options_.max_successive_merges = 5;
  Open();
  const std::string log = Log();
  for (const char* line : {"Options.max_successive_merges: 5", "Options.create_if_missing: 1",
                           "Options.num_levels: 7", "table_options.block_restart_interval: 16",
                           "Options.max_background_compactions: -1"}) {
    EXPECT_NE(log.find(line), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace shale
