// Slice: a non-owning view of bytes (pointer + length), and PinnableSlice: a Slice that
// either owns a copy of its bytes or pins the memory they live in until Reset().
//
// Thread safety: a const Slice may be read from many threads; the bytes it refers to must
// outlive it, which is the caller's duty. A PinnableSlice belongs to one thread at a time.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

#include "shale/cleanable.h"

namespace shale {

class Slice {
 public:
  Slice() : data_(""), size_(0) {}
  Slice(const char* d, size_t n) : data_(d), size_(n) {}
  Slice(const std::string& s) : data_(s.data()), size_(s.size()) {}  // NOLINT: implicit as in RocksDB
  Slice(std::string_view sv) : data_(sv.data()), size_(sv.size()) {}  // NOLINT
  Slice(const char* s) : data_(s), size_(strlen(s)) {}                // NOLINT

  const char* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  char operator[](size_t n) const {
    assert(n < size_);
    return data_[n];
  }

  void clear() {
    data_ = "";
    size_ = 0;
  }

  // REQUIRES: n <= size()
  void remove_prefix(size_t n) {
    assert(n <= size_);
    data_ += n;
    size_ -= n;
  }
  // REQUIRES: n <= size()
  void remove_suffix(size_t n) {
    assert(n <= size_);
    size_ -= n;
  }

  std::string ToString(bool hex = false) const;
  std::string_view ToStringView() const { return std::string_view(data_, size_); }

  // <0, 0, >0 as *this is less than, equal to or greater than b, bytewise.
  int compare(const Slice& b) const {
    const size_t min_len = size_ < b.size_ ? size_ : b.size_;
    int r = min_len == 0 ? 0 : memcmp(data_, b.data_, min_len);
    if (r == 0) {
      if (size_ < b.size_) r = -1;
      else if (size_ > b.size_) r = +1;
    }
    return r;
  }

  bool starts_with(const Slice& x) const {
    return size_ >= x.size_ && (x.size_ == 0 || memcmp(data_, x.data_, x.size_) == 0);
  }
  bool ends_with(const Slice& x) const {
    return size_ >= x.size_ &&
           (x.size_ == 0 || memcmp(data_ + size_ - x.size_, x.data_, x.size_) == 0);
  }

  // Length of the common prefix of *this and b.
  size_t difference_offset(const Slice& b) const {
    size_t off = 0;
    const size_t len = size_ < b.size_ ? size_ : b.size_;
    while (off < len && data_[off] == b.data_[off]) ++off;
    return off;
  }

 protected:
  const char* data_;
  size_t size_;
};

inline bool operator==(const Slice& x, const Slice& y) {
  return x.size() == y.size() && (x.size() == 0 || memcmp(x.data(), y.data(), x.size()) == 0);
}
inline bool operator!=(const Slice& x, const Slice& y) { return !(x == y); }

// A Slice whose bytes stay valid until Reset() or destruction: either a copy held in its own
// buffer (PinSelf) or memory owned elsewhere and kept alive by a registered cleanup
// (PinSlice), such as a cached block or a memtable.
class PinnableSlice : public Slice, public Cleanable {
 public:
  PinnableSlice() = default;
  explicit PinnableSlice(std::string* buf) : buf_(buf) {}
  PinnableSlice(PinnableSlice&& other);
  PinnableSlice& operator=(PinnableSlice&& other);
  PinnableSlice(const PinnableSlice&) = delete;
  PinnableSlice& operator=(const PinnableSlice&) = delete;

  // Points at s, whose memory stays valid until release(arg1, arg2) runs at Reset().
  void PinSlice(const Slice& s, CleanupFunction release, void* arg1, void* arg2) {
    assert(!pinned_);
    pinned_ = true;
    data_ = s.data();
    size_ = s.size();
    RegisterCleanup(release, arg1, arg2);
    assert(pinned_);
  }
  // Points at s and takes over the cleanups registered on `cleanable`.
  void PinSlice(const Slice& s, Cleanable* cleanable) {
    assert(!pinned_);
    pinned_ = true;
    data_ = s.data();
    size_ = s.size();
    if (cleanable != nullptr) cleanable->DelegateCleanupsTo(this);
  }

  // Copies s into the owned buffer.
  void PinSelf(const Slice& s) {
    assert(!pinned_);
    buf_->assign(s.data(), s.size());
    data_ = buf_->data();
    size_ = s.size();
  }
  // Adopts what the caller wrote into GetSelf().
  void PinSelf() {
    assert(!pinned_);
    data_ = buf_->data();
    size_ = buf_->size();
  }

  void remove_suffix(size_t n) {
    assert(n <= size());
    if (pinned_) {
      size_ -= n;
    } else {
      buf_->erase(size() - n, n);
      PinSelf();
    }
  }
  void remove_prefix(size_t n) {
    assert(n <= size());
    if (pinned_) {
      Slice::remove_prefix(n);
    } else {
      // Keeps an owned value at the start of its buffer, which remove_suffix and moves rely on.
      buf_->erase(0, n);
      PinSelf();
    }
  }

  void Reset() {
    Cleanable::Reset();
    pinned_ = false;
    size_ = 0;
  }

  std::string* GetSelf() { return buf_; }
  bool IsPinned() const { return pinned_; }

 private:
  std::string self_space_;
  std::string* buf_ = &self_space_;
  bool pinned_ = false;
};

}  // namespace shale
