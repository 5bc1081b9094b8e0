// WriteBatchWithIndex: writes go to the batch first, then into the index (wbwi_index.h);
// reads resolve a key from its index entries and, for GetFromBatchAndDB, the DB.
#include "shale/utilities/write_batch_with_index.h"

#include <optional>
#include <vector>

#include "db/column_family.h"
#include "db/merge_helper.h"
#include "shale/db.h"
#include "shale/merge_operator.h"
#include "utilities/write_batch_with_index/wbwi_index.h"

namespace shale {

struct WriteBatchWithIndex::Rep : public wbwi::BatchIndex {
  using BatchIndex::BatchIndex;

  // The id of the family handle names (null: the default), whose comparator orders that
  // family's entries from the first time a handle names it.
  uint32_t Family(ColumnFamilyHandle* column_family) {
    if (column_family == nullptr) return 0;
    const uint32_t id = column_family->GetID();
    SetComparator(id, column_family->GetComparator());
    return id;
  }
};

namespace {

// The options of the family behind handle when it is a family of shale's own DB (as
// RocksDB reaches them through its handle class); null for another handle. Only their
// fixed fields (merge operator, info log) are read.
const Options* FamilyOptions(ColumnFamilyHandle* column_family) {
  const auto* impl = dynamic_cast<const ColumnFamilyHandleImpl*>(column_family);
  return impl == nullptr ? nullptr : &impl->cfd()->options();
}

const MergeOperator* MergeOperatorOf(ColumnFamilyHandle* column_family) {
  const Options* options = FamilyOptions(column_family);
  return options == nullptr ? nullptr : options->merge_operator.get();
}

}  // namespace

WriteBatchWithIndex::WriteBatchWithIndex(const Comparator* backup_index_comparator,
                                         size_t reserved_bytes, bool overwrite_key)
    : rep_(std::make_unique<Rep>(backup_index_comparator, reserved_bytes, overwrite_key)) {}
WriteBatchWithIndex::~WriteBatchWithIndex() = default;
WriteBatchWithIndex::WriteBatchWithIndex(WriteBatchWithIndex&&) noexcept = default;
WriteBatchWithIndex& WriteBatchWithIndex::operator=(WriteBatchWithIndex&&) noexcept = default;

Status WriteBatchWithIndex::Put(ColumnFamilyHandle* column_family, const Slice& key,
                                const Slice& value) {
  const uint32_t cf = rep_->Family(column_family);
  Status s = rep_->batch()->Put(column_family, key, value);
  if (s.ok()) rep_->AddLast(cf, kPutRecord, key, value);
  return s;
}
Status WriteBatchWithIndex::Put(const Slice& key, const Slice& value) {
  return Put(nullptr, key, value);
}

Status WriteBatchWithIndex::Delete(ColumnFamilyHandle* column_family, const Slice& key) {
  const uint32_t cf = rep_->Family(column_family);
  Status s = rep_->batch()->Delete(column_family, key);
  if (s.ok()) rep_->AddLast(cf, kDeleteRecord, key, Slice());
  return s;
}
Status WriteBatchWithIndex::Delete(const Slice& key) { return Delete(nullptr, key); }

Status WriteBatchWithIndex::SingleDelete(ColumnFamilyHandle* column_family, const Slice& key) {
  const uint32_t cf = rep_->Family(column_family);
  Status s = rep_->batch()->SingleDelete(column_family, key);
  if (s.ok()) rep_->AddLast(cf, kSingleDeleteRecord, key, Slice());
  return s;
}
Status WriteBatchWithIndex::SingleDelete(const Slice& key) { return SingleDelete(nullptr, key); }

Status WriteBatchWithIndex::Merge(ColumnFamilyHandle* column_family, const Slice& key,
                                  const Slice& value) {
  const uint32_t cf = rep_->Family(column_family);
  Status s = rep_->batch()->Merge(column_family, key, value);
  if (s.ok()) rep_->AddLast(cf, kMergeRecord, key, value);
  return s;
}
Status WriteBatchWithIndex::Merge(const Slice& key, const Slice& value) {
  return Merge(nullptr, key, value);
}

Status WriteBatchWithIndex::PutLogData(const Slice& blob) {
  return rep_->batch()->PutLogData(blob);
}

void WriteBatchWithIndex::Clear() {
  rep_->batch()->Clear();
  rep_->Rebuild().PermitUncheckedError();  // an empty batch: nothing can fail
}

WriteBatch* WriteBatchWithIndex::GetWriteBatch() { return rep_->batch(); }

WBWIIterator* WriteBatchWithIndex::NewIterator(ColumnFamilyHandle* column_family) {
  return wbwi::NewIndexIterator(rep_.get(), rep_->Family(column_family), Status::OK());
}
WBWIIterator* WriteBatchWithIndex::NewIterator() { return NewIterator(nullptr); }

Iterator* WriteBatchWithIndex::NewIteratorWithBase(ColumnFamilyHandle* column_family,
                                                   Iterator* base_iterator,
                                                   const ReadOptions* read_options) {
  if (base_iterator == nullptr)
    return NewErrorIterator(Status::InvalidArgument("null base iterator"));
  const Slice* lower = read_options == nullptr ? nullptr : read_options->iterate_lower_bound;
  const Slice* upper = read_options == nullptr ? nullptr : read_options->iterate_upper_bound;
  return wbwi::NewBaseDeltaIterator(rep_.get(), rep_->Family(column_family), base_iterator, lower,
                                    upper, MergeOperatorOf(column_family));
}
Iterator* WriteBatchWithIndex::NewIteratorWithBase(Iterator* base_iterator) {
  return NewIteratorWithBase(nullptr, base_iterator, nullptr);
}

Status WriteBatchWithIndex::GetFromBatch(ColumnFamilyHandle* column_family,
                                         const DBOptions& options, const Slice& key,
                                         std::string* value) {
  const uint32_t cf = rep_->Family(column_family);
  Slice found;
  std::vector<Slice> operands;
  const wbwi::Lookup r = wbwi::LookupKey(*rep_, rep_->Newest(cf, key), &found, &operands);
  if (r == wbwi::Lookup::kNotFound) return Status::NotFound();
  if (operands.empty()) {
    if (r == wbwi::Lookup::kDeleted) return Status::NotFound();
    value->assign(found.data(), found.size());
    return Status::OK();
  }
  // Operands over a Put or Delete of the batch fold with the family's operator, if the
  // handle leads to one (DBOptions carry none); operands alone need the DB beneath.
  const MergeOperator* op = MergeOperatorOf(column_family);
  if (op == nullptr || r == wbwi::Lookup::kMergeInProgress) return Status::MergeInProgress();
  return FullMergeOperands(op, key, r == wbwi::Lookup::kFound ? &found : nullptr, operands, value,
                           options.info_log.get());
}
Status WriteBatchWithIndex::GetFromBatch(const DBOptions& options, const Slice& key,
                                         std::string* value) {
  return GetFromBatch(nullptr, options, key, value);
}

Status WriteBatchWithIndex::GetFromBatchAndDB(DB* db, const ReadOptions& read_options,
                                              ColumnFamilyHandle* column_family, const Slice& key,
                                              PinnableSlice* value) {
  if (db == nullptr) return Status::InvalidArgument("GetFromBatchAndDB: null DB");
  const uint32_t cf = rep_->Family(column_family);
  if (column_family == nullptr) column_family = db->DefaultColumnFamily();
  value->Reset();
  Slice found;
  std::vector<Slice> operands;
  const wbwi::Lookup r = wbwi::LookupKey(*rep_, rep_->Newest(cf, key), &found, &operands);
  Status s;
  if (r == wbwi::Lookup::kNotFound) return db->Get(read_options, column_family, key, value);
  if (operands.empty()) {
    if (r == wbwi::Lookup::kDeleted) return Status::NotFound();
    value->PinSelf(found);
    return Status::OK();
  }
  // Operands to fold with the DB's operator: through the handle, or for a DB of another
  // kind from GetOptions (a copy of all the options, so only when needed).
  std::optional<Options> copied;
  const Options* db_options = FamilyOptions(column_family);
  if (db_options == nullptr) {
    copied = db->GetOptions(column_family);
    db_options = &*copied;
  }
  const MergeOperator* op = db_options->merge_operator.get();
  if (op == nullptr) return Status::MergeInProgress();
  const Slice* existing = r == wbwi::Lookup::kFound ? &found : nullptr;
  PinnableSlice from_db;
  if (r == wbwi::Lookup::kMergeInProgress) {
    s = db->Get(read_options, column_family, key, &from_db);
    if (s.ok()) {
      existing = &from_db;
    } else if (!s.IsNotFound()) {
      return s;
    }
  }
  s = FullMergeOperands(op, key, existing, operands, value->GetSelf(), db_options->info_log.get());
  if (s.ok()) value->PinSelf();
  return s;
}
Status WriteBatchWithIndex::GetFromBatchAndDB(DB* db, const ReadOptions& read_options,
                                              ColumnFamilyHandle* column_family, const Slice& key,
                                              std::string* value) {
  PinnableSlice pinnable(value);
  Status s = GetFromBatchAndDB(db, read_options, column_family, key, &pinnable);
  if (s.ok() && pinnable.IsPinned()) value->assign(pinnable.data(), pinnable.size());
  return s;
}
Status WriteBatchWithIndex::GetFromBatchAndDB(DB* db, const ReadOptions& read_options,
                                              const Slice& key, std::string* value) {
  return GetFromBatchAndDB(db, read_options, nullptr, key, value);
}
Status WriteBatchWithIndex::GetFromBatchAndDB(DB* db, const ReadOptions& read_options,
                                              const Slice& key, PinnableSlice* value) {
  return GetFromBatchAndDB(db, read_options, nullptr, key, value);
}

void WriteBatchWithIndex::SetSavePoint() { rep_->batch()->SetSavePoint(); }

Status WriteBatchWithIndex::RollbackToSavePoint() {
  Status s = rep_->batch()->RollbackToSavePoint();
  // Rebuilt rather than trimmed: with overwrite_key an entry may point at a record that
  // the rollback removed while the record it replaced survives.
  if (s.ok()) s = rep_->Rebuild();
  return s;
}

Status WriteBatchWithIndex::PopSavePoint() { return rep_->batch()->PopSavePoint(); }

size_t WriteBatchWithIndex::GetDataSize() const { return rep_->batch()->GetDataSize(); }

}  // namespace shale
