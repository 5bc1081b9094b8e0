// ColumnFamilyData: everything that belongs to one column family: its options (as opened
// and as in effect), its comparator, its table cache and compaction picker, the active
// memtable, the immutable memtables awaiting flush, and the SuperVersion readers pin. Its
// Versions and log number live in the VersionSet; the WAL, the MANIFEST, the sequence
// numbers and the write pipeline are the DB's, shared by every family
// (db/column_family_set.h holds the DB's families).
//
// SuperVersion: a reference-counted read view (active memtable + immutables + current
// Version). Readers pin one without the DB mutex and read from it; the DB installs a new
// one whenever any of its parts changes.
//
// How a read pins a view without a lock: each thread has a slot (ThreadLocalSlots) that
// caches a reference to the current SuperVersion. A read exchanges the slot's content for
// the in-use marker and uses the reference it found; at the end it puts the reference back
// with a compare-and-swap from the marker. Installing a new SuperVersion sweeps every slot
// to empty, dropping the references cached there, so a slot only ever caches the current
// view; a read in progress during the sweep finds its marker gone when it returns and
// drops its reference instead of caching it. An empty slot (first read on a thread, or
// after a sweep) is filled from the current SuperVersion under sv_mu_, a short lock taken
// once per thread per install. A SuperVersion is deleted by whoever drops its last
// reference: a reader, the sweep, or a thread exiting with one cached.
//
// Thread safety: the memtables are guarded by the DB mutex, which it is built with; the
// methods that need it say REQUIRES(db_mutex_), which the compiler checks.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "db/compaction_picker.h"
#include "db/table_cache.h"
#include "db/thread_local_slots.h"
#include "db/version_set.h"
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
  std::atomic<int> refs{0};

  SuperVersion() = default;
  ~SuperVersion();
  SuperVersion(const SuperVersion&) = delete;
  SuperVersion& operator=(const SuperVersion&) = delete;

  // Thread-safe. Unref returns whether it dropped the last reference: the caller then
  // deletes it (UnrefSuperVersion does both).
  void Ref() { refs.fetch_add(1, std::memory_order_relaxed); }
  bool Unref() { return refs.fetch_sub(1, std::memory_order_acq_rel) == 1; }
};

// Drops one reference to sv and deletes it if that was the last. Returns whether it did.
bool UnrefSuperVersion(SuperVersion* sv);

// A SuperVersion pinned for one read (ColumnFamilyData::PinSuperVersion): the view stays
// alive until the pin is reset or destroyed. Move-only, and it must be released on the
// thread that took it, since it may hold that thread's cached reference.
class SuperVersionPin {
 public:
  SuperVersionPin() = default;
  ~SuperVersionPin() { Reset(); }
  SuperVersionPin(SuperVersionPin&& o) noexcept : sv_(o.sv_), slot_(o.slot_) {
    o.sv_ = nullptr;
    o.slot_ = nullptr;
  }
  SuperVersionPin& operator=(SuperVersionPin&& o) noexcept;
  SuperVersionPin(const SuperVersionPin&) = delete;
  SuperVersionPin& operator=(const SuperVersionPin&) = delete;

  // Null while the DB closes.
  SuperVersion* get() const { return sv_; }
  SuperVersion* operator->() const { return sv_; }
  explicit operator bool() const { return sv_ != nullptr; }
  // Gives the reference back to the thread's slot, or drops it if the slot was swept.
  void Reset();

 private:
  friend class ColumnFamilyData;
  SuperVersion* sv_ = nullptr;
  // The thread slot holding the in-use marker for sv_; null when sv_ is a reference of
  // its own (a nested pin on the same thread).
  std::atomic<void*>* slot_ = nullptr;
};

// A user's handle on a family. The family it names lives as long as the DB, so a handle
// never dangles while the DB is open; destroying a handle changes nothing in the DB.
class ColumnFamilyHandleImpl final : public ColumnFamilyHandle {
 public:
  // db: the DB the family belongs to (only compared, to refuse another DB's handle).
  ColumnFamilyHandleImpl(ColumnFamilyData* cfd, const void* db) : cfd_(cfd), db_(db) {}
  const std::string& GetName() const override;
  uint32_t GetID() const override;
  const Comparator* GetComparator() const override;
  Status GetDescriptor(ColumnFamilyDescriptor* desc) override;
  ColumnFamilyData* cfd() const { return cfd_; }
  const void* db() const { return db_; }

 private:
  ColumnFamilyData* const cfd_;
  const void* const db_;
};

class ColumnFamilyData {
 public:
  // options: the family's options as opened (the DB's options with the family's
  // ColumnFamilyOptions), checked; copied. Only their immutable fields (comparator, merge
  // operator, ...) are read through options(): the changeable ones are current_options()'s.
  // db_mutex: the DB mutex, which must outlive this object.
  ColumnFamilyData(uint32_t id, std::string name, const Options& options, const std::string& dbname,
                   Mutex* db_mutex);
  ~ColumnFamilyData();
  ColumnFamilyData(const ColumnFamilyData&) = delete;
  ColumnFamilyData& operator=(const ColumnFamilyData&) = delete;

  uint32_t id() const { return id_; }
  const std::string& name() const { return name_; }
  const Options& options() const { return options_; }
  const InternalKeyComparator& internal_comparator() const { return icmp_; }
  const Comparator* user_comparator() const { return icmp_.user_comparator(); }

  // The options in effect: options() with every SetOptions (and SetDBOptions) applied.
  // Replaced whole on a change, never modified: a holder of the pointer may read it without
  // the mutex.
  const std::shared_ptr<const Options>& current_options() const REQUIRES(db_mutex_) {
    return current_options_;
  }
  // Makes next the options in effect; the picker follows.
  void SetCurrentOptions(std::shared_ptr<const Options> next) REQUIRES(db_mutex_);
  // current_options()'s max_successive_merges, for memtable inserters (any thread, no mutex).
  size_t max_successive_merges() const {
    return max_successive_merges_.load(std::memory_order_relaxed);
  }
  TableCache* table_cache() const { return table_cache_.get(); }
  CompactionPicker* picker() const REQUIRES(db_mutex_) { return picker_.get(); }
  // What the VersionSet needs to build this family's Versions.
  VersionSet::FamilySetup version_setup() const {
    return VersionSet::FamilySetup{&options_, &icmp_, table_cache_.get()};
  }
  // Dropped (DropColumnFamily): writes to it fail, reads through a handle go on.
  bool dropped() const { return dropped_.load(std::memory_order_acquire); }
  void SetDropped() { dropped_.store(true, std::memory_order_release); }
  // For the compaction scheduler: a pick found nothing at this tree version (the DB's
  // counter of changes), so the same state is not picked from again.
  uint64_t nothing_to_pick_at GUARDED_BY(db_mutex_) = UINT64_MAX;

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
  // Whether nothing awaits a flush: the active memtable is empty and no immutable one is left.
  bool NothingUnflushed() const REQUIRES(db_mutex_) { return imm_.empty() && mem_->IsEmpty(); }

  // The current read view, pinned through the calling thread's cached reference: no lock
  // and no shared counter touched unless a new view was installed since this thread's last
  // pin. For reads that start and end on one thread (Get, MultiGet, GetMergeOperands).
  SuperVersionPin PinSuperVersion() const;
  // The current view with a reference the caller owns (UnrefSuperVersion), for views that
  // outlive the call or move between threads (iterators). Null while the DB closes.
  SuperVersion* GetReferencedSuperVersion() const;
  // The same as a shared_ptr that drops the reference, for callers off the hot path.
  std::shared_ptr<SuperVersion> GetSuperVersion() const;
  // Makes sv (fresh, refs == 0; null while closing) the current view and drops the
  // previous one and every thread's cached reference to it.
  void InstallSuperVersion(SuperVersion* sv) REQUIRES(db_mutex_);
  // Threads that hold a cache slot for this family, for tests.
  size_t TEST_NumCachedSlots() const { return sv_slots_.TEST_NumSlots(); }

  // The DB mutex, for the compiler: a caller holding it under another name says so with
  // REQUIRES(cfd->db_mutex()).
  Mutex* db_mutex() const RETURN_CAPABILITY(db_mutex_) { return db_mutex_; }

 private:
  const uint32_t id_;
  const std::string name_;
  const Options options_;
  const InternalKeyComparator icmp_;
  Mutex* const db_mutex_;
  const std::unique_ptr<TableCache> table_cache_;
  std::shared_ptr<const Options> current_options_ GUARDED_BY(db_mutex_);
  std::unique_ptr<CompactionPicker> picker_ PT_GUARDED_BY(db_mutex_);
  std::atomic<bool> dropped_{false};

  MemTable* mem_ GUARDED_BY(db_mutex_) = nullptr;         // referenced
  std::vector<MemTable*> imm_ GUARDED_BY(db_mutex_);      // referenced, oldest first
  std::vector<MemTable*> history_ GUARDED_BY(db_mutex_);  // referenced, newest first

  // The current view's pointer and the references taken from it when a slot is empty.
  SuperVersion* CurrentReferenced() const;
  void SwapCurrent(SuperVersion* sv);  // drops every cached reference and the old view's

  mutable Mutex sv_mu_;  // guards super_version_ only (never held long)
  SuperVersion* super_version_ GUARDED_BY(sv_mu_) = nullptr;  // one reference held
  // Each reader thread's cached reference to super_version_ (see the top of this file).
  mutable ThreadLocalSlots sv_slots_;
  std::atomic<size_t> max_successive_merges_;
};

}  // namespace shale
