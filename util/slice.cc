#include "shale/slice.h"

#include <utility>

namespace shale {

std::string Slice::ToString(bool hex) const {
  if (!hex) return std::string(data_, size_);
  static const char kDigits[] = "0123456789ABCDEF";
  std::string result;
  result.reserve(2 * size_);
  for (size_t i = 0; i < size_; ++i) {
    auto c = static_cast<unsigned char>(data_[i]);
    result.push_back(kDigits[c >> 4]);
    result.push_back(kDigits[c & 0xf]);
  }
  return result;
}

PinnableSlice::PinnableSlice(PinnableSlice&& other) { *this = std::move(other); }

PinnableSlice& PinnableSlice::operator=(PinnableSlice&& other) {
  if (this == &other) return *this;
  Cleanable::operator=(std::move(other));
  pinned_ = other.pinned_;
  if (other.buf_ == &other.self_space_) {
    self_space_ = std::move(other.self_space_);
    buf_ = &self_space_;
  } else {
    buf_ = other.buf_;
  }
  size_ = other.size_;
  data_ = pinned_ ? other.data_ : buf_->data();
  other.pinned_ = false;
  other.data_ = "";
  other.size_ = 0;
  return *this;
}

}  // namespace shale
