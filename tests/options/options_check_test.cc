// Options checked by the tables: sanitizing at Open, SetOptions' all-or-nothing changes and
// refusals, and the options LOG.
#include "options/options_check.h"

#include <gtest/gtest.h>

#include <cstdarg>

namespace shale {
namespace {

TEST(OptionsCheckTest, OpenClampsWhatRocksDBClampsAndSaysSo) {
  Options o;
  o.write_buffer_size = 10;
  o.max_write_buffer_number = 1;
  o.max_background_jobs = 0;
  o.level0_file_num_compaction_trigger = 0;
  o.level0_slowdown_writes_trigger = 0;
  o.level0_stop_writes_trigger = 0;
  std::vector<std::string> warnings;
  ASSERT_TRUE(SanitizeAndValidateAtOpen(&o, &warnings).ok());
  EXPECT_EQ(o.write_buffer_size, 4096u);
  EXPECT_EQ(o.max_write_buffer_number, 2);
  EXPECT_EQ(o.max_background_jobs, 1);
  EXPECT_EQ(o.level0_file_num_compaction_trigger, 1);
  EXPECT_EQ(o.level0_slowdown_writes_trigger, 1);
  EXPECT_EQ(o.level0_stop_writes_trigger, 1);
  ASSERT_GE(warnings.size(), 6u);
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  for (const char* name : {"write_buffer_size 10 ", "max_write_buffer_number 1 ",
                           "max_background_jobs 0 ", "level0_file_num_compaction_trigger 0 "}) {
    EXPECT_NE(all.find(name), std::string::npos) << name << all;
  }

  Options ordered;
  ordered.level0_file_num_compaction_trigger = 10;
  ordered.level0_slowdown_writes_trigger = 5;
  ordered.level0_stop_writes_trigger = 8;
  warnings.clear();
  ASSERT_TRUE(SanitizeAndValidateAtOpen(&ordered, &warnings).ok());
  EXPECT_EQ(ordered.level0_slowdown_writes_trigger, 10);
  EXPECT_EQ(ordered.level0_stop_writes_trigger, 10);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("raised"), std::string::npos);

  Options defaults;
  warnings.clear();
  ASSERT_TRUE(SanitizeAndValidateAtOpen(&defaults, &warnings).ok());
  EXPECT_TRUE(warnings.empty());
}

TEST(OptionsCheckTest, OpenRefusesWhatItCannotClamp) {
  std::vector<std::string> warnings;
  Options levels;
  levels.num_levels = 1;
  Status s = SanitizeAndValidateAtOpen(&levels, &warnings);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("num_levels"), std::string::npos) << s.ToString();
  Options mult;
  mult.max_bytes_for_level_multiplier = 0.5;
  EXPECT_TRUE(SanitizeAndValidateAtOpen(&mult, &warnings).IsInvalidArgument());
  Options merges;
  merges.unordered_write = true;
  merges.max_successive_merges = 3;
  EXPECT_TRUE(SanitizeAndValidateAtOpen(&merges, &warnings).IsInvalidArgument());
  Options table;
  BlockBasedTableOptions t;
  t.format_version = 4;
  table.table_factory.reset(NewBlockBasedTableFactory(t));
  s = SanitizeAndValidateAtOpen(&table, &warnings);
  EXPECT_NE(s.ToString().find("format_version"), std::string::npos) << s.ToString();
}

TEST(OptionsCheckTest, ChangesApplyAllOrNothing) {
  Options o;
  ASSERT_TRUE(ApplyOptionChanges(OptionStruct::kCF,
                                 {{"write_buffer_size", "1M"},
                                  {"level0_file_num_compaction_trigger", "2"},
                                  {"disable_auto_compactions", "true"}},
                                 &o).ok());
  EXPECT_EQ(o.write_buffer_size, size_t{1} << 20);
  EXPECT_EQ(o.level0_file_num_compaction_trigger, 2);
  EXPECT_TRUE(o.disable_auto_compactions);
  ASSERT_TRUE(ApplyOptionChanges(OptionStruct::kDB,
                                 {{"max_background_jobs", "4"}, {"delayed_write_rate", "1000"}},
                                 &o).ok());
  EXPECT_EQ(o.max_background_jobs, 4);
  EXPECT_EQ(o.delayed_write_rate, 1000u);

  struct Refusal {
    OptionStruct which;
    std::unordered_map<std::string, std::string> changes;
    const char* named;
  };
  const Refusal refusals[] = {
      {OptionStruct::kCF, {{"write_buffer_size", "2M"}, {"num_levels", "3"}}, "num_levels"},
      {OptionStruct::kCF, {{"write_buffer_size", "2M"}, {"no_such_option", "3"}},
       "no_such_option"},
      {OptionStruct::kCF, {{"write_buffer_size", "2M"}, {"max_background_jobs", "3"}},
       "max_background_jobs"},
      {OptionStruct::kDB, {{"write_buffer_size", "2M"}}, "write_buffer_size"},
      {OptionStruct::kCF, {{"write_buffer_size", "lots"}}, "write_buffer_size"},
      {OptionStruct::kCF, {{"write_buffer_size", "100"}}, "write_buffer_size"},
      {OptionStruct::kCF, {{"comparator", "leveldb.BytewiseComparator"}}, "comparator"},
      {OptionStruct::kCF, {{"level0_stop_writes_trigger", "1"}}, "level0_stop_writes_trigger"},
      {OptionStruct::kDB, {{"max_background_jobs", "0"}}, "max_background_jobs"},
      {OptionStruct::kDB, {{"use_fsync", "true"}}, "use_fsync"},
      {OptionStruct::kDB, {}, "empty"},
  };
  const Options before = o;
  for (const Refusal& r : refusals) {
    Status s = ApplyOptionChanges(r.which, r.changes, &o);
    EXPECT_TRUE(s.IsInvalidArgument()) << r.named << ": " << s.ToString();
    EXPECT_NE(s.ToString().find(r.named), std::string::npos) << s.ToString();
    EXPECT_EQ(o.write_buffer_size, before.write_buffer_size) << r.named;
    EXPECT_EQ(o.max_background_jobs, before.max_background_jobs) << r.named;
    EXPECT_EQ(o.level0_stop_writes_trigger, before.level0_stop_writes_trigger) << r.named;
  }
}

class CapturingLogger : public Logger {
 public:
  using Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    char buf[512];
    vsnprintf(buf, sizeof(buf), format, ap);
    text += buf;
    text += '\n';
  }
  std::string text;
};

TEST(OptionsCheckTest, LogHasEveryOptionInRocksDBsLogSpelling) {
  Options o;
  o.write_buffer_size = 65536;
  o.disable_auto_compactions = true;
  CapturingLogger log;
  LogOptions(&log, o);
  for (const char* line :
       {"Options.write_buffer_size: 65536\n", "Options.disable_auto_compactions: 1\n",
        "Options.wal_recovery_mode: kPointInTimeRecovery\n",
        "Options.comparator: leveldb.BytewiseComparator\n", "  table_options.block_size: 4096\n",
        "  table_options.block_cache capacity: 8388608\n"}) {
    EXPECT_NE(log.text.find(line), std::string::npos) << line << log.text;
  }
  for (OptionStruct which : {OptionStruct::kDB, OptionStruct::kCF}) {
    for (const OptionInfo& info : OptionsTable(which)) {
      EXPECT_NE(log.text.find(std::string("Options.") + info.name + ": "), std::string::npos)
          << info.name;
    }
  }
}

}  // namespace
}  // namespace shale
