// The range-deletion block of a table file: TableBuilder::AddRangeTombstone writes RocksDB's
// "rocksdb.range_del" meta block (sorted internal keys begin@seq, the end as value) and its
// count property; TableReader reads and fragments it once at Open. Real files in a
// temporary directory.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "shale/env.h"
#include "table/block.h"
#include "table/format.h"
#include "table/table_builder.h"
#include "table/table_reader.h"
#include "tests/testutil/datadriven.h"
#include "tests/testutil/test_util.h"
#include "util/dbformat.h"

namespace shale {
namespace {

class TableRangeDelTest : public testing::Test {
 protected:
  TableRangeDelTest() : icmp_(BytewiseComparator()), path_(dir_.path() + "/000007.sst") {
    builder_options_.icmp = &icmp_;
    builder_options_.file_name = path_;
    reader_options_.icmp = &icmp_;
    reader_options_.file_name = path_;
  }

  // Writes point entries `keys` (user keys, each a Put at seq 1) and then the tombstones.
  void Build(const std::vector<std::string>& keys, const std::vector<RangeTombstone>& tombstones) {
    std::unique_ptr<WritableFile> file;
    ASSERT_OK(Env::Default()->NewWritableFile(path_, &file, EnvOptions()));
    TableBuilder builder(builder_options_, file.get());
    for (const std::string& k : keys) {
      builder.Add(InternalKey(k, 1, kTypeValue).Encode(), "v" + k);
    }
    for (const RangeTombstone& t : tombstones) builder.AddRangeTombstone(t.begin, t.end, t.seq);
    ASSERT_OK(builder.Finish());
    ASSERT_OK(file->Close());
  }

  void Open(std::unique_ptr<TableReader>* reader) {
    uint64_t size = 0;
    ASSERT_OK(Env::Default()->GetFileSize(path_, &size));
    std::unique_ptr<RandomAccessFile> file;
    ASSERT_OK(Env::Default()->NewRandomAccessFile(path_, &file, EnvOptions()));
    ASSERT_OK(TableReader::Open(reader_options_, std::move(file), size, reader));
  }

  static std::string Describe(const FragmentedRangeTombstones* list) {
    if (list == nullptr) return "(none)";
    std::string out;
    for (const RangeTombstone& t : list->ToTombstones()) {
      out += "[" + t.begin + "," + t.end + ")@" + std::to_string(t.seq) + " ";
    }
    return out;
  }

  TempDirectory dir_;
  InternalKeyComparator icmp_;
  std::string path_;
  TableBuilderOptions builder_options_;
  TableReaderOptions reader_options_;
};

TEST_F(TableRangeDelTest, WrittenAndServedFragmented) {
  // Added out of order, overlapping, one empty.
  Build({"a", "m", "z"}, {{"k", "p", 9}, {"c", "m", 4}, {"q", "q", 8}, {"e", "g", 6}});
  std::unique_ptr<TableReader> reader;
  Open(&reader);
  EXPECT_EQ("[c,e)@4 [e,g)@6 [e,g)@4 [g,k)@4 [k,m)@9 [k,m)@4 [m,p)@9 ",
            Describe(reader->range_tombstones().get()));
  EXPECT_EQ(3u, reader->GetTableProperties().num_range_deletions);
  EXPECT_EQ(3u, reader->GetTableProperties().num_entries);  // point entries only
  EXPECT_EQ(9u, reader->range_tombstones()->MaxCoveringSeq("m", kMaxSequenceNumber));
  // The point entries read as before.
  std::unique_ptr<InternalIterator> it(reader->NewIterator(ReadOptions()));
  std::string keys;
  for (it->SeekToFirst(); it->Valid(); it->Next()) keys += ExtractUserKey(it->key()).ToString();
  ASSERT_OK(it->status());
  EXPECT_EQ("amz", keys);

  // The block as RocksDB lays it out, under its name in the metaindex.
  std::string bytes;
  ASSERT_OK(ReadFileToString(Env::Default(), path_, &bytes));
  Footer footer;
  Slice footer_input(bytes.data() + bytes.size() - Footer::kEncodedLength, Footer::kEncodedLength);
  ASSERT_OK(footer.DecodeFrom(footer_input));
  const BlockHandle& mh = footer.metaindex_handle();
  Block metaindex(BlockContents(Slice(bytes.data() + mh.offset(), mh.size())), &path_, mh.offset());
  std::unique_ptr<InternalIterator> meta(metaindex.NewIterator(BytewiseComparator()));
  meta->Seek(kRangeDelBlockName);
  ASSERT_TRUE(meta->Valid());
  ASSERT_EQ(Slice(kRangeDelBlockName), meta->key());
  BlockHandle rh;
  Slice v = meta->value();
  ASSERT_OK(rh.DecodeFrom(&v));
  Block range_del(BlockContents(Slice(bytes.data() + rh.offset(), rh.size())), &path_, rh.offset());
  std::unique_ptr<InternalIterator> entries(range_del.NewIterator(&icmp_));
  std::string written;
  for (entries->SeekToFirst(); entries->Valid(); entries->Next()) {
    written += InternalKeyText(entries->key()) + "->" + entries->value().ToString() + " ";
  }
  EXPECT_EQ("c#4,RANGEDEL->m e#6,RANGEDEL->g k#9,RANGEDEL->p ", written);
}

TEST_F(TableRangeDelTest, NoTombstonesNoBlock) {
  Build({"a", "b"}, {});
  std::unique_ptr<TableReader> reader;
  Open(&reader);
  EXPECT_EQ(nullptr, reader->range_tombstones());
  EXPECT_EQ(0u, reader->GetTableProperties().num_range_deletions);
  EXPECT_EQ(std::string::npos, reader->GetTableProperties().ToString().find("range"));
}

TEST_F(TableRangeDelTest, OnlyTombstones) {
  Build({}, {{"a", "b", 3}});
  std::unique_ptr<TableReader> reader;
  Open(&reader);
  EXPECT_EQ("[a,b)@3 ", Describe(reader->range_tombstones().get()));
}

// A flipped byte in the range-deletion block fails the open with Corruption (the block's
// checksum), never a file read without its tombstones.
TEST_F(TableRangeDelTest, DamagedBlockFailsOpen) {
  Build({"a"}, {{"b", "c", 3}});
  std::string bytes;
  ASSERT_OK(ReadFileToString(Env::Default(), path_, &bytes));
  // The tombstone's key, b@3 of type 0x0F, then its end "c": once in the file.
  const std::string entry = InternalKey("b", 3, kTypeRangeDeletion).Encode().ToString() + "c";
  const size_t pos = bytes.find(entry);
  ASSERT_NE(std::string::npos, pos);
  bytes[pos + entry.size() - 1] = 'd';
  std::unique_ptr<TableReader> reader;
  Status s = TableReader::Open(reader_options_, std::make_unique<StringSource>(bytes), bytes.size(),
                               &reader);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}

}  // namespace
}  // namespace shale
