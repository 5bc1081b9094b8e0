// Heap buffers for blocks read from table files, recycled within each thread.
//
// Why: a block cache that misses reads a block into a new buffer of about the block size
// and, on inserting it, evicts an older block and frees that one's buffer. Both buffers
// are beyond the sizes glibc's malloc keeps per thread: each malloc searches its large
// bins and each free consolidates with the (cold) neighbouring chunks, under the arena's
// lock, which another reader thread freeing into the same arena contends for. Here the
// evicted buffer is kept, untouched, for the thread's next read of a block of about the
// same size: a cache miss then costs no malloc and no free.
//
// Thread safety: each thread has its own pool; a buffer may be allocated in one thread
// and recycled in another. Nothing is shared between threads.
//
// Memory: a thread keeps at most kMaxKept buffers of at most kMaxKeptBytes in all; a
// buffer handed out may be up to 1/16 larger than asked for (its capacity says so, and
// callers charge it). A thread's kept buffers are freed when it ends.
#pragma once

#include <cstddef>
#include <memory>

namespace shale {

struct BlockBuffer {
  std::unique_ptr<char[]> bytes;  // new char[] memory: delete[] frees it
  size_t capacity = 0;            // bytes usable from bytes.get() on
};

// Under AddressSanitizer nothing is kept: a recycled buffer goes back to the allocator at
// once, so that a use of a block after it was freed is still caught.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kBlockBuffersKept = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kBlockBuffersKept = false;
#else
inline constexpr bool kBlockBuffersKept = true;
#endif
#else
inline constexpr bool kBlockBuffersKept = true;
#endif

inline constexpr size_t kMaxKeptBuffers = 8;
inline constexpr size_t kMaxKeptBytes = size_t{256} << 10;

// At least n bytes: a kept buffer of this thread's when one fits, else new memory. Empty
// bytes (capacity 0) if there is no memory: a corrupt length must not abort the process.
BlockBuffer AllocateBlockBuffer(size_t n);

// Keeps bytes (new char[] memory of `capacity` bytes, as AllocateBlockBuffer gives) for
// this thread's next AllocateBlockBuffer, or frees it when the pool is full, the buffer
// is too large to keep or the thread is ending.
void RecycleBlockBuffer(std::unique_ptr<char[]> bytes, size_t capacity);

// This thread's kept buffers and their bytes, for tests.
size_t TEST_KeptBlockBuffers();
size_t TEST_KeptBlockBufferBytes();
void TEST_FreeKeptBlockBuffers();

}  // namespace shale
