// The batched MultiGet (Version::MultiGet, TableReader::MultiGet): the keys of one call go
// down the files together, and a data block holding several of them is fetched once. Two
// things are checked here. Every key gets exactly what Get gives it in the same view: a
// randomized model test over memtables, an immutable memtable, overlapping L0 files and
// deeper levels, with repeated and missing keys, sorted and unsorted input, deletes,
// merge operands spread over levels, snapshots and a read callback, under several table
// configurations (prints its seed, replay with SHALE_TEST_SEED). And the blocks are
// shared: the block cache is asked once per data block, not once per key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "db/db_impl.h"
#include "shale/db.h"
#include "shale/filter_policy.h"
#include "shale/statistics.h"
#include "shale/table.h"
#include "shale/utilities/merge_operators.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/gated_sst_env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

// One key's answer in a comparable form: the value, "NOT_FOUND", or the error.
std::string Answer(const Status& s, const Slice& value) {
  return s.ok() ? value.ToString() : s.IsNotFound() ? "NOT_FOUND" : s.ToString();
}

// Hides the writes whose sequences are in *hidden.
class HideSeqs final : public ReadCallback {
 public:
  explicit HideSeqs(const std::set<SequenceNumber>* hidden) : hidden_(hidden) {}
  bool IsVisibleFullCheck(SequenceNumber seq) override { return hidden_->count(seq) == 0; }

 private:
  const std::set<SequenceNumber>* const hidden_;
};

// The table and merge settings a run uses.
struct Config {
  const char* name;
  bool merge_operator;  // stringappend; without one an operand answers NotSupported
  bool bloom;
  bool block_cache;  // else no_block_cache: every block fetch is a file read
  bool hash_index;   // kDataBlockBinaryAndHash
  bool cache_index_and_filter;
};

class DBMultiGetBatchTest : public DBTestBase, public testing::WithParamInterface<Config> {
 protected:
  DBMultiGetBatchTest() : DBTestBase("db_multiget_batch") {}
  ~DBMultiGetBatchTest() override {
    gated_env_.SetOpen(true);  // a failed test may have left a flush at the gate
    EXPECT_OK(TryClose());     // here: the DB may use gated_env_, which dies before the base
  }

  void Configure(const Config& c) {
    options_.stats_dump_period_sec = 0;
    options_.disable_auto_compactions = true;  // the layers stay as the test lays them
    if (c.merge_operator) options_.merge_operator = MergeOperators::CreateStringAppendOperator();
    BlockBasedTableOptions t;
    t.block_size = 256;  // a few keys per block, many blocks per file
    if (c.bloom) t.filter_policy.reset(NewBloomFilterPolicy(10));
    if (c.block_cache) {
      t.block_cache = NewLRUCache(1 << 20);
    } else {
      t.no_block_cache = true;
    }
    if (c.hash_index) t.data_block_index_type = BlockBasedTableOptions::kDataBlockBinaryAndHash;
    t.cache_index_and_filter_blocks = c.cache_index_and_filter && c.block_cache;
    options_.table_factory.reset(NewBlockBasedTableFactory(t));
  }

  DBImpl* impl() { return static_cast<DBImpl*>(db_.get()); }

  // Get's answers, one key at a time, through callback when given.
  std::vector<std::string> Gets(const std::vector<std::string>& keys, const ReadOptions& ro,
                                ReadCallback* callback) {
    std::vector<std::string> out;
    for (const std::string& k : keys) {
      PinnableSlice v;
      Status s = impl()->GetWithCallback(ro, db_->DefaultColumnFamily(), k, &v, callback);
      out.push_back(Answer(s, v));
    }
    return out;
  }

  // The batched form's answers, keys handed over as they are (sorted_input as said).
  // Every value slot starts with junk, which a key without a value must not keep.
  std::vector<std::string> Batched(const std::vector<std::string>& keys, bool sorted_input,
                                   const ReadOptions& ro, ReadCallback* callback) {
    const std::vector<Slice> slices(keys.begin(), keys.end());
    std::vector<PinnableSlice> values(keys.size());
    for (PinnableSlice& v : values) v.PinSelf("junk");
    std::vector<Status> statuses(keys.size());
    impl()->MultiGetWithCallback(ro, db_->DefaultColumnFamily(), keys.size(), slices.data(),
                                 values.data(), statuses.data(), sorted_input, callback);
    std::vector<std::string> out;
    for (size_t i = 0; i < keys.size(); i++) {
      if (!statuses[i].ok()) EXPECT_EQ(0u, values[i].size()) << keys[i];
      out.push_back(Answer(statuses[i], values[i]));
    }
    return out;
  }

  GatedSstEnv gated_env_;
};

std::string KeyOf(uint32_t i) {
  char buf[16];
  snprintf(buf, sizeof(buf), "key%05u", i);
  return buf;
}

// Random writes laid down layer by layer (a compacted level, L0 files overlapping it and
// each other, an immutable memtable held by the gate, the active memtable), snapshots and
// every write's sequence kept along the way. Then random key lists, each read by MultiGet
// and by Get in the same view, with and without a snapshot and a callback hiding a random
// set of writes.
TEST_P(DBMultiGetBatchTest, AgreesWithGetEverywhere) {
  const uint64_t seed = TestSeed();
  Random rnd(static_cast<uint32_t>(seed));
  Configure(GetParam());
  options_.env = &gated_env_;
  Open();
  constexpr uint32_t kKeySpace = 600;
  std::vector<SequenceNumber> seqs;
  std::vector<const Snapshot*> snapshots = {nullptr};
  auto write_some = [&](int n) {
    for (int i = 0; i < n; i++) {
      const std::string k = KeyOf(rnd.Uniform(kKeySpace));
      const uint32_t kind = rnd.Uniform(10);
      const std::string v = "v" + std::to_string(rnd.Uniform(100000)) +
                            std::string(rnd.Uniform(40), static_cast<char>('a' + i % 26));
      // A DB without a merge operator refuses Merge: a Put stands in.
      if (kind < 5 || (kind >= 7 && !GetParam().merge_operator)) {
        ASSERT_OK(db_->Put(WriteOptions(), k, v));
      } else if (kind < 7) {
        ASSERT_OK(db_->Delete(WriteOptions(), k));
      } else {
        ASSERT_OK(db_->Merge(WriteOptions(), k, v.substr(0, 6)));
      }
      seqs.push_back(db_->GetLatestSequenceNumber());
      // Snapshots keep older versions and operands apart through flushes and compactions.
      if (rnd.OneIn(150)) snapshots.push_back(db_->GetSnapshot());
    }
  };
  for (int round = 0; round < 2; round++) {
    write_some(1500);
    ASSERT_OK(Flush());
    ASSERT_OK(CompactAll());
  }
  for (int file = 0; file < 3; file++) {
    write_some(400);
    ASSERT_OK(Flush());
  }
  ASSERT_EQ(3u, IntProperty("shale.num-files-at-level0")) << FilesPerLevel();
  gated_env_.SetOpen(false);
  write_some(300);
  FlushOptions no_wait;
  no_wait.wait = false;
  ASSERT_OK(db_->Flush(no_wait));
  gated_env_.WaitForBlockedJob();
  ASSERT_EQ(1u, IntProperty("shale.num-immutable-mem-table"));
  write_some(300);

  for (int trial = 0; trial < 300; trial++) {
    std::vector<std::string> keys(1 + rnd.Uniform(rnd.OneIn(4) ? 200 : 30));
    // A run of neighbours shares blocks; some keys were never written; some repeat.
    const uint32_t base = rnd.Uniform(kKeySpace);
    for (std::string& k : keys) {
      k = rnd.OneIn(2) ? KeyOf(base + rnd.Uniform(40)) : KeyOf(rnd.Uniform(kKeySpace + 50));
    }
    if (keys.size() > 1 && rnd.OneIn(3)) keys.back() = keys.front();
    ReadOptions ro;
    ro.snapshot = snapshots[rnd.Uniform(static_cast<uint32_t>(snapshots.size()))];
    std::set<SequenceNumber> hidden;
    const bool with_callback = rnd.OneIn(3);
    if (with_callback) {
      for (SequenceNumber s : seqs) {
        if (rnd.OneIn(5)) hidden.insert(s);
      }
    }
    HideSeqs get_cb(&hidden);
    HideSeqs multiget_cb(&hidden);
    const bool sorted = rnd.OneIn(2);
    if (sorted) std::sort(keys.begin(), keys.end());
    const std::vector<std::string> want = Gets(keys, ro, with_callback ? &get_cb : nullptr);
    ASSERT_EQ(want, Batched(keys, sorted, ro, with_callback ? &multiget_cb : nullptr))
        << "seed " << seed << " trial " << trial << " sorted " << sorted << " callback "
        << with_callback << " snapshot " << (ro.snapshot != nullptr);
  }
  for (const Snapshot* s : snapshots) {
    if (s != nullptr) db_->ReleaseSnapshot(s);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, DBMultiGetBatchTest,
    testing::Values(Config{"MergeBloomCache", true, true, true, false, false},
                    Config{"NoMergeNoFilterNoCache", false, false, false, false, false},
                    Config{"MergeHashIndexCachedMeta", true, true, true, true, true}),
    [](const testing::TestParamInfo<Config>& info) { return std::string(info.param.name); });

class DBMultiGetBlockTest : public DBTestBase {
 protected:
  DBMultiGetBlockTest() : DBTestBase("db_multiget_block") {
    options_.stats_dump_period_sec = 0;
    options_.disable_auto_compactions = true;
    options_.statistics = CreateDBStatistics();
    BlockBasedTableOptions t;
    t.block_cache = NewLRUCache(8 << 20);
    t.filter_policy.reset(NewBloomFilterPolicy(10));
    options_.table_factory.reset(NewBlockBasedTableFactory(t));
  }

  // Data block fetches from the cache (hits and misses) during one batched MultiGet of
  // keys; every key must be found with its value.
  uint64_t DataBlockFetches(const std::vector<std::string>& keys, bool sorted) {
    const uint64_t before = Fetches();
    std::vector<Slice> slices(keys.begin(), keys.end());
    std::vector<PinnableSlice> values(keys.size());
    std::vector<Status> statuses(keys.size());
    db_->MultiGet(ReadOptions(), db_->DefaultColumnFamily(), keys.size(), slices.data(),
                  values.data(), statuses.data(), sorted);
    for (size_t i = 0; i < keys.size(); i++) {
      EXPECT_OK(statuses[i]) << keys[i];
      EXPECT_EQ("v-" + keys[i], values[i].ToString());
    }
    return Fetches() - before;
  }
  // Writes keys [first, last) with step, each with the value DataBlockFetches expects.
  void PutKeys(uint32_t first, uint32_t last, uint32_t step = 1) {
    for (uint32_t i = first; i < last; i += step) ASSERT_OK(Put(KeyOf(i), "v-" + KeyOf(i)));
  }
  std::vector<std::string> KeysOf(uint32_t n) {
    std::vector<std::string> keys;
    for (uint32_t i = 0; i < n; i++) keys.push_back(KeyOf(i));
    return keys;
  }
  uint64_t Fetches() {
    return options_.statistics->getTickerCount(BLOCK_CACHE_DATA_HIT) +
           options_.statistics->getTickerCount(BLOCK_CACHE_DATA_MISS);
  }
};

// 100 small entries fit one 4 KiB data block: a batch of all of them asks the cache once,
// where a lookup per key asks 100 times; in whatever order the keys come.
TEST_F(DBMultiGetBlockTest, KeysSharingABlockFetchItOnce) {
  Open();
  const std::vector<std::string> keys = KeysOf(100);
  PutKeys(0, 100);
  ASSERT_OK(Flush());
  EXPECT_EQ(1u, DataBlockFetches(keys, /*sorted=*/true));
  std::vector<std::string> shuffled = keys;
  Random rnd(static_cast<uint32_t>(TestSeed()));
  for (size_t i = shuffled.size(); i > 1; i--) {
    std::swap(shuffled[i - 1], shuffled[rnd.Uniform(static_cast<uint32_t>(i))]);
  }
  EXPECT_EQ(1u, DataBlockFetches(shuffled, /*sorted=*/false));
  // Repeated keys share the block too.
  EXPECT_EQ(1u, DataBlockFetches({keys[5], keys[5], keys[7], keys[5]}, /*sorted=*/false));
}

// Keys spread over a compacted level and two overlapping L0 files: each file's block is
// fetched once for the keys it answers, and keys answered above never reach the files
// below.
TEST_F(DBMultiGetBlockTest, EachFileBlockOncePerBatch) {
  Open();
  PutKeys(0, 90);
  ASSERT_OK(Flush());
  ASSERT_OK(CompactAll());
  ASSERT_EQ(0u, IntProperty("shale.num-files-at-level0"));
  // Two L0 files over the whole range: every third key, then the next every third key.
  for (uint32_t file = 0; file < 2; file++) {
    PutKeys(file, 90, 3);
    ASSERT_OK(Flush());
  }
  ASSERT_EQ(2u, IntProperty("shale.num-files-at-level0"));
  // A key answered by the newer L0 file is not looked for further down; the others pass
  // both L0 files (one block each), and the last third reaches the deep file (one block).
  EXPECT_EQ(3u, DataBlockFetches(KeysOf(90), /*sorted=*/false));
}

// A caller that claims sorted input without it still gets every key's answer.
TEST_F(DBMultiGetBlockTest, FalseSortedClaimIsHarmless) {
  Open();
  // Three files: one compacted, two in L0.
  for (uint32_t i = 0; i < 30; i += 10) {
    PutKeys(i, i + 10);
    ASSERT_OK(Flush());
    if (i == 0) ASSERT_OK(CompactAll());
  }
  std::vector<std::string> keys = KeysOf(30);
  std::reverse(keys.begin(), keys.end());
  DataBlockFetches(keys, /*sorted=*/true);
}

}  // namespace
}  // namespace shale
