// Iterator: a cursor over key/value pairs, from DB::NewIterator. It sees a consistent view
// (an implicit or explicit snapshot) and pins what it reads until it moves or is deleted.
//
// Thread safety: one thread at a time; delete it before the DB. key() and value() stay
// valid only until the next call that moves the iterator.
#pragma once

#include <string>

#include "shale/cleanable.h"
#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

class Iterator : public Cleanable {
 public:
  Iterator() = default;
  virtual ~Iterator() = default;
  Iterator(const Iterator&) = delete;
  Iterator& operator=(const Iterator&) = delete;

  // True while positioned at an entry; false past either end or on error (see status()).
  virtual bool Valid() const = 0;
  virtual void SeekToFirst() = 0;
  virtual void SeekToLast() = 0;
  // First entry with key >= target.
  virtual void Seek(const Slice& target) = 0;
  // Last entry with key <= target.
  virtual void SeekForPrev(const Slice& target) = 0;
  // REQUIRES: Valid()
  virtual void Next() = 0;
  // REQUIRES: Valid()
  virtual void Prev() = 0;
  // REQUIRES: Valid()
  virtual Slice key() const = 0;
  // REQUIRES: Valid()
  virtual Slice value() const = 0;
  virtual Status status() const = 0;
};

// An iterator with no entries and the given status.
Iterator* NewEmptyIterator();
Iterator* NewErrorIterator(const Status& status);

}  // namespace shale
