// InternalIterator: the cursor every internal source (memtable, data block, SST file,
// level, merge of them) offers. Keys are internal keys (see dbformat.h) unless a class says
// otherwise. The public Iterator (DBIter) is built on top of a tree of these.
//
// Thread safety: one thread at a time. key() and value() stay valid until the iterator
// moves, unless IsKeyPinned()/IsValuePinned() say they live as long as the iterator.
#pragma once

#include "shale/cleanable.h"
#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

class InternalIterator : public Cleanable {
 public:
  InternalIterator() = default;
  virtual ~InternalIterator() = default;
  InternalIterator(const InternalIterator&) = delete;
  InternalIterator& operator=(const InternalIterator&) = delete;

  virtual bool Valid() const = 0;
  virtual void SeekToFirst() = 0;
  virtual void SeekToLast() = 0;
  // First entry >= target.
  virtual void Seek(const Slice& target) = 0;
  // Last entry <= target.
  virtual void SeekForPrev(const Slice& target) = 0;
  virtual void Next() = 0;
  virtual void Prev() = 0;
  virtual Slice key() const = 0;
  virtual Slice value() const = 0;
  virtual Status status() const = 0;

  // Whether key()/value() stay valid for the iterator's whole life (memtable entries do).
  virtual bool IsKeyPinned() const { return false; }
  virtual bool IsValuePinned() const { return false; }
};

// An iterator with no entries and the given status (OK for an empty one). Caller owns it.
InternalIterator* NewEmptyInternalIterator(const Status& status = Status::OK());

}  // namespace shale
