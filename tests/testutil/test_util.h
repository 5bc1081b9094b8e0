// Helpers shared by every test: scratch directories, the random seed, Status assertions,
// file corruption, and in-memory files for code that takes a WritableFile or
// RandomAccessFile.
//
// Thread safety: the free functions may be called from any thread. StringSink and
// StringSource follow the file contracts in shale/env.h (StringSource::Read is thread-safe).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "shale/env.h"
#include "shale/status.h"
#include "util/dbformat.h"
#include "util/random.h"

// ASSERT_OK(expr) / EXPECT_OK(expr): the Status must be OK; the failure prints it.
#define ASSERT_OK(expr) ASSERT_PRED_FORMAT1(::shale::AssertStatusOk, expr)
#define EXPECT_OK(expr) EXPECT_PRED_FORMAT1(::shale::AssertStatusOk, expr)
// ASSERT_NOK(expr) / EXPECT_NOK(expr): the Status must not be OK.
#define ASSERT_NOK(expr) ASSERT_FALSE((expr).ok())
#define EXPECT_NOK(expr) EXPECT_FALSE((expr).ok())

namespace shale {

::testing::AssertionResult AssertStatusOk(const char* expr, const Status& s);

// Creates a fresh, uniquely named directory under env's GetTestDirectory() and returns
// its path. The caller removes it (DestroyDir) or lets a TempDirectory do it. Exits the
// test with a fatal failure message on error (returns "" then).
std::string TempDir(const std::string& name, Env* env = Env::Default());

// A TempDir removed recursively when this object dies.
class TempDirectory {
 public:
  explicit TempDirectory(const std::string& name = "test", Env* env = Env::Default())
      : env_(env), path_(TempDir(name, env)) {}
  ~TempDirectory();
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  Env* const env_;
  const std::string path_;
};

// Removes path and everything under it; OK if it does not exist.
Status DestroyDir(const std::string& path, Env* env = Env::Default());

// The seed for a randomized test: $SHALE_TEST_SEED if set, else taken from the clock.
// Printed to stderr with the current test's name so a failure can be replayed. Every
// randomized test draws its seed here; none keeps a private copy.
uint64_t TestSeed();

// "key" and i in six digits, zero-padded ("key000042"), so that numeric and byte order agree
// for i below a million.
std::string Key(int i);
// Nine bytes: a tag byte (which family of keys) and i as fixed64, for filter tests that
// want keys of one length and families that never collide.
std::string TaggedKey(uint64_t i, char tag = 'k');

// The internal key (user key, sequence, type) as stored in memtables and tables.
std::string IKey(const std::string& user_key, SequenceNumber seq, ValueType type = kTypeValue);

// A count a long run may raise: the positive integer in $name, else default_value.
int TestKnob(const char* name, int default_value);

// The kill half of a crash test: forks a child that runs child(fd), fd being the write end
// of a pipe the child reports on (it must never return: it runs until killed, or _exits
// with a code of its own on a failure), SIGKILLs it after delay_us microseconds and
// returns in *output every byte it wrote to fd. Writes of up to PIPE_BUF bytes arrive
// whole. Returns an error message, empty if the child was killed as planned.
std::string RunChildUntilKilled(const std::function<void(int fd)>& child, uint64_t delay_us,
                                std::string* output);

// XORs 0xff into `bytes_to_flip` bytes starting at `offset` (a negative offset counts back
// from the end of the file). InvalidArgument if the range is not inside the file.
Status CorruptFile(const std::string& path, int64_t offset, int bytes_to_flip,
                   Env* env = Env::Default());
Status TruncateFileTo(const std::string& path, uint64_t size, Env* env = Env::Default());

// len random bytes of any value / printable ASCII.
std::string RandomBinaryString(Random* rnd, size_t len);
std::string RandomString(Random* rnd, size_t len);

// v as the 8 bytes PutFixed64 writes: the operand and value format of the uint64add merge
// operator.
std::string Fixed64String(uint64_t v);

// A WritableFile appending to a string, for builders tested without files.
class StringSink final : public WritableFile {
 public:
  Status Append(const Slice& data) override {
    contents_.append(data.data(), data.size());
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  Status Close() override { return Status::OK(); }
  uint64_t GetFileSize() override { return contents_.size(); }

  const std::string& contents() const { return contents_; }
  std::string* mutable_contents() { return &contents_; }

 private:
  std::string contents_;
};

// A RandomAccessFile over a string (copied), counting reads.
class StringSource final : public RandomAccessFile {
 public:
  explicit StringSource(std::string contents) : contents_(std::move(contents)) {}
  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override;
  const std::string& contents() const { return contents_; }
  int reads() const { return reads_.load(); }

 private:
  std::string contents_;
  mutable std::atomic<int> reads_{0};
};

}  // namespace shale
