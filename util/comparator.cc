#include "shale/comparator.h"

#include <algorithm>

namespace shale {
namespace {

class BytewiseComparatorImpl final : public Comparator {
 public:
  const char* Name() const override { return "leveldb.BytewiseComparator"; }
  int Compare(const Slice& a, const Slice& b) const override { return a.compare(b); }
  bool Equal(const Slice& a, const Slice& b) const override { return a == b; }
  bool CanKeysWithDifferentByteContentsBeEqual() const override { return false; }

  void FindShortestSeparator(std::string* start, const Slice& limit) const override {
    size_t min_length = std::min(start->size(), limit.size());
    size_t diff = 0;
    while (diff < min_length && (*start)[diff] == limit[diff]) diff++;
    if (diff >= min_length) return;  // one is a prefix of the other
    auto byte = static_cast<uint8_t>((*start)[diff]);
    if (byte < 0xff && byte + 1 < static_cast<uint8_t>(limit[diff])) {
      (*start)[diff]++;
      start->resize(diff + 1);
    }
  }

  void FindShortSuccessor(std::string* key) const override {
    for (size_t i = 0; i < key->size(); i++) {
      if (static_cast<uint8_t>((*key)[i]) != 0xff) {
        (*key)[i] = static_cast<char>(static_cast<uint8_t>((*key)[i]) + 1);
        key->resize(i + 1);
        return;
      }
    }
    // All 0xff: leave it as it is.
  }
};

class ReverseBytewiseComparatorImpl final : public Comparator {
 public:
  const char* Name() const override { return "rocksdb.ReverseBytewiseComparator"; }
  int Compare(const Slice& a, const Slice& b) const override { return -a.compare(b); }
  bool Equal(const Slice& a, const Slice& b) const override { return a == b; }
  bool CanKeysWithDifferentByteContentsBeEqual() const override { return false; }
  // Shortening in reverse order is rarely worth it; keys are kept as they are.
  void FindShortestSeparator(std::string*, const Slice&) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

}  // namespace

const Comparator* BytewiseComparator() {
  static const BytewiseComparatorImpl kInstance;
  return &kInstance;
}

const Comparator* ReverseBytewiseComparator() {
  static const ReverseBytewiseComparatorImpl kInstance;
  return &kInstance;
}

}  // namespace shale
