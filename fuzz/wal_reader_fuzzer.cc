// WAL reader in every recovery mode over arbitrary bytes, and each record it returns
// decoded as a WriteBatch: any damage may be reported, nothing may crash or loop, and
// the reader must give the same records before the first reported damage in every mode.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "db/log_reader.h"
#include "db/write_batch_internal.h"
#include "fuzz/fuzz_util.h"
#include "shale/write_batch.h"

namespace {

struct CountingReporter : shale::log::Reporter {
  int damage = 0;
  void Corruption(size_t, const shale::Status& s) override {
    FUZZ_CHECK(!s.ok(), "a report with an OK status");
    damage++;
  }
};

// Records read in `mode` up to the first reported damage (all of them in salvage mode).
std::vector<std::string> ReadAll(const std::string& data, shale::WALRecoveryMode mode,
                                 bool* damaged) {
  CountingReporter reporter;
  shale::log::Reader reader(std::make_unique<shale::fuzz::StringSequentialFile>(data), &reporter,
                            /*checksum=*/true, 7, "fuzz.log");
  std::vector<std::string> records;
  std::string scratch;
  shale::Slice record;
  while (reader.ReadRecord(&record, &scratch, mode)) {
    if (reporter.damage > 0 && mode != shale::WALRecoveryMode::kSkipAnyCorruptedRecords) break;
    records.push_back(record.ToString());
    shale::WriteBatch batch;
    if (shale::WriteBatchInternal::SetContents(&batch, record).ok()) {
      shale::WriteBatch::Handler handler;
      batch.Iterate(&handler).PermitUncheckedError();
    }
  }
  *damaged = reporter.damage > 0;
  return records;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  bool damaged[4];
  const std::vector<std::string> tolerate =
      ReadAll(input, shale::WALRecoveryMode::kTolerateCorruptedTailRecords, &damaged[0]);
  const std::vector<std::string> absolute =
      ReadAll(input, shale::WALRecoveryMode::kAbsoluteConsistency, &damaged[1]);
  const std::vector<std::string> pit =
      ReadAll(input, shale::WALRecoveryMode::kPointInTimeRecovery, &damaged[2]);
  const std::vector<std::string> skip =
      ReadAll(input, shale::WALRecoveryMode::kSkipAnyCorruptedRecords, &damaged[3]);
  // The stopping modes agree on what lies before the damage.
  FUZZ_CHECK(tolerate == pit, "tolerate-tail and point-in-time differ");
  FUZZ_CHECK(absolute.size() <= tolerate.size(), "absolute read more than tolerate");
  for (size_t i = 0; i < absolute.size(); i++) FUZZ_CHECK(absolute[i] == tolerate[i], "differ");
  // Salvage starts with the same records.
  for (size_t i = 0; i < tolerate.size() && i < skip.size(); i++) {
    FUZZ_CHECK(skip[i] == tolerate[i], "salvage differs before the damage");
  }
  return 0;
}
