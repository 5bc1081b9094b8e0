// TableBuilder + TableReader: tables written to real files and read back under every
// available compression and every checksum type, small and default block sizes, with and
// without a Bloom filter; iteration both ways against a model; the Get contract; damaged
// bytes anywhere in the file; tables of 0 and 1 keys.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "shale/filter_policy.h"
#include "shale/options.h"
#include "table/block.h"
#include "table/compression.h"
#include "table/format.h"
#include "table/table_builder.h"
#include "table/table_factory.h"
#include "table/table_reader.h"
#include "tests/testutil/datadriven.h"
#include "tests/testutil/test_util.h"
#include "util/dbformat.h"

namespace shale {
namespace {

// Internal keys ordered by the internal key comparator.
struct IcmpLess {
  const InternalKeyComparator* icmp;
  bool operator()(const std::string& a, const std::string& b) const {
    return icmp->Compare(a, b) < 0;
  }
};
using Model = std::map<std::string, std::string, IcmpLess>;

std::string UserKey(int i) {
  char buf[32];
  snprintf(buf, sizeof(buf), "user%08d", i);
  return buf;
}

// Builds a table from the model into path (a real file) and opens it.
class TableHarness {
 public:
  explicit TableHarness(const std::string& path) : path_(path) {}

  TableBuilderOptions builder_options;
  TableReaderOptions reader_options;

  Status Build(const Model& model, TableProperties* props = nullptr) {
    std::unique_ptr<WritableFile> file;
    Status s = Env::Default()->NewWritableFile(path_, &file, EnvOptions());
    if (!s.ok()) return s;
    builder_options.file_name = path_;
    TableBuilder builder(builder_options, file.get());
    for (const auto& [k, v] : model) builder.Add(k, v);
    s = builder.Finish();
    if (!s.ok()) return s;
    EXPECT_EQ(builder.NumEntries(), model.size());
    if (props != nullptr) *props = builder.GetTableProperties();
    s = file->Close();
    if (!s.ok()) return s;
    uint64_t size = 0;
    s = Env::Default()->GetFileSize(path_, &size);
    EXPECT_EQ(size, builder.FileSize());
    return s;
  }

  Status Open(std::unique_ptr<TableReader>* reader) {
    uint64_t size = 0;
    Status s = Env::Default()->GetFileSize(path_, &size);
    if (!s.ok()) return s;
    std::unique_ptr<RandomAccessFile> file;
    s = Env::Default()->NewRandomAccessFile(path_, &file, EnvOptions());
    if (!s.ok()) return s;
    reader_options.file_name = path_;
    return TableReader::Open(reader_options, std::move(file), size, reader);
  }

  // Opens a copy of the file's bytes held in memory (fast for many damaged variants).
  Status OpenBytes(const std::string& bytes, std::unique_ptr<TableReader>* reader) {
    reader_options.file_name = path_;
    return TableReader::Open(reader_options, std::make_unique<StringSource>(bytes), bytes.size(),
                             reader);
  }

 private:
  std::string path_;
};

// Several versions of some keys, deletions and merges, values of varied sizes.
Model RandomModel(const InternalKeyComparator* icmp, Random* rnd, int users) {
  Model m(IcmpLess{icmp});
  for (int i = 0; i < users; i++) {
    const int versions = rnd->OneIn(4) ? 1 + static_cast<int>(rnd->Uniform(4)) : 1;
    for (int v = 0; v < versions; v++) {
      ValueType t = kTypeValue;
      if (rnd->OneIn(8)) t = kTypeDeletion;
      if (rnd->OneIn(16)) t = kTypeMerge;
      if (rnd->OneIn(16)) t = kTypeSingleDeletion;
      const SequenceNumber seq = 1 + rnd->Uniform(1000000);
      m[IKey(UserKey(i * 2), seq, t)] =
          t == kTypeDeletion || t == kTypeSingleDeletion ? "" : RandomString(rnd, rnd->Skewed(9));
    }
  }
  return m;
}

void ExpectScansMatch(TableReader* reader, const Model& model, Random* rnd) {
  std::unique_ptr<InternalIterator> it(reader->NewIterator(ReadOptions()));
  auto mi = model.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++mi) {
    ASSERT_NE(mi, model.end());
    ASSERT_EQ(it->key().ToString(true), Slice(mi->first).ToString(true));
    ASSERT_EQ(it->value().ToString(), mi->second);
  }
  ASSERT_OK(it->status());
  ASSERT_EQ(mi, model.end());

  auto ri = model.rbegin();
  for (it->SeekToLast(); it->Valid(); it->Prev(), ++ri) {
    ASSERT_NE(ri, model.rend());
    ASSERT_EQ(it->key().ToString(true), Slice(ri->first).ToString(true));
    ASSERT_EQ(it->value().ToString(), ri->second);
  }
  ASSERT_OK(it->status());
  ASSERT_EQ(ri, model.rend());

  // Seeks to random user keys (present and absent) at random sequences, then a walk.
  const int users = model.empty() ? 1 : static_cast<int>(model.size());
  for (int trial = 0; trial < 300; trial++) {
    const std::string target = IKey(UserKey(static_cast<int>(rnd->Uniform(2 * users + 4)) - 2),
                                    rnd->Uniform(1100000), kValueTypeForSeek);
    it->Seek(target);
    auto pos = model.lower_bound(target);
    ASSERT_EQ(it->Valid(), pos != model.end());
    if (pos != model.end()) {
      ASSERT_EQ(it->key().ToString(), pos->first);
    }

    it->SeekForPrev(target);
    auto up = model.upper_bound(target);
    ASSERT_EQ(it->Valid(), up != model.begin());
    if (up == model.begin()) continue;
    pos = std::prev(up);
    ASSERT_EQ(it->key().ToString(), pos->first);
    for (int step = 0; step < 8 && it->Valid(); step++) {
      if (rnd->OneIn(2)) {
        it->Next();
        ++pos;
      } else {
        it->Prev();
        pos = pos == model.begin() ? model.end() : std::prev(pos);
      }
      ASSERT_EQ(it->Valid(), pos != model.end());
      if (pos == model.end()) break;
      ASSERT_EQ(it->key().ToString(), pos->first);
      ASSERT_EQ(it->value().ToString(), pos->second);
    }
  }
  ASSERT_OK(it->status());
}

// Collects the entries Get hands over for one user key (stopping at another user key).
struct GetCollector {
  std::string user_key;
  std::vector<std::pair<std::string, std::string>> entries;
  int calls = 0;
  static bool Handle(void* arg, const Slice& ikey, const Slice& value) {
    auto* c = static_cast<GetCollector*>(arg);
    c->calls++;
    if (ExtractUserKey(ikey) != Slice(c->user_key)) return false;
    c->entries.emplace_back(ikey.ToString(), value.ToString());
    return true;
  }
};

void ExpectGetsMatch(TableReader* reader, const Model& model, Random* rnd, int users) {
  for (int trial = 0; trial < 300; trial++) {
    GetCollector c;
    c.user_key = UserKey(static_cast<int>(rnd->Uniform(2 * users + 2)));
    const SequenceNumber seq = rnd->OneIn(2) ? kMaxSequenceNumber : rnd->Uniform(1100000);
    const std::string target = IKey(c.user_key, seq, kValueTypeForSeek);
    ASSERT_OK(reader->Get(ReadOptions(), target, &c, &GetCollector::Handle));
    std::vector<std::pair<std::string, std::string>> expect;
    for (auto it = model.lower_bound(target);
         it != model.end() && ExtractUserKey(it->first) == Slice(c.user_key); ++it) {
      expect.emplace_back(it->first, it->second);
    }
    ASSERT_EQ(c.entries, expect) << c.user_key << " @" << seq;
  }
}

// compression, checksum, small blocks, Bloom filter
using Param = std::tuple<CompressionType, ChecksumType, bool, bool>;

std::vector<CompressionType> SupportedCompressions() {
  std::vector<CompressionType> r;
  for (CompressionType t : {kNoCompression, kSnappyCompression, kLZ4Compression, kZSTD}) {
    if (CompressionTypeSupported(t)) r.push_back(t);
  }
  return r;
}

class TableTest : public ::testing::TestWithParam<Param> {
 protected:
  TableTest() : icmp_(BytewiseComparator()), harness_(dir_.File("000007.sst")) {
    auto [compression, checksum, small_blocks, bloom] = GetParam();
    BlockBasedTableOptions topts;
    topts.checksum = checksum;
    if (small_blocks) {
      topts.block_size = 256;
      topts.block_restart_interval = 4;
    }
    if (bloom) topts.filter_policy.reset(NewBloomFilterPolicy(10));
    topts.verify_compression = true;
    harness_.builder_options.icmp = &icmp_;
    harness_.builder_options.table_options = topts;
    harness_.builder_options.compression = compression;
    harness_.reader_options.icmp = &icmp_;
    harness_.reader_options.table_options = topts;
  }

  InternalKeyComparator icmp_;
  TempDirectory dir_{"table_test"};
  TableHarness harness_;
};

// The same fixture over fewer combinations, for tests the other parameters do not affect.
class TableFilterTest : public TableTest {};
class TableDamageTest : public TableTest {};

TEST_P(TableTest, RoundTrip) {
  auto [compression, checksum, small_blocks, bloom] = GetParam();
  Random rnd(TestSeed());
  const int users = 600;
  Model model = RandomModel(&icmp_, &rnd, users);
  TableProperties built;
  ASSERT_OK(harness_.Build(model, &built));
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(harness_.Open(&reader));

  const TableProperties& p = reader->GetTableProperties();
  EXPECT_EQ(p.num_entries, model.size());
  EXPECT_EQ(p.num_entries, built.num_entries);
  EXPECT_EQ(p.data_size, built.data_size);
  EXPECT_EQ(p.index_size, built.index_size);
  EXPECT_EQ(p.filter_size, built.filter_size);
  EXPECT_EQ(p.num_data_blocks, built.num_data_blocks);
  uint64_t deletions = 0, merges = 0, raw_key = 0, raw_value = 0;
  for (const auto& [k, v] : model) {
    const ValueType t = ExtractValueType(k);
    deletions += t == kTypeDeletion || t == kTypeSingleDeletion;
    merges += t == kTypeMerge;
    raw_key += k.size();
    raw_value += v.size();
  }
  EXPECT_EQ(p.num_deletions, deletions);
  EXPECT_EQ(p.num_merge_operands, merges);
  EXPECT_EQ(p.raw_key_size, raw_key);
  EXPECT_EQ(p.raw_value_size, raw_value);
  EXPECT_EQ(p.comparator_name,
            "leveldb.BytewiseComparator" == std::string(BytewiseComparator()->Name())
                ? "leveldb.BytewiseComparator"
                : BytewiseComparator()->Name());
  EXPECT_EQ(p.compression_name, CompressionTypeToString(compression));
  EXPECT_EQ(p.filter_policy_name,
            bloom ? harness_.builder_options.table_options.filter_policy->Name() : "");
  EXPECT_EQ(p.filter_size > 0, bloom);
  EXPECT_GT(p.index_size, 0u);
  if (small_blocks) {
    EXPECT_GT(p.num_data_blocks, 20u);
  }
  if (compression != kNoCompression) {
    // Random printable values compress somewhat; the data must have shrunk.
    EXPECT_LT(p.data_size, p.raw_key_size + p.raw_value_size);
  }

  ExpectScansMatch(reader.get(), model, &rnd);
  ExpectGetsMatch(reader.get(), model, &rnd, users);

  // ApproximateOffsetOf grows with the key and ends at the data size.
  uint64_t prev = 0;
  for (int i = 0; i <= 2 * users; i += 50) {
    const uint64_t off = reader->ApproximateOffsetOf(IKey(UserKey(i), kMaxSequenceNumber));
    EXPECT_GE(off, prev);
    prev = off;
  }
  EXPECT_EQ(reader->ApproximateOffsetOf(IKey("zzz", 0)), p.data_size);
  EXPECT_EQ(reader->ApproximateOffsetOf(IKey("", kMaxSequenceNumber)), 0u);
}

TEST_P(TableFilterTest, FilterSkipsAbsentKeys) {
  auto [compression, checksum, small_blocks, bloom] = GetParam();
  Model model(IcmpLess{&icmp_});
  for (int i = 0; i < 1000; i++) model[IKey(UserKey(2 * i), 100)] = "v";
  ASSERT_OK(harness_.Build(model));
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(harness_.Open(&reader));
  int handled = 0;
  for (int i = 0; i < 1000; i++) {
    GetCollector c;
    c.user_key = UserKey(2 * i + 1);  // absent, but inside the key range
    ASSERT_OK(reader->Get(ReadOptions(), IKey(c.user_key, kMaxSequenceNumber, kValueTypeForSeek),
                          &c, &GetCollector::Handle));
    EXPECT_TRUE(c.entries.empty());
    handled += c.calls;
    GetCollector present;
    present.user_key = UserKey(2 * i);
    ASSERT_OK(reader->Get(ReadOptions(),
                          IKey(present.user_key, kMaxSequenceNumber, kValueTypeForSeek), &present,
                          &GetCollector::Handle));
    ASSERT_EQ(present.entries.size(), 1u);  // never a false negative
  }
  if (bloom) {
    EXPECT_LT(handled, 50);  // ~1% false positives at 10 bits per key
  } else {
    EXPECT_EQ(handled, 999);  // all but the key past the last one reach a block
  }
}

// Every byte of the file, damaged in turn: Open fails with Corruption, or a full scan and
// Gets report Corruption. A damaged table never answers OK with wrong data.
TEST_P(TableDamageTest, DamagedByteIsNeverAWrongAnswer) {
  Random rnd(TestSeed());
  Model model = RandomModel(&icmp_, &rnd, 20);
  ASSERT_OK(harness_.Build(model));
  std::string good;
  ASSERT_OK(ReadFileToString(Env::Default(), dir_.File("000007.sst"), &good));

  for (size_t i = 0; i < good.size(); i++) {
    std::string bad = good;
    bad[i] ^= static_cast<char>(1 << rnd.Uniform(8));
    std::unique_ptr<TableReader> reader;
    Status s = harness_.OpenBytes(bad, &reader);
    if (!s.ok()) {
      ASSERT_TRUE(s.IsCorruption()) << "byte " << i << ": " << s.ToString();
      continue;
    }
    std::unique_ptr<InternalIterator> it(reader->NewIterator(ReadOptions()));
    auto mi = model.begin();
    bool wrong = false;
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++mi) {
      if (mi == model.end() || it->key() != Slice(mi->first) || it->value() != Slice(mi->second)) {
        wrong = true;
        break;
      }
    }
    if (it->status().ok()) {
      ASSERT_FALSE(wrong) << "byte " << i << " gave a wrong entry with OK status";
      ASSERT_EQ(mi, model.end()) << "byte " << i << " lost entries with OK status";
      // Every data block was read and verified, so the damage must have been seen.
      FAIL() << "byte " << i << " went unnoticed";
    }
    ASSERT_TRUE(it->status().IsCorruption()) << it->status().ToString();
    ASSERT_FALSE(it->Valid());
    // Gets touching the damaged block fail too, or answer from undamaged blocks.
    for (auto mit = model.begin(); mit != model.end(); std::advance(mit, 1 + rnd.Uniform(6))) {
      const std::string& k = mit->first;
      const std::string& v = mit->second;
      GetCollector c;
      c.user_key = ExtractUserKey(k).ToString();
      Status gs = reader->Get(ReadOptions(), k, &c, &GetCollector::Handle);
      if (gs.ok()) {
        ASSERT_FALSE(c.entries.empty()) << "byte " << i;
        ASSERT_EQ(c.entries[0].first, k) << "byte " << i;
        ASSERT_EQ(c.entries[0].second, v) << "byte " << i;
      } else {
        ASSERT_TRUE(gs.IsCorruption()) << gs.ToString();
      }
      if (std::distance(mit, model.end()) <= 6) break;
    }
  }
}

std::string ParamName(const ::testing::TestParamInfo<Param>& info) {
  auto [compression, checksum, small_blocks, bloom] = info.param;
  static const char* kChecksumNames[] = {"NoChecksum", "CRC32c", "xxHash", "xxHash64", "XXH3"};
  return std::string(CompressionTypeToString(compression)) + "_" +
         kChecksumNames[static_cast<int>(checksum)] + (small_blocks ? "_Small" : "_Default") +
         (bloom ? "_Bloom" : "_NoFilter");
}

INSTANTIATE_TEST_SUITE_P(All, TableTest,
                         ::testing::Combine(::testing::ValuesIn(SupportedCompressions()),
                                            ::testing::Values(kNoChecksum, kCRC32c, kxxHash,
                                                              kxxHash64, kXXH3),
                                            ::testing::Bool(), ::testing::Bool()),
                         ParamName);
INSTANTIATE_TEST_SUITE_P(All, TableFilterTest,
                         ::testing::Combine(::testing::ValuesIn(SupportedCompressions()),
                                            ::testing::Values(kXXH3), ::testing::Bool(),
                                            ::testing::Bool()),
                         ParamName);
// Damage needs a checksum to be detected; small blocks and a filter put every kind of
// block in a small file.
INSTANTIATE_TEST_SUITE_P(All, TableDamageTest,
                         ::testing::Combine(::testing::ValuesIn(SupportedCompressions()),
                                            ::testing::Values(kCRC32c, kxxHash, kxxHash64, kXXH3),
                                            ::testing::Values(true), ::testing::Values(true)),
                         ParamName);

class TableEdgeTest : public ::testing::Test {
 protected:
  TableEdgeTest() : icmp_(BytewiseComparator()), harness_(dir_.File("000009.sst")) {
    harness_.builder_options.icmp = &icmp_;
    harness_.reader_options.icmp = &icmp_;
  }
  InternalKeyComparator icmp_;
  TempDirectory dir_{"table_edge_test"};
  TableHarness harness_;
};

TEST_F(TableEdgeTest, EmptyTable) {
  for (bool bloom : {false, true}) {
    if (bloom) {
      harness_.builder_options.table_options.filter_policy.reset(NewBloomFilterPolicy(10));
      harness_.reader_options.table_options = harness_.builder_options.table_options;
    }
    Model model(IcmpLess{&icmp_});
    ASSERT_OK(harness_.Build(model));
    std::unique_ptr<TableReader> reader;
    ASSERT_OK(harness_.Open(&reader));
    EXPECT_EQ(reader->GetTableProperties().num_entries, 0u);
    EXPECT_EQ(reader->GetTableProperties().num_data_blocks, 0u);
    std::unique_ptr<InternalIterator> it(reader->NewIterator(ReadOptions()));
    it->SeekToFirst();
    EXPECT_FALSE(it->Valid());
    it->SeekToLast();
    EXPECT_FALSE(it->Valid());
    it->Seek(IKey("a", 1));
    EXPECT_FALSE(it->Valid());
    it->SeekForPrev(IKey("a", 1));
    EXPECT_FALSE(it->Valid());
    EXPECT_OK(it->status());
    GetCollector c;
    c.user_key = "a";
    ASSERT_OK(reader->Get(ReadOptions(), IKey("a", 5), &c, &GetCollector::Handle));
    EXPECT_EQ(c.calls, 0);
    EXPECT_EQ(reader->ApproximateOffsetOf(IKey("a", 5)), 0u);
  }
}

TEST_F(TableEdgeTest, OneKeyTable) {
  Model model(IcmpLess{&icmp_});
  model[IKey("only", 7)] = "value";
  ASSERT_OK(harness_.Build(model));
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(harness_.Open(&reader));
  Random rnd(TestSeed());
  ExpectScansMatch(reader.get(), model, &rnd);
  std::unique_ptr<InternalIterator> it(reader->NewIterator(ReadOptions()));
  it->Seek(IKey("only", 8));
  ASSERT_TRUE(it->Valid());
  it->Seek(IKey("only", 6));
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev(IKey("a", 1));
  EXPECT_FALSE(it->Valid());
  it->SeekForPrev(IKey("z", 1));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "value");

  GetCollector c;
  c.user_key = "only";
  ASSERT_OK(reader->Get(ReadOptions(), IKey("only", kMaxSequenceNumber, kValueTypeForSeek), &c,
                        &GetCollector::Handle));
  ASSERT_EQ(c.entries.size(), 1u);
  EXPECT_EQ(c.entries[0].second, "value");
  GetCollector older;
  older.user_key = "only";
  ASSERT_OK(reader->Get(ReadOptions(), IKey("only", 6, kValueTypeForSeek), &older,
                        &GetCollector::Handle));
  EXPECT_TRUE(older.entries.empty());
}

TEST_F(TableEdgeTest, HandlerStopsTheLookup) {
  Model model(IcmpLess{&icmp_});
  for (SequenceNumber s = 1; s <= 50; s++) model[IKey("k", s)] = std::string(100, 'a' + s % 26);
  harness_.builder_options.table_options.block_size = 128;
  ASSERT_OK(harness_.Build(model));
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(harness_.Open(&reader));
  // Versions of one user key span many blocks: Get follows them across block ends.
  GetCollector all;
  all.user_key = "k";
  ASSERT_OK(
      reader->Get(ReadOptions(), IKey("k", 40, kValueTypeForSeek), &all, &GetCollector::Handle));
  EXPECT_EQ(all.entries.size(), 40u);
  int calls = 0;
  auto first_only = [](void* arg, const Slice&, const Slice&) {
    ++*static_cast<int*>(arg);
    return false;
  };
  ASSERT_OK(reader->Get(ReadOptions(), IKey("k", 40, kValueTypeForSeek), &calls, first_only));
  EXPECT_EQ(calls, 1);
}

TEST_F(TableEdgeTest, OutOfOrderAddFails) {
  std::unique_ptr<WritableFile> file;
  ASSERT_OK(Env::Default()->NewWritableFile(dir_.File("bad.sst"), &file, EnvOptions()));
  TableBuilder builder(harness_.builder_options, file.get());
  builder.Add(IKey("b", 5), "v");
  ASSERT_OK(builder.status());
  builder.Add(IKey("a", 5), "v");
  EXPECT_TRUE(builder.status().IsInvalidArgument());
  builder.Add(IKey("c", 5), "v");  // ignored after the failure
  EXPECT_EQ(builder.NumEntries(), 1u);
  EXPECT_TRUE(builder.Finish().IsInvalidArgument());
}

TEST_F(TableEdgeTest, AbandonWritesNothingMore) {
  std::unique_ptr<WritableFile> file;
  ASSERT_OK(Env::Default()->NewWritableFile(dir_.File("abandoned.sst"), &file, EnvOptions()));
  TableBuilder builder(harness_.builder_options, file.get());
  builder.Add(IKey("a", 1), "v");
  builder.Abandon();
  EXPECT_EQ(builder.FileSize(), 0u);
}

TEST_F(TableEdgeTest, UnsupportedCompressionFailsTheBuilder) {
  std::unique_ptr<WritableFile> file;
  ASSERT_OK(Env::Default()->NewWritableFile(dir_.File("zlib.sst"), &file, EnvOptions()));
  harness_.builder_options.compression = kZlibCompression;
  TableBuilder builder(harness_.builder_options, file.get());
  EXPECT_TRUE(builder.status().IsNotSupported());
  builder.Abandon();
}

TEST_F(TableEdgeTest, ComparatorMismatchIsInvalidArgument) {
  Model model(IcmpLess{&icmp_});
  model[IKey("a", 1)] = "v";
  ASSERT_OK(harness_.Build(model));
  InternalKeyComparator reverse(ReverseBytewiseComparator());
  harness_.reader_options.icmp = &reverse;
  std::unique_ptr<TableReader> reader;
  Status s = harness_.Open(&reader);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
}

TEST_F(TableEdgeTest, IncompressibleBlocksStoredPlain) {
  if (!CompressionTypeSupported(kSnappyCompression)) GTEST_SKIP();
  harness_.builder_options.compression = kSnappyCompression;
  Random rnd(TestSeed());
  Model model(IcmpLess{&icmp_});
  for (int i = 0; i < 200; i++) model[IKey(UserKey(i), 1)] = RandomBinaryString(&rnd, 200);
  TableProperties props;
  ASSERT_OK(harness_.Build(model, &props));
  std::string bytes;
  ASSERT_OK(ReadFileToString(Env::Default(), dir_.File("000009.sst"), &bytes));
  // Follow footer -> index -> first data block; its trailer must say "not compressed":
  // random bytes do not shrink by 1/8.
  Footer footer;
  ASSERT_OK(
      footer.DecodeFrom(Slice(bytes).ToStringView().substr(bytes.size() - Footer::kEncodedLength)));
  StringSource src(bytes);
  BlockReadSource source;
  source.file = &src;
  source.file_size = bytes.size();
  source.checksum_type = footer.checksum_type();
  BlockContents index_contents;
  ASSERT_OK(ReadBlock(source, footer.index_handle(), true, &index_contents));
  Block index(std::move(index_contents));
  std::unique_ptr<InternalIterator> index_it(index.NewIterator(&icmp_));
  index_it->SeekToFirst();
  ASSERT_TRUE(index_it->Valid());
  BlockHandle first;
  Slice hv = index_it->value();
  ASSERT_OK(first.DecodeFrom(&hv));
  ASSERT_LT(first.offset() + first.size(), bytes.size());
  EXPECT_EQ(bytes[first.offset() + first.size()], static_cast<char>(kNoCompression));
  EXPECT_GE(props.data_size, props.raw_value_size);
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(harness_.Open(&reader));
  Random rnd2(1);
  ExpectScansMatch(reader.get(), model, &rnd2);
}

TEST_F(TableEdgeTest, FlippedByteInDataBlockOnDisk) {
  Model model(IcmpLess{&icmp_});
  for (int i = 0; i < 500; i++) model[IKey(UserKey(i), 1)] = "value" + std::to_string(i);
  TableProperties props;
  ASSERT_OK(harness_.Build(model, &props));
  ASSERT_GT(props.num_data_blocks, 2u);
  ASSERT_OK(CorruptFile(dir_.File("000009.sst"), 100, 1));  // inside the first data block
  std::unique_ptr<TableReader> reader;
  ASSERT_OK(harness_.Open(&reader));  // data blocks are not read at open
  std::unique_ptr<InternalIterator> it(reader->NewIterator(ReadOptions()));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  EXPECT_NE(it->status().ToString().find("000009.sst"), std::string::npos);
  // A block further on is still readable.
  it->Seek(IKey(UserKey(400), kMaxSequenceNumber, kValueTypeForSeek));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "value400");
  GetCollector c;
  c.user_key = UserKey(0);
  EXPECT_TRUE(
      reader->Get(ReadOptions(), IKey(UserKey(0), 5), &c, &GetCollector::Handle).IsCorruption());
}

TEST_F(TableEdgeTest, FlippedByteInIndexOnDisk) {
  Model model(IcmpLess{&icmp_});
  for (int i = 0; i < 500; i++) model[IKey(UserKey(i), 1)] = "value" + std::to_string(i);
  TableProperties props;
  ASSERT_OK(harness_.Build(model, &props));
  // The index block follows the data blocks (no filter here).
  ASSERT_OK(CorruptFile(dir_.File("000009.sst"), static_cast<int64_t>(props.data_size + 3), 1));
  std::unique_ptr<TableReader> reader;
  Status s = harness_.Open(&reader);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("offset " + std::to_string(props.data_size)), std::string::npos)
      << s.ToString();
}

// Without checksums damage can go unnoticed, but it must never crash or read out of
// bounds (ASan checks): every call gives OK, Corruption or NotSupported (a trailer naming
// a compression this build lacks).
TEST_F(TableEdgeTest, DamageWithoutChecksumsNeverCrashes) {
  Random rnd(TestSeed());
  harness_.builder_options.table_options.checksum = kNoChecksum;
  harness_.builder_options.table_options.block_size = 200;
  harness_.builder_options.table_options.filter_policy.reset(NewBloomFilterPolicy(10));
  harness_.reader_options.table_options = harness_.builder_options.table_options;
  auto acceptable = [](const Status& s) {
    return s.ok() || s.IsCorruption() || s.IsNotSupported();
  };
  for (CompressionType t : SupportedCompressions()) {
    harness_.builder_options.compression = t;
    Model model = RandomModel(&icmp_, &rnd, 60);
    ASSERT_OK(harness_.Build(model));
    std::string good;
    ASSERT_OK(ReadFileToString(Env::Default(), dir_.File("000009.sst"), &good));
    for (int trial = 0; trial < 300; trial++) {
      std::string bad = good;
      const int flips = 1 + static_cast<int>(rnd.Uniform(4));
      for (int f = 0; f < flips; f++) {
        // Spare the footer now and then so that damage reaches the blocks.
        const auto limit =
            static_cast<uint32_t>(rnd.OneIn(2) ? bad.size() : bad.size() - Footer::kEncodedLength);
        bad[rnd.Uniform(limit)] ^= static_cast<char>(1 + rnd.Uniform(255));
      }
      std::unique_ptr<TableReader> reader;
      Status s = harness_.OpenBytes(bad, &reader);
      // A damaged comparator name in the properties reads as another comparator.
      ASSERT_TRUE(acceptable(s) || s.IsInvalidArgument()) << s.ToString();
      if (!s.ok()) continue;
      std::unique_ptr<InternalIterator> it(reader->NewIterator(ReadOptions()));
      int steps = 0;
      for (it->SeekToFirst(); it->Valid() && steps < 10000; it->Next()) steps++;
      for (it->SeekToLast(); it->Valid() && steps < 20000; it->Prev()) steps++;
      ASSERT_TRUE(acceptable(it->status())) << it->status().ToString();
      for (int i = 0; i < 10; i++) {
        const std::string target = IKey(UserKey(static_cast<int>(rnd.Uniform(130))), 500000);
        it->Seek(target);
        if (it->Valid()) it->Prev();
        it->SeekForPrev(target);
        if (it->Valid()) it->Next();
        ASSERT_TRUE(acceptable(it->status())) << it->status().ToString();
        GetCollector c;
        c.user_key = ExtractUserKey(target).ToString();
        s = reader->Get(ReadOptions(), target, &c, &GetCollector::Handle);
        ASSERT_TRUE(acceptable(s)) << s.ToString();
        (void)reader->ApproximateOffsetOf(target);
      }
    }
  }
}

TEST(TableFactoryTest, CarriesOptions) {
  BlockBasedTableOptions topts;
  topts.block_size = 8192;
  std::unique_ptr<TableFactory> f(NewBlockBasedTableFactory(topts));
  EXPECT_STREQ(f->Name(), "BlockBasedTable");
  auto* bbt = dynamic_cast<BlockBasedTableFactory*>(f.get());
  ASSERT_NE(bbt, nullptr);
  EXPECT_EQ(bbt->table_options().block_size, 8192u);
}

TEST(TablePropertiesTest, RoundTripAndUnknownNames) {
  TableProperties p;
  p.data_size = 1;
  p.index_size = 2;
  p.filter_size = 3;
  p.raw_key_size = 4;
  p.raw_value_size = 5;
  p.num_data_blocks = 6;
  p.num_entries = 7;
  p.num_deletions = 8;
  p.num_merge_operands = 9;
  p.comparator_name = "cmp";
  p.filter_policy_name = "filter";
  p.compression_name = "ZSTD";
  const std::string enc = EncodeTableProperties(p);
  TableProperties q;
  ASSERT_OK(DecodeTableProperties(enc, nullptr, 0, &q));
  EXPECT_EQ(q.ToString(), p.ToString());
  EXPECT_EQ(q.num_merge_operands, 9u);
  EXPECT_EQ(q.comparator_name, "cmp");
  TableProperties r;
  EXPECT_TRUE(DecodeTableProperties("xy", nullptr, 0, &r).IsCorruption());
}

// A table made to mislead, with every checksum valid (table_fuzzer found it): one index
// separator has a value type no key has, so it sorts before the last key of its block and
// sent Get for that key to the next block, which answered with an older key and OK. The
// reader must refuse the table at open.
TEST(TableIndexCheckTest, IndexKeyOfUnknownTypeIsCorruption) {
  std::string bytes;
  ASSERT_OK(ReadFileToString(Env::Default(),
                             TestDataDir() + "/table/index_separator_bad_type.sst", &bytes));
  const InternalKeyComparator icmp(BytewiseComparator());
  TableReaderOptions options;
  options.icmp = &icmp;
  options.file_name = "forged.sst";
  options.table_options.block_cache.reset();
  options.table_options.no_block_cache = true;
  std::unique_ptr<TableReader> reader;
  Status s = TableReader::Open(options, std::make_unique<StringSource>(bytes), bytes.size(),
                               &reader);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("index key of unknown type"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("forged.sst"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace shale
