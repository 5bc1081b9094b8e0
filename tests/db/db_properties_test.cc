// DB::GetProperty / GetIntProperty: every documented name answers under "shale." and
// "rocksdb.", integer properties parse as integers, shale.stats prints the per-level table
// and the stall lines RocksDB users read, and the values agree with the tree, the
// directory and the data after fills, flushes, compactions, reads and a reopen.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "db/db_impl.h"
#include "db/filename.h"
#include "shale/db.h"
#include "shale/table.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

// The integer properties, without their prefix (num-files-at-level<N> apart).
const std::vector<std::string> kIntNames = {
    "estimate-num-keys",         "cur-size-all-mem-tables",
    "block-cache-usage",         "estimate-pending-compaction-bytes",
    "num-running-compactions",   "num-running-flushes",
    "total-sst-files-size",      "num-immutable-mem-table",
    "actual-delayed-write-rate", "is-write-stopped",
};

// shale.stats' compaction table: row name ("L0", ..., "Sum") -> column name -> text.
using StatsTable = std::map<std::string, std::map<std::string, std::string>>;

StatsTable ParseStatsTable(const std::string& stats) {
  StatsTable table;
  std::istringstream in(stats);
  std::string line;
  std::vector<std::string> columns;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<std::string> tokens;
    for (std::string w; words >> w;) tokens.push_back(w);
    if (tokens.empty()) continue;
    if (tokens[0] == "Level") {
      columns = tokens;
      continue;
    }
    if (columns.empty() || (tokens[0] != "Sum" && tokens[0][0] != 'L') || tokens[0] == "Level") {
      continue;
    }
    // The size is printed as "<n> MB": one column, two words.
    if (tokens.size() == columns.size() + 1 && tokens[3] == "MB") {
      tokens.erase(tokens.begin() + 3);
    }
    if (tokens.size() != columns.size()) continue;
    for (size_t i = 0; i < columns.size(); i++) table[tokens[0]][columns[i]] = tokens[i];
  }
  return table;
}

bool IsUnsignedInteger(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

class DBPropertiesTest : public DBTestBase {
 protected:
  DBPropertiesTest() : DBTestBase("db_properties") {
    options_.compression = kNoCompression;
    options_.stats_dump_period_sec = 0;
    options_.write_buffer_size = 64 << 10;
    options_.target_file_size_base = 64 << 10;
    options_.max_bytes_for_level_base = 256 << 10;
  }
  // REQUIRES: no flush or compaction running.
  Version* current() { return static_cast<DBImpl*>(db_.get())->TEST_current(); }
  uint64_t SstBytesOnDisk() {
    std::vector<std::string> children;
    EXPECT_OK(Env::Default()->GetChildren(dbname_, &children));
    uint64_t total = 0;
    for (const std::string& name : children) {
      uint64_t number;
      FileType type;
      if (!ParseFileName(name, &number, &type) || type != kTableFile) continue;
      uint64_t size = 0;
      EXPECT_OK(Env::Default()->GetFileSize(dbname_ + "/" + name, &size));
      total += size;
    }
    return total;
  }
  // Puts keys [from, to), `len`-byte values.
  void Fill(int from, int to, size_t len) {
    for (int i = from; i < to; i++) {
      char key[16];
      snprintf(key, sizeof(key), "key%06d", i);
      ASSERT_OK(db_->Put(WriteOptions(), key, std::string(len, static_cast<char>('a' + i % 26))));
    }
  }
  // Checks the per-level numbers against the Version.
  void ExpectLevelsMatchVersion() {
    Version* v = current();
    uint64_t total = 0;
    for (int level = 0; level < v->NumLevels(); level++) {
      const std::string n = std::to_string(level);
      EXPECT_EQ(static_cast<uint64_t>(v->NumFiles(level)),
                IntProperty("shale.num-files-at-level" + n));
      EXPECT_EQ(static_cast<uint64_t>(v->NumFiles(level)),
                IntProperty("rocksdb.num-files-at-level" + n));
      total += v->NumLevelBytes(level);
    }
    EXPECT_EQ(total, IntProperty("shale.total-sst-files-size"));
    EXPECT_EQ(SstBytesOnDisk(), IntProperty("rocksdb.total-sst-files-size"));
  }
};

TEST_F(DBPropertiesTest, EveryNameAnswersUnderBothPrefixesAndParses) {
  Open();
  Fill(0, 100, 10);
  for (const std::string& name : kIntNames) {
    for (const char* prefix : {"shale.", "rocksdb."}) {
      const std::string full = prefix + name;
      uint64_t as_int = 0;
      ASSERT_TRUE(db_->GetIntProperty(full, &as_int)) << full;
      std::string as_text;
      ASSERT_TRUE(db_->GetProperty(full, &as_text)) << full;
      EXPECT_TRUE(IsUnsignedInteger(as_text)) << full << " = '" << as_text << "'";
      if (name != "cur-size-all-mem-tables" && name != "block-cache-usage") {
        EXPECT_EQ(std::to_string(as_int), as_text) << full;
      }
    }
  }
  for (int level = 0; level < options_.num_levels; level++) {
    for (const char* prefix : {"shale.", "rocksdb."}) {
      const std::string full = prefix + std::string("num-files-at-level") + std::to_string(level);
      std::string text;
      ASSERT_TRUE(db_->GetProperty(full, &text)) << full;
      EXPECT_EQ("0", text) << full;
    }
  }
  // The text properties answer under both prefixes, and are not integers.
  for (const char* name : {"stats", "levelstats", "sstables"}) {
    for (const char* prefix : {"shale.", "rocksdb."}) {
      const std::string full = prefix + std::string(name);
      std::string text;
      ASSERT_TRUE(db_->GetProperty(full, &text)) << full;
      EXPECT_FALSE(text.empty()) << full;
      uint64_t n;
      EXPECT_FALSE(db_->GetIntProperty(full, &n)) << full;
    }
  }
  EXPECT_EQ(DB::Properties::kStats, "shale.stats");
  EXPECT_EQ(DB::Properties::kNumFilesAtLevelPrefix, "shale.num-files-at-level");
  EXPECT_EQ(DB::Properties::kEstimateNumKeys, "shale.estimate-num-keys");
}

TEST_F(DBPropertiesTest, UnknownNamesReturnFalse) {
  Open();
  const std::string level_past_end =
      "shale.num-files-at-level" + std::to_string(options_.num_levels);
  for (const std::string& name :
       {std::string("shale.no-such-property"), std::string("rocksdb.no-such-property"),
        std::string("estimate-num-keys"), std::string("leveldb.stats"),
        std::string("shale.num-files-at-level"), std::string("shale.num-files-at-levelx"),
        std::string("shale.num-files-at-level-1"), level_past_end, std::string("shale.stats2"),
        std::string("shale."), std::string("")}) {
    std::string text = "unchanged";
    uint64_t n = 42;
    EXPECT_FALSE(db_->GetProperty(name, &text)) << name;
    EXPECT_FALSE(db_->GetIntProperty(name, &n)) << name;
  }
}

TEST_F(DBPropertiesTest, ValuesFollowFillFlushCompactionAndReads) {
  options_.disable_auto_compactions = true;
  Open();
  const uint64_t empty_mem = IntProperty("shale.cur-size-all-mem-tables");
  EXPECT_EQ(0u, IntProperty("shale.estimate-num-keys"));
  EXPECT_EQ(0u, IntProperty("shale.total-sst-files-size"));
  EXPECT_EQ(0u, IntProperty("shale.estimate-pending-compaction-bytes"));

  Fill(0, 200, 100);
  // Memory is counted in arena blocks: it grows, though not byte for byte.
  const uint64_t mem = IntProperty("shale.cur-size-all-mem-tables");
  EXPECT_GT(mem, 0u);
  EXPECT_GE(mem, empty_mem);
  EXPECT_EQ(200u, IntProperty("shale.estimate-num-keys"));
  Fill(200, 230, 1000);  // still below write_buffer_size
  EXPECT_GT(IntProperty("shale.cur-size-all-mem-tables"), std::max<uint64_t>(mem, 30 * 1000));

  // Several L0 files (auto compaction is off), overwrites and deletes.
  Fill(0, 3000, 100);
  ASSERT_OK(db_->Flush(FlushOptions()));
  Fill(1000, 2000, 100);
  for (int i = 0; i < 3000; i += 6) {
    char key[16];
    snprintf(key, sizeof(key), "key%06d", i);
    ASSERT_OK(db_->Delete(WriteOptions(), key));
  }
  ASSERT_OK(db_->Flush(FlushOptions()));
  const uint64_t live = 3000 - 500;
  EXPECT_EQ(0u, IntProperty("shale.num-immutable-mem-table"));
  EXPECT_GT(IntProperty("shale.num-files-at-level0"), 2u);
  ExpectLevelsMatchVersion();
  uint64_t estimate = IntProperty("shale.estimate-num-keys");
  EXPECT_GE(estimate, live / 2);
  EXPECT_LE(estimate, live * 2);
  EXPECT_GT(IntProperty("shale.estimate-pending-compaction-bytes"), 0u);

  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  EXPECT_EQ(0u, IntProperty("shale.num-files-at-level0"));
  ExpectLevelsMatchVersion();
  // A full compaction to the bottom leaves one entry per live key.
  EXPECT_EQ(live, IntProperty("shale.estimate-num-keys"));
  EXPECT_EQ(0u, IntProperty("shale.estimate-pending-compaction-bytes"));
  EXPECT_EQ(0u, IntProperty("shale.num-running-compactions"));
  EXPECT_EQ(0u, IntProperty("shale.num-running-flushes"));

  // Reads fill the block cache.
  Reopen();
  const uint64_t cache_before = IntProperty("shale.block-cache-usage");
  for (int i = 1; i < 3000; i += 50) {
    char key[16];
    snprintf(key, sizeof(key), "key%06d", i);
    std::string v;
    ASSERT_OK(db_->Get(ReadOptions(), key, &v));
  }
  EXPECT_GT(IntProperty("shale.block-cache-usage"), cache_before);
  EXPECT_GT(IntProperty("rocksdb.block-cache-usage"), 0u);
  ExpectLevelsMatchVersion();
  EXPECT_EQ(live, IntProperty("shale.estimate-num-keys"));
}

TEST_F(DBPropertiesTest, BlockCacheUsageAbsentWithoutACache) {
  BlockBasedTableOptions t;
  t.no_block_cache = true;
  options_.table_factory.reset(NewBlockBasedTableFactory(t));
  Open();
  Fill(0, 100, 10);
  ASSERT_OK(db_->Flush(FlushOptions()));
  std::string v;
  ASSERT_OK(db_->Get(ReadOptions(), "key000001", &v));
  uint64_t n;
  EXPECT_FALSE(db_->GetIntProperty("shale.block-cache-usage", &n));
}

TEST_F(DBPropertiesTest, BlockCacheUsageIsTheGivenCachesUsage) {
  BlockBasedTableOptions t;
  t.block_cache = NewLRUCache(1 << 20);
  options_.table_factory.reset(NewBlockBasedTableFactory(t));
  Open();
  Fill(0, 500, 100);
  ASSERT_OK(db_->Flush(FlushOptions()));
  std::string v;
  ASSERT_OK(db_->Get(ReadOptions(), "key000001", &v));
  ASSERT_OK(db_->Get(ReadOptions(), "key000400", &v));
  EXPECT_GT(t.block_cache->GetUsage(), 0u);
  EXPECT_EQ(t.block_cache->GetUsage(), IntProperty("shale.block-cache-usage"));
}

TEST_F(DBPropertiesTest, StatsTableHasTheColumnsRocksDBUsersRead) {
  options_.level0_file_num_compaction_trigger = 2;
  Open();
  Fill(0, 4000, 100);
  WaitForCompactOptions wait;
  wait.flush = true;
  ASSERT_OK(db_->WaitForCompact(wait));
  std::string stats;
  ASSERT_TRUE(db_->GetProperty("shale.stats", &stats));
  std::string rocks;
  ASSERT_TRUE(db_->GetProperty("rocksdb.stats", &rocks));
  EXPECT_NE(std::string::npos, rocks.find("Compaction Stats"));

  const StatsTable table = ParseStatsTable(stats);
  ASSERT_EQ(1u, table.count("Sum")) << stats;
  for (const char* column :
       {"Files", "Size", "Score", "Read(GB)", "Write(GB)", "W-Amp", "Comp(sec)", "Comp(cnt)"}) {
    EXPECT_EQ(1u, table.at("Sum").count(column)) << column << " missing:\n" << stats;
  }
  // Every non-empty level has a row whose file count is the Version's.
  Version* v = current();
  const LevelScores scores = static_cast<DBImpl*>(db_.get())->TEST_LevelScores();
  uint64_t compactions = 0;
  for (int level = 0; level < v->NumLevels(); level++) {
    const std::string name = "L" + std::to_string(level);
    if (v->NumFiles(level) == 0 && table.count(name) == 0) continue;
    ASSERT_EQ(1u, table.count(name)) << name << " missing:\n" << stats;
    const auto& row = table.at(name);
    EXPECT_EQ(std::to_string(v->NumFiles(level)), row.at("Files")) << name;
    const double mb = std::stod(row.at("Size"));
    EXPECT_NEAR(v->NumLevelBytes(level) / 1048576.0, mb, 0.01) << name;
    const double score = std::stod(row.at("Score"));
    EXPECT_NEAR(scores.score[level], score, 0.05) << name;
    EXPECT_GE(std::stod(row.at("Comp(sec)")), 0.0);
    EXPECT_GE(std::stod(row.at("W-Amp")), 0.0);
    if (level > 0) compactions += std::stoull(row.at("Comp(cnt)"));
  }
  // Flushes are counted at L0 with the keys they wrote; compactions below. (The GB
  // columns round this test's few hundred KB to 0.0.)
  const auto& l0 = table.at("L0");
  EXPECT_GT(std::stoull(l0.at("Comp(cnt)")), 1u) << stats;
  EXPECT_EQ(4000u, std::stoull(l0.at("KeyIn"))) << stats;
  EXPECT_GT(std::stod(l0.at("Wr(MB/s)")), 0.0) << stats;
  EXPECT_GT(compactions, 0u) << stats;
  EXPECT_GE(std::stod(table.at("Sum").at("W-Amp")), 1.0) << stats;

  // The cumulative lines.
  unsigned long long writes = 0, keys = 0;
  const size_t at = stats.find("Cumulative writes:");
  ASSERT_NE(std::string::npos, at) << stats;
  ASSERT_EQ(
      2, sscanf(stats.c_str() + at, "Cumulative writes: %llu writes, %llu keys", &writes, &keys));
  EXPECT_EQ(4000u, keys);
  EXPECT_EQ(4000u, writes);
  unsigned h, m;
  double s, percent;
  const size_t stall = stats.find("Cumulative stall:");
  ASSERT_NE(std::string::npos, stall) << stats;
  ASSERT_EQ(4, sscanf(stats.c_str() + stall, "Cumulative stall: %u:%u:%lf H:M:S, %lf percent", &h,
                      &m, &s, &percent))
      << stats;
  EXPECT_GE(percent, 0.0);
  EXPECT_LE(percent, 100.0);

  // levelstats: one line per level with its file count.
  std::string levels;
  ASSERT_TRUE(db_->GetProperty("shale.levelstats", &levels));
  std::istringstream in(levels);
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    int level, files;
    double mb;
    if (sscanf(line.c_str(), "%d %d %lf", &level, &files, &mb) != 3) continue;
    ASSERT_LT(level, v->NumLevels());
    EXPECT_EQ(v->NumFiles(level), files) << levels;
    rows++;
  }
  EXPECT_EQ(v->NumLevels(), rows) << levels;
}

// shale.sstables: RocksDB's listing, every level in order with the Version's number, then
// each live file with its number, size, sequence range and boundary keys (user keys in hex),
// in the Version's order.
TEST_F(DBPropertiesTest, SSTablesListsEveryLiveFile) {
  options_.disable_auto_compactions = true;
  Open();
  Fill(0, 2000, 100);
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  Fill(2000, 2100, 100);
  ASSERT_OK(db_->Delete(WriteOptions(), "key002100"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  std::string text;
  ASSERT_TRUE(db_->GetProperty("shale.sstables", &text));
  std::string rocks;
  ASSERT_TRUE(db_->GetProperty("rocksdb.sstables", &rocks));
  EXPECT_EQ(text, rocks);

  Version* v = current();
  ASSERT_EQ(1, v->NumFiles(0));
  int deeper = 0;
  for (int level = 1; level < v->NumLevels(); level++) deeper += v->NumFiles(level);
  ASSERT_GT(deeper, 1) << text;
  std::string want;
  for (int level = 0; level < v->NumLevels(); level++) {
    want += "--- level " + std::to_string(level) + " --- version# " +
            std::to_string(v->version_number()) + " ---\n";
    for (const auto& f : v->files(level)) {
      auto key = [](const InternalKey& k) {
        ParsedInternalKey p;
        EXPECT_OK(ParseInternalKey(k.Encode(), &p));
        return "'" + p.user_key.ToString(true) + "' seq:" + std::to_string(p.sequence) +
               ", type:" + std::to_string(static_cast<int>(p.type));
      };
      want += " " + std::to_string(f->number) + ":" + std::to_string(f->file_size) + "[" +
              std::to_string(f->smallest_seqno) + " .. " + std::to_string(f->largest_seqno) + "][" +
              key(f->smallest) + " .. " + key(f->largest) + "]\n";
    }
  }
  EXPECT_EQ(want, text);
  // The L0 file, spelled out: keys 2000..2099 put at sequences 2001..2100, then the
  // deletion of key002100 (type 0) at 2101.
  const auto& l0 = v->files(0)[0];
  EXPECT_NE(std::string::npos,
            text.find("--- level 0 --- version# " + std::to_string(v->version_number()) +
                      " ---\n " + std::to_string(l0->number) + ":" + std::to_string(l0->file_size) +
                      "[2001 .. 2101]['6B6579303032303030' seq:2001, type:1 .. "
                      "'6B6579303032313030' seq:2101, type:0]\n"))
      << text;

  // A flush installs a newer Version: the number grows.
  const uint64_t before = v->version_number();
  Fill(3000, 3001, 10);
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_TRUE(db_->GetProperty("shale.sstables", &text));
  EXPECT_GT(current()->version_number(), before);
  EXPECT_EQ(0u, text.find("--- level 0 --- version# " +
                          std::to_string(current()->version_number()) + " ---\n"))
      << text;
}

TEST_F(DBPropertiesTest, ValuesSurviveReopen) {
  options_.level0_file_num_compaction_trigger = 2;
  Open();
  Fill(0, 3000, 100);
  ASSERT_OK(db_->WaitForCompact(WaitForCompactOptions()));
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(db_->WaitForCompact(WaitForCompactOptions()));
  const uint64_t size = IntProperty("shale.total-sst-files-size");
  const uint64_t keys = IntProperty("shale.estimate-num-keys");
  std::vector<uint64_t> files;
  for (int level = 0; level < options_.num_levels; level++) {
    files.push_back(IntProperty("shale.num-files-at-level" + std::to_string(level)));
  }
  Reopen();
  EXPECT_EQ(size, IntProperty("shale.total-sst-files-size"));
  EXPECT_EQ(keys, IntProperty("shale.estimate-num-keys"));
  for (int level = 0; level < options_.num_levels; level++) {
    EXPECT_EQ(files[level], IntProperty("shale.num-files-at-level" + std::to_string(level)));
  }
  ExpectLevelsMatchVersion();
  EXPECT_GE(keys, 1500u);
  EXPECT_LE(keys, 6000u);
}

}  // namespace
}  // namespace shale
