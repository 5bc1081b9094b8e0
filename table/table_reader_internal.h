// What table_reader.cc and table_reader_checks.cc share: the reader's private helper
// structs (a block or filter in use and the reference that keeps it alive). Internal to
// table/; include only from the TableReader's own .cc files.
#pragma once

#include <memory>

#include "shale/cache.h"
#include "shale/cleanable.h"
#include "table/block.h"
#include "table/filter.h"
#include "table/table_reader.h"

namespace shale {

// Keys in data and index blocks are internal keys; shorter ones mean a damaged block.
inline constexpr size_t kInternalKeyMin = 8;

namespace table_reader_internal {

inline void DeleteBlock(void* block, void* /*unused*/) { delete static_cast<Block*>(block); }

inline void DeleteSharedBlock(void* ptr, void* /*unused*/) {
  delete static_cast<std::shared_ptr<Block>*>(ptr);
}

inline void ReleaseCacheHandle(void* cache, void* handle) {
  static_cast<Cache*>(cache)->Release(static_cast<Cache::Handle*>(handle));
}

}  // namespace table_reader_internal

// The filter bits and the reader over them, kept together (in the reader or in the cache).
struct TableReader::FilterHolder {
  BlockContents contents;
  std::unique_ptr<FilterBitsReader> reader;

  explicit FilterHolder(BlockContents&& c)
      : contents(std::move(c)), reader(NewFilterBitsReader(contents.data)) {}
  size_t Charge() const { return contents.data.size() + sizeof(FilterHolder); }
  static void DeleteCached(const Slice& /*key*/, void* value) {
    delete static_cast<FilterHolder*>(value);
  }
};

// A block in use, and the one reference that keeps it alive: a cache handle, sole
// ownership, shared ownership (once pinned by a Get without the cache), or none (the
// reader's own index, alive as long as the reader).
struct TableReader::BlockRef {
  const Block* block = nullptr;
  Cache* cache = nullptr;
  Cache::Handle* handle = nullptr;
  std::unique_ptr<Block> owned;
  std::shared_ptr<Block> shared;

  BlockRef() = default;
  BlockRef(const BlockRef&) = delete;
  BlockRef& operator=(const BlockRef&) = delete;
  ~BlockRef() {
    if (handle != nullptr) cache->Release(handle);
  }

  // Drops the reference held; the object can then be filled again.
  void Reset() {
    if (handle != nullptr) cache->Release(handle);
    block = nullptr;
    cache = nullptr;
    handle = nullptr;
    owned.reset();
    shared.reset();
  }

  void SetCached(Cache* c, Cache::Handle* h) {
    cache = c;
    handle = h;
    block = static_cast<const Block*>(c->Value(h));
  }
  void SetOwned(std::unique_ptr<Block>&& b) {
    owned = std::move(b);
    block = owned.get();
  }

  // Moves the reference into c (run at c's cleanup); this object keeps only the pointer.
  void TransferTo(Cleanable* c) {
    if (handle != nullptr) {
      c->RegisterCleanup(&table_reader_internal::ReleaseCacheHandle, cache, handle);
      handle = nullptr;
    } else if (owned != nullptr) {
      c->RegisterCleanup(&table_reader_internal::DeleteBlock, owned.release(), nullptr);
    } else if (shared != nullptr) {
      c->RegisterCleanup(&table_reader_internal::DeleteSharedBlock,
                         new std::shared_ptr<Block>(std::move(shared)), nullptr);
    }
  }

  // Gives c a reference of its own.
  void PinTo(Cleanable* c) {
    if (handle != nullptr) {
      cache->Ref(handle);
      c->RegisterCleanup(&table_reader_internal::ReleaseCacheHandle, cache, handle);
      return;
    }
    if (owned != nullptr) shared = std::shared_ptr<Block>(std::move(owned));
    if (shared != nullptr) {
      c->RegisterCleanup(&table_reader_internal::DeleteSharedBlock,
                         new std::shared_ptr<Block>(shared), nullptr);
    }
  }
};

// The value_pinner of one PinningGetHandler call. It borrows the BlockRef's cache reference
// instead of taking one of its own: a Ref now and a Release later would each take the cache
// shard's lock, for every entry a lookup shows its handler, found or not. If the handler
// keeps the value (DelegateCleanupsTo), the reference goes with it; if not, Return gives it
// back to the BlockRef untouched. A BlockRef without a cache reference (a block it owns)
// gives the pinner a reference of its own, as PinTo.
class TableReader::ValuePin : public Cleanable {
 public:
  explicit ValuePin(BlockRef* ref) : ref_(ref) {
    if (ref->handle == nullptr) {
      ref->PinTo(this);
      return;
    }
    lent_ = ref->handle;
    ref->handle = nullptr;
    RegisterCleanup(&table_reader_internal::ReleaseCacheHandle, ref->cache, lent_);
  }
  ValuePin(const ValuePin&) = delete;
  ValuePin& operator=(const ValuePin&) = delete;

  // After the handler. still_read: the BlockRef's block is read again (the handler asked for
  // the next entry); it then holds a reference again. Otherwise a BlockRef whose reference
  // the handler kept is left empty.
  void Return(bool still_read) {
    if (lent_ == nullptr) return;
    if (HasCleanups()) {
      // Not kept: the one cleanup registered above is dropped without running.
      cleanup_.function = nullptr;
      ref_->handle = lent_;
    } else if (still_read) {
      ref_->cache->Ref(lent_);
      ref_->handle = lent_;
    } else {
      ref_->block = nullptr;
      ref_->cache = nullptr;
    }
    lent_ = nullptr;
  }

 private:
  BlockRef* const ref_;
  Cache::Handle* lent_ = nullptr;
};

// The data block a lookup used last and its offset in the file (valid when ref.block is
// set): a batch's next key that starts in the same block reuses it.
struct TableReader::BlockCursor {
  uint64_t offset = 0;
  BlockRef ref;
};

// The filter in use and what keeps it alive, as BlockRef.
struct TableReader::FilterRef {
  const FilterHolder* filter = nullptr;
  Cache* cache = nullptr;
  Cache::Handle* handle = nullptr;
  std::unique_ptr<FilterHolder> owned;

  FilterRef() = default;
  FilterRef(const FilterRef&) = delete;
  FilterRef& operator=(const FilterRef&) = delete;
  ~FilterRef() {
    if (handle != nullptr) cache->Release(handle);
  }
};

}  // namespace shale
