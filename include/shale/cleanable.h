// Cleanable: a list of cleanup callbacks run when the object is destroyed or Reset().
// Iterators and pinned slices use it to keep the memory behind what they return alive
// (a cached block, a memtable) exactly as long as the caller holds them.
//
// Thread safety: not thread-safe; one owner at a time.
#pragma once

namespace shale {

class Cleanable {
 public:
  using CleanupFunction = void (*)(void* arg1, void* arg2);

  Cleanable();
  ~Cleanable();
  Cleanable(const Cleanable&) = delete;
  Cleanable& operator=(const Cleanable&) = delete;
  Cleanable(Cleanable&& other) noexcept;
  Cleanable& operator=(Cleanable&& other) noexcept;

  // Runs function(arg1, arg2) when this object is destroyed or Reset().
  void RegisterCleanup(CleanupFunction function, void* arg1, void* arg2);
  // Moves every registered cleanup to `other`, leaving this one with none.
  void DelegateCleanupsTo(Cleanable* other);
  // Runs and forgets every registered cleanup.
  void Reset() {
    DoCleanup();
    cleanup_.function = nullptr;
    cleanup_.next = nullptr;
  }
  bool HasCleanups() const { return cleanup_.function != nullptr; }

 protected:
  struct Cleanup {
    CleanupFunction function;
    void* arg1;
    void* arg2;
    Cleanup* next;
  };
  Cleanup cleanup_;  // the first one inline; the rest linked from it

 private:
  void RegisterCleanup(Cleanup* c);
  void DoCleanup();
};

}  // namespace shale
