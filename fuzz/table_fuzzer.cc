// SST open, scan and point lookups over arbitrary bytes taken as a table file: Open and
// reads may fail with any error, never crash; a point lookup that succeeds agrees with the
// scan about every key the scan returned.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "shale/comparator.h"
#include "table/table_reader.h"
#include "util/dbformat.h"
#include "util/internal_iterator.h"

namespace {

struct Found {
  std::string key, value;
  bool hit = false;
};

bool SaveFirst(void* arg, const shale::Slice& k, const shale::Slice& v) {
  auto* f = static_cast<Found*>(arg);
  f->hit = true;
  f->key = k.ToString();
  f->value = v.ToString();
  return false;  // the first entry at or after the target is enough
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const shale::InternalKeyComparator icmp(shale::BytewiseComparator());
  std::string bytes(reinterpret_cast<const char*>(data), size);
  shale::TableReaderOptions options;
  options.icmp = &icmp;
  options.file_name = "fuzz.sst";
  options.table_options.block_cache.reset();
  options.table_options.no_block_cache = true;
  std::unique_ptr<shale::TableReader> reader;
  if (!shale::TableReader::Open(options, std::make_unique<shale::fuzz::StringFile>(bytes), size,
                                &reader)
           .ok()) {
    return 0;
  }
  std::vector<std::pair<std::string, std::string>> scan;
  std::unique_ptr<shale::InternalIterator> it(reader->NewIterator(shale::ReadOptions()));
  for (it->SeekToFirst(); it->Valid() && scan.size() < 10000; it->Next()) {
    scan.emplace_back(it->key().ToString(), it->value().ToString());
  }
  if (!it->status().ok()) return 0;
  for (size_t i = 1; i < scan.size(); i++) {
    if (icmp.Compare(scan[i - 1].first, scan[i].first) >= 0) return 0;  // unsorted input
  }
  for (const auto& [k, v] : scan) {
    if (k.size() < 8) continue;
    Found f;
    shale::Status s = reader->Get(shale::ReadOptions(), k, &f, &SaveFirst);
    // A lookup may miss (a filter says no only for keys it never saw, so a miss on a
    // scanned key means the filter is damaged, which its checksum must have caught).
    if (!s.ok()) continue;
    FUZZ_CHECK(f.hit, "Get with OK missed a key the scan returned: " + k);
    FUZZ_CHECK(f.key == k && f.value == v, "Get with OK returned another entry than the scan");
  }
  return 0;
}
