#include "table/block_builder.h"

#include <algorithm>
#include <cassert>

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

void BlockBuilder::Add(const Slice& key, const Slice& value) {
  assert(!finished_);
  size_t shared = 0;
  if (counter_ < restart_interval_) {
    shared = Slice(last_key_).difference_offset(key);
  } else {
    restarts_.push_back(static_cast<uint32_t>(buffer_.size()));
    counter_ = 0;
  }
  const size_t non_shared = key.size() - shared;
  PutVarint32(&buffer_, static_cast<uint32_t>(shared));
  PutVarint32(&buffer_, static_cast<uint32_t>(non_shared));
  PutVarint32(&buffer_, static_cast<uint32_t>(value.size()));
  buffer_.append(key.data() + shared, non_shared);
  buffer_.append(value.data(), value.size());

  if (hash_index_ != nullptr) {
    // The user key: the internal key without its 8-byte sequence and type.
    const size_t user_size = key.size() >= 8 ? key.size() - 8 : key.size();
    hash_index_->Add(Slice(key.data(), user_size), restarts_.size() - 1);
  }
  last_key_.resize(shared);
  last_key_.append(key.data() + shared, non_shared);
  counter_++;
  num_entries_++;
}

}  // namespace shale
