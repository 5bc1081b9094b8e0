#include "utilities/ttl/db_ttl_impl.h"

#include <utility>

#include "db/write_batch_internal.h"
#include "shale/write_batch.h"
#include "utilities/ttl/ttl_iterator.h"
#include "utilities/ttl/ttl_value.h"

namespace shale {

Status DBWithTTL::Open(const Options& options, const std::string& dbname, DBWithTTL** dbptr,
                       int32_t ttl, bool read_only) {
  const std::vector<ColumnFamilyDescriptor> families = {
      ColumnFamilyDescriptor(kDefaultColumnFamilyName, ColumnFamilyOptions(options))};
  std::vector<ColumnFamilyHandle*> handles;
  Status s = Open(DBOptions(options), dbname, families, &handles, dbptr, {ttl}, read_only);
  // The default family's handle: the DB keeps its own (DefaultColumnFamily()).
  for (ColumnFamilyHandle* h : handles) delete h;
  return s;
}

Status DBWithTTL::Open(const DBOptions& db_options, const std::string& dbname,
                       const std::vector<ColumnFamilyDescriptor>& column_families,
                       std::vector<ColumnFamilyHandle*>* handles, DBWithTTL** dbptr,
                       const std::vector<int32_t>& ttls, bool read_only) {
  *dbptr = nullptr;
  if (ttls.size() != column_families.size()) {
    return Status::InvalidArgument("ttls size has to be the same as number of column families");
  }
  Env* clock = db_options.env != nullptr ? db_options.env : Env::Default();
  std::vector<ColumnFamilyDescriptor> sanitized = column_families;
  std::vector<DBWithTTLImpl::Family> families;
  families.reserve(sanitized.size());
  for (size_t i = 0; i < sanitized.size(); i++) {
    families.push_back(DBWithTTLImpl::Sanitize(ttls[i], &sanitized[i].options, clock));
  }
  DB* db = nullptr;
  // Read-only: values are still read through the stamps and expire on reads; the writes
  // the wrapper makes reach the DB, which refuses them.
  Status s = read_only ? DB::OpenForReadOnly(db_options, dbname, sanitized, handles, &db)
                       : DB::Open(db_options, dbname, sanitized, handles, &db);
  if (!s.ok()) return s;
  std::vector<uint32_t> ids;
  for (ColumnFamilyHandle* h : *handles) ids.push_back(h->GetID());
  *dbptr = new DBWithTTLImpl(db, clock, ids, std::move(families));
  return s;
}

DBWithTTLImpl::Family DBWithTTLImpl::Sanitize(int32_t ttl, ColumnFamilyOptions* options,
                                              Env* clock) {
  Family f;
  f.setting = std::make_shared<ttl::TtlSetting>(ttl);
  if (options->compaction_filter != nullptr) {
    f.shared_filter =
        std::make_unique<ttl::TtlCompactionFilter>(f.setting, clock, options->compaction_filter);
    options->compaction_filter = f.shared_filter.get();
  } else {
    options->compaction_filter_factory = std::make_shared<ttl::TtlCompactionFilterFactory>(
        f.setting, clock, options->compaction_filter_factory);
  }
  if (options->merge_operator != nullptr) {
    options->merge_operator =
        std::make_shared<ttl::TtlMergeOperator>(options->merge_operator, clock);
  }
  return f;
}

DBWithTTLImpl::DBWithTTLImpl(DB* db, Env* clock, const std::vector<uint32_t>& ids,
                             std::vector<Family> families)
    : DBWithTTL(db), clock_(clock) {
  MutexLock l(&mu_);
  for (size_t i = 0; i < ids.size() && i < families.size(); i++) {
    families_[ids[i]] = std::move(families[i]);
  }
}

DBWithTTLImpl::~DBWithTTLImpl() {
  // The base DB's compactions use the filters held here: they stop before those go.
  Close().PermitUncheckedError();
}

Status DBWithTTLImpl::Close() {
  if (closed_) return Status::OK();
  closed_ = true;
  return db_->Close();
}

Status DBWithTTLImpl::CreateColumnFamilyWithTtl(const ColumnFamilyOptions& options,
                                                const std::string& name,
                                                ColumnFamilyHandle** handle, int ttl) {
  ColumnFamilyOptions sanitized = options;
  Family f = Sanitize(ttl, &sanitized, clock_);
  Status s = db_->CreateColumnFamily(sanitized, name, handle);
  if (!s.ok()) return s;
  MutexLock l(&mu_);
  families_[(*handle)->GetID()] = std::move(f);
  return s;
}

Status DBWithTTLImpl::CreateColumnFamily(const ColumnFamilyOptions& options,
                                         const std::string& name, ColumnFamilyHandle** handle) {
  return CreateColumnFamilyWithTtl(options, name, handle, 0);
}

Status DBWithTTLImpl::CreateColumnFamilies(const ColumnFamilyOptions& options,
                                           const std::vector<std::string>& names,
                                           std::vector<ColumnFamilyHandle*>* handles) {
  std::vector<ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : names) descriptors.emplace_back(name, options);
  return CreateColumnFamilies(descriptors, handles);
}

Status DBWithTTLImpl::CreateColumnFamilies(
    const std::vector<ColumnFamilyDescriptor>& column_families,
    std::vector<ColumnFamilyHandle*>* handles) {
  // As the base DB's: the families made before a failure stay, with their handles.
  handles->clear();
  for (const ColumnFamilyDescriptor& d : column_families) {
    ColumnFamilyHandle* h = nullptr;
    Status s = CreateColumnFamilyWithTtl(d.options, d.name, &h, 0);
    if (!s.ok()) return s;
    handles->push_back(h);
  }
  return Status::OK();
}

Status DBWithTTLImpl::Put(const WriteOptions& options, ColumnFamilyHandle* column_family,
                          const Slice& key, const Slice& value) {
  std::string stamped;
  ttl::Stamp(value, clock_, &stamped);
  return db_->Put(options, column_family, key, stamped);
}

Status DBWithTTLImpl::Merge(const WriteOptions& options, ColumnFamilyHandle* column_family,
                            const Slice& key, const Slice& value) {
  std::string stamped;
  ttl::Stamp(value, clock_, &stamped);
  return db_->Merge(options, column_family, key, stamped);
}

namespace {

// Copies a batch, stamping its Puts and Merges; other records pass unchanged. A record
// this handler does not know fails the copy (the defaults of WriteBatch::Handler).
class StampingHandler : public WriteBatch::Handler {
 public:
  explicit StampingHandler(Env* clock) : clock_(clock) {}
  WriteBatch stamped;

  Status PutCF(uint32_t cf, const Slice& key, const Slice& value) override {
    ttl::Stamp(value, clock_, &buf_);
    return WriteBatchInternal::AddRecord(&stamped, cf, kTypeValue, key, buf_);
  }
  Status MergeCF(uint32_t cf, const Slice& key, const Slice& value) override {
    ttl::Stamp(value, clock_, &buf_);
    return WriteBatchInternal::AddRecord(&stamped, cf, kTypeMerge, key, buf_);
  }
  Status DeleteCF(uint32_t cf, const Slice& key) override {
    return WriteBatchInternal::AddRecord(&stamped, cf, kTypeDeletion, key, Slice());
  }
  Status SingleDeleteCF(uint32_t cf, const Slice& key) override {
    return WriteBatchInternal::AddRecord(&stamped, cf, kTypeSingleDeletion, key, Slice());
  }
  Status DeleteRangeCF(uint32_t cf, const Slice& begin, const Slice& end) override {
    return WriteBatchInternal::AddRecord(&stamped, cf, kTypeRangeDeletion, begin, end);
  }
  void LogData(const Slice& blob) override { stamped.PutLogData(blob).PermitUncheckedError(); }

 private:
  Env* const clock_;
  std::string buf_;
};

}  // namespace

Status DBWithTTLImpl::Write(const WriteOptions& options, WriteBatch* updates) {
  StampingHandler handler(clock_);
  Status s = updates->Iterate(&handler);
  if (!s.ok()) return s;
  return db_->Write(options, &handler.stamped);
}

std::shared_ptr<ttl::TtlSetting> DBWithTTLImpl::SettingOf(ColumnFamilyHandle* column_family) {
  const uint32_t id = column_family != nullptr ? column_family->GetID() : 0;
  MutexLock l(&mu_);
  auto it = families_.find(id);
  return it != families_.end() ? it->second.setting : nullptr;
}

int32_t DBWithTTLImpl::TtlOf(ColumnFamilyHandle* column_family) {
  std::shared_ptr<ttl::TtlSetting> setting = SettingOf(column_family);
  return setting != nullptr ? setting->ttl.load(std::memory_order_relaxed) : 0;
}

Status DBWithTTLImpl::Finish(int32_t ttl, int64_t now, PinnableSlice* value) const {
  Status s = ttl::Check(*value);
  if (!s.ok()) return s;
  if (ttl::Expired(*value, ttl, now)) {
    value->Reset();
    return Status::NotFound();
  }
  value->remove_suffix(ttl::kTimestampLength);
  return s;
}

Status DBWithTTLImpl::Finish(int32_t ttl, int64_t now, std::string* value) const {
  Status s = ttl::Check(*value);
  if (!s.ok()) return s;
  if (ttl::Expired(*value, ttl, now)) {
    value->clear();
    return Status::NotFound();
  }
  value->resize(value->size() - ttl::kTimestampLength);
  return s;
}

Status DBWithTTLImpl::Get(const ReadOptions& options, ColumnFamilyHandle* column_family,
                          const Slice& key, PinnableSlice* value) {
  Status s = db_->Get(options, column_family, key, value);
  if (!s.ok()) return s;
  return Finish(TtlOf(column_family), ttl::Now(clock_), value);
}

Status DBWithTTLImpl::Get(const ReadOptions& options, ColumnFamilyHandle* column_family,
                          const Slice& key, std::string* value) {
  Status s = db_->Get(options, column_family, key, value);
  if (!s.ok()) return s;
  return Finish(TtlOf(column_family), ttl::Now(clock_), value);
}

Status DBWithTTLImpl::Get(const ReadOptions& options, const Slice& key, std::string* value) {
  return Get(options, DefaultColumnFamily(), key, value);
}

std::vector<Status> DBWithTTLImpl::MultiGet(const ReadOptions& options,
                                            const std::vector<ColumnFamilyHandle*>& column_family,
                                            const std::vector<Slice>& keys,
                                            std::vector<std::string>* values) {
  std::vector<Status> statuses = db_->MultiGet(options, column_family, keys, values);
  const int64_t now = ttl::Now(clock_);
  for (size_t i = 0; i < statuses.size() && i < values->size(); i++) {
    if (statuses[i].ok()) statuses[i] = Finish(TtlOf(column_family[i]), now, &(*values)[i]);
  }
  return statuses;
}

std::vector<Status> DBWithTTLImpl::MultiGet(const ReadOptions& options,
                                            const std::vector<Slice>& keys,
                                            std::vector<std::string>* values) {
  return MultiGet(options, std::vector<ColumnFamilyHandle*>(keys.size(), DefaultColumnFamily()),
                  keys, values);
}

void DBWithTTLImpl::MultiGet(const ReadOptions& options, ColumnFamilyHandle* column_family,
                             const size_t num_keys, const Slice* keys, PinnableSlice* values,
                             Status* statuses, const bool sorted_input) {
  db_->MultiGet(options, column_family, num_keys, keys, values, statuses, sorted_input);
  const int32_t ttl = TtlOf(column_family);
  const int64_t now = ttl::Now(clock_);
  for (size_t i = 0; i < num_keys; i++) {
    if (statuses[i].ok()) statuses[i] = Finish(ttl, now, &values[i]);
  }
}

Iterator* DBWithTTLImpl::NewIterator(const ReadOptions& options,
                                     ColumnFamilyHandle* column_family) {
  return new ttl::TtlIterator(db_->NewIterator(options, column_family), SettingOf(column_family),
                              clock_);
}

Iterator* DBWithTTLImpl::NewIterator(const ReadOptions& options) {
  return NewIterator(options, DefaultColumnFamily());
}

Status DBWithTTLImpl::NewIterators(const ReadOptions& options,
                                   const std::vector<ColumnFamilyHandle*>& column_families,
                                   std::vector<Iterator*>* iterators) {
  Status s = db_->NewIterators(options, column_families, iterators);
  if (!s.ok()) return s;
  for (size_t i = 0; i < iterators->size(); i++) {
    (*iterators)[i] = new ttl::TtlIterator((*iterators)[i], SettingOf(column_families[i]), clock_);
  }
  return s;
}

void DBWithTTLImpl::SetTtl(ColumnFamilyHandle* h, int32_t ttl) {
  std::shared_ptr<ttl::TtlSetting> setting = SettingOf(h);
  if (setting != nullptr) setting->ttl.store(ttl, std::memory_order_relaxed);
}

Status DBWithTTLImpl::GetTtl(ColumnFamilyHandle* h, int32_t* ttl) {
  if (h == nullptr || ttl == nullptr) {
    return Status::InvalidArgument("column family handle or ttl cannot be null");
  }
  std::shared_ptr<ttl::TtlSetting> setting = SettingOf(h);
  if (setting == nullptr) {
    return Status::InvalidArgument("TTLCompactionFilterFactory is not set for TTLDB");
  }
  *ttl = setting->ttl.load(std::memory_order_relaxed);
  return Status::OK();
}

}  // namespace shale
