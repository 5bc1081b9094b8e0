// WriteBatch decoding and iteration over arbitrary bytes: SetContents and Iterate may
// refuse, never crash; what decodes has as many entries as its count says, and a batch
// rebuilt from them iterates to the same entries. Then recovery's replay (WalReplayer,
// with two-phase commit on) takes the batch: it may refuse it, never crash, and what it
// applies is all or nothing: the memtable holds one entry per sequence it numbered.
#include <cstdint>
#include <string>

#include "db/wal_replay.h"
#include "db/write_batch_internal.h"
#include "fuzz/fuzz_util.h"
#include "memtable/memtable.h"
#include "shale/comparator.h"
#include "shale/write_batch.h"
#include "util/dbformat.h"

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
  // Two-phase commit markers are taken and left out of the rebuilt batch (its records are
  // what is compared).
  shale::Status MarkBeginPrepare(bool) override { return shale::Status::OK(); }
  shale::Status MarkEndPrepare(const shale::Slice&) override { return shale::Status::OK(); }
  shale::Status MarkCommit(const shale::Slice&) override { return shale::Status::OK(); }
  shale::Status MarkRollback(const shale::Slice&) override { return shale::Status::OK(); }
};

// Replays batch as recovery would, twice (the second time with the first one's prepared
// transactions known): each replay either refuses the batch and adds nothing, or adds one
// memtable entry per sequence it numbers.
void Replay(const shale::WriteBatch& batch) {
  const shale::InternalKeyComparator icmp(shale::BytewiseComparator());
  auto* mem = new shale::MemTable(icmp, 1 << 20);
  mem->Ref();
  shale::WalReplayer replayer(/*allow_2pc=*/true, /*min_data_log=*/1);
  for (int round = 0; round < 2; round++) {
    const uint64_t before = mem->num_entries();
    shale::SequenceNumber next = 0;
    shale::Status s = replayer.Apply(batch, /*log=*/1, mem, &next);
    if (!s.ok()) {
      FUZZ_CHECK(mem->num_entries() == before, "a refused batch changed the memtable");
      continue;
    }
    const shale::SequenceNumber first = shale::WriteBatchInternal::Sequence(&batch);
    FUZZ_CHECK(next >= first, "replay numbered backwards");
    // An entry equal to one already there (same key, sequence, type) is dropped, so the
    // second round may add fewer.
    FUZZ_CHECK(mem->num_entries() - before <= next - first,
               "more memtable entries than sequences numbered");
    if (round == 0) {
      FUZZ_CHECK(mem->num_entries() - before == next - first,
                 "memtable entries differ from sequences numbered");
    }
  }
  mem->Unref();
}

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
  Replay(batch);
  return 0;
}
