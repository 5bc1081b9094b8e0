// ConfigOptions: how options given as text (an OPTIONS file) are read. DeleteFilesInRange
// and DeleteFilesInRanges: files wholly inside key ranges dropped from a family's tree.
//
// RocksDB's ConfigOptions has many more fields (sanity levels, escaping, delimiters,
// object registries); shale keeps the two it honours, with RocksDB's names and defaults,
// so a RocksDB program that sets only these ports by renaming.
//
// Thread safety: ConfigOptions is a plain struct; the functions may be called from any
// thread while the DB is open.
#pragma once

#include <cstddef>

#include "shale/env.h"
#include "shale/slice.h"
#include "shale/status.h"

namespace shale {

class ColumnFamilyHandle;
class DB;

struct ConfigOptions {
  // Skip option names this build does not know instead of failing with InvalidArgument.
  // Needed to read an OPTIONS file that RocksDB wrote (it has options shale lacks).
  // Default: false.
  bool ignore_unknown_options = false;
  // Reads the files. Default: Env::Default().
  Env* env = Env::Default();

  ConfigOptions() = default;
};

// A key range by pointers: start (null: before every key) to limit (null: after every
// key). RocksDB keeps it beside RangeOpt, which shale does not have.
struct RangePtr {
  const Slice* start;
  const Slice* limit;

  RangePtr() : start(nullptr), limit(nullptr) {}
  RangePtr(const Slice* s, const Slice* l) : start(s), limit(l) {}
};

// Removes from the family's tree, in one MANIFEST edit, the SST files whose keys all lie in
// [begin, end] (null: unbounded; with include_end false, a file whose largest key is *end
// stays), without reading them. As RocksDB's: files at level 0 always stay, and so do
// files a compaction is reading and files that also hold keys outside the range, so keys
// of the range may remain, and older versions of them in files that stay may show again.
// Snapshots taken before may no longer see the data removed. Returns OK (also when nothing
// was removed), InvalidArgument for a null or foreign handle, ColumnFamilyDropped,
// NotSupported on a read-only instance, or the MANIFEST write's error.
Status DeleteFilesInRange(DB* db, ColumnFamilyHandle* column_family, const Slice* begin,
                          const Slice* end, bool include_end = true);

// The same for n ranges at once, in one MANIFEST edit (faster than one call per range).
Status DeleteFilesInRanges(DB* db, ColumnFamilyHandle* column_family, const RangePtr* ranges,
                           size_t n, bool include_end = true);

}  // namespace shale
