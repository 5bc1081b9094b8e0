#include "table/block.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <typeinfo>

#include "util/coding.h"
#include "util/dbformat.h"

namespace shale {

namespace {

// True when cmp is the internal key order over the bytewise user order, which the iterator
// then compares inline. The two virtual calls per comparison (internal, then user
// comparator) were a tenth of a point lookup's instructions: every lookup binary-searches
// an index block and a data block per file it probes. typeid, not dynamic_cast: it is a
// pointer comparison, paid once per iterator.
bool IsInternalBytewise(const Comparator* cmp, size_t min_key_size) {
  return min_key_size >= 8 && typeid(*cmp) == typeid(InternalKeyComparator) &&
         static_cast<const InternalKeyComparator*>(cmp)->user_comparator() == BytewiseComparator();
}

// InternalKeyComparator::Compare over BytewiseComparator, inline.
// REQUIRES: a.size() >= 8 and b.size() >= 8.
inline int CompareInternalBytewise(const Slice& a, const Slice& b) {
  const size_t an = a.size() - 8;
  const size_t bn = b.size() - 8;
  const int r = std::memcmp(a.data(), b.data(), an < bn ? an : bn);
  if (r != 0) return r;
  if (an != bn) return an < bn ? -1 : +1;
  // Same user key: the higher sequence (and type) sorts first.
  const uint64_t af = DecodeFixed64(a.data() + an);
  const uint64_t bf = DecodeFixed64(b.data() + bn);
  return af > bf ? -1 : (af < bf ? +1 : 0);
}

// The first 8 bytes of a user key as a big-endian number, zero-padded. Bytewise order of
// keys implies (non-strict) order of these, so a binary search over them brackets the
// answer; equal ones must be told apart by whole keys.
inline uint64_t UserKeyPrefix(const Slice& user_key) {
  unsigned char b[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::memcpy(b, user_key.data(), user_key.size() < 8 ? user_key.size() : 8);
  uint64_t v = 0;
  for (unsigned char c : b) v = (v << 8) | c;
  return v;
}

}  // namespace

Block::Block(BlockContents&& contents, const std::string* file_name, uint64_t file_offset)
    : contents_(std::move(contents)), file_name_(file_name), file_offset_(file_offset) {
  const size_t n = contents_.data.size();
  const char* data = contents_.data.data();
  if (n < sizeof(uint32_t) || n > UINT32_MAX) {
    malformed_ = "block too small or too large";
    return;
  }
  const uint32_t footer = DecodeFixed32(data + n - sizeof(uint32_t));
  const uint32_t count = footer & ~kHashIndexFooterBit;
  // Where the restart array ends: at the footer, or at the hash index before it.
  size_t restarts_end = n - sizeof(uint32_t);
  if ((footer & kHashIndexFooterBit) != 0 &&
      (count > kMaxRestartsForHashIndex ||
       !hash_index_.Init(data, restarts_end, count, &restarts_end))) {
    malformed_ = "bad hash index in block";
    return;
  }
  const size_t max_restarts = restarts_end / sizeof(uint32_t);
  if (count == 0 || count > max_restarts) {
    malformed_ = "bad restart count in block";
    return;
  }
  const auto restart_offset = static_cast<uint32_t>(restarts_end - count * sizeof(uint32_t));
  // Restart points must be ordered and inside the entry area; the iterator relies on it.
  uint32_t prev = 0;
  for (uint32_t i = 0; i < count; i++) {
    const uint32_t r = DecodeFixed32(data + restart_offset + i * sizeof(uint32_t));
    // Each restart point starts an entry, so none lies at the end (but in an empty block).
    if (r > restart_offset || (r == restart_offset && r != 0) || r < prev || (i == 0 && r != 0)) {
      malformed_ = "bad restart point in block";
      return;
    }
    prev = r;
  }
  restart_offset_ = restart_offset;
  num_restarts_ = count;
}

std::unique_ptr<Block> Block::New(BlockContents&& contents, const std::string* file_name,
                                  uint64_t file_offset) {
  if (contents.allocation == nullptr || contents.headroom < kBlockHeadroom) {
    return std::make_unique<Block>(std::move(contents), file_name, file_offset);
  }
  // The allocation becomes the object's own memory; contents keeps only the view.
  char* mem = contents.allocation.release();
  const size_t capacity = contents.capacity;
  contents.headroom = 0;
  contents.capacity = 0;
  Block* block = ::new (mem) Block(std::move(contents), file_name, file_offset);
  block->placed_capacity_ = capacity;
  return std::unique_ptr<Block>(block);
}

void Block::BuildRestartPrefixes() {
  if (malformed_ != nullptr) return;
  const char* data = contents_.data.data();
  const char* const limit = data + restart_offset_;
  std::vector<uint64_t> prefixes(num_restarts_);
  for (uint32_t i = 0; i < num_restarts_; i++) {
    const uint32_t offset = DecodeFixed32(limit + i * sizeof(uint32_t));
    uint32_t shared = 0, non_shared = 0, value_len = 0;
    const char* p = data + offset;
    if (offset >= restart_offset_ || (p = GetVarint32Ptr(p, limit, &shared)) == nullptr ||
        (p = GetVarint32Ptr(p, limit, &non_shared)) == nullptr ||
        (p = GetVarint32Ptr(p, limit, &value_len)) == nullptr || shared != 0 || non_shared < 8 ||
        non_shared > static_cast<uint64_t>(limit - p)) {
      return;  // the iterator reports the damage; Seek searches without a summary
    }
    prefixes[i] = UserKeyPrefix(Slice(p, non_shared - 8));
  }
  restart_prefixes_ = std::move(prefixes);
}

Status Block::status() const {
  if (malformed_ == nullptr) return Status::OK();
  return CorruptionAt(file_name_, file_offset_, malformed_);
}

Block::Iter::Iter(const Block* block, const Comparator* cmp, size_t min_key_size)
    : block_(block),
      cmp_(cmp),
      min_key_size_(min_key_size),
      internal_bytewise_(IsInternalBytewise(cmp, min_key_size)),
      data_(block->contents_.data.data()),
      restarts_(block->malformed_ == nullptr ? block->restart_offset_ : 0),
      num_restarts_(block->malformed_ == nullptr ? block->num_restarts_ : 0),
      current_(restarts_),
      restart_index_(num_restarts_),
      key_(key_inline_) {
  if (block->malformed_ != nullptr) status_ = block->status();
}

Block::Iter::~Iter() {
  if (key_ != key_inline_) delete[] key_;
}

void Block::Iter::Prev() {
  if (!Valid()) return;
  const uint32_t original = current_;
  while (RestartPoint(restart_index_) >= original) {
    if (restart_index_ == 0) {
      Invalidate();
      return;
    }
    restart_index_--;
  }
  SeekToRestartPoint(restart_index_);
  while (ParseNextKey() && NextEntryOffset() < original) {
  }
}

void Block::Iter::Seek(const Slice& target) {
  if (!status_.ok()) return;
  // The last restart point whose key is < target; the answer is at or after it.
  uint32_t left = 0;
  uint32_t right = num_restarts_ - 1;
  const std::vector<uint64_t>& prefixes = block_->restart_prefixes_;
  if (internal_bytewise_ && !prefixes.empty() && target.size() >= 8) {
    // Restart keys with a smaller prefix sort before target, those with a larger one
    // after it: only the run of equal prefixes (and the one before it) is in doubt.
    const uint64_t tp = UserKeyPrefix(ExtractUserKey(target));
    const auto lo = static_cast<uint32_t>(std::lower_bound(prefixes.begin(), prefixes.end(), tp) -
                                          prefixes.begin());
    uint32_t hi = lo;
    while (hi < num_restarts_ && prefixes[hi] == tp) hi++;
    left = lo > 0 ? lo - 1 : 0;
    right = hi > 0 ? hi - 1 : 0;
  }
  while (left < right) {
    const uint32_t mid = left + (right - left + 1) / 2;
    Slice mid_key;
    if (!RestartKey(mid, &mid_key)) return;
    if (Compare(mid_key, target) < 0) {
      left = mid;
    } else {
      right = mid - 1;
    }
  }
  SeekToRestartPoint(left);
  while (ParseNextKey()) {
    if (Compare(key(), target) >= 0) return;
  }
}

bool Block::Iter::SeekForGet(const Slice& target, const Comparator* ucmp) {
  if (!status_.ok()) return true;
  const Slice user_key = ExtractUserKey(target);
  uint8_t entry = block_->hash_index_.Lookup(user_key);
  // No bucket: the user key is not in this block, and the first key after target may be
  // in the last interval. A collision names no interval.
  const uint32_t restart = entry == kHashNoEntry ? num_restarts_ - 1 : entry;
  if (entry != kHashCollision && restart < num_restarts_) {
    const uint32_t limit = restart + 1 < num_restarts_ ? RestartPoint(restart + 1) : restarts_;
    SeekToRestartPoint(restart);
    // The bucket is trusted only as far as the block bears it out: once an entry of the
    // interval sorts before target, every entry before it does too, and the first one at
    // or after target is the answer. Otherwise (target sorts at or before the interval's
    // first key, or after its last) the binary search below decides.
    bool passed = false;
    while (NextEntryOffset() < limit) {
      if (!ParseNextKey()) return true;  // corruption, in status()
      if (Compare(key(), target) >= 0) {
        if (!passed) break;
        // Another user key: target's is in no later entry of this block, nor in any later
        // block.
        return ucmp->Compare(ExtractUserKey(key()), user_key) == 0;
      }
      passed = true;
    }
  }
  Seek(target);
  return true;
}

void Block::Iter::SeekForPrev(const Slice& target) {
  Seek(target);
  if (!Valid()) {
    SeekToLast();
  }
  while (Valid() && Compare(key(), target) > 0) Prev();
}

void Block::Iter::SeekToFirst() {
  if (!status_.ok()) return;
  SeekToRestartPoint(0);
  ParseNextKey();
}

void Block::Iter::SeekToLast() {
  if (!status_.ok()) return;
  SeekToRestartPoint(num_restarts_ - 1);
  while (ParseNextKey() && NextEntryOffset() < restarts_) {
  }
}

// cmp_->Compare(key, target). key is a decoded entry key (at least min_key_size_ long).
inline int Block::Iter::Compare(const Slice& key, const Slice& target) const {
  if (internal_bytewise_ && target.size() >= 8) return CompareInternalBytewise(key, target);
  return cmp_->Compare(key, target);
}

inline uint32_t Block::Iter::RestartPoint(uint32_t index) const {
  return DecodeFixed32(data_ + restarts_ + index * sizeof(uint32_t));
}

uint32_t Block::restart_point(uint32_t index) const {
  return DecodeFixed32(contents_.data.data() + restart_offset_ + index * sizeof(uint32_t));
}

bool Block::Iter::AtFirstEntry() const { return Valid() && current_ == RestartPoint(0); }

inline void Block::Iter::SeekToRestartPoint(uint32_t index) {
  key_size_ = 0;
  restart_index_ = index;
  value_ = Slice(data_ + RestartPoint(index), 0);
}

void Block::Iter::Invalidate() {
  current_ = restarts_;
  restart_index_ = num_restarts_;
  key_size_ = 0;
  value_ = Slice();
}

void Block::Iter::CorruptionError(uint32_t entry_offset) {
  Invalidate();
  if (status_.ok()) {
    status_ = CorruptionAt(block_->file_name_, block_->file_offset_, "bad entry in block",
                           "entry at block offset " + std::to_string(entry_offset));
  }
}

// Decodes the entry header at offset; false if it does not fit before the restarts.
inline bool Block::Iter::DecodeEntry(uint32_t offset, uint32_t* shared, uint32_t* non_shared,
                                     uint32_t* value_len, const char** key_delta) const {
  const char* p = data_ + offset;
  const char* limit = data_ + restarts_;
  if ((p = GetVarint32Ptr(p, limit, shared)) == nullptr) return false;
  if ((p = GetVarint32Ptr(p, limit, non_shared)) == nullptr) return false;
  if ((p = GetVarint32Ptr(p, limit, value_len)) == nullptr) return false;
  const auto room = static_cast<uint64_t>(limit - p);
  if (static_cast<uint64_t>(*non_shared) + *value_len > room) return false;
  *key_delta = p;
  return true;
}

// The whole key stored at restart point index (which shares nothing with its
// predecessor); false and Corruption if it is malformed.
bool Block::Iter::RestartKey(uint32_t index, Slice* key) {
  const uint32_t offset = RestartPoint(index);
  uint32_t shared, non_shared, value_len;
  const char* delta;
  if (offset >= restarts_ || !DecodeEntry(offset, &shared, &non_shared, &value_len, &delta) ||
      shared != 0 || non_shared < min_key_size_) {
    CorruptionError(offset);
    return false;
  }
  *key = Slice(delta, non_shared);
  return true;
}

void Block::Iter::SetKey(uint32_t shared, const char* delta, uint32_t n) {
  // A key is at most the block's size (the entry was checked to fit), so this cannot wrap.
  const uint32_t size = shared + n;
  if (size > key_capacity_) {
    uint32_t capacity = key_capacity_ * 2;
    while (capacity < size) capacity *= 2;
    char* grown = new char[capacity];
    std::memcpy(grown, key_, shared);
    if (key_ != key_inline_) delete[] key_;
    key_ = grown;
    key_capacity_ = capacity;
  }
  std::memcpy(key_ + shared, delta, n);
  key_size_ = size;
}

// Moves to the entry after the current one; false at the end or on corruption.
bool Block::Iter::ParseNextKey() {
  current_ = NextEntryOffset();
  if (current_ >= restarts_) {
    // The end, with a restart point not yet reached: it lay inside the last entry.
    if (current_ == restarts_ && restart_index_ + 1 < num_restarts_) {
      CorruptionError(current_);
      return false;
    }
    Invalidate();
    return false;
  }
  uint32_t shared, non_shared, value_len;
  const char* delta;
  if (!DecodeEntry(current_, &shared, &non_shared, &value_len, &delta) || shared > key_size_) {
    CorruptionError(current_);
    return false;
  }
  SetKey(shared, delta, non_shared);
  if (key_size_ < min_key_size_) {
    CorruptionError(current_);
    return false;
  }
  value_ = Slice(delta + non_shared, value_len);
  // Entries must start exactly at every restart point they reach, with no shared prefix
  // there: otherwise Prev and Seek, which start from restart points, would parse other
  // entries than a forward scan does.
  while (restart_index_ + 1 < num_restarts_ && RestartPoint(restart_index_ + 1) <= current_) {
    restart_index_++;
    if (RestartPoint(restart_index_) != current_) {
      CorruptionError(current_);
      return false;
    }
  }
  if (RestartPoint(restart_index_) == current_ && shared != 0) {
    CorruptionError(current_);
    return false;
  }
  return true;
}

bool Block::SeekForGet(InternalIterator* iter, const Slice& target, const Comparator* ucmp) const {
  if (malformed_ != nullptr || !hash_index_.present()) {
    iter->Seek(target);
    return true;
  }
  return static_cast<Iter*>(iter)->SeekForGet(target, ucmp);
}

InternalIterator* Block::NewIterator(const Comparator* cmp, size_t min_key_size) const {
  return new Iter(this, cmp, min_key_size);
}

}  // namespace shale
