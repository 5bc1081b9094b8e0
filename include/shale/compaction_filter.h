// CompactionFilter: the user's say over what compaction keeps. As compaction rewrites a
// key's entries it offers the newest one to the filter, which may keep it, drop it, change
// its value, or drop it and every key up to a bound without looking at them. Garbage
// collection of versions, expiry (utilities/db_ttl.h) and dropping an index's keys are
// built on it. Names, signatures and defaults are RocksDB's.
//
// What is offered, and when:
//  - In compaction, for each user key, its newest committed Put (ValueType::kValue), once,
//    whatever snapshots are live: IgnoreSnapshots() must answer true (a filter answering
//    false fails the compaction with NotSupported, as RocksDB's has since 6.0). Older Puts
//    of the key and the results of merges are never offered.
//  - Merge operands (kMergeOperand) newer than the latest live snapshot, one by one as the
//    compaction meets them; operands a snapshot sees are kept without asking.
//  - Flush offers nothing, unless a factory's ShouldFilterTableFileCreation(kFlush) is true:
//    then the memtable's entries are offered as in compaction (level 0). A memtable
//    replayed from the WAL at open is flushed for kRecovery, and asks about that reason.
//  - Deletions are never offered.
//
// What a decision does:
//  - kKeep: the entry stays as it is.
//  - kRemove: the entry becomes a Delete at the same sequence number, so the key's older
//    entries stay hidden from reads at the latest state; snapshots that saw an older
//    entry still see it. For a merge operand: the operand alone is dropped.
//  - kPurge: the entry becomes a SingleDelete (for keys written only with Put and
//    SingleDelete).
//  - kChangeValue: *new_value replaces the value (or the operand).
//  - kRemoveAndSkipUntil: the entry and every entry of every key in [key, *skip_until)
//    are dropped, without tombstones and without being read or offered: older versions in
//    levels below the compaction may become visible again. A *skip_until not greater than
//    key counts as kKeep.
//  - kChangeBlobIndex and kIOError (BlobDB's own) and kChangeWideColumnEntity (shale keeps
//    no wide-column entities) fail the compaction with NotSupported, and kUndetermined
//    with NotSupported too, as RocksDB answers a filter that is not BlobDB's.
//
// Thread safety: a filter set in ColumnFamilyOptions::compaction_filter is shared by every
// compaction and subcompaction of its family, so it is called from several threads at
// once and must be thread-safe. A filter made by a factory serves one subcompaction and is
// called from one thread; the factory itself is called from several. Neither is called
// under a DB lock, and neither may call back into the DB.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shale/slice.h"
#include "shale/types.h"
#include "shale/wide_columns.h"

namespace shale {

class CompactionFilter {
 public:
  enum ValueType {
    kValue,
    kMergeOperand,
    kBlobIndex,         // BlobDB's; never offered by shale
    kWideColumnEntity,  // never offered by shale
  };

  enum class Decision {
    kKeep,
    kRemove,
    kChangeValue,
    kRemoveAndSkipUntil,
    kChangeBlobIndex,  // BlobDB's own; NotSupported here
    kIOError,          // BlobDB's own; NotSupported here
    kPurge,
    kChangeWideColumnEntity,  // NotSupported here
    kUndetermined,            // never a valid answer
  };

  // What a factory learns about the job it makes a filter for.
  struct Context {
    // The job reads every file of the family's tree.
    bool is_full_compaction = false;
    // The job was asked for (CompactRange), not picked by the DB.
    bool is_manual_compaction = false;
    // The level the job reads from (0 for a flush).
    int input_start_level = 0;
    // The family the job writes.
    uint32_t column_family_id = 0;
    // Flush, recovery (the flush of a memtable replayed at open) or compaction.
    TableFileCreationReason reason = TableFileCreationReason::kCompaction;
  };

  virtual ~CompactionFilter() = default;

  // The simple form: return true to drop a Put (it becomes a Delete). To keep it with
  // another value, set *new_value and *value_changed and return false. level: the level
  // the compaction reads from.
  virtual bool Filter(int /*level*/, const Slice& /*key*/, const Slice& /*existing_value*/,
                      std::string* /*new_value*/, bool* /*value_changed*/) const {
    return false;
  }

  // Return true to drop one merge operand.
  virtual bool FilterMergeOperand(int /*level*/, const Slice& /*key*/,
                                  const Slice& /*operand*/) const {
    return false;
  }

  // The full form, with every decision; see the contract above. The default answers
  // through Filter and FilterMergeOperand.
  virtual Decision FilterV2(int level, const Slice& key, ValueType value_type,
                            const Slice& existing_value, std::string* new_value,
                            std::string* /*skip_until*/) const {
    switch (value_type) {
      case kValue: {
        bool value_changed = false;
        if (Filter(level, key, existing_value, new_value, &value_changed)) {
          return Decision::kRemove;
        }
        return value_changed ? Decision::kChangeValue : Decision::kKeep;
      }
      case kMergeOperand:
        return FilterMergeOperand(level, key, existing_value) ? Decision::kRemove : Decision::kKeep;
      default: return Decision::kKeep;
    }
  }

  // What the DB calls. existing_value is set for kValue and kMergeOperand;
  // existing_columns only for entities, which shale never offers. The default answers
  // through FilterV2.
  virtual Decision FilterV3(int level, const Slice& key, ValueType value_type,
                            const Slice* existing_value, const WideColumns* /*existing_columns*/,
                            std::string* new_value,
                            std::vector<std::pair<std::string, std::string>>* /*new_columns*/,
                            std::string* skip_until) const {
    if (existing_value == nullptr) return Decision::kKeep;
    return FilterV2(level, key, value_type, *existing_value, new_value, skip_until);
  }

  // Must stay true (the default): false fails every compaction with NotSupported.
  virtual bool IgnoreSnapshots() const { return true; }

  // Written to the OPTIONS file and the LOG.
  virtual const char* Name() const = 0;
};

// Makes a filter for each (sub)compaction, knowing what the job is (Context).
class CompactionFilterFactory {
 public:
  virtual ~CompactionFilterFactory() = default;

  // Whether jobs of this kind get a filter at all. Default: compactions only.
  virtual bool ShouldFilterTableFileCreation(TableFileCreationReason reason) const {
    return reason == TableFileCreationReason::kCompaction;
  }

  // May return null: that job runs without a filter.
  virtual std::unique_ptr<CompactionFilter> CreateCompactionFilter(
      const CompactionFilter::Context& context) = 0;

  // Written to the OPTIONS file and the LOG.
  virtual const char* Name() const = 0;
};

}  // namespace shale
