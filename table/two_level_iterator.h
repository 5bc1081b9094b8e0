// A two-level iterator: a first-level iterator whose values name second-level iterators
// (an index block whose values are data block handles, or a list of files), presented as
// one iterator over the second-level entries in order.
//
// The first-level keys must be upper bounds of their second-level ranges: every key of
// entry i's second level is <= first-level key i and > first-level key i - 1 (the index
// block's separators are such bounds). An error from either level stops the iteration:
// Valid() turns false and status() reports it.
//
// Thread safety: one thread at a time.
#pragma once

#include <memory>

#include "util/internal_iterator.h"

namespace shale {

// Makes the second-level iterator for a first-level value; owned by the two-level
// iterator and used from its thread only.
class TwoLevelIteratorState {
 public:
  virtual ~TwoLevelIteratorState() = default;
  // The caller owns the result. On failure return an iterator whose status() says why
  // (NewEmptyInternalIterator(status)).
  virtual InternalIterator* NewSecondLevelIterator(const Slice& first_level_value) = 0;
  // Called at the end of each Seek(target) (forward) or SeekForPrev(target), with the
  // levels where the seek left them (second_level null when there is none): an error ends
  // the iteration with that status. For a state that can check the bounds a seek relied
  // on. Default: nothing to check.
  virtual Status CheckSeek(const Slice& /*target*/, bool /*forward*/,
                           InternalIterator* /*first_level*/, InternalIterator* /*second_level*/) {
    return Status::OK();
  }
};

// Takes ownership of state and first_level. Caller owns the result.
InternalIterator* NewTwoLevelIterator(std::unique_ptr<TwoLevelIteratorState> state,
                                      InternalIterator* first_level);

}  // namespace shale
