// TableReader: opens a block-based table (SST file) written by TableBuilder and serves
// iterators and point lookups over it.
//
// Open reads and checks the footer, the metaindex, the properties, the index block and
// (when the options name the same filter policy the file was written with) the filter.
//
// Blocks and the block cache: with a block cache (table_options.block_cache non-null and
// no_block_cache false) data blocks are looked up in the cache under a key unique to this
// reader (a cache->NewId() prefix + the block offset) and, on a miss, read from the file and
// inserted (unless ReadOptions::fill_cache is false) at low priority. Iterators and the
// values pinned through Get hold a reference to the cached block they point into, so a block
// in use is never freed by eviction. Without a cache each data block is read from the file
// per use and owned by the iterator that reads it. The index and the filter stay in the
// reader for its life, except with cache_index_and_filter_blocks (and a cache), where they
// are put in the cache at Open (high priority when
// cache_index_and_filter_blocks_with_high_priority) and looked up on each use; with
// pin_l0_filter_and_index_blocks_in_cache and TableReaderOptions::is_level0 the reader keeps
// them referenced in the cache for its life. Block cache and filter tickers go to
// TableReaderOptions::statistics.
//
// Thread safety: after Open every method may be called from many threads at once.
// Iterators belong to one thread each and must not outlive the reader.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "shale/cache.h"
#include "shale/cleanable.h"
#include "shale/env.h"
#include "shale/options.h"
#include "shale/table.h"
#include "table/block.h"
#include "table/format.h"
#include "table/table_properties.h"
#include "util/dbformat.h"
#include "util/internal_iterator.h"
#include "util/range_tombstone.h"

namespace shale {

class FilterBitsReader;
class MemTableFilter;
class Statistics;

struct TableReaderOptions {
  const InternalKeyComparator* icmp = nullptr;  // must outlive the reader
  BlockBasedTableOptions table_options;
  std::string file_name;  // for messages
  // The file lives in level 0 (pin_l0_filter_and_index_blocks_in_cache applies).
  bool is_level0 = false;
  // Where block cache and filter tickers are recorded; may be null; must outlive the reader.
  Statistics* statistics = nullptr;
  // The largest sequence number the DB records for the file. An ingested file (its
  // properties name an external_sst_file_version) is read with this as every entry's
  // sequence number, its global sequence number (table/global_seqno.h); 0 reads it as
  // written.
  SequenceNumber largest_seqno = 0;
};

class TableReader {
 public:
  // Corruption (naming the file and offset) for a file that is too short, has a bad
  // footer or magic number, or a damaged metaindex/properties/index block;
  // InvalidArgument if the file was written with another comparator.
  static Status Open(const TableReaderOptions& options, std::unique_ptr<RandomAccessFile>&& file,
                     uint64_t file_size, std::unique_ptr<TableReader>* reader);

  ~TableReader();
  TableReader(const TableReader&) = delete;
  TableReader& operator=(const TableReader&) = delete;

  // Over every entry of the file, in internal-key order. Caller owns the iterator; the
  // reader must outlive it.
  InternalIterator* NewIterator(const ReadOptions& read_options);

  // ---- A key filter built after the fact (table_reader_key_filter.cc).
  // A DB without a filter policy searches every L0 file whose range holds a key. A flush
  // gives its file an in-memory filter of key hashes (FileMetaData::key_filter), but a file
  // from an earlier run of the DB, or one ingested, has none, and every lookup that reaches
  // it reads a data block. Such a reader (level 0, no filter block, keys whose bytes decide
  // equality) counts the lookups that reach it: WantsKeyFilter answers true once,
  // when they are about enough to pay for reading the whole file. The caller then runs
  // BuildKeyFilter away from the read path (db/key_filter_builder.h); once it is published,
  // Get and MultiGet skip a key the filter rules out, as they do for a filter block.
  // Thread-safe.
  bool WantsKeyFilter() const;
  // Reads every entry (without filling the block cache) and publishes a filter of their
  // user keys. Stops early, publishing nothing, when *cancel turns true. A second call
  // once a filter is published does nothing.
  Status BuildKeyFilter(const std::atomic<bool>* cancel);
  bool HasKeyFilter() const { return key_filter_.load(std::memory_order_acquire) != nullptr; }
  // Lookups reaching a filterless L0 reader before it wants a filter. Building reads each
  // block of the file once; each lookup the filter then rules out saves a block read.
  static constexpr uint32_t kLookupsBeforeKeyFilter = 4096;

  // Point lookup: if the filter (asked with the user key of ikey, when whole-key
  // filtering and a filter exist) says no, returns OK without calling handle. Otherwise
  // seeks to the first entry >= ikey and calls handle(arg, entry_ikey, entry_value) for
  // each following entry while handle returns true. The slices passed are valid only
  // during the call. Block errors (checksum, malformed block) are returned.
  using GetHandler = bool (*)(void* arg, const Slice& ikey, const Slice& value);
  Status Get(const ReadOptions& read_options, const Slice& ikey, void* arg, GetHandler handle);

  // The same lookup, with a way to keep the value's bytes instead of copying them:
  // value_pinner (never null here) holds a reference to the block the value lies in; a
  // handler that wants the value to outlive the call moves that reference out with
  // value_pinner->DelegateCleanupsTo(pinnable), e.g. PinnableSlice::PinSlice(value,
  // value_pinner). The bytes then stay valid until pinnable is reset or destroyed, whatever
  // happens to the cache's other entries, to this reader's iterators or to the reader itself;
  // a pin on a cached block needs the block cache object to outlive it (the DB's options
  // hold it), a pin on an uncached block owns the block outright. A handler that does not
  // take the reference leaves it to be dropped when it returns.
  using PinningGetHandler = bool (*)(void* arg, const Slice& ikey, const Slice& value,
                                     Cleanable* value_pinner);
  Status Get(const ReadOptions& read_options, const Slice& ikey, void* arg,
             PinningGetHandler handle);

  // One key of a batched lookup (MultiGet): the internal key, the argument its handler
  // calls get, and the status Get would have returned for it alone.
  struct BatchKey {
    Slice ikey;
    void* arg = nullptr;
    Status status;
  };

  // Get for keys[0, n) at once, each key's handler calls and status exactly those of Get
  // for it alone. The filter and the index are fetched once for the batch; consecutive
  // keys whose entries start in the same data block are served from one fetch of it
  // (one cache lookup or file read), so keys sorted by internal key share the most.
  // REQUIRES: keys sorted in ascending internal-key order for the sharing (any order is
  // answered correctly).
  void MultiGet(const ReadOptions& read_options, BatchKey* keys, size_t n, GetHandler handle);
  void MultiGet(const ReadOptions& read_options, BatchKey* keys, size_t n,
                PinningGetHandler handle);

  const TableProperties& GetTableProperties() const { return props_; }
  // The file's range tombstones (its range-deletion block, read and fragmented once at
  // Open), or null when it has none. Sequence numbers as written, or the global one for an
  // ingested file. Shared: may outlive the reader.
  const std::shared_ptr<const FragmentedRangeTombstones>& range_tombstones() const {
    return range_tombstones_;
  }

  // Approximately where in the file the data for ikey begins: the offset of the data
  // block that would hold it, or the size of all data blocks if ikey is past the last key.
  uint64_t ApproximateOffsetOf(const Slice& ikey) const;

  // Whether the filter says ikey's user key may be present (true without a filter, or when
  // the filter cannot be read). Records no tickers.
  bool KeyMayMatch(const Slice& ikey) const;

  // The block cache this reader uses, or null.
  Cache* block_cache() const { return cache_; }

 private:
  class BlockIterState;
  struct FilterHolder;
  struct BlockRef;
  struct FilterRef;
  struct BlockCursor;
  class ValuePin;
  enum class BlockKind { kData, kIndex, kFilter };

  TableReader(const TableReaderOptions& options, std::unique_ptr<RandomAccessFile>&& file,
              uint64_t file_size);
  Status ReadMetaBlocks();
  // headroom: as ReadBlock's.
  // file: where the block is read from, when not file_ (a ReadaheadFile over it).
  Status ReadBlockAt(const BlockHandle& handle, bool verify, BlockContents* contents,
                     size_t headroom = 0, const RandomAccessFile* file = nullptr) const;
  // Reads the index or filter block at Open: kept in the reader, or put in the cache (and
  // kept referenced when pinned).
  Status LoadIndex(const BlockHandle& handle);
  // Reads and fragments the range-deletion block into range_tombstones_.
  Status LoadRangeTombstones(const BlockHandle& handle);
  // Corruption unless index (at index_handle) is what a builder writes: internal keys of a
  // type a table holds (or the seek type of a shortened separator), strictly increasing,
  // each with a block handle that decodes and points before the index, past the block
  // before it.
  Status CheckIndex(const Block& index, const BlockHandle& index_handle) const;
  Status LoadFilter(const BlockHandle& handle);
  // The block at handle, from the cache or the file (then inserted per fill_cache); file
  // as ReadBlockAt's.
  Status GetBlock(const ReadOptions& read_options, const BlockHandle& handle, BlockKind kind,
                  BlockRef* out, const RandomAccessFile* file = nullptr) const;
  Status GetIndexBlock(const ReadOptions& read_options, BlockRef* out) const;
  // The filter, or out->filter == nullptr when there is none or it cannot be read.
  void GetFilter(const ReadOptions& read_options, FilterRef* out) const;
  // The filter's answer for ikey's user key; *consulted says whether a filter answered.
  bool FilterMayMatch(const ReadOptions& read_options, const Slice& ikey, bool* consulted) const;
  std::string CacheKey(uint64_t offset) const;
  Cache::Priority PriorityOf(BlockKind kind) const;
  // An iterator over the data block index_entry names; its status says why if it cannot
  // be read, or if the block ends past index_entry's key.
  InternalIterator* NewDataBlockIterator(const ReadOptions& read_options,
                                         const Block::Iter& index_entry,
                                         const RandomAccessFile* file = nullptr) const;
  template <typename Visit>
  Status GetImpl(const ReadOptions& read_options, const Slice& ikey, Visit&& visit);
  // GetImpl's lookup of ikey as the file holds it (an ingested file's at sequence 0).
  template <typename Visit>
  Status LookupFrom(const ReadOptions& read_options, const Slice& ikey, Visit&& visit);
  template <typename Visit>
  void MultiGetImpl(const ReadOptions& read_options, BatchKey* keys, size_t n, Visit&& visit);
  // The entries of ikey and after, from index_iter's position (the first index entry >=
  // ikey) on, given to visit until it returns false. The first data block comes from
  // *cursor when it holds that block, and the last block fetched is left there, so the
  // next key of a batch in the same block is not fetched again. *advanced tells whether
  // index_iter was moved past its position. filtered: a filter said the key may match.
  // A lookup trusts the index's separators: a block's keys sort at or before its entry's
  // key. A lookup checks that of each block it reads, and where its answer rests on it
  // for a block it does not read, it reads that block too, so that a table made to mislead
  // gives Corruption rather than a wrong answer. Each block is checked once per reader.
  // CheckBlockEnd: the block index_entry names (block, when the caller has it) ends at or
  // before the entry's key. CheckBlockBefore: the same for the entry before index_iter's
  // (which must be valid and not the first), leaving index_iter where it was.
  // CheckPastIndex: the same for the last entry. CheckBlockAfter: the block after
  // index_iter's starts after target (a reverse seek's answer at the end of index_iter's
  // block relies on it), leaving index_iter where it was.
  Status CheckBlockEnd(const ReadOptions& read_options, const Block::Iter& index_entry,
                       const Block* block = nullptr) const;
  // Decodes the handle of index_entry into *handle and, when ref is non-null, gets the
  // block it names.
  Status ReadIndexedBlock(const ReadOptions& read_options, const Block::Iter& index_entry,
                          BlockHandle* handle, BlockRef* ref) const;
  // The Corruption for a data block (at offset) whose first key sorts before the index
  // separator of the block before it.
  Status StartsBeforeSeparator(uint64_t offset, const Slice& first_key) const;
  bool BlockEndChecked(uint32_t index_entry_offset) const {
    const uint32_t bit = index_entry_offset / kMinIndexEntry;
    return (block_end_checked_[bit / 64].load(std::memory_order_relaxed) >> (bit % 64)) & 1;
  }
  Status CheckBlockBefore(const ReadOptions& read_options, Block::Iter* index_iter) const;
  Status CheckPastIndex(const ReadOptions& read_options, const Block* index) const;
  Status CheckBlockAfter(const ReadOptions& read_options, Block::Iter* index_iter,
                         const Slice& target) const;
  template <typename Visit>
  Status SearchFrom(const ReadOptions& read_options, Block::Iter* index_iter, BlockCursor* cursor,
                    const Slice& ikey, bool filtered, bool* advanced, Visit&& visit);

  const TableReaderOptions options_;
  const std::unique_ptr<RandomAccessFile> file_;
  const uint64_t file_size_;
  Footer footer_;
  TableProperties props_;
  std::shared_ptr<const FragmentedRangeTombstones> range_tombstones_;  // set at Open
  // The file was written with compression (a hint for ReadBlock, set once props_ is read).
  bool expect_compressed_ = false;
  Cache* cache_ = nullptr;  // null: no block cache
  uint64_t cache_id_ = 0;   // this reader's cache key prefix
  // The index: index_fixed_ points at it when the reader keeps it (owned in index_block_,
  // or referenced in the cache by index_pin_); null when it is looked up in the cache.
  std::unique_ptr<Block> index_block_;
  Cache::Handle* index_pin_ = nullptr;
  const Block* index_fixed_ = nullptr;
  // The filter, likewise; has_filter_ says whether there is one to use at all.
  bool has_filter_ = false;
  BlockHandle filter_handle_;
  std::unique_ptr<FilterHolder> filter_owned_;
  Cache::Handle* filter_pin_ = nullptr;
  const FilterHolder* filter_fixed_ = nullptr;
  // One bit per kMinIndexEntry bytes of the index, so one per entry (CheckIndex sees that
  // every entry takes that much: three length bytes and a handle): set once the block the
  // entry names is known to end at or before the entry's key (CheckBlockEnd).
  static constexpr uint32_t kMinIndexEntry = 5;
  std::unique_ptr<std::atomic<uint64_t>[]> block_end_checked_;
  // An ingested file's global sequence number (table/global_seqno.h), or 0.
  SequenceNumber global_seqno_ = 0;
  // Get may use the data blocks' hash indexes: equal user keys are equal bytes under the
  // comparator (data_block_hash_index.h).
  bool use_hash_index_ = false;
  // The key filter built after the fact (see WantsKeyFilter): set once from null, owned.
  std::atomic<const MemTableFilter*> key_filter_{nullptr};
  mutable std::atomic<uint32_t> unfiltered_lookups_{0};
  mutable std::atomic<bool> key_filter_wanted_{false};
  // Whether a lookup key passes the key filter (true when there is none).
  bool KeyFilterMayMatch(const Slice& ikey) const;
};

}  // namespace shale
