// DBWithTTLImpl: shale/utilities/db_ttl.h over a base DB. Writes are stamped on the way in
// (one rebuilt WriteBatch per Write, so a batch stays atomic); reads check, judge and strip
// the stamp on the way out; each family's options carry the TTL filter and merge operator
// (ttl_compaction_filter.h), made before the family is opened or created.
//
// State: per family, its TtlSetting and the TtlCompactionFilter wrapped around a user's
// shared compaction_filter (the options hold a raw pointer to it, so it lives here until
// the base DB is closed). families_ is guarded by mu_, held only to find or add an entry,
// never across a call into the base DB.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "shale/utilities/db_ttl.h"
#include "util/mutexlock.h"
#include "utilities/ttl/ttl_compaction_filter.h"

namespace shale {

class DBWithTTLImpl final : public DBWithTTL {
 public:
  // What one family needs beyond its options.
  struct Family {
    std::shared_ptr<ttl::TtlSetting> setting;
    std::unique_ptr<ttl::TtlCompactionFilter> shared_filter;  // null without a user filter
  };
  // Rewrites options for a family with the given TTL: the user's filter or factory wrapped,
  // the merge operator wrapped. Returns what must outlive the family's use of them.
  static Family Sanitize(int32_t ttl, ColumnFamilyOptions* options, Env* clock);

  // Takes ownership of db, which was opened with the families' sanitized options; ids[i]
  // is the id of families[i].
  DBWithTTLImpl(DB* db, Env* clock, const std::vector<uint32_t>& ids, std::vector<Family> families);
  ~DBWithTTLImpl() override;
  Status Close() override;

  Status CreateColumnFamilyWithTtl(const ColumnFamilyOptions& options, const std::string& name,
                                   ColumnFamilyHandle** handle, int ttl) override;
  Status CreateColumnFamily(const ColumnFamilyOptions& options, const std::string& name,
                            ColumnFamilyHandle** handle) override;
  Status CreateColumnFamilies(const ColumnFamilyOptions& options,
                              const std::vector<std::string>& names,
                              std::vector<ColumnFamilyHandle*>* handles) override;
  Status CreateColumnFamilies(const std::vector<ColumnFamilyDescriptor>& column_families,
                              std::vector<ColumnFamilyHandle*>* handles) override;

  Status Put(const WriteOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
             const Slice& value) override;
  Status Put(const WriteOptions& options, const Slice& key, const Slice& value) override {
    return Put(options, DefaultColumnFamily(), key, value);
  }
  Status Merge(const WriteOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
               const Slice& value) override;
  Status Merge(const WriteOptions& options, const Slice& key, const Slice& value) override {
    return Merge(options, DefaultColumnFamily(), key, value);
  }
  Status Write(const WriteOptions& options, WriteBatch* updates) override;

  Status Get(const ReadOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
             PinnableSlice* value) override;
  Status Get(const ReadOptions& options, ColumnFamilyHandle* column_family, const Slice& key,
             std::string* value) override;
  Status Get(const ReadOptions& options, const Slice& key, std::string* value) override;
  std::vector<Status> MultiGet(const ReadOptions& options,
                               const std::vector<ColumnFamilyHandle*>& column_family,
                               const std::vector<Slice>& keys,
                               std::vector<std::string>* values) override;
  std::vector<Status> MultiGet(const ReadOptions& options, const std::vector<Slice>& keys,
                               std::vector<std::string>* values) override;
  void MultiGet(const ReadOptions& options, ColumnFamilyHandle* column_family,
                const size_t num_keys, const Slice* keys, PinnableSlice* values, Status* statuses,
                const bool sorted_input = false) override;

  Iterator* NewIterator(const ReadOptions& options, ColumnFamilyHandle* column_family) override;
  Iterator* NewIterator(const ReadOptions& options) override;
  Status NewIterators(const ReadOptions& options,
                      const std::vector<ColumnFamilyHandle*>& column_families,
                      std::vector<Iterator*>* iterators) override;

  void SetTtl(int32_t ttl) override { SetTtl(DefaultColumnFamily(), ttl); }
  void SetTtl(ColumnFamilyHandle* h, int32_t ttl) override;
  Status GetTtl(ColumnFamilyHandle* h, int32_t* ttl) override;

 private:
  // The family's setting; null for a family this DB did not open or create.
  std::shared_ptr<ttl::TtlSetting> SettingOf(ColumnFamilyHandle* column_family) EXCLUDES(mu_);
  int32_t TtlOf(ColumnFamilyHandle* column_family) EXCLUDES(mu_);
  // A value read from the base DB, made what the caller sees: Corruption for a bad stamp,
  // NotFound if expired, else OK with the stamp removed.
  Status Finish(int32_t ttl, int64_t now, PinnableSlice* value) const;
  Status Finish(int32_t ttl, int64_t now, std::string* value) const;

  Env* const clock_;
  bool closed_ = false;
  Mutex mu_;
  std::map<uint32_t, Family> families_ GUARDED_BY(mu_);
};

}  // namespace shale
