#include "table/table_reader.h"

#include <optional>

#include "memtable/memtable_filter.h"
#include "table/filter.h"
#include "table/global_seqno.h"
#include "table/readahead_file.h"
#include "table/table_reader_internal.h"
#include "table/two_level_iterator.h"
#include "util/coding.h"
#include "util/statistics.h"

namespace shale {

namespace {

void DeleteCachedBlock(const Slice& /*key*/, void* value) { delete static_cast<Block*>(value); }

// What a block costs in the cache: its memory, object and slack included.
size_t BlockCharge(const Block& block) { return block.memory_usage(); }

struct KindTickers {
  uint32_t miss, hit, add, bytes_insert;
};

// kind: 0 data, 1 index, 2 filter (the order of TableReader::BlockKind).
KindTickers TickersOf(int kind) {
  switch (kind) {
    case 1:
      return {BLOCK_CACHE_INDEX_MISS, BLOCK_CACHE_INDEX_HIT, BLOCK_CACHE_INDEX_ADD,
              BLOCK_CACHE_INDEX_BYTES_INSERT};
    case 2:
      return {BLOCK_CACHE_FILTER_MISS, BLOCK_CACHE_FILTER_HIT, BLOCK_CACHE_FILTER_ADD,
              BLOCK_CACHE_FILTER_BYTES_INSERT};
    default:
      return {BLOCK_CACHE_DATA_MISS, BLOCK_CACHE_DATA_HIT, BLOCK_CACHE_DATA_ADD,
              BLOCK_CACHE_DATA_BYTES_INSERT};
  }
}

// The cache lookup and insert steps shared by every kind of block, with their tickers.
Cache::Handle* LookupCounted(Cache* cache, const Slice& key, int kind, Statistics* stats) {
  Cache::Handle* h = cache->Lookup(key, stats);
  const KindTickers t = TickersOf(kind);
  if (h != nullptr) {
    RecordTick(stats, BLOCK_CACHE_HIT);
    RecordTick(stats, t.hit);
    RecordTick(stats, BLOCK_CACHE_BYTES_READ, cache->GetUsage(h));
  } else {
    RecordTick(stats, BLOCK_CACHE_MISS);
    RecordTick(stats, t.miss);
  }
  return h;
}

bool InsertCounted(Cache* cache, const Slice& key, void* value, size_t charge,
                   Cache::DeleterFn deleter, Cache::Priority priority, int kind, Statistics* stats,
                   Cache::Handle** handle) {
  Status s = cache->Insert(key, value, charge, deleter, handle, priority);
  if (!s.ok()) {
    RecordTick(stats, BLOCK_CACHE_ADD_FAILURES);
    return false;
  }
  const KindTickers t = TickersOf(kind);
  RecordTick(stats, BLOCK_CACHE_ADD);
  RecordTick(stats, t.add);
  RecordTick(stats, t.bytes_insert, charge);
  RecordTick(stats, BLOCK_CACHE_BYTES_WRITE, charge);
  return true;
}

}  // namespace

// Reads the data blocks an index iterator names.
class TableReader::BlockIterState final : public TwoLevelIteratorState {
 public:
  // index_iter: the two-level iterator's first level, over index.
  BlockIterState(const TableReader* table, const ReadOptions& read_options, const Block* index,
                 Block::Iter* index_iter)
      : table_(table),
        read_options_(read_options),
        index_(index),
        index_iter_(index_iter),
        readahead_(table->file_.get(), table->file_size_, read_options.readahead_size) {}

  // index_iter_ stands on the entry whose value the two-level iterator passes.
  InternalIterator* NewSecondLevelIterator(const Slice& /*index_value*/) override {
    return table_->NewDataBlockIterator(read_options_, *index_iter_, &readahead_);
  }

  // As Get checks (SearchFrom): a seek's answer is at or after target, and when it is a
  // block's first entry, the block before ends before it. Past the last separator, the
  // last block ends before target. And for SeekForPrev: when the answer is a block's last
  // entry, the block after starts past target.
  Status CheckSeek(const Slice& target, bool forward, InternalIterator* /*first_level*/,
                   InternalIterator* second_level) override {
    if (second_level == nullptr || !second_level->Valid()) {
      if (!forward || index_iter_->Valid() || !index_iter_->status().ok()) return Status::OK();
      return table_->CheckPastIndex(read_options_, index_);
    }
    // A valid second level came from NewDataBlockIterator: a Block::Iter.
    auto* data = static_cast<Block::Iter*>(second_level);
    if (!forward) {
      if (!data->AtLastEntry()) return Status::OK();
      return table_->CheckBlockAfter(read_options_, index_iter_, target);
    }
    if (table_->options_.icmp->Compare(data->key(), target) < 0) {
      return table_->StartsBeforeSeparator(footer_offset(), data->key());
    }
    if (data->AtFirstEntry() && !index_iter_->AtFirstEntry()) {
      return table_->CheckBlockBefore(read_options_, index_iter_);
    }
    return Status::OK();
  }

 private:
  uint64_t footer_offset() const { return table_->footer_.index_handle().offset(); }

  const TableReader* const table_;
  const ReadOptions read_options_;
  const Block* const index_;
  Block::Iter* const index_iter_;
  const ReadaheadFile readahead_;  // the data blocks' reads
};

TableReader::TableReader(const TableReaderOptions& options,
                         std::unique_ptr<RandomAccessFile>&& file, uint64_t file_size)
    : options_(options), file_(std::move(file)), file_size_(file_size) {
  const Comparator* ucmp = options_.icmp != nullptr ? options_.icmp->user_comparator() : nullptr;
  use_hash_index_ = ucmp == BytewiseComparator() || ucmp == ReverseBytewiseComparator();
  if (!options_.table_options.no_block_cache && options_.table_options.block_cache != nullptr) {
    cache_ = options_.table_options.block_cache.get();
    cache_id_ = cache_->NewId();
  }
}

TableReader::~TableReader() {
  delete key_filter_.load(std::memory_order_acquire);
  if (index_pin_ != nullptr) cache_->Release(index_pin_);
  if (filter_pin_ != nullptr) cache_->Release(filter_pin_);
  // Nobody else can reach this reader's index and filter entries: free them now rather
  // than when they age out. (Data blocks are left to the LRU.)
  if (cache_ != nullptr && options_.table_options.cache_index_and_filter_blocks) {
    cache_->Erase(CacheKey(footer_.index_handle().offset()));
    if (has_filter_) cache_->Erase(CacheKey(filter_handle_.offset()));
  }
}

Status TableReader::Open(const TableReaderOptions& options,
                         std::unique_ptr<RandomAccessFile>&& file, uint64_t file_size,
                         std::unique_ptr<TableReader>* reader) {
  reader->reset();
  const std::string* name = &options.file_name;
  if (file_size < Footer::kEncodedLength) {
    return CorruptionAt(name, 0, "file is too short to be an sstable",
                        std::to_string(file_size) + " bytes");
  }
  const uint64_t footer_offset = file_size - Footer::kEncodedLength;
  char scratch[Footer::kEncodedLength];
  Slice input;
  Status s = file->Read(footer_offset, Footer::kEncodedLength, &input, scratch);
  if (!s.ok()) return s;
  if (input.size() != Footer::kEncodedLength) {
    return CorruptionAt(name, footer_offset, "truncated footer read");
  }
  std::unique_ptr<TableReader> table(new TableReader(options, std::move(file), file_size));
  s = table->footer_.DecodeFrom(input);
  if (s.IsCorruption()) return CorruptionAt(name, footer_offset, "bad table footer", s.ToString());
  if (!s.ok()) return Status::NotSupported(options.file_name, s.ToString());
  s = table->ReadMetaBlocks();
  if (s.ok()) *reader = std::move(table);
  return s;
}

Status TableReader::ReadBlockAt(const BlockHandle& handle, bool verify, BlockContents* contents,
                                size_t headroom, const RandomAccessFile* file) const {
  BlockReadSource source;
  source.file = file != nullptr ? file : file_.get();
  source.file_size = file_size_;
  source.file_name = &options_.file_name;
  source.checksum_type = footer_.checksum_type();
  source.expect_compressed = expect_compressed_;
  StopWatch sw(nullptr, options_.statistics, SST_READ_MICROS);
  return ReadBlock(source, handle, verify, contents, headroom);
}

std::string TableReader::CacheKey(uint64_t offset) const {
  std::string key;
  PutFixed64(&key, cache_id_);
  PutVarint64(&key, offset);
  return key;
}

Cache::Priority TableReader::PriorityOf(BlockKind kind) const {
  if (kind != BlockKind::kData &&
      options_.table_options.cache_index_and_filter_blocks_with_high_priority) {
    return Cache::Priority::HIGH;
  }
  return Cache::Priority::LOW;
}

Status TableReader::ReadMetaBlocks() {
  // Every block read at open is verified, whatever paranoid_checks says: a flipped bit in
  // an index or filter would otherwise make lookups skip the file and answer with an older
  // value and OK.
  const bool verify = true;
  const std::string* name = &options_.file_name;
  const BlockHandle& meta_handle = footer_.metaindex_handle();

  BlockContents contents;
  Status s = ReadBlockAt(meta_handle, verify, &contents);
  if (!s.ok()) return s;
  Block metaindex(std::move(contents), name, meta_handle.offset());

  const std::shared_ptr<const FilterPolicy>& policy = options_.table_options.filter_policy;
  const std::string filter_name =
      policy != nullptr ? std::string("filter.") + policy->CompatibilityName() : std::string();
  bool have_properties = false;
  BlockHandle properties_handle;
  bool have_filter = false;
  BlockHandle filter_handle;
  bool have_range_del = false;
  BlockHandle range_del_handle;
  {
    std::unique_ptr<InternalIterator> iter(metaindex.NewIterator(BytewiseComparator()));
    for (iter->SeekToFirst(); iter->Valid(); iter->Next()) {
      BlockHandle* target = nullptr;
      if (iter->key() == Slice("properties")) {
        target = &properties_handle;
        have_properties = true;
      } else if (!filter_name.empty() && iter->key() == Slice(filter_name)) {
        target = &filter_handle;
        have_filter = true;
      } else if (iter->key() == Slice(kRangeDelBlockName)) {
        target = &range_del_handle;
        have_range_del = true;
      } else {
        continue;
      }
      Slice v = iter->value();
      if (!target->DecodeFrom(&v).ok()) {
        return CorruptionAt(name, meta_handle.offset(), "bad block handle in metaindex",
                            iter->key());
      }
    }
    if (!iter->status().ok()) return iter->status();
  }

  if (!have_properties) {
    return CorruptionAt(name, meta_handle.offset(), "metaindex lacks the properties block");
  }
  s = ReadBlockAt(properties_handle, verify, &contents);
  if (!s.ok()) return s;
  s = DecodeTableProperties(contents.data, name, properties_handle.offset(), &props_);
  if (!s.ok()) return s;
  expect_compressed_ = props_.compression_name != CompressionTypeToString(kNoCompression);
  if (props_.external_sst_file_version != 0) global_seqno_ = options_.largest_seqno;
  const char* cmp_name = options_.icmp->user_comparator()->Name();
  if (props_.comparator_name != cmp_name) {
    return Status::InvalidArgument(
        options_.file_name + ": written with comparator " + props_.comparator_name,
        std::string("opened with ") + cmp_name);
  }

  s = LoadIndex(footer_.index_handle());
  if (!s.ok()) return s;
  if (have_range_del) {
    s = LoadRangeTombstones(range_del_handle);
    if (!s.ok()) return s;
  }
  if (have_filter && options_.table_options.whole_key_filtering) {
    s = LoadFilter(filter_handle);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status TableReader::LoadRangeTombstones(const BlockHandle& handle) {
  BlockContents contents;
  Status s = ReadBlockAt(handle, /*verify=*/true, &contents);
  if (!s.ok()) return s;
  Block block(std::move(contents), &options_.file_name, handle.offset());
  if (!block.status().ok()) return block.status();
  std::unique_ptr<InternalIterator> iter(block.NewIterator(options_.icmp));
  std::unique_ptr<FragmentedRangeTombstones> list;
  s = FragmentedRangeTombstones::FromIterator(iter.get(), options_.icmp->user_comparator(), &list);
  if (!s.ok()) {
    return CorruptionAt(&options_.file_name, handle.offset(), "bad range-deletion block",
                        s.ToString());
  }
  if (global_seqno_ != 0) {
    // An ingested file's tombstones are read at its global sequence number, as its keys.
    std::vector<RangeTombstone> tombstones = list->ToTombstones();
    for (RangeTombstone& t : tombstones) t.seq = global_seqno_;
    list = std::make_unique<FragmentedRangeTombstones>(std::move(tombstones),
                                                       options_.icmp->user_comparator());
  }
  range_tombstones_ = std::move(list);
  return Status::OK();
}

Status TableReader::LoadIndex(const BlockHandle& handle) {
  BlockContents contents;
  Status s = ReadBlockAt(handle, /*verify=*/true, &contents);
  if (!s.ok()) return s;
  auto block = std::make_unique<Block>(std::move(contents), &options_.file_name, handle.offset());
  s = block->status();
  if (s.ok()) s = CheckIndex(*block, handle);
  if (!s.ok()) return s;
  block_end_checked_ =
      std::make_unique<std::atomic<uint64_t>[]>(block->size() / kMinIndexEntry / 64 + 1);
  const BlockBasedTableOptions& topts = options_.table_options;
  if (cache_ != nullptr && topts.cache_index_and_filter_blocks) {
    const bool pin = topts.pin_l0_filter_and_index_blocks_in_cache && options_.is_level0;
    Cache::Handle* h = nullptr;
    if (InsertCounted(cache_, CacheKey(handle.offset()), block.get(), BlockCharge(*block),
                      &DeleteCachedBlock, PriorityOf(BlockKind::kIndex), 1, options_.statistics,
                      &h)) {
      block.release();
      if (pin) {
        index_pin_ = h;
        index_fixed_ = static_cast<const Block*>(cache_->Value(h));
      } else {
        cache_->Release(h);
      }
      return Status::OK();
    }
    // The cache is full of pinned entries: an unpinned index is read again when needed;
    // a pinned one stays in the reader.
    if (!pin) return Status::OK();
  }
  // Kept for the reader's life and searched by every lookup: worth a dense summary.
  if (options_.icmp->user_comparator() == BytewiseComparator()) block->BuildRestartPrefixes();
  index_block_ = std::move(block);
  index_fixed_ = index_block_.get();
  return Status::OK();
}

Status TableReader::LoadFilter(const BlockHandle& handle) {
  BlockContents contents;
  Status s = ReadBlockAt(handle, /*verify=*/true, &contents);
  if (!s.ok()) return s;
  has_filter_ = true;
  filter_handle_ = handle;
  auto holder = std::make_unique<FilterHolder>(std::move(contents));
  const BlockBasedTableOptions& topts = options_.table_options;
  if (cache_ != nullptr && topts.cache_index_and_filter_blocks) {
    const bool pin = topts.pin_l0_filter_and_index_blocks_in_cache && options_.is_level0;
    Cache::Handle* h = nullptr;
    if (InsertCounted(cache_, CacheKey(handle.offset()), holder.get(), holder->Charge(),
                      &FilterHolder::DeleteCached, PriorityOf(BlockKind::kFilter), 2,
                      options_.statistics, &h)) {
      holder.release();
      if (pin) {
        filter_pin_ = h;
        filter_fixed_ = static_cast<const FilterHolder*>(cache_->Value(h));
      } else {
        cache_->Release(h);
      }
      return Status::OK();
    }
    if (!pin) return Status::OK();
  }
  filter_owned_ = std::move(holder);
  filter_fixed_ = filter_owned_.get();
  return Status::OK();
}

Status TableReader::GetBlock(const ReadOptions& read_options, const BlockHandle& handle,
                             BlockKind kind, BlockRef* out, const RandomAccessFile* file) const {
  const int kind_index = static_cast<int>(kind);
  std::string key;
  if (cache_ != nullptr) {
    key = CacheKey(handle.offset());
    Cache::Handle* h = LookupCounted(cache_, key, kind_index, options_.statistics);
    if (h != nullptr) {
      out->SetCached(cache_, h);
      return Status::OK();
    }
  }
  // Index blocks are always verified (as at open); a data block only when asked, and then
  // an unverified one is never cached, where a later verifying read would trust it.
  const bool verify = read_options.verify_checksums || kind != BlockKind::kData;
  BlockContents contents;
  Status s = ReadBlockAt(handle, verify, &contents, kBlockHeadroom, file);
  if (!s.ok()) return s;
  std::unique_ptr<Block> block =
      Block::New(std::move(contents), &options_.file_name, handle.offset());
  // A malformed block is handed out (its iterators report the error) but never cached.
  if (cache_ != nullptr && read_options.fill_cache && verify && block->status().ok()) {
    Cache::Handle* h = nullptr;
    if (InsertCounted(cache_, key, block.get(), BlockCharge(*block), &DeleteCachedBlock,
                      PriorityOf(kind), kind_index, options_.statistics, &h)) {
      block.release();
      out->SetCached(cache_, h);
      return Status::OK();
    }
  }
  out->SetOwned(std::move(block));
  return Status::OK();
}

Status TableReader::GetIndexBlock(const ReadOptions& read_options, BlockRef* out) const {
  if (index_fixed_ != nullptr) {
    out->block = index_fixed_;
    return Status::OK();
  }
  Status s = GetBlock(read_options, footer_.index_handle(), BlockKind::kIndex, out);
  if (s.ok()) s = out->block->status();
  return s;
}

void TableReader::GetFilter(const ReadOptions& read_options, FilterRef* out) const {
  if (!has_filter_) return;
  if (filter_fixed_ != nullptr) {
    out->filter = filter_fixed_;
    return;
  }
  if (cache_ == nullptr) return;  // not reachable: without a cache the filter is kept
  const std::string key = CacheKey(filter_handle_.offset());
  const int kind_index = static_cast<int>(BlockKind::kFilter);
  Cache::Handle* h = LookupCounted(cache_, key, kind_index, options_.statistics);
  if (h != nullptr) {
    out->cache = cache_;
    out->handle = h;
    out->filter = static_cast<const FilterHolder*>(cache_->Value(h));
    return;
  }
  BlockContents contents;
  // Always verified: a damaged filter could hide a key. An unreadable one only costs the
  // filtering: the lookup goes on without it.
  if (!ReadBlockAt(filter_handle_, /*verify=*/true, &contents).ok()) return;
  auto holder = std::make_unique<FilterHolder>(std::move(contents));
  if (read_options.fill_cache &&
      InsertCounted(cache_, key, holder.get(), holder->Charge(), &FilterHolder::DeleteCached,
                    PriorityOf(BlockKind::kFilter), kind_index, options_.statistics, &h)) {
    holder.release();
    out->cache = cache_;
    out->handle = h;
    out->filter = static_cast<const FilterHolder*>(cache_->Value(h));
    return;
  }
  out->owned = std::move(holder);
  out->filter = out->owned.get();
}

InternalIterator* TableReader::NewDataBlockIterator(const ReadOptions& read_options,
                                                    const Block::Iter& index_entry,
                                                    const RandomAccessFile* file) const {
  BlockHandle handle;
  Slice input = index_entry.value();
  Status s = handle.DecodeFrom(&input);
  if (!s.ok()) {
    return NewEmptyInternalIterator(CorruptionAt(
        &options_.file_name, footer_.index_handle().offset(), "bad block handle in index block"));
  }
  BlockRef ref;
  s = GetBlock(read_options, handle, BlockKind::kData, &ref, file);
  if (s.ok() && !BlockEndChecked(index_entry.entry_offset())) {
    s = CheckBlockEnd(read_options, index_entry, ref.block);
  }
  if (!s.ok()) return NewEmptyInternalIterator(s);
  InternalIterator* iter = ref.block->NewIterator(options_.icmp, kInternalKeyMin);
  ref.TransferTo(iter);
  return iter;
}

InternalIterator* TableReader::NewIterator(const ReadOptions& read_options) {
  BlockRef index;
  Status s = GetIndexBlock(read_options, &index);
  if (!s.ok()) return NewEmptyInternalIterator(s);
  auto* index_iter = new Block::Iter(index.block, options_.icmp, kInternalKeyMin);
  const Block* index_block = index.block;
  index.TransferTo(index_iter);
  InternalIterator* iter = NewTwoLevelIterator(
      std::make_unique<BlockIterState>(this, read_options, index_block, index_iter), index_iter);
  if (global_seqno_ == 0) return iter;
  return NewGlobalSeqnoIterator(iter, global_seqno_, options_.icmp->user_comparator());
}

bool TableReader::FilterMayMatch(const ReadOptions& read_options, const Slice& ikey,
                                 bool* consulted) const {
  *consulted = false;
  if (!has_filter_ || ikey.size() < 8) return true;
  FilterRef ref;
  GetFilter(read_options, &ref);
  if (ref.filter == nullptr || ref.filter->reader == nullptr) return true;
  *consulted = true;
  return ref.filter->reader->MayMatch(ExtractUserKey(ikey));
}

bool TableReader::KeyMayMatch(const Slice& ikey) const {
  bool consulted;
  return FilterMayMatch(ReadOptions(), ikey, &consulted);
}

template <typename Visit>
Status TableReader::GetImpl(const ReadOptions& read_options, const Slice& ikey, Visit&& visit) {
  if (ikey.size() < 8) {
    return Status::InvalidArgument(options_.file_name + ": lookup key shorter than 8 bytes");
  }
  if (global_seqno_ != 0) {
    // An ingested file: its one entry of the key is found at sequence 0 and shown at the
    // global one, which a read below it does not see.
    GlobalSeqnoKey keys(global_seqno_);
    if (!keys.Visible(ikey)) return Status::OK();
    GlobalSeqnoKey shown(global_seqno_);
    return LookupFrom(read_options, keys.LookupKey(ikey),
                      [&](const Slice& k, const Slice& v, BlockRef* block) {
                        return visit(shown.Rewrite(k), v, block);
                      });
  }
  return LookupFrom(read_options, ikey, visit);
}

template <typename Visit>
Status TableReader::LookupFrom(const ReadOptions& read_options, const Slice& ikey, Visit&& visit) {
  Statistics* const stats = options_.statistics;
  if (!KeyFilterMayMatch(ikey)) return Status::OK();
  bool filtered = false;
  if (!FilterMayMatch(read_options, ikey, &filtered)) {
    RecordTick(stats, BLOOM_FILTER_USEFUL);
    return Status::OK();
  }
  if (filtered) RecordTick(stats, BLOOM_FILTER_FULL_POSITIVE);

  BlockRef index;
  Status s = GetIndexBlock(read_options, &index);
  if (!s.ok()) return s;
  Block::Iter index_iter(index.block, options_.icmp, kInternalKeyMin);
  index_iter.Seek(ikey);
  if (!index_iter.Valid() && index_iter.status().ok()) {
    // Past every separator: not in this file, if the last block keeps within its own.
    return CheckPastIndex(read_options, index.block);
  }
  BlockCursor cursor;
  bool advanced;
  return SearchFrom(read_options, &index_iter, &cursor, ikey, filtered, &advanced, visit);
}

template <typename Visit>
Status TableReader::SearchFrom(const ReadOptions& read_options, Block::Iter* index_iter,
                               BlockCursor* cursor, const Slice& ikey, bool filtered,
                               bool* advanced, Visit&& visit) {
  Statistics* const stats = options_.statistics;
  *advanced = false;
  bool first_block = true;
  bool first_entry = true;
  for (; index_iter->Valid(); index_iter->Next(), *advanced = true) {
    BlockHandle handle;
    Slice v = index_iter->value();
    if (!handle.DecodeFrom(&v).ok()) {
      return CorruptionAt(&options_.file_name, footer_.index_handle().offset(),
                          "bad block handle in index block");
    }
    if (cursor->ref.block == nullptr || cursor->offset != handle.offset()) {
      cursor->ref.Reset();
      Status s = GetBlock(read_options, handle, BlockKind::kData, &cursor->ref);
      if (!s.ok()) {
        cursor->ref.Reset();
        return s;
      }
      cursor->offset = handle.offset();
    }
    BlockRef* data = &cursor->ref;
    if (!BlockEndChecked(index_iter->entry_offset())) {
      Status s = CheckBlockEnd(read_options, *index_iter, data->block);
      if (!s.ok()) return s;
    }
    Block::Iter iter(data->block, options_.icmp, kInternalKeyMin);
    if (first_block) {
      first_block = false;
      bool found_in_block = true;
      if (!use_hash_index_ || !data->block->has_hash_index()) {
        iter.Seek(ikey);
      } else {
        // false: the block's hash index answered, not in this file.
        found_in_block = iter.SeekForGet(ikey, options_.icmp->user_comparator());
      }
      if (!found_in_block) return iter.status();
      // ikey sorts at or before this block's first key: the answer rests on the index's
      // word that the block before ends at or before its separator (< ikey).
      if (iter.AtFirstEntry() && !index_iter->AtFirstEntry()) {
        Status s = CheckBlockBefore(read_options, index_iter);
        if (!s.ok()) return s;
      }
    } else {
      iter.SeekToFirst();
      // The separator before this block is >= ikey, and so must be its first key.
      if (iter.Valid() && options_.icmp->Compare(iter.key(), ikey) < 0) {
        return StartsBeforeSeparator(cursor->offset, iter.key());
      }
    }
    for (; iter.Valid(); iter.Next()) {
      if (first_entry) {
        first_entry = false;
        if (filtered && options_.icmp->user_comparator()->Compare(ExtractUserKey(iter.key()),
                                                                  ExtractUserKey(ikey)) == 0) {
          RecordTick(stats, BLOOM_FILTER_FULL_TRUE_POSITIVE);
        }
      }
      if (!visit(iter.key(), iter.value(), data)) return iter.status();
    }
    if (!iter.status().ok()) return iter.status();
  }
  return index_iter->status();
}

template <typename Visit>
void TableReader::MultiGetImpl(const ReadOptions& read_options, BatchKey* keys, size_t n,
                               Visit&& visit) {
  if (global_seqno_ != 0) {
    // An ingested file: each key alone (GetImpl shows its entries at the global sequence).
    for (size_t i = 0; i < n; i++) {
      BatchKey& k = keys[i];
      k.status =
          GetImpl(read_options, k.ikey, [&](const Slice& key, const Slice& value, BlockRef* block) {
            return visit(k.arg, key, value, block);
          });
    }
    return;
  }
  Statistics* const stats = options_.statistics;
  FilterRef filter;
  GetFilter(read_options, &filter);
  const FilterBitsReader* bits = filter.filter != nullptr ? filter.filter->reader.get() : nullptr;
  // The index is fetched when the first key passes the filter, and then kept.
  BlockRef index;
  Status index_status;
  std::optional<Block::Iter> index_iter;
  BlockCursor cursor;
  // Where index_iter was sought last, while it still stands there: a later key at or
  // after that one, and at or before the entry it stands on, needs no seek of its own.
  Slice last_seek;
  bool positioned = false;
  for (size_t i = 0; i < n; i++) {
    BatchKey& k = keys[i];
    if (k.ikey.size() < 8) {
      k.status = Status::InvalidArgument(options_.file_name + ": lookup key shorter than 8 bytes");
      continue;
    }
    if (!KeyFilterMayMatch(k.ikey)) {
      k.status = Status::OK();
      continue;
    }
    const bool filtered = bits != nullptr;
    if (filtered && !bits->MayMatch(ExtractUserKey(k.ikey))) {
      RecordTick(stats, BLOOM_FILTER_USEFUL);
      k.status = Status::OK();
      continue;
    }
    if (filtered) RecordTick(stats, BLOOM_FILTER_FULL_POSITIVE);
    if (!index_iter.has_value() && index_status.ok()) {
      index_status = GetIndexBlock(read_options, &index);
      if (index_status.ok()) index_iter.emplace(index.block, options_.icmp, kInternalKeyMin);
    }
    if (!index_status.ok()) {
      k.status = index_status;
      continue;
    }
    const InternalKeyComparator& icmp = *options_.icmp;
    if (!(positioned && index_iter->Valid() && icmp.Compare(last_seek, k.ikey) <= 0 &&
          icmp.Compare(k.ikey, index_iter->key()) <= 0)) {
      index_iter->Seek(k.ikey);
      last_seek = k.ikey;
      if (!index_iter->Valid() && index_iter->status().ok()) {
        k.status = CheckPastIndex(read_options, index.block);
        positioned = false;
        continue;
      }
    }
    bool advanced;
    k.status = SearchFrom(read_options, &*index_iter, &cursor, k.ikey, filtered, &advanced,
                          [&](const Slice& key, const Slice& value, BlockRef* block) {
                            return visit(k.arg, key, value, block);
                          });
    positioned = !advanced && k.status.ok();
  }
}

Status TableReader::Get(const ReadOptions& read_options, const Slice& ikey, void* arg,
                        GetHandler handle) {
  return GetImpl(read_options, ikey, [&](const Slice& k, const Slice& v, BlockRef* /*block*/) {
    return handle(arg, k, v);
  });
}

Status TableReader::Get(const ReadOptions& read_options, const Slice& ikey, void* arg,
                        PinningGetHandler handle) {
  return GetImpl(read_options, ikey, [&](const Slice& k, const Slice& v, BlockRef* block) {
    ValuePin pin(block);
    const bool more = handle(arg, k, v, &pin);
    pin.Return(more);
    return more;
  });
}

void TableReader::MultiGet(const ReadOptions& read_options, BatchKey* keys, size_t n,
                           GetHandler handle) {
  MultiGetImpl(read_options, keys, n,
               [&](void* arg, const Slice& k, const Slice& v, BlockRef* /*block*/) {
                 return handle(arg, k, v);
               });
}

void TableReader::MultiGet(const ReadOptions& read_options, BatchKey* keys, size_t n,
                           PinningGetHandler handle) {
  MultiGetImpl(read_options, keys, n,
               [&](void* arg, const Slice& k, const Slice& v, BlockRef* block) {
                 ValuePin pin(block);
                 const bool more = handle(arg, k, v, &pin);
                 // The batch's next keys may lie in the same block: the cursor keeps it.
                 pin.Return(/*still_read=*/true);
                 return more;
               });
}

uint64_t TableReader::ApproximateOffsetOf(const Slice& ikey) const {
  BlockRef index_ref;
  if (GetIndexBlock(ReadOptions(), &index_ref).ok()) {
    std::unique_ptr<InternalIterator> index(
        index_ref.block->NewIterator(options_.icmp, kInternalKeyMin));
    index->Seek(ikey);
    if (index->Valid()) {
      BlockHandle handle;
      Slice v = index->value();
      if (handle.DecodeFrom(&v).ok()) return handle.offset();
    }
  }
  // Past the last key, or an unreadable index: the end of the data blocks.
  return props_.data_size;
}

}  // namespace shale
