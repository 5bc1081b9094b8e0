// ReadCallback: the visibility hook every read path takes. A read at snapshot S sees an
// entry only if its sequence number is <= S and, when a callback is given, the callback
// says it is visible. WritePrepared transactions will use it to hide prepared but
// uncommitted data; plain reads pass nullptr.
//
// Thread safety: called from the reading thread only.
#pragma once

#include "shale/types.h"

namespace shale {

class ReadCallback {
 public:
  virtual ~ReadCallback() = default;
  // Whether data written at `seq` is visible to this read.
  virtual bool IsVisible(SequenceNumber seq) = 0;
};

}  // namespace shale
