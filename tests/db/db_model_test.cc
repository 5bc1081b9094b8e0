// A randomized model test of the whole DB against std::map: long random sequences of
// Put, Delete, SingleDelete, mixed WriteBatches, Flush, snapshots and close+reopen, with
// every read (Get into a string and into a PinnableSlice, full scans in both directions,
// random Seek/SeekForPrev/Next/Prev walks under random bounds, reads through old
// snapshots and long-lived iterators) compared with the model. Runs under several option
// sets: compression types, block sizes, Bloom filters, tiny and default write buffers,
// restart intervals and a reverse comparator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/db_impl.h"
#include "shale/db.h"
#include "shale/filter_policy.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

struct ModelParam {
  const char* name;
  CompressionType compression = kNoCompression;
  size_t block_size = 4096;
  bool bloom = false;
  size_t write_buffer_size = 64 << 20;
  int restart_interval = 16;
  bool reverse = false;
  bool mmap_reads = false;
};

void PrintTo(const ModelParam& p, std::ostream* os) { *os << p.name; }

// Orders model keys as the DB's comparator does.
struct KeyLess {
  const Comparator* cmp;
  bool operator()(const std::string& a, const std::string& b) const {
    return cmp->Compare(a, b) < 0;
  }
};
using Model = std::map<std::string, std::string, KeyLess>;

// How a key may be removed. Half of the keys ("single-delete keys") are only ever Put and
// SingleDeleted, each Put followed by at most one SingleDelete before the next Put, as
// RocksDB requires; the others are Put and Deleted freely. The two are not mixed on one key:
// RocksDB calls SingleDelete after a Delete of the same key undefined, since a compaction
// may drop the Delete under the newer Put that the SingleDelete later cancels (see
// kMixSingleDeleteWithDelete).
struct KeyState {
  bool single_delete_key = false;
  int puts_since_delete = 0;
};

// shale's db.h promises more than RocksDB (SingleDelete after Delete, "put at most once
// since it was last deleted"). Set to true to test that stronger promise.
constexpr bool kMixSingleDeleteWithDelete = false;

class DBModelTest : public DBTestBase, public ::testing::WithParamInterface<ModelParam> {
 protected:
  DBModelTest() : DBTestBase("db_model") {}
  void SetUp() override {
    const ModelParam& p = GetParam();
    if (!CompressionTypeSupported(p.compression)) {
      GTEST_SKIP() << CompressionTypeToString(p.compression) << " is not built in";
    }
    seed_ = TestSeed();
    rnd_ = std::make_unique<Random>(seed_);
    cmp_ = p.reverse ? ReverseBytewiseComparator() : BytewiseComparator();
    model_ = Model(KeyLess{cmp_});

    options_.comparator = cmp_;
    options_.compression = p.compression;
    options_.write_buffer_size = p.write_buffer_size;
    options_.allow_mmap_reads = p.mmap_reads;
    BlockBasedTableOptions t;
    t.block_size = p.block_size;
    t.block_restart_interval = p.restart_interval;
    if (p.bloom) t.filter_policy.reset(NewBloomFilterPolicy(10));
    options_.table_factory.reset(NewBlockBasedTableFactory(t));

    // A pool of keys with shared prefixes, binary bytes and the empty key, so that
    // overwrites, deletes of live keys and prefix compression all happen often.
    keys_.push_back("");
    while (keys_.size() < 400) {
      std::string k;
      const int len = 1 + static_cast<int>(rnd_->Uniform(14));
      for (int i = 0; i < len; i++) {
        const uint32_t r = rnd_->Uniform(20);
        k.push_back(r == 0 ? '\0' : r == 1 ? '\xff' : static_cast<char>('a' + r % 5));
      }
      keys_.push_back(k);
    }
    std::sort(keys_.begin(), keys_.end());
    keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
    for (size_t i = 0; i < keys_.size(); i += 2) key_states_[keys_[i]].single_delete_key = true;
    Open();
  }

  void TearDown() override {
    ReleaseAllSnapshots();
    EXPECT_OK(TryClose());
  }

  void Reopen() {
    ReleaseAllSnapshots();
    DBTestBase::Reopen();
  }

  void ReleaseAllSnapshots() {
    for (auto& [snap, model] : snapshots_) db_->ReleaseSnapshot(snap);
    if (!snapshots_.empty() && db_ != nullptr) {
      events_ += " release-all(at " + std::to_string(db_->GetLatestSequenceNumber()) + ")";
    }
    snapshots_.clear();
  }

  const std::string& RandomKey() {
    return keys_[rnd_->Uniform(static_cast<uint32_t>(keys_.size()))];
  }

  std::string RandomValue() {
    size_t len = rnd_->Skewed(7);                           // mostly small
    if (rnd_->OneIn(40)) len = 1000 + rnd_->Uniform(4000);  // sometimes spans blocks
    return RandomBinaryString(rnd_.get(), len);
  }

  // The next mutation, as an op to record both in the DB (batch or single call) and the
  // model. kind: 0 put, 1 delete, 2 single delete.
  struct Mutation {
    int kind;
    std::string key;
    std::string value;
  };

  Mutation RandomMutation(std::map<std::string, KeyState>* states) {
    Mutation m;
    m.key = RandomKey();
    KeyState& st = (*states)[m.key];
    const uint32_t r = rnd_->Uniform(10);
    if (st.single_delete_key && !kMixSingleDeleteWithDelete) {
      if (st.puts_since_delete == 0 && r < 8) {
        m.kind = 0;
        m.value = RandomValue();
        st.puts_since_delete = 1;
      } else {
        m.kind = 2;  // also on an absent key, which is allowed
        st.puts_since_delete = 0;
      }
    } else if (r < 6) {
      m.kind = 0;
      m.value = RandomValue();
      st.puts_since_delete++;
    } else if (r < 8 || st.puts_since_delete > 1 || !kMixSingleDeleteWithDelete) {
      m.kind = 1;
      st.puts_since_delete = 0;
    } else {
      m.kind = 2;
      st.puts_since_delete = 0;
    }
    return m;
  }

  // seq: the sequence number the DB gave the mutation.
  void ApplyToModel(const Mutation& m, SequenceNumber seq) {
    history_[m.key].push_back("PDS"[m.kind]);
    seq_history_[m.key] += " " + std::to_string(seq) + "PDS"[m.kind];
    if (m.kind == 0) {
      model_[m.key] = m.value;
    } else {
      model_.erase(m.key);
    }
  }

  void DoMutation() {
    Mutation m = RandomMutation(&key_states_);
    WriteOptions wo;
    wo.sync = rnd_->OneIn(500);  // syncs cost milliseconds each on a real disk
    Status s;
    switch (m.kind) {
      case 0: s = db_->Put(wo, m.key, m.value); break;
      case 1: s = db_->Delete(wo, m.key); break;
      default: s = db_->SingleDelete(wo, m.key); break;
    }
    ASSERT_OK(s);
    ApplyToModel(m, db_->GetLatestSequenceNumber());
  }

  void DoBatch() {
    WriteBatch batch;
    const int n = 1 + static_cast<int>(rnd_->Uniform(12));
    std::vector<Mutation> muts;
    for (int i = 0; i < n; i++) {
      Mutation m = RandomMutation(&key_states_);
      switch (m.kind) {
        case 0: ASSERT_OK(batch.Put(m.key, m.value)); break;
        case 1: ASSERT_OK(batch.Delete(m.key)); break;
        default: ASSERT_OK(batch.SingleDelete(m.key)); break;
      }
      muts.push_back(std::move(m));
    }
    ASSERT_EQ(static_cast<uint32_t>(n), batch.Count());
    ASSERT_OK(db_->Write(WriteOptions(), &batch));
    SequenceNumber seq = db_->GetLatestSequenceNumber() - muts.size();
    for (const Mutation& m : muts) ApplyToModel(m, ++seq);
  }

  // Get of one key through both Get flavours, compared with `model`.
  void CheckGet(const ReadOptions& ro, const Model& model, const std::string& key) {
    auto it = model.find(key);
    std::string value = "garbage";
    Status s = db_->Get(ro, key, &value);
    PinnableSlice pinned;
    Status ps = db_->Get(ro, db_->DefaultColumnFamily(), key, &pinned);
    if (it == model.end()) {
      ASSERT_TRUE(s.IsNotFound()) << Slice(key).ToString(true) << ": " << s.ToString();
      ASSERT_TRUE(ps.IsNotFound()) << Slice(key).ToString(true) << ": " << ps.ToString();
    } else {
      ASSERT_OK(s);
      ASSERT_OK(ps);
      ASSERT_EQ(it->second, value) << Slice(key).ToString(true);
      ASSERT_EQ(it->second, pinned.ToString()) << Slice(key).ToString(true);
    }
  }

  std::string History(const Slice& key) {
    auto it = history_.find(key.ToString());
    std::string r =
        "history of " + key.ToString(true) + ": " + (it == history_.end() ? "" : it->second);
    // Details for debugging: the writes with their sequence numbers, the live snapshots
    // and what the DB holds for the key.
    r += " (writes:" + seq_history_[key.ToString()] + "; snapshots:";
    for (const auto& sm : snapshots_) r += " " + std::to_string(sm.first->GetSequenceNumber());
    r += "; events:" + events_;
    r += "; db: " + static_cast<DBImpl*>(db_.get())->TEST_KeyVersions(key) + ")";
    return r;
  }

  void CheckScan(const ReadOptions& ro, const Model& model) {
    std::unique_ptr<Iterator> it(db_->NewIterator(ro));
    auto m = model.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
      ASSERT_TRUE(m != model.end()) << "extra key " << it->key().ToString(true);
      ASSERT_EQ(m->first, it->key().ToString())
          << "forward; " << History(it->key()) << "; " << History(m->first);
      ASSERT_EQ(m->second, it->value().ToString()) << "forward " << it->key().ToString(true);
    }
    ASSERT_OK(it->status());
    ASSERT_TRUE(m == model.end()) << "missing key " << Slice(m->first).ToString(true);

    auto r = model.rbegin();
    for (it->SeekToLast(); it->Valid(); it->Prev(), ++r) {
      ASSERT_TRUE(r != model.rend()) << "extra key " << it->key().ToString(true);
      ASSERT_EQ(r->first, it->key().ToString())
          << "backward; " << History(it->key()) << "; " << History(r->first);
      ASSERT_EQ(r->second, it->value().ToString()) << "backward " << it->key().ToString(true);
    }
    ASSERT_OK(it->status());
    ASSERT_TRUE(r == model.rend()) << "missing key " << Slice(r->first).ToString(true);
  }

  // A bound or seek target: a pool key, or a random string not in the pool.
  std::string RandomTarget() {
    if (rnd_->OneIn(3)) {
      std::string t = RandomKey();
      t.push_back(static_cast<char>('a' + rnd_->Uniform(6)));
      return t;
    }
    return RandomKey();
  }

  // Random Seek/SeekForPrev/SeekToFirst/SeekToLast followed by Next/Prev steps, under
  // random lower/upper bounds, compared with the model restricted to the bounds.
  void CheckWalk(const ReadOptions& base_ro, const Model& model) {
    ReadOptions ro = base_ro;
    std::optional<std::string> lower, upper;
    if (rnd_->OneIn(2)) lower = RandomTarget();
    if (rnd_->OneIn(2)) upper = RandomTarget();
    Slice lower_slice, upper_slice;
    if (lower) {
      lower_slice = *lower;
      ro.iterate_lower_bound = &lower_slice;
    }
    if (upper) {
      upper_slice = *upper;
      ro.iterate_upper_bound = &upper_slice;
    }
    std::vector<const std::pair<const std::string, std::string>*> view;
    for (const auto& kv : model) {
      if (lower && cmp_->Compare(kv.first, *lower) < 0) continue;
      if (upper && cmp_->Compare(kv.first, *upper) >= 0) continue;
      view.push_back(&kv);
    }
    const int n = static_cast<int>(view.size());
    auto lower_index = [&](const std::string& t) {  // first >= t
      int i = 0;
      while (i < n && cmp_->Compare(view[i]->first, t) < 0) i++;
      return i;
    };

    std::unique_ptr<Iterator> it(db_->NewIterator(ro));
    for (int seeks = 0; seeks < 4; seeks++) {
      int pos;  // -1 or n: not valid
      std::string what;
      const uint32_t r = rnd_->Uniform(6);
      if (r == 0) {
        it->SeekToFirst();
        pos = 0;
        what = "SeekToFirst";
      } else if (r == 1) {
        it->SeekToLast();
        pos = n - 1;
        what = "SeekToLast";
      } else if (r < 4) {
        const std::string t = RandomTarget();
        it->Seek(t);
        pos = lower_index(t);
        what = "Seek(" + Slice(t).ToString(true) + ")";
      } else {
        const std::string t = RandomTarget();
        it->SeekForPrev(t);
        pos = lower_index(t);
        if (pos == n || cmp_->Compare(view[pos]->first, t) != 0) pos--;
        what = "SeekForPrev(" + Slice(t).ToString(true) + ")";
      }
      SCOPED_TRACE(what + " lower=" + (lower ? Slice(*lower).ToString(true) : "none") +
                   " upper=" + (upper ? Slice(*upper).ToString(true) : "none"));
      const int steps = static_cast<int>(rnd_->Uniform(25));
      for (int step = 0;; step++) {
        const bool model_valid = pos >= 0 && pos < n;
        ASSERT_OK(it->status());
        ASSERT_EQ(model_valid, it->Valid()) << "step " << step;
        if (!model_valid || step == steps) break;
        ASSERT_EQ(view[pos]->first, it->key().ToString())
            << "step " << step << "; " << History(it->key());
        ASSERT_EQ(view[pos]->second, it->value().ToString()) << "step " << step;
        if (rnd_->OneIn(2)) {
          it->Next();
          pos++;
        } else {
          it->Prev();
          pos--;
        }
      }
    }
  }

  void VerifyAll() {
    ReadOptions ro;
    ro.verify_checksums = rnd_->OneIn(2);
    for (int i = 0; i < 30; i++) ASSERT_NO_FATAL_FAILURE(CheckGet(ro, model_, RandomKey()));
    ASSERT_NO_FATAL_FAILURE(CheckScan(ro, model_));
    for (int i = 0; i < 5; i++) ASSERT_NO_FATAL_FAILURE(CheckWalk(ro, model_));
  }

  void VerifySnapshot(size_t i) {
    ReadOptions ro;
    ro.snapshot = snapshots_[i].first;
    const Model& model = snapshots_[i].second;
    for (int j = 0; j < 20; j++) ASSERT_NO_FATAL_FAILURE(CheckGet(ro, model, RandomKey()));
    ASSERT_NO_FATAL_FAILURE(CheckScan(ro, model));
    ASSERT_NO_FATAL_FAILURE(CheckWalk(ro, model));
  }

  uint64_t seed_ = 0;
  std::unique_ptr<Random> rnd_;
  const Comparator* cmp_ = nullptr;
  std::vector<std::string> keys_;
  Model model_{KeyLess{BytewiseComparator()}};
  std::map<std::string, KeyState> key_states_;
  // Per key, the kinds of its mutations in order (P put, D delete, S single delete), for
  // failure messages.
  std::map<std::string, std::string> history_;
  std::map<std::string, std::string> seq_history_;
  std::string events_;  // snapshots taken and released, for failure messages
  std::vector<std::pair<const Snapshot*, Model>> snapshots_;
};

TEST_P(DBModelTest, RandomOps) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const bool tiny = GetParam().write_buffer_size < (1 << 20);
  // Tiny buffers make one L0 file per few hundred writes and nothing compacts them yet:
  // fewer ops keep reads (which visit every L0 file) fast.
  const int kOps = tiny ? 1500 : 2000;
  for (int op = 0; op < kOps; op++) {
    const uint32_t r = rnd_->Uniform(1000);
    if (r < 600) {
      ASSERT_NO_FATAL_FAILURE(DoMutation());
    } else if (r < 800) {
      ASSERT_NO_FATAL_FAILURE(DoBatch());
    } else if (r < 900) {
      ASSERT_NO_FATAL_FAILURE(CheckGet(ReadOptions(), model_, RandomKey()));
    } else if (r < 930) {
      ASSERT_NO_FATAL_FAILURE(CheckWalk(ReadOptions(), model_));
    } else if (r < 950) {
      if (snapshots_.size() < 5) {
        snapshots_.emplace_back(db_->GetSnapshot(), model_);
        events_ += " snap@" + std::to_string(snapshots_.back().first->GetSequenceNumber());
        ASSERT_NE(nullptr, snapshots_.back().first);
      }
    } else if (r < 965) {
      if (!snapshots_.empty()) {
        const size_t i = rnd_->Uniform(static_cast<uint32_t>(snapshots_.size()));
        ASSERT_NO_FATAL_FAILURE(VerifySnapshot(i));
        if (rnd_->OneIn(2)) {
          events_ += " release@" + std::to_string(snapshots_[i].first->GetSequenceNumber()) +
                     "(at " + std::to_string(db_->GetLatestSequenceNumber()) + ")";
          db_->ReleaseSnapshot(snapshots_[i].first);
          snapshots_.erase(snapshots_.begin() + static_cast<ptrdiff_t>(i));
        }
      }
    } else if (r < 975) {
      // An iterator is an implicit snapshot: later writes and flushes stay invisible to it.
      std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
      const Model saved = model_;
      for (int i = 0; i < 20; i++) ASSERT_NO_FATAL_FAILURE(DoMutation());
      if (rnd_->OneIn(3)) {
        ASSERT_OK(db_->Flush(FlushOptions()));
      }
      auto m = saved.begin();
      for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
        ASSERT_TRUE(m != saved.end());
        ASSERT_EQ(m->first, it->key().ToString()) << History(it->key());
        ASSERT_EQ(m->second, it->value().ToString());
      }
      ASSERT_OK(it->status());
      ASSERT_TRUE(m == saved.end());
    } else if (r < 985) {
      ASSERT_OK(db_->Flush(FlushOptions()));
    } else if (r < 990 || (tiny && r < 993)) {
      ASSERT_NO_FATAL_FAILURE(Reopen());
      ASSERT_NO_FATAL_FAILURE(VerifyAll());
    } else {
      ASSERT_NO_FATAL_FAILURE(VerifyAll());
    }
  }
  ASSERT_NO_FATAL_FAILURE(VerifyAll());
  for (size_t i = 0; i < snapshots_.size(); i++) ASSERT_NO_FATAL_FAILURE(VerifySnapshot(i));
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ASSERT_NO_FATAL_FAILURE(VerifyAll());
}

ModelParam P(const char* name) {
  ModelParam p;
  p.name = name;
  return p;
}

std::vector<ModelParam> Params() {
  std::vector<ModelParam> v;
  ModelParam p = P("Default");
  v.push_back(p);

  p = P("Snappy");
  p.compression = kSnappyCompression;
  p.write_buffer_size = 8 << 10;
  v.push_back(p);

  p = P("LZ4Bloom");
  p.compression = kLZ4Compression;
  p.bloom = true;
  p.block_size = 256;
  v.push_back(p);

  p = P("ZSTDTinyBuffer");
  p.compression = kZSTD;
  p.write_buffer_size = 8 << 10;
  p.restart_interval = 1;
  v.push_back(p);

  p = P("SmallBlocksTinyBufferBloom");
  p.block_size = 256;
  p.write_buffer_size = 8 << 10;
  p.bloom = true;
  v.push_back(p);

  // Read through mappings (allow_mmap_reads), raw and compressed blocks.
  for (CompressionType c : {kNoCompression, kZSTD}) {
    p = P(c == kZSTD ? "ZSTDSmallBlocksTinyBufferMmap" : "SmallBlocksTinyBufferMmap");
    p.compression = c;
    p.block_size = 256;
    p.write_buffer_size = 8 << 10;
    p.mmap_reads = true;
    v.push_back(p);
  }

  p = P("Restart1SmallBlocks");
  p.block_size = 256;
  p.restart_interval = 1;
  v.push_back(p);

  p = P("Reverse");
  p.reverse = true;
  v.push_back(p);

  p = P("ReverseTinyBufferBloomSnappy");
  p.reverse = true;
  p.write_buffer_size = 8 << 10;
  p.bloom = true;
  p.compression = kSnappyCompression;
  p.block_size = 256;
  v.push_back(p);

  p = P("ReverseRestart1LZ4");
  p.reverse = true;
  p.restart_interval = 1;
  p.compression = kLZ4Compression;
  p.write_buffer_size = 8 << 10;
  v.push_back(p);

  p = P("ZSTDBloomLargeBlocks");
  p.compression = kZSTD;
  p.bloom = true;
  p.block_size = 4096;
  p.restart_interval = 16;
  v.push_back(p);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Options, DBModelTest, ::testing::ValuesIn(Params()),
                         [](const ::testing::TestParamInfo<ModelParam>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace shale
