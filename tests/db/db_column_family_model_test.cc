// Column families against a model: random writes, range deletions, batches across families,
// flushes and compactions of one family at a time, drops and re-creations and reopens, with
// one std::map per family, read also at a snapshot; and a simulated power loss with families
// flushed at different times, against the synced writes. Each randomized case prints its seed
// (SHALE_SEED replays one).
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "shale/db.h"
#include "shale/merge_operator.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/family_handles.h"
#include "util/random.h"

namespace shale {
namespace {

uint64_t SeedFromEnv(uint64_t fallback) {
  const char* s = std::getenv("SHALE_SEED");
  return s != nullptr ? std::strtoull(s, nullptr, 10) : fallback;
}

using Model = std::map<std::string, std::string>;

class DBColumnFamilyModelTest : public DBTestBase, public testing::WithParamInterface<int> {
 protected:
  static constexpr int kFamilies = 4;  // the default and three more
  DBColumnFamilyModelTest() : DBTestBase("db_column_family_model") {
    options_.create_missing_column_families = true;
    options_.merge_operator = std::make_shared<JoinOperator>();
    options_.write_buffer_size = 32 << 10;
    options_.level0_file_num_compaction_trigger = 3;
    options_.max_bytes_for_level_base = 256 << 10;
    options_.target_file_size_base = 64 << 10;
  }
  ~DBColumnFamilyModelTest() override { CloseAll(); }

  static std::string Name(int f) {
    return f == 0 ? kDefaultColumnFamilyName : "cf" + std::to_string(f);
  }

  void OpenAll() {
    std::vector<ColumnFamilyDescriptor> descs;
    for (int f = 0; f < kFamilies; f++) descs.emplace_back(Name(f), options_);
    descs[2].options.write_buffer_size = 8 << 10;  // flushes far more often than the others
    ASSERT_OK(ReopenWithFamilies(options_, dbname_, descs, &handles_, &db_));
  }
  void CloseAll() { ReleaseHandles(db_.get(), &handles_); }

  // Every key of every family, read back by Get and by iteration (forward, and backward
  // from a random key), against the model; at the snapshot when one is given.
  void Verify(const std::vector<Model>& model, const std::string& when,
              const Snapshot* snapshot = nullptr) {
    SCOPED_TRACE(when);
    ReadOptions ro;
    ro.snapshot = snapshot;
    for (int f = 0; f < kFamilies; f++) {
      std::unique_ptr<Iterator> it(db_->NewIterator(ro, handles_[f]));
      // Backward from a key: direction changes land inside and at the edges of deleted
      // ranges.
      const std::string from = "k" + std::to_string(f * 7 + 3);
      it->SeekForPrev(from);
      auto back = model[f].upper_bound(from);
      for (; it->Valid(); it->Prev()) {
        ASSERT_NE(back, model[f].begin()) << Name(f) << " has extra " << it->key().ToString();
        --back;
        ASSERT_EQ(back->first, it->key().ToString()) << Name(f) << " backward";
      }
      ASSERT_OK(it->status());
      ASSERT_EQ(back, model[f].begin()) << Name(f) << " backward lacks " << back->first;
      auto m = model[f].begin();
      for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
        ASSERT_NE(m, model[f].end()) << Name(f) << " has extra key " << it->key().ToString();
        ASSERT_EQ(m->first, it->key().ToString()) << Name(f);
        ASSERT_EQ(m->second, it->value().ToString()) << Name(f) << " " << m->first;
      }
      ASSERT_OK(it->status());
      ASSERT_EQ(m, model[f].end()) << Name(f) << " lacks " << m->first;
      for (int k = 0; k < 40; k++) {
        const std::string key = "k" + std::to_string(k);
        std::string v;
        Status s = db_->Get(ro, handles_[f], key, &v);
        auto found = model[f].find(key);
        if (found == model[f].end()) {
          ASSERT_TRUE(s.IsNotFound()) << Name(f) << " " << key << " " << s.ToString();
        } else {
          ASSERT_OK(s);
          ASSERT_EQ(found->second, v) << Name(f) << " " << key;
        }
      }
    }
  }

  std::vector<ColumnFamilyHandle*> handles_;
};

TEST_P(DBColumnFamilyModelTest, RandomOperationsAgainstAMapPerFamily) {
  const uint64_t seed = SeedFromEnv(20261128 + GetParam());
  std::printf("seed %llu (SHALE_SEED replays it)\n", static_cast<unsigned long long>(seed));
  Random rnd(static_cast<uint32_t>(seed));
  OpenAll();
  std::vector<Model> model(kFamilies);
  // A snapshot (taken now and then, released at a reopen) and the model at its time.
  const Snapshot* snapshot = nullptr;
  std::vector<Model> at_snapshot;
  const auto release = [&] {
    if (snapshot != nullptr) db_->ReleaseSnapshot(snapshot);
    snapshot = nullptr;
  };
  // A random range of the key space ("k0" .. "k39", in byte order), sometimes empty.
  const auto random_range = [&rnd](std::string* begin, std::string* end) {
    *begin = "k" + std::to_string(rnd.Uniform(40));
    *end = rnd.OneIn(8) ? *begin : "k" + std::to_string(rnd.Uniform(40));
    if (*end < *begin) std::swap(*begin, *end);
  };
  const auto erase_range = [](Model* m, const std::string& begin, const std::string& end) {
    m->erase(m->lower_bound(begin), m->lower_bound(end));
  };
  const std::string pad(200, 'p');
  for (int step = 0; step < 1500; step++) {
    SCOPED_TRACE("step " + std::to_string(step));
    const int f = static_cast<int>(rnd.Uniform(kFamilies));
    const std::string key = "k" + std::to_string(rnd.Uniform(40));
    const std::string value = std::to_string(step) + pad.substr(0, rnd.Uniform(200));
    const int op = static_cast<int>(rnd.Uniform(100));
    if (op < 38) {
      ASSERT_OK(db_->Put(WriteOptions(), handles_[f], key, value));
      model[f][key] = value;
    } else if (op < 50) {
      ASSERT_OK(db_->Delete(WriteOptions(), handles_[f], key));
      model[f].erase(key);
    } else if (op < 56) {
      std::string begin, end;
      random_range(&begin, &end);
      ASSERT_OK(db_->DeleteRange(WriteOptions(), handles_[f], begin, end));
      erase_range(&model[f], begin, end);
    } else if (op < 68) {
      const std::string operand = std::to_string(step);
      ASSERT_OK(db_->Merge(WriteOptions(), handles_[f], key, operand));
      std::string& v = model[f][key];
      v = v.empty() ? operand : v + "," + operand;  // values are never empty: "" is absent
    } else if (op < 85) {
      // A batch across families: a few records in random families.
      WriteBatch batch;
      std::vector<Model> next = model;
      for (int i = 0; i < 4; i++) {
        const int g = static_cast<int>(rnd.Uniform(kFamilies));
        const std::string k = "k" + std::to_string(rnd.Uniform(40));
        if (rnd.OneIn(5)) {
          std::string begin, end;
          random_range(&begin, &end);
          ASSERT_OK(batch.DeleteRange(handles_[g], begin, end));
          erase_range(&next[g], begin, end);
        } else if (rnd.OneIn(3)) {
          ASSERT_OK(batch.Delete(handles_[g], k));
          next[g].erase(k);
        } else {
          const std::string v = "b" + std::to_string(step) + "." + std::to_string(i);
          ASSERT_OK(batch.Put(handles_[g], k, v));
          next[g][k] = v;
        }
      }
      ASSERT_OK(db_->Write(WriteOptions(), &batch));
      model = next;
    } else if (op < 89) {
      ASSERT_OK(db_->Flush(FlushOptions(), handles_[f]));
    } else if (op < 92) {
      ASSERT_OK(db_->CompactRange(CompactRangeOptions(), handles_[f], nullptr, nullptr));
    } else if (op < 93) {
      release();
      snapshot = db_->GetSnapshot();
      at_snapshot = model;
    } else if (op < 96 && f != 0) {
      // Dropped and created again: empty, under the same name.
      ASSERT_OK(db_->DropColumnFamily(handles_[f]));
      ASSERT_OK(db_->DestroyColumnFamilyHandle(handles_[f]));
      ColumnFamilyOptions o = options_;
      if (f == 2) o.write_buffer_size = 8 << 10;
      ASSERT_OK(db_->CreateColumnFamily(o, Name(f), &handles_[f]));
      model[f].clear();
      // The new family holds nothing from before the snapshot.
      if (snapshot != nullptr) at_snapshot[f].clear();
    } else if (op < 98) {
      release();
      OpenAll();
      Verify(model, "after reopen");
    } else {
      Verify(model, "verify");
      if (snapshot != nullptr) Verify(at_snapshot, "at the snapshot", snapshot);
    }
  }
  Verify(model, "at the end");
  if (snapshot != nullptr) Verify(at_snapshot, "at the snapshot at the end", snapshot);
  release();
  OpenAll();
  Verify(model, "reopened at the end");
}

INSTANTIATE_TEST_SUITE_P(Seeds, DBColumnFamilyModelTest, testing::Range(0, 3));

// Writers, readers and a thread that creates, flushes and drops a family, all at once
// (for ThreadSanitizer, and for the families' view writers use without the DB mutex):
// every write to a live family succeeds and reads back; writes to the family being
// dropped succeed or fail with InvalidArgument, nothing else.
TEST_F(DBColumnFamilyModelTest, FamiliesChangeWhileThreadsWriteAndRead) {
  OpenAll();
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      Random rnd(static_cast<uint32_t>(100 + t));
      for (int i = 0; i < 3000 && errors.load() == 0; i++) {
        WriteBatch batch;
        const std::string k = "t" + std::to_string(t) + "." + std::to_string(i);
        for (int f = 0; f < kFamilies; f++) {
          if (!batch.Put(handles_[f], k, "v").ok()) errors++;
        }
        if (!db_->Write(WriteOptions(), &batch).ok()) errors++;
        std::string v;
        if (!db_->Get(ReadOptions(), handles_[rnd.Uniform(kFamilies)], k, &v).ok()) errors++;
      }
    });
  }
  threads.emplace_back([&] {
    for (int round = 0; round < 20; round++) {
      ColumnFamilyHandle* tmp = nullptr;
      if (!db_->CreateColumnFamily(options_, "tmp", &tmp).ok()) errors++;
      for (int i = 0; i < 50; i++) {
        Status s = db_->Put(WriteOptions(), tmp, "k" + std::to_string(i), "v");
        if (!s.ok()) errors++;
      }
      if (!db_->Flush(FlushOptions(), handles_[round % kFamilies]).ok()) errors++;
      if (!db_->DropColumnFamily(tmp).ok()) errors++;
      if (!db_->Put(WriteOptions(), tmp, "late", "v").IsInvalidArgument()) errors++;
      if (!db_->DestroyColumnFamilyHandle(tmp).ok()) errors++;
    }
  });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(0, errors.load());
  for (int f = 0; f < kFamilies; f++) {
    std::string v;
    ASSERT_OK(db_->Get(ReadOptions(), handles_[f], "t3.2999", &v));
  }
  OpenAll();
  std::string v;
  ASSERT_OK(db_->Get(ReadOptions(), handles_[2], "t0.1234", &v));
}

// A power loss after synced writes across families while the families flush at different
// times: every synced write survives in every family, and nothing appears twice.
class DBColumnFamilyPowerLossTest : public DBColumnFamilyModelTest {};

TEST_P(DBColumnFamilyPowerLossTest, SyncedCrossFamilyWritesSurviveAPowerLoss) {
  const uint64_t seed = SeedFromEnv(7 + GetParam());
  std::printf("seed %llu (SHALE_SEED replays it)\n", static_cast<unsigned long long>(seed));
  Random rnd(static_cast<uint32_t>(seed));
  FaultInjectionTestEnv* env = UseFaultInjectionEnv();
  OpenAll();
  std::vector<Model> model(kFamilies);
  WriteOptions synced;
  synced.sync = true;
  for (int step = 0; step < 300; step++) {
    WriteBatch batch;
    for (int f = 0; f < kFamilies; f++) {
      if (rnd.OneIn(2)) continue;
      const std::string k = "k" + std::to_string(rnd.Uniform(40));
      const std::string operand = std::to_string(step);
      ASSERT_OK(batch.Merge(handles_[f], k, operand));
      std::string& v = model[f][k];
      v = v.empty() ? operand : v + "," + operand;
    }
    ASSERT_OK(db_->Write(synced, &batch));
    if (rnd.OneIn(20)) {
      FlushOptions fo;
      fo.wait = rnd.OneIn(2);
      ASSERT_OK(db_->Flush(fo, handles_[rnd.Uniform(kFamilies)]));
    }
  }
  // Unsynced writes after the last synced one may be lost; none is made here, so the
  // state after the loss is exactly the model.
  ASSERT_OK(CloseInAPowerLoss(env, &handles_, &db_));
  OpenAll();
  Verify(model, "after the power loss");
}

INSTANTIATE_TEST_SUITE_P(Seeds, DBColumnFamilyPowerLossTest, testing::Range(0, 3));

}  // namespace
}  // namespace shale
