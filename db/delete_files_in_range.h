// DeleteFilesInRange(s) (include/shale/convenience.h): the SST files of one family that lie
// wholly inside key ranges leave the LSM tree at once, in one MANIFEST edit, without
// reading or rewriting anything: RocksDB's "drop a shard now, compact later". The data of
// files that only partly overlap a range stays, and so may older versions of the range's
// keys in deeper files that are not removed; a DeleteRange first, then this call, then a
// CompactRange removes every key (RocksDB's recipe).
//
// Which files go, as RocksDB 11.8.1's DBImpl::DeleteFilesInRanges decides:
//  - Levels 1 and deeper only. L0 files overlap each other, and a newer L0 file may hold
//    a deletion of an older file's key: none is removed, whatever its range.
//  - In a level, the run of files whose user keys lie within [begin, end] (null begin:
//    from the first key; null end: to the last), shrunk at both ends to a clean cut: a
//    file sharing a boundary user key with its neighbour outside the run stays, so that no
//    user key loses some of its versions in the level and keeps others.
//  - include_end false: a file whose largest user key is `end` stays.
//  - A file a running compaction reads stays. The files chosen are held from compactions
//    (CompactionPicker::HoldFiles) until the edit is recorded.
//  - Snapshots do not keep a file: a snapshot taken before may no longer see its data, as
//    RocksDB documents.
// Several ranges are removed in one edit; a file in more than one is removed once.
// begin after end selects nothing (OK, as RocksDB answers).
//
// The selection below is a pure function of one level's files; the DB's part
// (DBImpl::DeleteFilesInRanges, delete_files_in_range.cc) checks its arguments, selects
// under the DB mutex, records the edit (the files become obsolete and are deleted by the
// next sweep once no reader holds a Version listing them) and installs the new Version.
//
// Thread safety: FilesWithinRange reads only its arguments.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "db/version.h"
#include "shale/comparator.h"
#include "shale/slice.h"

namespace shale {

// The files [first, last) of `files`, one level >= 1 of a Version (sorted by smallest key,
// disjoint), that lie within the user keys [begin, end] (null: unbounded), shrunk to a clean
// cut. first == last when there are none. include_end is the caller's check.
std::pair<size_t, size_t> FilesWithinRange(const std::vector<FileMetaPtr>& files,
                                           const Comparator* ucmp, const Slice* begin,
                                           const Slice* end);

}  // namespace shale
