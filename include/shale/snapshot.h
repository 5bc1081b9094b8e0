// Snapshot: a point in the sequence of writes. Reads through ReadOptions::snapshot see
// exactly the writes acknowledged before DB::GetSnapshot() returned it. Release it with
// DB::ReleaseSnapshot(); it must not outlive the DB.
#pragma once

#include "shale/types.h"

namespace shale {

class Snapshot {
 public:
  virtual SequenceNumber GetSequenceNumber() const = 0;

 protected:
  virtual ~Snapshot() = default;
};

}  // namespace shale
