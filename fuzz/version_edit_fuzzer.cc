// VersionEdit (MANIFEST record) decoding over arbitrary bytes: DecodeFrom may refuse,
// never crash; an edit that decodes re-encodes to bytes that decode to the same edit.
#include <cstdint>
#include <string>

#include "db/version_edit.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const shale::Slice input(reinterpret_cast<const char*>(data), size);
  shale::VersionEdit edit;
  if (!edit.DecodeFrom(input).ok()) return 0;
  edit.DebugString();
  std::string encoded;
  edit.EncodeTo(&encoded);
  shale::VersionEdit again;
  FUZZ_CHECK(again.DecodeFrom(encoded).ok(), "a re-encoded edit does not decode");
  std::string encoded_again;
  again.EncodeTo(&encoded_again);
  FUZZ_CHECK(encoded == encoded_again, "encode(decode(encode(edit))) differs");
  return 0;
}
