// Where TableBuilder cuts data blocks: as RocksDB's default flush policy does, a block ends
// before the entry that would take it past block_size once it holds more than 90% of
// block_size, so blocks of small entries stay within block_size; an entry larger than
// block_size still gets a block of its own, and no block is ever empty.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "shale/options.h"
#include "table/block.h"
#include "table/format.h"
#include "table/table_builder.h"
#include "tests/testutil/test_util.h"
#include "util/dbformat.h"

namespace shale {
namespace {

constexpr size_t kBlockSize = 4096;

// Writes entries of value_size bytes under keys "key%08d" to path, uncompressed, and
// returns the stored size of every data block, in file order.
std::vector<uint64_t> DataBlockSizes(const std::string& path, int entries, size_t value_size) {
  InternalKeyComparator icmp(BytewiseComparator());
  TableBuilderOptions options;
  options.icmp = &icmp;
  options.table_options.block_size = kBlockSize;
  options.file_name = path;
  std::unique_ptr<WritableFile> out;
  EXPECT_OK(Env::Default()->NewWritableFile(path, &out, EnvOptions()));
  TableBuilder builder(options, out.get());
  for (int i = 0; i < entries; i++) {
    char key[16];
    snprintf(key, sizeof(key), "key%08d", i);
    builder.Add(IKey(key, 1), std::string(value_size, static_cast<char>('a' + i % 26)));
  }
  EXPECT_OK(builder.Finish());
  EXPECT_OK(out->Close());

  // The index names every data block with its handle.
  uint64_t file_size = 0;
  EXPECT_OK(Env::Default()->GetFileSize(path, &file_size));
  std::unique_ptr<RandomAccessFile> file;
  EXPECT_OK(Env::Default()->NewRandomAccessFile(path, &file, EnvOptions()));
  char scratch[Footer::kEncodedLength];
  Slice footer_bytes;
  EXPECT_OK(file->Read(file_size - Footer::kEncodedLength, Footer::kEncodedLength, &footer_bytes,
                       scratch));
  Footer footer;
  EXPECT_OK(footer.DecodeFrom(footer_bytes));
  BlockReadSource source;
  source.file = file.get();
  source.file_size = file_size;
  source.checksum_type = footer.checksum_type();
  BlockContents contents;
  EXPECT_OK(ReadBlock(source, footer.index_handle(), /*verify_checksums=*/true, &contents));
  Block index(std::move(contents));
  EXPECT_OK(index.status());
  std::vector<uint64_t> sizes;
  std::unique_ptr<InternalIterator> it(index.NewIterator(&icmp, /*min_key_size=*/8));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    BlockHandle handle;
    Slice v = it->value();
    EXPECT_OK(handle.DecodeFrom(&v));
    sizes.push_back(handle.size());
  }
  EXPECT_OK(it->status());
  return sizes;
}

TEST(DataBlockSizeTest, SmallEntriesStayWithinBlockSize) {
  TempDirectory dir("data_block_size");
  // About 320 bytes an entry: under a tenth of the block size, so the cut keeps every
  // block within block_size and every block but the last above 90% of it.
  const std::vector<uint64_t> sizes = DataBlockSizes(dir.path() + "/small.sst", 2000, 300);
  ASSERT_GT(sizes.size(), 100u);
  for (size_t i = 0; i < sizes.size(); i++) {
    EXPECT_LE(sizes[i], kBlockSize) << "block " << i;
    if (i + 1 < sizes.size()) EXPECT_GT(sizes[i], kBlockSize - kBlockSize / 10) << "block " << i;
  }
}

TEST(DataBlockSizeTest, EntryLargerThanABlockHasItsOwn) {
  TempDirectory dir("data_block_size");
  const std::vector<uint64_t> sizes = DataBlockSizes(dir.path() + "/large.sst", 20, 5000);
  ASSERT_EQ(sizes.size(), 20u);
  for (uint64_t size : sizes) EXPECT_GT(size, 5000u);
}

TEST(DataBlockSizeTest, MidSizedEntriesNeverMakeAnEmptyBlock) {
  TempDirectory dir("data_block_size");
  // 1500-byte entries: two fit, a third would pass block_size, but two are below 90%,
  // so the block takes the third and ends past block_size.
  const std::vector<uint64_t> sizes = DataBlockSizes(dir.path() + "/mid.sst", 30, 1500);
  ASSERT_EQ(sizes.size(), 10u);
  for (uint64_t size : sizes) {
    EXPECT_GT(size, 3 * 1500u);
    EXPECT_LT(size, 3 * 1600u);
  }
}

}  // namespace
}  // namespace shale
