#include "table/readahead_file.h"

#include <algorithm>

namespace shale {

size_t ReadaheadFile::WindowFor(uint64_t offset, size_t n) const {
  size_t size;
  if (fixed_ > 0) {
    size = fixed_;
  } else {
    if (offset == next_offset_) {
      in_order_++;
    } else {
      in_order_ = 0;
      auto_size_ = kAutoInitial;
    }
    next_offset_ = offset + n;
    if (in_order_ < kAutoReadaheadAfter) return 0;
    size = auto_size_;
    auto_size_ = std::min(auto_size_ * 2, kAutoMax);
  }
  if (offset >= file_size_) return 0;
  size = static_cast<size_t>(std::min<uint64_t>(size, file_size_ - offset));
  return size > n ? size : 0;
}

Status ReadaheadFile::Read(uint64_t offset, size_t n, Slice* result, char* scratch) const {
  if (offset >= window_offset_ && offset - window_offset_ <= window_.size() &&
      n <= window_.size() - (offset - window_offset_)) {
    next_offset_ = offset + n;  // in file order, as far as the automatic mode is concerned
    *result = Slice(window_.data() + (offset - window_offset_), n);
    return Status::OK();
  }
  const size_t size = WindowFor(offset, n);
  if (size == 0) return file_->Read(offset, n, result, scratch);
  if (buf_capacity_ < size) {
    buf_.reset(new char[size]);
    buf_capacity_ = size;
  }
  window_ = Slice();
  Slice got;
  Status s = file_->Read(offset, size, &got, buf_.get());
  if (!s.ok()) return s;
  window_offset_ = offset;
  window_ = got;
  // A short window is the end of the file: the caller sees the block's own short read.
  *result = Slice(got.data(), std::min(n, got.size()));
  return Status::OK();
}

}  // namespace shale
