// SetOptions / SetDBOptions on an open DB: each option changed shows its effect on the next
// write, flush or compaction; refusals change nothing; the change is logged and persisted in
// a new OPTIONS file that LoadLatestOptions reads back; SetOptions races writers safely
// (run under ThreadSanitizer in CI).
//
// No test asserts a duration: a blocked writer is checked to be still blocked and then
// released by the change that must release it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "db/db_impl.h"
#include "shale/db.h"
#include "shale/utilities/merge_operators.h"
#include "shale/utilities/options_util.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/gated_sst_env.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

class DBSetOptionsTest : public DBTestBase {
 protected:
  DBSetOptionsTest() : DBTestBase("db_set_options") {
    options_.env = &env_;
    options_.stats_dump_period_sec = 0;
  }
  ~DBSetOptionsTest() override {
    env_.SetOpen(true);  // a job held at the gate would keep Close waiting
    TryClose().PermitUncheckedError();
    db_.reset();
  }
  int FilesAt(int level) {
    return static_cast<int>(IntProperty("shale.num-files-at-level" + std::to_string(level)));
  }
  // One L0 file holding `n` keys after `prefix`. Files of one prefix overlap, so a
  // compaction rewrites them (no trivial move) and takes them all.
  void MakeL0File(const std::string& prefix, int n = 10) {
    for (int i = 0; i < n; i++) ASSERT_OK(Put(prefix + std::to_string(i), std::string(100, 'v')));
    ASSERT_OK(Flush());
  }
  std::vector<std::string> OptionsFiles() {
    std::vector<std::string> children, result;
    EXPECT_OK(Env::Default()->GetChildren(dbname_, &children));
    for (const std::string& c : children) {
      if (c.rfind("OPTIONS-", 0) == 0) result.push_back(c);
    }
    std::sort(result.begin(), result.end());
    return result;
  }
  std::string Log() {
    std::string text;
    EXPECT_OK(ReadFileToString(Env::Default(), dbname_ + "/LOG", &text));
    return text;
  }

  GatedSstEnv env_;  // in options_.env; the destructor closes the DB before it goes
};

TEST_F(DBSetOptionsTest, RefusalsNameTheOptionAndChangeNothing) {
  Open();
  const Options before = db_->GetOptions();
  const std::vector<std::string> files_before = OptionsFiles();
  struct Case {
    bool db_option;
    std::unordered_map<std::string, std::string> changes;
    const char* named;
  };
  const Case cases[] = {
      {false, {{"num_levels", "3"}}, "num_levels"},
      {false, {{"write_buffer_size", "1M"}, {"no_such_option", "1"}}, "no_such_option"},
      {false, {{"write_buffer_size", "1M"}, {"level0_stop_writes_trigger", "x"}},
       "level0_stop_writes_trigger"},
      {false, {{"write_buffer_size", "1M"}, {"max_background_jobs", "4"}},
       "max_background_jobs"},
      {true, {{"max_background_jobs", "4"}, {"write_buffer_size", "1M"}}, "write_buffer_size"},
      {true, {{"max_background_jobs", "0"}}, "max_background_jobs"},
      {true, {{"use_fsync", "true"}}, "use_fsync"},
      {false, {{"level0_slowdown_writes_trigger", "100"}}, "level0"},
  };
  for (const Case& c : cases) {
    Status s = c.db_option ? db_->SetDBOptions(c.changes) : db_->SetOptions(c.changes);
    EXPECT_TRUE(s.IsInvalidArgument()) << c.named << ": " << s.ToString();
    EXPECT_NE(s.ToString().find(c.named), std::string::npos) << s.ToString();
  }
  const Options after = db_->GetOptions();
  EXPECT_EQ(after.write_buffer_size, before.write_buffer_size);
  EXPECT_EQ(after.max_background_jobs, before.max_background_jobs);
  EXPECT_EQ(after.level0_slowdown_writes_trigger, before.level0_slowdown_writes_trigger);
  EXPECT_EQ(OptionsFiles(), files_before);
}

TEST_F(DBSetOptionsTest, LoweringTheCompactionTriggerStartsACompaction) {
  options_.level0_file_num_compaction_trigger = 8;
  Open();
  for (int i = 0; i < 3; i++) MakeL0File("k");
  ASSERT_OK(WaitForCompact());
  EXPECT_EQ(FilesAt(0), 3);
  ASSERT_OK(db_->SetOptions({{"level0_file_num_compaction_trigger", "2"}}));
  ASSERT_OK(WaitForCompact());
  EXPECT_EQ(FilesAt(0), 0);
  EXPECT_GT(FilesAt(1), 0);
  EXPECT_EQ(db_->GetOptions().level0_file_num_compaction_trigger, 2);
}

TEST_F(DBSetOptionsTest, DisableAutoCompactionsStopsThemAndEnablingResumes) {
  options_.level0_file_num_compaction_trigger = 2;
  Open();
  ASSERT_OK(db_->SetOptions({{"disable_auto_compactions", "true"}}));
  for (int i = 0; i < 4; i++) MakeL0File("k");
  ASSERT_OK(WaitForCompact());
  EXPECT_EQ(FilesAt(0), 4);
  ASSERT_OK(db_->SetOptions({{"disable_auto_compactions", "false"}}));
  ASSERT_OK(WaitForCompact());
  EXPECT_EQ(FilesAt(0), 0);
}

// A new write_buffer_size applies to the memtable created at the next switch.
TEST_F(DBSetOptionsTest, WriteBufferSizeAppliesFromTheNextMemtable) {
  options_.write_buffer_size = 64 << 20;
  options_.disable_auto_compactions = true;
  Open();
  ASSERT_OK(db_->SetOptions({{"write_buffer_size", "65536"}}));
  const std::string value(1000, 'v');
  for (int i = 0; i < 300; i++) ASSERT_OK(db_->Put(WriteOptions(), std::to_string(i), value));
  ASSERT_OK(WaitForCompact());
  EXPECT_EQ(FilesAt(0), 0) << "the memtable created at Open keeps its 64 MiB";
  ASSERT_OK(Flush());  // the switch: the next memtable holds 64 KiB
  EXPECT_EQ(FilesAt(0), 1);
  for (int i = 0; i < 300; i++) ASSERT_OK(db_->Put(WriteOptions(), std::to_string(i), value));
  ASSERT_OK(WaitForCompact());
  EXPECT_GE(FilesAt(0), 4) << "300 KB through 64 KiB memtables";
}

// A new compression applies to the next file written; files already written keep theirs.
TEST_F(DBSetOptionsTest, CompressionAppliesFromTheNextFile) {
  options_.compression = kNoCompression;
  options_.disable_auto_compactions = true;
  Open();
  const std::string value(1000, 'v');  // compresses to almost nothing
  auto write_file = [&](const std::string& prefix) {
    for (int i = 0; i < 100; i++) ASSERT_OK(Put(prefix + std::to_string(i), value));
    ASSERT_OK(Flush());
  };
  write_file("a");
  const uint64_t plain = IntProperty("shale.total-sst-files-size");
  ASSERT_GT(plain, 100u * 1000);
  ASSERT_OK(db_->SetOptions({{"compression", "kLZ4Compression"}}));
  EXPECT_EQ(db_->GetOptions().compression, kLZ4Compression);
  write_file("b");
  const uint64_t second = IntProperty("shale.total-sst-files-size") - plain;
  EXPECT_LT(second, plain / 4) << "the second file is compressed";
  Reopen();  // both files read back, each with its own compression
  EXPECT_EQ(Get("a7"), value);
  EXPECT_EQ(Get("b7"), value);
}

// target_file_size_base cuts the output of the next compaction; files written before keep
// their size.
TEST_F(DBSetOptionsTest, TargetFileSizeAppliesToTheNextCompaction) {
  options_.disable_auto_compactions = true;
  options_.compression = kNoCompression;
  Open();
  auto total_files = [&] {
    int n = 0;
    for (int level = 0; level < options_.num_levels; level++) n += FilesAt(level);
    return n;
  };
  auto compact_prefix = [&](const std::string& prefix) {
    for (int f = 0; f < 4; f++) MakeL0File(prefix + std::to_string(f), 100);
    const std::string begin = prefix, end = prefix + "~";
    const Slice b(begin), e(end);
    ASSERT_OK(db_->CompactRange(CompactRangeOptions(), &b, &e));
  };
  compact_prefix("a");  // 40 KB under the default 64 MiB target: one file
  ASSERT_EQ(total_files(), 1);
  ASSERT_OK(db_->SetOptions({{"target_file_size_base", "8192"}}));
  compact_prefix("b");  // 40 KB cut at 8 KiB
  EXPECT_GE(total_files(), 1 + 4) << FilesPerLevel();
}

// max_bytes_for_level_base moves the levels' targets, and with them the scores that
// decide the next compaction.
TEST_F(DBSetOptionsTest, LevelBaseChangesTheScores) {
  options_.disable_auto_compactions = true;
  options_.max_bytes_for_level_base = 64 << 20;
  Open();
  for (int f = 0; f < 4; f++) MakeL0File("k" + std::to_string(f), 100);
  ASSERT_OK(CompactAll());
  auto* impl = static_cast<DBImpl*>(db_.get());
  const LevelScores before = impl->TEST_LevelScores();
  const int level = before.base_level;
  ASSERT_GT(before.score[level], 0.0);
  ASSERT_LT(before.score[level], 1.0);
  ASSERT_OK(db_->SetOptions({{"max_bytes_for_level_base", "1024"}}));
  const LevelScores after = impl->TEST_LevelScores();
  EXPECT_EQ(after.level_max_bytes[level], 1024u);
  EXPECT_GT(after.score[level], 1.0) << "the level is now over its target";
  ASSERT_OK(db_->SetOptions({{"disable_auto_compactions", "false"}}));
  ASSERT_OK(WaitForCompact());
  EXPECT_EQ(FilesAt(level), 0) << "the compaction the new score asks for ran: " << FilesPerLevel();
}

// max_successive_merges applies to the next Merge: operands stacked beyond it are folded
// into a value when written.
TEST_F(DBSetOptionsTest, MaxSuccessiveMergesAppliesToTheNextMerge) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator();
  Open();
  auto* impl = static_cast<DBImpl*>(db_.get());
  for (int i = 0; i < 4; i++) ASSERT_OK(Merge("a", std::to_string(i)));
  // Entries print as "<seq><type>": a P is a value, an M an operand.
  EXPECT_EQ(impl->TEST_KeyVersions("a").find('P'), std::string::npos)
      << "no folding at the default 0: " << impl->TEST_KeyVersions("a");
  ASSERT_OK(db_->SetOptions({{"max_successive_merges", "2"}}));
  for (int i = 0; i < 4; i++) ASSERT_OK(Merge("b", std::to_string(i)));
  EXPECT_NE(impl->TEST_KeyVersions("b").find('P'), std::string::npos)
      << "operands beyond 2 were folded: " << impl->TEST_KeyVersions("b");
  EXPECT_EQ(Get("a"), "0,1,2,3");
  EXPECT_EQ(Get("b"), "0,1,2,3");
}

// stats_dump_period_sec turned on by SetDBOptions starts the periodic dump into the LOG.
TEST_F(DBSetOptionsTest, StatsDumpPeriodStartsTheDump) {
  Open();  // with stats_dump_period_sec = 0
  const char* kDump = "DUMPING STATS";
  ASSERT_EQ(Log().find(kDump), std::string::npos);
  ASSERT_OK(db_->SetDBOptions({{"stats_dump_period_sec", "1"}}));
  bool dumped = false;
  for (int i = 0; i < 300 && !dumped; i++) {  // a second, or up to 30 on a loaded machine
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    dumped = Log().find(kDump) != std::string::npos;
  }
  EXPECT_TRUE(dumped);
}

// Writes stopped by the L0 stop trigger resume when SetOptions raises it.
TEST_F(DBSetOptionsTest, RaisingTheStopTriggerUnstallsWriters) {
  options_.level0_file_num_compaction_trigger = 3;
  options_.level0_slowdown_writes_trigger = 3;
  options_.level0_stop_writes_trigger = 3;
  Open();
  env_.SetOpen(false);
  env_.AllowFiles(3);  // the three flushes; the compaction they trigger is held
  for (int i = 0; i < 3; i++) MakeL0File("k");
  env_.WaitForBlockedJob();
  uint64_t stopped = 0;
  ASSERT_TRUE(db_->GetIntProperty("shale.is-write-stopped", &stopped));
  ASSERT_EQ(stopped, 1u);
  std::atomic<bool> done{false};
  Status put;
  std::thread writer([&] {
    put = db_->Put(WriteOptions(), "late", "v");
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(done.load()) << "the write should wait for the stall";
  ASSERT_OK(db_->SetOptions({{"level0_slowdown_writes_trigger", "20"},
                             {"level0_stop_writes_trigger", "30"}}));
  writer.join();  // hangs here if the change did not release it
  EXPECT_OK(put);
  ASSERT_TRUE(db_->GetIntProperty("shale.is-write-stopped", &stopped));
  EXPECT_EQ(stopped, 0u);
  env_.SetOpen(true);
}

TEST_F(DBSetOptionsTest, DelayedWriteRateIsTheNewRate) {
  options_.level0_file_num_compaction_trigger = 2;
  options_.level0_slowdown_writes_trigger = 2;
  options_.level0_stop_writes_trigger = 10;
  options_.delayed_write_rate = 1 << 20;
  Open();
  env_.SetOpen(false);
  env_.AllowFiles(2);
  for (int i = 0; i < 2; i++) MakeL0File("k");
  env_.WaitForBlockedJob();
  uint64_t rate = 0;
  ASSERT_TRUE(db_->GetIntProperty("shale.actual-delayed-write-rate", &rate));
  EXPECT_EQ(rate, 1u << 20);
  ASSERT_OK(db_->SetDBOptions({{"delayed_write_rate", "2097152"}}));
  ASSERT_TRUE(db_->GetIntProperty("shale.actual-delayed-write-rate", &rate));
  EXPECT_EQ(rate, 2u << 20);
  EXPECT_EQ(db_->GetDBOptions().delayed_write_rate, 2u << 20);
  env_.SetOpen(true);
}

TEST_F(DBSetOptionsTest, ChangesAreLoggedAndPersisted) {
  Open();
  ASSERT_EQ(OptionsFiles().size(), 1u) << "Open writes one";
  ASSERT_OK(db_->SetOptions({{"target_file_size_base", "1048576"},
                             {"max_bytes_for_level_multiplier", "4"}}));
  ASSERT_OK(db_->SetDBOptions({{"max_background_jobs", "3"}}));
  ASSERT_OK(db_->SetOptions({{"level0_slowdown_writes_trigger", "24"}}));
  EXPECT_EQ(OptionsFiles().size(), 2u) << "older ones deleted, the newest two kept";
  Close();
  const std::string log = Log();
  EXPECT_NE(log.find("target_file_size_base: 1048576"), std::string::npos) << log;
  EXPECT_NE(log.find("max_background_jobs: 3"), std::string::npos);

  DBOptions db_options;
  std::vector<ColumnFamilyDescriptor> cfs;
  ConfigOptions config;
  ASSERT_OK(LoadLatestOptions(config, dbname_, &db_options, &cfs));
  ASSERT_EQ(cfs.size(), 1u);
  EXPECT_EQ(cfs[0].options.target_file_size_base, 1u << 20);
  EXPECT_EQ(cfs[0].options.max_bytes_for_level_multiplier, 4);
  EXPECT_EQ(cfs[0].options.level0_slowdown_writes_trigger, 24);
  EXPECT_EQ(db_options.max_background_jobs, 3);
  // The loaded options open the DB as it ran.
  Options reopen(db_options, cfs[0].options);
  reopen.env = &env_;
  options_ = reopen;
  Open();
  EXPECT_EQ(db_->GetOptions().target_file_size_base, 1u << 20);
  EXPECT_EQ(db_->GetDBOptions().max_background_jobs, 3);
}

// SetOptions while writers write and flushes and compactions run: every write lands.
TEST_F(DBSetOptionsTest, ConcurrentWithWriters) {
  options_.write_buffer_size = 64 << 10;
  options_.level0_file_num_compaction_trigger = 2;
  Open();
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int t = 0; t < 3; t++) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < 2000; i++) {
        ASSERT_OK(db_->Put(WriteOptions(), "w" + std::to_string(t) + "_" + std::to_string(i),
                           std::string(200, 'a' + t)));
      }
    });
  }
  std::thread changer([&] {
    for (int i = 0; !stop.load(); i++) {
      ASSERT_OK(db_->SetOptions({{"write_buffer_size", i % 2 ? "65536" : "131072"},
                                 {"level0_file_num_compaction_trigger", i % 2 ? "2" : "3"},
                                 {"disable_auto_compactions", i % 3 ? "false" : "true"}}));
      ASSERT_OK(db_->SetDBOptions({{"max_background_jobs", i % 2 ? "2" : "3"}}));
    }
  });
  for (std::thread& w : writers) w.join();
  stop = true;
  changer.join();
  ASSERT_OK(db_->SetOptions({{"disable_auto_compactions", "false"}}));
  ASSERT_OK(WaitForCompact());
  for (int t = 0; t < 3; t++) {
    for (int i = 0; i < 2000; i += 97) {
      std::string v;
      ASSERT_OK(db_->Get(ReadOptions(), "w" + std::to_string(t) + "_" + std::to_string(i), &v));
      EXPECT_EQ(v, std::string(200, 'a' + t));
    }
  }
}

// exclusive_manual_compaction: while a manual compaction is held at the gate, an automatic
// one due elsewhere in the tree waits (true, the default) or runs alongside (false).
class DBExclusiveManualCompactionTest : public DBSetOptionsTest,
                                        public ::testing::WithParamInterface<bool> {};

TEST_P(DBExclusiveManualCompactionTest, AutomaticCompactionsWaitOnlyWhenExclusive) {
  const bool exclusive = GetParam();
  options_.level0_file_num_compaction_trigger = 2;
  Open();
  MakeL0File("a");
  ASSERT_OK(CompactAll());  // the a-keys now sit in L1
  ASSERT_EQ(FilesAt(0), 0);
  env_.SetOpen(false);
  CompactRangeOptions cro;
  cro.exclusive_manual_compaction = exclusive;
  cro.bottommost_level_compaction = BottommostLevelCompaction::kForce;
  Status manual;
  std::thread compactor([&] {
    const Slice begin("a"), end("b");
    manual = db_->CompactRange(cro, &begin, &end);
  });
  env_.WaitForBlockedJob();  // the manual compaction, at its output file
  env_.AllowFiles(2);        // two flushes of overlapping z-keys: an L0 compaction is due
  MakeL0File("z");
  MakeL0File("z");
  uint64_t running = 1;
  for (int i = 0; i < 200 && running < 2; i++) {  // up to 2 s for the automatic one
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    running = IntProperty("shale.num-running-compactions");
  }
  EXPECT_EQ(running, exclusive ? 1u : 2u);
  env_.SetOpen(true);
  compactor.join();
  EXPECT_OK(manual);
  ASSERT_OK(WaitForCompact());
  EXPECT_EQ(FilesAt(0), 0);
}

INSTANTIATE_TEST_SUITE_P(Exclusive, DBExclusiveManualCompactionTest, ::testing::Bool());

}  // namespace
}  // namespace shale
