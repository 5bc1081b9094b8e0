// KeyBuffer: a byte string for the keys an iterator copies on every step (the current
// user key, a seek target). Up to kInline bytes live inside the object, so a DB whose keys
// fit copies them without allocating; a longer key moves the bytes to the heap, where they
// stay for later keys.
//
// Thread safety: one thread at a time. A Slice from slice() is valid until the next Assign
// or SetInternalKey. Not copyable or movable (data may point into the object itself).
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>

#include "shale/slice.h"
#include "util/coding.h"
#include "util/dbformat.h"

namespace shale {

class KeyBuffer {
 public:
  // A 20-byte user key plus its 8-byte footer, with room to spare.
  static constexpr size_t kInline = 48;

  KeyBuffer() = default;
  KeyBuffer(const KeyBuffer&) = delete;
  KeyBuffer& operator=(const KeyBuffer&) = delete;

  Slice slice() const { return Slice(data_, size_); }
  size_t size() const { return size_; }
  bool on_heap() const { return data_ != inline_; }

  void Assign(const Slice& s) {
    Reserve(s.size());
    if (!s.empty()) memcpy(data_, s.data(), s.size());
    size_ = s.size();
  }

  // The internal key (user_key, seq, t); user_key must not point into this buffer.
  void SetInternalKey(const Slice& user_key, SequenceNumber seq, ValueType t) {
    Reserve(user_key.size() + 8);
    if (!user_key.empty()) memcpy(data_, user_key.data(), user_key.size());
    EncodeFixed64(data_ + user_key.size(), PackSequenceAndType(seq, t));
    size_ = user_key.size() + 8;
  }

 private:
  // Room for n bytes; the old contents are not kept.
  void Reserve(size_t n) {
    if (n <= capacity_) return;
    capacity_ = n < 2 * capacity_ ? 2 * capacity_ : n;
    heap_.reset(new char[capacity_]);
    data_ = heap_.get();
  }

  char* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = kInline;
  std::unique_ptr<char[]> heap_;
  char inline_[kInline];
};

}  // namespace shale
