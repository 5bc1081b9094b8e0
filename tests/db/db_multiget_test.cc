// DB::MultiGet, both forms (vector of strings, batched PinnableSlices): keys answered from
// the active memtable, an immutable one, L0 and a deeper level; missing, deleted and
// repeated keys; snapshots; merge operands (uint64add); a damaged block failing only its
// own keys; InvalidArgument for mismatched sizes and foreign handles; the statistics; one
// consistent view while a writer changes every key at once; and a randomized comparison
// with Get (prints its seed, replay with SHALE_TEST_SEED).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "shale/db.h"
#include "shale/statistics.h"
#include "shale/utilities/merge_operators.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/gated_sst_env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

// One key's answer in a comparable form: the value, "NOT_FOUND", or the error.
std::string Answer(const Status& s, const Slice& value) {
  if (s.ok()) return value.ToString();
  if (s.IsNotFound()) return "NOT_FOUND";
  return s.ToString();
}

class DBMultiGetTest : public DBTestBase {
 protected:
  DBMultiGetTest() : DBTestBase("db_multiget") {
    options_.stats_dump_period_sec = 0;
    options_.disable_auto_compactions = true;
  }
  ~DBMultiGetTest() override {
    gated_env_.SetOpen(true);  // a failed test may have left a flush at the gate
    EXPECT_OK(TryClose());      // here: the DB may use gated_env_, which dies before the base
  }

  // Get's answers for keys, one at a time.
  std::vector<std::string> Gets(const std::vector<std::string>& keys, const Snapshot* snap) {
    ReadOptions ro;
    ro.snapshot = snap;
    std::vector<std::string> out;
    for (const std::string& k : keys) {
      std::string v;
      Status s = db_->Get(ro, k, &v);
      out.push_back(Answer(s, v));
    }
    return out;
  }
  // The vector form's answers. Every value slot starts with junk, which a key without a
  // value must not keep.
  std::vector<std::string> VectorMultiGet(const std::vector<std::string>& keys,
                                          const Snapshot* snap = nullptr) {
    ReadOptions ro;
    ro.snapshot = snap;
    std::vector<Slice> slices(keys.begin(), keys.end());
    std::vector<std::string> values(keys.size(), "junk");
    std::vector<Status> statuses = db_->MultiGet(ro, slices, &values);
    EXPECT_EQ(keys.size(), statuses.size());
    EXPECT_EQ(keys.size(), values.size());
    std::vector<std::string> out;
    for (size_t i = 0; i < statuses.size() && i < values.size(); i++) {
      if (!statuses[i].ok()) EXPECT_EQ("", values[i]) << keys[i];
      out.push_back(Answer(statuses[i], values[i]));
    }
    return out;
  }
  // The batched form's answers; with sorted, the keys are given in order (and the answers
  // returned in the caller's order all the same).
  std::vector<std::string> BatchedMultiGet(const std::vector<std::string>& keys, bool sorted,
                                           const Snapshot* snap = nullptr) {
    ReadOptions ro;
    ro.snapshot = snap;
    std::vector<size_t> order(keys.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    if (sorted) {
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return keys[a] < keys[b]; });
    }
    std::vector<Slice> slices;
    for (size_t i : order) slices.emplace_back(keys[i]);
    std::vector<PinnableSlice> values(keys.size());
    for (PinnableSlice& v : values) v.PinSelf("junk");
    std::vector<Status> statuses(keys.size());
    db_->MultiGet(ro, db_->DefaultColumnFamily(), keys.size(), slices.data(), values.data(),
                  statuses.data(), sorted);
    std::vector<std::string> out(keys.size());
    for (size_t j = 0; j < order.size(); j++) {
      if (!statuses[j].ok()) EXPECT_EQ(0u, values[j].size()) << keys[order[j]];
      out[order[j]] = Answer(statuses[j], values[j]);
    }
    return out;
  }
  // Both forms (the batched one sorted and not) must give want.
  void ExpectMultiGet(const std::vector<std::string>& keys, const std::vector<std::string>& want,
                      const Snapshot* snap = nullptr) {
    EXPECT_EQ(want, VectorMultiGet(keys, snap));
    EXPECT_EQ(want, BatchedMultiGet(keys, false, snap));
    EXPECT_EQ(want, BatchedMultiGet(keys, true, snap));
  }

  GatedSstEnv gated_env_;
};

TEST_F(DBMultiGetTest, EmptyKeyListAndEmptyDB) {
  Open();
  ExpectMultiGet({}, {});
  ExpectMultiGet({"a", "b"}, {"NOT_FOUND", "NOT_FOUND"});
}

TEST_F(DBMultiGetTest, KeysInEveryLayer) {
  options_.env = &gated_env_;
  Open();
  // Deepest first: a compacted level, then L0, then an immutable memtable held there by
  // the gate, then the active memtable. Newer layers overwrite and delete older keys.
  ASSERT_OK(Put("deep", "d1"));
  ASSERT_OK(Put("shadowed", "old"));
  ASSERT_OK(Put("deleted", "x"));
  ASSERT_OK(Flush());
  ASSERT_OK(CompactAll());
  ASSERT_EQ(0u, IntProperty("shale.num-files-at-level0"));
  ASSERT_OK(Put("l0", "zero"));
  ASSERT_OK(Put("shadowed", "l0"));
  ASSERT_OK(db_->Delete(WriteOptions(), "deleted"));
  ASSERT_OK(Flush());
  ASSERT_EQ(1u, IntProperty("shale.num-files-at-level0"));
  gated_env_.SetOpen(false);
  ASSERT_OK(Put("imm", "frozen"));
  ASSERT_OK(Put("shadowed", "imm"));
  FlushOptions no_wait;
  no_wait.wait = false;
  ASSERT_OK(db_->Flush(no_wait));
  gated_env_.WaitForBlockedJob();
  ASSERT_EQ(1u, IntProperty("shale.num-immutable-mem-table"));
  ASSERT_OK(Put("mem", "live"));
  ASSERT_OK(Put("resurrected", "old"));
  ASSERT_OK(db_->Delete(WriteOptions(), "resurrected"));

  const std::vector<std::string> keys = {"mem",     "imm",     "l0",          "deep", "shadowed",
                                         "deleted", "missing", "resurrected", "",     "zzz"};
  const std::vector<std::string> want = {"live",      "frozen",    "zero",      "d1",
                                         "imm",       "NOT_FOUND", "NOT_FOUND", "NOT_FOUND",
                                         "NOT_FOUND", "NOT_FOUND"};
  ExpectMultiGet(keys, want);
  EXPECT_EQ(want, Gets(keys, nullptr));
  gated_env_.SetOpen(true);
  ASSERT_OK(db_->Flush(FlushOptions()));
  ExpectMultiGet(keys, want);
  ASSERT_OK(CompactAll());
  ExpectMultiGet(keys, want);
}

TEST_F(DBMultiGetTest, RepeatedKeysAreAnsweredEachTime) {
  Open();
  ASSERT_OK(Put("b", "vb"));
  ASSERT_OK(Flush());
  ASSERT_OK(Put("a", "va"));
  ExpectMultiGet({"b", "a", "b", "c", "a", "b", "c"},
                 {"vb", "va", "vb", "NOT_FOUND", "va", "vb", "NOT_FOUND"});
}

TEST_F(DBMultiGetTest, SnapshotSeesTheValuesOfItsTime) {
  Open();
  ASSERT_OK(Put("a", "a1"));
  ASSERT_OK(Put("b", "b1"));
  ASSERT_OK(Flush());
  ASSERT_OK(Put("c", "c1"));
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_OK(Put("a", "a2"));
  ASSERT_OK(db_->Delete(WriteOptions(), "b"));
  ASSERT_OK(db_->Delete(WriteOptions(), "c"));
  ASSERT_OK(Put("d", "d2"));
  ASSERT_OK(Flush());
  ASSERT_OK(CompactAll());
  const std::vector<std::string> keys = {"a", "b", "c", "d"};
  ExpectMultiGet(keys, {"a1", "b1", "c1", "NOT_FOUND"}, snap);
  ExpectMultiGet(keys, {"a2", "NOT_FOUND", "NOT_FOUND", "d2"});
  db_->ReleaseSnapshot(snap);
}

TEST_F(DBMultiGetTest, MergeOperandsAreFolded) {
  options_.merge_operator = MergeOperators::CreateUInt64AddOperator();
  Open();
  ASSERT_OK(db_->Put(WriteOptions(), "base", Fixed64String(100)));
  ASSERT_OK(db_->Merge(WriteOptions(), "base", Fixed64String(1)));
  ASSERT_OK(db_->Merge(WriteOptions(), "ops", Fixed64String(5)));
  ASSERT_OK(Flush());
  ASSERT_OK(CompactAll());
  ASSERT_OK(db_->Merge(WriteOptions(), "base", Fixed64String(10)));
  ASSERT_OK(db_->Merge(WriteOptions(), "ops", Fixed64String(6)));
  ASSERT_OK(Flush());
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_OK(db_->Merge(WriteOptions(), "base", Fixed64String(1000)));
  ASSERT_OK(db_->Merge(WriteOptions(), "ops", Fixed64String(7)));
  ASSERT_OK(db_->Delete(WriteOptions(), "gone"));
  ASSERT_OK(db_->Merge(WriteOptions(), "gone", Fixed64String(3)));  // on a tombstone: no base
  const std::vector<std::string> keys = {"base", "ops", "gone", "none"};
  ExpectMultiGet(keys, {Fixed64String(1111), Fixed64String(18), Fixed64String(3), "NOT_FOUND"});
  EXPECT_EQ(Gets(keys, nullptr), VectorMultiGet(keys));
  ExpectMultiGet(keys, {Fixed64String(111), Fixed64String(11), "NOT_FOUND", "NOT_FOUND"}, snap);
  db_->ReleaseSnapshot(snap);
}

TEST_F(DBMultiGetTest, OperandWithoutOperatorIsNotSupportedForThatKeyOnly) {
  options_.merge_operator = MergeOperators::CreateUInt64AddOperator();
  Open();
  ASSERT_OK(db_->Merge(WriteOptions(), "m", Fixed64String(1)));
  ASSERT_OK(Put("p", "v"));
  ASSERT_OK(Flush());
  ASSERT_OK(db_->Close());
  db_.reset();
  options_.merge_operator = nullptr;
  Open();
  std::vector<std::string> values;
  std::vector<Status> statuses = db_->MultiGet(ReadOptions(), {"m", "p"}, &values);
  ASSERT_EQ(2u, statuses.size());
  EXPECT_TRUE(statuses[0].IsNotSupported()) << statuses[0].ToString();
  EXPECT_OK(statuses[1]);
  EXPECT_EQ("v", values[1]);
}

TEST_F(DBMultiGetTest, DamagedBlockFailsOnlyItsKeys) {
  options_.compression = kNoCompression;
  Open();
  ASSERT_OK(Put("file", std::string(100, 'f')));
  ASSERT_OK(Flush());
  ASSERT_OK(Put("mem", "m"));
  std::vector<std::string> children;
  ASSERT_OK(Env::Default()->GetChildren(dbname_, &children));
  std::string sst;
  for (const std::string& c : children) {
    if (c.size() > 4 && c.compare(c.size() - 4, 4, ".sst") == 0) sst = dbname_ + "/" + c;
  }
  ASSERT_FALSE(sst.empty());
  // Inside the only data block; a reopen drops any cached copy.
  ASSERT_OK(CorruptFile(sst, 10, 1));
  ASSERT_OK(db_->Close());
  db_.reset();
  Open();
  std::vector<std::string> values;
  std::vector<Status> statuses = db_->MultiGet(ReadOptions(), {"file", "mem"}, &values);
  ASSERT_EQ(2u, statuses.size());
  EXPECT_TRUE(statuses[0].IsCorruption()) << statuses[0].ToString();
  EXPECT_EQ("", values[0]);
  // The memtable answers "mem" before the damaged file is reached.
  EXPECT_OK(statuses[1]);
  EXPECT_EQ("m", values[1]);
}

TEST_F(DBMultiGetTest, MismatchedArgumentsAreInvalidForEveryKey) {
  Open();
  ASSERT_OK(Put("a", "va"));
  const std::vector<Slice> keys = {"a", "b", "c"};
  std::vector<std::string> values = {"x", "y"};
  std::vector<ColumnFamilyHandle*> two(2, db_->DefaultColumnFamily());
  std::vector<Status> statuses = db_->MultiGet(ReadOptions(), two, keys, &values);
  ASSERT_EQ(3u, statuses.size());
  ASSERT_EQ(3u, values.size());
  for (size_t i = 0; i < 3; i++) {
    EXPECT_TRUE(statuses[i].IsInvalidArgument()) << statuses[i].ToString();
    EXPECT_EQ("", values[i]);
  }
  statuses =
      db_->MultiGet(ReadOptions(), std::vector<ColumnFamilyHandle*>(3, nullptr), keys, nullptr);
  ASSERT_EQ(3u, statuses.size());
  for (const Status& s : statuses) EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();

  // A handle of another DB, in either form.
  TempDirectory other_dir("db_multiget_other");
  std::unique_ptr<DB> other;
  ASSERT_OK(DB::Open(options_, other_dir.path() + "/db", &other));
  std::vector<ColumnFamilyHandle*> mixed = {
      db_->DefaultColumnFamily(), other->DefaultColumnFamily(), db_->DefaultColumnFamily()};
  statuses = db_->MultiGet(ReadOptions(), mixed, keys, &values);
  for (const Status& s : statuses) EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  std::vector<PinnableSlice> pinned(3);
  std::vector<Status> batched(3);
  db_->MultiGet(ReadOptions(), other->DefaultColumnFamily(), keys.size(), keys.data(),
                pinned.data(), batched.data());
  for (const Status& s : batched) EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  ASSERT_OK(other->Close());
}

TEST_F(DBMultiGetTest, Statistics) {
  options_.statistics = CreateDBStatistics();
  Statistics* stats = options_.statistics.get();
  Open();
  ASSERT_OK(Put("a", "12345"));
  ASSERT_OK(Put("b", "678"));
  ASSERT_OK(Flush());
  ASSERT_OK(Put("c", "9"));
  ASSERT_OK(stats->Reset());
  std::vector<std::string> values;
  std::vector<Status> statuses = db_->MultiGet(ReadOptions(), {"a", "b", "c", "missing"}, &values);
  ASSERT_EQ(4u, statuses.size());
  EXPECT_EQ(1u, stats->getTickerCount(NUMBER_MULTIGET_CALLS));
  EXPECT_EQ(4u, stats->getTickerCount(NUMBER_MULTIGET_KEYS_READ));
  EXPECT_EQ(9u, stats->getTickerCount(NUMBER_MULTIGET_BYTES_READ));
  EXPECT_EQ(3u, stats->getTickerCount(NUMBER_MULTIGET_KEYS_FOUND));
  // Where each key was answered, as Get counts it; Get's own tickers stay untouched.
  EXPECT_EQ(1u, stats->getTickerCount(MEMTABLE_HIT));
  EXPECT_EQ(3u, stats->getTickerCount(MEMTABLE_MISS));
  EXPECT_EQ(2u, stats->getTickerCount(GET_HIT_L0));
  EXPECT_EQ(0u, stats->getTickerCount(NUMBER_KEYS_READ));
  EXPECT_EQ(0u, stats->getTickerCount(BYTES_READ));
  HistogramData bytes;
  stats->histogramData(BYTES_PER_MULTIGET, &bytes);
  EXPECT_EQ(1u, bytes.count);
  EXPECT_EQ(9u, bytes.sum);
  HistogramData micros;
  stats->histogramData(DB_MULTIGET, &micros);
  EXPECT_EQ(1u, micros.count);
  std::vector<PinnableSlice> pinned(2);
  std::vector<Status> batched(2);
  const Slice keys[] = {"a", "c"};
  db_->MultiGet(ReadOptions(), db_->DefaultColumnFamily(), 2, keys, pinned.data(), batched.data());
  EXPECT_EQ(2u, stats->getTickerCount(NUMBER_MULTIGET_CALLS));
  EXPECT_EQ(6u, stats->getTickerCount(NUMBER_MULTIGET_KEYS_READ));
  EXPECT_EQ(15u, stats->getTickerCount(NUMBER_MULTIGET_BYTES_READ));
  EXPECT_EQ(5u, stats->getTickerCount(NUMBER_MULTIGET_KEYS_FOUND));
}

// A writer sets every key to the same new value in one batch, round after round, while
// flushes swap the memtables and files underneath: each MultiGet must see one round's
// values for all keys, never a mix. (A MultiGet that took a view per key fails this within
// a few calls.)
TEST_F(DBMultiGetTest, OneViewWhileAWriterChangesEveryKey) {
  options_.write_buffer_size = 256 << 10;
  options_.disable_auto_compactions = false;
  Open();
  constexpr int kKeys = 200;
  constexpr int kRounds = 1000;
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; i++) keys.push_back("key" + std::to_string(i));
  auto write_round = [&](int round) {
    WriteBatch batch;
    const std::string value = std::to_string(round) + std::string(20, '.');
    for (const std::string& k : keys) EXPECT_OK(batch.Put(k, value));
    return db_->Write(WriteOptions(), &batch);
  };
  ASSERT_OK(write_round(0));
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int round = 1; round <= kRounds; round++) {
      if (!write_round(round).ok()) break;
      if (round % 100 == 0 && !db_->Flush(FlushOptions()).ok()) break;
    }
    done.store(true);
  });
  const std::vector<Slice> slices(keys.begin(), keys.end());
  std::vector<PinnableSlice> pinned(kKeys);
  std::vector<Status> batched(kKeys);
  for (int call = 0; !done.load(); call++) {
    std::vector<std::string> values;
    std::vector<Status> statuses = db_->MultiGet(ReadOptions(), slices, &values);
    db_->MultiGet(ReadOptions(), db_->DefaultColumnFamily(), kKeys, slices.data(), pinned.data(),
                  batched.data());
    for (int k = 0; k < kKeys; k++) {
      ASSERT_OK(statuses[k]);
      ASSERT_OK(batched[k]);
      ASSERT_EQ(values[0], values[k]) << "vector form, key " << k << " of call " << call;
      ASSERT_EQ(pinned[0].ToString(), pinned[k].ToString())
          << "batched form, key " << k << " of call " << call;
    }
  }
  writer.join();
}

// Random writes (puts, deletes, merges) spread over memtables, L0 and deeper levels, with
// snapshots along the way; random key lists must get from MultiGet what Get gives.
TEST_F(DBMultiGetTest, RandomizedAgreesWithGet) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  options_.merge_operator = MergeOperators::CreateUInt64AddOperator();
  options_.write_buffer_size = 32 << 10;
  options_.disable_auto_compactions = false;
  Open();
  constexpr uint32_t kKeySpace = 400;
  auto key = [](uint32_t i) { return "k" + std::to_string(i); };
  std::vector<const Snapshot*> snapshots = {nullptr};
  for (int round = 0; round < 8; round++) {
    for (int op = 0; op < 600; op++) {
      const std::string k = key(rnd.Uniform(kKeySpace));
      const uint32_t kind = rnd.Uniform(10);
      if (kind < 5) {
        ASSERT_OK(db_->Put(WriteOptions(), k, Fixed64String(rnd.Uniform(1000))));
      } else if (kind < 7) {
        ASSERT_OK(db_->Delete(WriteOptions(), k));
      } else {
        ASSERT_OK(db_->Merge(WriteOptions(), k, Fixed64String(rnd.Uniform(10))));
      }
    }
    if (rnd.OneIn(2)) ASSERT_OK(Flush());
    if (rnd.OneIn(3)) ASSERT_OK(CompactAll());
    if (rnd.OneIn(2)) snapshots.push_back(db_->GetSnapshot());
  }
  for (int trial = 0; trial < 200; trial++) {
    std::vector<std::string> keys(1 + rnd.Uniform(40));
    // Some keys past the key space (never written), some repeated.
    for (std::string& k : keys) k = key(rnd.Uniform(kKeySpace + 40));
    if (keys.size() > 1 && rnd.OneIn(3)) keys.back() = keys.front();
    const Snapshot* snap = snapshots[rnd.Uniform(static_cast<uint32_t>(snapshots.size()))];
    const std::vector<std::string> want = Gets(keys, snap);
    ASSERT_EQ(want, VectorMultiGet(keys, snap)) << "seed " << seed << " trial " << trial;
    ASSERT_EQ(want, BatchedMultiGet(keys, rnd.OneIn(2), snap))
        << "seed " << seed << " trial " << trial;
  }
  for (const Snapshot* s : snapshots) db_->ReleaseSnapshot(s);
}

}  // namespace
}  // namespace shale
