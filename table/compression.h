// Block compression and decompression for the kinds this build was compiled with (snappy,
// lz4 and zstd behind SHALE_HAVE_SNAPPY / SHALE_HAVE_LZ4 / SHALE_HAVE_ZSTD).
//
// Stored forms: snappy's raw format (it carries its own length); lz4 and zstd are preceded
// by a varint32 holding the uncompressed length.
//
// Thread safety: every function is safe to call from many threads at once.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "shale/compression_type.h"
#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

// Replaces *output with the compressed form of input. Returns false if this build lacks
// `type`, type is kNoCompression, or the library failed; *output is then unspecified.
bool CompressBlock(CompressionType type, const Slice& input, std::string* output);

// Compresses the blocks of one table, one after another, in the stored forms above,
// keeping from block to block what CompressBlock sets up per call: zstd's context
// (ZSTD_compress builds one per call, which made 4 KiB blocks about 1.5x slower to
// compress) and an output buffer that is not zero-filled to the worst-case size each time.
// Every block still stands alone: nothing of one is used to compress the next.
//
// Thread safety: one thread at a time; different compressors are independent.
class BlockCompressor {
 public:
  explicit BlockCompressor(CompressionType type);
  ~BlockCompressor();
  BlockCompressor(const BlockCompressor&) = delete;
  BlockCompressor& operator=(const BlockCompressor&) = delete;

  // Sets *output to the compressed form of input, pointing into this compressor and valid
  // until the next Compress or its destruction. False when CompressBlock would be.
  bool Compress(const Slice& input, Slice* output);

 private:
  struct LibraryState;
  // A buffer of at least n bytes, kept (and not zero-filled) between calls.
  char* Reserve(size_t n);

  const CompressionType type_;
  std::unique_ptr<char[]> buffer_;
  size_t capacity_ = 0;
  std::unique_ptr<LibraryState> state_;  // made when first needed
};

// Whether a compressed form is worth storing: it must save at least 1/8 of raw_size, as
// RocksDB requires; otherwise the block is stored uncompressed.
inline bool GoodCompressionRatio(size_t compressed_size, size_t raw_size) {
  return compressed_size < raw_size - raw_size / 8;
}

// Decompresses input into a new buffer: *out_size bytes at out->get() + headroom, the
// first headroom bytes left for the caller (an object that then lives beside the bytes in
// one allocation). Corruption (without file context; the caller adds it) if input is not a
// valid compressed form; NotSupported if this build lacks `type`. With out_capacity, the
// buffer comes from the thread's recycled block buffers (block_buffers.h) when one fits,
// and *out_capacity is its size, at least headroom + *out_size.
Status DecompressBlock(CompressionType type, const Slice& input, std::unique_ptr<char[]>* out,
                       size_t* out_size, size_t headroom = 0, size_t* out_capacity = nullptr);

}  // namespace shale
