// DB::GetProperty / GetIntProperty: named views of the DB's state, under RocksDB's names
// with our prefix ("shale.") and RocksDB's ("rocksdb.") both answering.
#include <cinttypes>
#include <cstdio>

#include "db/db_impl.h"

namespace shale {

const std::string DB::Properties::kStats = "shale.stats";
const std::string DB::Properties::kLevelStats = "shale.levelstats";
const std::string DB::Properties::kCFStats = "shale.cfstats";
const std::string DB::Properties::kDBStats = "shale.dbstats";
const std::string DB::Properties::kNumFilesAtLevelPrefix = "shale.num-files-at-level";
const std::string DB::Properties::kEstimateNumKeys = "shale.estimate-num-keys";
const std::string DB::Properties::kCurSizeAllMemTables = "shale.cur-size-all-mem-tables";
const std::string DB::Properties::kBlockCacheUsage = "shale.block-cache-usage";
const std::string DB::Properties::kEstimatePendingCompactionBytes =
    "shale.estimate-pending-compaction-bytes";
const std::string DB::Properties::kNumRunningCompactions = "shale.num-running-compactions";
const std::string DB::Properties::kNumRunningFlushes = "shale.num-running-flushes";
const std::string DB::Properties::kTotalSstFilesSize = "shale.total-sst-files-size";
const std::string DB::Properties::kNumImmutableMemTable = "shale.num-immutable-mem-table";
const std::string DB::Properties::kActualDelayedWriteRate = "shale.actual-delayed-write-rate";
const std::string DB::Properties::kIsWriteStopped = "shale.is-write-stopped";
const std::string DB::Properties::kSSTables = "shale.sstables";

namespace {

// "rocksdb.x" -> "shale.x"; anything else unchanged.
std::string Canonical(const Slice& property) {
  static const Slice kRocks("rocksdb.");
  if (property.starts_with(kRocks)) {
    return "shale." + std::string(property.data() + kRocks.size(), property.size() - kRocks.size());
  }
  return property.ToString();
}

}  // namespace

bool DBImpl::GetIntProperty(ColumnFamilyHandle* cf, const Slice& property, uint64_t* value) {
  if (!IsOwnFamily(cf)) return false;
  ColumnFamilyData* cfd = CfdOf(cf);
  const std::string name = Canonical(property);
  DbLock l(this);
  HeldFor(cfd);
  Version* current = versions_->current(cfd->id());
  if (current == nullptr) return false;  // dropped
  if (name == Properties::kEstimateNumKeys) {
    uint64_t entries = 0, deletes = 0;
    entries += cfd->mem()->num_entries();
    deletes += cfd->mem()->num_deletes();
    for (MemTable* m : cfd->imm()) {
      entries += m->num_entries();
      deletes += m->num_deletes();
    }
    for (int level = 0; level < current->NumLevels(); level++) {
      for (const auto& f : current->files(level)) {
        entries += f->num_entries;
        deletes += f->num_deletions;
      }
    }
    // A deletion hides itself and (likely) one older entry, as RocksDB estimates.
    *value = entries > 2 * deletes ? entries - 2 * deletes : 0;
    return true;
  }
  if (name == Properties::kCurSizeAllMemTables) {
    uint64_t size = cfd->mem()->ApproximateMemoryUsage();
    for (MemTable* m : cfd->imm()) size += m->ApproximateMemoryUsage();
    *value = size;
    return true;
  }
  if (name == Properties::kNumImmutableMemTable) {
    *value = cfd->imm().size();
    return true;
  }
  if (name == Properties::kTotalSstFilesSize) {
    uint64_t size = 0;
    for (int level = 0; level < current->NumLevels(); level++) {
      size += current->NumLevelBytes(level);
    }
    *value = size;
    return true;
  }
  if (name == Properties::kNumRunningFlushes) {
    *value = scheduler_.running_flushes();
    return true;
  }
  if (name == Properties::kNumRunningCompactions) {
    *value = scheduler_.running_compactions();
    return true;
  }
  if (name == Properties::kEstimatePendingCompactionBytes) {
    *value = EstimatePendingCompactionBytes(cfd);
    return true;
  }
  if (name == Properties::kIsWriteStopped) {
    // Stopped by the tree's shape, or (as MakeRoomForWrite decides it at each write) every
    // memtable is full and the next write waits for a flush.
    const bool memtables_full = static_cast<int>(cfd->imm().size()) >=
                                    cfd->current_options()->max_write_buffer_number - 1 &&
                                cfd->mem()->ShouldFlush();
    *value = write_controller_.state() == WriteController::State::kStopped || memtables_full;
    return true;
  }
  if (name == Properties::kActualDelayedWriteRate) {
    *value = write_controller_.state() == WriteController::State::kDelayed
                 ? write_controller_.delayed_write_rate()
                 : 0;
    return true;
  }
  if (name == Properties::kBlockCacheUsage) {
    return BlockCacheUsage(value);
  }
  const Slice n(name);
  if (n.starts_with(Properties::kNumFilesAtLevelPrefix)) {
    const std::string digits = name.substr(Properties::kNumFilesAtLevelPrefix.size());
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
      return false;
    }
    const int level = std::atoi(digits.c_str());
    if (level >= current->NumLevels()) return false;
    *value = current->NumFiles(level);
    return true;
  }
  return false;
}

bool DBImpl::GetAggregatedIntProperty(const Slice& property, uint64_t* value) {
  const std::string name = Canonical(property);
  // The properties of one family's memtables and files add up; the others are the DB's.
  const bool per_family =
      name == Properties::kEstimateNumKeys || name == Properties::kCurSizeAllMemTables ||
      name == Properties::kNumImmutableMemTable || name == Properties::kTotalSstFilesSize ||
      name == Properties::kEstimatePendingCompactionBytes ||
      Slice(name).starts_with(Properties::kNumFilesAtLevelPrefix);
  if (!per_family) return GetIntProperty(DefaultColumnFamily(), property, value);
  uint64_t sum = 0;
  for (ColumnFamilyHandleImpl& h : LiveFamilyHandles()) {
    uint64_t v = 0;
    // A family dropped meanwhile answers nothing and adds nothing.
    if (GetIntProperty(&h, property, &v)) {
      sum += v;
    } else if (h.cfd() == default_cf_) {
      return false;  // not a property at all
    }
  }
  *value = sum;
  return true;
}

bool DBImpl::GetMapProperty(ColumnFamilyHandle* cf, const Slice& property,
                            std::map<std::string, std::string>* value) {
  if (!IsOwnFamily(cf)) return false;
  ColumnFamilyData* cfd = CfdOf(cf);
  const std::string name = Canonical(property);
  if (name != Properties::kCFStats && name != Properties::kDBStats) return false;
  DbLock l(this);
  Version* current = versions_->current(cfd->id());
  if (current == nullptr) return false;  // dropped
  value->clear();
  if (name == Properties::kCFStats) {
    internal_stats_->FamilyMap(cfd->id(), current, ScoresPerLevel(cfd), value);
  } else {
    internal_stats_->DBMap(write_controller_, env_->NowMicros(), value);
  }
  return true;
}

bool DBImpl::GetProperty(ColumnFamilyHandle* cf, const Slice& property, std::string* value) {
  if (!IsOwnFamily(cf)) return false;
  ColumnFamilyData* cfd = CfdOf(cf);
  const std::string name = Canonical(property);
  if (name == Properties::kStats || name == Properties::kCFStats || name == Properties::kDBStats ||
      name == Properties::kLevelStats || name == Properties::kSSTables) {
    DbLock l(this);
    Version* current = versions_->current(cfd->id());
    if (current == nullptr) return false;  // dropped
    const uint64_t now = env_->NowMicros();
    if (name == Properties::kDBStats) {
      *value = internal_stats_->DumpDB(write_controller_, now);
    } else if (name == Properties::kStats || name == Properties::kCFStats) {
      // As RocksDB's: the family's stats, then (for "stats") the DB's.
      *value =
          internal_stats_->DumpFamily(cfd->id(), cfd->name(), current, ScoresPerLevel(cfd), now);
      if (name == Properties::kStats)
        value->append(internal_stats_->DumpDB(write_controller_, now));
    } else if (name == Properties::kLevelStats) {
      *value = InternalStats::DumpLevelSizes(current);
    } else {
      *value = current->DebugString(/*hex=*/true);
    }
    return true;
  }
  uint64_t n;
  if (GetIntProperty(cf, property, &n)) {
    *value = std::to_string(n);
    return true;
  }
  return false;
}

}  // namespace shale
