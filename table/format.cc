#include "table/format.h"

#include <xxhash.h>

#include <cstring>

#include "table/block_buffers.h"
#include "table/compression.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/hash.h"

namespace shale {

void BlockHandle::EncodeTo(std::string* dst) const {
  PutVarint64(dst, offset_);
  PutVarint64(dst, size_);
}

Status BlockHandle::DecodeFrom(Slice* input) {
  if (GetVarint64(input, &offset_) && GetVarint64(input, &size_)) return Status::OK();
  return Status::Corruption("bad block handle");
}

namespace {

constexpr size_t kHandlesOffset = 1;
constexpr size_t kVersionOffset = kHandlesOffset + 2 * BlockHandle::kMaxEncodedLength;
constexpr size_t kFooterCrcOffset = kVersionOffset + 4;
constexpr size_t kMagicOffset = kFooterCrcOffset + 4;

// Holds the stored form of a compressed block of the default 4 KiB size and of blocks
// somewhat larger (a compressed form is at most 7/8 of its block).
constexpr size_t kBlockReadStackBuffer = 8192;
static_assert(kMagicOffset + 8 == Footer::kEncodedLength);

// n bytes for a block: with headroom (a block read for Block::New, whose buffer goes back
// to the pool when the cache lets it go) from this thread's recycled buffers when one fits.
BlockBuffer NewBlockBuffer(size_t n, size_t headroom) {
  if (headroom != 0) {
    BlockBuffer b = AllocateBlockBuffer(n);
    if (b.bytes != nullptr) return b;
  }
  return BlockBuffer{std::unique_ptr<char[]>(new char[n]), n};
}

}  // namespace

void Footer::EncodeTo(std::string* dst) const {
  const size_t start = dst->size();
  dst->push_back(static_cast<char>(checksum_type_));
  metaindex_handle_.EncodeTo(dst);
  index_handle_.EncodeTo(dst);
  dst->resize(start + kVersionOffset, '\0');
  PutFixed32(dst, format_version_);
  PutFixed32(dst, crc32c::Mask(crc32c::Value(dst->data() + start, kFooterCrcOffset)));
  PutFixed64(dst, kShaleTableMagicNumber);
}

Status Footer::DecodeFrom(const Slice& input) {
  if (input.size() != kEncodedLength) {
    return Status::Corruption("table footer has the wrong size");
  }
  const char* p = input.data();
  if (DecodeFixed64(p + kMagicOffset) != kShaleTableMagicNumber) {
    return Status::Corruption("not an sstable (bad magic number)");
  }
  const uint32_t expected = crc32c::Unmask(DecodeFixed32(p + kFooterCrcOffset));
  if (crc32c::Value(p, kFooterCrcOffset) != expected) {
    return Status::Corruption("table footer checksum mismatch");
  }
  format_version_ = DecodeFixed32(p + kVersionOffset);
  if (format_version_ != kShaleTableFormatVersion) {
    return Status::NotSupported("unsupported table format version",
                                std::to_string(format_version_));
  }
  checksum_type_ = static_cast<ChecksumType>(p[0]);
  if (!ChecksumTypeSupported(checksum_type_)) {
    return Status::NotSupported("unknown checksum type in table footer",
                                std::to_string(static_cast<int>(p[0])));
  }
  Slice handles(p + kHandlesOffset, kVersionOffset - kHandlesOffset);
  Status s = metaindex_handle_.DecodeFrom(&handles);
  if (s.ok()) s = index_handle_.DecodeFrom(&handles);
  return s;
}

bool ChecksumTypeSupported(ChecksumType t) {
  switch (t) {
    case kNoChecksum:
    case kCRC32c:
    case kxxHash:
    case kxxHash64:
    case kXXH3: return true;
  }
  return false;
}

uint32_t ComputeBlockChecksum(ChecksumType t, const char* data, size_t n, char type_byte) {
  const auto seed = static_cast<unsigned char>(type_byte);
  switch (t) {
    case kNoChecksum: return 0;
    case kCRC32c: return crc32c::Mask(crc32c::Extend(crc32c::Value(data, n), &type_byte, 1));
    case kxxHash: return XXH32(data, n, seed);
    case kxxHash64: return static_cast<uint32_t>(XXH64(data, n, seed));
    case kXXH3: return static_cast<uint32_t>(Hash64(data, n, seed));
  }
  return 0;
}

Status CorruptionAt(const std::string* file_name, uint64_t offset, const char* what,
                    const Slice& detail) {
  std::string msg;
  if (file_name != nullptr && !file_name->empty()) {
    msg.append(*file_name);
    msg.append(": ");
  }
  msg.append(what);
  msg.append(" at offset ");
  msg.append(std::to_string(offset));
  return Status::Corruption(msg, detail);
}

Status ReadBlock(const BlockReadSource& source, const BlockHandle& handle, bool verify_checksums,
                 BlockContents* result, size_t headroom) {
  const uint64_t offset = handle.offset();
  const uint64_t size = handle.size();
  // Checked before allocating: a corrupt handle must not ask for a huge buffer.
  if (offset > source.file_size || size > source.file_size - offset ||
      kBlockTrailerSize > source.file_size - offset - size) {
    return CorruptionAt(source.file_name, offset, "block handle points past the end of file",
                        "size " + std::to_string(size));
  }
  const size_t n = static_cast<size_t>(size);
  // A compressed block's stored form is only read from: on the stack, it costs no
  // allocation and no free, and the kernel copies it into memory that is already in the
  // CPU cache. Everything else is read into the allocation the block will keep.
  char stack_buf[kBlockReadStackBuffer];
  BlockBuffer buf;
  char* scratch = stack_buf;
  if (!source.expect_compressed || n + kBlockTrailerSize > sizeof(stack_buf)) {
    buf = NewBlockBuffer(headroom + n + kBlockTrailerSize, headroom);
    scratch = buf.bytes.get() + headroom;
  }
  Slice contents;
  Status s = source.file->Read(offset, n + kBlockTrailerSize, &contents, scratch);
  if (!s.ok()) return s;
  if (contents.size() != n + kBlockTrailerSize) {
    return CorruptionAt(source.file_name, offset, "truncated block read");
  }
  // Some files (an in-memory Env, a mapped file) return their own memory, which is only
  // read from here as well.
  const char* data = contents.data();

  if (verify_checksums && source.checksum_type != kNoChecksum) {
    const uint32_t stored = DecodeFixed32(data + n + 1);
    const uint32_t actual = ComputeBlockChecksum(source.checksum_type, data, n, data[n]);
    if (stored != actual) {
      return CorruptionAt(source.file_name, offset, "block checksum mismatch");
    }
  }

  const auto type = static_cast<CompressionType>(data[n]);
  if (type == kNoCompression) {
    // The block keeps its bytes: in buf when they were read there, else in a copy.
    if (buf.bytes == nullptr || data != buf.bytes.get() + headroom) {
      BlockBuffer owned = NewBlockBuffer(headroom + n, headroom);
      memcpy(owned.bytes.get() + headroom, data, n);
      buf = std::move(owned);
    }
    *result = BlockContents(std::move(buf.bytes), n, headroom, buf.capacity);
    return Status::OK();
  }
  if (static_cast<unsigned char>(type) > kZSTD) {
    return CorruptionAt(source.file_name, offset, "unknown compression type in block trailer",
                        std::to_string(static_cast<int>(type)));
  }
  std::unique_ptr<char[]> out;
  size_t out_size = 0;
  size_t out_capacity = 0;
  s = DecompressBlock(type, Slice(data, n), &out, &out_size, headroom,
                      headroom != 0 ? &out_capacity : nullptr);
  // The stored form, when it was read into a buffer of its own, is done with.
  if (buf.bytes != nullptr && headroom != 0) RecycleBlockBuffer(std::move(buf.bytes), buf.capacity);
  if (s.IsCorruption()) {
    return CorruptionAt(source.file_name, offset, "cannot decompress block", s.ToString());
  }
  if (!s.ok()) return s;
  *result = BlockContents(std::move(out), out_size, headroom, out_capacity);
  return Status::OK();
}

}  // namespace shale
