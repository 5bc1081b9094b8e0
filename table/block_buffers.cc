#include "table/block_buffers.h"

#include <new>

namespace shale {

namespace {

// A thread's kept buffers. Trivially destructible, so that it stays usable while the
// thread's other thread_local objects are destroyed (their destructors may free blocks):
// PoolCloser empties it and marks it closed, and from then on buffers are freed at once.
struct Pool {
  char* bytes[kMaxKeptBuffers];
  size_t capacity[kMaxKeptBuffers];
  size_t count;
  size_t total;
  bool closer_registered;
  bool closed;
};

thread_local Pool pool;

void FreeKept() {
  for (size_t i = 0; i < pool.count; i++) delete[] pool.bytes[i];
  pool.count = 0;
  pool.total = 0;
}

struct PoolCloser {
  bool armed = false;
  ~PoolCloser() {
    FreeKept();
    pool.closed = true;
  }
};

// Constructed (and so destroyed at thread exit) only by threads that keep a buffer.
thread_local PoolCloser closer;

}  // namespace

BlockBuffer AllocateBlockBuffer(size_t n) {
  if (n == 0) n = 1;
  // The best fit among the kept buffers no more than 1/16 larger than asked for.
  const size_t limit = n + n / 16;
  size_t best = pool.count;
  for (size_t i = 0; i < pool.count; i++) {
    const size_t c = pool.capacity[i];
    if (c >= n && c <= limit && (best == pool.count || c < pool.capacity[best])) best = i;
  }
  BlockBuffer out;
  if (best != pool.count) {
    out.bytes.reset(pool.bytes[best]);
    out.capacity = pool.capacity[best];
    pool.total -= out.capacity;
    pool.count--;
    pool.bytes[best] = pool.bytes[pool.count];
    pool.capacity[best] = pool.capacity[pool.count];
    return out;
  }
  out.bytes.reset(new (std::nothrow) char[n]);
  if (out.bytes != nullptr) out.capacity = n;
  return out;
}

void RecycleBlockBuffer(std::unique_ptr<char[]> bytes, size_t capacity) {
  if (!kBlockBuffersKept || bytes == nullptr || pool.closed || pool.count == kMaxKeptBuffers ||
      capacity > kMaxKeptBytes - pool.total) {
    return;  // bytes frees the buffer
  }
  if (!pool.closer_registered) {
    pool.closer_registered = true;
    closer.armed = true;  // constructs it, so that it empties the pool at thread exit
  }
  pool.bytes[pool.count] = bytes.release();
  pool.capacity[pool.count] = capacity;
  pool.count++;
  pool.total += capacity;
}

size_t TEST_KeptBlockBuffers() { return pool.count; }
size_t TEST_KeptBlockBufferBytes() { return pool.total; }
void TEST_FreeKeptBlockBuffers() { FreeKept(); }

}  // namespace shale
