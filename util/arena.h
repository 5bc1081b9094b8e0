// Arena: bump allocation in large blocks, all freed together when the arena dies. The
// memtable allocates its skip-list nodes here.
//
// Blocks: `block_size` bytes each (see BlockSizeFor). A block whose size is a multiple of
// kHugePageSize is placed at a huge-page boundary, so that a kernel whose transparent huge
// pages are "always" on may map it with them. The arena does not ask for them itself
// (madvise MADV_HUGEPAGE): the first touch of a transparent huge page zeroes 2 MiB at
// once, from memory the kernel keeps in whole 2 MiB runs, and in a virtual machine those
// runs are the ones the host has most likely taken back. There, a write-heavy run that
// starts with fresh memtables spent up to 17% of its time (31% of one writer's) in those
// first touches (docs/benchmarks/history-2026-11.md, 2026-11-28 "memtable pages"), more
// than the shorter skip-list walks gave back. With huge_page_size > 0, blocks are first
// taken from the system's reserved huge pages (mmap MAP_HUGETLB, as RocksDB's
// memtable_huge_page_size), falling back to ordinary memory when none are free.
//
// Block reuse: an arena given an ArenaBlockPool takes its full-size blocks from the pool
// first and hands them back when it dies, instead of to the allocator. A memtable's blocks
// are then memory that is already mapped: a new memtable does not pay a page fault (and
// the kernel's zeroing of the page) on its first touch of every page, which otherwise costs
// a write-heavy workload about a tenth of its CPU time.
//
// Thread safety: Allocate* need external synchronization (the memtable's writer lock);
// MemoryUsage() may be read from any thread. ArenaBlockPool is thread-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include "util/mutexlock.h"
#include "util/thread_annotations.h"

namespace shale {

// Spare arena blocks, kept for reuse up to a byte budget (a DB keeps one memtable's worth).
// Blocks are plain malloc/aligned_alloc memory; the pool frees what it holds when it dies.
class ArenaBlockPool {
 public:
  explicit ArenaBlockPool(size_t max_bytes) : max_bytes_(max_bytes) {}
  ~ArenaBlockPool();
  ArenaBlockPool(const ArenaBlockPool&) = delete;
  ArenaBlockPool& operator=(const ArenaBlockPool&) = delete;

  // A kept block of exactly `size` bytes, or nullptr.
  char* Take(size_t size);
  // Keeps the block if the budget allows and returns true; false: the caller frees it.
  bool Give(char* data, size_t size);

  size_t kept_bytes() {
    MutexLock l(&mu_);
    return kept_bytes_;
  }

 private:
  struct Spare {
    char* data;
    size_t size;
  };
  const size_t max_bytes_;
  Mutex mu_;
  std::vector<Spare> spares_ GUARDED_BY(mu_);
  size_t kept_bytes_ GUARDED_BY(mu_) = 0;
};

class Arena {
 public:
  static constexpr size_t kMinBlockSize = 4096;
  static constexpr size_t kDefaultBlockSize = 4096 * 8;
  // The transparent huge page size of x86-64 and most arm64 kernels.
  static constexpr size_t kHugePageSize = 2 << 20;

  // The block size an arena of a memtable of `write_buffer_size` bytes uses when the
  // option `arena_block_size` is `requested` (0: write_buffer_size / 8, at most
  // kHugePageSize). Rounded up to a multiple of kMinBlockSize.
  static size_t BlockSizeFor(size_t requested, size_t write_buffer_size);

  // pool (may be null): where full-size blocks come from first and go back to.
  explicit Arena(size_t block_size = kDefaultBlockSize, size_t huge_page_size = 0,
                 std::shared_ptr<ArenaBlockPool> pool = nullptr);
  ~Arena();
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

  size_t block_size() const { return block_size_; }

 private:
  // How a block was obtained, so that it is given back the same way.
  enum class Source : unsigned char { kMalloc, kMmap };
  struct Block {
    char* data;
    size_t size;
    Source source;
  };

  char* AllocateFallback(size_t bytes);
  char* NewBlock(size_t bytes);
  // A block of reserved huge pages, or nullptr when none are free.
  char* MapHugeTlb(size_t bytes);

  const size_t block_size_;
  const size_t huge_page_size_;
  const std::shared_ptr<ArenaBlockPool> pool_;
  char* ptr_ = nullptr;
  size_t remaining_ = 0;
  std::vector<Block> blocks_;
  std::atomic<size_t> memory_usage_{0};
};

}  // namespace shale
