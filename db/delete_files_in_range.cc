#include "db/delete_files_in_range.h"

#include <algorithm>
#include <set>

#include "db/db_impl.h"
#include "shale/convenience.h"
#include "shale/utilities/stackable_db.h"
#include "util/logging.h"

namespace shale {

std::pair<size_t, size_t> FilesWithinRange(const std::vector<FileMetaPtr>& files,
                                           const Comparator* ucmp, const Slice* begin,
                                           const Slice* end) {
  const size_t n = files.size();
  size_t first = 0, last = n;
  if (begin != nullptr) {
    first = static_cast<size_t>(std::partition_point(files.begin(), files.end(),
                                                     [&](const FileMetaPtr& f) {
                                                       return ucmp->Compare(f->smallest.user_key(),
                                                                            *begin) < 0;
                                                     }) -
                                files.begin());
  }
  if (end != nullptr) {
    last = static_cast<size_t>(
        std::partition_point(
            files.begin(), files.end(),
            [&](const FileMetaPtr& f) { return ucmp->Compare(f->largest.user_key(), *end) <= 0; }) -
        files.begin());
  }
  if (first >= last) return {first, first};
  // A boundary user key shared with a file outside the run keeps the file inside.
  auto shared = [&](size_t left) {
    return ucmp->Compare(files[left]->largest.user_key(), files[left + 1]->smallest.user_key()) ==
           0;
  };
  while (first > 0 && first < last && shared(first - 1)) first++;
  while (last < n && last > first && shared(last - 1)) last--;
  return {first, last};
}

Status DBImpl::DeleteFilesInRanges(ColumnFamilyHandle* cf, const RangePtr* ranges, size_t n,
                                   bool include_end) {
  if (cf == nullptr) return Status::InvalidArgument("column family handle is null");
  if (!IsOwnFamily(cf)) return Status::InvalidArgument("column family is not this DB's");
  if (ranges == nullptr && n > 0) return Status::InvalidArgument("ranges is null");
  if (read_only_) return Status::NotSupported("Not supported operation in read only mode.");
  ColumnFamilyData* cfd = CfdOf(cf);
  const Comparator* ucmp = cfd->internal_comparator().user_comparator();
  DbLock l(this);
  HeldFor(cfd);
  if (cfd->dropped()) return Status::ColumnFamilyDropped(cfd->name());
  if (!bg_error_.ok()) return bg_error_;
  Version* current = versions_->current(cfd->id());
  CompactionPicker* picker = cfd->picker();
  VersionEdit edit;
  edit.SetColumnFamily(cfd->id());
  std::set<uint64_t> chosen;
  std::vector<uint64_t> held;
  uint64_t bytes = 0;
  for (size_t r = 0; r < n; r++) {
    const Slice* begin = ranges[r].start;
    const Slice* end = ranges[r].limit;
    for (int level = 1; level < current->NumLevels(); level++) {
      const std::vector<FileMetaPtr>& files = current->files(level);
      const auto [first, last] = FilesWithinRange(files, ucmp, begin, end);
      for (size_t i = first; i < last; i++) {
        const FileMetaData& f = *files[i];
        if (picker->IsBeingCompacted(f) || chosen.count(f.number) > 0) continue;
        if (!include_end && end != nullptr && ucmp->Compare(f.largest.user_key(), *end) == 0) {
          continue;
        }
        edit.DeleteFile(level, f.number);
        chosen.insert(f.number);
        held.push_back(f.number);
        bytes += f.file_size;
      }
    }
  }
  if (held.empty()) return Status::OK();
  // The MANIFEST write drops the mutex: no compaction may take these files meanwhile.
  picker->HoldFiles(held);
  Status s = versions_->LogAndApply(&edit);
  picker->ReleaseFiles(held);
  if (s.ok()) {
    InstallNewSuperVersion(cfd);
    tree_version_++;
    RecalculateWriteStallConditions();
    MaybeScheduleCompaction();
    DeleteObsoleteFiles();
  } else if (!s.IsInvalidArgument()) {
    // The write may have reached the disk; the DB cannot tell which tree it has.
    RecordBackgroundError(s);
  }
  SHALE_LOG_INFO(info_log_, "[%s] DeleteFilesInRanges: %zu file(s), %llu bytes: %s",
                 cfd->name().c_str(), held.size(), static_cast<unsigned long long>(bytes),
                 s.ToString().c_str());
  return s;
}

namespace {

DBImpl* RootImpl(DB* db) {
  if (auto* stacked = dynamic_cast<StackableDB*>(db)) db = stacked->GetRootDB();
  return dynamic_cast<DBImpl*>(db);
}

}  // namespace

Status DeleteFilesInRange(DB* db, ColumnFamilyHandle* column_family, const Slice* begin,
                          const Slice* end, bool include_end) {
  const RangePtr range(begin, end);
  return DeleteFilesInRanges(db, column_family, &range, 1, include_end);
}

Status DeleteFilesInRanges(DB* db, ColumnFamilyHandle* column_family, const RangePtr* ranges,
                           size_t n, bool include_end) {
  if (db == nullptr) return Status::InvalidArgument("db is null");
  DBImpl* impl = RootImpl(db);
  if (impl == nullptr)
    return Status::NotSupported("DeleteFilesInRanges of a DB that is not shale's");
  return impl->DeleteFilesInRanges(column_family, ranges, n, include_end);
}

}  // namespace shale
