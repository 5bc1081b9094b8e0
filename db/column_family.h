// ColumnFamilyData: everything that belongs to one column family: its options, its
// comparator, the active memtable, the immutable memtables awaiting flush, and the
// SuperVersion readers pin. Only the default family (id 0) exists so far; the WAL and the
// MANIFEST are shared by the DB.
//
// SuperVersion: a reference-counted read view (active memtable + immutables + current
// Version). Readers pin one without the DB mutex and read from it; the DB installs a new
// one whenever any of its parts changes.
//
// Thread safety: fields are guarded by the DB mutex unless marked otherwise.
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
  MemTable* mem = nullptr;         // referenced
  std::vector<MemTable*> imm;      // referenced, newest first
  Version* current = nullptr;      // referenced

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
  ColumnFamilyData(uint32_t id, std::string name, const Options& options);
  ~ColumnFamilyData();
  ColumnFamilyData(const ColumnFamilyData&) = delete;
  ColumnFamilyData& operator=(const ColumnFamilyData&) = delete;

  uint32_t id() const { return id_; }
  const std::string& name() const { return name_; }
  const Options& options() const { return options_; }
  const InternalKeyComparator& internal_comparator() const { return icmp_; }
  const Comparator* user_comparator() const { return icmp_.user_comparator(); }

  // Guarded by the DB mutex.
  MemTable* mem() const { return mem_; }
  // Replaces the active memtable (taking a reference on it); the old one, if any, becomes
  // the newest immutable memtable.
  void SwitchMemtable(MemTable* new_mem);
  const std::vector<MemTable*>& imm() const { return imm_; }  // oldest first
  // Removes (and unreferences) the oldest immutable memtable after it is flushed.
  void RemoveOldestImmutable();
  // The smallest WAL number whose data is not yet in an SST file.
  uint64_t MinLogNumberToKeep() const;

  // The pinned read view. GetSuperVersion may be called without the DB mutex.
  std::shared_ptr<SuperVersion> GetSuperVersion() const;
  // REQUIRES: DB mutex. Returns the previous view.
  std::shared_ptr<SuperVersion> InstallSuperVersion(std::shared_ptr<SuperVersion> sv);

 private:
  const uint32_t id_;
  const std::string name_;
  const Options& options_;
  const InternalKeyComparator icmp_;

  MemTable* mem_ = nullptr;       // referenced
  std::vector<MemTable*> imm_;    // referenced, oldest first

  mutable Mutex sv_mu_;  // guards super_version_ only (never held long)
  std::shared_ptr<SuperVersion> super_version_ GUARDED_BY(sv_mu_);
};

}  // namespace shale
