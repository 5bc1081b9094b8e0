// The key filter an L0 table without a filter block gets after the fact, as table_reader.h
// describes: when lookups ask for it, how it is built, and how a lookup consults it.
#include <memory>

#include "memtable/memtable_filter.h"
#include "table/table_reader.h"
#include "util/hash.h"

namespace shale {

bool TableReader::WantsKeyFilter() const {
  if (!options_.is_level0 || has_filter_ || !use_hash_index_ ||
      key_filter_wanted_.load(std::memory_order_relaxed)) {
    return false;
  }
  // Counted exactly, so that when a filter is built does not depend on chance; the
  // counter's line is written only by a file's first kLookupsBeforeKeyFilter lookups.
  if (unfiltered_lookups_.fetch_add(1, std::memory_order_relaxed) + 1 < kLookupsBeforeKeyFilter) {
    return false;
  }
  return !key_filter_wanted_.exchange(true, std::memory_order_relaxed);
}

Status TableReader::BuildKeyFilter(const std::atomic<bool>* cancel) {
  if (HasKeyFilter()) return Status::OK();
  ReadOptions read_options;
  read_options.fill_cache = false;  // one pass over the file must not push out hot blocks
  std::unique_ptr<InternalIterator> it(NewIterator(read_options));
  // Ten bits per entry, as a flush sizes the filter it keeps.
  const uint64_t entries = std::max<uint64_t>(props_.num_entries, 1);
  auto filter = std::make_unique<MemTableFilter>(static_cast<size_t>(entries * 10 / 8));
  uint64_t seen = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    filter->Add(Hash64(ExtractUserKey(it->key())), /*concurrent=*/false);
    if (++seen % 1024 == 0 && cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      return Status::Incomplete("key filter build cancelled");
    }
  }
  if (!it->status().ok()) return it->status();
  // The bits were set by this thread alone; the release publishes them with the pointer.
  const MemTableFilter* expected = nullptr;
  if (key_filter_.compare_exchange_strong(expected, filter.get(), std::memory_order_release,
                                          std::memory_order_relaxed)) {
    filter.release();
  }
  return Status::OK();
}

bool TableReader::KeyFilterMayMatch(const Slice& ikey) const {
  const MemTableFilter* filter = key_filter_.load(std::memory_order_acquire);
  return filter == nullptr || filter->MayContain(Hash64(ExtractUserKey(ikey)));
}

}  // namespace shale
