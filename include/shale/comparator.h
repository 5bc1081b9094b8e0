// Comparator: the total order of user keys. The DB records the comparator's Name() and
// refuses to reopen with a different one (InvalidArgument), since the files depend on it.
//
// Thread safety: implementations must be safe to call from many threads at once.
#pragma once

#include <string>

#include "shale/slice.h"

namespace shale {

class Comparator {
 public:
  virtual ~Comparator() = default;

  // <0, 0, >0 as a is less than, equal to or greater than b.
  virtual int Compare(const Slice& a, const Slice& b) const = 0;
  virtual bool Equal(const Slice& a, const Slice& b) const { return Compare(a, b) == 0; }
  // Whether two keys with different bytes may compare equal. Return false only if Equal(a, b)
  // implies a == b byte for byte: the memtable then keeps a filter of key hashes that lets a
  // lookup skip it. The default, true, is always safe.
  virtual bool CanKeysWithDifferentByteContentsBeEqual() const { return true; }

  // The name persisted in the DB; change it whenever the order changes.
  virtual const char* Name() const = 0;

  // May change *start to a shorter string in [*start, limit). Used to shorten index keys.
  virtual void FindShortestSeparator(std::string* start, const Slice& limit) const = 0;
  // May change *key to a shorter string >= *key.
  virtual void FindShortSuccessor(std::string* key) const = 0;

  // Timestamps are not supported; kept so ported code that asks compiles.
  size_t timestamp_size() const { return 0; }
};

// Lexicographic order of unsigned bytes. The result is a static object; do not delete it.
const Comparator* BytewiseComparator();
// The reverse of BytewiseComparator(). The result is a static object.
const Comparator* ReverseBytewiseComparator();

}  // namespace shale
