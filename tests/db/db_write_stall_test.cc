// Write stalls seen through the DB: the L0 slowdown and stop triggers, a full set of
// memtables, WriteOptions::no_slowdown, the stall counters of shale.stats and the
// is-write-stopped / actual-delayed-write-rate properties, and several writers faster than
// compaction that must neither deadlock nor let L0 grow without bound.
//
// No test asserts a duration: a blocked writer is checked to be still blocked (which a
// slow machine cannot make false) and then released by the event that must release it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "shale/db.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/gated_sst_env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

// The count printed before `name` in shale.stats' "Stalls(count):" line.
uint64_t StallCount(DB* db, const std::string& name) {
  std::string stats;
  EXPECT_TRUE(db->GetProperty("shale.stats", &stats));
  const size_t line = stats.find("Stalls(count):");
  EXPECT_NE(std::string::npos, line) << stats;
  // Entries are "<count> <name>", separated by commas; the last one ends the line.
  size_t at = stats.find(" " + name, line);
  while (at != std::string::npos && stats[at + 1 + name.size()] != ',' &&
         stats[at + 1 + name.size()] != '\n') {
    at = stats.find(" " + name, at + 1);
  }
  EXPECT_NE(std::string::npos, at) << name << " missing in:\n" << stats;
  if (line == std::string::npos || at == std::string::npos) return 0;
  size_t start = at;
  while (start > 0 && isdigit(static_cast<unsigned char>(stats[start - 1]))) start--;
  return std::stoull(stats.substr(start, at - start));
}


// A writer on its own thread, for writes expected to block.
class BackgroundPut {
 public:
  BackgroundPut(DB* db, std::string key, std::string value)
      : thread_([this, db, key = std::move(key), value = std::move(value)] {
          status_ = db->Put(WriteOptions(), key, value);
          done_ = true;
        }) {}
  ~BackgroundPut() {
    if (thread_.joinable()) thread_.join();
  }
  bool done() const { return done_.load(); }
  Status Join() {
    thread_.join();
    return status_;
  }

 private:
  std::atomic<bool> done_{false};
  Status status_;
  std::thread thread_;
};

class DBWriteStallTest : public DBTestBase {
 protected:
  DBWriteStallTest() : DBTestBase("db_write_stall") {
    options_.compression = kNoCompression;
    options_.stats_dump_period_sec = 0;
    options_.write_buffer_size = 4 << 20;
  }
  ~DBWriteStallTest() override {
    gated_env_.SetOpen(true);  // a failed test may have left a job at the gate
    EXPECT_OK(TryClose());      // here: the DB may use gated_env_, which dies before the base
  }
  // One more L0 file; all of them overlap (on "~shared"), so none is moved trivially.
  void PutAndFlush(const std::string& key) {
    ASSERT_OK(db_->Put(WriteOptions(), key, std::string(100, 'v')));
    ASSERT_OK(db_->Put(WriteOptions(), "~shared", key));
    ASSERT_OK(db_->Flush(FlushOptions()));
  }

  // Flushes five L0 files, then checks writes are neither stopped nor slowed.
  void FiveL0FilesWriteWithoutStall() {
    for (int i = 0; i < 5; i++) PutAndFlush("k" + std::to_string(i));
    EXPECT_EQ(5u, IntProperty("shale.num-files-at-level0"));
    EXPECT_EQ(0u, IntProperty("shale.is-write-stopped"));
    EXPECT_EQ(0u, IntProperty("shale.actual-delayed-write-rate"));
    WriteOptions no_slowdown;
    no_slowdown.no_slowdown = true;
    EXPECT_OK(db_->Put(no_slowdown, "x", "y"));
  }

  GatedSstEnv gated_env_;
};

TEST_F(DBWriteStallTest, L0TriggersSlowThenStopUntilCompactionClearsThem) {
  // The compaction that two L0 files trigger hangs at the gate, holding L0 while the test
  // flushes past the slowdown and then the stop trigger.
  GatedSstEnv& env = gated_env_;
  options_.env = &env;
  options_.level0_file_num_compaction_trigger = 2;
  options_.level0_slowdown_writes_trigger = 2;
  options_.level0_stop_writes_trigger = 4;
  options_.max_bytes_for_level_base = 1ull << 30;
  options_.delayed_write_rate = 64 << 10;
  Open();
  EXPECT_EQ(0u, IntProperty("shale.actual-delayed-write-rate"));
  PutAndFlush("a");
  EXPECT_EQ(0u, IntProperty("shale.actual-delayed-write-rate"));
  env.SetOpen(false);
  env.AllowFiles(1);
  PutAndFlush("b");
  env.WaitForBlockedJob();
  EXPECT_EQ(1u, IntProperty("shale.num-running-compactions"));

  // Two L0 files: slowed, not stopped.
  EXPECT_EQ(0u, IntProperty("shale.is-write-stopped"));
  EXPECT_EQ(64u << 10, IntProperty("rocksdb.actual-delayed-write-rate"));
  WriteOptions no_slowdown;
  no_slowdown.no_slowdown = true;
  EXPECT_TRUE(db_->Put(no_slowdown, "x", "1").IsIncomplete());
  for (int i = 0; i < 3; i++) {
    ASSERT_OK(db_->Put(WriteOptions(), "slow" + std::to_string(i), std::string(1000, 's')));
  }
  EXPECT_GE(StallCount(db_.get(), "level0-file-count-limit-slowdown"), 1u);
  EXPECT_EQ(0u, StallCount(db_.get(), "level0-file-count-limit-stop"));

  // Each flush gets its file through the gate; the held compaction stays held.
  env.AllowFiles(1);
  PutAndFlush("c");
  env.AllowFiles(1);
  PutAndFlush("d");
  // Four L0 files: stopped.
  EXPECT_EQ(4u, IntProperty("shale.num-files-at-level0"));
  EXPECT_EQ(1u, IntProperty("shale.is-write-stopped"));
  EXPECT_EQ(1u, IntProperty("rocksdb.is-write-stopped"));
  EXPECT_TRUE(db_->Put(no_slowdown, "x", "1").IsIncomplete());
  BackgroundPut blocked(db_.get(), "blocked", "value");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(blocked.done()) << "a write went through a write stop";

  // The compaction, let go, takes L0 below the stop and lets the writer go; the next one
  // clears L0.
  env.SetOpen(true);
  ASSERT_OK(blocked.Join());
  ASSERT_OK(db_->WaitForCompact(WaitForCompactOptions()));
  EXPECT_EQ(0u, IntProperty("shale.num-files-at-level0"));
  EXPECT_EQ(0u, IntProperty("shale.is-write-stopped"));
  EXPECT_EQ(0u, IntProperty("shale.actual-delayed-write-rate"));
  EXPECT_GE(StallCount(db_.get(), "level0-file-count-limit-stop"), 1u);
  EXPECT_OK(db_->Put(no_slowdown, "x", "1"));
  std::string v;
  ASSERT_OK(db_->Get(ReadOptions(), "blocked", &v));
  EXPECT_EQ("value", v);

  std::string stats;
  ASSERT_TRUE(db_->GetProperty("shale.stats", &stats));
  unsigned h, m;
  double s, percent;
  const size_t at = stats.find("Cumulative stall:");
  ASSERT_NE(std::string::npos, at) << stats;
  ASSERT_EQ(4, sscanf(stats.c_str() + at, "Cumulative stall: %u:%u:%lf H:M:S, %lf percent", &h, &m,
                      &s, &percent))
      << stats;
  EXPECT_GT(h * 3600 + m * 60 + s, 0.0) << stats;
  EXPECT_GT(percent, 0.0) << stats;
}

TEST_F(DBWriteStallTest, FullMemtablesStopWritesUntilAFlush) {
  GatedSstEnv& env = gated_env_;
  options_.env = &env;
  options_.write_buffer_size = 64 << 10;
  options_.max_write_buffer_number = 2;
  Open();
  env.SetOpen(false);
  // Fill the active memtable, then the next one while the first one's flush hangs.
  WriteOptions no_slowdown;
  no_slowdown.no_slowdown = true;
  Status s;
  int written = 0;
  for (; written < 10000; written++) {
    s = db_->Put(no_slowdown, "key" + std::to_string(written), std::string(200, 'm'));
    if (!s.ok()) break;
  }
  ASSERT_TRUE(s.IsIncomplete()) << s.ToString() << " after " << written << " writes";
  EXPECT_GT(written, 300);  // more than one memtable's worth went in
  env.WaitForBlockedJob();
  EXPECT_EQ(1u, IntProperty("shale.num-immutable-mem-table"));
  EXPECT_GT(IntProperty("shale.cur-size-all-mem-tables"), 100u << 10);
  EXPECT_EQ(1u, IntProperty("shale.num-running-flushes"));
  // RocksDB reports a memtable-limit stop as a stopped write.
  EXPECT_EQ(1u, IntProperty("shale.is-write-stopped"));

  BackgroundPut blocked(db_.get(), "blocked", "value");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(blocked.done()) << "a write went in with every memtable full";
  env.SetOpen(true);
  ASSERT_OK(blocked.Join());
  EXPECT_GE(StallCount(db_.get(), "memtable-limit-stop"), 1u);
  ASSERT_OK(db_->WaitForCompact(WaitForCompactOptions()));
  EXPECT_EQ(0u, IntProperty("shale.is-write-stopped"));
  for (int i = 0; i < written; i += 101) {
    std::string v;
    ASSERT_OK(db_->Get(ReadOptions(), "key" + std::to_string(i), &v));
  }
}

TEST_F(DBWriteStallTest, PendingCompactionBytesSlowAndStop) {
  GatedSstEnv& env = gated_env_;
  options_.env = &env;
  options_.level0_file_num_compaction_trigger = 2;
  options_.soft_pending_compaction_bytes_limit = 1;
  options_.hard_pending_compaction_bytes_limit = 1;
  Open();
  PutAndFlush("a");
  EXPECT_EQ(0u, IntProperty("shale.estimate-pending-compaction-bytes"));
  EXPECT_EQ(0u, IntProperty("shale.is-write-stopped"));
  // The second flush goes through; the compaction it triggers hangs at the gate.
  env.SetOpen(false);
  env.AllowFiles(1);
  PutAndFlush("b");
  env.WaitForBlockedJob();
  EXPECT_EQ(1u, IntProperty("shale.num-running-compactions"));
  EXPECT_GT(IntProperty("shale.estimate-pending-compaction-bytes"), 0u);
  EXPECT_EQ(1u, IntProperty("shale.is-write-stopped"));
  WriteOptions no_slowdown;
  no_slowdown.no_slowdown = true;
  EXPECT_TRUE(db_->Put(no_slowdown, "x", "1").IsIncomplete());

  BackgroundPut blocked(db_.get(), "blocked", "value");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(blocked.done()) << "a write went through a pending-bytes stop";
  env.SetOpen(true);
  ASSERT_OK(blocked.Join());
  ASSERT_OK(db_->WaitForCompact(WaitForCompactOptions()));
  EXPECT_EQ(0u, IntProperty("shale.estimate-pending-compaction-bytes"));
  EXPECT_EQ(0u, IntProperty("shale.is-write-stopped"));
  EXPECT_EQ(0u, IntProperty("shale.num-running-compactions"));
  EXPECT_GE(StallCount(db_.get(), "pending-compaction-bytes-stop"), 1u);
  EXPECT_OK(db_->Put(no_slowdown, "x", "1"));
}

TEST_F(DBWriteStallTest, PendingCompactionBytesSlowdown) {
  GatedSstEnv& env = gated_env_;
  options_.env = &env;
  options_.level0_file_num_compaction_trigger = 2;
  options_.soft_pending_compaction_bytes_limit = 1;
  options_.delayed_write_rate = 64 << 10;
  Open();
  PutAndFlush("a");
  env.SetOpen(false);
  env.AllowFiles(1);
  PutAndFlush("b");
  env.WaitForBlockedJob();
  EXPECT_EQ(0u, IntProperty("shale.is-write-stopped"));
  EXPECT_EQ(64u << 10, IntProperty("shale.actual-delayed-write-rate"));
  WriteOptions no_slowdown;
  no_slowdown.no_slowdown = true;
  EXPECT_TRUE(db_->Put(no_slowdown, "x", "1").IsIncomplete());
  ASSERT_OK(db_->Put(WriteOptions(), "slow", std::string(1000, 's')));
  EXPECT_GE(StallCount(db_.get(), "pending-compaction-bytes-slowdown"), 1u);
  env.SetOpen(true);
  ASSERT_OK(db_->WaitForCompact(WaitForCompactOptions()));
  EXPECT_EQ(0u, IntProperty("shale.actual-delayed-write-rate"));
  EXPECT_OK(db_->Put(no_slowdown, "x", "1"));
}

TEST_F(DBWriteStallTest, FasterWritersNeverDeadlockAndL0StaysBounded) {
  options_.write_buffer_size = 16 << 10;
  options_.target_file_size_base = 32 << 10;
  options_.max_bytes_for_level_base = 128 << 10;
  options_.max_bytes_for_level_multiplier = 4;
  options_.level0_file_num_compaction_trigger = 2;
  options_.level0_slowdown_writes_trigger = 2;
  options_.level0_stop_writes_trigger = 4;
  options_.delayed_write_rate = 1 << 20;
  options_.max_background_jobs = 2;
  Open();
  const uint64_t seed = TestSeed();

  std::atomic<bool> done{false};
  std::atomic<uint64_t> max_l0{0};
  std::atomic<uint64_t> stopped_seen{0};
  std::thread watcher([&] {
    while (!done.load()) {
      const uint64_t l0 = IntProperty("shale.num-files-at-level0");
      if (l0 > max_l0.load()) max_l0 = l0;
      stopped_seen += IntProperty("shale.is-write-stopped");
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  });
  constexpr int kWriters = 4;
  std::vector<std::map<std::string, std::string>> written(kWriters);
  std::vector<Status> results(kWriters);
  std::vector<std::thread> writers;
  for (int t = 0; t < kWriters; t++) {
    writers.emplace_back([&, t] {
      Random rnd(seed + t);
      for (int i = 0; i < 1500; i++) {
        const std::string k = "w" + std::to_string(t) + "_" + std::to_string(rnd.Uniform(800));
        std::string v = RandomString(&rnd, 100 + rnd.Uniform(300));
        Status s = db_->Put(WriteOptions(), k, v);
        if (!s.ok()) {
          results[t] = s;
          return;
        }
        written[t][k] = v;
      }
    });
  }
  for (auto& w : writers) w.join();
  ASSERT_OK(db_->WaitForCompact(WaitForCompactOptions()));
  done = true;
  watcher.join();
  for (const Status& s : results) ASSERT_OK(s);

  // Stops and slowdowns kept L0 bounded: at most the stop trigger plus the memtables that
  // were already waiting for their flush when writes stopped.
  const uint64_t bound = options_.level0_stop_writes_trigger + options_.max_write_buffer_number - 1;
  EXPECT_LE(max_l0.load(), bound);
  EXPECT_LT(IntProperty("shale.num-files-at-level0"),
            static_cast<uint64_t>(options_.level0_file_num_compaction_trigger));
  EXPECT_EQ(0u, IntProperty("shale.is-write-stopped"));
  const uint64_t stalls = StallCount(db_.get(), "level0-file-count-limit-slowdown") +
                          StallCount(db_.get(), "level0-file-count-limit-stop") +
                          StallCount(db_.get(), "memtable-limit-stop");
  EXPECT_GT(stalls, 0u) << "writers never stalled";
  fprintf(stderr, "max L0 files %llu, stalls %llu, stopped samples %llu\n",
          static_cast<unsigned long long>(max_l0.load()), static_cast<unsigned long long>(stalls),
          static_cast<unsigned long long>(stopped_seen.load()));

  // Every write landed.
  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
  size_t total = 0;
  for (int t = 0; t < kWriters; t++) {
    for (const auto& [k, v] : written[t]) {
      std::string got;
      ASSERT_OK(db_->Get(ReadOptions(), k, &got)) << k;
      ASSERT_EQ(v, got) << k;
    }
    total += written[t].size();
  }
  size_t seen = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) seen++;
  ASSERT_OK(it->status());
  EXPECT_EQ(total, seen);
}

TEST_F(DBWriteStallTest, L0TriggersAreRaisedToTheCompactionTrigger) {
  // As in RocksDB, stop >= slowdown >= compaction trigger is enforced at Open: a stop below
  // the compaction trigger would stop writes for good, with no compaction to clear it.
  options_.level0_file_num_compaction_trigger = 8;
  options_.level0_slowdown_writes_trigger = 2;
  options_.level0_stop_writes_trigger = 3;
  Open();
  Options o = db_->GetOptions();
  EXPECT_EQ(8, o.level0_file_num_compaction_trigger);
  EXPECT_EQ(8, o.level0_slowdown_writes_trigger);
  EXPECT_EQ(8, o.level0_stop_writes_trigger);
  ASSERT_NO_FATAL_FAILURE(FiveL0FilesWriteWithoutStall());
  ASSERT_OK(db_->Close());
  db_.reset();

  // A slowdown above the stop is met by raising the stop; a trigger of 0 counts as 1.
  options_.level0_file_num_compaction_trigger = 0;
  options_.level0_slowdown_writes_trigger = 30;
  options_.level0_stop_writes_trigger = 10;
  Open();
  o = db_->GetOptions();
  EXPECT_EQ(1, o.level0_file_num_compaction_trigger);
  EXPECT_EQ(30, o.level0_slowdown_writes_trigger);
  EXPECT_EQ(30, o.level0_stop_writes_trigger);
}

TEST_F(DBWriteStallTest, NoStallWithoutAutomaticCompaction) {
  // As in RocksDB, the L0 triggers apply only when automatic compaction could clear them.
  options_.disable_auto_compactions = true;
  options_.level0_file_num_compaction_trigger = 2;
  options_.level0_slowdown_writes_trigger = 2;
  options_.level0_stop_writes_trigger = 3;
  Open();
  ASSERT_NO_FATAL_FAILURE(FiveL0FilesWriteWithoutStall());
}

}  // namespace
}  // namespace shale
