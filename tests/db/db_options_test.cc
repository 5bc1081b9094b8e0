// Options at DB::Open: the option tables' bounds (clamped with a LOG line, or refused), the
// options written to the LOG, the OPTIONS file Open writes, and how table files are read
// (pread by default, a mapping with allow_mmap_reads).
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

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

TEST_F(DBOptionsTest, MmapReadsRefuseDirectReads) {
  options_.allow_mmap_reads = true;
  options_.use_direct_reads = true;
  Status s = TryReopen();
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_NE(s.ToString().find("allow_mmap_reads"), std::string::npos) << s.ToString();
  options_.use_direct_reads = false;
  Open();
  ASSERT_OK(Put("k", "v"));
  ASSERT_OK(Flush());
  EXPECT_EQ(Get("k"), "v");
}

// By default (allow_mmap_reads false, as in RocksDB) table files are read with pread, so a
// table file cut short from outside while the DB has it open makes reads fail with a
// Status. Read through a mapping, the same read would end the process with SIGBUS.
TEST_F(DBOptionsTest, TableFileCutShortWhileOpenFailsReadsWithoutCrashing) {
  BlockBasedTableOptions t;
  t.no_block_cache = true;
  options_.table_factory.reset(NewBlockBasedTableFactory(t));
  Open();
  const std::string value(200, 'v');
  for (int i = 0; i < 2000; i++) ASSERT_OK(Put("key" + std::to_string(i), value));
  ASSERT_OK(Flush());
  ASSERT_EQ(Get("key7"), value);  // the table is open now
  std::vector<std::string> children;
  ASSERT_OK(Env::Default()->GetChildren(dbname_, &children));
  int cut = 0;
  for (const std::string& f : children) {
    if (f.size() > 4 && f.compare(f.size() - 4, 4, ".sst") == 0) {
      ASSERT_EQ(truncate((dbname_ + "/" + f).c_str(), 100), 0);
      cut++;
    }
  }
  ASSERT_EQ(cut, 1);
  int failed = 0;
  for (int i = 0; i < 2000; i += 97) {
    std::string got;
    Status s = db_->Get(ReadOptions(), "key" + std::to_string(i), &got);
    EXPECT_FALSE(s.ok() && got != value) << "key" << i << " answered wrongly";
    if (!s.ok()) {
      EXPECT_TRUE(s.IsCorruption() || s.IsIOError()) << s.ToString();
      failed++;
    }
  }
  EXPECT_GT(failed, 0);
  Close();  // what follows is the caller's: the file stays damaged
}

TEST_F(DBOptionsTest, LogListsEveryOption) {
  options_.max_successive_merges = 5;
  Open();
  const std::string log = Log();
  for (const char* line :
       {"Options.max_successive_merges: 5", "Options.create_if_missing: 1", "Options.num_levels: 7",
        "table_options.block_restart_interval: 16", "Options.max_background_compactions: -1"}) {
    EXPECT_NE(log.find(line), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace shale
