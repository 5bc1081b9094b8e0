// Little-endian fixed-width and varint encodings used by every on-disk format.
//
// Get* functions that take a Slice* consume what they decode and return false on truncated
// or malformed input; they never read past the slice.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "shale/slice.h"

namespace shale {

inline constexpr int kMaxVarint32Length = 5;
inline constexpr int kMaxVarint64Length = 10;

inline void EncodeFixed16(char* dst, uint16_t v) { memcpy(dst, &v, sizeof(v)); }
inline void EncodeFixed32(char* dst, uint32_t v) { memcpy(dst, &v, sizeof(v)); }
inline void EncodeFixed64(char* dst, uint64_t v) { memcpy(dst, &v, sizeof(v)); }
inline uint16_t DecodeFixed16(const char* p) {
  uint16_t v;
  memcpy(&v, p, sizeof(v));
  return v;
}
inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v;
  memcpy(&v, p, sizeof(v));
  return v;
}
inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v;
  memcpy(&v, p, sizeof(v));
  return v;
}
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "shale assumes a little-endian CPU");

inline void PutFixed32(std::string* dst, uint32_t v) {
  char buf[4];
  EncodeFixed32(buf, v);
  dst->append(buf, 4);
}
inline void PutFixed64(std::string* dst, uint64_t v) {
  char buf[8];
  EncodeFixed64(buf, v);
  dst->append(buf, 8);
}

// Writes v at dst and returns the byte after it.
inline char* EncodeVarint32(char* dst, uint32_t v) {
  auto* p = reinterpret_cast<unsigned char*>(dst);
  while (v >= 0x80) {
    *p++ = static_cast<unsigned char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<unsigned char>(v);
  return reinterpret_cast<char*>(p);
}
inline char* EncodeVarint64(char* dst, uint64_t v) {
  auto* p = reinterpret_cast<unsigned char*>(dst);
  while (v >= 0x80) {
    *p++ = static_cast<unsigned char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<unsigned char>(v);
  return reinterpret_cast<char*>(p);
}

inline void PutVarint32(std::string* dst, uint32_t v) {
  char buf[kMaxVarint32Length];
  dst->append(buf, EncodeVarint32(buf, v) - buf);
}
inline void PutVarint64(std::string* dst, uint64_t v) {
  char buf[kMaxVarint64Length];
  dst->append(buf, EncodeVarint64(buf, v) - buf);
}
inline void PutLengthPrefixedSlice(std::string* dst, const Slice& value) {
  PutVarint32(dst, static_cast<uint32_t>(value.size()));
  dst->append(value.data(), value.size());
}

inline int VarintLength(uint64_t v) {
  int len = 1;
  while (v >= 0x80) {
    v >>= 7;
    len++;
  }
  return len;
}

// Decodes a varint in [p, limit); returns the byte after it, or nullptr if malformed.
const char* GetVarint32PtrFallback(const char* p, const char* limit, uint32_t* value);
inline const char* GetVarint32Ptr(const char* p, const char* limit, uint32_t* value) {
  if (p < limit) {
    uint32_t result = *reinterpret_cast<const unsigned char*>(p);
    if ((result & 0x80) == 0) {
      *value = result;
      return p + 1;
    }
  }
  return GetVarint32PtrFallback(p, limit, value);
}
const char* GetVarint64Ptr(const char* p, const char* limit, uint64_t* value);

// Inline, with GetLengthPrefixedSlice: every write parses its batch with them (twice: the
// check before the write group, then the memtable insert), and the calls showed in a
// fillseq profile.
inline bool GetVarint32(Slice* input, uint32_t* value) {
  const char* p = input->data();
  const char* limit = p + input->size();
  const char* q = GetVarint32Ptr(p, limit, value);
  if (q == nullptr) return false;
  *input = Slice(q, static_cast<size_t>(limit - q));
  return true;
}
bool GetVarint64(Slice* input, uint64_t* value);
bool GetFixed32(Slice* input, uint32_t* value);
bool GetFixed64(Slice* input, uint64_t* value);
inline bool GetLengthPrefixedSlice(Slice* input, Slice* result) {
  uint32_t len;
  if (GetVarint32(input, &len) && input->size() >= len) {
    *result = Slice(input->data(), len);
    input->remove_prefix(len);
    return true;
  }
  return false;
}

}  // namespace shale
