// Helpers shared by the libFuzzer targets in this folder: files over the fuzzer's bytes,
// and a check that stops the run loudly (a "wrong answer with OK" is a finding too).
//
// Thread safety: none needed; libFuzzer calls a target from one thread.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "shale/env.h"

namespace shale::fuzz {

// Aborts with a message when cond is false: libFuzzer records the input as a crash.
#define FUZZ_CHECK(cond, msg)                                                          \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      fprintf(stderr, "fuzz check failed: %s: %s\n", #cond, std::string(msg).c_str()); \
      abort();                                                                         \
    }                                                                                  \
  } while (0)

// A SequentialFile reading a string.
class StringSequentialFile final : public SequentialFile {
 public:
  explicit StringSequentialFile(std::string data) : data_(std::move(data)) {}
  Status Read(size_t n, Slice* result, char* scratch) override {
    const size_t len = std::min(n, data_.size() - pos_);
    memcpy(scratch, data_.data() + pos_, len);
    pos_ += len;
    *result = Slice(scratch, len);
    return Status::OK();
  }
  Status Skip(uint64_t n) override {
    pos_ += std::min<uint64_t>(n, data_.size() - pos_);
    return Status::OK();
  }

 private:
  const std::string data_;
  size_t pos_ = 0;
};

// A RandomAccessFile reading a string; reads past the end come back short.
class StringFile final : public RandomAccessFile {
 public:
  explicit StringFile(std::string data) : data_(std::move(data)) {}
  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    if (offset > data_.size()) {
      *result = Slice(scratch, 0);
      return Status::IOError("read past the end");
    }
    const size_t len = std::min<uint64_t>(n, data_.size() - offset);
    memcpy(scratch, data_.data() + offset, len);
    *result = Slice(scratch, len);
    return Status::OK();
  }
  size_t size() const { return data_.size(); }

 private:
  const std::string data_;
};

}  // namespace shale::fuzz
