// The iterator over one level L >= 1: the concatenation of the level's files, which are
// sorted and do not overlap, so it finds the one file a seek lands in by binary search and
// opens files through the TableCache only when it reaches them.
//
// Both directions, SeekForPrev, SeekToLast. An error from opening or reading a file stops
// the iteration there: Valid() becomes false and status() says why (the files after it are
// not silently skipped).
//
// Thread safety: one thread at a time.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "db/version_edit.h"
#include "shale/options.h"
#include "util/dbformat.h"
#include "util/internal_iterator.h"

namespace shale {

class TableCache;

// REQUIRES: *files sorted by smallest key with no two overlapping. table_cache, icmp and
// *files must outlive the iterator (Version::AddIterators keeps its Version referenced for
// that). read_options is copied; the Slices its bounds point to must outlive the iterator.
// The caller owns the result.
InternalIterator* NewLevelIterator(TableCache* table_cache, const ReadOptions& read_options,
                                   const InternalKeyComparator* icmp,
                                   const std::vector<std::shared_ptr<FileMetaData>>* files);

// Index of the first file whose largest key is >= ikey (files.size() if none).
size_t FindFile(const InternalKeyComparator& icmp,
                const std::vector<std::shared_ptr<FileMetaData>>& files, const Slice& ikey);

}  // namespace shale
