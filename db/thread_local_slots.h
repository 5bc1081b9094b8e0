// ThreadLocalSlots: for one owner object, one pointer-sized atomic slot per thread that
// has asked for it. A thread reaches its own slot without a lock (Mine); the owner can
// visit every thread's slot at once (Sweep), which is what lets a column family hand each
// reader thread a cached SuperVersion and take all of them back when it installs a new
// one (column_family.h says how the slot's values are used).
//
// Life of a slot: it is created, empty (nullptr), the first time a thread calls Mine() on
// an owner, and it goes when either side goes. When the thread exits, its slots are
// removed from their owners and a non-null value left in one is handed to the owner's
// on_exit function, on the exiting thread. When the owner is destroyed, the same happens
// to the values still in its slots, on the destroying thread; the thread's stale entry is
// dropped at its next registration or at its exit.
//
// Thread safety: Mine() is called by any thread, each getting its own slot; the slot is an
// atomic that Sweep() and the owner's destructor may change concurrently. Sweep() may run
// concurrently with Mine() and with thread exits. The owner's destructor must not run
// concurrently with Mine() or Sweep() on the same owner (nobody uses an object being
// destroyed) but may with thread exits, which a process-wide registry mutex orders.
//
// Cost: Mine() after the first call on a thread is a thread_local lookup that checks the
// last owner used and then a short list of the thread's slots; the registry mutex is taken
// only when a slot is created or destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "util/mutexlock.h"

namespace shale {

class ThreadLocalSlots {
 public:
  // on_exit(value) releases a non-null value left in a slot whose thread exits or whose
  // owner is destroyed. It runs with this object's lock held, so it must not call back
  // into this object.
  using OnExit = void (*)(void* value);
  explicit ThreadLocalSlots(OnExit on_exit);
  ~ThreadLocalSlots();
  ThreadLocalSlots(const ThreadLocalSlots&) = delete;
  ThreadLocalSlots& operator=(const ThreadLocalSlots&) = delete;

  // The calling thread's slot for this owner, valid until the thread exits or this object
  // is destroyed, whichever comes first.
  std::atomic<void*>* Mine();

  // Exchanges every slot's value with `replacement` and calls fn(arg, old) for each old
  // value that is not null, under this object's lock.
  void Sweep(void* replacement, void (*fn)(void* arg, void* old), void* arg);

  // How many threads hold a slot here, for tests.
  size_t TEST_NumSlots();

 private:
  struct ThreadEntries;
  friend struct ThreadEntries;
  static ThreadEntries& ThisThread();
  std::atomic<void*>* Register();

  const uint64_t id_;  // never reused, so a thread's stale entry cannot match a new owner
  const OnExit on_exit_;
  Mutex mu_;
  std::vector<std::atomic<void*>*> slots_ GUARDED_BY(mu_);  // owned by their threads
};

}  // namespace shale
