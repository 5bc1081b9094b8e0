// PreReleaseCallback: lets the transaction layer act on a write's sequence numbers after
// they are allocated and before any read can see them: WritePrepared transactions record
// a prepare as in flight, or a commit in the commit cache, here (utilities/transactions/).
//
// When it runs: once per write, before its memtable inserts, and in any case before the
// write's numbers, or any larger one, are published to readers. With one write queue, after
// the batch is logged (or, without the WAL, after its numbers are allocated); a write whose
// WAL append failed never calls it. With two write queues, a main-queue write's callback
// runs as its numbers are allocated, under the allocation lock and before its WAL append
// (a failed append has called it), so that no commit from the second queue numbered later
// is published before it; a second-queue write's runs after its append. A write without
// the WAL that only takes a number (DBImpl::WriteNumberOnly) may run it under the
// allocation lock too, publishing in the same hold.
//
// Thread safety: writers of different groups may call one callback object concurrently.
// It must be quick (it may hold up the other queue) and cannot fail.
#pragma once

#include <cstdint>

#include "shale/types.h"

namespace shale {

class PreReleaseCallback {
 public:
  virtual ~PreReleaseCallback() = default;
  // first_seq .. first_seq + count - 1: the numbers the write took (count >= 1 with
  // seq_per_batch; 0 for a write that takes none). log_number: the WAL it went to, 0 if none.
  virtual void Callback(SequenceNumber first_seq, uint64_t count, uint64_t log_number) = 0;
};

}  // namespace shale
