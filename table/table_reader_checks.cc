// The checks that keep a TableReader's answers honest on a file made to mislead: the index
// at Open (CheckIndex), and the separators a lookup relies on (CheckBlockEnd and its
// kin), as table_reader.h describes.
#include "table/table_reader.h"
#include "table/table_reader_internal.h"

namespace shale {

Status TableReader::CheckIndex(const Block& index, const BlockHandle& index_handle) const {
  // Checksums catch damage, not a file made to mislead: an index entry out of order or of
  // a type no key has would send a lookup to the block after the one holding its key, and
  // Get would answer with an older value and OK. One pass at open keeps every read honest.
  const std::string* name = &options_.file_name;
  Block::Iter it(&index, options_.icmp, kInternalKeyMin);
  std::string prev;
  uint64_t next_offset = 0;  // where the next data block may start
  uint32_t restart = 0;      // the next restart point to meet
  for (it.SeekToFirst(); it.Valid(); it.Next()) {
    const Slice key = it.key();
    // The binary search of Seek starts at restart points: each must be where an entry of
    // this pass starts, or a lookup would read entries this check never saw.
    if (restart < index.num_restarts() && index.restart_point(restart) <= it.entry_offset()) {
      if (index.restart_point(restart) < it.entry_offset()) {
        return CorruptionAt(name, index_handle.offset(), "index restart point inside an entry");
      }
      restart++;
    }
    const unsigned type = ExtractValueType(key);
    if (!IsValueTypeInKey(type) && type != kValueTypeForSeek) {
      return CorruptionAt(name, index_handle.offset(), "index key of unknown type",
                          key.ToString(true));
    }
    if (!prev.empty() && options_.icmp->Compare(prev, key) >= 0) {
      return CorruptionAt(name, index_handle.offset(), "index keys out of order",
                          key.ToString(true));
    }
    // The block and its trailer end at or before the index (no overflow on the way).
    const uint64_t limit = index_handle.offset();
    Slice value = it.value();
    BlockHandle h;
    if (!h.DecodeFrom(&value).ok() || h.offset() < next_offset || h.size() > limit ||
        h.offset() > limit - h.size() || limit - h.size() - h.offset() < kBlockTrailerSize) {
      return CorruptionAt(name, index_handle.offset(), "bad block handle in index",
                          key.ToString(true));
    }
    next_offset = h.offset() + h.size() + kBlockTrailerSize;
    prev.assign(key.data(), key.size());
  }
  if (it.status().ok() && !prev.empty() && restart != index.num_restarts()) {
    return CorruptionAt(name, index_handle.offset(), "index restart point past its entries");
  }
  return it.status();
}

Status TableReader::ReadIndexedBlock(const ReadOptions& read_options,
                                     const Block::Iter& index_entry, BlockHandle* handle,
                                     BlockRef* ref) const {
  Slice v = index_entry.value();
  Status s = handle->DecodeFrom(&v);
  if (s.ok() && ref != nullptr) s = GetBlock(read_options, *handle, BlockKind::kData, ref);
  return s;
}

Status TableReader::StartsBeforeSeparator(uint64_t offset, const Slice& first_key) const {
  return CorruptionAt(&options_.file_name, offset,
                      "data block starts before its predecessor's separator",
                      first_key.ToString(true));
}

Status TableReader::CheckBlockEnd(const ReadOptions& read_options, const Block::Iter& index_entry,
                                  const Block* block) const {
  if (BlockEndChecked(index_entry.entry_offset())) return Status::OK();
  BlockHandle handle;
  BlockRef ref;
  Status s =
      ReadIndexedBlock(read_options, index_entry, &handle, block == nullptr ? &ref : nullptr);
  if (!s.ok()) return s;
  if (block == nullptr) block = ref.block;
  Block::Iter last(block, options_.icmp, kInternalKeyMin);
  last.SeekToLast();
  if (last.Valid() && options_.icmp->Compare(last.key(), index_entry.key()) > 0) {
    return CorruptionAt(&options_.file_name, handle.offset(),
                        "data block ends past its index separator", last.key().ToString(true));
  }
  if (!last.status().ok()) return last.status();
  const uint32_t bit = index_entry.entry_offset() / kMinIndexEntry;
  block_end_checked_[bit / 64].fetch_or(uint64_t{1} << (bit % 64), std::memory_order_relaxed);
  return Status::OK();
}

Status TableReader::CheckBlockBefore(const ReadOptions& read_options,
                                     Block::Iter* index_iter) const {
  index_iter->Prev();
  Status s = index_iter->Valid()
                 ? CheckBlockEnd(read_options, *index_iter)
                 : CorruptionAt(&options_.file_name, footer_.index_handle().offset(),
                                "index entry has no predecessor");
  index_iter->Next();
  return s;
}

Status TableReader::CheckBlockAfter(const ReadOptions& read_options, Block::Iter* index_iter,
                                    const Slice& target) const {
  index_iter->Next();
  Status s = index_iter->status();
  if (index_iter->Valid()) {
    BlockHandle handle;
    BlockRef ref;
    s = ReadIndexedBlock(read_options, *index_iter, &handle, &ref);
    if (s.ok()) {
      Block::Iter first(ref.block, options_.icmp, kInternalKeyMin);
      first.SeekToFirst();
      s = first.status();
      if (first.Valid() && options_.icmp->Compare(first.key(), target) <= 0) {
        s = StartsBeforeSeparator(handle.offset(), first.key());
      }
    }
    index_iter->Prev();
  } else if (s.ok()) {
    index_iter->SeekToLast();  // it stood on the last entry
  }
  return s;
}

Status TableReader::CheckPastIndex(const ReadOptions& read_options, const Block* index) const {
  Block::Iter last(index, options_.icmp, kInternalKeyMin);
  last.SeekToLast();
  if (!last.Valid()) return last.status();
  return CheckBlockEnd(read_options, last);
}

}  // namespace shale
