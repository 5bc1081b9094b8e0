#include "shale/write_buffer_manager.h"

#include <string>

namespace shale {

namespace {

// The cache is charged in entries of this size (RocksDB's size for its dummy entries).
constexpr size_t kDummyEntrySize = 256 << 10;

void NoDelete(const Slice& /*key*/, void* /*value*/) {}

}  // namespace

WriteBufferManager::WriteBufferManager(size_t buffer_size, std::shared_ptr<Cache> cache,
                                       bool allow_stall)
    : buffer_size_(buffer_size), allow_stall_(allow_stall), cache_(std::move(cache)) {}

WriteBufferManager::~WriteBufferManager() {
  std::lock_guard<std::mutex> l(cache_mu_);
  for (Cache::Handle* h : dummy_handles_) cache_->Release(h, /*erase_if_last_ref=*/true);
}

bool WriteBufferManager::ShouldFlush() const {
  const size_t budget = buffer_size();
  if (budget == 0) return false;
  const size_t active = mutable_memtable_memory_usage();
  // The writable memtables past seven eighths of the budget; or every memtable past it,
  // unless more than half of it is already on its way out (flushing will free it).
  if (active > budget - budget / 8) return true;
  return memory_usage() >= budget && active >= budget / 2;
}

void WriteBufferManager::ReserveMem(size_t mem) {
  memory_used_.fetch_add(mem, std::memory_order_relaxed);
  memory_active_.fetch_add(mem, std::memory_order_relaxed);
  if (cache_ != nullptr) UpdateCacheCharge();
}

void WriteBufferManager::ScheduleFreeMem(size_t mem) {
  memory_active_.fetch_sub(mem, std::memory_order_relaxed);
}

void WriteBufferManager::FreeMem(size_t mem) {
  memory_used_.fetch_sub(mem, std::memory_order_relaxed);
  if (cache_ != nullptr) UpdateCacheCharge();
}

size_t WriteBufferManager::dummy_entries_in_cache_usage() const {
  std::lock_guard<std::mutex> l(cache_mu_);
  return dummy_handles_.size() * kDummyEntrySize;
}

void WriteBufferManager::UpdateCacheCharge() {
  std::lock_guard<std::mutex> l(cache_mu_);
  const size_t want = (memory_usage() + kDummyEntrySize - 1) / kDummyEntrySize;
  while (dummy_handles_.size() < want) {
    // A key of its own per entry: the cache id keeps it apart from any block's key.
    const std::string key = "shale.wbm." + std::to_string(cache_->NewId());
    Cache::Handle* h = nullptr;
    // A full strict cache refuses it: the memory is counted here all the same.
    if (!cache_->Insert(key, nullptr, kDummyEntrySize, &NoDelete, &h).ok() || h == nullptr) break;
    dummy_handles_.push_back(h);
  }
  while (dummy_handles_.size() > want) {
    cache_->Release(dummy_handles_.back(), /*erase_if_last_ref=*/true);
    dummy_handles_.pop_back();
  }
}

}  // namespace shale
