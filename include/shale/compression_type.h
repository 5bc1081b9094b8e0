// Block compression kinds, numbered as RocksDB numbers them (the number is stored in each
// block trailer). Kinds this build lacks are refused with NotSupported at DB::Open.
#pragma once

namespace shale {

enum CompressionType : unsigned char {
  kNoCompression = 0x0,
  kSnappyCompression = 0x1,
  kZlibCompression = 0x2,
  kBZip2Compression = 0x3,
  kLZ4Compression = 0x4,
  kLZ4HCCompression = 0x5,
  kXpressCompression = 0x6,
  kZSTD = 0x7,
  kDisableCompressionOption = 0xff,
};

// Whether this build can compress and decompress `type`.
bool CompressionTypeSupported(CompressionType type);
// "NoCompression", "Snappy", "LZ4", "ZSTD", ...
const char* CompressionTypeToString(CompressionType type);

}  // namespace shale
