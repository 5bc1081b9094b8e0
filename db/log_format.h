// The write-ahead log's physical format, shared by log::Writer and log::Reader.
//
// A log file is a sequence of 32 KiB blocks (the last one may be short). Each block holds
// physical records, each a 7-byte header followed by its payload:
//
//   checksum (4 bytes, fixed32): masked crc32c over the type byte and the payload
//   length   (2 bytes, fixed16): payload bytes
//   type     (1 byte):           RecordType
//
// A record never crosses a block boundary: a logical record that does not fit in the rest
// of a block is split into a kFirstType fragment, kMiddleType fragments and a kLastType
// fragment; one that fits is a single kFullType record. When fewer than kHeaderSize bytes
// remain in a block, the writer fills them with zeros and starts the next record in the next
// block. kZeroType is never written; it is how preallocated or never-written (zeroed) space
// reads back.
//
// kPredecessorType is not a fragment: the first record of a WAL the DB switched to, it
// names the WAL before it and that WAL's size when the DB stopped appending to it
// (fixed64 log number, fixed64 bytes). The DB does not sync a WAL when it leaves it (see
// db/closed_wals.h), so a power loss may keep the newer WAL and cut the older one short;
// recovery compares, and does not replay the newer WAL over the hole.
#pragma once

#include <cstddef>
#include <cstdint>

namespace shale::log {

enum RecordType : uint8_t {
  kZeroType = 0,
  kFullType = 1,
  kFirstType = 2,
  kMiddleType = 3,
  kLastType = 4,
  kPredecessorType = 5,
};
inline constexpr int kMaxRecordType = kPredecessorType;
inline constexpr size_t kPredecessorSize = 16;  // kPredecessorType's payload

inline constexpr size_t kBlockSize = 32768;
inline constexpr size_t kHeaderSize = 4 + 2 + 1;

}  // namespace shale::log
