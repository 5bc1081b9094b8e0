// ColumnFamilySet: the DB's column families. It owns every ColumnFamilyData the DB has
// made, the dropped ones included (a user's handle may still read through one), until the
// DB goes; it finds the live ones by id and by name, and it is the table writers look
// their memtables up in (WriteBatchInternal's ColumnFamilyMemTables).
//
// Thread safety: the live families change under the DB mutex (Create, Drop); the methods
// that read them say REQUIRES(db_mutex). Writers read the live set without the mutex
// through an immutable snapshot of it, published with each change and kept until the set
// goes (families are created and dropped rarely, so the old snapshots cost little): a
// writer that loaded one may find a family in it that was dropped since, which inserts
// into a memtable nobody flushes (the write raced the drop; recovery skips it too).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "db/column_family.h"
#include "db/write_batch_internal.h"
#include "util/mutexlock.h"

namespace shale {

class ColumnFamilySet final : public ColumnFamilyMemTables {
 public:
  // db_mutex: the DB mutex, which must outlive the set.
  ColumnFamilySet(const std::string& dbname, Mutex* db_mutex);
  ~ColumnFamilySet() override;
  ColumnFamilySet(const ColumnFamilySet&) = delete;
  ColumnFamilySet& operator=(const ColumnFamilySet&) = delete;

  // Makes family `id` under `name` with options (checked by the caller); not live until
  // MakeLive (the DB first records it and gives it a memtable: nothing that walks the live
  // families may meet it half made). Writers see it from the next Publish.
  // REQUIRES: no live family has the id or the name.
  ColumnFamilyData* Create(uint32_t id, const std::string& name, const Options& options)
      REQUIRES(db_mutex_);
  void MakeLive(ColumnFamilyData* cfd) REQUIRES(db_mutex_);
  // Takes cfd out of the live set, for writers too; it stays allocated, marked dropped.
  void Drop(ColumnFamilyData* cfd) REQUIRES(db_mutex_);
  // Shows writers the live families as they are now. REQUIRES: each has a memtable.
  void Publish() REQUIRES(db_mutex_);

  // The default family (id 0), once created; never dropped.
  ColumnFamilyData* default_cf() const { return default_cf_; }
  // The live family with this id or name, or null.
  ColumnFamilyData* Find(uint32_t id) const REQUIRES(db_mutex_);
  ColumnFamilyData* FindByName(const std::string& name) const REQUIRES(db_mutex_);
  // The live families, by id.
  const std::map<uint32_t, ColumnFamilyData*>& live() const REQUIRES(db_mutex_) { return live_; }
  size_t NumLive() const REQUIRES(db_mutex_) { return live_.size(); }
  // Every family made, dropped ones included.
  const std::vector<std::unique_ptr<ColumnFamilyData>>& all() const REQUIRES(db_mutex_) {
    return all_;
  }

  // ColumnFamilyMemTables, for writers (any thread, no mutex).
  bool IsLive(uint32_t id) const override;
  MemTable* MemFor(uint32_t id) override;
  const Comparator* UserComparatorFor(uint32_t id) const override;
  // The live family with this id as writers see it (no mutex), or null.
  ColumnFamilyData* LiveFamilyFor(uint32_t id) const;
  // Whether a live family other than the default has a full active memtable (the WAL
  // leader's check for room, without the mutex).
  bool AnyOtherShouldFlush() const;
  // Charges the growth of the other live families' active memtables to their memtable
  // budget (MemTable::UpdateCharge). REQUIRES: the caller is the WAL leader.
  void UpdateCharges();

  Mutex* db_mutex() const RETURN_CAPABILITY(db_mutex_) { return db_mutex_; }

 private:
  using Snapshot = std::unordered_map<uint32_t, ColumnFamilyData*>;

  const std::string dbname_;
  Mutex* const db_mutex_;
  std::vector<std::unique_ptr<ColumnFamilyData>> all_ GUARDED_BY(db_mutex_);
  std::map<uint32_t, ColumnFamilyData*> live_ GUARDED_BY(db_mutex_);
  ColumnFamilyData* default_cf_ = nullptr;  // set by the first Create, before any reader
  // The live families other than the default, for writers; every one published is kept.
  std::atomic<const Snapshot*> writers_view_{nullptr};
  std::vector<std::unique_ptr<const Snapshot>> views_ GUARDED_BY(db_mutex_);
};

}  // namespace shale
