// Arena: bump allocation in large blocks, all freed together when the arena dies. The
// memtable allocates its skip-list nodes here.
//
// Thread safety: Allocate* need external synchronization (the memtable's writer lock);
// MemoryUsage() may be read from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

namespace shale {

class Arena {
 public:
  static constexpr size_t kBlockSize = 4096 * 8;

  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  char* Allocate(size_t bytes) {
    if (bytes <= remaining_) {
      char* result = ptr_;
      ptr_ += bytes;
      remaining_ -= bytes;
      return result;
    }
    return AllocateFallback(bytes);
  }
  // Aligned to alignof(std::max_align_t).
  char* AllocateAligned(size_t bytes);

  // Bytes held by the arena, including unused tails of blocks.
  size_t MemoryUsage() const { return memory_usage_.load(std::memory_order_relaxed); }

 private:
  char* AllocateFallback(size_t bytes);
  char* NewBlock(size_t bytes);

  char* ptr_ = nullptr;
  size_t remaining_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::atomic<size_t> memory_usage_{0};
};

}  // namespace shale
