#include "util/dbformat.h"

#include <cstdio>

namespace shale {

void AppendInternalKey(std::string* result, const ParsedInternalKey& k) {
  AppendInternalKey(result, k.user_key, k.sequence, k.type);
}

Status ParseInternalKey(const Slice& internal_key, ParsedInternalKey* result) {
  const size_t n = internal_key.size();
  if (n < 8) {
    return Status::Corruption("internal key too short", internal_key.ToString(true));
  }
  uint64_t num = DecodeFixed64(internal_key.data() + n - 8);
  unsigned char c = num & 0xff;
  if (!IsValueTypeInKey(c)) {
    return Status::Corruption("unknown value type in internal key", internal_key.ToString(true));
  }
  result->sequence = num >> 8;
  result->type = static_cast<ValueType>(c);
  result->user_key = Slice(internal_key.data(), n - 8);
  return Status::OK();
}

std::string ParsedInternalKey::DebugString(bool hex) const {
  char buf[64];
  snprintf(buf, sizeof(buf), "' seq:%llu, type:%d", static_cast<unsigned long long>(sequence),
           static_cast<int>(type));
  std::string result(1, '\'');
  result.append(user_key.ToString(hex));
  result.append(buf);
  return result;
}

std::string InternalKey::DebugString(bool hex) const {
  ParsedInternalKey parsed;
  if (ParseInternalKey(rep_, &parsed).ok()) return parsed.DebugString(hex);
  return "(bad)" + Slice(rep_).ToString(true);
}

InternalKeyComparator::InternalKeyComparator(const Comparator* user_comparator)
    : user_comparator_(user_comparator),
      name_(std::string("rocksdb.InternalKeyComparator:") + user_comparator->Name()) {}

int InternalKeyComparator::Compare(const ParsedInternalKey& a,
                                   const ParsedInternalKey& b) const {
  int r = user_comparator_->Compare(a.user_key, b.user_key);
  if (r == 0) {
    if (a.sequence > b.sequence) {
      r = -1;
    } else if (a.sequence < b.sequence) {
      r = +1;
    } else if (a.type > b.type) {
      r = -1;
    } else if (a.type < b.type) {
      r = +1;
    }
  }
  return r;
}

void InternalKeyComparator::FindShortestSeparator(std::string* start,
                                                  const Slice& limit) const {
  Slice user_start = ExtractUserKey(*start);
  Slice user_limit = ExtractUserKey(limit);
  std::string tmp(user_start.data(), user_start.size());
  user_comparator_->FindShortestSeparator(&tmp, user_limit);
  if (tmp.size() < user_start.size() && user_comparator_->Compare(user_start, tmp) < 0) {
    // A shorter, physically larger user key: the earliest possible internal key for it
    // still sorts after *start and before limit.
    PutFixed64(&tmp, PackSequenceAndType(kMaxSequenceNumber, kValueTypeForSeek));
    start->swap(tmp);
  }
}

void InternalKeyComparator::FindShortSuccessor(std::string* key) const {
  Slice user_key = ExtractUserKey(*key);
  std::string tmp(user_key.data(), user_key.size());
  user_comparator_->FindShortSuccessor(&tmp);
  if (tmp.size() < user_key.size() && user_comparator_->Compare(user_key, tmp) < 0) {
    PutFixed64(&tmp, PackSequenceAndType(kMaxSequenceNumber, kValueTypeForSeek));
    key->swap(tmp);
  }
}

LookupKey::LookupKey(const Slice& user_key, SequenceNumber s) {
  size_t usize = user_key.size();
  size_t needed = usize + 13;  // a conservative estimate
  char* dst = needed <= sizeof(space_) ? space_ : new char[needed];
  start_ = dst;
  dst = EncodeVarint32(dst, static_cast<uint32_t>(usize + 8));
  kstart_ = dst;
  memcpy(dst, user_key.data(), usize);
  dst += usize;
  EncodeFixed64(dst, PackSequenceAndType(s, kValueTypeForSeek));
  dst += 8;
  end_ = dst;
}

}  // namespace shale
