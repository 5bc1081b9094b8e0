// Block handles, the footer, block trailers (ReadBlock), compression, and table files
// whose footer is damaged, missing or truncated.
#include "table/format.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "table/block.h"
#include "table/compression.h"
#include "table/table_builder.h"
#include "table/table_reader.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/dbformat.h"

namespace shale {
namespace {

const ChecksumType kAllChecksums[] = {kNoChecksum, kCRC32c, kxxHash, kxxHash64, kXXH3};

std::vector<CompressionType> SupportedCompressions() {
  std::vector<CompressionType> r;
  for (CompressionType t : {kNoCompression, kSnappyCompression, kLZ4Compression, kZSTD}) {
    if (CompressionTypeSupported(t)) r.push_back(t);
  }
  return r;
}

TEST(BlockHandleTest, RoundTrip) {
  const uint64_t values[] = {0, 1, 127, 128, 4096, 1ull << 32, ~0ull};
  for (uint64_t off : values) {
    for (uint64_t size : values) {
      std::string enc;
      BlockHandle(off, size).EncodeTo(&enc);
      EXPECT_LE(enc.size(), BlockHandle::kMaxEncodedLength);
      enc.append("rest");
      Slice in(enc);
      BlockHandle h;
      ASSERT_OK(h.DecodeFrom(&in));
      EXPECT_EQ(h.offset(), off);
      EXPECT_EQ(h.size(), size);
      EXPECT_EQ(in.ToString(), "rest");
    }
  }
}

TEST(BlockHandleTest, TruncatedIsCorruption) {
  std::string enc;
  BlockHandle(1ull << 40, 300).EncodeTo(&enc);
  for (size_t n = 0; n < enc.size(); n++) {
    Slice in(enc.data(), n);
    BlockHandle h;
    EXPECT_TRUE(h.DecodeFrom(&in).IsCorruption()) << n;
  }
}

TEST(FooterTest, RoundTripEveryChecksumType) {
  for (ChecksumType t : kAllChecksums) {
    Footer f;
    f.set_checksum_type(t);
    f.set_metaindex_handle(BlockHandle(12345, 67));
    f.set_index_handle(BlockHandle(1ull << 35, 99999));
    std::string enc;
    f.EncodeTo(&enc);
    ASSERT_EQ(enc.size(), Footer::kEncodedLength);
    Footer g;
    ASSERT_OK(g.DecodeFrom(enc));
    EXPECT_EQ(g.checksum_type(), t);
    EXPECT_EQ(g.metaindex_handle().offset(), 12345u);
    EXPECT_EQ(g.metaindex_handle().size(), 67u);
    EXPECT_EQ(g.index_handle().offset(), 1ull << 35);
    EXPECT_EQ(g.index_handle().size(), 99999u);
    EXPECT_EQ(g.format_version(), kShaleTableFormatVersion);
  }
}

TEST(FooterTest, EveryFlippedByteIsCorruption) {
  Footer f;
  f.set_checksum_type(kXXH3);
  f.set_metaindex_handle(BlockHandle(100, 20));
  f.set_index_handle(BlockHandle(125, 40));
  std::string enc;
  f.EncodeTo(&enc);
  for (size_t i = 0; i < enc.size(); i++) {
    for (int bit = 0; bit < 8; bit++) {
      std::string bad = enc;
      bad[i] ^= static_cast<char>(1 << bit);
      Footer g;
      Status s = g.DecodeFrom(bad);
      EXPECT_TRUE(s.IsCorruption()) << "byte " << i << " bit " << bit << ": " << s.ToString();
    }
  }
  Footer g;
  EXPECT_TRUE(g.DecodeFrom(Slice(enc.data(), enc.size() - 1)).IsCorruption());
  std::string bad_magic = enc;
  bad_magic[enc.size() - 1] ^= 0x10;
  Status s = g.DecodeFrom(bad_magic);
  EXPECT_NE(s.ToString().find("magic"), std::string::npos) << s.ToString();
}

// A block with its trailer, as the table builder lays it out.
std::string WithTrailer(const std::string& data, CompressionType type, ChecksumType ck) {
  std::string r = data;
  const char t = static_cast<char>(type);
  r.push_back(t);
  PutFixed32(&r, ComputeBlockChecksum(ck, data.data(), data.size(), t));
  return r;
}

Status Read(const std::string& file, const BlockHandle& h, ChecksumType ck, bool verify,
            BlockContents* out) {
  static const std::string kName = "test.sst";
  StringSource src(file);
  BlockReadSource source;
  source.file = &src;
  source.file_size = file.size();
  source.file_name = &kName;
  source.checksum_type = ck;
  return ReadBlock(source, h, verify, out);
}

TEST(ReadBlockTest, RoundTripAndChecksumMismatch) {
  const std::string data = "0123456789abcdef-some block bytes";
  for (ChecksumType ck : kAllChecksums) {
    const std::string file = "prefix" + WithTrailer(data, kNoCompression, ck);
    const BlockHandle h(6, data.size());
    BlockContents c;
    ASSERT_OK(Read(file, h, ck, true, &c));
    EXPECT_EQ(c.data.ToString(), data);
    if (ck == kNoChecksum) continue;
    for (size_t i = 6; i < file.size(); i++) {
      std::string bad = file;
      bad[i] ^= 0x01;
      Status s = Read(bad, h, ck, true, &c);
      EXPECT_TRUE(s.IsCorruption()) << "checksum " << ck << " byte " << i;
      if (i == 10) {
        EXPECT_NE(s.ToString().find("test.sst"), std::string::npos) << s.ToString();
        EXPECT_NE(s.ToString().find("offset 6"), std::string::npos) << s.ToString();
      }
    }
    // Without verification the damage goes through (this is what the option means).
    std::string bad = file;
    bad[8] ^= 0x01;
    ASSERT_OK(Read(bad, h, ck, false, &c));
  }
}

TEST(ReadBlockTest, HandlesPastTheEnd) {
  const std::string file = WithTrailer("abcdef", kNoCompression, kCRC32c);
  BlockContents c;
  EXPECT_TRUE(Read(file, BlockHandle(0, 7), kCRC32c, true, &c).IsCorruption());
  EXPECT_TRUE(Read(file, BlockHandle(1, 6), kCRC32c, true, &c).IsCorruption());
  EXPECT_TRUE(Read(file, BlockHandle(100, 1), kCRC32c, true, &c).IsCorruption());
  EXPECT_TRUE(Read(file, BlockHandle(~0ull, ~0ull), kCRC32c, true, &c).IsCorruption());
  EXPECT_TRUE(Read(file, BlockHandle(2, ~0ull - 1), kCRC32c, true, &c).IsCorruption());
  EXPECT_TRUE(
      Read(file.substr(0, file.size() - 1), BlockHandle(0, 6), kCRC32c, true, &c).IsCorruption());
  ASSERT_OK(Read(file, BlockHandle(0, 6), kCRC32c, true, &c));
}

TEST(ReadBlockTest, UnknownCompressionTypeIsCorruption) {
  const std::string file = WithTrailer("abcdef", static_cast<CompressionType>(0x42), kCRC32c);
  BlockContents c;
  EXPECT_TRUE(Read(file, BlockHandle(0, 6), kCRC32c, true, &c).IsCorruption());
}

TEST(CompressionTest, NamesAndSupport) {
  EXPECT_TRUE(CompressionTypeSupported(kNoCompression));
  EXPECT_FALSE(CompressionTypeSupported(kZlibCompression));
  EXPECT_FALSE(CompressionTypeSupported(kBZip2Compression));
  EXPECT_STREQ(CompressionTypeToString(kNoCompression), "NoCompression");
  EXPECT_STREQ(CompressionTypeToString(kSnappyCompression), "Snappy");
  EXPECT_STREQ(CompressionTypeToString(kLZ4Compression), "LZ4");
  EXPECT_STREQ(CompressionTypeToString(kZSTD), "ZSTD");
#ifdef SHALE_HAVE_SNAPPY
  EXPECT_TRUE(CompressionTypeSupported(kSnappyCompression));
#endif
#ifdef SHALE_HAVE_LZ4
  EXPECT_TRUE(CompressionTypeSupported(kLZ4Compression));
#endif
#ifdef SHALE_HAVE_ZSTD
  EXPECT_TRUE(CompressionTypeSupported(kZSTD));
#endif
  std::string out;
  EXPECT_FALSE(CompressBlock(kZlibCompression, "data", &out));
  std::unique_ptr<char[]> buf;
  size_t n;
  EXPECT_TRUE(DecompressBlock(kZlibCompression, "data", &buf, &n).IsNotSupported());
}

TEST(CompressionTest, RatioRule) {
  EXPECT_TRUE(GoodCompressionRatio(100, 1000));
  EXPECT_TRUE(GoodCompressionRatio(874, 1000));
  EXPECT_FALSE(GoodCompressionRatio(875, 1000));  // saves exactly 1/8: not enough
  EXPECT_FALSE(GoodCompressionRatio(1000, 1000));
  EXPECT_FALSE(GoodCompressionRatio(0, 0));
}

TEST(CompressionTest, RoundTripAndGarbage) {
  Random rnd(TestSeed());
  for (CompressionType t : SupportedCompressions()) {
    if (t == kNoCompression) continue;
    SCOPED_TRACE(CompressionTypeToString(t));
    for (size_t len : {0, 1, 100, 4096, 100000}) {
      std::string input;
      while (input.size() < len) input += "compressible text " + std::to_string(input.size() % 7);
      input.resize(len);
      std::string compressed;
      ASSERT_TRUE(CompressBlock(t, input, &compressed));
      if (len >= 4096) {
        EXPECT_LT(compressed.size(), input.size() / 2);
      }
      std::unique_ptr<char[]> out;
      size_t out_size = 0;
      ASSERT_OK(DecompressBlock(t, compressed, &out, &out_size));
      ASSERT_EQ(Slice(out.get(), out_size), Slice(input));
      // Damaged forms: an error or some output, never a crash or overrun (ASan checks).
      for (int trial = 0; trial < 50 && !compressed.empty(); trial++) {
        std::string bad = compressed;
        bad[rnd.Uniform(static_cast<uint32_t>(bad.size()))] ^=
            static_cast<char>(1 + rnd.Uniform(255));
        if (rnd.OneIn(3)) bad.resize(rnd.Uniform(static_cast<uint32_t>(bad.size())));
        Status s = DecompressBlock(t, bad, &out, &out_size);
        EXPECT_TRUE(s.ok() || s.IsCorruption()) << s.ToString();
      }
    }
    std::unique_ptr<char[]> out;
    size_t out_size = 0;
    EXPECT_TRUE(DecompressBlock(t, "", &out, &out_size).IsCorruption());
    EXPECT_TRUE(DecompressBlock(t, "\xff\xff\xff\xff\x0fgarbage", &out, &out_size).IsCorruption());
  }
}

TEST(ReadBlockTest, CompressedBlocks) {
  std::string data;
  for (int i = 0; i < 500; i++) data += "entry-" + std::to_string(i % 10);
  for (CompressionType t : SupportedCompressions()) {
    if (t == kNoCompression) continue;
    std::string compressed;
    ASSERT_TRUE(CompressBlock(t, data, &compressed));
    const std::string file = WithTrailer(compressed, t, kXXH3);
    BlockContents c;
    ASSERT_OK(Read(file, BlockHandle(0, compressed.size()), kXXH3, true, &c));
    EXPECT_EQ(c.data.ToString(), data);
  }
}

// A file that hands out its own memory instead of filling the caller's buffer, as a mapped
// file or an in-memory Env may.
class OwnMemorySource final : public RandomAccessFile {
 public:
  explicit OwnMemorySource(std::string contents) : contents_(std::move(contents)) {}
  Status Read(uint64_t offset, size_t n, Slice* result, char* /*scratch*/) const override {
    if (offset > contents_.size()) return Status::IOError("read past the end");
    *result = Slice(contents_.data() + offset, std::min(n, contents_.size() - offset));
    return Status::OK();
  }

 private:
  std::string contents_;
};

// ReadBlock reads a block the table expects to be compressed into a buffer of its own and
// decompresses from there; every combination of that guess, the block's real compression,
// its size (below and above the buffer), a file that returns its own memory and the
// headroom asked for must give the same bytes, owned by the result (headroom bytes after
// the start of its allocation) and valid after the file is gone.
TEST(ReadBlockTest, EveryCompressionGuessGivesOwnedBytes) {
  Random rnd(TestSeed());
  for (size_t target : {100u, 4000u, 9000u, 40000u}) {
    std::string data;
    // Half random bytes, half repeats: compressible, and the large ones compress to more
    // than the stack buffer holds.
    while (data.size() < target) {
      data += RandomString(&rnd, 16);
      data += std::string(16, 'x');
    }
    for (CompressionType t : SupportedCompressions()) {
      std::string stored = data;
      if (t != kNoCompression) {
        ASSERT_TRUE(CompressBlock(t, data, &stored));
      }
      const std::string file = "pad" + WithTrailer(stored, t, kXXH3);
      for (int combo = 0; combo < 8; combo++) {
        const bool expect = (combo & 1) != 0;
        const bool own_memory = (combo & 2) != 0;
        const size_t headroom = (combo & 4) != 0 ? kBlockHeadroom : 0;
        {
          SCOPED_TRACE(std::string(CompressionTypeToString(t)) + " size " + std::to_string(target) +
                       (expect ? " expected" : " unexpected") +
                       (own_memory ? " own memory" : " scratch") + " headroom " +
                       std::to_string(headroom));
          std::unique_ptr<RandomAccessFile> src;
          if (own_memory) {
            src = std::make_unique<OwnMemorySource>(file);
          } else {
            src = std::make_unique<StringSource>(file);
          }
          BlockReadSource source;
          source.file = src.get();
          source.file_size = file.size();
          source.checksum_type = kXXH3;
          source.expect_compressed = expect;
          BlockContents c;
          ASSERT_OK(ReadBlock(source, BlockHandle(3, stored.size()), true, &c, headroom));
          src.reset();
          ASSERT_NE(c.allocation, nullptr);
          EXPECT_EQ(c.headroom, headroom);
          EXPECT_EQ(c.data.data(), c.allocation.get() + headroom);
          EXPECT_EQ(c.data.ToString(), data);
        }
      }
    }
  }
}

// A small table file on disk, for footer damage.
class TableFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    icmp_ = std::make_unique<InternalKeyComparator>(BytewiseComparator());
    path_ = dir_.File("000001.sst");
    std::unique_ptr<WritableFile> file;
    ASSERT_OK(Env::Default()->NewWritableFile(path_, &file, EnvOptions()));
    TableBuilderOptions opts;
    opts.icmp = icmp_.get();
    opts.file_name = path_;
    TableBuilder builder(opts, file.get());
    for (int i = 0; i < 100; i++) {
      std::string k;
      AppendInternalKey(&k, "key" + std::to_string(1000 + i), 5, kTypeValue);
      builder.Add(k, "value");
    }
    ASSERT_OK(builder.Finish());
    ASSERT_OK(file->Close());
    ASSERT_OK(Env::Default()->GetFileSize(path_, &size_));
    ASSERT_EQ(size_, builder.FileSize());
  }

  Status Open() {
    uint64_t size;
    Status s = Env::Default()->GetFileSize(path_, &size);
    if (!s.ok()) return s;
    std::unique_ptr<RandomAccessFile> file;
    s = Env::Default()->NewRandomAccessFile(path_, &file, EnvOptions());
    if (!s.ok()) return s;
    TableReaderOptions opts;
    opts.icmp = icmp_.get();
    opts.file_name = path_;
    std::unique_ptr<TableReader> reader;
    return TableReader::Open(opts, std::move(file), size, &reader);
  }

  TempDirectory dir_{"format_test"};
  std::unique_ptr<InternalKeyComparator> icmp_;
  std::string path_;
  uint64_t size_ = 0;
};

TEST_F(TableFileTest, OpensWhenIntact) { ASSERT_OK(Open()); }

TEST_F(TableFileTest, BadMagicIsCorruption) {
  ASSERT_OK(CorruptFile(path_, -3, 1));
  Status s = Open();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(path_), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("magic"), std::string::npos) << s.ToString();
}

TEST_F(TableFileTest, EveryFooterByteIsChecked) {
  for (size_t i = 1; i <= Footer::kEncodedLength; i++) {
    ASSERT_OK(CorruptFile(path_, -static_cast<int64_t>(i), 1));
    Status s = Open();
    EXPECT_TRUE(s.IsCorruption()) << "byte " << i << " from the end: " << s.ToString();
    ASSERT_OK(CorruptFile(path_, -static_cast<int64_t>(i), 1));  // flip it back
  }
  ASSERT_OK(Open());
}

TEST_F(TableFileTest, TruncatedFileIsCorruption) {
  for (uint64_t size : {size_ - 1, size_ - 8, size_ / 2, uint64_t{Footer::kEncodedLength},
                        uint64_t{Footer::kEncodedLength - 1}, uint64_t{10}, uint64_t{0}}) {
    ASSERT_OK(TruncateFileTo(path_, size));
    Status s = Open();
    EXPECT_TRUE(s.IsCorruption()) << "size " << size << ": " << s.ToString();
  }
}

TEST_F(TableFileTest, ClaimedSizeLargerThanFileIsCorruption) {
  std::unique_ptr<RandomAccessFile> file;
  ASSERT_OK(Env::Default()->NewRandomAccessFile(path_, &file, EnvOptions()));
  TableReaderOptions opts;
  opts.icmp = icmp_.get();
  std::unique_ptr<TableReader> reader;
  Status s = TableReader::Open(opts, std::move(file), size_ + 100, &reader);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_EQ(reader, nullptr);
}

TEST_F(TableFileTest, NotATableIsCorruption) {
  ASSERT_OK(WriteStringToFile(Env::Default(), std::string(4096, 'x'), path_));
  Status s = Open();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}

}  // namespace
}  // namespace shale
