// WriteBatch decoding and iteration over arbitrary bytes: SetContents and Iterate may
// refuse, never crash; what decodes has as many entries as its count says, and a batch
// rebuilt from them iterates to the same entries.
#include <cstdint>
#include <string>

#include "db/write_batch_internal.h"
#include "fuzz/fuzz_util.h"
#include "shale/write_batch.h"

namespace {

// Rebuilds the batch from the entries Iterate hands out, and lists them.
struct Rebuild : shale::WriteBatch::Handler {
  shale::WriteBatch out;
  uint32_t entries = 0;
  std::string log;
  void Note(char kind, const shale::Slice& a, const shale::Slice& b = shale::Slice()) {
    log += kind + std::to_string(a.size()) + ":" + a.ToString() + std::to_string(b.size()) + ":" +
           b.ToString();
  }
  void Put(const shale::Slice& k, const shale::Slice& v) override {
    Note('P', k, v);
    out.Put(k, v).PermitUncheckedError();
    entries++;
  }
  void Delete(const shale::Slice& k) override {
    Note('D', k);
    out.Delete(k).PermitUncheckedError();
    entries++;
  }
  void SingleDelete(const shale::Slice& k) override {
    Note('S', k);
    out.SingleDelete(k).PermitUncheckedError();
    entries++;
  }
  void Merge(const shale::Slice& k, const shale::Slice& v) override {
    Note('M', k, v);
    out.Merge(k, v).PermitUncheckedError();
    entries++;
  }
  void LogData(const shale::Slice& blob) override {
    Note('L', blob);
    out.PutLogData(blob).PermitUncheckedError();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const shale::Slice input(reinterpret_cast<const char*>(data), size);
  shale::WriteBatch batch;
  if (!shale::WriteBatchInternal::SetContents(&batch, input).ok()) return 0;
  Rebuild rebuild;
  if (!batch.Iterate(&rebuild).ok()) return 0;
  FUZZ_CHECK(rebuild.entries == batch.Count(), "Iterate's entries differ from Count()");
  Rebuild again;
  FUZZ_CHECK(rebuild.out.Iterate(&again).ok(), "a rebuilt batch does not iterate");
  FUZZ_CHECK(again.log == rebuild.log, "a rebuilt batch iterates to other entries");
  return 0;
}
