// TableCache's two ways to a file's reader: kept in the file's metadata when the cache is
// unbounded (max_open_files = -1), so that later reads skip the cache and survive its
// eviction, and through the cache only when it is bounded. Files are written by FlushJob.
#include "db/table_cache.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "db/filename.h"
#include "db/flush_job.h"
#include "memtable/memtable.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

class TableCacheTest : public ::testing::Test {
 protected:
  TableCacheTest() : dir_("table_cache_test"), icmp_(BytewiseComparator()) {
    options_.compression = kNoCompression;
  }

  // Writes {a: va, b: vb} into file `number`.
  FileMetaData WriteFile(uint64_t number) {
    auto* mem = new MemTable(icmp_, 1 << 20);
    mem->Ref();
    mem->Add(5, kTypeValue, "a", "va");
    mem->Add(6, kTypeValue, "b", "vb");
    FlushJob job(options_, dir_.path(), &icmp_, cache_.get(), /*db_dir=*/nullptr, mem,
                 /*snapshots=*/{}, number);
    EXPECT_OK(job.Run());
    mem->Unref();
    return job.meta();
  }
  void DeleteFile(uint64_t number) {
    ASSERT_OK(Env::Default()->DeleteFile(TableFileName(dir_.path(), number)));
  }
  // The first key of the file through NewIterator, or the iterator's error.
  std::string FirstKey(const FileMetaData& f) {
    std::unique_ptr<InternalIterator> it(cache_->NewIterator(ReadOptions(), f));
    it->SeekToFirst();
    if (!it->status().ok()) return it->status().ToString();
    return it->Valid() ? ExtractUserKey(it->key()).ToString() : "(empty)";
  }

  TempDirectory dir_;
  InternalKeyComparator icmp_;
  Options options_;
  std::unique_ptr<TableCache> cache_;
};

TEST_F(TableCacheTest, UnboundedCacheKeepsTheReaderInTheMetadata) {
  cache_ = std::make_unique<TableCache>(dir_.path(), options_, &icmp_, -1);
  const FileMetaData f = WriteFile(12);
  EXPECT_EQ(f.table_reader.Get(), nullptr);
  std::shared_ptr<TableReader> hold;
  TableReader* first = nullptr;
  ASSERT_OK(cache_->ReaderFor(f, &hold, &first));
  EXPECT_EQ(f.table_reader.Get(), first);
  // Found in the metadata from now on: no reference for the caller to hold.
  std::shared_ptr<TableReader> hold2;
  TableReader* again = nullptr;
  ASSERT_OK(cache_->ReaderFor(f, &hold2, &again));
  EXPECT_EQ(again, first);
  EXPECT_EQ(hold2, nullptr);

  // The cache lets go of it and the file goes: the metadata still reads, without the
  // cache or the file.
  cache_->Evict(12);
  DeleteFile(12);
  EXPECT_EQ(cache_->TEST_NumCached(), 0u);
  EXPECT_EQ(FirstKey(f), "a");
  ASSERT_OK(cache_->ReaderFor(f, &hold2, &again));
  EXPECT_EQ(again, first);

  // A copy of the metadata (a VersionEdit's) does not share the kept reader.
  const FileMetaData copy = f;
  EXPECT_EQ(copy.table_reader.Get(), nullptr);
  EXPECT_FALSE(cache_->ReaderFor(copy, &hold2, &again).ok());
}

TEST_F(TableCacheTest, IteratorsOfAnUnboundedCacheKeepTheReaderInTheMetadata) {
  cache_ = std::make_unique<TableCache>(dir_.path(), options_, &icmp_, -1);
  const FileMetaData f = WriteFile(14);
  EXPECT_EQ(FirstKey(f), "a");
  TableReader* const kept = f.table_reader.Get();
  ASSERT_NE(kept, nullptr);
  std::shared_ptr<TableReader> hold;
  TableReader* again = nullptr;
  ASSERT_OK(cache_->ReaderFor(f, &hold, &again));
  EXPECT_EQ(again, kept);
  // An iterator open while the cache drops the reader and the file goes reads on, and so
  // does a new one: the metadata holds the reader.
  std::unique_ptr<InternalIterator> open(cache_->NewIterator(ReadOptions(), f));
  cache_->Evict(14);
  DeleteFile(14);
  open->SeekToFirst();
  ASSERT_TRUE(open->Valid());
  EXPECT_EQ(ExtractUserKey(open->key()).ToString(), "a");
  EXPECT_EQ(FirstKey(f), "a");
}

TEST_F(TableCacheTest, BoundedCacheKeepsNothingInTheMetadata) {
  cache_ = std::make_unique<TableCache>(dir_.path(), options_, &icmp_, 10);
  const FileMetaData f = WriteFile(13);
  std::shared_ptr<TableReader> hold;
  TableReader* reader = nullptr;
  ASSERT_OK(cache_->ReaderFor(f, &hold, &reader));
  EXPECT_EQ(hold.get(), reader);
  EXPECT_EQ(f.table_reader.Get(), nullptr);
  EXPECT_EQ(FirstKey(f), "a");
  EXPECT_EQ(f.table_reader.Get(), nullptr);
  hold.reset();
  // Evicted and gone, the file cannot be read any more: max_open_files bounds what stays
  // open.
  cache_->Evict(13);
  DeleteFile(13);
  EXPECT_FALSE(cache_->ReaderFor(f, &hold, &reader).ok());
  EXPECT_NE(FirstKey(f), "a");
}

}  // namespace
}  // namespace shale
