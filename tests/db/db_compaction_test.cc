// Leveled compaction seen through the DB: a randomized model test with tiny levels (data
// crosses many levels, snapshots and iterators are held across compactions, the DB is
// reopened) that checks the tree's shape after every WaitForCompact, and targeted tests of
// CompactRange (whole and sub-range, change_level, bottommost_level_compaction), trivial
// moves, disable_auto_compactions, obsolete file deletion and parallel compactions.
//
// The tree is inspected through DBImpl::TEST_versions() only while the DB is quiescent
// (after WaitForCompact or with automatic compactions disabled and no flush pending).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "db/db_impl.h"
#include "db/filename.h"
#include "shale/db.h"
#include "shale/statistics.h"
#include "shale/write_batch.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

using KV = std::map<std::string, std::string>;

std::string NumKey(int i) {
  char buf[24];
  snprintf(buf, sizeof(buf), "k%07d", i);
  return buf;
}

// Every key/value the DB shows through an iterator (at `snapshot` if not null).
KV ScanAll(DB* db, const Snapshot* snapshot = nullptr) {
  ReadOptions ro;
  ro.snapshot = snapshot;
  std::unique_ptr<Iterator> it(db->NewIterator(ro));
  KV out;
  for (it->SeekToFirst(); it->Valid(); it->Next())
    out[it->key().ToString()] = it->value().ToString();
  EXPECT_OK(it->status());
  return out;
}

// Compares two maps and names the first difference (gtest would print both maps whole).
::testing::AssertionResult SameContents(const KV& expected, const KV& actual) {
  auto e = expected.begin();
  auto a = actual.begin();
  for (; e != expected.end() && a != actual.end(); ++e, ++a) {
    if (e->first != a->first) {
      return ::testing::AssertionFailure()
             << "expected key " << e->first << " but found key " << a->first;
    }
    if (e->second != a->second) {
      return ::testing::AssertionFailure()
             << "key " << e->first << ": value differs (expected " << e->second.size()
             << " bytes, got " << a->second.size() << ")";
    }
  }
  if (e != expected.end()) return ::testing::AssertionFailure() << "missing key " << e->first;
  if (a != actual.end()) return ::testing::AssertionFailure() << "extra key " << a->first;
  return ::testing::AssertionSuccess();
}

// Checks the shape a settled leveled tree must have. `settled`: compaction has caught up
// (WaitForCompact returned), so every level is within its target as well.
::testing::AssertionResult TreeInvariants(Version* v, const LevelScores& scores, const Options& o,
                                          bool settled) {
  const InternalKeyComparator icmp(o.comparator);
  for (int level = 1; level < v->NumLevels(); level++) {
    const auto& files = v->files(level);
    for (size_t i = 0; i < files.size(); i++) {
      if (icmp.Compare(files[i]->smallest.Encode(), files[i]->largest.Encode()) > 0) {
        return ::testing::AssertionFailure()
               << "L" << level << " #" << files[i]->number << " has smallest > largest";
      }
      if (i > 0 && icmp.Compare(files[i - 1]->largest.Encode(), files[i]->smallest.Encode()) >= 0) {
        return ::testing::AssertionFailure() << "L" << level << " files #" << files[i - 1]->number
                                             << " and #" << files[i]->number << " overlap:\n"
                                             << v->DebugString();
      }
    }
  }
  if (!settled) return ::testing::AssertionSuccess();
  if (v->NumFiles(0) >= o.level0_file_num_compaction_trigger) {
    return ::testing::AssertionFailure() << "L0 holds " << v->NumFiles(0) << " files, trigger "
                                         << o.level0_file_num_compaction_trigger << "\n"
                                         << v->DebugString();
  }
  for (int level = 1; level + 1 < v->NumLevels(); level++) {
    uint64_t target = scores.level_max_bytes[level];
    if (!o.level_compaction_dynamic_level_bytes) {
      // Static targets, recomputed here rather than trusted from the Version.
      const double expected = static_cast<double>(o.max_bytes_for_level_base) *
                              std::pow(o.max_bytes_for_level_multiplier, level - 1);
      if (std::fabs(static_cast<double>(target) - expected) > 1.0) {
        return ::testing::AssertionFailure()
               << "L" << level << " target " << target << ", expected " << expected;
      }
    } else if (level < scores.base_level && v->NumFiles(level) > 0) {
      return ::testing::AssertionFailure()
             << "L" << level << " above the base level L" << scores.base_level << " holds files";
    }
    if (v->NumLevelBytes(level) > target) {
      return ::testing::AssertionFailure() << "L" << level << " holds " << v->NumLevelBytes(level)
                                           << " bytes over its target " << target << "\n"
                                           << v->DebugString();
    }
  }
  return ::testing::AssertionSuccess();
}

class DBCompactionTest : public DBTestBase {
 protected:
  DBCompactionTest() : DBTestBase("db_compaction") {
    options_.compression = kNoCompression;
    options_.stats_dump_period_sec = 0;
    options_.write_buffer_size = 32 << 10;
    options_.target_file_size_base = 32 << 10;
    options_.max_bytes_for_level_base = 128 << 10;
    options_.max_bytes_for_level_multiplier = 4;
    options_.level0_file_num_compaction_trigger = 2;
  }
  // Memtables big enough that only Flush() makes L0 files.
  void OneFilePerFlush() { options_.write_buffer_size = 8 << 20; }
  // Open for tests that place files by hand: no automatic compaction, one file per Flush.
  void OpenManual() {
    OneFilePerFlush();
    options_.disable_auto_compactions = true;
    Open();
  }

  DBImpl* impl() { return static_cast<DBImpl*>(db_.get()); }
  // REQUIRES: the DB is quiescent (see the file comment).
  Version* current() { return impl()->TEST_current(); }
  std::vector<uint64_t> FileNumbers(int level) {
    std::vector<uint64_t> r;
    for (const auto& f : current()->files(level)) r.push_back(f->number);
    return r;
  }
  int NumFiles(int level) { return current()->NumFiles(level); }
  std::string LevelCounts() {
    std::string s;
    for (int l = 0; l < current()->NumLevels(); l++) s += std::to_string(NumFiles(l)) + " ";
    return s;
  }
  uint64_t TotalDeletions() {
    uint64_t n = 0;
    for (int l = 0; l < current()->NumLevels(); l++) {
      for (const auto& f : current()->files(l)) n += f->num_deletions;
    }
    return n;
  }
  uint64_t TotalEntries() {
    uint64_t n = 0;
    for (int l = 0; l < current()->NumLevels(); l++) {
      for (const auto& f : current()->files(l)) n += f->num_entries;
    }
    return n;
  }
  std::set<uint64_t> LiveFiles() {
    std::set<uint64_t> r;
    for (int l = 0; l < current()->NumLevels(); l++) {
      for (uint64_t n : FileNumbers(l)) r.insert(n);
    }
    return r;
  }
  std::set<uint64_t> SstFilesOnDisk() {
    std::vector<std::string> children;
    EXPECT_OK(Env::Default()->GetChildren(dbname_, &children));
    std::set<uint64_t> r;
    for (const std::string& name : children) {
      uint64_t number;
      FileType type;
      if (ParseFileName(name, &number, &type) && type == kTableFile) r.insert(number);
    }
    return r;
  }
  // Puts keys [from, to) with `step`, values tagged with `tag`, into kv too.
  void PutRange(int from, int to, int step, const std::string& tag, KV* kv,
                size_t value_len = 200) {
    for (int i = from; i < to; i += step) {
      std::string v = tag + ":" + NumKey(i);
      v.resize(value_len, static_cast<char>('a' + i % 26));
      ASSERT_OK(Put(NumKey(i), v));
      (*kv)[NumKey(i)] = v;
    }
  }
  // PutRange, then Flush: one more L0 file.
  void FlushRange(int from, int to, int step, const std::string& tag, KV* kv) {
    PutRange(from, to, step, tag, kv);
    ASSERT_OK(Flush());
  }
  uint64_t CompactionCountAtLevels(int from) {
    // "Comp(cnt)" column of shale.stats, summed over levels >= from.
    std::string stats;
    EXPECT_TRUE(db_->GetProperty("shale.stats", &stats));
    uint64_t total = 0;
    size_t pos = 0;
    while ((pos = stats.find("\n", pos)) != std::string::npos) {
      pos++;
      int level;
      if (sscanf(stats.c_str() + pos, " L%d", &level) != 1 || level < from) continue;
      // Columns after the name: files, size, "MB", score, read, rn, rnp1, write, moved,
      // w-amp, rd, wr, sec, cnt.
      char unit[8];
      double d[12];
      unsigned long long cnt = 0;
      int files;
      if (sscanf(stats.c_str() + pos,
                 " L%d %d %lf %7s %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %llu", &level, &files,
                 &d[0], unit, &d[1], &d[2], &d[3], &d[4], &d[5], &d[6], &d[7], &d[8], &d[9], &d[10],
                 &cnt) == 15) {
        total += cnt;
      }
    }
    return total;
  }
};

// ---- (a) Randomized model test with tiny levels.

struct ModelParam {
  const char* name;
  bool dynamic;
  uint32_t subcompactions;
  int num_levels;
  int l0_trigger;
  size_t write_buffer_size;
};

void PrintTo(const ModelParam& p, std::ostream* os) { *os << p.name; }

class DBCompactionModelTest : public DBCompactionTest,
                              public ::testing::WithParamInterface<ModelParam> {};

TEST_P(DBCompactionModelTest, RandomOpsAcrossLevels) {
  const ModelParam& p = GetParam();
  options_.level_compaction_dynamic_level_bytes = p.dynamic;
  options_.max_subcompactions = p.subcompactions;
  options_.num_levels = p.num_levels;
  options_.level0_file_num_compaction_trigger = p.l0_trigger;
  options_.write_buffer_size = p.write_buffer_size;
  options_.max_background_jobs = 3;
  options_.statistics = CreateDBStatistics();
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  Open();

  constexpr int kKeys = 4000;
  KV model;
  struct HeldSnapshot {
    const Snapshot* snap;
    KV model;
  };
  std::vector<HeldSnapshot> snapshots;
  // An iterator created early and read much later: its implicit snapshot and its files
  // must survive the compactions in between.
  std::unique_ptr<Iterator> held_iter;
  KV held_iter_model;
  uint64_t counter = 0;
  int deepest = 0;

  auto check_snapshot = [&](const HeldSnapshot& h) {
    ASSERT_TRUE(SameContents(h.model, ScanAll(db_.get(), h.snap))) << "seed " << seed;
    ReadOptions ro;
    ro.snapshot = h.snap;
    for (int i = 0; i < 50; i++) {
      const std::string k = NumKey(static_cast<int>(rnd.Uniform(kKeys)));
      std::string v;
      Status s = db_->Get(ro, k, &v);
      auto it = h.model.find(k);
      if (it == h.model.end()) {
        ASSERT_TRUE(s.IsNotFound()) << k << " " << s.ToString() << " seed " << seed;
      } else {
        ASSERT_OK(s);
        ASSERT_EQ(it->second, v) << k << " seed " << seed;
      }
    }
  };
  auto check_settled = [&](const char* when) {
    ASSERT_OK(WaitForCompact());
    ASSERT_TRUE(TreeInvariants(current(), impl()->TEST_LevelScores(), options_, true))
        << when << " seed " << seed;
    if (held_iter == nullptr) {
      // Nothing pins an old Version: every SST file on disk is a live one.
      EXPECT_EQ(LiveFiles(), SstFilesOnDisk()) << when << " seed " << seed;
    }
    for (int l = current()->NumLevels() - 1; l > 0; l--) {
      if (NumFiles(l) > 0) {
        deepest = std::max(deepest, l);
        break;
      }
    }
    ASSERT_TRUE(SameContents(model, ScanAll(db_.get()))) << when << " seed " << seed;
  };

  constexpr int kRounds = 3;
  constexpr int kOpsPerRound = 4000;
  for (int round = 0; round < kRounds; round++) {
    for (int op = 0; op < kOpsPerRound; op++) {
      const uint32_t r = rnd.Uniform(1000);
      const std::string k = NumKey(static_cast<int>(rnd.Uniform(kKeys)));
      if (r < 650) {
        std::string v = std::to_string(++counter) + "/" + k + "/";
        v += RandomString(&rnd, 20 + rnd.Uniform(400));
        ASSERT_OK(db_->Put(WriteOptions(), k, v));
        model[k] = v;
      } else if (r < 850) {
        ASSERT_OK(db_->Delete(WriteOptions(), k));
        model.erase(k);
      } else if (r < 950) {
        // A batch mixing puts and deletes of nearby keys.
        WriteBatch batch;
        const int start = static_cast<int>(rnd.Uniform(kKeys - 20));
        for (int i = 0; i < 10; i++) {
          const std::string bk = NumKey(start + static_cast<int>(rnd.Uniform(20)));
          if (rnd.OneIn(3)) {
            ASSERT_OK(batch.Delete(bk));
            model.erase(bk);
          } else {
            std::string v = std::to_string(++counter) + "/" + bk;
            ASSERT_OK(batch.Put(bk, v));
            model[bk] = v;
          }
        }
        ASSERT_OK(db_->Write(WriteOptions(), &batch));
      } else if (r < 960) {
        if (snapshots.size() < 3) snapshots.push_back({db_->GetSnapshot(), model});
      } else if (r < 966) {
        if (!snapshots.empty()) {
          const size_t which = rnd.Uniform(static_cast<uint32_t>(snapshots.size()));
          check_snapshot(snapshots[which]);
          db_->ReleaseSnapshot(snapshots[which].snap);
          snapshots.erase(snapshots.begin() + static_cast<long>(which));
        }
      } else if (r < 968) {
        if (held_iter == nullptr) {
          held_iter.reset(db_->NewIterator(ReadOptions()));
          held_iter_model = model;
        } else {
          KV seen;
          for (held_iter->SeekToFirst(); held_iter->Valid(); held_iter->Next()) {
            seen[held_iter->key().ToString()] = held_iter->value().ToString();
          }
          ASSERT_OK(held_iter->status());
          ASSERT_TRUE(SameContents(held_iter_model, seen)) << "held iterator, seed " << seed;
          held_iter.reset();
        }
      } else if (r < 970) {
        std::string v;
        Status s = db_->Get(ReadOptions(), k, &v);
        auto it = model.find(k);
        if (it == model.end()) {
          ASSERT_TRUE(s.IsNotFound()) << k << " seed " << seed;
        } else {
          ASSERT_OK(s);
          ASSERT_EQ(it->second, v) << k << " seed " << seed;
        }
      }
    }
    check_settled("after round");
    for (const HeldSnapshot& h : snapshots) check_snapshot(h);
    if (round == 1) {
      // Reopen: snapshots and iterators do not survive it.
      held_iter.reset();
      for (const HeldSnapshot& h : snapshots) db_->ReleaseSnapshot(h.snap);
      snapshots.clear();
      Reopen();
      ASSERT_TRUE(TreeInvariants(current(), impl()->TEST_LevelScores(), options_, false))
          << "after reopen, seed " << seed;
      check_settled("after reopen");
    }
  }
  held_iter.reset();
  for (const HeldSnapshot& h : snapshots) {
    check_snapshot(h);
    db_->ReleaseSnapshot(h.snap);
  }
  // The data did go deep: at least two levels below L0 took part.
  EXPECT_GE(deepest, 2) << LevelCounts();
  HistogramData subs;
  options_.statistics->histogramData(NUM_SUBCOMPACTIONS_SCHEDULED, &subs);
  EXPECT_GT(subs.count, 0u);
  if (p.subcompactions > 1) {
    EXPECT_GE(subs.max, 2.0) << "no compaction was split";
  } else {
    EXPECT_EQ(1.0, subs.max);
  }
  fprintf(stderr, "files per level: %s\n", LevelCounts().c_str());
  Reopen();
  ASSERT_TRUE(SameContents(model, ScanAll(db_.get()))) << "final reopen, seed " << seed;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, DBCompactionModelTest,
    ::testing::Values(ModelParam{"static_7_levels", false, 1, 7, 4, 64 << 10},
                      ModelParam{"static_4_levels_subcompactions", false, 3, 4, 2, 32 << 10},
                      ModelParam{"dynamic_6_levels", true, 1, 6, 2, 16 << 10},
                      ModelParam{"dynamic_7_levels_subcompactions", true, 3, 7, 3, 32 << 10}),
    [](const ::testing::TestParamInfo<ModelParam>& info) { return info.param.name; });

// ---- (b) CompactRange.

TEST_F(DBCompactionTest, CompactRangeWholeRangeDropsTombstonesAtTheBottom) {
  OpenManual();
  KV kv;
  FlushRange(0, 1200, 1, "v1", &kv);
  PutRange(0, 1200, 2, "v2", &kv);  // overwrites
  ASSERT_OK(Flush());
  for (int i = 0; i < 1200; i += 3) {
    ASSERT_OK(Delete(NumKey(i)));
    kv.erase(NumKey(i));
  }
  ASSERT_OK(Flush());
  ASSERT_EQ(3, NumFiles(0));
  ASSERT_GT(TotalDeletions(), 0u);

  CompactRangeOptions cro;
  cro.bottommost_level_compaction = BottommostLevelCompaction::kForce;
  ASSERT_OK(db_->CompactRange(cro, nullptr, nullptr));
  EXPECT_EQ(0, NumFiles(0)) << LevelCounts();
  EXPECT_TRUE(TreeInvariants(current(), impl()->TEST_LevelScores(), options_, false));
  EXPECT_EQ(0u, TotalDeletions()) << "tombstones survived at the bottom";
  EXPECT_EQ(kv.size(), TotalEntries()) << "overwritten versions survived";
  EXPECT_TRUE(SameContents(kv, ScanAll(db_.get())));
  for (int i = 0; i < 1200; i += 97) {
    std::string v;
    Status s = db_->Get(ReadOptions(), NumKey(i), &v);
    if (kv.count(NumKey(i)) == 0) {
      EXPECT_TRUE(s.IsNotFound()) << NumKey(i);
    } else {
      EXPECT_OK(s);
      EXPECT_EQ(kv[NumKey(i)], v);
    }
  }
  Reopen();
  EXPECT_TRUE(SameContents(kv, ScanAll(db_.get())));
}

TEST_F(DBCompactionTest, CompactRangeSubRangeLeavesTheRestAlone) {
  OpenManual();
  KV kv;
  // Three L0 files over disjoint key ranges.
  FlushRange(0, 200, 1, "a", &kv);
  FlushRange(300, 500, 1, "b", &kv);
  FlushRange(700, 900, 1, "c", &kv);
  const std::vector<uint64_t> l0 = FileNumbers(0);  // newest first
  ASSERT_EQ(3u, l0.size());

  const std::string begin = NumKey(350), end = NumKey(420);
  const Slice b(begin), e(end);
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), &b, &e));
  // Only the middle file overlapped the range.
  EXPECT_EQ((std::vector<uint64_t>{l0[0], l0[2]}), FileNumbers(0)) << LevelCounts();
  EXPECT_EQ(1, NumFiles(1)) << LevelCounts();
  EXPECT_TRUE(SameContents(kv, ScanAll(db_.get())));

  // A range touching the two remaining files moves them both.
  const std::string b2 = NumKey(100), e2 = NumKey(800);
  const Slice b2s(b2), e2s(e2);
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), &b2s, &e2s));
  EXPECT_EQ(0, NumFiles(0)) << LevelCounts();
  EXPECT_TRUE(TreeInvariants(current(), impl()->TEST_LevelScores(), options_, false));
  EXPECT_TRUE(SameContents(kv, ScanAll(db_.get())));
}

TEST_F(DBCompactionTest, CompactRangeChangeLevelMovesToTargetLevel) {
  options_.disable_auto_compactions = true;
  OneFilePerFlush();
  options_.num_levels = 5;
  Open();
  KV kv;
  FlushRange(0, 800, 1, "v", &kv);
  FlushRange(400, 1200, 1, "w", &kv);
  CompactRangeOptions cro;
  cro.change_level = true;
  cro.target_level = 3;
  ASSERT_OK(db_->CompactRange(cro, nullptr, nullptr));
  for (int l = 0; l < 5; l++) {
    if (l != 3) EXPECT_EQ(0, NumFiles(l)) << "L" << l << ": " << LevelCounts();
  }
  EXPECT_GT(NumFiles(3), 0) << LevelCounts();
  EXPECT_TRUE(SameContents(kv, ScanAll(db_.get())));

  // Back up to L1 (it fits there: the data is under max_bytes_for_level_base).
  const std::vector<uint64_t> at3 = FileNumbers(3);
  cro.target_level = 1;
  cro.bottommost_level_compaction = BottommostLevelCompaction::kSkip;
  ASSERT_OK(db_->CompactRange(cro, nullptr, nullptr));
  EXPECT_EQ(at3, FileNumbers(1)) << LevelCounts();
  EXPECT_EQ(0, NumFiles(3)) << LevelCounts();
  Reopen();
  EXPECT_EQ(at3, FileNumbers(1)) << LevelCounts();
  EXPECT_TRUE(SameContents(kv, ScanAll(db_.get())));

  // target_level beyond the tree is refused.
  cro.target_level = 5;
  EXPECT_TRUE(db_->CompactRange(cro, nullptr, nullptr).IsInvalidArgument());
}

TEST_F(DBCompactionTest, BottommostForceRewritesAndSkipKeeps) {
  OpenManual();
  KV kv;
  FlushRange(0, 600, 1, "old", &kv);
  // A snapshot keeps the old versions and the tombstones alive through the first compaction.
  const Snapshot* snap = db_->GetSnapshot();
  const KV at_snap = kv;
  PutRange(0, 600, 2, "new", &kv);
  for (int i = 1; i < 600; i += 4) {
    ASSERT_OK(Delete(NumKey(i)));
    kv.erase(NumKey(i));
  }
  ASSERT_OK(Flush());
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  ASSERT_EQ(0, NumFiles(0));
  EXPECT_TRUE(SameContents(at_snap, ScanAll(db_.get(), snap)));
  EXPECT_TRUE(SameContents(kv, ScanAll(db_.get())));
  const uint64_t entries_with_snapshot = TotalEntries();
  ASSERT_GT(TotalDeletions(), 0u);
  db_->ReleaseSnapshot(snap);

  // Only the bottommost level holds data: kSkip leaves it as it is.
  int bottom = 0;
  for (int l = 1; l < current()->NumLevels(); l++) {
    if (NumFiles(l) > 0) bottom = l;
  }
  ASSERT_GT(bottom, 0);
  const std::vector<uint64_t> before = FileNumbers(bottom);
  CompactRangeOptions skip;
  skip.bottommost_level_compaction = BottommostLevelCompaction::kSkip;
  ASSERT_OK(db_->CompactRange(skip, nullptr, nullptr));
  EXPECT_EQ(before, FileNumbers(bottom));
  EXPECT_EQ(entries_with_snapshot, TotalEntries());

  // kForce rewrites it: what the released snapshot needed is gone.
  CompactRangeOptions force;
  force.bottommost_level_compaction = BottommostLevelCompaction::kForce;
  ASSERT_OK(db_->CompactRange(force, nullptr, nullptr));
  EXPECT_NE(before, FileNumbers(bottom));
  EXPECT_EQ(0u, TotalDeletions());
  EXPECT_EQ(kv.size(), TotalEntries());
  EXPECT_TRUE(SameContents(kv, ScanAll(db_.get())));
}

// ---- (c) Trivial move.

TEST_F(DBCompactionTest, FileOverlappingNothingBelowMovesWithoutRewrite) {
  OneFilePerFlush();
  options_.level0_file_num_compaction_trigger = 1;
  Open();
  KV kv;
  FlushRange(0, 300, 1, "a", &kv);
  ASSERT_OK(WaitForCompact());
  // One L0 file and nothing below: it moves down unchanged.
  ASSERT_EQ(0, NumFiles(0));
  ASSERT_EQ(1, NumFiles(1)) << LevelCounts();
  const uint64_t first = FileNumbers(1)[0];
  EXPECT_EQ(SstFilesOnDisk(), (std::set<uint64_t>{first}));

  // A second file after the first in key order also moves, beside it.
  FlushRange(1000, 1300, 1, "b", &kv);
  const std::set<uint64_t> on_disk = SstFilesOnDisk();
  ASSERT_OK(WaitForCompact());
  EXPECT_EQ(0, NumFiles(0));
  ASSERT_EQ(2, NumFiles(1)) << LevelCounts();
  EXPECT_EQ(first, FileNumbers(1)[0]);
  EXPECT_EQ(on_disk, SstFilesOnDisk()) << "a trivial move wrote a file";

  // The move is counted as moved bytes, not written ones.
  std::string stats;
  ASSERT_TRUE(db_->GetProperty("shale.stats", &stats));
  // The row's label is right-aligned as RocksDB prints it ("  L1"); tolerate any padding.
  size_t l1 = std::string::npos;
  for (size_t pos = 0; pos != std::string::npos; pos = stats.find('\n', pos + 1)) {
    const size_t first = stats.find_first_not_of(' ', pos == 0 ? 0 : pos + 1);
    if (first != std::string::npos && stats.compare(first, 3, "L1 ") == 0) {
      l1 = first;
      break;
    }
  }
  ASSERT_NE(std::string::npos, l1) << stats;
  double size, score, read, rn, rnp1, write, moved;
  int files;
  char unit[8];
  ASSERT_EQ(9, sscanf(stats.c_str() + l1, " L1 %d %lf %7s %lf %lf %lf %lf %lf %lf", &files, &size,
                      unit, &score, &read, &rn, &rnp1, &write, &moved))
      << stats;
  EXPECT_EQ(0.0, write) << stats;
  EXPECT_TRUE(SameContents(kv, ScanAll(db_.get())));

  EXPECT_TRUE(SameContents(kv, ScanAll(db_.get())));
}

TEST_F(DBCompactionTest, ManualCompactionOfLoneFileIsTrivialMove) {
  OpenManual();
  KV kv;
  FlushRange(0, 300, 1, "a", &kv);
  const std::vector<uint64_t> l0 = FileNumbers(0);
  ASSERT_EQ(1u, l0.size());
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  EXPECT_EQ(l0, FileNumbers(1)) << LevelCounts();
  EXPECT_EQ(SstFilesOnDisk(), std::set<uint64_t>(l0.begin(), l0.end()));
  EXPECT_TRUE(SameContents(kv, ScanAll(db_.get())));
}

// ---- (d) disable_auto_compactions.

TEST_F(DBCompactionTest, DisabledAutoCompactionsLetL0GrowUntilCompactRange) {
  options_.disable_auto_compactions = true;
  OneFilePerFlush();
  options_.level0_slowdown_writes_trigger = 4;
  options_.level0_stop_writes_trigger = 6;
  Open();
  KV kv;
  for (int f = 0; f < 10; f++) {
    FlushRange(f * 50, f * 50 + 400, 3, "f" + std::to_string(f), &kv);
  }
  ASSERT_OK(WaitForCompact());
  // No compaction ran, and the stall triggers did not stop the writes either.
  EXPECT_EQ(10, NumFiles(0));
  uint64_t stopped = 1;
  ASSERT_TRUE(db_->GetIntProperty("shale.is-write-stopped", &stopped));
  EXPECT_EQ(0u, stopped);
  EXPECT_TRUE(SameContents(kv, ScanAll(db_.get())));

  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  EXPECT_EQ(0, NumFiles(0));
  EXPECT_TRUE(TreeInvariants(current(), impl()->TEST_LevelScores(), options_, false));
  EXPECT_TRUE(SameContents(kv, ScanAll(db_.get())));
  // Still nothing automatic afterwards.
  for (int f = 0; f < 3; f++) {
    FlushRange(f, 600, 7, "g" + std::to_string(f), &kv);
  }
  ASSERT_OK(WaitForCompact());
  EXPECT_EQ(3, NumFiles(0));
  EXPECT_TRUE(SameContents(kv, ScanAll(db_.get())));
}

// ---- (e) Obsolete files.

TEST_F(DBCompactionTest, InputFilesLiveWhileAnIteratorNeedsThem) {
  OpenManual();
  KV kv;
  FlushRange(0, 500, 1, "a", &kv);
  FlushRange(250, 750, 1, "b", &kv);
  const std::vector<uint64_t> inputs = FileNumbers(0);
  ASSERT_EQ(2u, inputs.size());
  const KV before = kv;

  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
  // Overwrite everything and compact: the iterator's files are no longer in any current
  // Version.
  PutRange(0, 750, 1, "c", &kv);
  CompactRangeOptions force;
  force.bottommost_level_compaction = BottommostLevelCompaction::kForce;
  ASSERT_OK(db_->CompactRange(force, nullptr, nullptr));
  const std::vector<uint64_t> l1 = FileNumbers(1);
  for (uint64_t n : inputs) EXPECT_EQ(0, std::count(l1.begin(), l1.end(), n));
  const std::set<uint64_t> on_disk = SstFilesOnDisk();
  for (uint64_t n : inputs) EXPECT_EQ(1u, on_disk.count(n)) << "#" << n << " deleted too early";

  KV seen;
  for (it->SeekToFirst(); it->Valid(); it->Next())
    seen[it->key().ToString()] = it->value().ToString();
  ASSERT_OK(it->status());
  EXPECT_TRUE(SameContents(before, seen));
  it.reset();
  EXPECT_TRUE(SameContents(kv, ScanAll(db_.get())));

  // Once the iterator is gone the inputs are garbage. RocksDB deletes them when the last
  // reference goes; at the latest the next flush's sweep must find them.
  ASSERT_OK(Put("zzz", "1"));
  ASSERT_OK(Flush());
  const std::set<uint64_t> after = SstFilesOnDisk();
  for (uint64_t n : inputs) EXPECT_EQ(0u, after.count(n)) << "#" << n << " never deleted";
  EXPECT_EQ(LiveFiles(), after);
}

TEST_F(DBCompactionTest, CompactionDeletesItsInputFiles) {
  OpenManual();
  KV kv;
  FlushRange(0, 400, 1, "a", &kv);
  FlushRange(200, 600, 1, "b", &kv);
  const std::vector<uint64_t> inputs = FileNumbers(0);
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  // No reader needs the inputs: they go as the compaction ends, not at the next job.
  const std::set<uint64_t> on_disk = SstFilesOnDisk();
  for (uint64_t n : inputs) EXPECT_EQ(0u, on_disk.count(n)) << "#" << n << " left behind";
  EXPECT_EQ(LiveFiles(), on_disk);
  EXPECT_TRUE(SameContents(kv, ScanAll(db_.get())));
}

TEST_F(DBCompactionTest, InputFilesDeletedWhenTheLastIteratorGoes) {
  OpenManual();
  KV kv;
  FlushRange(0, 300, 1, "a", &kv);
  FlushRange(100, 400, 1, "b", &kv);
  const std::vector<uint64_t> inputs = FileNumbers(0);
  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  ASSERT_EQ(1u, SstFilesOnDisk().count(inputs[0]));
  it.reset();
  // The iterator held the last reference to the old files: they go with it.
  const std::set<uint64_t> after = SstFilesOnDisk();
  for (uint64_t n : inputs) EXPECT_EQ(0u, after.count(n));
}

// ---- (f) Parallel compactions.

TEST_F(DBCompactionTest, ParallelCompactionsOnDisjointRanges) {
  options_.max_background_jobs = 4;
  options_.write_buffer_size = 16 << 10;
  options_.target_file_size_base = 16 << 10;
  options_.max_bytes_for_level_base = 64 << 10;
  options_.num_levels = 5;
  Open();
  std::atomic<bool> done{false};
  std::atomic<uint64_t> max_running{0};
  std::thread watcher([&] {
    while (!done.load()) {
      uint64_t n = 0;
      if (db_->GetIntProperty("shale.num-running-compactions", &n)) {
        uint64_t seen = max_running.load();
        while (n > seen && !max_running.compare_exchange_weak(seen, n)) {
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  // Four writers, each on its own quarter of the key space, so that L1 -> L2 jobs have
  // disjoint ranges to pick from.
  std::vector<KV> parts(4);
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; t++) {
    writers.emplace_back([&, t] {
      Random rnd(301 + t);
      for (int i = 0; i < 2500; i++) {
        const std::string k = NumKey(t * 100000 + static_cast<int>(rnd.Uniform(1500)));
        std::string v = RandomString(&rnd, 100 + rnd.Uniform(200));
        if (!db_->Put(WriteOptions(), k, v).ok()) return;
        parts[t][k] = v;
      }
    });
  }
  for (auto& w : writers) w.join();
  ASSERT_OK(WaitForCompact());
  done = true;
  watcher.join();
  KV all;
  for (const KV& p : parts) all.insert(p.begin(), p.end());
  EXPECT_TRUE(SameContents(all, ScanAll(db_.get())));
  EXPECT_TRUE(TreeInvariants(current(), impl()->TEST_LevelScores(), options_, true));
  // Compactions below L1 ran (L1 -> L2 and deeper are the ones that may run side by side).
  EXPECT_GT(CompactionCountAtLevels(2), 0u);
  EXPECT_GE(max_running.load(), 1u);
  fprintf(stderr, "max concurrent compactions seen: %llu\n",
          static_cast<unsigned long long>(max_running.load()));
  uint64_t running = 1;
  ASSERT_TRUE(db_->GetIntProperty("shale.num-running-compactions", &running));
  EXPECT_EQ(0u, running);
}

}  // namespace
}  // namespace shale
