// LiveFilesSource: what a copy of an open DB (utilities/checkpoint/) asks of it, through
// this narrow door rather than db_impl.h: one consistent cut of the files that make up the
// DB at a moment, while writers, flushes and compactions go on.
//
// The cut is taken with the main write queue held and after a MANIFEST write of the
// caller's own has completed (nothing else writes the MANIFEST while the DB mutex is held
// after it), so that, copied as described (the MANIFEST and the WALs up to the sizes given,
// the table files whole), the files open as the DB as it was at that moment: every write
// acknowledged before the call, and none that follows in its writer's order is missing
// while a later one is present. A write on the second queue (two_write_queues) may still be
// cut at the WAL's tail; recovery drops such a torn tail in every mode but
// kAbsoluteConsistency.
//
// Thread safety: callable from any thread, concurrently with everything but Close.
#pragma once

#include <cstdint>
#include <vector>

#include "shale/status.h"
#include "shale/types.h"

namespace shale {

struct LiveFilesCut {
  struct Sized {
    uint64_t number = 0;
    uint64_t size = 0;  // bytes to copy (a table file's whole size)
  };
  std::vector<Sized> table_files;  // of every live family
  Sized manifest;                  // the live MANIFEST, and its length at the cut
  uint64_t options_number = 0;     // the newest OPTIONS file; 0 if there is none
  std::vector<Sized> wals;         // oldest first: every WAL recovery would read
  // Every write up to it is in the cut.
  SequenceNumber sequence = 0;
};

class LiveFilesSource {
 public:
  // Flushes every family first when the WALs recovery needs total at least
  // wal_size_for_flush bytes (0: always; always with allow_2pc, as RocksDB decides), then
  // takes the cut. REQUIRES: the caller disabled file deletions (DB::DisableFileDeletions)
  // and keeps them disabled until it has copied the files.
  virtual Status CutLiveFiles(uint64_t wal_size_for_flush, LiveFilesCut* cut) = 0;

 protected:
  ~LiveFilesSource() = default;
};

}  // namespace shale
