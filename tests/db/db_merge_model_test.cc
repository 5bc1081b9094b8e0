// A randomized model test of merges against std::map: random Puts, Deletes and Merges
// (single calls and mixed batches) with the uint64add or the stringappend operator, with
// snapshots, flushes, CompactRange and reopens in between. The model folds each operand
// into its value as it is written; every Get, every snapshot read, full scans both ways
// and random Seek/Next/Prev walks must agree with it. Prints its seed (TestSeed); set
// SHALE_TEST_SEED to replay a run.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shale/db.h"
#include "shale/table.h"
#include "shale/utilities/merge_operators.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/random.h"

namespace shale {
namespace {

struct MergeModelParam {
  const char* name;
  bool counters;  // uint64add; else stringappend
  size_t write_buffer_size;
  size_t block_size;
  size_t max_successive_merges;
};

void PrintTo(const MergeModelParam& p, std::ostream* os) { *os << p.name; }

using Model = std::map<std::string, std::string>;

class DBMergeModelTest : public DBTestBase,
                         public testing::WithParamInterface<MergeModelParam> {
 protected:
  DBMergeModelTest() : DBTestBase("db_merge_model") {}
  void SetUp() override {
    const MergeModelParam& p = GetParam();
    seed_ = TestSeed();
    rnd_ = std::make_unique<Random>(seed_);
    options_.merge_operator = p.counters ? MergeOperators::CreateUInt64AddOperator()
                                         : MergeOperators::CreateStringAppendOperator();
    options_.write_buffer_size = p.write_buffer_size;
    options_.max_successive_merges = p.max_successive_merges;
    options_.level0_file_num_compaction_trigger = 3;
    BlockBasedTableOptions t;
    t.block_size = p.block_size;
    options_.table_factory.reset(NewBlockBasedTableFactory(t));
    for (int i = 0; i < 40; i++) {
      char k[8];
      snprintf(k, sizeof(k), "k%02d", i);
      keys_.push_back(k);
    }
    Open();
  }
  void TearDown() override {
    ReleaseSnapshots();
    EXPECT_OK(TryClose());
  }
  void ReleaseSnapshots() {
    for (auto& [snap, model] : snapshots_) db_->ReleaseSnapshot(snap);
    snapshots_.clear();
  }

  const std::string& RandomKey() { return keys_[rnd_->Uniform(static_cast<int>(keys_.size()))]; }
  std::string RandomValue() {
    if (GetParam().counters) {
      std::string v;
      PutFixed64(&v, rnd_->Uniform(1000));
      return v;
    }
    size_t len = rnd_->Uniform(8);
    if (rnd_->OneIn(50)) len = 1000 + rnd_->Uniform(3000);  // spans blocks
    return RandomString(rnd_.get(), len);
  }

  // The model's merge: what the operator computes.
  void ModelMerge(const std::string& key, const std::string& operand) {
    auto it = model_.find(key);
    if (GetParam().counters) {
      auto decode = [](const std::string& s) -> uint64_t {
        return s.size() == 8 ? DecodeFixed64(s.data()) : 0;
      };
      const uint64_t sum = (it == model_.end() ? 0 : decode(it->second)) + decode(operand);
      std::string v;
      PutFixed64(&v, sum);
      model_[key] = v;
    } else if (it == model_.end()) {
      model_[key] = operand;
    } else {
      it->second += "," + operand;
    }
  }

  // One random write (kind 0 put, 1 delete, 2+ merge), applied to batch or the DB and the
  // model.
  void RandomWrite(WriteBatch* batch) {
    const std::string key = RandomKey();
    const uint32_t r = rnd_->Uniform(10);
    Status s;
    if (r < 3) {
      const std::string v = RandomValue();
      s = batch != nullptr ? batch->Put(key, v) : db_->Put(WriteOptions(), key, v);
      model_[key] = v;
    } else if (r < 4) {
      s = batch != nullptr ? batch->Delete(key) : db_->Delete(WriteOptions(), key);
      model_.erase(key);
    } else {
      const std::string v = RandomValue();
      s = batch != nullptr ? batch->Merge(key, v) : db_->Merge(WriteOptions(), key, v);
      ModelMerge(key, v);
    }
    ASSERT_OK(s);
  }

  void CheckGet(const std::string& key, const Snapshot* snap, const Model& model) {
    ReadOptions ro;
    ro.snapshot = snap;
    std::string v;
    Status s = db_->Get(ro, key, &v);
    auto it = model.find(key);
    if (it == model.end()) {
      ASSERT_TRUE(s.IsNotFound()) << key << ": " << s.ToString() << Trace();
    } else {
      ASSERT_OK(s) << key << Trace();
      ASSERT_EQ(v, it->second) << key << Trace();
    }
  }

  void CheckScan(const Snapshot* snap, const Model& model) {
    ReadOptions ro;
    ro.snapshot = snap;
    std::unique_ptr<Iterator> it(db_->NewIterator(ro));
    auto m = model.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
      ASSERT_NE(m, model.end()) << it->key().ToString() << Trace();
      ASSERT_EQ(it->key().ToString(), m->first) << Trace();
      ASSERT_EQ(it->value().ToString(), m->second) << m->first << Trace();
    }
    ASSERT_OK(it->status());
    ASSERT_EQ(m, model.end()) << Trace();
    auto r = model.rbegin();
    for (it->SeekToLast(); it->Valid(); it->Prev(), ++r) {
      ASSERT_NE(r, model.rend()) << Trace();
      ASSERT_EQ(it->key().ToString(), r->first) << Trace();
      ASSERT_EQ(it->value().ToString(), r->second) << r->first << Trace();
    }
    ASSERT_OK(it->status());
    ASSERT_EQ(r, model.rend()) << Trace();
  }

  // A random walk from a random Seek, changing direction at random.
  void CheckWalk(const Snapshot* snap, const Model& model) {
    ReadOptions ro;
    ro.snapshot = snap;
    std::unique_ptr<Iterator> it(db_->NewIterator(ro));
    const std::string target = RandomKey();
    it->Seek(target);
    auto m = model.lower_bound(target);
    for (int step = 0; step < 12; step++) {
      if (m == model.end()) {
        ASSERT_FALSE(it->Valid()) << Trace();
        ASSERT_OK(it->status());
        break;
      }
      ASSERT_TRUE(it->Valid()) << m->first << " " << it->status().ToString() << Trace();
      ASSERT_EQ(it->key().ToString(), m->first) << Trace();
      ASSERT_EQ(it->value().ToString(), m->second) << Trace();
      if (rnd_->OneIn(2)) {
        it->Next();
        ++m;
      } else {
        if (m == model.begin()) break;  // Prev would leave the model's range
        it->Prev();
        --m;
      }
    }
  }

  std::string Trace() const { return " (seed " + std::to_string(seed_) + ", step " + std::to_string(step_) + ")"; }

  uint64_t seed_ = 0;
  int step_ = 0;
  std::unique_ptr<Random> rnd_;
  std::vector<std::string> keys_;
  Model model_;
  std::vector<std::pair<const Snapshot*, Model>> snapshots_;
};

TEST_P(DBMergeModelTest, RandomOperations) {
  for (step_ = 0; step_ < 4000; step_++) {
    const uint32_t r = rnd_->Uniform(1000);
    if (r < 700) {
      ASSERT_NO_FATAL_FAILURE(RandomWrite(nullptr));
    } else if (r < 760) {
      WriteBatch batch;
      const int n = 1 + static_cast<int>(rnd_->Uniform(8));
      for (int i = 0; i < n; i++) ASSERT_NO_FATAL_FAILURE(RandomWrite(&batch));
      ASSERT_OK(db_->Write(WriteOptions(), &batch));
    } else if (r < 780) {
      if (snapshots_.size() < 4) {
        snapshots_.emplace_back(db_->GetSnapshot(), model_);
      } else {
        const size_t i = rnd_->Uniform(static_cast<int>(snapshots_.size()));
        db_->ReleaseSnapshot(snapshots_[i].first);
        snapshots_.erase(snapshots_.begin() + static_cast<std::ptrdiff_t>(i));
      }
    } else if (r < 795) {
      ASSERT_OK(db_->Flush(FlushOptions()));
    } else if (r < 800) {
      std::string a = RandomKey(), b = RandomKey();
      if (b < a) std::swap(a, b);
      const Slice begin(a), end(b);
      ASSERT_OK(db_->CompactRange(CompactRangeOptions(), rnd_->OneIn(3) ? nullptr : &begin,
                                  rnd_->OneIn(3) ? nullptr : &end));
    } else if (r < 803) {
      ReleaseSnapshots();
      ASSERT_OK(db_->Close());
      db_.reset();
      ASSERT_NO_FATAL_FAILURE(Open());
    } else if (r < 950) {
      if (!snapshots_.empty() && rnd_->OneIn(3)) {
        auto& [snap, model] = snapshots_[rnd_->Uniform(static_cast<int>(snapshots_.size()))];
        ASSERT_NO_FATAL_FAILURE(CheckGet(RandomKey(), snap, model));
      } else {
        ASSERT_NO_FATAL_FAILURE(CheckGet(RandomKey(), nullptr, model_));
      }
    } else if (r < 975) {
      ASSERT_NO_FATAL_FAILURE(CheckWalk(nullptr, model_));
    } else if (r < 990) {
      ASSERT_NO_FATAL_FAILURE(CheckScan(nullptr, model_));
    } else if (!snapshots_.empty()) {
      auto& [snap, model] = snapshots_[rnd_->Uniform(static_cast<int>(snapshots_.size()))];
      ASSERT_NO_FATAL_FAILURE(CheckScan(snap, model));
      ASSERT_NO_FATAL_FAILURE(CheckWalk(snap, model));
    }
  }
  ASSERT_NO_FATAL_FAILURE(CheckScan(nullptr, model_));
  for (auto& [snap, model] : snapshots_) ASSERT_NO_FATAL_FAILURE(CheckScan(snap, model));
  for (const std::string& k : keys_) ASSERT_NO_FATAL_FAILURE(CheckGet(k, nullptr, model_));
}

INSTANTIATE_TEST_SUITE_P(
    Options, DBMergeModelTest,
    testing::Values(MergeModelParam{"CountersDefault", true, 64 << 20, 4096, 0},
                    MergeModelParam{"CountersTinyMemtable", true, 16 << 10, 256, 0},
                    MergeModelParam{"CountersSuccessive", true, 16 << 10, 1024, 4},
                    MergeModelParam{"AppendDefault", false, 64 << 20, 4096, 0},
                    MergeModelParam{"AppendTinyMemtable", false, 16 << 10, 256, 0},
                    MergeModelParam{"AppendSuccessive", false, 32 << 10, 512, 3}),
    [](const testing::TestParamInfo<MergeModelParam>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace shale
