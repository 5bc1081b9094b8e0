#include "memtable/memtable.h"

#include <cassert>
#include <cstring>
#include <utility>

#include "shale/comparator.h"
#include "shale/write_buffer_manager.h"
#include "util/coding.h"

namespace shale {

namespace {

// Entries were written by Add, so their varints are well formed; kMaxVarint32Length bounds
// the read without knowing where the entry ends.
inline Slice DecodeLengthPrefixed(const char* p) {
  uint32_t len;
  p = GetVarint32Ptr(p, p + kMaxVarint32Length, &len);
  return Slice(p, len);
}

// memcmp without the library call, for the short keys a memtable mostly compares: eight
// bytes at a time as big-endian integers (coding.h asserts a little-endian CPU), then
// four, then one. The skip list compares a few dozen keys a write, so the call and its
// length dispatch showed in profiles.
inline int CompareBytes(const char* a, const char* b, size_t n) {
  for (; n >= 8; a += 8, b += 8, n -= 8) {
    uint64_t x;
    uint64_t y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
  }
  if (n >= 4) {
    uint32_t x;
    uint32_t y;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    if (x != y) return __builtin_bswap32(x) < __builtin_bswap32(y) ? -1 : 1;
    a += 4;
    b += 4;
    n -= 4;
  }
  for (; n > 0; a++, b++, n--) {
    if (*a != *b) return static_cast<unsigned char>(*a) < static_cast<unsigned char>(*b) ? -1 : 1;
  }
  return 0;
}

}  // namespace

MemTable::KeyComparator::KeyComparator(const InternalKeyComparator& c)
    : icmp(c), bytewise(c.user_comparator() == BytewiseComparator()) {}

MemTable::IndexKey MemTable::KeyComparator::MakeIndexKey(const char* entry) const {
  IndexKey k{0, entry};
  if (bytewise) {
    const Slice ikey = DecodeLengthPrefixed(entry);
    const size_t n = ikey.size() - 8 < 8 ? ikey.size() - 8 : 8;
    uint64_t raw = 0;
    memcpy(&raw, ikey.data(), n);
    k.prefix = __builtin_bswap64(raw);
  }
  return k;
}

int MemTable::KeyComparator::operator()(const char* a, const char* b) const {
  IndexKey x;
  IndexKey y;
  memcpy(&x, a, sizeof(x));
  memcpy(&y, b, sizeof(y));
  // Different prefixes decide the order: the first differing byte is within them, or one
  // user key ends inside them (its zero padding sorts first, as a shorter key does).
  if (x.prefix != y.prefix) return x.prefix < y.prefix ? -1 : 1;
  return CompareEntries(x.entry, y.entry);
}

int MemTable::KeyComparator::CompareEntries(const char* a, const char* b) const {
  const Slice ka = DecodeLengthPrefixed(a);
  const Slice kb = DecodeLengthPrefixed(b);
  if (!bytewise) return icmp.Compare(ka, kb);
  // InternalKeyComparator::Compare with the user comparison inlined.
  const size_t ua = ka.size() - 8;
  const size_t ub = kb.size() - 8;
  int r = CompareBytes(ka.data(), kb.data(), ua < ub ? ua : ub);
  if (r != 0) return r;
  if (ua != ub) return ua < ub ? -1 : 1;
  const uint64_t fa = DecodeFixed64(ka.data() + ua);
  const uint64_t fb = DecodeFixed64(kb.data() + ub);
  return fa > fb ? -1 : (fa < fb ? 1 : 0);
}

MemTable::MemTable(const InternalKeyComparator& cmp, size_t write_buffer_size,
                   size_t arena_block_size, size_t huge_page_size,
                   std::shared_ptr<ArenaBlockPool> block_pool, bool with_filter,
                   size_t filter_for_bytes)
    : comparator_(cmp),
      arena_(Arena::BlockSizeFor(arena_block_size, write_buffer_size), huge_page_size, block_pool),
      index_arena_(Arena::BlockSizeFor(arena_block_size, write_buffer_size), huge_page_size,
                   std::move(block_pool)),
      table_(comparator_, &index_arena_),
      write_buffer_size_(write_buffer_size),
      filter_(!with_filter || cmp.user_comparator()->CanKeysWithDifferentByteContentsBeEqual()
                  ? nullptr
                  : std::make_unique<MemTableFilter>(
                        (filter_for_bytes > 0 ? filter_for_bytes : write_buffer_size) /
                        kBufferBytesPerFilterByte)) {}

MemTable::~MemTable() {
  if (wbm_ == nullptr) return;
  const size_t charged = charged_.load(std::memory_order_relaxed);
  if (!immutable_charge_.load(std::memory_order_relaxed)) wbm_->ScheduleFreeMem(charged);
  wbm_->FreeMem(charged);
}

void MemTable::UpdateCharge() {
  if (wbm_ == nullptr || immutable_charge_.load(std::memory_order_relaxed)) return;
  const size_t now = ApproximateMemoryUsage();
  const size_t before = charged_.load(std::memory_order_relaxed);
  if (now > before) {
    wbm_->ReserveMem(now - before);
    charged_.store(now, std::memory_order_relaxed);
  }
}

void MemTable::MarkImmutableCharge() {
  if (wbm_ == nullptr || immutable_charge_.load(std::memory_order_relaxed)) return;
  UpdateCharge();
  immutable_charge_.store(true, std::memory_order_relaxed);
  wbm_->ScheduleFreeMem(charged_.load(std::memory_order_relaxed));
}

void MemTable::Unref() {
  int before = refs_.fetch_sub(1, std::memory_order_acq_rel);
  assert(before > 0);
  if (before == 1) delete this;
}

char* MemTable::Encode(SequenceNumber seq, ValueType type, const Slice& user_key,
                       const Slice& value, bool allow_concurrent) {
  // The filter's line is most likely not in the cache: its load overlaps the copy below.
  const uint64_t hash = filter_ != nullptr ? Hash64(user_key) : 0;
  if (filter_ != nullptr) filter_->Prefetch(hash);
  const size_t ikey_size = user_key.size() + 8;
  const size_t encoded_len =
      VarintLength(ikey_size) + ikey_size + VarintLength(value.size()) + value.size();
  char* buf = arena_.Allocate(encoded_len);
  char* p = EncodeVarint32(buf, static_cast<uint32_t>(ikey_size));
  memcpy(p, user_key.data(), user_key.size());
  p += user_key.size();
  EncodeFixed64(p, PackSequenceAndType(seq, type));
  p += 8;
  p = EncodeVarint32(p, static_cast<uint32_t>(value.size()));
  memcpy(p, value.data(), value.size());
  assert(p + value.size() == buf + encoded_len);

  // The filter learns the key before the skip list publishes the entry (see
  // MemTableFilter, "Ordering").
  if (filter_ != nullptr) filter_->Add(hash, allow_concurrent);
  // Like the filter's bits, set before the entry is published.
  if (!has_entries_.load(std::memory_order_relaxed)) {
    has_entries_.store(true, std::memory_order_relaxed);
  }

  char* node_key = table_.AllocateKey(sizeof(IndexKey));
  const IndexKey k = comparator_.MakeIndexKey(buf);
  memcpy(node_key, &k, sizeof(k));
  return node_key;
}

void MemTable::CountAdded(uint64_t entries, uint64_t deletes, SequenceNumber smallest_seq) {
  if (entries == 0) return;
  num_entries_.fetch_add(entries, std::memory_order_relaxed);
  if (deletes != 0) num_deletes_.fetch_add(deletes, std::memory_order_relaxed);
  SequenceNumber first = first_seqno_.load(std::memory_order_relaxed);
  while (smallest_seq < first &&
         !first_seqno_.compare_exchange_weak(first, smallest_seq, std::memory_order_relaxed)) {
  }
}

void MemTable::Add(SequenceNumber seq, ValueType type, const Slice& user_key, const Slice& value,
                   bool allow_concurrent) {
  char* node_key = Encode(seq, type, user_key, value, allow_concurrent);
  const bool inserted =
      allow_concurrent ? table_.InsertConcurrently(node_key) : table_.Insert(node_key);
  if (inserted) CountAdded(1, IsDeletion(type) ? 1 : 0, seq);
}

void MemTable::AddRangeTombstone(SequenceNumber seq, const Slice& begin, const Slice& end) {
  char* buf = arena_.Allocate(begin.size() + end.size() + 1);  // never zero bytes
  memcpy(buf, begin.data(), begin.size());
  memcpy(buf + begin.size(), end.data(), end.size());
  {
    MutexLock l(&range_mu_);
    range_tombstones_.push_back(
        RangeTombstoneRef{Slice(buf, begin.size()), Slice(buf + begin.size(), end.size()), seq});
    fragmented_.reset();
  }
  num_range_deletes_.fetch_add(1, std::memory_order_relaxed);
  CountAdded(1, 1, seq);
}

std::shared_ptr<const FragmentedRangeTombstones> MemTable::RangeTombstones() const {
  // A tombstone added before the caller's view was published is counted in its view: the
  // publication of the sequence number orders the count before the read.
  if (num_range_deletes_.load(std::memory_order_relaxed) == 0) return nullptr;
  MutexLock l(&range_mu_);
  if (fragmented_ == nullptr) {
    std::vector<RangeTombstone> all;
    all.reserve(range_tombstones_.size());
    for (const RangeTombstoneRef& t : range_tombstones_) {
      all.push_back(RangeTombstone{t.begin.ToString(), t.end.ToString(), t.seq});
    }
    fragmented_ = std::make_shared<const FragmentedRangeTombstones>(
        std::move(all), comparator_.icmp.user_comparator());
  }
  return fragmented_;
}

void MemTable::GroupAdder::Add(SequenceNumber seq, ValueType type, const Slice& user_key,
                               const Slice& value) {
  keys_[pending_] = mem_->Encode(seq, type, user_key, value, concurrent_);
  seqs_[pending_] = seq;
  deletes_[pending_] = IsDeletion(type);
  if (++pending_ == kGroup) Flush();
}

void MemTable::GroupAdder::Flush() {
  if (pending_ == 0) return;
  bool inserted[kGroup];
  if (concurrent_) {
    mem_->table_.InsertConcurrently(keys_, pending_, inserted);
  } else {
    mem_->table_.Insert(keys_, pending_, inserted);
  }
  uint64_t entries = 0;
  uint64_t deletes = 0;
  SequenceNumber smallest = kMaxSequenceNumber;
  for (size_t i = 0; i < pending_; i++) {
    if (!inserted[i]) continue;
    entries++;
    if (deletes_[i]) deletes++;
    if (seqs_[i] < smallest) smallest = seqs_[i];
  }
  pending_ = 0;
  mem_->CountAdded(entries, deletes, smallest);
}

void MemTable::PushTo(MergeContext* merge_context, const Slice& operand) {
  merge_context->PushOperandKept(operand, &keeper_);
}

bool MemTable::Get(const LookupKey& key, std::string* value, Status* s, SequenceNumber* seq_out,
                   ReadCallback* callback, MergeContext* merge_context,
                   SequenceNumber deleted_below) {
  thread_local uint32_t gets_here = 0;  // this thread's Gets, on any memtable
  if (++gets_here % kGetSample == 0) sampled_gets_.fetch_add(1, std::memory_order_relaxed);
  const Slice user_key = key.user_key();
  if (!MayContain(user_key)) return false;
  const Comparator* ucmp = comparator_.icmp.user_comparator();
  Table::Iterator iter(&table_);
  // The lookup key sorts before every entry of its user key with sequence <= its own, so
  // one seek lands on the newest version the snapshot may see.
  const IndexKey target = comparator_.MakeIndexKey(key.memtable_key().data());
  iter.Seek(reinterpret_cast<const char*>(&target));
  for (; iter.Valid(); iter.Next()) {
    const char* entry = EntryOf(iter.key());
    const Slice ikey = DecodeLengthPrefixed(entry);
    if (!ucmp->Equal(ExtractUserKey(ikey), user_key)) return false;
    SequenceNumber seq;
    ValueType type;
    UnPackSequenceAndType(ExtractInternalKeyFooter(ikey), &seq, &type);
    if (callback != nullptr && !callback->IsVisible(seq)) continue;
    if (seq < deleted_below && type != kTypeRangeDeletion) {
      type = kTypeDeletion;  // answered as the tombstone, at its sequence
      seq = deleted_below;
    }
    switch (type) {
      case kTypeValue: {
        const Slice v = DecodeLengthPrefixed(ikey.data() + ikey.size());
        if (merge_context != nullptr && merge_context->base_as_operand) {
          PushTo(merge_context, v);
        } else {
          value->assign(v.data(), v.size());
        }
        *s = Status::OK();
        *seq_out = seq;
        return true;
      }
      case kTypeDeletion:
      case kTypeSingleDeletion:
        *s = Status::NotFound();
        *seq_out = seq;
        return true;
      case kTypeMerge:
        if (merge_context == nullptr) {
          *s = Status::NotSupported("no merge operator configured");
          *seq_out = seq;
          return true;
        }
        PushTo(merge_context, DecodeLengthPrefixed(ikey.data() + ikey.size()));
        if (merge_context->ShouldStop()) {
          *s = Status::MergeInProgress();
          *seq_out = seq;
          return true;
        }
        break;
      default:
        // Not a point entry (e.g. a range deletion): it says nothing about this version.
        break;
    }
  }
  return false;
}

size_t MemTable::CountSuccessiveMergeEntries(const Slice& user_key, size_t limit) {
  if (!MayContain(user_key)) return 0;
  const Comparator* ucmp = comparator_.icmp.user_comparator();
  LookupKey lkey(user_key, kMaxSequenceNumber);
  Table::Iterator iter(&table_);
  const IndexKey target = comparator_.MakeIndexKey(lkey.memtable_key().data());
  iter.Seek(reinterpret_cast<const char*>(&target));
  size_t count = 0;
  for (; iter.Valid() && count < limit; iter.Next()) {
    const Slice ikey = DecodeLengthPrefixed(EntryOf(iter.key()));
    if (!ucmp->Equal(ExtractUserKey(ikey), user_key)) break;
    if (ExtractValueType(ikey) != kTypeMerge) break;
    count++;
  }
  return count;
}

// Walks the skip list; seek targets arrive as internal keys and are length-prefixed into
// a reusable buffer to match the stored form.
class MemTable::Iter final : public InternalIterator {
 public:
  Iter(const Table* table, const KeyComparator* cmp) : iter_(table), cmp_(cmp) {}

  bool Valid() const override { return iter_.Valid(); }
  void SeekToFirst() override { iter_.SeekToFirst(); }
  void SeekToLast() override { iter_.SeekToLast(); }
  void Seek(const Slice& target) override { iter_.Seek(EncodeTarget(target)); }
  void SeekForPrev(const Slice& target) override { iter_.SeekForPrev(EncodeTarget(target)); }
  void Next() override {
    iter_.Next();
    // In a long forward scan the next nodes are at hand: start loading the entry a few
    // places ahead, which key() would otherwise wait for.
    if (const char* ahead = iter_.KeyAhead(kEntryPrefetch)) __builtin_prefetch(EntryOf(ahead));
  }
  void Prev() override { iter_.Prev(); }
  Slice key() const override { return DecodeLengthPrefixed(EntryOf(iter_.key())); }
  Slice value() const override {
    const Slice k = key();
    return DecodeLengthPrefixed(k.data() + k.size());
  }
  Status status() const override { return Status::OK(); }
  bool IsKeyPinned() const override { return true; }
  bool IsValuePinned() const override { return true; }

 private:
  const char* EncodeTarget(const Slice& target) {
    tmp_.clear();
    PutVarint32(&tmp_, static_cast<uint32_t>(target.size()));
    tmp_.append(target.data(), target.size());
    target_ = cmp_->MakeIndexKey(tmp_.data());
    return reinterpret_cast<const char*>(&target_);
  }

  static constexpr size_t kEntryPrefetch = 8;

  Table::Iterator iter_;
  const KeyComparator* const cmp_;
  std::string tmp_;
  IndexKey target_;
};

InternalIterator* MemTable::NewIterator() { return new Iter(&table_, &comparator_); }

}  // namespace shale
