// SstFileWriter (table/sst_file_writer.cc): the files it writes, read back with our
// TableReader (every entry at sequence number 0, with its type and value, in the
// writer's comparator's order, under the table options given), and its refusals (keys out
// of order or repeated, a writer never opened, a file with no entries), after which no
// file is left.
#include "shale/sst_file_writer.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "shale/comparator.h"
#include "shale/options.h"
#include "shale/table.h"
#include "table/table_reader.h"
#include "tests/testutil/test_util.h"
#include "util/dbformat.h"

namespace shale {
namespace {

// (user key, sequence, type, value) of one entry of a table file.
using Entry = std::tuple<std::string, SequenceNumber, ValueType, std::string>;

class SstFileWriterTest : public testing::Test {
 protected:
  SstFileWriterTest() { options_.compression = kNoCompression; }

  std::string Path(const std::string& name) { return dir_.path() + "/" + name; }

  bool Exists(const std::string& path) { return options_.env->FileExists(path).ok(); }

  // Every entry of the table file at path, read with TableReader under options_.
  std::vector<Entry> ReadBack(const std::string& path, TableProperties* props = nullptr) {
    std::vector<Entry> entries;
    uint64_t size = 0;
    EXPECT_OK(options_.env->GetFileSize(path, &size));
    std::unique_ptr<RandomAccessFile> file;
    EXPECT_OK(options_.env->NewRandomAccessFile(path, &file, EnvOptions()));
    InternalKeyComparator icmp(options_.comparator);
    TableReaderOptions tro;
    tro.icmp = &icmp;
    tro.table_options = table_options_;
    tro.file_name = path;
    std::unique_ptr<TableReader> reader;
    Status s = TableReader::Open(tro, std::move(file), size, &reader);
    EXPECT_OK(s);
    if (!s.ok()) return entries;
    if (props != nullptr) *props = reader->GetTableProperties();
    std::unique_ptr<InternalIterator> it(reader->NewIterator(ReadOptions()));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ParsedInternalKey p;
      EXPECT_OK(ParseInternalKey(it->key(), &p));
      entries.emplace_back(p.user_key.ToString(), p.sequence, p.type, it->value().ToString());
    }
    EXPECT_OK(it->status());
    return entries;
  }

  void UseTableOptions(const BlockBasedTableOptions& t) {
    table_options_ = t;
    options_.table_factory.reset(NewBlockBasedTableFactory(t));
  }

  TempDirectory dir_{"sst_file_writer"};
  Options options_;
  BlockBasedTableOptions table_options_;
};

TEST_F(SstFileWriterTest, PutMergeDeleteReadBackAtSequenceZero) {
  const std::string path = Path("a.sst");
  SstFileWriter writer(EnvOptions(), options_);
  ASSERT_OK(writer.Open(path));
  ASSERT_OK(writer.Put("apple", "red"));
  ASSERT_OK(writer.Merge("banana", "+1"));
  ASSERT_OK(writer.Delete("cherry"));
  ASSERT_OK(writer.Put("date", ""));
  const uint64_t before_finish = writer.FileSize();
  ExternalSstFileInfo info;
  ASSERT_OK(writer.Finish(&info));

  uint64_t size = 0;
  ASSERT_OK(options_.env->GetFileSize(path, &size));
  EXPECT_EQ(info.file_path, path);
  EXPECT_EQ(info.smallest_key, "apple");
  EXPECT_EQ(info.largest_key, "date");
  EXPECT_EQ(info.sequence_number, 0u);
  EXPECT_EQ(info.num_entries, 4u);
  EXPECT_EQ(info.version, 2);
  EXPECT_EQ(info.file_size, size);
  EXPECT_EQ(writer.FileSize(), size);
  EXPECT_LT(before_finish, size);  // the index, properties and footer came at Finish

  TableProperties props;
  const std::vector<Entry> want = {{"apple", 0, kTypeValue, "red"},
                                   {"banana", 0, kTypeMerge, "+1"},
                                   {"cherry", 0, kTypeDeletion, ""},
                                   {"date", 0, kTypeValue, ""}};
  EXPECT_EQ(ReadBack(path, &props), want);
  EXPECT_EQ(props.num_entries, 4u);
  EXPECT_EQ(props.num_deletions, 1u);
  EXPECT_EQ(props.num_merge_operands, 1u);
  EXPECT_EQ(props.comparator_name, options_.comparator->Name());
}

TEST_F(SstFileWriterTest, KeyOutOfOrderFailsTheWriterAndLeavesNoFile) {
  const std::string path = Path("bad.sst");
  SstFileWriter writer(EnvOptions(), options_);
  ASSERT_OK(writer.Open(path));
  ASSERT_OK(writer.Put("b", "1"));
  Status s = writer.Put("a", "2");
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  // The writer stays failed: a later key in order is refused too.
  EXPECT_TRUE(writer.Put("c", "3").IsInvalidArgument());
  s = writer.Finish();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_FALSE(Exists(path));
}

TEST_F(SstFileWriterTest, RepeatedKeyIsRefusedWhateverItsType) {
  for (int kind = 0; kind < 3; kind++) {
    SCOPED_TRACE(kind);
    const std::string path = Path("dup" + std::to_string(kind) + ".sst");
    SstFileWriter writer(EnvOptions(), options_);
    ASSERT_OK(writer.Open(path));
    ASSERT_OK(writer.Put("k", "1"));
    Status s = kind == 0   ? writer.Put("k", "2")
               : kind == 1 ? writer.Merge("k", "2")
                           : writer.Delete("k");
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_TRUE(writer.Finish().IsInvalidArgument());
    EXPECT_FALSE(Exists(path));
  }
}

TEST_F(SstFileWriterTest, NoEntriesNoFile) {
  const std::string path = Path("empty.sst");
  SstFileWriter writer(EnvOptions(), options_);
  ASSERT_OK(writer.Open(path));
  Status s = writer.Finish();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_FALSE(Exists(path));
}

TEST_F(SstFileWriterTest, CallsBeforeOpenOrAfterFinishAreRefused) {
  SstFileWriter writer(EnvOptions(), options_);
  EXPECT_TRUE(writer.Put("a", "1").IsInvalidArgument());
  EXPECT_TRUE(writer.Merge("a", "1").IsInvalidArgument());
  EXPECT_TRUE(writer.Delete("a").IsInvalidArgument());
  EXPECT_TRUE(writer.Finish().IsInvalidArgument());

  const std::string path = Path("once.sst");
  ASSERT_OK(writer.Open(path));
  EXPECT_TRUE(writer.Open(Path("twice.sst")).IsInvalidArgument());
  ASSERT_OK(writer.Put("a", "1"));
  ASSERT_OK(writer.Finish());
  EXPECT_TRUE(writer.Put("b", "2").IsInvalidArgument());
  EXPECT_TRUE(writer.Finish().IsInvalidArgument());
  EXPECT_EQ(ReadBack(path).size(), 1u);  // the finished file is kept as written
}

TEST_F(SstFileWriterTest, AbandonedWriterLeavesNoFile) {
  const std::string path = Path("abandoned.sst");
  {
    SstFileWriter writer(EnvOptions(), options_);
    ASSERT_OK(writer.Open(path));
    ASSERT_OK(writer.Put("a", "1"));
    ASSERT_TRUE(Exists(path));
  }
  EXPECT_FALSE(Exists(path));
}

TEST_F(SstFileWriterTest, OrderIsTheOptionsComparators) {
  options_.comparator = ReverseBytewiseComparator();
  const std::string path = Path("reverse.sst");
  SstFileWriter writer(EnvOptions(), options_);
  ASSERT_OK(writer.Open(path));
  ASSERT_OK(writer.Put("c", "3"));
  ASSERT_OK(writer.Put("b", "2"));
  EXPECT_TRUE(writer.Put("d", "4").IsInvalidArgument());
  EXPECT_TRUE(writer.Finish().IsInvalidArgument());
  EXPECT_FALSE(Exists(path));

  SstFileWriter again(EnvOptions(), options_);
  ASSERT_OK(again.Open(path));
  ASSERT_OK(again.Put("c", "3"));
  ASSERT_OK(again.Put("b", "2"));
  ExternalSstFileInfo info;
  ASSERT_OK(again.Finish(&info));
  EXPECT_EQ(info.smallest_key, "c");  // smallest by the comparator
  EXPECT_EQ(info.largest_key, "b");
  const std::vector<Entry> want = {{"c", 0, kTypeValue, "3"}, {"b", 0, kTypeValue, "2"}};
  EXPECT_EQ(ReadBack(path), want);
}

TEST_F(SstFileWriterTest, TableOptionsOfTheOptionsAreUsed) {
  BlockBasedTableOptions t;
  t.block_size = 256;
  t.filter_policy.reset(NewBloomFilterPolicy(10));
  UseTableOptions(t);
  const std::string path = Path("blocks.sst");
  SstFileWriter writer(EnvOptions(), options_);
  ASSERT_OK(writer.Open(path));
  for (int i = 0; i < 200; i++) ASSERT_OK(writer.Put(Key(i), std::string(20, 'v')));
  ASSERT_OK(writer.Finish());
  TableProperties props;
  EXPECT_EQ(ReadBack(path, &props).size(), 200u);
  EXPECT_GT(props.num_data_blocks, 10u);  // 256-byte blocks, not the default 4 KiB
  EXPECT_EQ(props.filter_policy_name, t.filter_policy->Name());
}

TEST_F(SstFileWriterTest, RandomKeysReadBackInOrder) {
  const uint64_t seed = TestSeed();
  Random rnd(static_cast<uint32_t>(seed));
  std::map<std::string, std::pair<ValueType, std::string>> model;
  while (model.size() < 2000) {
    const uint32_t pick = rnd.Uniform(3);
    const ValueType type = pick == 0 ? kTypeValue : pick == 1 ? kTypeMerge : kTypeDeletion;
    model[RandomString(&rnd, 1 + rnd.Uniform(24))] = {
        type, type == kTypeDeletion ? "" : RandomString(&rnd, rnd.Uniform(100))};
  }
  const std::string path = Path("random.sst");
  SstFileWriter writer(EnvOptions(), options_);
  ASSERT_OK(writer.Open(path));
  std::vector<Entry> want;
  for (const auto& [key, tv] : model) {
    const auto& [type, value] = tv;
    const Status s = type == kTypeValue   ? writer.Put(key, value)
                     : type == kTypeMerge ? writer.Merge(key, value)
                                          : writer.Delete(key);
    ASSERT_OK(s);
    want.emplace_back(key, 0, type, value);
  }
  ExternalSstFileInfo info;
  ASSERT_OK(writer.Finish(&info));
  EXPECT_EQ(info.num_entries, model.size());
  EXPECT_EQ(info.smallest_key, model.begin()->first);
  EXPECT_EQ(info.largest_key, model.rbegin()->first);
  EXPECT_EQ(ReadBack(path), want);
}

}  // namespace
}  // namespace shale
