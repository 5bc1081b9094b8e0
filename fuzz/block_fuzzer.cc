// Block and block iterator over arbitrary bytes: construction and every iterator move may
// report Corruption, never crash or read out of bounds. When both scans succeed and the
// keys are sorted, the backward scan is the forward one reversed and Seek finds each key.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "shale/comparator.h"
#include "table/block.h"
#include "table/format.h"
#include "util/internal_iterator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  shale::Block block{shale::BlockContents(shale::Slice(bytes))};
  if (!block.status().ok()) return 0;
  const shale::Comparator* cmp = shale::BytewiseComparator();
  std::unique_ptr<shale::InternalIterator> it(block.NewIterator(cmp));
  std::vector<std::pair<std::string, std::string>> forward, backward;
  for (it->SeekToFirst(); it->Valid() && forward.size() < 100000; it->Next()) {
    forward.emplace_back(it->key().ToString(), it->value().ToString());
  }
  const bool forward_ok = it->status().ok();
  for (it->SeekToLast(); it->Valid() && backward.size() < 100000; it->Prev()) {
    backward.emplace_back(it->key().ToString(), it->value().ToString());
  }
  const bool backward_ok = it->status().ok();
  if (!forward_ok || !backward_ok) return 0;
  for (size_t i = 1; i < forward.size(); i++) {
    if (cmp->Compare(forward[i - 1].first, forward[i].first) >= 0) return 0;  // unsorted input
  }
  FUZZ_CHECK(forward.size() == backward.size(), "scans of different lengths");
  for (size_t i = 0; i < forward.size(); i++) {
    FUZZ_CHECK(forward[i] == backward[forward.size() - 1 - i], "backward scan differs");
  }
  for (const auto& [k, v] : forward) {
    it->Seek(k);
    FUZZ_CHECK(it->Valid() && it->key() == shale::Slice(k) && it->value() == shale::Slice(v),
               "Seek did not find a key the scan returned");
  }
  return 0;
}
