// Block: a read-only view of one block laid out by BlockBuilder, and its iterator.
//
// The constructor checks the restart array (count, bounds, order) once; the iterator then
// checks every entry it decodes against the block bounds, so a malformed block yields an
// iterator whose status() is Corruption (naming the file and block offset when the Block
// was told them), never an out-of-bounds read.
//
// Thread safety: a Block is immutable and may be shared by many threads, each with its own
// iterator. An iterator belongs to one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "shale/comparator.h"
#include "table/block_buffers.h"
#include "table/data_block_hash_index.h"
#include "table/format.h"
#include "util/internal_iterator.h"

namespace shale {

class Block {
 public:
  class Iter;

  // file_name (may be null; must outlive the block) and file_offset only label errors.
  explicit Block(BlockContents&& contents, const std::string* file_name = nullptr,
                 uint64_t file_offset = 0);
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  // A heap Block over contents. When contents' allocation has kBlockHeadroom bytes before
  // the data (ReadBlock's headroom argument), the Block object is placed there: the object
  // and its bytes are one allocation, so a block read from a file costs one malloc and,
  // when the cache evicts it, one free of memory that is by then cold.
  static std::unique_ptr<Block> New(BlockContents&& contents, const std::string* file_name,
                                    uint64_t file_offset);

  // Every heap Block is a char array (as ReadBlock's allocations are), so that deleting a
  // placed one frees the allocation it sits at the front of. Deleting a placed Block hands
  // its allocation to the thread's recycled block buffers (block_buffers.h) instead.
  static void* operator new(size_t size) { return ::operator new[](size); }
  static void operator delete(void* p) { ::operator delete[](p); }
  static void operator delete(Block* block, std::destroying_delete_t) {
    const size_t placed_capacity = block->placed_capacity_;
    block->~Block();
    if (placed_capacity == 0) {
      ::operator delete[](block);
    } else {
      RecycleBlockBuffer(std::unique_ptr<char[]>(reinterpret_cast<char*>(block)), placed_capacity);
    }
  }

  size_t size() const { return contents_.data.size(); }
  // The heap memory the block holds: its allocation when placed, else the object and its
  // bytes' allocation (or the bytes, when not owned). What the block cache charges for it.
  size_t memory_usage() const {
    if (placed_capacity_ != 0) return placed_capacity_;
    return sizeof(Block) + (contents_.capacity > size() ? contents_.capacity : size());
  }
  // OK, or Corruption if the restart array is malformed.
  Status status() const;

  // A new iterator over the entries, ordered by cmp (which must be the order they were
  // added in). An entry whose key is shorter than min_key_size is Corruption (pass 8 for
  // internal keys, which the internal comparator may not see shorter). The caller owns it;
  // the block and cmp must outlive it. Values point into the block; keys live in the
  // iterator until it moves. (Block::Iter, below, is the same iterator as a value.)
  InternalIterator* NewIterator(const Comparator* cmp, size_t min_key_size = 0) const;

  // True if the block carries a data block hash index (data_block_hash_index.h).
  bool has_hash_index() const { return hash_index_.present(); }

  // The restart array (0 restarts when the block is malformed): where each restart
  // interval's first entry starts, for checks that the array agrees with the entries.
  uint32_t num_restarts() const { return num_restarts_; }
  uint32_t restart_point(uint32_t index) const;

  // Positions iter for a point lookup of the internal key target, using the hash index
  // when the block has one (else it is iter->Seek(target)). Returns false when the block
  // proves that no entry of target's user key at or below its sequence exists here or in
  // any later block of the table (the lookup is over: not found); true otherwise, with
  // iter as Seek(target) leaves it. A corrupt entry leaves iter invalid with Corruption in
  // status(). A hash index that contradicts the entries (a forged block) may cost a binary
  // search, never a wrong answer.
  // REQUIRES: iter came from this block's NewIterator (with an internal key comparator),
  // target is an internal key, and equal user keys are equal bytes under ucmp.
  bool SeekForGet(InternalIterator* iter, const Slice& target, const Comparator* ucmp) const;

  // Keeps, for each restart point, the first 8 bytes of its key's user key as a big-endian
  // number (zero-padded): Seek then narrows its binary search on this dense array before
  // comparing whole keys, which are spread over the block. For long-lived blocks searched
  // by every lookup (a table's index): a 64 MiB table's index has about 30,000 restart
  // points, whose binary search otherwise misses the CPU cache at nearly every step. Costs
  // 8 bytes per restart point. Leaves no summary if a restart entry is malformed. Only
  // iterators over the internal key order with the bytewise user order use it.
  // REQUIRES: the keys are internal keys in that order; no iterator over the block yet.
  void BuildRestartPrefixes();
  size_t restart_prefix_bytes() const { return restart_prefixes_.size() * sizeof(uint64_t); }

 private:
  BlockContents contents_;
  const std::string* file_name_;
  uint64_t file_offset_;
  uint32_t restart_offset_ = 0;             // where the restart array starts
  uint32_t num_restarts_ = 0;               // 0 when the block is malformed
  const char* malformed_ = nullptr;         // why, when it is
  DataBlockHashIndex hash_index_;           // present() only in data blocks written with one
  std::vector<uint64_t> restart_prefixes_;  // empty, or one per restart point
  size_t placed_capacity_ = 0;              // Block::New placed it: the allocation's size; else 0
};

// The bytes ReadBlock leaves before a block's data for Block::New to place the object in.
inline constexpr size_t kBlockHeadroom = (sizeof(Block) + 15) & ~size_t{15};

// The iterator NewIterator returns, also usable as a local value: a point lookup positions
// one per block it searches, and keeping it on the stack saves an allocation each time.
// Over a malformed block it is empty, with the block's Corruption in status().
//
// Position: current_ is the offset of the current entry; current_ == restarts_ means not
// valid. value_ ends where the next entry begins. The current key is rebuilt from the
// entries' shared prefixes in key_, inline for keys up to kInlineKey bytes.
class Block::Iter final : public InternalIterator {
 public:
  // The block and cmp must outlive the iterator; see NewIterator for min_key_size.
  Iter(const Block* block, const Comparator* cmp, size_t min_key_size);
  ~Iter() override;

  bool Valid() const override { return current_ < restarts_; }
  Status status() const override { return status_; }
  Slice key() const override { return Slice(key_, key_size_); }
  Slice value() const override { return value_; }

  void Next() override {
    if (!Valid()) return;
    ParseNextKey();
  }
  void Prev() override;
  void Seek(const Slice& target) override;
  void SeekForPrev(const Slice& target) override;
  void SeekToFirst() override;
  void SeekToLast() override;

  // See Block::SeekForGet.
  bool SeekForGet(const Slice& target, const Comparator* ucmp);

  // True when the iterator stands on the block's first entry (where SeekToFirst goes).
  bool AtFirstEntry() const;
  // True when the iterator stands on the block's last entry.
  bool AtLastEntry() const { return Valid() && NextEntryOffset() >= restarts_; }
  // Where the current entry starts in the block. REQUIRES: Valid().
  uint32_t entry_offset() const { return current_; }

 private:
  static constexpr size_t kInlineKey = 64;

  int Compare(const Slice& key, const Slice& target) const;
  uint32_t RestartPoint(uint32_t index) const;
  uint32_t NextEntryOffset() const {
    return static_cast<uint32_t>((value_.data() + value_.size()) - data_);
  }
  void SeekToRestartPoint(uint32_t index);
  void Invalidate();
  void CorruptionError(uint32_t entry_offset);
  bool DecodeEntry(uint32_t offset, uint32_t* shared, uint32_t* non_shared, uint32_t* value_len,
                   const char** key_delta) const;
  bool RestartKey(uint32_t index, Slice* key);
  bool ParseNextKey();
  // Keeps the first `shared` bytes of the key and appends delta[0, n).
  // REQUIRES: shared <= key_size_.
  void SetKey(uint32_t shared, const char* delta, uint32_t n);

  const Block* const block_;
  const Comparator* const cmp_;
  const size_t min_key_size_;
  const bool internal_bytewise_;  // compare inline; see IsInternalBytewise in block.cc
  const char* const data_;
  const uint32_t restarts_;
  const uint32_t num_restarts_;
  uint32_t current_;
  uint32_t restart_index_;  // the restart block current_ falls in
  Slice value_;
  Status status_;
  char* key_;  // key_inline_, or a heap buffer of key_capacity_ bytes for longer keys
  uint32_t key_size_ = 0;
  uint32_t key_capacity_ = kInlineKey;
  char key_inline_[kInlineKey];
};

}  // namespace shale
