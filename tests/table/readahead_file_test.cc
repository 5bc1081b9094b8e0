// ReadaheadFile (table/readahead_file.h) over a real file: every read returns the file's
// bytes, whatever the order and the mode; reads in file order are served by few reads of
// the file underneath (fixed windows; automatic ones once reads run in order, restarting
// at a seek); a window that cannot be read fails the read that needed it.
#include "table/readahead_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

constexpr size_t kFileSize = 1 << 20;

// The file underneath, counting its reads and failing those that cover fail_at.
class CountingFile final : public RandomAccessFile {
 public:
  explicit CountingFile(std::unique_ptr<RandomAccessFile> target) : target_(std::move(target)) {}
  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    reads_++;
    last_ = n;
    largest_ = std::max(largest_, n);
    if (fail_at_ >= offset && fail_at_ < offset + n) {
      memset(scratch, 0xee, n);  // a failed read may leave anything in scratch
      return Status::IOError("injected");
    }
    return target_->Read(offset, n, result, scratch);
  }
  uint64_t reads() const { return reads_; }
  size_t largest() const { return largest_; }
  size_t last() const { return last_; }
  void FailAt(uint64_t offset) { fail_at_ = offset; }

 private:
  std::unique_ptr<RandomAccessFile> target_;
  mutable uint64_t reads_ = 0;
  mutable size_t largest_ = 0;
  mutable size_t last_ = 0;
  uint64_t fail_at_ = UINT64_MAX;
};

class ReadaheadFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Random rnd(301);
    contents_ = RandomBinaryString(&rnd, kFileSize);
    ASSERT_OK(WriteStringToFile(Env::Default(), contents_, dir_.File("f")));
    std::unique_ptr<RandomAccessFile> raw;
    ASSERT_OK(Env::Default()->NewRandomAccessFile(dir_.File("f"), &raw, EnvOptions()));
    file_ = std::make_unique<CountingFile>(std::move(raw));
  }

  // Reads n bytes at offset through r and checks them against the file.
  void ReadAndCheck(const ReadaheadFile& r, uint64_t offset, size_t n) {
    std::string scratch(n, '\0');
    Slice got;
    ASSERT_OK(r.Read(offset, n, &got, scratch.data()));
    const size_t expected = offset >= kFileSize ? 0 : std::min<uint64_t>(n, kFileSize - offset);
    ASSERT_EQ(expected, got.size()) << "at " << offset << " for " << n;
    ASSERT_TRUE(
        got.compare(Slice(contents_.data() + std::min<uint64_t>(offset, kFileSize), expected)) == 0)
        << "at " << offset << " for " << n;
  }

  // Reads the whole file in order in pieces of `block` bytes.
  void Scan(const ReadaheadFile& r, uint64_t from, size_t block) {
    for (uint64_t off = from; off < kFileSize; off += block) ReadAndCheck(r, off, block);
  }

  TempDirectory dir_{"readahead"};
  std::string contents_;
  std::unique_ptr<CountingFile> file_;
};

TEST_F(ReadaheadFileTest, ReturnsTheFilesBytesWhateverTheOrder) {
  Random rnd(TestSeed());
  for (size_t size : {size_t{0}, size_t{1000}, size_t{64 << 10}, size_t{2 << 20}}) {
    SCOPED_TRACE("readahead size " + std::to_string(size));
    ReadaheadFile r(file_.get(), kFileSize, size);
    uint64_t offset = 0;
    for (int i = 0; i < 3000; i++) {
      const size_t n = 1 + rnd.Uniform(rnd.OneIn(20) ? 40000 : 5000);
      if (rnd.OneIn(8)) {
        offset = rnd.Uniform(kFileSize);  // a seek
      } else if (rnd.OneIn(10)) {
        offset = kFileSize - rnd.Uniform(3000);  // across the end of the file
      } else if (rnd.OneIn(10) && offset > 0) {
        offset -= rnd.Uniform(static_cast<uint32_t>(std::min<uint64_t>(offset, 9000)));  // back
      }
      ASSERT_NO_FATAL_FAILURE(ReadAndCheck(r, offset, n));
      offset += n;
      if (offset >= kFileSize) offset = 0;
    }
  }
}

TEST_F(ReadaheadFileTest, FixedWindowsReadTheFileAWindowAtATime) {
  ReadaheadFile r(file_.get(), kFileSize, 64 << 10);
  Scan(r, 0, 4096);
  EXPECT_EQ(kFileSize / (64 << 10), file_->reads());
  EXPECT_EQ(size_t{64 << 10}, file_->largest());
  // A window never reaches past the end of the file.
  ReadaheadFile tail(file_.get(), kFileSize, 64 << 10);
  ReadAndCheck(tail, kFileSize - 5000, 4096);
  EXPECT_EQ(size_t{64 << 10}, file_->largest());
}

TEST_F(ReadaheadFileTest, AutomaticWindowsStartAfterReadsInOrderAndGrow) {
  ReadaheadFile r(file_.get(), kFileSize, 0);
  const int direct = ReadaheadFile::kAutoReadaheadAfter;
  // The first reads go alone, each one its own read of the file.
  for (int i = 0; i < direct; i++) ReadAndCheck(r, uint64_t{4096} * i, 4096);
  EXPECT_EQ(static_cast<uint64_t>(direct), file_->reads());
  EXPECT_EQ(size_t{4096}, file_->largest());
  // Then windows: 8 KiB, doubling to 256 KiB.
  Scan(r, uint64_t{4096} * direct, 4096);
  uint64_t windows = 0;
  for (uint64_t left = kFileSize - uint64_t{4096} * direct, w = ReadaheadFile::kAutoInitial;
       left > 0; w = std::min<uint64_t>(w * 2, ReadaheadFile::kAutoMax)) {
    left -= std::min(left, w);
    windows++;
  }
  EXPECT_EQ(direct + windows, file_->reads());
  EXPECT_EQ(ReadaheadFile::kAutoMax, file_->largest());
}

TEST_F(ReadaheadFileTest, ASeekStartsTheAutomaticWindowsOver) {
  ReadaheadFile r(file_.get(), kFileSize, 0);
  Scan(r, kFileSize / 2, 4096);  // windows up to the largest
  const uint64_t before = file_->reads();
  // Elsewhere: reads go alone again, then the first window is the smallest.
  const int direct = ReadaheadFile::kAutoReadaheadAfter;
  for (int i = 0; i <= direct; i++) ReadAndCheck(r, uint64_t{4096} * i, 4096);
  EXPECT_EQ(before + direct + 1, file_->reads());
  EXPECT_EQ(ReadaheadFile::kAutoInitial, file_->last());
  // The window holds the next block: no read of the file.
  ReadAndCheck(r, uint64_t{4096} * (direct + 1), 4096);
  EXPECT_EQ(before + direct + 1, file_->reads());
}

TEST_F(ReadaheadFileTest, AWindowThatCannotBeReadFailsTheRead) {
  ReadaheadFile r(file_.get(), kFileSize, 64 << 10);
  file_->FailAt(100000);  // in the second window, not in the block asked for
  ReadAndCheck(r, 0, 4096);
  Slice got;
  std::string scratch(4096, '\0');
  ASSERT_NOK(r.Read(65536, 4096, &got, scratch.data()));
  // Nothing of the failed window is served, nor of the one before, whose bytes the
  // failed read overwrote: reads read again.
  ASSERT_NOK(r.Read(65536, 4096, &got, scratch.data()));
  file_->FailAt(UINT64_MAX);
  ReadAndCheck(r, 0, 4096);
  ReadAndCheck(r, 65536, 4096);
}

}  // namespace
}  // namespace shale
