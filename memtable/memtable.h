// MemTable: the in-memory write buffer. Every write lands here first (after the WAL);
// reads look here before the SST files. When full it becomes immutable and is flushed.
//
// Each entry lives in the memtable's arena as
//   varint32 internal key length | internal key | varint32 value length | value
// and is indexed by a skip list ordered by the InternalKeyComparator. Under a comparator
// whose equal keys have equal bytes, a filter of user-key hashes (MemTableFilter) lets Get
// answer for a key never added here without searching the skip list.
//
// Range tombstones (DB::DeleteRange) are kept apart from the point entries, in a list under
// a mutex of their own (they are rare; their keys and ends are copied into the arena, so
// they count towards the write buffer), and read as one fragmented view
// (util/range_tombstone.h), built at the first read after a change and shared until the
// next one. Get and the iterators here serve point entries only: the DB above applies the
// tombstones of every memtable and file to them.
//
// Lifetime: intrusive reference count. A new MemTable has no references; whoever keeps
// it calls Ref(), and the last Unref() deletes it. Entries (and the keys and values that
// Get/iterators hand out) live as long as the memtable.
//
// Thread safety: Get, NewIterator and the accessors may run from any thread at any time,
// concurrently with Add. Adds must be serialized, except that Adds passing
// allow_concurrent=true may run together (never overlapping serialized Adds). Ref/Unref are
// thread-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "memtable/concurrent_arena.h"
#include "memtable/memtable_filter.h"
#include "memtable/merge_context.h"
#include "memtable/skiplist.h"
#include "shale/slice.h"
#include "shale/status.h"
#include "shale/types.h"
#include "util/dbformat.h"
#include "util/hash.h"
#include "util/internal_iterator.h"
#include "util/mutexlock.h"
#include "util/range_tombstone.h"
#include "util/read_callback.h"

namespace shale {

class WriteBufferManager;

class MemTable {
 public:
  // cmp is copied. write_buffer_size is the size at which ShouldFlush() turns true.
  // arena_block_size and huge_page_size: Options::arena_block_size (0: derived from
  // write_buffer_size, see Arena::BlockSizeFor) and Options::memtable_huge_page_size.
  // block_pool (may be null): the DB's spare arena blocks, taken from and given back to.
  // with_filter: keep a filter of key hashes (MemTableFilter) if the comparator allows one.
  // It makes Get of an absent key cheap and costs every Add a cache line: the DB asks for it
  // where Gets have been reaching the memtables (see SampledGets). filter_for_bytes: the
  // memtable size the filter is sized for (0: write_buffer_size; less under a memory budget
  // that flushes memtables well before they fill).
  MemTable(const InternalKeyComparator& cmp, size_t write_buffer_size, size_t arena_block_size = 0,
           size_t huge_page_size = 0, std::shared_ptr<ArenaBlockPool> block_pool = nullptr,
           bool with_filter = true, size_t filter_for_bytes = 0);
  MemTable(const MemTable&) = delete;
  MemTable& operator=(const MemTable&) = delete;

  // Counts this memtable's memory in wbm from now on (a DB's memtable budget, see
  // include/shale/write_buffer_manager.h): UpdateCharge reserves what it grew by since the
  // last call, MarkImmutableCharge takes it out of the writable share (when it stops
  // taking writes), and it is freed with the memtable. REQUIRES: called once, before any
  // Add. UpdateCharge and MarkImmutableCharge are called by one thread at a time (the WAL
  // leader, or a holder of the DB mutex that keeps writers out).
  void ChargeTo(std::shared_ptr<WriteBufferManager> wbm) { wbm_ = std::move(wbm); }
  void UpdateCharge();
  void MarkImmutableCharge();

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  // Deletes the memtable when the count reaches zero. REQUIRES: a reference is held.
  void Unref();

  // Adds an entry for (user_key, seq, type). An entry with the same user key, sequence and
  // type as an existing one is dropped (the first stays). Thread-safe with concurrent
  // readers; with allow_concurrent=true also with other such Adds.
  void Add(SequenceNumber seq, ValueType type, const Slice& user_key, const Slice& value,
           bool allow_concurrent = false);

  // Adds a run of entries as Add(..., allow_concurrent) does, one after another, but links
  // them into the index a group at a time: the group's searches then overlap their cache
  // misses (SkipList's batch InsertConcurrently and Insert). An entry is readable only once
  // its group is linked: at the Add that fills the group, at Flush, or at destruction. Used
  // by one thread at a time; with allow_concurrent, others may insert meanwhile.
  class GroupAdder;

  // Adds the range tombstone [begin, end)@seq. Thread-safe with every other call (serialized
  // with other AddRangeTombstone calls by a mutex). An empty range (begin >= end under the
  // comparator) deletes nothing; it is counted but never served.
  void AddRangeTombstone(SequenceNumber seq, const Slice& begin, const Slice& end);

  // The range tombstones added so far, fragmented; null when there are none. The result is
  // immutable and owns its keys: it may outlive the memtable. Thread-safe.
  std::shared_ptr<const FragmentedRangeTombstones> RangeTombstones() const;
  // Whether any range tombstone was added (a relaxed read: a reader that must see the ones
  // added before its snapshot was published reads them through RangeTombstones()).
  bool HasRangeTombstones() const { return num_range_deletes() != 0; }
  uint64_t num_range_deletes() const { return num_range_deletes_.load(std::memory_order_relaxed); }

  // Looks up the newest entry for key.user_key() with sequence <= the LookupKey's sequence
  // that `callback` (may be null) says is visible. Returns true if it found a Put (*s = OK,
  // *value assigned), a Delete or SingleDelete (*s = NotFound) or, without a merge_context,
  // a Merge (*s = NotSupported("no merge operator configured")); *seq_out is set in every
  // found case. Returns false, touching nothing, if the key has no visible entry here.
  //
  // With a merge_context, Merge operands are pushed into it (referenced: the caller keeps
  // this memtable alive while the context is used; with merge_context->want_pins the
  // context can take a reference on this memtable to hand one out) and the search goes on
  // beneath them. It then returns true at the first Put (its value in *value, or pushed as
  // an operand with base_as_operand) or tombstone, or with *s = MergeInProgress when the
  // merge operator's ShouldMerge ends the search; false when the memtable holds nothing
  // older for the key.
  //
  // deleted_below: a range tombstone covering the key at that sequence (the newest the read
  // sees, in this memtable or a newer source): a visible entry older than it is deleted, and
  // ends the search as a Delete at deleted_below would.
  bool Get(const LookupKey& key, std::string* value, Status* s, SequenceNumber* seq_out,
           ReadCallback* callback = nullptr, MergeContext* merge_context = nullptr,
           SequenceNumber deleted_below = 0);

  bool has_filter() const { return filter_ != nullptr; }
  // About how many Gets reached this memtable, divided by kGetSample: each thread counts its
  // Gets privately and adds one here every kGetSample (a shared counter bumped on every Get
  // would bounce its cache line between reader threads).
  static constexpr uint32_t kGetSample = 64;
  uint64_t SampledGets() const { return sampled_gets_.load(std::memory_order_relaxed); }

  // Starts loading the filter line an Add of user_key will write: a caller with other work
  // to do before the Add (the WAL write) hides the cache miss behind it. Only a hint.
  void PrefetchForAdd(const Slice& user_key) const {
    if (filter_ != nullptr) filter_->Prefetch(Hash64(user_key));
  }

  // False only if no entry for user_key was ever added: always when nothing was (a reader
  // of a DB that takes no writes asks its empty memtable on every Get, and must not pay a
  // filter line's cache miss for it); else whenever the memtable keeps no filter.
  // Get and CountSuccessiveMergeEntries ask this first.
  bool MayContain(const Slice& user_key) const {
    if (!has_entries_.load(std::memory_order_relaxed)) return false;
    return filter_ == nullptr || filter_->MayContain(Hash64(user_key));
  }

  // How many Merge operands (up to `limit`) sit on top of user_key's newest entry here,
  // counting every sequence number.
  size_t CountSuccessiveMergeEntries(const Slice& user_key, size_t limit);

  // Iterator over internal keys; key() and value() are pinned for the memtable's life.
  // The caller owns it and must keep the memtable referenced while it lives.
  InternalIterator* NewIterator();

  // Bytes held by the arenas (entries and skip-list nodes), including unused block tails,
  // and by the filter.
  size_t ApproximateMemoryUsage() const {
    return arena_.MemoryUsage() + index_arena_.MemoryUsage() +
           (filter_ == nullptr ? 0 : filter_->bytes());
  }
  // Whether the bytes allocated for entries and their index have reached
  // write_buffer_size. Never true for an empty memtable.
  bool ShouldFlush() const {
    return !IsEmpty() &&
           arena_.AllocatedBytes() + index_arena_.AllocatedBytes() >= write_buffer_size_;
  }

  uint64_t num_entries() const { return num_entries_.load(std::memory_order_relaxed); }
  // Deletions, single deletions and range deletions (which num_entries() counts too).
  uint64_t num_deletes() const { return num_deletes_.load(std::memory_order_relaxed); }
  // Smallest sequence added, kMaxSequenceNumber if empty.
  SequenceNumber first_seqno() const { return first_seqno_.load(std::memory_order_relaxed); }
  bool IsEmpty() const { return num_entries() == 0; }

  // Every write numbered from this sequence on goes to this memtable or a newer one (set by
  // db/ when it becomes the active memtable; 0 if never set): conflict checks that find
  // nothing here can trust that answer for sequences from here on.
  void SetEarliestSequence(SequenceNumber seq) {
    earliest_seqno_.store(seq, std::memory_order_relaxed);
  }
  SequenceNumber earliest_seqno() const { return earliest_seqno_.load(std::memory_order_relaxed); }

  // The WAL file number this memtable's data came from (set by db/), for WAL GC.
  void SetLogNumber(uint64_t n) { log_number_.store(n, std::memory_order_relaxed); }
  uint64_t GetLogNumber() const { return log_number_.load(std::memory_order_relaxed); }
  // Two-phase commit: a committed transaction whose prepared records (logged once, at
  // Prepare) are in WAL `log` was inserted here; that WAL is needed to replay this
  // memtable until it is flushed. Thread-safe.
  void RefLogContainingPrepSection(uint64_t log) {
    uint64_t cur = min_prep_log_.load(std::memory_order_relaxed);
    while ((cur == 0 || log < cur) &&
           !min_prep_log_.compare_exchange_weak(cur, log, std::memory_order_relaxed)) {
    }
  }
  // The smallest such WAL, 0 if none.
  uint64_t MinLogContainingPrepSection() const {
    return min_prep_log_.load(std::memory_order_relaxed);
  }

  const InternalKeyComparator& internal_comparator() const { return comparator_.icmp; }

 private:
  ~MemTable();  // only Unref deletes

  // What the skip list orders: an entry (length-prefixed internal key, then the value, in
  // arena_) by way of its first eight user-key bytes, zero-padded and read big-endian. The
  // skip-list nodes, with this key inline, live apart from the entries in index_arena_: a
  // walk touches only nodes, a few dozen bytes each, instead of entries of hundreds, so a
  // memtable's index stays in the CPU cache far longer; and with the bytewise comparator
  // most comparisons end at the prefixes without reading an entry.
  struct IndexKey {
    uint64_t prefix;  // 0 for other comparators: every comparison reads the entries
    const char* entry;
  };
  struct KeyComparator {
    const InternalKeyComparator icmp;
    // The user comparator is BytewiseComparator(): user keys are compared with an inlined
    // memcmp instead of a virtual call (the skip list calls this a few dozen times a write).
    const bool bytewise;
    explicit KeyComparator(const InternalKeyComparator& c);
    // a and b point to IndexKeys.
    int operator()(const char* a, const char* b) const;
    int CompareEntries(const char* a, const char* b) const;
    IndexKey MakeIndexKey(const char* entry) const;
    // The skip list's coarse order (see SkipList): the IndexKey's prefix.
    uint64_t Prefix(const char* index_key) const {
      uint64_t p;
      memcpy(&p, index_key, sizeof(p));
      return p;
    }
  };
  using Table = SkipList<KeyComparator, ConcurrentArena>;
  static const char* EntryOf(const char* index_key) {
    IndexKey k;
    memcpy(&k, index_key, sizeof(k));
    return k.entry;
  }

  class Iter;

  struct RangeTombstoneRef {
    Slice begin;
    Slice end;
    SequenceNumber seq;
  };

  // The entry encoded into arena_ and the filter told of its key; returns its skip-list key,
  // allocated but not linked.
  char* Encode(SequenceNumber seq, ValueType type, const Slice& user_key, const Slice& value,
               bool allow_concurrent);
  // Counts entries just linked, `deletes` of them tombstones, the smallest sequence first.
  void CountAdded(uint64_t entries, uint64_t deletes, SequenceNumber smallest_seq);
  static bool IsDeletion(ValueType type) {
    return type == kTypeDeletion || type == kTypeSingleDeletion;
  }

  // Adds an operand (or a base value) living in this memtable to merge_context, which may
  // later take a reference on this memtable through keeper_ to hand the operand out.
  void PushTo(MergeContext* merge_context, const Slice& operand);
  static void RefThunk(void* mem) { static_cast<MemTable*>(mem)->Ref(); }
  static void UnrefThunk(void* mem, void* /*unused*/) { static_cast<MemTable*>(mem)->Unref(); }

  KeyComparator comparator_;
  ConcurrentArena arena_;        // entries
  ConcurrentArena index_arena_;  // skip-list nodes
  Table table_;
  const size_t write_buffer_size_;
  // One filter byte for every kBufferBytesPerFilterByte bytes of write buffer: an entry
  // takes at least about 70 bytes of the arenas (its node included), so even the smallest
  // entries get some nine bits each, and 400-byte values about sixty.
  static constexpr size_t kBufferBytesPerFilterByte = 64;
  const std::unique_ptr<MemTableFilter> filter_;  // null: the comparator allows no filter
  // Set by the first Add before it publishes its entry, and never again: unlike
  // num_entries_, its line is not written on every Add, so readers keep it cached.
  std::atomic<bool> has_entries_{false};
  std::atomic<int> refs_{0};
  // The memtable budget charged (ChargeTo), what it was charged, and whether that left the
  // writable share.
  std::shared_ptr<WriteBufferManager> wbm_;
  std::atomic<size_t> charged_{0};
  std::atomic<bool> immutable_charge_{false};
  std::atomic<uint64_t> sampled_gets_{0};
  std::atomic<uint64_t> num_entries_{0};
  std::atomic<uint64_t> num_deletes_{0};
  std::atomic<SequenceNumber> first_seqno_{kMaxSequenceNumber};
  std::atomic<uint64_t> log_number_{0};
  std::atomic<SequenceNumber> earliest_seqno_{0};
  std::atomic<uint64_t> min_prep_log_{0};
  const MergeContext::Keeper keeper_{&RefThunk, &UnrefThunk, this};

  std::atomic<uint64_t> num_range_deletes_{0};
  mutable Mutex range_mu_;
  // In order of addition; begin and end point into arena_.
  std::vector<RangeTombstoneRef> range_tombstones_ GUARDED_BY(range_mu_);
  // The fragmented view of range_tombstones_, or null when it must be rebuilt.
  mutable std::shared_ptr<const FragmentedRangeTombstones> fragmented_ GUARDED_BY(range_mu_);
};

class MemTable::GroupAdder {
 public:
  GroupAdder(MemTable* mem, bool allow_concurrent) : mem_(mem), concurrent_(allow_concurrent) {}
  GroupAdder(const GroupAdder&) = delete;
  GroupAdder& operator=(const GroupAdder&) = delete;
  ~GroupAdder() { Flush(); }

  void Add(SequenceNumber seq, ValueType type, const Slice& user_key, const Slice& value);
  // Links the entries added since the last group was linked.
  void Flush();

  // Entries linked together.
  static constexpr size_t kGroup = Table::kGroup;

 private:
  MemTable* const mem_;
  const bool concurrent_;
  size_t pending_ = 0;
  const char* keys_[kGroup];
  SequenceNumber seqs_[kGroup];
  bool deletes_[kGroup];
};

}  // namespace shale
