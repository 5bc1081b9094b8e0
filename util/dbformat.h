// Internal keys: a user key followed by 8 bytes packing (sequence << 8 | value type). They
// order by user key ascending (user comparator), then by sequence descending, then by type
// descending, so the newest version of a key comes first.
//
// Also: the memtable's length-prefixed LookupKey and the comparator over internal keys.
// Everything here is immutable or value-typed and safe to share between threads.
#pragma once

#include <cstdint>
#include <string>

#include "shale/comparator.h"
#include "shale/slice.h"
#include "shale/status.h"
#include "shale/types.h"
#include "util/coding.h"

namespace shale {

// Stored in internal keys, WAL batches and SST files: values are persisted, never renumber.
enum ValueType : unsigned char {
  kTypeDeletion = 0x0,
  kTypeValue = 0x1,
  kTypeMerge = 0x2,
  kTypeLogData = 0x3,  // WAL only
  kTypeColumnFamilyDeletion = 0x4,
  kTypeColumnFamilyValue = 0x5,
  kTypeColumnFamilyMerge = 0x6,
  kTypeSingleDeletion = 0x7,
  kTypeColumnFamilySingleDeletion = 0x8,
  kTypeBeginPrepareXID = 0x9,
  kTypeEndPrepareXID = 0xA,
  kTypeCommitXID = 0xB,
  kTypeRollbackXID = 0xC,
  kTypeNoop = 0xD,
  kTypeColumnFamilyRangeDeletion = 0xE,
  kTypeRangeDeletion = 0xF,
  kMaxValue = 0x7F,
};

// Sorts before (is newer than) every real entry with the same user key and sequence.
inline constexpr ValueType kValueTypeForSeek = kMaxValue;

// Whether t may appear in an internal key (as opposed to only in a WAL batch).
inline bool IsValueTypeInKey(unsigned t) {
  return t == kTypeValue || t == kTypeDeletion || t == kTypeSingleDeletion || t == kTypeMerge ||
         t == kTypeRangeDeletion;
}

// Sequence numbers take 56 bits.
inline constexpr SequenceNumber kMaxSequenceNumber = (1ull << 56) - 1;

inline uint64_t PackSequenceAndType(SequenceNumber seq, ValueType t) {
  return (seq << 8) | t;
}
inline void UnPackSequenceAndType(uint64_t packed, SequenceNumber* seq, ValueType* t) {
  *seq = packed >> 8;
  *t = static_cast<ValueType>(packed & 0xff);
}

struct ParsedInternalKey {
  Slice user_key;
  SequenceNumber sequence = 0;
  ValueType type = kTypeDeletion;

  ParsedInternalKey() = default;
  ParsedInternalKey(const Slice& u, SequenceNumber seq, ValueType t)
      : user_key(u), sequence(seq), type(t) {}
  std::string DebugString(bool hex = false) const;
};

inline size_t InternalKeyEncodingLength(const ParsedInternalKey& k) {
  return k.user_key.size() + 8;
}

void AppendInternalKey(std::string* result, const ParsedInternalKey& k);
inline void AppendInternalKey(std::string* result, const Slice& user_key, SequenceNumber seq,
                              ValueType t) {
  result->append(user_key.data(), user_key.size());
  PutFixed64(result, PackSequenceAndType(seq, t));
}

// Corruption if the key is shorter than 8 bytes or holds an unknown type.
Status ParseInternalKey(const Slice& internal_key, ParsedInternalKey* result);

// REQUIRES: internal_key.size() >= 8
inline Slice ExtractUserKey(const Slice& internal_key) {
  return Slice(internal_key.data(), internal_key.size() - 8);
}
inline uint64_t ExtractInternalKeyFooter(const Slice& internal_key) {
  return DecodeFixed64(internal_key.data() + internal_key.size() - 8);
}
inline ValueType ExtractValueType(const Slice& internal_key) {
  return static_cast<ValueType>(ExtractInternalKeyFooter(internal_key) & 0xff);
}
inline SequenceNumber ExtractSequence(const Slice& internal_key) {
  return ExtractInternalKeyFooter(internal_key) >> 8;
}

// Orders internal keys: user comparator, then packed (sequence, type) descending.
class InternalKeyComparator final : public Comparator {
 public:
  explicit InternalKeyComparator(const Comparator* user_comparator);
  const char* Name() const override { return name_.c_str(); }
  int Compare(const Slice& a, const Slice& b) const override;
  void FindShortestSeparator(std::string* start, const Slice& limit) const override;
  void FindShortSuccessor(std::string* key) const override;
  const Comparator* user_comparator() const { return user_comparator_; }

  int Compare(const ParsedInternalKey& a, const ParsedInternalKey& b) const;

 private:
  const Comparator* user_comparator_;
  std::string name_;
};

inline int InternalKeyComparator::Compare(const Slice& a, const Slice& b) const {
  int r = user_comparator_->Compare(ExtractUserKey(a), ExtractUserKey(b));
  if (r == 0) {
    const uint64_t anum = ExtractInternalKeyFooter(a);
    const uint64_t bnum = ExtractInternalKeyFooter(b);
    if (anum > bnum) {
      r = -1;
    } else if (anum < bnum) {
      r = +1;
    }
  }
  return r;
}

// An owned internal key (the smallest and largest keys of files in VersionEdits).
class InternalKey {
 public:
  InternalKey() = default;  // empty means invalid
  InternalKey(const Slice& user_key, SequenceNumber s, ValueType t) {
    AppendInternalKey(&rep_, user_key, s, t);
  }
  bool DecodeFrom(const Slice& s) {
    rep_.assign(s.data(), s.size());
    return !rep_.empty();
  }
  Slice Encode() const { return rep_; }
  Slice user_key() const { return ExtractUserKey(rep_); }
  bool Valid() const { return rep_.size() >= 8; }
  void SetFrom(const ParsedInternalKey& p) {
    rep_.clear();
    AppendInternalKey(&rep_, p);
  }
  void Clear() { rep_.clear(); }
  std::string DebugString(bool hex = false) const;

 private:
  std::string rep_;
};

// The key the memtable is searched with: varint32 length of the internal key, then the
// internal key for (user_key, sequence, kValueTypeForSeek).
class LookupKey {
 public:
  LookupKey(const Slice& user_key, SequenceNumber sequence);
  ~LookupKey();
  LookupKey(const LookupKey&) = delete;
  LookupKey& operator=(const LookupKey&) = delete;

  // Length-prefixed internal key, as stored in the memtable.
  Slice memtable_key() const { return Slice(start_, end_ - start_); }
  Slice internal_key() const { return Slice(kstart_, end_ - kstart_); }
  Slice user_key() const { return Slice(kstart_, end_ - kstart_ - 8); }

 private:
  const char* start_;
  const char* kstart_;
  const char* end_;
  char space_[200];  // avoids allocation for short keys
};

inline LookupKey::~LookupKey() {
  if (start_ != space_) delete[] start_;
}

}  // namespace shale
