#include "shale/cleanable.h"

#include <utility>

namespace shale {

Cleanable::Cleanable() {
  cleanup_.function = nullptr;
  cleanup_.next = nullptr;
}

Cleanable::~Cleanable() { DoCleanup(); }

Cleanable::Cleanable(Cleanable&& other) noexcept : Cleanable() { *this = std::move(other); }

Cleanable& Cleanable::operator=(Cleanable&& other) noexcept {
  if (this != &other) {
    Reset();
    cleanup_ = other.cleanup_;
    other.cleanup_.function = nullptr;
    other.cleanup_.next = nullptr;
  }
  return *this;
}

void Cleanable::DoCleanup() {
  if (cleanup_.function == nullptr) return;
  (*cleanup_.function)(cleanup_.arg1, cleanup_.arg2);
  for (Cleanup* c = cleanup_.next; c != nullptr;) {
    (*c->function)(c->arg1, c->arg2);
    Cleanup* next = c->next;
    delete c;
    c = next;
  }
}

void Cleanable::RegisterCleanup(CleanupFunction function, void* arg1, void* arg2) {
  if (function == nullptr) return;
  Cleanup* c;
  if (cleanup_.function == nullptr) {
    c = &cleanup_;
  } else {
    c = new Cleanup;
    c->next = cleanup_.next;
    cleanup_.next = c;
  }
  c->function = function;
  c->arg1 = arg1;
  c->arg2 = arg2;
}

void Cleanable::RegisterCleanup(Cleanup* c) {
  if (cleanup_.function == nullptr) {
    cleanup_.function = c->function;
    cleanup_.arg1 = c->arg1;
    cleanup_.arg2 = c->arg2;
    delete c;
    return;
  }
  c->next = cleanup_.next;
  cleanup_.next = c;
}

void Cleanable::DelegateCleanupsTo(Cleanable* other) {
  if (cleanup_.function == nullptr) return;
  Cleanup* first = new Cleanup(cleanup_);
  Cleanup* rest = cleanup_.next;
  first->next = nullptr;
  other->RegisterCleanup(first);
  while (rest != nullptr) {
    Cleanup* next = rest->next;
    rest->next = nullptr;
    other->RegisterCleanup(rest);
    rest = next;
  }
  cleanup_.function = nullptr;
  cleanup_.next = nullptr;
}

}  // namespace shale
