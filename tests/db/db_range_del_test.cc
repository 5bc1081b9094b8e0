// Range deletions through the DB's reads, flushes and compactions: Get, MultiGet,
// GetMergeOperands and iterators in both directions honour tombstones from the memtables and
// the files, under snapshots, across a reopen (WAL replay), flushes and compactions; and a
// randomized model test against a std::map per snapshot.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "shale/db.h"
#include "shale/merge_operator.h"
#include "shale/write_batch.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

class AppendOperator : public AssociativeMergeOperator {
 public:
  bool Merge(const Slice& /*key*/, const Slice* existing, const Slice& value,
             std::string* new_value, Logger* /*logger*/) const override {
    *new_value =
        existing == nullptr ? value.ToString() : existing->ToString() + "," + value.ToString();
    return true;
  }
  const char* Name() const override { return "AppendOperator"; }
};

class DBRangeDelTest : public DBTestBase {
 protected:
  DBRangeDelTest() : DBTestBase("db_range_del") {
    options_.disable_auto_compactions = true;
    options_.merge_operator = std::make_shared<AppendOperator>();
  }
  ~DBRangeDelTest() override { Close(); }

  Status DeleteRange(const std::string& begin, const std::string& end) {
    return db_->DeleteRange(WriteOptions(), begin, end);
  }

  std::string MultiGetAll(const std::vector<std::string>& keys, const Snapshot* snap = nullptr) {
    ReadOptions ro;
    ro.snapshot = snap;
    std::vector<Slice> slices(keys.begin(), keys.end());
    std::vector<std::string> values;
    std::vector<Status> statuses = db_->MultiGet(ro, slices, &values);
    std::string out;
    for (size_t i = 0; i < keys.size(); i++) {
      out += keys[i] + "=" +
             (statuses[i].ok()           ? values[i]
              : statuses[i].IsNotFound() ? "NF"
                                         : statuses[i].ToString()) +
             " ";
    }
    return out;
  }

  std::string Operands(const std::string& key) {
    std::vector<PinnableSlice> slots(10);
    GetMergeOperandsOptions gmo;
    gmo.expected_max_number_of_operands = 10;
    int n = 0;
    Status s = db_->GetMergeOperands(ReadOptions(), db_->DefaultColumnFamily(), key, slots.data(),
                                     &gmo, &n);
    if (!s.ok()) return s.IsNotFound() ? "NF" : s.ToString();
    std::string out;
    for (int i = 0; i < n; i++) out += slots[i].ToString() + ";";
    return out;
  }
};

TEST_F(DBRangeDelTest, MemtableThenFileThenReopen) {
  Open();
  for (const char* k : {"a", "b", "c", "d", "e"}) ASSERT_OK(Put(k, std::string("v") + k));
  const Snapshot* before = db_->GetSnapshot();
  ASSERT_OK(DeleteRange("b", "d"));
  ASSERT_OK(Put("c", "new"));  // newer than the tombstone: visible
  auto check = [&] {
    EXPECT_EQ("NOT_FOUND", Get("b"));
    EXPECT_EQ("new", Get("c"));
    EXPECT_EQ("vd", Get("d"));  // the end is exclusive
    EXPECT_EQ("vb", Get("b", before));
    EXPECT_EQ("a=va,c=new,d=vd,e=ve,", Contents());
    EXPECT_EQ("e=ve,d=vd,c=new,a=va,", Contents(ReadOptions(), /*reverse=*/true));
    EXPECT_EQ("a=va b=NF c=new d=vd ", MultiGetAll({"a", "b", "c", "d"}));
    EXPECT_EQ("a=va b=vb c=vc d=vd ", MultiGetAll({"a", "b", "c", "d"}, before));
    ReadOptions at_before;
    at_before.snapshot = before;
    EXPECT_EQ("a=va,b=vb,c=vc,d=vd,e=ve,", Contents(at_before));
  };
  check();
  ASSERT_OK(Flush());  // the tombstone and the keys now in one L0 file
  EXPECT_EQ("1", FilesPerLevel());
  check();
  db_->ReleaseSnapshot(before);
  Reopen();
  EXPECT_EQ("NOT_FOUND", Get("b"));
  EXPECT_EQ("a=va,c=new,d=vd,e=ve,", Contents());
}

// Iterators made at once by many threads over one Version whose files hold tombstones (the
// Version makes their lists at the first one, d15a479): every scan reads the same keys.
TEST_F(DBRangeDelTest, ThreadsMakingIteratorsAtOnceReadTheSame) {
  Open();
  for (int round = 0; round < 4; round++) {  // four L0 files, each with keys and a tombstone
    for (int i = round; i < 200; i += 4) ASSERT_OK(Put(Key(i), "v" + std::to_string(round)));
    ASSERT_OK(DeleteRange(Key(round * 40 + 5), Key(round * 40 + 25)));
    ASSERT_OK(Flush());
  }
  ASSERT_OK(DeleteRange(Key(180), Key(190)));  // and one in the memtable
  const std::string expected = Contents();
  ASSERT_NE(std::string::npos, expected.find(Key(4) + "="));
  ASSERT_EQ(std::string::npos, expected.find(Key(128) + "="));  // the last round's range
  ASSERT_EQ(std::string::npos, expected.find(Key(185) + "="));
  Reopen();  // a new Version, its lists not made yet
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; t++) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; i++) {
        if (Contents() != expected) wrong++;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(0, wrong.load());
}

TEST_F(DBRangeDelTest, TombstoneInNewerSourceCoversOlderFiles) {
  Open();
  for (int i = 0; i < 100; i++) ASSERT_OK(Put(Key(i), "old"));
  ASSERT_OK(Flush());
  ASSERT_OK(DeleteRange(Key(10), Key(90)));
  EXPECT_EQ("NOT_FOUND", Get(Key(50)));
  EXPECT_EQ("old", Get(Key(90)));
  ASSERT_OK(Flush());  // a second L0 file holding only the tombstone
  EXPECT_EQ("2", FilesPerLevel());
  EXPECT_EQ("NOT_FOUND", Get(Key(10)));
  EXPECT_EQ("old", Get(Key(9)));
  // Iterators land outside the deleted run from either side and change direction at its
  // edges.
  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
  it->Seek(Key(20));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(Key(90), it->key().ToString());
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(Key(9), it->key().ToString());
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(Key(90), it->key().ToString());
  it->SeekForPrev(Key(50));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(Key(9), it->key().ToString());
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  ASSERT_OK(it->status());
  EXPECT_EQ(20, n);
  n = 0;
  for (it->SeekToLast(); it->Valid(); it->Prev()) n++;
  EXPECT_EQ(20, n);
}

TEST_F(DBRangeDelTest, MergeOperandsStopAtTheTombstone) {
  Open();
  ASSERT_OK(Merge("k", "1"));
  ASSERT_OK(Merge("k", "2"));
  ASSERT_OK(Flush());
  ASSERT_OK(DeleteRange("a", "z"));
  ASSERT_OK(Merge("k", "3"));
  EXPECT_EQ("3", Get("k"));
  EXPECT_EQ("3;", Operands("k"));
  ASSERT_OK(Merge("k", "4"));
  EXPECT_EQ("3;4;", Operands("k"));
  ASSERT_OK(Flush());  // folds the two operands into one
  EXPECT_EQ("3,4", Get("k"));
  EXPECT_EQ("3,4;", Operands("k"));
  EXPECT_EQ("k=3,4 ", MultiGetAll({"k"}));
  EXPECT_EQ("k=3,4,", Contents());
}

// Compaction drops what a tombstone covers and, at the bottom with no snapshot, the
// tombstone too; a snapshot older than it keeps both.
TEST_F(DBRangeDelTest, CompactionDropsCoveredKeysAndTombstones) {
  Open();
  for (int i = 0; i < 100; i++) ASSERT_OK(Put(Key(i), "v"));
  ASSERT_OK(Flush());
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_OK(DeleteRange(Key(10), Key(90)));
  ASSERT_OK(Flush());
  ASSERT_OK(CompactAll());
  EXPECT_EQ("NOT_FOUND", Get(Key(50)));
  EXPECT_EQ("v", Get(Key(50), snap));  // kept for the snapshot
  std::vector<LiveFileMetaData> files;
  db_->GetLiveFilesMetaData(&files);
  uint64_t entries = 0;
  for (const auto& f : files) entries += f.num_entries;
  EXPECT_EQ(100u, entries);
  db_->ReleaseSnapshot(snap);
  CompactRangeOptions force;  // the bottom level is rewritten only when asked
  force.bottommost_level_compaction = BottommostLevelCompaction::kForce;
  ASSERT_OK(db_->CompactRange(force, nullptr, nullptr));
  EXPECT_EQ("NOT_FOUND", Get(Key(50)));
  EXPECT_EQ("v", Get(Key(90)));
  files.clear();
  db_->GetLiveFilesMetaData(&files);
  entries = 0;
  for (const auto& f : files) entries += f.num_entries;
  EXPECT_EQ(20u, entries);
  const std::string contents = Contents();
  EXPECT_EQ(20, std::count(contents.begin(), contents.end(), '='));
  Reopen();
  EXPECT_EQ("NOT_FOUND", Get(Key(10)));
}

// A flush must not fold a newer operand onto a value the tombstone deleted.
TEST_F(DBRangeDelTest, FlushDoesNotMergeAcrossTheTombstone) {
  Open();
  ASSERT_OK(Put("k", "old"));
  ASSERT_OK(DeleteRange("a", "z"));
  ASSERT_OK(Merge("k", "new"));
  EXPECT_EQ("new", Get("k"));
  ASSERT_OK(Flush());
  EXPECT_EQ("new", Get("k"));
  EXPECT_EQ("k=new,", Contents());
}

TEST_F(DBRangeDelTest, ReversedRangeRefusedEmptyRangeIgnored) {
  Open();
  ASSERT_OK(Put("a", "1"));
  Status s = DeleteRange("b", "a");
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  ASSERT_OK(DeleteRange("a", "a"));
  EXPECT_EQ("1", Get("a"));
}

// Random Put/Delete/DeleteRange/Merge over a small key space, with snapshots, flushes,
// compactions (whole and partial, outputs cut small) and reopens, checked at every snapshot by Get,
// MultiGet and iterators both ways against a std::map per snapshot.
TEST_F(DBRangeDelTest, RandomAgainstModel) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  options_.write_buffer_size = 4 << 10;      // several memtables and L0 files
  options_.target_file_size_base = 2 << 10;  // compactions cut outputs often
  Open();
  using Model = std::map<std::string, std::string>;
  Model model;
  std::vector<std::pair<const Snapshot*, Model>> snaps;
  auto key = [&](uint64_t i) { return "k" + std::to_string(10 + i); };
  auto verify = [&](const Model& m, const Snapshot* snap) {
    ReadOptions ro;
    ro.snapshot = snap;
    std::string want;
    for (const auto& [k, v] : m) want += k + "=" + v + ",";
    ASSERT_EQ(want, Contents(ro)) << "seed " << seed;
    std::string want_rev;
    for (auto r = m.rbegin(); r != m.rend(); ++r) want_rev += r->first + "=" + r->second + ",";
    ASSERT_EQ(want_rev, Contents(ro, true)) << "seed " << seed;
    for (uint64_t i = 0; i < 40; i++) {
      auto f = m.find(key(i));
      ASSERT_EQ(f == m.end() ? "NOT_FOUND" : f->second, Get(key(i), snap)) << key(i);
    }
    // Direction changes at random points.
    std::unique_ptr<Iterator> it(db_->NewIterator(ro));
    for (int step = 0; step < 20; step++) {
      const std::string target = key(rnd.Uniform(40));
      if (rnd.OneIn(2)) {
        it->Seek(target);
        auto f = m.lower_bound(target);
        ASSERT_EQ(f != m.end(), it->Valid());
        if (f == m.end()) continue;
        ASSERT_EQ(f->first, it->key().ToString());
        it->Prev();
        if (f == m.begin()) {
          ASSERT_FALSE(it->Valid());
        } else {
          ASSERT_TRUE(it->Valid());
          ASSERT_EQ(std::prev(f)->first, it->key().ToString());
        }
      } else {
        it->SeekForPrev(target);
        auto f = m.upper_bound(target);
        const bool any = f != m.begin();
        ASSERT_EQ(any, it->Valid());
        if (!any) continue;
        --f;
        ASSERT_EQ(f->first, it->key().ToString());
        it->Next();
        ++f;
        ASSERT_EQ(f != m.end(), it->Valid());
        if (f != m.end()) ASSERT_EQ(f->first, it->key().ToString());
      }
    }
  };
  for (int op = 0; op < 1500; op++) {
    const uint64_t r = rnd.Uniform(100);
    const std::string k = key(rnd.Uniform(40));
    if (r < 40) {
      const std::string v = "v" + std::to_string(op);
      ASSERT_OK(Put(k, v));
      model[k] = v;
    } else if (r < 50) {
      ASSERT_OK(Delete(k));
      model.erase(k);
    } else if (r < 60) {
      const std::string v = "m" + std::to_string(op);
      ASSERT_OK(Merge(k, v));
      auto f = model.find(k);
      model[k] = f == model.end() ? v : f->second + "," + v;
    } else if (r < 70) {
      const std::string e = key(rnd.Uniform(40));
      if (e < k) {
        ASSERT_TRUE(DeleteRange(k, e).IsInvalidArgument());  // and nothing written
      } else {
        ASSERT_OK(DeleteRange(k, e));
        model.erase(model.lower_bound(k), model.lower_bound(e));
      }
    } else if (r < 73) {
      snaps.emplace_back(db_->GetSnapshot(), model);
    } else if (r < 75 && !snaps.empty()) {
      const size_t i = rnd.Uniform(snaps.size());
      db_->ReleaseSnapshot(snaps[i].first);
      snaps.erase(snaps.begin() + i);
    } else if (r < 78) {
      ASSERT_OK(Flush());
    } else if (r < 79) {
      for (auto& s : snaps) db_->ReleaseSnapshot(s.first);
      snaps.clear();
      Reopen();
    } else if (r < 80) {
      ASSERT_OK(CompactAll());
    } else if (r < 81) {
      // Part of the key space: deeper levels keep older data under the outputs.
      const std::string a = key(rnd.Uniform(40));
      const std::string b = key(rnd.Uniform(40));
      const Slice lo(std::min(a, b));
      const Slice hi(std::max(a, b));
      ASSERT_OK(db_->CompactRange(CompactRangeOptions(), &lo, &hi));
    } else if (r < 84) {
      verify(model, nullptr);
      if (!snaps.empty()) {
        const auto& s = snaps[rnd.Uniform(snaps.size())];
        verify(s.second, s.first);
      }
    }
    if (HasFatalFailure()) break;
  }
  verify(model, nullptr);
  for (auto& s : snaps) {
    verify(s.second, s.first);
    db_->ReleaseSnapshot(s.first);
  }
}

// Batches of Puts and range deletions, some synced, then a power loss: the DB comes back as
// the state after some prefix of the writes that holds every synced one, so a range
// deletion is all or nothing, and nothing it deleted comes back.
TEST_F(DBRangeDelTest, PowerLossKeepsAPrefixOfTheWrites) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  FaultInjectionTestEnv* env = UseFaultInjectionEnv();
  options_.write_buffer_size = 8 << 10;
  for (int round = 0; round < 4; round++) {
    Open();
    std::map<std::string, std::string> model;
    std::vector<std::map<std::string, std::string>> states{model};
    size_t durable = 0;
    for (int op = 0; op < 200; op++) {
      WriteBatch batch;
      for (int n = 0; n < 3; n++) {
        const std::string k = Key(rnd.Uniform(60));
        if (rnd.OneIn(3)) {
          const std::string e = Key(rnd.Uniform(60));
          if (e < k) continue;
          ASSERT_OK(batch.DeleteRange(k, e));
          model.erase(model.lower_bound(k), model.lower_bound(e));
        } else {
          const std::string v = std::to_string(round) + "." + std::to_string(op);
          ASSERT_OK(batch.Put(k, v));
          model[k] = v;
        }
      }
      WriteOptions wo;
      wo.sync = rnd.OneIn(4);
      ASSERT_OK(db_->Write(wo, &batch));
      states.push_back(model);
      if (wo.sync) durable = states.size() - 1;
      if (rnd.OneIn(30)) ASSERT_OK(Flush());
    }
    env->SetFilesystemActive(false);
    db_.reset();  // the crash
    ASSERT_OK(env->SimulatePowerLoss());
    env->SetFilesystemActive(true);
    env->ResetState();
    Open();
    const std::string got = Contents();
    bool matched = false;
    for (size_t i = durable; i < states.size() && !matched; i++) {
      std::string want;
      for (const auto& [k, v] : states[i]) want += k + "=" + v + ",";
      matched = want == got;
    }
    ASSERT_TRUE(matched) << "round " << round << " seed " << seed << ": not a state after "
                         << durable << " or more writes: " << got;
    Close();
    Destroy();
  }
}

}  // namespace
}  // namespace shale
