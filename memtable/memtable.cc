#include "memtable/memtable.h"

#include <cassert>
#include <cstring>

#include "shale/comparator.h"
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

}  // namespace

MemTable::KeyComparator::KeyComparator(const InternalKeyComparator& c)
    : icmp(c), bytewise(c.user_comparator() == BytewiseComparator()) {}

int MemTable::KeyComparator::operator()(const char* a, const char* b) const {
  const Slice ka = DecodeLengthPrefixed(a);
  const Slice kb = DecodeLengthPrefixed(b);
  if (!bytewise) return icmp.Compare(ka, kb);
  // InternalKeyComparator::Compare with the user comparison inlined.
  const size_t ua = ka.size() - 8;
  const size_t ub = kb.size() - 8;
  int r = memcmp(ka.data(), kb.data(), ua < ub ? ua : ub);
  if (r != 0) return r;
  if (ua != ub) return ua < ub ? -1 : 1;
  const uint64_t fa = DecodeFixed64(ka.data() + ua);
  const uint64_t fb = DecodeFixed64(kb.data() + ub);
  return fa > fb ? -1 : (fa < fb ? 1 : 0);
}

MemTable::MemTable(const InternalKeyComparator& cmp, size_t write_buffer_size,
                   size_t arena_block_size, size_t huge_page_size)
    : comparator_(cmp),
      arena_(Arena::BlockSizeFor(arena_block_size, write_buffer_size), huge_page_size),
      table_(comparator_, &arena_),
      write_buffer_size_(write_buffer_size) {}

void MemTable::Unref() {
  int before = refs_.fetch_sub(1, std::memory_order_acq_rel);
  assert(before > 0);
  if (before == 1) delete this;
}

void MemTable::Add(SequenceNumber seq, ValueType type, const Slice& user_key, const Slice& value,
                   bool allow_concurrent) {
  const size_t ikey_size = user_key.size() + 8;
  const size_t encoded_len =
      VarintLength(ikey_size) + ikey_size + VarintLength(value.size()) + value.size();
  char* buf = table_.AllocateKey(encoded_len);
  char* p = EncodeVarint32(buf, static_cast<uint32_t>(ikey_size));
  memcpy(p, user_key.data(), user_key.size());
  p += user_key.size();
  EncodeFixed64(p, PackSequenceAndType(seq, type));
  p += 8;
  p = EncodeVarint32(p, static_cast<uint32_t>(value.size()));
  memcpy(p, value.data(), value.size());
  assert(p + value.size() == buf + encoded_len);

  const bool inserted = allow_concurrent ? table_.InsertConcurrently(buf) : table_.Insert(buf);
  if (!inserted) return;

  num_entries_.fetch_add(1, std::memory_order_relaxed);
  if (type == kTypeDeletion || type == kTypeSingleDeletion) {
    num_deletes_.fetch_add(1, std::memory_order_relaxed);
  }
  SequenceNumber first = first_seqno_.load(std::memory_order_relaxed);
  while (seq < first &&
         !first_seqno_.compare_exchange_weak(first, seq, std::memory_order_relaxed)) {
  }
}

void MemTable::PushTo(MergeContext* merge_context, const Slice& operand) {
  merge_context->PushOperandKept(operand, &keeper_);
}

bool MemTable::Get(const LookupKey& key, std::string* value, Status* s, SequenceNumber* seq_out,
                   ReadCallback* callback, MergeContext* merge_context) {
  const Slice user_key = key.user_key();
  const Comparator* ucmp = comparator_.icmp.user_comparator();
  Table::Iterator iter(&table_);
  // The lookup key sorts before every entry of its user key with sequence <= its own, so
  // one seek lands on the newest version the snapshot may see.
  iter.Seek(key.memtable_key().data());
  for (; iter.Valid(); iter.Next()) {
    const char* entry = iter.key();
    const Slice ikey = DecodeLengthPrefixed(entry);
    if (!ucmp->Equal(ExtractUserKey(ikey), user_key)) return false;
    SequenceNumber seq;
    ValueType type;
    UnPackSequenceAndType(ExtractInternalKeyFooter(ikey), &seq, &type);
    if (callback != nullptr && !callback->IsVisible(seq)) continue;
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
  const Comparator* ucmp = comparator_.icmp.user_comparator();
  LookupKey lkey(user_key, kMaxSequenceNumber);
  Table::Iterator iter(&table_);
  iter.Seek(lkey.memtable_key().data());
  size_t count = 0;
  for (; iter.Valid() && count < limit; iter.Next()) {
    const Slice ikey = DecodeLengthPrefixed(iter.key());
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
  explicit Iter(const Table* table) : iter_(table) {}

  bool Valid() const override { return iter_.Valid(); }
  void SeekToFirst() override { iter_.SeekToFirst(); }
  void SeekToLast() override { iter_.SeekToLast(); }
  void Seek(const Slice& target) override { iter_.Seek(EncodeTarget(target)); }
  void SeekForPrev(const Slice& target) override { iter_.SeekForPrev(EncodeTarget(target)); }
  void Next() override { iter_.Next(); }
  void Prev() override { iter_.Prev(); }
  Slice key() const override { return DecodeLengthPrefixed(iter_.key()); }
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
    return tmp_.data();
  }

  Table::Iterator iter_;
  std::string tmp_;
};

InternalIterator* MemTable::NewIterator() { return new Iter(&table_); }

}  // namespace shale
