// The on-disk pieces of a block-based table (SST file): block handles, the block trailer
// and the fixed-size footer, and ReadBlock, which fetches one block, verifies its checksum
// and decompresses it.
//
// File layout: data blocks, filter block, properties block, metaindex block, index block,
// footer. Every block is followed by a 5-byte trailer: 1 byte CompressionType, then a
// 4-byte checksum (per the footer's ChecksumType) over the block bytes and the type byte.
//
// Thread safety: BlockHandle and Footer are values; ReadBlock may be called from many
// threads at once on the same RandomAccessFile.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "shale/compression_type.h"
#include "shale/env.h"
#include "shale/slice.h"
#include "shale/status.h"
#include "shale/table.h"

namespace shale {

// Where a block sits in the file: its offset and its size without the trailer.
class BlockHandle {
 public:
  // Two varint64s.
  static constexpr size_t kMaxEncodedLength = 20;

  BlockHandle() = default;
  BlockHandle(uint64_t offset, uint64_t size) : offset_(offset), size_(size) {}

  uint64_t offset() const { return offset_; }
  uint64_t size() const { return size_; }
  void set_offset(uint64_t offset) { offset_ = offset; }
  void set_size(uint64_t size) { size_ = size; }

  void EncodeTo(std::string* dst) const;
  // Consumes the handle from the front of *input; Corruption if it is malformed.
  Status DecodeFrom(Slice* input);

 private:
  uint64_t offset_ = 0;
  uint64_t size_ = 0;
};

inline constexpr size_t kBlockTrailerSize = 5;
// The metaindex name of the range-deletion block, RocksDB's.
inline constexpr char kRangeDelBlockName[] = "rocksdb.range_del";
inline constexpr uint64_t kShaleTableMagicNumber = 0x73686c6554424c31ull;  // "1LBTelhs"
inline constexpr uint32_t kShaleTableFormatVersion = 5;

// The last bytes of every table file:
//   checksum type (1) | metaindex handle, index handle (zero-padded to 40) |
//   format version (fixed32) | masked crc32c of the bytes before it (fixed32) | magic (fixed64)
// The footer checksum makes any flipped byte in the footer detectable at open.
class Footer {
 public:
  static constexpr size_t kEncodedLength = 1 + 2 * BlockHandle::kMaxEncodedLength + 4 + 4 + 8;

  Footer() = default;

  ChecksumType checksum_type() const { return checksum_type_; }
  void set_checksum_type(ChecksumType t) { checksum_type_ = t; }
  const BlockHandle& metaindex_handle() const { return metaindex_handle_; }
  void set_metaindex_handle(const BlockHandle& h) { metaindex_handle_ = h; }
  const BlockHandle& index_handle() const { return index_handle_; }
  void set_index_handle(const BlockHandle& h) { index_handle_ = h; }
  uint32_t format_version() const { return format_version_; }

  // Appends exactly kEncodedLength bytes.
  void EncodeTo(std::string* dst) const;
  // REQUIRES: input holds the last kEncodedLength bytes of the file. Corruption when the
  // magic number, the footer checksum or a field is bad; NotSupported for a format
  // version or checksum type this build cannot read.
  Status DecodeFrom(const Slice& input);

 private:
  ChecksumType checksum_type_ = kCRC32c;
  BlockHandle metaindex_handle_;
  BlockHandle index_handle_;
  uint32_t format_version_ = kShaleTableFormatVersion;
};

// Whether this build can compute checksums of type t.
bool ChecksumTypeSupported(ChecksumType t);

// The checksum stored in a block trailer, covering the block's n stored bytes and the
// trailer's compression type byte (so that neither can change unnoticed). crc32c is the
// masked crc of the bytes followed by the type byte; the xxHash kinds hash the bytes with
// the type byte as seed. REQUIRES: ChecksumTypeSupported(t).
uint32_t ComputeBlockChecksum(ChecksumType t, const char* data, size_t n, char type_byte);

// A block's bytes after the trailer is stripped and decompression is done.
struct BlockContents {
  Slice data;
  // Holds data's bytes when this object owns them, from data.data() - headroom on; null
  // when data points elsewhere (a test's buffer), in which case the owner of those bytes
  // must outlive every user.
  std::unique_ptr<char[]> allocation;
  size_t headroom = 0;
  // The allocation's bytes (0 when there is none): headroom + data.size() or more, when
  // the buffer came from block_buffers.h's pool. What a cache should charge for it.
  size_t capacity = 0;

  BlockContents() = default;
  explicit BlockContents(const Slice& unowned) : data(unowned) {}
  BlockContents(std::unique_ptr<char[]>&& buf, size_t n, size_t room = 0, size_t cap = 0)
      : data(buf.get() + room, n),
        allocation(std::move(buf)),
        headroom(room),
        capacity(cap != 0 ? cap : room + n) {}
};

// Where ReadBlock reads from, for reading and for error messages.
struct BlockReadSource {
  const RandomAccessFile* file = nullptr;
  uint64_t file_size = 0;
  const std::string* file_name = nullptr;  // may be null
  ChecksumType checksum_type = kCRC32c;
  // The file was written with compression, so its blocks are most likely compressed: a
  // small block is then read into a buffer on the stack and decompressed from there, with
  // no allocation for its stored form. A wrong guess costs a copy, never a wrong answer.
  bool expect_compressed = false;
};

// Reads the block at handle (and its trailer), verifies the checksum when
// verify_checksums, and decompresses it into *result, which owns the bytes, with
// result->headroom == headroom free bytes before them in the same allocation (see
// Block::New). With headroom, the allocation comes from this thread's recycled block
// buffers (block_buffers.h) when one fits. A block that runs past the end of the file, a checksum
// mismatch or a bad compressed form give Corruption naming the file and offset; a compression this
// build lacks gives NotSupported.
Status ReadBlock(const BlockReadSource& source, const BlockHandle& handle, bool verify_checksums,
                 BlockContents* result, size_t headroom = 0);

// "Corruption: <file>: <what> at offset <offset>" with an optional detail.
Status CorruptionAt(const std::string* file_name, uint64_t offset, const char* what,
                    const Slice& detail = Slice());

}  // namespace shale
