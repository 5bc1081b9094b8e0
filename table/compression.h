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

// Whether a compressed form is worth storing: it must save at least 1/8 of raw_size, as
// RocksDB requires; otherwise the block is stored uncompressed.
inline bool GoodCompressionRatio(size_t compressed_size, size_t raw_size) {
  return compressed_size < raw_size - raw_size / 8;
}

// Decompresses input into a new buffer (*out, *out_size). Corruption (without file
// context; the caller adds it) if input is not a valid compressed form; NotSupported if
// this build lacks `type`.
Status DecompressBlock(CompressionType type, const Slice& input, std::unique_ptr<char[]>* out,
                       size_t* out_size);

}  // namespace shale
