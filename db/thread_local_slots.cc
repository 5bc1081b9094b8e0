#include "db/thread_local_slots.h"

#include <algorithm>
#include <memory>
#include <unordered_map>

namespace shale {

namespace {

// The owners alive in the process, so that an exiting thread finds out whether the owner
// of each of its slots still exists. Never destroyed: threads may exit after static
// destructors have run.
struct Registry {
  Mutex mu;
  std::unordered_map<uint64_t, ThreadLocalSlots*> owners GUARDED_BY(mu);
  uint64_t next_id GUARDED_BY(mu) = 1;
};

Registry& TheRegistry() {
  static Registry* const registry = new Registry;
  return *registry;
}

uint64_t NewOwner(ThreadLocalSlots* owner) {
  Registry& r = TheRegistry();
  MutexLock l(&r.mu);
  const uint64_t id = r.next_id++;
  r.owners.emplace(id, owner);
  return id;
}

}  // namespace

// One thread's slots, by owner id. Destroyed when the thread exits.
struct ThreadLocalSlots::ThreadEntries {
  struct Entry {
    uint64_t owner;
    std::unique_ptr<std::atomic<void*>> slot;
  };
  std::vector<Entry> entries;
  // The last owner looked up, checked first: a reader thread mostly uses one DB.
  uint64_t last_owner = 0;  // owner ids start at 1
  std::atomic<void*>* last_slot = nullptr;

  ThreadEntries() = default;
  ThreadEntries(const ThreadEntries&) = delete;
  ThreadEntries& operator=(const ThreadEntries&) = delete;
  ~ThreadEntries();
};

ThreadLocalSlots::ThreadEntries& ThreadLocalSlots::ThisThread() {
  thread_local ThreadEntries entries;
  return entries;
}

ThreadLocalSlots::ThreadEntries::~ThreadEntries() {
  Registry& r = TheRegistry();
  MutexLock l(&r.mu);
  for (Entry& e : entries) {
    auto it = r.owners.find(e.owner);
    if (it == r.owners.end()) continue;  // the owner went first and emptied the slot
    ThreadLocalSlots* owner = it->second;
    MutexLock lo(&owner->mu_);
    std::erase(owner->slots_, e.slot.get());
    void* value = e.slot->exchange(nullptr, std::memory_order_acq_rel);
    if (value != nullptr) owner->on_exit_(value);
  }
}

ThreadLocalSlots::ThreadLocalSlots(OnExit on_exit) : id_(NewOwner(this)), on_exit_(on_exit) {}

ThreadLocalSlots::~ThreadLocalSlots() {
  Registry& r = TheRegistry();
  MutexLock l(&r.mu);  // an exiting thread cannot be between its lookup and our slots
  r.owners.erase(id_);
  MutexLock lo(&mu_);
  for (std::atomic<void*>* slot : slots_) {
    void* value = slot->exchange(nullptr, std::memory_order_acq_rel);
    if (value != nullptr) on_exit_(value);
  }
  slots_.clear();
}

std::atomic<void*>* ThreadLocalSlots::Mine() {
  ThreadEntries& t = ThisThread();
  if (t.last_owner == id_) return t.last_slot;
  for (ThreadEntries::Entry& e : t.entries) {
    if (e.owner == id_) {
      t.last_owner = id_;
      t.last_slot = e.slot.get();
      return t.last_slot;
    }
  }
  return Register();
}

std::atomic<void*>* ThreadLocalSlots::Register() {
  ThreadEntries& t = ThisThread();
  Registry& r = TheRegistry();
  MutexLock l(&r.mu);
  // Entries of owners that are gone would only pile up on a long-lived thread.
  size_t kept = 0;
  for (ThreadEntries::Entry& e : t.entries) {
    if (r.owners.contains(e.owner)) t.entries[kept++] = std::move(e);
  }
  t.entries.resize(kept);
  t.entries.push_back({id_, std::make_unique<std::atomic<void*>>(nullptr)});
  std::atomic<void*>* slot = t.entries.back().slot.get();
  {
    MutexLock lo(&mu_);
    slots_.push_back(slot);
  }
  t.last_owner = id_;
  t.last_slot = slot;
  return slot;
}

void ThreadLocalSlots::Sweep(void* replacement, void (*fn)(void* arg, void* old), void* arg) {
  MutexLock l(&mu_);
  for (std::atomic<void*>* slot : slots_) {
    void* old = slot->exchange(replacement, std::memory_order_acq_rel);
    if (old != nullptr) fn(arg, old);
  }
}

size_t ThreadLocalSlots::TEST_NumSlots() {
  MutexLock l(&mu_);
  return slots_.size();
}

}  // namespace shale
