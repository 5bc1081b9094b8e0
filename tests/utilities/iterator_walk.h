// Walk: an iterator's entries as text, for the suites of tests/utilities to compare. It
// starts from SeekToFirst (or SeekToLast), so any iterator position is lost.
#pragma once

#include <string>

#include "shale/iterator.h"

namespace shale {

// "k=v," for every entry of the iterator, forward or backward, then "[status]" if the
// walk ended on an error.
inline std::string Walk(Iterator* it, bool backward = false) {
  std::string out;
  if (backward) {
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
      out += it->key().ToString() + "=" + it->value().ToString() + ",";
    }
  } else {
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out += it->key().ToString() + "=" + it->value().ToString() + ",";
    }
  }
  if (!it->status().ok()) out += "[" + it->status().ToString() + "]";
  return out;
}

}  // namespace shale
