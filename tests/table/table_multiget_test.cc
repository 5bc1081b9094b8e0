// TableReader::MultiGet against TableReader::Get: for every key of a batch the handler sees
// the same entries, in the same order, and the key gets the same status, whatever the
// order of the batch, repeated keys, keys absent from the file, keys whose versions run
// over several data blocks, and the filter, block cache and hash index settings. Values
// pinned through the batch outlive the reader. Randomized; prints its seed (replay with
// SHALE_TEST_SEED).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "shale/cache.h"
#include "shale/env.h"
#include "shale/filter_policy.h"
#include "table/table_builder.h"
#include "table/table_reader.h"
#include "tests/testutil/test_util.h"
#include "util/dbformat.h"
#include "util/random.h"

namespace shale {
namespace {

std::string UserKeyOf(uint32_t i) {
  char buf[24];
  snprintf(buf, sizeof(buf), "user%06u", i);
  return buf;
}

// What a lookup's handler saw: every entry of the looked-up user key from the seek on, up
// to `limit` of them (a handler that stops early, as a Get that found its value does).
struct Seen {
  std::string user_key;
  size_t limit = 0;
  std::vector<std::string> entries;  // internal key (hex) = value
  std::vector<PinnableSlice> pins;   // the values, when the pinning handler runs
};

bool Record(void* arg, const Slice& ikey, const Slice& value) {
  Seen* seen = static_cast<Seen*>(arg);
  if (ExtractUserKey(ikey) != Slice(seen->user_key)) return false;
  seen->entries.push_back(ikey.ToString(true) + "=" + value.ToString());
  return seen->entries.size() < seen->limit;
}

bool RecordPinned(void* arg, const Slice& ikey, const Slice& value, Cleanable* pinner) {
  Seen* seen = static_cast<Seen*>(arg);
  if (ExtractUserKey(ikey) == Slice(seen->user_key)) {
    seen->pins.emplace_back();
    seen->pins.back().PinSlice(value, pinner);
  }
  return Record(arg, ikey, value);
}

struct Setup {
  const char* name;
  bool bloom;
  bool block_cache;
  bool hash_index;
};

class TableMultiGetTest : public testing::TestWithParam<Setup> {
 protected:
  TableMultiGetTest() : dir_("table_multiget"), icmp_(BytewiseComparator()) {}

  // Writes the table: even user keys only, some with many versions (which then run over
  // several 128-byte blocks), values of varied sizes.
  void Build(Random* rnd, uint32_t users) {
    BlockBasedTableOptions t;
    t.block_size = 128;
    if (GetParam().bloom) t.filter_policy.reset(NewBloomFilterPolicy(10));
    if (GetParam().block_cache) {
      cache_ = NewLRUCache(1 << 20);
      t.block_cache = cache_;
    } else {
      t.no_block_cache = true;
    }
    if (GetParam().hash_index)
      t.data_block_index_type = BlockBasedTableOptions::kDataBlockBinaryAndHash;
    TableBuilderOptions bo;
    bo.icmp = &icmp_;
    bo.table_options = t;
    bo.file_name = dir_.File("t.sst");
    std::unique_ptr<WritableFile> file;
    ASSERT_OK(Env::Default()->NewWritableFile(bo.file_name, &file, EnvOptions()));
    TableBuilder builder(bo, file.get());
    for (uint32_t i = 0; i < users; i += 2) {
      const uint32_t versions = rnd->OneIn(5) ? 2 + rnd->Uniform(25) : 1;
      for (uint32_t v = versions; v > 0; v--) {  // newest (highest sequence) first
        const ValueType type = rnd->OneIn(6) ? kTypeDeletion : kTypeValue;
        builder.Add(IKey(UserKeyOf(i), v * 10, type),
                    type == kTypeValue ? RandomString(rnd, rnd->Uniform(40)) : "");
      }
    }
    ASSERT_OK(builder.Finish());
    ASSERT_OK(file->Close());
    uint64_t size = 0;
    ASSERT_OK(Env::Default()->GetFileSize(bo.file_name, &size));
    std::unique_ptr<RandomAccessFile> in;
    ASSERT_OK(Env::Default()->NewRandomAccessFile(bo.file_name, &in, EnvOptions()));
    TableReaderOptions ro;
    ro.icmp = &icmp_;
    ro.table_options = t;
    ro.file_name = bo.file_name;
    ASSERT_OK(TableReader::Open(ro, std::move(in), size, &reader_));
  }

  TempDirectory dir_;
  InternalKeyComparator icmp_;
  // Pins on cached blocks need the cache to outlive them (table_reader.h): the fixture
  // holds it past the reader and the test's pins.
  std::shared_ptr<Cache> cache_;
  std::unique_ptr<TableReader> reader_;
};

TEST_P(TableMultiGetTest, SameEntriesAndStatusAsGet) {
  const uint64_t seed = TestSeed();
  Random rnd(static_cast<uint32_t>(seed));
  constexpr uint32_t kUsers = 800;
  Build(&rnd, kUsers);
  ASSERT_TRUE(reader_ != nullptr);
  for (int trial = 0; trial < 400; trial++) {
    // A batch of neighbours (sharing blocks) or of keys from anywhere, at random sequences,
    // with some keys repeated; sorted by internal key unless the trial says otherwise.
    const size_t n = 1 + rnd.Uniform(rnd.OneIn(3) ? 100 : 12);
    const uint32_t base = rnd.Uniform(kUsers);
    std::vector<std::string> ikeys;
    std::vector<size_t> limits;
    for (size_t i = 0; i < n; i++) {
      const uint32_t u = rnd.OneIn(2) ? base + rnd.Uniform(30) : rnd.Uniform(kUsers + 20);
      ikeys.push_back(IKey(UserKeyOf(u), rnd.Uniform(300), kValueTypeForSeek));
      if (i > 0 && rnd.OneIn(8)) ikeys.back() = ikeys[rnd.Uniform(static_cast<uint32_t>(i))];
    }
    const bool sorted = !rnd.OneIn(4);
    if (sorted) {
      std::sort(ikeys.begin(), ikeys.end(), [this](const std::string& a, const std::string& b) {
        return icmp_.Compare(a, b) < 0;
      });
    }
    for (size_t i = 0; i < n; i++) limits.push_back(rnd.OneIn(3) ? 1 : 1 + rnd.Uniform(40));
    const bool pinning = rnd.OneIn(2);

    std::vector<Seen> want(n);
    std::vector<Seen> got(n);
    std::vector<TableReader::BatchKey> batch(n);
    std::vector<Status> want_status(n);
    for (size_t i = 0; i < n; i++) {
      for (Seen* s : {&want[i], &got[i]}) {
        s->user_key = ExtractUserKey(ikeys[i]).ToString();
        s->limit = limits[i];
      }
      want_status[i] = reader_->Get(ReadOptions(), ikeys[i], &want[i], &Record);
      batch[i].ikey = ikeys[i];
      batch[i].arg = &got[i];
    }
    if (pinning) {
      reader_->MultiGet(ReadOptions(), batch.data(), n, &RecordPinned);
    } else {
      reader_->MultiGet(ReadOptions(), batch.data(), n, &Record);
    }
    for (size_t i = 0; i < n; i++) {
      ASSERT_EQ(want_status[i].ToString(), batch[i].status.ToString())
          << "seed " << seed << " trial " << trial << " key " << i;
      ASSERT_EQ(want[i].entries, got[i].entries)
          << "seed " << seed << " trial " << trial << " key " << i << " of " << n << " sorted "
          << sorted << " " << Slice(ikeys[i]).ToString(true);
    }
  }
}

// Values pinned through a batch stay valid after the reader is gone (with no block cache
// each pin owns its block; with one, the cache entry is held, and the cache outlives the
// pins). ASan checks the bytes.
TEST_P(TableMultiGetTest, PinnedValuesOutliveTheReader) {
  Random rnd(static_cast<uint32_t>(TestSeed()));
  Build(&rnd, 200);
  ASSERT_TRUE(reader_ != nullptr);
  std::vector<std::string> ikeys;
  for (uint32_t i = 0; i < 100; i++) {
    ikeys.push_back(IKey(UserKeyOf(i), kMaxSequenceNumber, kValueTypeForSeek));
  }
  std::vector<Seen> want(ikeys.size());
  std::vector<Seen> got(ikeys.size());
  std::vector<TableReader::BatchKey> batch(ikeys.size());
  for (size_t i = 0; i < ikeys.size(); i++) {
    for (Seen* s : {&want[i], &got[i]}) {
      s->user_key = ExtractUserKey(ikeys[i]).ToString();
      s->limit = 1000;
    }
    ASSERT_OK(reader_->Get(ReadOptions(), ikeys[i], &want[i], &Record));
    batch[i].ikey = ikeys[i];
    batch[i].arg = &got[i];
  }
  reader_->MultiGet(ReadOptions(), batch.data(), batch.size(), &RecordPinned);
  reader_.reset();
  for (size_t i = 0; i < got.size(); i++) {
    ASSERT_OK(batch[i].status);
    ASSERT_EQ(want[i].entries.size(), got[i].pins.size());
    for (size_t j = 0; j < got[i].pins.size(); j++) {
      const std::string& e = want[i].entries[j];
      EXPECT_EQ(e.substr(e.find('=') + 1), got[i].pins[j].ToString());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Setups, TableMultiGetTest,
                         testing::Values(Setup{"Plain", false, false, false},
                                         Setup{"BloomCache", true, true, false},
                                         Setup{"BloomCacheHashIndex", true, true, true}),
                         [](const testing::TestParamInfo<Setup>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace shale
