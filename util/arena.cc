#include "util/arena.h"

#include <cstdint>

namespace shale {

char* Arena::AllocateAligned(size_t bytes) {
  constexpr size_t kAlign = alignof(std::max_align_t);
  size_t mod = reinterpret_cast<uintptr_t>(ptr_) & (kAlign - 1);
  size_t slop = mod == 0 ? 0 : kAlign - mod;
  size_t needed = bytes + slop;
  if (needed <= remaining_) {
    char* result = ptr_ + slop;
    ptr_ += needed;
    remaining_ -= needed;
    return result;
  }
  return AllocateFallback(bytes);  // new blocks come from new[], already aligned
}

char* Arena::AllocateFallback(size_t bytes) {
  if (bytes > kBlockSize / 4) {
    // A big object gets its own block so the current block's tail is not wasted.
    return NewBlock(bytes);
  }
  ptr_ = NewBlock(kBlockSize);
  remaining_ = kBlockSize;
  char* result = ptr_;
  ptr_ += bytes;
  remaining_ -= bytes;
  return result;
}

char* Arena::NewBlock(size_t bytes) {
  blocks_.emplace_back(new char[bytes]);
  memory_usage_.fetch_add(bytes + sizeof(char*), std::memory_order_relaxed);
  return blocks_.back().get();
}

}  // namespace shale
