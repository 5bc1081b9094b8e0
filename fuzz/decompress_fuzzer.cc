// Decompression of every codec over arbitrary bytes (the first byte picks the codec):
// DecompressBlock may refuse, never crash or read out of bounds; what compresses
// decompresses back to the same bytes.
#include <cstdint>
#include <memory>
#include <string>

#include "fuzz/fuzz_util.h"
#include "table/compression.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const shale::CompressionType kTypes[] = {shale::kSnappyCompression, shale::kLZ4Compression,
                                                  shale::kZSTD};
  const shale::CompressionType type = kTypes[data[0] % 3];
  const shale::Slice input(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::unique_ptr<char[]> out;
  size_t out_size = 0;
  shale::DecompressBlock(type, input, &out, &out_size).PermitUncheckedError();
  // The round trip of the same bytes as raw data.
  std::string compressed;
  if (shale::CompressBlock(type, input, &compressed)) {
    shale::Status s = shale::DecompressBlock(type, compressed, &out, &out_size);
    FUZZ_CHECK(s.ok(), s.ToString());
    FUZZ_CHECK(shale::Slice(out.get(), out_size) == input, "round trip changed the bytes");
  }
  return 0;
}
