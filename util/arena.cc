#include "util/arena.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace shale {

namespace {
size_t RoundUp(size_t n, size_t unit) { return (n + unit - 1) / unit * unit; }
}  // namespace

size_t Arena::BlockSizeFor(size_t requested, size_t write_buffer_size) {
  constexpr size_t kMaxBlockSize = size_t{2} << 30;  // RocksDB's upper bound too
  size_t size = requested != 0 ? requested : std::min(write_buffer_size / 8, kHugePageSize);
  return RoundUp(std::clamp(size, kMinBlockSize, kMaxBlockSize), kMinBlockSize);
}

ArenaBlockPool::~ArenaBlockPool() {
  MutexLock l(&mu_);
  for (const Spare& b : spares_) free(b.data);
}

char* ArenaBlockPool::Take(size_t size) {
  MutexLock l(&mu_);
  for (size_t i = 0; i < spares_.size(); i++) {
    if (spares_[i].size != size) continue;
    char* data = spares_[i].data;
    spares_[i] = spares_.back();
    spares_.pop_back();
    kept_bytes_ -= size;
    return data;
  }
  return nullptr;
}

bool ArenaBlockPool::Give(char* data, size_t size) {
  MutexLock l(&mu_);
  if (kept_bytes_ + size > max_bytes_) return false;
  spares_.push_back(Spare{data, size});
  kept_bytes_ += size;
  return true;
}

Arena::Arena(size_t block_size, size_t huge_page_size, std::shared_ptr<ArenaBlockPool> pool)
    : block_size_(RoundUp(std::max(block_size, kMinBlockSize), kMinBlockSize)),
      huge_page_size_(huge_page_size),
      pool_(std::move(pool)) {}

Arena::~Arena() {
  for (const Block& b : blocks_) {
    if (b.source == Source::kMmap) {
      munmap(b.data, b.size);
    } else if (pool_ == nullptr || b.size != block_size_ || !pool_->Give(b.data, b.size)) {
      free(b.data);
    }
  }
}

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
  return AllocateFallback(bytes);  // new blocks are at least max_align_t aligned
}

char* Arena::AllocateFallback(size_t bytes) {
  if (bytes > block_size_ / 4) {
    // A big object gets its own block so the current block's tail is not wasted.
    return NewBlock(bytes);
  }
  ptr_ = NewBlock(block_size_);
  remaining_ = block_size_;
  char* result = ptr_;
  ptr_ += bytes;
  remaining_ -= bytes;
  return result;
}

char* Arena::MapHugeTlb(size_t bytes) {
#ifdef MAP_HUGETLB
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB,
                 -1, 0);
  if (p != MAP_FAILED) return static_cast<char*>(p);
#else
  (void)bytes;
#endif
  return nullptr;
}

char* Arena::NewBlock(size_t bytes) {
  Block block{nullptr, bytes, Source::kMalloc};
  if (huge_page_size_ > 0 && bytes == block_size_) {
    block.size = RoundUp(bytes, huge_page_size_);
    block.data = MapHugeTlb(block.size);
    if (block.data != nullptr) {
      block.source = Source::kMmap;
    } else {
      block.size = bytes;  // no reserved huge pages free: ordinary memory
    }
  }
  // A full-size block from the pool was made below by an arena of the same block size, so
  // it already has the alignment such a block gets.
  if (block.data == nullptr && pool_ != nullptr && bytes == block_size_) {
    block.data = pool_->Take(bytes);
  }
  if (block.data == nullptr && bytes % kHugePageSize == 0) {
    block.data = static_cast<char*>(aligned_alloc(kHugePageSize, bytes));
  }
  if (block.data == nullptr) block.data = static_cast<char*>(malloc(bytes));
  if (block.data == nullptr) throw std::bad_alloc();
  blocks_.push_back(block);
  memory_usage_.fetch_add(block.size + sizeof(Block), std::memory_order_relaxed);
  return block.data;
}

}  // namespace shale
