// Checksums between the disk and a read's answer: the blocks a table loads at open (index,
// filter, properties, metaindex) are verified whatever paranoid_checks says, and a data
// block read with verify_checksums=false is never cached where a verifying read would
// trust it. In both cases damage must give Corruption or the right value, never an older
// or damaged value with OK.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "db/filename.h"
#include "shale/db.h"
#include "shale/filter_policy.h"
#include "shale/table.h"
#include "table/block.h"
#include "table/format.h"
#include "tests/testutil/test_util.h"
#include "util/internal_iterator.h"

namespace shale {
namespace {

// The table files of the DB, oldest (lowest number) first.
std::vector<std::string> TableFiles(const std::string& dbname) {
  std::vector<std::string> children, out;
  EXPECT_OK(Env::Default()->GetChildren(dbname, &children));
  std::vector<uint64_t> numbers;
  for (const std::string& c : children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(c, &number, &type) && type == kTableFile) numbers.push_back(number);
  }
  std::sort(numbers.begin(), numbers.end());
  for (uint64_t n : numbers) out.push_back(TableFileName(dbname, n));
  return out;
}

// The handle of the table's filter block, found through its footer and metaindex.
Status FindFilter(const std::string& fname, BlockHandle* filter) {
  std::string data;
  Status s = ReadFileToString(Env::Default(), fname, &data);
  if (!s.ok()) return s;
  if (data.size() < Footer::kEncodedLength) return Status::Corruption("short file");
  Footer footer;
  s = footer.DecodeFrom(
      Slice(data.data() + data.size() - Footer::kEncodedLength, Footer::kEncodedLength));
  if (!s.ok()) return s;
  StringSource source(data);
  BlockReadSource where;
  where.file = &source;
  where.file_size = data.size();
  where.checksum_type = footer.checksum_type();
  BlockContents contents;
  s = ReadBlock(where, footer.metaindex_handle(), true, &contents);
  if (!s.ok()) return s;
  Block metaindex(std::move(contents));
  std::unique_ptr<InternalIterator> it(metaindex.NewIterator(BytewiseComparator()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (it->key().starts_with("filter.")) {
      Slice v = it->value();
      return filter->DecodeFrom(&v);
    }
  }
  return Status::NotFound("no filter block");
}

TEST(DBChecksumTest, DamagedFilterNeverHidesTheNewestValue) {
  for (bool paranoid : {false, true}) {
    SCOPED_TRACE(paranoid ? "paranoid_checks=true" : "paranoid_checks=false");
    TempDirectory dir("checksum_filter");
    const std::string dbname = dir.path() + "/db";
    BlockBasedTableOptions topts;
    topts.filter_policy.reset(NewBloomFilterPolicy(10));
    Options options;
    options.create_if_missing = true;
    options.disable_auto_compactions = true;
    options.paranoid_checks = paranoid;
    options.table_factory.reset(NewBlockBasedTableFactory(topts));
    {
      std::unique_ptr<DB> db;
      ASSERT_OK(DB::Open(options, dbname, &db));
      for (const char* v : {"old", "new"}) {
        for (int i = 0; i < 100; i++) {
          ASSERT_OK(db->Put(WriteOptions(), "k" + std::to_string(i), v));
        }
        ASSERT_OK(db->Flush(FlushOptions()));
      }
    }
    const std::vector<std::string> files = TableFiles(dbname);
    ASSERT_EQ(files.size(), 2u);
    BlockHandle filter;
    ASSERT_OK(FindFilter(files[1], &filter));
    // Invert every filter bit (not the 8-byte trailer): each key of the newer file now
    // reads as "certainly absent" to a reader that trusts the filter.
    ASSERT_GT(filter.size(), 8u);
    ASSERT_OK(CorruptFile(files[1], static_cast<int64_t>(filter.offset()),
                          static_cast<int>(filter.size() - 8)));

    std::unique_ptr<DB> db;
    Status s = DB::Open(options, dbname, &db);
    if (!s.ok()) {
      ASSERT_TRUE(s.IsCorruption()) << s.ToString();
      ASSERT_TRUE(paranoid);  // only paranoid_checks opens every table at Open
      continue;
    }
    int corruptions = 0;
    for (int i = 0; i < 100; i++) {
      std::string v;
      Status g = db->Get(ReadOptions(), "k" + std::to_string(i), &v);
      if (g.IsCorruption()) {
        corruptions++;
        continue;
      }
      ASSERT_OK(g);
      ASSERT_EQ(v, "new") << "k" << i;
    }
    EXPECT_EQ(corruptions, 100);  // the filter's checksum fails the table at its open
  }
}

TEST(DBChecksumTest, UnverifiedReadDoesNotPoisonTheCache) {
  TempDirectory dir("checksum_cache");
  const std::string dbname = dir.path() + "/db";
  Options options;
  options.create_if_missing = true;
  options.compression = kNoCompression;
  const std::string value = "VALUE-0123456789-written-once";
  {
    std::unique_ptr<DB> db;
    ASSERT_OK(DB::Open(options, dbname, &db));
    ASSERT_OK(db->Put(WriteOptions(), "key", value));
    ASSERT_OK(db->Flush(FlushOptions()));
  }
  const std::vector<std::string> files = TableFiles(dbname);
  ASSERT_EQ(files.size(), 1u);
  std::string data;
  ASSERT_OK(ReadFileToString(Env::Default(), files[0], &data));
  const size_t at = data.find(value);
  ASSERT_NE(at, std::string::npos);
  ASSERT_OK(CorruptFile(files[0], static_cast<int64_t>(at + 3), 1));

  std::unique_ptr<DB> db;
  ASSERT_OK(DB::Open(options, dbname, &db));
  ReadOptions unverified;
  unverified.verify_checksums = false;
  std::string v;
  Status s = db->Get(unverified, "key", &v);
  // Without verification the damaged byte may come back: the caller asked for that.
  if (s.ok()) {
    EXPECT_NE(v, value);
  }
  // A verifying read must see the damage, not a block the unverified read cached.
  s = db->Get(ReadOptions(), "key", &v);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString() << " value " << v;
  std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions()));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
}

}  // namespace
}  // namespace shale
