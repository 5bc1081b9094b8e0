// Block and block iterator over arbitrary bytes: construction and every iterator move may
// report Corruption, never crash or read out of bounds. When both scans succeed and the
// keys are sorted, the backward scan is the forward one reversed and Seek finds each key.
// A block whose footer announces a data block hash index is also probed with the point
// lookup that uses it (SeekForGet), whose answer must never lie before its target (a
// damaged bucket may make it miss, which no check can tell from an absent key).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "shale/comparator.h"
#include "table/block.h"
#include "table/format.h"
#include "util/dbformat.h"
#include "util/internal_iterator.h"

namespace {

// Point lookups through the hash index, with keys read as internal keys: each key of the
// block and a target just past each.
void ProbeHashIndex(const shale::Block& block) {
  const shale::InternalKeyComparator icmp(shale::BytewiseComparator());
  std::unique_ptr<shale::InternalIterator> it(block.NewIterator(&icmp, 8));
  std::vector<std::string> keys;
  for (it->SeekToFirst(); it->Valid() && keys.size() < 1000; it->Next()) {
    keys.push_back(it->key().ToString());
  }
  std::vector<std::string> targets = keys;
  for (const std::string& k : keys) targets.push_back(k + "\x01");
  for (const std::string& target : targets) {
    if (target.size() < 8) continue;
    const bool may_exist = block.SeekForGet(it.get(), target, shale::BytewiseComparator());
    if (may_exist && it->Valid()) {
      FUZZ_CHECK(icmp.Compare(it->key(), target) >= 0, "SeekForGet stopped before its target");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  shale::Block block{shale::BlockContents(shale::Slice(bytes))};
  if (!block.status().ok()) return 0;
  if (block.has_hash_index()) ProbeHashIndex(block);
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
