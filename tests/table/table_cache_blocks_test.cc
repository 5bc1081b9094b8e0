// TableReader with a block cache: repeated reads hit the cache (tickers and usage),
// fill_cache=false, cache_index_and_filter_blocks (with and without high priority, pinned
// for level 0), iterators and pinned Get values surviving eviction, a strict limit, readers
// sharing one cache, filter tickers, the factory's default cache and no_block_cache, a
// randomized comparison with a model under several cache configurations, and the cache
// references a pinning Get takes.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "shale/cache.h"
#include "shale/filter_policy.h"
#include "shale/options.h"
#include "shale/slice.h"
#include "shale/statistics.h"
#include "table/table_builder.h"
#include "table/table_factory.h"
#include "table/table_reader.h"
#include "tests/testutil/test_util.h"
#include "util/dbformat.h"
#include "util/lru_cache.h"

namespace shale {
namespace {

struct IcmpLess {
  const InternalKeyComparator* icmp;
  bool operator()(const std::string& a, const std::string& b) const {
    return icmp->Compare(a, b) < 0;
  }
};
using Model = std::map<std::string, std::string, IcmpLess>;

std::string UserKey(int i) {
  char buf[32];
  snprintf(buf, sizeof(buf), "key%07d", i);
  return buf;
}

std::string ValueFor(int i, const std::string& tag = "") {
  return tag + "value-" + std::to_string(i) +
         std::string(40 + i % 50, static_cast<char>('a' + i % 26));
}

// Collects the first entry of the looked-up user key, copying it.
struct Collector {
  std::string user_key;
  bool found = false;
  std::string value;
  static bool Handle(void* arg, const Slice& ikey, const Slice& value) {
    auto* c = static_cast<Collector*>(arg);
    if (ExtractUserKey(ikey) == Slice(c->user_key)) {
      c->found = true;
      c->value = value.ToString();
    }
    return false;
  }
};

// Pins the first entry of the looked-up user key instead of copying it.
struct PinningCollector {
  std::string user_key;
  PinnableSlice value;
  static bool Handle(void* arg, const Slice& ikey, const Slice& value, Cleanable* pinner) {
    auto* c = static_cast<PinningCollector*>(arg);
    if (ExtractUserKey(ikey) == Slice(c->user_key)) c->value.PinSlice(value, pinner);
    return false;
  }
};

class TableCacheBlocksTest : public ::testing::Test {
 protected:
  TableCacheBlocksTest() : icmp_(BytewiseComparator()), model_(IcmpLess{&icmp_}) {
    topts_.block_size = 512;
    topts_.block_restart_interval = 4;
    stats_ = CreateDBStatistics();
  }

  // Builds kKeys keys (values tagged with tag) into file `name`.
  void Build(const std::string& name = "000001.sst", const std::string& tag = "",
             bool bloom = false) {
    model_.clear();
    for (int i = 0; i < kKeys; i++) model_[IKey(UserKey(i), 100)] = ValueFor(i, tag);
    TableBuilderOptions bo;
    bo.icmp = &icmp_;
    bo.table_options = topts_;
    if (bloom) bo.table_options.filter_policy.reset(NewBloomFilterPolicy(10));
    bo.compression = kNoCompression;
    bo.file_name = dir_.File(name);
    std::unique_ptr<WritableFile> file;
    ASSERT_OK(Env::Default()->NewWritableFile(bo.file_name, &file, EnvOptions()));
    TableBuilder builder(bo, file.get());
    for (const auto& [k, v] : model_) builder.Add(k, v);
    ASSERT_OK(builder.Finish());
    ASSERT_OK(file->Close());
    ASSERT_GT(builder.GetTableProperties().num_data_blocks, 10u);
  }

  Status Open(std::unique_ptr<TableReader>* reader, const std::string& name = "000001.sst",
              bool bloom = false, bool is_level0 = false) {
    const std::string path = dir_.File(name);
    uint64_t size = 0;
    Status s = Env::Default()->GetFileSize(path, &size);
    if (!s.ok()) return s;
    std::unique_ptr<RandomAccessFile> file;
    s = Env::Default()->NewRandomAccessFile(path, &file, EnvOptions());
    if (!s.ok()) return s;
    TableReaderOptions ro;
    ro.icmp = &icmp_;
    ro.table_options = topts_;
    if (bloom) ro.table_options.filter_policy.reset(NewBloomFilterPolicy(10));
    ro.file_name = path;
    ro.is_level0 = is_level0;
    ro.statistics = stats_.get();
    return TableReader::Open(ro, std::move(file), size, reader);
  }

  // Get of key i: the value, or "<absent>".
  std::string Get(TableReader* reader, int i, const ReadOptions& ro = ReadOptions()) {
    Collector c;
    c.user_key = UserKey(i);
    Status s = reader->Get(ro, IKey(c.user_key, kMaxSequenceNumber, kValueTypeForSeek), &c,
                           &Collector::Handle);
    EXPECT_OK(s);
    return c.found ? c.value : "<absent>";
  }

  uint64_t T(uint32_t ticker) const { return stats_->getTickerCount(ticker); }

  void ExpectFullScan(TableReader* reader) {
    std::unique_ptr<InternalIterator> it(reader->NewIterator(ReadOptions()));
    auto mi = model_.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++mi) {
      ASSERT_NE(mi, model_.end());
      ASSERT_EQ(it->key().ToString(), mi->first);
      ASSERT_EQ(it->value().ToString(), mi->second);
    }
    ASSERT_OK(it->status());
    ASSERT_EQ(mi, model_.end());
  }

  static constexpr int kKeys = 400;
  InternalKeyComparator icmp_;
  TempDirectory dir_{"table_cache_blocks_test"};
  BlockBasedTableOptions topts_;
  std::shared_ptr<Statistics> stats_;
  Model model_;
};

TEST_F(TableCacheBlocksTest, SecondReadOfABlockHits) {
  topts_.block_cache = NewLRUCache(1 << 20, 0);
  Build();
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(Open(&reader));
  EXPECT_EQ(reader->block_cache(), topts_.block_cache.get());
  EXPECT_EQ(0u, topts_.block_cache->GetUsage());  // index kept in the reader

  // Key 8 is not the first entry of its block, whose lookup would also read the block
  // before to check its end against the separator.
  EXPECT_EQ(ValueFor(8), Get(reader.get(), 8));
  EXPECT_EQ(1u, T(BLOCK_CACHE_MISS));
  EXPECT_EQ(1u, T(BLOCK_CACHE_DATA_MISS));
  EXPECT_EQ(1u, T(BLOCK_CACHE_ADD));
  EXPECT_EQ(1u, T(BLOCK_CACHE_DATA_ADD));
  EXPECT_EQ(0u, T(BLOCK_CACHE_HIT));
  const size_t usage = topts_.block_cache->GetUsage();
  EXPECT_GT(usage, 0u);
  EXPECT_EQ(usage, T(BLOCK_CACHE_BYTES_WRITE));
  EXPECT_EQ(usage, T(BLOCK_CACHE_DATA_BYTES_INSERT));
  EXPECT_EQ(0u, topts_.block_cache->GetPinnedUsage());

  // The same block again: hits, no new insert.
  EXPECT_EQ(ValueFor(8), Get(reader.get(), 8));
  EXPECT_EQ(ValueFor(8), Get(reader.get(), 8));
  EXPECT_EQ(2u, T(BLOCK_CACHE_HIT));
  EXPECT_EQ(2u, T(BLOCK_CACHE_DATA_HIT));
  EXPECT_EQ(1u, T(BLOCK_CACHE_ADD));
  EXPECT_EQ(2 * usage, T(BLOCK_CACHE_BYTES_READ));
  EXPECT_EQ(usage, topts_.block_cache->GetUsage());
  EXPECT_EQ(0u, T(BLOCK_CACHE_INDEX_MISS) + T(BLOCK_CACHE_INDEX_HIT));

  // A full scan caches every data block; a second scan only hits.
  ExpectFullScan(reader.get());
  const uint64_t adds = T(BLOCK_CACHE_ADD);
  const uint64_t misses = T(BLOCK_CACHE_MISS);
  ExpectFullScan(reader.get());
  EXPECT_EQ(adds, T(BLOCK_CACHE_ADD));
  EXPECT_EQ(misses, T(BLOCK_CACHE_MISS));
  EXPECT_EQ(reader->GetTableProperties().num_data_blocks, adds);
}

TEST_F(TableCacheBlocksTest, FillCacheFalseReadsWithoutInserting) {
  topts_.block_cache = NewLRUCache(1 << 20, 0);
  Build();
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(Open(&reader));
  ReadOptions no_fill;
  no_fill.fill_cache = false;
  EXPECT_EQ(ValueFor(3), Get(reader.get(), 3, no_fill));
  EXPECT_EQ(ValueFor(3), Get(reader.get(), 3, no_fill));
  EXPECT_EQ(2u, T(BLOCK_CACHE_MISS));
  EXPECT_EQ(0u, T(BLOCK_CACHE_ADD));
  EXPECT_EQ(0u, topts_.block_cache->GetUsage());
  {
    std::unique_ptr<InternalIterator> it(reader->NewIterator(no_fill));
    int n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
    ASSERT_OK(it->status());
    EXPECT_EQ(kKeys, n);
  }
  EXPECT_EQ(0u, topts_.block_cache->GetUsage());
  // A filling read caches the block; a non-filling one then finds it.
  EXPECT_EQ(ValueFor(3), Get(reader.get(), 3));
  EXPECT_EQ(1u, T(BLOCK_CACHE_ADD));
  EXPECT_EQ(ValueFor(3), Get(reader.get(), 3, no_fill));
  EXPECT_EQ(1u, T(BLOCK_CACHE_HIT));
}

TEST_F(TableCacheBlocksTest, IndexAndFilterInTheCache) {
  auto cache = NewLRUCache(1 << 20, 0, false, 0.5);
  auto* lru = static_cast<LRUCache*>(cache.get());
  topts_.block_cache = cache;
  topts_.cache_index_and_filter_blocks = true;
  Build("000001.sst", "", /*bloom=*/true);
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(Open(&reader, "000001.sst", /*bloom=*/true));
  // Open put both in the cache, in the high-priority pool, unpinned.
  EXPECT_EQ(1u, T(BLOCK_CACHE_INDEX_ADD));
  EXPECT_EQ(1u, T(BLOCK_CACHE_FILTER_ADD));
  EXPECT_EQ(2u, T(BLOCK_CACHE_ADD));
  const size_t meta_usage = cache->GetUsage();
  EXPECT_GT(meta_usage, 0u);
  EXPECT_EQ(meta_usage, T(BLOCK_CACHE_INDEX_BYTES_INSERT) + T(BLOCK_CACHE_FILTER_BYTES_INSERT));
  EXPECT_EQ(meta_usage, lru->TEST_HighPriPoolUsage());
  EXPECT_EQ(0u, cache->GetPinnedUsage());

  EXPECT_EQ(ValueFor(11), Get(reader.get(), 11));
  EXPECT_EQ(1u, T(BLOCK_CACHE_INDEX_HIT));
  EXPECT_EQ(1u, T(BLOCK_CACHE_FILTER_HIT));
  EXPECT_EQ(1u, T(BLOCK_CACHE_DATA_MISS));

  // Dropped from the cache, they are read and inserted again on the next use.
  cache->EraseUnRefEntries();
  EXPECT_EQ(0u, cache->GetUsage());
  EXPECT_EQ(ValueFor(12), Get(reader.get(), 12));
  EXPECT_EQ(1u, T(BLOCK_CACHE_INDEX_MISS));
  EXPECT_EQ(1u, T(BLOCK_CACHE_FILTER_MISS));
  EXPECT_EQ(2u, T(BLOCK_CACHE_INDEX_ADD));
  EXPECT_EQ(2u, T(BLOCK_CACHE_FILTER_ADD));
  // Read again on a miss, the index sits in its buffer's headroom: its charge (the whole
  // buffer) may differ from the first one's by the padding.
  const size_t reloaded_meta_usage =
      T(BLOCK_CACHE_INDEX_BYTES_INSERT) + T(BLOCK_CACHE_FILTER_BYTES_INSERT) - meta_usage;
  ExpectFullScan(reader.get());
  EXPECT_EQ("<absent>", Get(reader.get(), kKeys + 5));
  EXPECT_EQ(T(BLOCK_CACHE_MISS),
            T(BLOCK_CACHE_INDEX_MISS) + T(BLOCK_CACHE_FILTER_MISS) + T(BLOCK_CACHE_DATA_MISS));
  EXPECT_EQ(T(BLOCK_CACHE_HIT),
            T(BLOCK_CACHE_INDEX_HIT) + T(BLOCK_CACHE_FILTER_HIT) + T(BLOCK_CACHE_DATA_HIT));

  // Closing the reader frees its index and filter entries (the data blocks age out).
  const size_t before_close = cache->GetUsage();
  reader.reset();
  EXPECT_EQ(before_close - reloaded_meta_usage, cache->GetUsage());
  cache->EraseUnRefEntries();
  EXPECT_EQ(0u, lru->TEST_HighPriPoolUsage());

  // Without high priority they go to the low part like data blocks.
  topts_.cache_index_and_filter_blocks_with_high_priority = false;
  ASSERT_OK(Open(&reader, "000001.sst", /*bloom=*/true));
  EXPECT_EQ(0u, lru->TEST_HighPriPoolUsage());
  EXPECT_EQ(ValueFor(13), Get(reader.get(), 13));
}

TEST_F(TableCacheBlocksTest, IndexAndFilterOutsideTheCacheByDefault) {
  topts_.block_cache = NewLRUCache(1 << 20, 0);
  Build("000001.sst", "", /*bloom=*/true);
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(Open(&reader, "000001.sst", /*bloom=*/true));
  EXPECT_EQ(0u, T(BLOCK_CACHE_ADD));
  EXPECT_EQ(ValueFor(1), Get(reader.get(), 1));
  EXPECT_EQ(0u, T(BLOCK_CACHE_INDEX_HIT) + T(BLOCK_CACHE_INDEX_MISS));
  EXPECT_EQ(0u, T(BLOCK_CACHE_FILTER_HIT) + T(BLOCK_CACHE_FILTER_MISS));
  EXPECT_EQ(1u, T(BLOCK_CACHE_DATA_ADD));
}

TEST_F(TableCacheBlocksTest, PinL0IndexAndFilter) {
  auto cache = NewLRUCache(1 << 20, 0, false, 0.5);
  topts_.block_cache = cache;
  topts_.cache_index_and_filter_blocks = true;
  topts_.pin_l0_filter_and_index_blocks_in_cache = true;
  Build("000001.sst", "", /*bloom=*/true);

  // Not level 0: not pinned.
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(Open(&reader, "000001.sst", true, /*is_level0=*/false));
  EXPECT_EQ(0u, cache->GetPinnedUsage());
  reader.reset();

  ASSERT_OK(Open(&reader, "000001.sst", true, /*is_level0=*/true));
  const size_t pinned = cache->GetPinnedUsage();
  EXPECT_GT(pinned, 0u);
  EXPECT_EQ(pinned, cache->GetUsage());
  cache->EraseUnRefEntries();
  EXPECT_EQ(pinned, cache->GetUsage());
  const uint64_t index_lookups = T(BLOCK_CACHE_INDEX_HIT) + T(BLOCK_CACHE_INDEX_MISS);
  for (int i = 0; i < kKeys; i += 7) EXPECT_EQ(ValueFor(i), Get(reader.get(), i));
  EXPECT_EQ("<absent>", Get(reader.get(), kKeys + 1));
  ExpectFullScan(reader.get());
  // The pinned blocks are used directly, without cache lookups.
  EXPECT_EQ(index_lookups, T(BLOCK_CACHE_INDEX_HIT) + T(BLOCK_CACHE_INDEX_MISS));
  EXPECT_EQ(0u, T(BLOCK_CACHE_FILTER_HIT) + T(BLOCK_CACHE_FILTER_MISS));
  reader.reset();
  EXPECT_EQ(0u, cache->GetPinnedUsage());
  cache->EraseUnRefEntries();
  EXPECT_EQ(0u, cache->GetUsage());
}

TEST_F(TableCacheBlocksTest, IteratorsSurviveEviction) {
  // Far smaller than one block: every unreferenced block is evicted at once.
  auto cache = NewLRUCache(64, 0);
  topts_.block_cache = cache;
  topts_.cache_index_and_filter_blocks = true;
  Build();
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(Open(&reader));
  std::unique_ptr<InternalIterator> a(reader->NewIterator(ReadOptions()));
  std::unique_ptr<InternalIterator> b(reader->NewIterator(ReadOptions()));
  a->SeekToFirst();
  b->SeekToLast();
  ASSERT_TRUE(a->Valid());
  ASSERT_TRUE(b->Valid());
  const Slice a_value = a->value();  // points into the cached block
  EXPECT_GT(cache->GetPinnedUsage(), 0u);
  EXPECT_GT(cache->GetUsage(), cache->GetCapacity());  // overcommitted while pinned

  // Flood the cache and drop what can be dropped; the positioned blocks stay.
  for (int i = 0; i < kKeys; i += 3) EXPECT_EQ(ValueFor(i), Get(reader.get(), i));
  cache->EraseUnRefEntries();
  cache->SetCapacity(0);
  EXPECT_EQ(ValueFor(0), a_value.ToString());
  EXPECT_EQ(ValueFor(kKeys - 1), b->value().ToString());

  auto mi = model_.begin();
  for (; a->Valid(); a->Next(), ++mi) {
    ASSERT_NE(mi, model_.end());
    ASSERT_EQ(mi->first, a->key().ToString());
    ASSERT_EQ(mi->second, a->value().ToString());
  }
  ASSERT_OK(a->status());
  EXPECT_EQ(mi, model_.end());
  int n = 0;
  for (; b->Valid(); b->Prev()) n++;
  ASSERT_OK(b->status());
  EXPECT_EQ(kKeys, n);
  a.reset();
  b.reset();
  EXPECT_EQ(0u, cache->GetPinnedUsage());
  EXPECT_EQ(0u, cache->GetUsage());
}

TEST_F(TableCacheBlocksTest, PinnedGetValueOutlivesEvictionAndReader) {
  for (bool with_cache : {true, false}) {
    SCOPED_TRACE(with_cache ? "cache" : "no cache");
    std::shared_ptr<Cache> cache = with_cache ? NewLRUCache(1 << 20, 0) : nullptr;
    topts_.block_cache = cache;
    Build();
    std::unique_ptr<TableReader> reader;
    ASSERT_OK(Open(&reader));
    PinningCollector c;
    c.user_key = UserKey(42);
    ASSERT_OK(reader->Get(ReadOptions(), IKey(c.user_key, kMaxSequenceNumber, kValueTypeForSeek),
                          &c, &PinningCollector::Handle));
    ASSERT_TRUE(c.value.IsPinned());
    EXPECT_EQ(ValueFor(42), c.value.ToString());
    if (cache != nullptr) {
      EXPECT_GT(cache->GetPinnedUsage(), 0u);
      cache->SetCapacity(0);
      cache->EraseUnRefEntries();
      EXPECT_GT(cache->GetUsage(), 0u);
    }
    reader.reset();
    EXPECT_EQ(ValueFor(42), c.value.ToString());
    c.value.Reset();
    if (cache != nullptr) {
      EXPECT_EQ(0u, cache->GetPinnedUsage());
      EXPECT_EQ(0u, cache->GetUsage());
    }
  }

  // A handler that does not take the pin leaves nothing referenced.
  topts_.block_cache = NewLRUCache(1 << 20, 0);
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(Open(&reader));
  int calls = 0;
  auto handler = [](void* arg, const Slice&, const Slice&, Cleanable* pinner) {
    EXPECT_NE(nullptr, pinner);
    EXPECT_TRUE(pinner->HasCleanups());
    ++*static_cast<int*>(arg);
    return *static_cast<int*>(arg) < 5;
  };
  ASSERT_OK(reader->Get(ReadOptions(), IKey(UserKey(10), kMaxSequenceNumber, kValueTypeForSeek),
                        &calls, static_cast<TableReader::PinningGetHandler>(handler)));
  EXPECT_EQ(5, calls);
  EXPECT_EQ(0u, topts_.block_cache->GetPinnedUsage());
}

TEST_F(TableCacheBlocksTest, StrictLimitFallsBackToUncachedReads) {
  auto cache = NewLRUCache(64, 0, /*strict=*/true);
  topts_.block_cache = cache;
  Build();
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(Open(&reader));
  std::unique_ptr<InternalIterator> it(reader->NewIterator(ReadOptions()));
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(1u, T(BLOCK_CACHE_ADD_FAILURES));
  EXPECT_EQ(0u, cache->GetUsage());
  for (int i = 0; i < kKeys; i += 13) EXPECT_EQ(ValueFor(i), Get(reader.get(), i));
  EXPECT_GT(T(BLOCK_CACHE_ADD_FAILURES), 1u);
  EXPECT_EQ(0u, T(BLOCK_CACHE_ADD));
  ExpectFullScan(reader.get());
}

TEST_F(TableCacheBlocksTest, ReadersSharingACacheDoNotCollide) {
  auto cache = NewLRUCache(1 << 20);
  topts_.block_cache = cache;
  topts_.cache_index_and_filter_blocks = true;
  Build("000001.sst", "one-");
  Build("000002.sst", "two-");  // same layout, same block offsets
  std::unique_ptr<TableReader> r1, r2;
  ASSERT_OK(Open(&r1, "000001.sst"));
  ASSERT_OK(Open(&r2, "000002.sst"));
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < kKeys; i += 11) {
      EXPECT_EQ(ValueFor(i, "one-"), Get(r1.get(), i));
      EXPECT_EQ(ValueFor(i, "two-"), Get(r2.get(), i));
    }
  }
  EXPECT_GT(T(BLOCK_CACHE_DATA_HIT), 0u);
}

TEST_F(TableCacheBlocksTest, FilterTickers) {
  topts_.block_cache = NewLRUCache(1 << 20, 0);
  Build("000001.sst", "", /*bloom=*/true);
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(Open(&reader, "000001.sst", /*bloom=*/true));
  for (int i = 0; i < 100; i++) EXPECT_EQ(ValueFor(i), Get(reader.get(), i));
  EXPECT_EQ(100u, T(BLOOM_FILTER_FULL_POSITIVE));
  EXPECT_EQ(100u, T(BLOOM_FILTER_FULL_TRUE_POSITIVE));
  for (int i = 0; i < 1000; i++) {
    Collector c;
    c.user_key = "absent" + std::to_string(i);
    ASSERT_OK(reader->Get(ReadOptions(), IKey(c.user_key, kMaxSequenceNumber, kValueTypeForSeek),
                          &c, &Collector::Handle));
    EXPECT_FALSE(c.found);
  }
  EXPECT_GT(T(BLOOM_FILTER_USEFUL), 950u);
  EXPECT_EQ(1000u, T(BLOOM_FILTER_USEFUL) + T(BLOOM_FILTER_FULL_POSITIVE) - 100);
  EXPECT_EQ(100u, T(BLOOM_FILTER_FULL_TRUE_POSITIVE));
}

TEST_F(TableCacheBlocksTest, NoCacheReadsAndFactoryDefaults) {
  // The factory gives a missing cache an 8 MiB LRU cache, unless no_block_cache.
  {
    std::unique_ptr<TableFactory> f(NewBlockBasedTableFactory());
    const auto& t = static_cast<BlockBasedTableFactory*>(f.get())->table_options();
    ASSERT_NE(nullptr, t.block_cache);
    EXPECT_EQ(size_t{8} << 20, t.block_cache->GetCapacity());
    EXPECT_STREQ("LRUCache", t.block_cache->Name());
    std::unique_ptr<TableFactory> g(NewBlockBasedTableFactory());
    EXPECT_NE(t.block_cache,
              static_cast<BlockBasedTableFactory*>(g.get())->table_options().block_cache);
  }
  {
    BlockBasedTableOptions o;
    o.no_block_cache = true;
    o.block_cache = NewLRUCache(1000);
    std::unique_ptr<TableFactory> f(NewBlockBasedTableFactory(o));
    EXPECT_EQ(nullptr, static_cast<BlockBasedTableFactory*>(f.get())->table_options().block_cache);
  }
  {
    BlockBasedTableOptions o;
    o.block_cache = NewLRUCache(1000);
    std::unique_ptr<TableFactory> f(NewBlockBasedTableFactory(o));
    EXPECT_EQ(o.block_cache,
              static_cast<BlockBasedTableFactory*>(f.get())->table_options().block_cache);
  }

  // A reader told no_block_cache ignores a cache it is given.
  auto cache = NewLRUCache(1 << 20);
  topts_.block_cache = cache;
  topts_.no_block_cache = true;
  topts_.cache_index_and_filter_blocks = true;
  Build("000001.sst", "", true);
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(Open(&reader, "000001.sst", true));
  EXPECT_EQ(nullptr, reader->block_cache());
  for (int i = 0; i < kKeys; i += 5) EXPECT_EQ(ValueFor(i), Get(reader.get(), i));
  ExpectFullScan(reader.get());
  EXPECT_EQ(0u, cache->GetUsage());
  EXPECT_EQ(0u, T(BLOCK_CACHE_MISS) + T(BLOCK_CACHE_HIT) + T(BLOCK_CACHE_ADD));
}

// Random keys, versions and operations under several cache setups, compared with the model.
TEST_F(TableCacheBlocksTest, RandomizedAgainstModel) {
  const uint64_t seed = TestSeed();
  Random rnd(seed);
  struct Setup {
    size_t capacity;
    bool strict;
    bool cache_meta;
    bool pin;
  };
  const Setup setups[] = {{64, false, false, false},
                          {64, false, true, false},
                          {4096, false, true, true},
                          {2048, true, true, false},
                          {1 << 20, false, true, false}};
  for (const Setup& setup : setups) {
    SCOPED_TRACE(setup.capacity);
    auto cache = NewLRUCache(setup.capacity, 0, setup.strict);
    topts_.block_cache = cache;
    topts_.cache_index_and_filter_blocks = setup.cache_meta;
    topts_.pin_l0_filter_and_index_blocks_in_cache = setup.pin;
    Build("000003.sst", "r", /*bloom=*/true);
    std::unique_ptr<TableReader> reader;
    ASSERT_OK(Open(&reader, "000003.sst", true, /*is_level0=*/true));
    std::vector<std::unique_ptr<InternalIterator>> iters;
    std::vector<Model::const_iterator> pos;
    for (int k = 0; k < 4; k++) {
      iters.emplace_back(reader->NewIterator(ReadOptions()));
      pos.push_back(model_.end());
    }
    for (int step = 0; step < 2000; step++) {
      const int which = static_cast<int>(rnd.Uniform(4));
      InternalIterator* it = iters[which].get();
      auto& p = pos[which];
      switch (rnd.Uniform(5)) {
        case 0: {
          const std::string target =
              IKey(UserKey(static_cast<int>(rnd.Uniform(kKeys + 10))), 200, kValueTypeForSeek);
          it->Seek(target);
          p = model_.lower_bound(target);
          break;
        }
        case 1:
          if (p != model_.end()) {
            it->Next();
            ++p;
          }
          break;
        case 2:
          if (p != model_.end()) {
            it->Prev();
            p = p == model_.begin() ? model_.end() : std::prev(p);
          }
          break;
        default: {
          const int i = static_cast<int>(rnd.Uniform(kKeys + 10));
          ReadOptions ro;
          ro.fill_cache = !rnd.OneIn(4);
          ASSERT_EQ(i < kKeys ? ValueFor(i, "r") : "<absent>", Get(reader.get(), i, ro))
              << "seed " << seed;
          break;
        }
      }
      ASSERT_EQ(p != model_.end(), it->Valid()) << "seed " << seed << " step " << step;
      if (p != model_.end()) {
        ASSERT_EQ(p->first, it->key().ToString());
        ASSERT_EQ(p->second, it->value().ToString());
      }
      ASSERT_OK(it->status());
    }
    iters.clear();
    reader.reset();
    EXPECT_EQ(0u, cache->GetPinnedUsage());
    if (setup.strict) {
      EXPECT_LE(cache->GetUsage(), cache->GetCapacity());
    }
  }
}

}  // namespace
}  // namespace shale

namespace shale {
namespace {

// A cache that counts the reference operations its users make, each of which takes a
// shard's lock in the LRU cache it forwards to.
class CountingCache : public Cache {
 public:
  explicit CountingCache(std::shared_ptr<Cache> base) : base_(std::move(base)) {}
  const char* Name() const override { return "CountingCache"; }
  Status Insert(const Slice& key, void* value, size_t charge, DeleterFn deleter, Handle** handle,
                Priority priority) override {
    return base_->Insert(key, value, charge, deleter, handle, priority);
  }
  Handle* Lookup(const Slice& key, Statistics* stats) override {
    lookups++;
    return base_->Lookup(key, stats);
  }
  bool Ref(Handle* handle) override {
    refs++;
    return base_->Ref(handle);
  }
  bool Release(Handle* handle, bool erase_if_last_ref) override {
    releases++;
    return base_->Release(handle, erase_if_last_ref);
  }
  void* Value(Handle* handle) override { return base_->Value(handle); }
  void Erase(const Slice& key) override { base_->Erase(key); }
  uint64_t NewId() override { return base_->NewId(); }
  void SetCapacity(size_t capacity) override { base_->SetCapacity(capacity); }
  void SetStrictCapacityLimit(bool strict) override { base_->SetStrictCapacityLimit(strict); }
  bool HasStrictCapacityLimit() const override { return base_->HasStrictCapacityLimit(); }
  size_t GetCapacity() const override { return base_->GetCapacity(); }
  size_t GetUsage() const override { return base_->GetUsage(); }
  size_t GetUsage(Handle* handle) const override { return base_->GetUsage(handle); }
  size_t GetPinnedUsage() const override { return base_->GetPinnedUsage(); }
  size_t GetCharge(Handle* handle) const override { return base_->GetCharge(handle); }
  DeleterFn GetDeleter(Handle* handle) const override { return base_->GetDeleter(handle); }
  void EraseUnRefEntries() override { base_->EraseUnRefEntries(); }

  int lookups = 0;
  int refs = 0;
  int releases = 0;

 private:
  std::shared_ptr<Cache> base_;
};

// Pins every entry of the looked-up user key, up to `want` of them, asking for the next
// entry after each (as a Get gathering merge operands does).
struct PinningGatherer {
  std::string user_key;
  size_t want = 1;
  std::vector<std::unique_ptr<PinnableSlice>> values;
  static bool Handle(void* arg, const Slice& ikey, const Slice& value, Cleanable* pinner) {
    auto* g = static_cast<PinningGatherer*>(arg);
    if (ExtractUserKey(ikey) != Slice(g->user_key)) return false;
    g->values.push_back(std::make_unique<PinnableSlice>());
    g->values.back()->PinSlice(value, pinner);
    return g->values.size() < g->want;
  }
};

// The table of TableCacheBlocksTest, read through a CountingCache.
class TableValuePinTest : public TableCacheBlocksTest {
 protected:
  void SetUp() override {
    counting_ = std::make_shared<CountingCache>(NewLRUCache(1 << 20, 0));
    topts_.block_cache = counting_;
    Build();
    ASSERT_OK(Open(&reader_));
  }
  std::shared_ptr<CountingCache> counting_;
  std::unique_ptr<TableReader> reader_;
};

// A pinning handler's value_pinner borrows the lookup's own reference to the block: a Get
// whose handler keeps the value, or sees an entry and does not keep it, takes no further
// reference (each would be a lock on the cache shard); the kept value holds the block
// until it is released, and nothing stays pinned after.
TEST_F(TableValuePinTest, PinnedGetTakesNoReferenceBeyondItsLookup) {
  CountingCache* counting = counting_.get();
  TableReader* reader = reader_.get();
  const auto pinned_get = [&](const std::string& user_key, PinnableSlice* value) {
    PinningCollector c;
    c.user_key = user_key;
    ASSERT_OK(reader->Get(ReadOptions(), IKey(user_key, kMaxSequenceNumber, kValueTypeForSeek), &c,
                          &PinningCollector::Handle));
    *value = std::move(c.value);
  };

  for (bool cached : {false, true}) {  // the block read from the file, then from the cache
    SCOPED_TRACE(cached);
    counting->refs = counting->releases = 0;
    PinnableSlice value;
    pinned_get(UserKey(42), &value);
    ASSERT_TRUE(value.IsPinned());
    EXPECT_EQ(ValueFor(42), value.ToString());
    EXPECT_EQ(0, counting->refs);
    EXPECT_EQ(0, counting->releases);  // the lookup's reference went to the value
    EXPECT_GT(counting->GetPinnedUsage(), 0u);
    value.Reset();
    EXPECT_EQ(1, counting->releases);
    EXPECT_EQ(0u, counting->GetPinnedUsage());
  }

  // A key between two stored ones: the handler sees the next entry and keeps nothing.
  counting->refs = counting->releases = 0;
  PinnableSlice none;
  pinned_get(UserKey(42) + "+", &none);
  EXPECT_FALSE(none.IsPinned());
  EXPECT_EQ(0, counting->refs);
  EXPECT_EQ(1, counting->releases);
  EXPECT_EQ(0u, counting->GetPinnedUsage());
}

// A handler that keeps a value and asks for the next entry needs the block again: the
// lookup then takes a reference of its own, and every value kept stays valid.
TEST_F(TableValuePinTest, PinnedValuesOutliveALookupThatReadsOn) {
  CountingCache* counting = counting_.get();
  TableReader* reader = reader_.get();
  PinningGatherer g;
  g.user_key = UserKey(42);
  g.want = 2;  // there is one entry: the handler asks on, and the next entry ends it
  ASSERT_OK(reader->Get(ReadOptions(), IKey(g.user_key, kMaxSequenceNumber, kValueTypeForSeek), &g,
                        &PinningGatherer::Handle));
  ASSERT_EQ(1u, g.values.size());
  EXPECT_EQ(1, counting->refs);
  // Other reads evict nothing they hold: the value is intact.
  for (int i = 0; i < kKeys; i += 7) EXPECT_EQ(ValueFor(i), Get(reader, i));
  EXPECT_EQ(ValueFor(42), g.values[0]->ToString());
  g.values.clear();
  EXPECT_EQ(0u, counting->GetPinnedUsage());

  // A batch of neighbours in one block, each value kept: the block is fetched once, the
  // values are all right, and once released nothing stays pinned.
  std::vector<PinningCollector> collectors(6);
  std::vector<std::string> ikeys;
  std::vector<TableReader::BatchKey> keys(collectors.size());
  for (size_t i = 0; i < collectors.size(); i++) {
    collectors[i].user_key = UserKey(static_cast<int>(100 + i));
    ikeys.push_back(IKey(collectors[i].user_key, kMaxSequenceNumber, kValueTypeForSeek));
  }
  for (size_t i = 0; i < keys.size(); i++) {
    keys[i].ikey = ikeys[i];
    keys[i].arg = &collectors[i];
  }
  const int lookups = counting->lookups;
  reader->MultiGet(ReadOptions(), keys.data(), keys.size(), &PinningCollector::Handle);
  EXPECT_LE(counting->lookups - lookups, 2);  // the keys span at most two blocks
  for (size_t i = 0; i < keys.size(); i++) {
    ASSERT_OK(keys[i].status);
    EXPECT_EQ(ValueFor(static_cast<int>(100 + i)), collectors[i].value.ToString());
  }
  collectors.clear();
  EXPECT_EQ(0u, counting->GetPinnedUsage());
}

}  // namespace
}  // namespace shale
