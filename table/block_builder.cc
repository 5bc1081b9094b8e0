#include "table/block_builder.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "util/coding.h"

namespace shale {

BlockBuilder::BlockBuilder(int restart_interval, bool hash_index, double util_ratio)
    : restart_interval_(std::max(restart_interval, 1)) {
  restarts_.push_back(0);
  if (hash_index) hash_index_ = std::make_unique<DataBlockHashIndexBuilder>(util_ratio);
}

void BlockBuilder::Reset() {
  buffer_.clear();
  restarts_.clear();
  restarts_.push_back(0);
  counter_ = 0;
  num_entries_ = 0;
  finished_ = false;
  last_key_.clear();
  if (hash_index_ != nullptr) hash_index_->Reset();
}

size_t BlockBuilder::CurrentSizeEstimate() const {
  size_t size = buffer_.size() + restarts_.size() * sizeof(uint32_t) + sizeof(uint32_t);
  if (hash_index_ != nullptr && hash_index_->Valid()) size += hash_index_->EstimateSize();
  return size;
}

size_t BlockBuilder::SizeEstimateAfter(const Slice& key, const Slice& value) const {
  size_t size = CurrentSizeEstimate() + key.size() + value.size();
  size += VarintLength(0) + VarintLength(key.size()) + VarintLength(value.size());
  if (counter_ >= restart_interval_) size += sizeof(uint32_t);  // the entry starts a restart
  // The hash index takes about a byte per entry.
  if (hash_index_ != nullptr && hash_index_->Valid()) size += 1;
  return size;
}

Slice BlockBuilder::Finish() {
  for (uint32_t r : restarts_) PutFixed32(&buffer_, r);
  auto footer = static_cast<uint32_t>(restarts_.size());
  if (hash_index_ != nullptr && hash_index_->Valid() && num_entries_ > 0) {
    hash_index_->Finish(&buffer_);
    footer |= kHashIndexFooterBit;
  }
  PutFixed32(&buffer_, footer);
  finished_ = true;
  return Slice(buffer_);
}

namespace {

// Length of the common prefix of a and b, compared 8 bytes at a time: keys in a data block
// share most of their bytes (the user key's prefix, and often all of it), and a byte loop
// over them was a fifth of BlockBuilder's instructions.
size_t SharedPrefixLength(const char* a, size_t a_size, const char* b, size_t b_size) {
  const size_t limit = std::min(a_size, b_size);
  size_t off = 0;
  while (off + 8 <= limit) {
    uint64_t x;
    uint64_t y;
    memcpy(&x, a + off, 8);
    memcpy(&y, b + off, 8);
    if (x != y) return off + static_cast<size_t>(__builtin_ctzll(x ^ y) / 8);  // little-endian
    off += 8;
  }
  while (off < limit && a[off] == b[off]) off++;
  return off;
}

}  // namespace

void BlockBuilder::Add(const Slice& key, const Slice& value) {
  assert(!finished_);
  size_t shared = 0;
  if (counter_ < restart_interval_) {
    shared = SharedPrefixLength(last_key_.data(), last_key_.size(), key.data(), key.size());
  } else {
    restarts_.push_back(static_cast<uint32_t>(buffer_.size()));
    counter_ = 0;
  }
  const size_t non_shared = key.size() - shared;
  // The three lengths go in with one append rather than one each.
  char header[3 * kMaxVarint32Length];
  char* end = EncodeVarint32(header, static_cast<uint32_t>(shared));
  end = EncodeVarint32(end, static_cast<uint32_t>(non_shared));
  end = EncodeVarint32(end, static_cast<uint32_t>(value.size()));
  buffer_.append(header, static_cast<size_t>(end - header));
  buffer_.append(key.data() + shared, non_shared);
  buffer_.append(value.data(), value.size());

  if (hash_index_ != nullptr) {
    // The user key: the internal key without its 8-byte sequence and type.
    const size_t user_size = key.size() >= 8 ? key.size() - 8 : key.size();
    hash_index_->Add(Slice(key.data(), user_size), restarts_.size() - 1);
  }
  last_key_.assign(key.data(), key.size());
  counter_++;
  num_entries_++;
}

}  // namespace shale
