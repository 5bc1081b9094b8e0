// ColumnFamilyData: everything that belongs to one column family: its options, its
// comparator, the active memtable, the immutable memtables awaiting flush, and the
// SuperVersion readers pin. Only the default family (id 0) exists so far; the WAL and the
// MANIFEST are shared by the DB.
//
// SuperVersion: a reference-counted read view (active memtable + immutables + current
// Version). Readers pin one without the DB mutex and read from it; the DB installs a new
// one whenever any of its parts changes.
//
// Thread safety: the memtables are guarded by the DB mutex, which it is built with; the
// methods that need it say REQUIRES(db_mutex_), which the compiler checks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "memtable/memtable.h"
#include "shale/db.h"
#include "shale/options.h"
#include "util/dbformat.h"
#include "util/mutexlock.h"

namespace shale {

class Version;
class ColumnFamilyData;

struct SuperVersion {
  MemTable* mem = nullptr;     // referenced
  std::vector<MemTable*> imm;  // referenced, newest first
  // Flushed memtables kept for conflict checks (max_write_buffer_size_to_maintain),
  // referenced, newest first. Reads never look here: their data is in the files.
  std::vector<MemTable*> history;
  Version* current = nullptr;  // referenced

  SuperVersion() = default;
  ~SuperVersion();
  SuperVersion(const SuperVersion&) = delete;
  SuperVersion& operator=(const SuperVersion&) = delete;
};

class ColumnFamilyHandleImpl final : public ColumnFamilyHandle {
 public:
  explicit ColumnFamilyHandleImpl(ColumnFamilyData* cfd) : cfd_(cfd) {}
  const std::string& GetName() const override;
  uint32_t GetID() const override;
  const Comparator* GetComparator() const override;
  ColumnFamilyData* cfd() const { return cfd_; }

 private:
  ColumnFamilyData* cfd_;
};

class ColumnFamilyData {
 public:
  // options: the DB's options as opened, which must outlive this object. Only their
  // immutable fields (comparator, merge operator, ...) are read through options(): the
  // changeable ones live in the DB's current options (DBImpl::current_options_).
  // db_mutex: the DB mutex, which must outlive this object.
  ColumnFamilyData(uint32_t id, std::string name, const Options& options, Mutex* db_mutex);
  ~ColumnFamilyData();
  ColumnFamilyData(const ColumnFamilyData&) = delete;
  ColumnFamilyData& operator=(const ColumnFamilyData&) = delete;

  uint32_t id() const { return id_; }
  const std::string& name() const { return name_; }
  const Options& options() const { return options_; }
  const InternalKeyComparator& internal_comparator() const { return icmp_; }
  const Comparator* user_comparator() const { return icmp_.user_comparator(); }

  MemTable* mem() const REQUIRES(db_mutex_) { return mem_; }
  // The active memtable, for the leader of the WAL queue, which reads it without the DB
  // mutex: only a WAL leader switches memtables (under the mutex as well).
  // REQUIRES: the caller leads the WAL write queue.
  MemTable* mem_for_wal_leader() const NO_THREAD_SAFETY_ANALYSIS { return mem_; }
  // Replaces the active memtable (taking a reference on it); the old one, if any, becomes
  // the newest immutable memtable.
  void SwitchMemtable(MemTable* new_mem) REQUIRES(db_mutex_);
  const std::vector<MemTable*>& imm() const REQUIRES(db_mutex_) { return imm_; }  // oldest first
  // Removes the oldest immutable memtable after it is flushed: it is kept as history
  // while max_write_buffer_size_to_maintain allows (write_buffer_size: the one in effect),
  // else unreferenced.
  void RemoveOldestImmutable(size_t write_buffer_size) REQUIRES(db_mutex_);
  // Flushed memtables kept, newest first.
  const std::vector<MemTable*>& history() const REQUIRES(db_mutex_) { return history_; }
  // Drops the oldest kept memtables while all memtables together exceed the limit.
  void TrimHistory(size_t write_buffer_size) REQUIRES(db_mutex_);
  // The smallest WAL number whose data is not yet in an SST file.
  uint64_t MinLogNumberToKeep() const REQUIRES(db_mutex_);

  // The pinned read view. GetSuperVersion may be called without the DB mutex.
  std::shared_ptr<SuperVersion> GetSuperVersion() const;
  // Returns the previous view.
  std::shared_ptr<SuperVersion> InstallSuperVersion(std::shared_ptr<SuperVersion> sv)
      REQUIRES(db_mutex_);

  // The DB mutex, for the compiler: a caller holding it under another name says so with
  // REQUIRES(cfd->db_mutex()).
  Mutex* db_mutex() const RETURN_CAPABILITY(db_mutex_) { return db_mutex_; }

 private:
  const uint32_t id_;
  const std::string name_;
  const Options& options_;
  const InternalKeyComparator icmp_;
  Mutex* const db_mutex_;

  MemTable* mem_ GUARDED_BY(db_mutex_) = nullptr;         // referenced
  std::vector<MemTable*> imm_ GUARDED_BY(db_mutex_);      // referenced, oldest first
  std::vector<MemTable*> history_ GUARDED_BY(db_mutex_);  // referenced, newest first

  mutable Mutex sv_mu_;  // guards super_version_ only (never held long)
  std::shared_ptr<SuperVersion> super_version_ GUARDED_BY(sv_mu_);
};

}  // namespace shale
