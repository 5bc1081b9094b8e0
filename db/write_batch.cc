// WriteBatch and WriteBatchInternal. Every reader of a batch's bytes goes through
// IterateRep, the one place that parses (and validates) the format.
#include "shale/write_batch.h"

#include <atomic>
#include <limits>
#include <optional>
#include <string>

#include "db/merge_folder.h"
#include "db/sub_batch.h"
#include "db/write_batch_internal.h"
#include "memtable/memtable.h"
#include "shale/db.h"
#include "util/coding.h"
#include "util/dbformat.h"

namespace shale {

namespace {

constexpr size_t kHeader = WriteBatchInternal::kHeader;

// A batch built from arbitrary bytes may be shorter than its header; edits first give it one.
void EnsureHeader(std::string* rep) {
  if (rep->size() < kHeader) rep->resize(kHeader, '\0');
}

uint32_t ColumnFamilyId(ColumnFamilyHandle* column_family) {
  return column_family == nullptr ? 0 : column_family->GetID();
}

bool TooLarge(const Slice& s) { return s.size() > std::numeric_limits<uint32_t>::max(); }

// What recovery under one write policy answers for a prepared section the other logged.
// A WAL of the other policy would be misread (the records of a WRITE_PREPARED prepare are
// in the memtable or SST files already, numbered per sub-batch; a WRITE_COMMITTED
// prepare's are not, and are numbered at their commit): refused, never guessed at.
Status OtherPolicysPrepare(PreparePolicy logged_by) {
  const bool wp = logged_by == PreparePolicy::kWritePrepared;
  return Status::NotSupported(
      std::string("the WAL holds a prepared transaction logged under the ") +
      (wp ? "WRITE_PREPARED" : "WRITE_COMMITTED") + " write policy, and the DB is opened with " +
      (wp ? "WRITE_COMMITTED" : "WRITE_PREPARED") +
      ". If it is not due to corruption, the WAL must be emptied before changing the "
      "WritePolicy: reopen with the old policy, commit or roll back every prepared "
      "transaction, and flush.");
}

// Walks the records of rep in order, calling handler for each (null: only validates).
// Corruption on anything malformed; the handler's first non-OK status is returned as is.
// policy (recovery only; null: any): the write policy a prepared section must be logged
// by. Handler is the handler's static type: the write path's own handlers are final
// classes, so that their calls are direct and inlined (1.4-1.9% fewer instructions in the
// 2-thread batch workloads, callgrind).
template <typename Handler>
Status IterateRep(const Slice& rep, Handler* handler, const PreparePolicy* policy = nullptr) {
  if (rep.size() < kHeader) {
    return Status::Corruption("malformed WriteBatch: shorter than its 12-byte header");
  }
  const uint32_t expected = DecodeFixed32(rep.data() + 8);
  Slice input(rep.data() + kHeader, rep.size() - kHeader);
  uint32_t found = 0;
  bool empty = true;  // no record before this one (for MarkNoop)
  while (!input.empty()) {
    if (handler != nullptr && !handler->Continue()) return Status::OK();
    const size_t pos = rep.size() - input.size();
    const auto tag = static_cast<unsigned char>(input[0]);
    input.remove_prefix(1);

    uint32_t cf = 0;
    Slice key;
    Slice value;
    bool ok;
    switch (tag) {
      case kTypeColumnFamilyValue:
      case kTypeColumnFamilyMerge:
      case kTypeColumnFamilyRangeDeletion:  // value: the end key
        ok = GetVarint32(&input, &cf) && GetLengthPrefixedSlice(&input, &key) &&
             GetLengthPrefixedSlice(&input, &value);
        break;
      case kTypeValue:
      case kTypeMerge:
      case kTypeRangeDeletion:
        ok = GetLengthPrefixedSlice(&input, &key) && GetLengthPrefixedSlice(&input, &value);
        break;
      case kTypeColumnFamilyDeletion:
      case kTypeColumnFamilySingleDeletion:
        ok = GetVarint32(&input, &cf) && GetLengthPrefixedSlice(&input, &key);
        break;
      case kTypeDeletion:
      case kTypeSingleDeletion:
      case kTypeLogData:
      case kTypeEndPrepareXID:
      case kTypeCommitXID:
      case kTypeRollbackXID: ok = GetLengthPrefixedSlice(&input, &key); break;  // key: the xid
      case kTypeBeginPrepareXID:
      case kTypeBeginPersistedPrepareXID:
      case kTypeNoop: ok = true; break;
      default:
        return Status::Corruption("malformed WriteBatch: unknown tag " + std::to_string(tag) +
                                  " at byte " + std::to_string(pos));
    }
    if (!ok) {
      return Status::Corruption("malformed WriteBatch: truncated record (tag " +
                                std::to_string(tag) + ") at byte " + std::to_string(pos));
    }
    const bool counted = tag != kTypeLogData && tag != kTypeBeginPrepareXID &&
                         tag != kTypeBeginPersistedPrepareXID && tag != kTypeEndPrepareXID &&
                         tag != kTypeCommitXID && tag != kTypeRollbackXID && tag != kTypeNoop;
    if (counted) found++;
    const bool was_empty = empty;
    empty = false;
    if (handler == nullptr) continue;

    Status s;
    switch (tag) {
      case kTypeColumnFamilyValue:
      case kTypeValue: s = handler->PutCF(cf, key, value); break;
      case kTypeColumnFamilyMerge:
      case kTypeMerge: s = handler->MergeCF(cf, key, value); break;
      case kTypeColumnFamilyDeletion:
      case kTypeDeletion: s = handler->DeleteCF(cf, key); break;
      case kTypeColumnFamilySingleDeletion:
      case kTypeSingleDeletion: s = handler->SingleDeleteCF(cf, key); break;
      case kTypeColumnFamilyRangeDeletion:
      case kTypeRangeDeletion: s = handler->DeleteRangeCF(cf, key, value); break;
      case kTypeLogData: handler->LogData(key); break;
      case kTypeBeginPrepareXID:
      case kTypeBeginPersistedPrepareXID: {
        s = handler->MarkBeginPrepare(false);
        const PreparePolicy logged_by = tag == kTypeBeginPrepareXID ? PreparePolicy::kWriteCommitted
                                                                    : PreparePolicy::kWritePrepared;
        if (s.ok() && policy != nullptr && *policy != logged_by) {
          s = OtherPolicysPrepare(logged_by);
        }
        break;
      }
      case kTypeEndPrepareXID: s = handler->MarkEndPrepare(key); break;
      case kTypeCommitXID: s = handler->MarkCommit(key); break;
      case kTypeRollbackXID: s = handler->MarkRollback(key); break;
      case kTypeNoop: s = handler->MarkNoop(was_empty); break;
      default: break;
    }
    if (!s.ok()) return s;
  }
  if (found != expected) {
    return Status::Corruption("malformed WriteBatch: header count " + std::to_string(expected) +
                              " but " + std::to_string(found) + " records");
  }
  return Status::OK();
}

// Whether rep is exactly one Put on the default column family, the batch DB::Put makes
// and the common case on the write path; if so, its key and value. ValidateForWrite and
// InsertInto take it without IterateRep's handler (virtual calls, a sub-batch splitter):
// in a fillseq profile the two parses of each batch cost more than the skip-list insert.
// Anything else (other record kinds, a wrong count, bytes left over) answers false and
// goes through IterateRep, which says what is wrong with it.
bool IsSinglePut(const Slice& rep, Slice* key, Slice* value) {
  if (rep.size() <= kHeader || DecodeFixed32(rep.data() + 8) != 1 ||
      static_cast<unsigned char>(rep[kHeader]) != kTypeValue) {
    return false;
  }
  Slice input(rep.data() + kHeader + 1, rep.size() - kHeader - 1);
  return GetLengthPrefixedSlice(&input, key) && GetLengthPrefixedSlice(&input, value) &&
         input.empty();
}

// ValidateForWrite's walk for the common batch: records of the default column family
// only (Put, Delete, SingleDelete, Merge; no marker, no blob), the header's count of them,
// nothing after them. Answers false for anything else, having set nothing: the general
// walk then checks it and says what is wrong. (The general walk's per-record dispatch cost
// about as much as the parse in a WritePrepared write's profile.)
bool ValidatePlainRecords(const Slice& rep, bool count_sub_batches, bool* has_merge,
                          uint64_t* sub_batches) {
  if (rep.size() < kHeader) return false;
  Slice input(rep.data() + kHeader, rep.size() - kHeader);
  uint32_t found = 0;
  bool merge = false;
  SubBatchSplitter splitter;
  while (!input.empty()) {
    const auto tag = static_cast<unsigned char>(input[0]);
    input.remove_prefix(1);
    Slice key;
    Slice value;
    switch (tag) {
      case kTypeMerge: merge = true; [[fallthrough]];
      case kTypeValue:
        if (!GetLengthPrefixedSlice(&input, &key) || !GetLengthPrefixedSlice(&input, &value)) {
          return false;
        }
        break;
      case kTypeDeletion:
      case kTypeSingleDeletion:
        if (!GetLengthPrefixedSlice(&input, &key)) return false;
        break;
      default: return false;
    }
    if (count_sub_batches) splitter.StartsNew(key);
    found++;
  }
  if (found != DecodeFixed32(rep.data() + 8)) return false;
  *has_merge = merge;
  if (count_sub_batches) *sub_batches = splitter.sub_batches();
  return true;
}

// Which kinds of records a batch holds.
class KindRecorder : public WriteBatch::Handler {
 public:
  bool put = false, del = false, single_del = false, merge = false, delete_range = false;
  bool begin_prepare = false, end_prepare = false, commit = false, rollback = false;
  Status MarkBeginPrepare(bool) override {
    begin_prepare = true;
    return Status::OK();
  }
  Status MarkEndPrepare(const Slice&) override {
    end_prepare = true;
    return Status::OK();
  }
  Status MarkCommit(const Slice&) override {
    commit = true;
    return Status::OK();
  }
  Status MarkRollback(const Slice&) override {
    rollback = true;
    return Status::OK();
  }
  Status PutCF(uint32_t, const Slice&, const Slice&) override {
    put = true;
    return Status::OK();
  }
  Status DeleteCF(uint32_t, const Slice&) override {
    del = true;
    return Status::OK();
  }
  Status SingleDeleteCF(uint32_t, const Slice&) override {
    single_del = true;
    return Status::OK();
  }
  Status MergeCF(uint32_t, const Slice&, const Slice&) override {
    merge = true;
    return Status::OK();
  }
  Status DeleteRangeCF(uint32_t, const Slice&, const Slice&) override {
    delete_range = true;
    return Status::OK();
  }
};

KindRecorder Kinds(const std::string& rep) {
  KindRecorder r;
  IterateRep(rep, &r).PermitUncheckedError();
  return r;
}

// Checks a batch before it is written: only live column families; notes Merges. Two-phase commit
// markers come only from a TransactionDB's own writes (DBForTransactions::WriteTxn, txn_markers):
// anyone else's write holding one is refused. (Recovery checks logged batches itself:
// db/wal_replay.h.) With count_sub_batches, also counts the batch's sub-batches (db/sub_batch.h).
class ColumnFamilyChecker final : public WriteBatch::Handler {
 public:
  ColumnFamilyChecker(const ColumnFamilyMemTables* families, bool txn_markers,
                      bool count_sub_batches)
      : families_(families), txn_markers_(txn_markers), count_sub_batches_(count_sub_batches) {}
  bool has_merge = false;
  bool begin_prepare = false;
  bool commit = false;
  SubBatchSplitter splitter;
  Status MarkBeginPrepare(bool) override {
    begin_prepare = true;
    return Marker();
  }
  Status MarkEndPrepare(const Slice&) override { return Marker(); }
  Status MarkCommit(const Slice&) override {
    commit = true;
    return Marker();
  }
  Status MarkRollback(const Slice&) override { return Marker(); }
  Status PutCF(uint32_t cf, const Slice& key, const Slice&) override { return Check(cf, key); }
  Status DeleteCF(uint32_t cf, const Slice& key) override { return Check(cf, key); }
  Status SingleDeleteCF(uint32_t cf, const Slice& key) override { return Check(cf, key); }
  Status MergeCF(uint32_t cf, const Slice& key, const Slice&) override {
    has_merge = true;
    return Check(cf, key);
  }
  // A reversed range fails the write before any of it reaches the WAL (RocksDB fails it at
  // the memtable insert, with this status); an empty one passes and deletes nothing.
  Status DeleteRangeCF(uint32_t cf, const Slice& begin, const Slice& end) override {
    Status s = Check(cf, begin);
    if (!s.ok()) return s;
    const Comparator* ucmp = families_ != nullptr ? families_->UserComparatorFor(cf) : nullptr;
    if (ucmp == nullptr) ucmp = BytewiseComparator();
    if (ucmp->Compare(begin, end) > 0) {
      return Status::InvalidArgument("end key comes before start key");
    }
    return Status::OK();
  }

 private:
  Status Check(uint32_t cf, const Slice& key) {
    if (cf != 0 && (families_ == nullptr || !families_->IsLive(cf))) {
      return Status::InvalidArgument("Invalid column family specified in write batch");
    }
    if (count_sub_batches_) splitter.StartsNew(key);
    return Status::OK();
  }
  Status Marker() const {
    if (txn_markers_) return Status::OK();
    return Status::NotSupported(
        "WriteBatch holds two-phase commit markers, which only a "
        "TransactionDB writes");
  }
  const ColumnFamilyMemTables* const families_;
  const bool txn_markers_;
  const bool count_sub_batches_;
};

// Numbered per sub-batch (sub_batches > 0), records share their sub-batch's sequence
// number (db/sub_batch.h). Records of family 0 go to mem; the others' to the memtable
// families gives for them.
class MemTableInserter final : public WriteBatch::Handler {
 public:
  MemTableInserter(SequenceNumber seq, MemTable* mem, ColumnFamilyMemTables* families,
                   bool concurrent, uint64_t sub_batches, MergeFolder* folder, uint64_t prep_log)
      : seq_(seq),
        default_mem_(mem),
        families_(families),
        concurrent_(concurrent),
        sub_batches_(sub_batches),
        folder_(folder),
        prep_log_(prep_log) {}
  Status PutCF(uint32_t cf, const Slice& key, const Slice& value) override {
    return Add(cf, kTypeValue, key, value);
  }
  Status DeleteCF(uint32_t cf, const Slice& key) override {
    return Add(cf, kTypeDeletion, key, Slice());
  }
  Status SingleDeleteCF(uint32_t cf, const Slice& key) override {
    return Add(cf, kTypeSingleDeletion, key, Slice());
  }
  Status DeleteRangeCF(uint32_t cf, const Slice& begin, const Slice& end) override {
    const SequenceNumber seq = Next(begin);
    Status s = SeekToFamily(cf);
    if (!s.ok()) return s;
    // The tombstone list is apart from the skip list: no group to flush first. An empty
    // range takes its number and nothing else.
    if (mem_->internal_comparator().user_comparator()->Compare(begin, end) < 0) {
      mem_->AddRangeTombstone(seq, begin, end);
    }
    return Status::OK();
  }
  // Only markers the checker let through arrive here, and they change nothing (a
  // WritePrepared prepare reaches the memtable with its section's markers around it).
  Status MarkBeginPrepare(bool) override { return Status::OK(); }
  Status MarkEndPrepare(const Slice&) override { return Status::OK(); }
  Status MarkCommit(const Slice&) override { return Status::OK(); }
  Status MarkRollback(const Slice&) override { return Status::OK(); }
  Status MergeCF(uint32_t cf, const Slice& key, const Slice& value) override {
    const SequenceNumber seq = Next(key);
    Status s = SeekToFamily(cf);
    if (!s.ok()) return s;
    // The fold reads the memtable, which must hold this batch's earlier records.
    if (folder_ != nullptr) adder_->Flush();
    // The folded Put takes the operand's sequence number; snapshots older than it still
    // see the operands beneath.
    if (folder_ != nullptr && folder_->FoldSuccessiveMerges(cf_, mem_, key, seq, value, &merged_)) {
      adder_->Add(seq, kTypeValue, key, merged_);
    } else {
      adder_->Add(seq, kTypeMerge, key, value);
    }
    return Status::OK();
  }

 private:
  // The sequence number of the next record, whose key is key.
  SequenceNumber Next(const Slice& key) {
    if (sub_batches_ == 0) return seq_++;
    if (sub_batches_ > 1 && splitter_.StartsNew(key)) seq_++;
    return seq_;
  }
  // Points adder_ at family cf's memtable. A family dropped since the batch was checked
  // takes nothing more (its records stay in the WAL, which recovery passes over).
  Status SeekToFamily(uint32_t cf) {
    if (adder_ && cf == cf_) return Status::OK();
    MemTable* mem = cf == 0 ? default_mem_ : families_ != nullptr ? families_->MemFor(cf) : nullptr;
    if (mem == nullptr) {
      return Status::InvalidArgument("Invalid column family specified in write batch");
    }
    adder_.reset();  // links what went to the previous family's memtable
    if (prep_log_ != 0) mem->RefLogContainingPrepSection(prep_log_);
    cf_ = cf;
    mem_ = mem;
    adder_.emplace(mem, concurrent_);
    return Status::OK();
  }
  Status Add(uint32_t cf, ValueType type, const Slice& key, const Slice& value) {
    const SequenceNumber seq = Next(key);
    Status s = SeekToFamily(cf);
    if (!s.ok()) return s;
    adder_->Add(seq, type, key, value);
    return Status::OK();
  }
  SequenceNumber seq_;
  MemTable* const default_mem_;
  ColumnFamilyMemTables* const families_;
  const bool concurrent_;
  const uint64_t sub_batches_;
  SubBatchSplitter splitter_;
  MergeFolder* const folder_;
  const uint64_t prep_log_;  // see WriteBatchInternal::InsertInto
  std::string merged_;
  uint32_t cf_ = 0;
  MemTable* mem_ = nullptr;
  // Records go into the skip list a group at a time (MemTable::GroupAdder); the last group
  // is linked when the inserter goes, before InsertInto returns.
  std::optional<MemTable::GroupAdder> adder_;
};

}  // namespace

WriteBatch::WriteBatch(size_t reserved_bytes) {
  rep_.reserve(reserved_bytes > kHeader ? reserved_bytes : kHeader);
  rep_.resize(kHeader);
}

WriteBatch::WriteBatch(const std::string& rep) : rep_(rep) {}

Status WriteBatchInternal::AddRecord(WriteBatch* batch, uint32_t cf, ValueType type,
                                     const Slice& key, const Slice& value) {
  if (TooLarge(key)) return Status::InvalidArgument("key is too large");
  const bool has_value = type == kTypeValue || type == kTypeMerge || type == kTypeRangeDeletion;
  if (has_value && TooLarge(value)) {
    return Status::InvalidArgument(type == kTypeRangeDeletion ? "end key is too large"
                                                              : "value is too large");
  }
  std::string& rep = batch->rep_;
  EnsureHeader(&rep);
  SetCount(batch, Count(batch) + 1);
  if (cf == 0) {
    rep.push_back(static_cast<char>(type));
  } else {
    ValueType tagged = kTypeColumnFamilyValue;
    switch (type) {
      case kTypeDeletion: tagged = kTypeColumnFamilyDeletion; break;
      case kTypeSingleDeletion: tagged = kTypeColumnFamilySingleDeletion; break;
      case kTypeMerge: tagged = kTypeColumnFamilyMerge; break;
      case kTypeRangeDeletion: tagged = kTypeColumnFamilyRangeDeletion; break;
      default: break;
    }
    rep.push_back(static_cast<char>(tagged));
    PutVarint32(&rep, cf);
  }
  PutLengthPrefixedSlice(&rep, key);
  if (has_value) PutLengthPrefixedSlice(&rep, value);
  return Status::OK();
}

Status WriteBatch::Put(ColumnFamilyHandle* column_family, const Slice& key, const Slice& value) {
  return WriteBatchInternal::AddRecord(this, ColumnFamilyId(column_family), kTypeValue, key, value);
}

Status WriteBatch::Delete(ColumnFamilyHandle* column_family, const Slice& key) {
  return WriteBatchInternal::AddRecord(this, ColumnFamilyId(column_family), kTypeDeletion, key,
                                       Slice());
}

Status WriteBatch::SingleDelete(ColumnFamilyHandle* column_family, const Slice& key) {
  return WriteBatchInternal::AddRecord(this, ColumnFamilyId(column_family), kTypeSingleDeletion,
                                       key, Slice());
}

Status WriteBatch::DeleteRange(ColumnFamilyHandle* column_family, const Slice& begin_key,
                               const Slice& end_key) {
  return WriteBatchInternal::AddRecord(this, ColumnFamilyId(column_family), kTypeRangeDeletion,
                                       begin_key, end_key);
}

Status WriteBatch::Merge(ColumnFamilyHandle* column_family, const Slice& key, const Slice& value) {
  return WriteBatchInternal::AddRecord(this, ColumnFamilyId(column_family), kTypeMerge, key, value);
}

Status WriteBatch::PutLogData(const Slice& blob) {
  if (TooLarge(blob)) return Status::InvalidArgument("blob is too large");
  EnsureHeader(&rep_);
  rep_.push_back(static_cast<char>(kTypeLogData));
  PutLengthPrefixedSlice(&rep_, blob);
  return Status::OK();
}

void WriteBatch::Clear() {
  rep_.clear();
  rep_.resize(kHeader);
  save_points_.clear();
}

void WriteBatch::SetSavePoint() {
  EnsureHeader(&rep_);
  save_points_.push_back({rep_.size(), Count()});
}

Status WriteBatch::RollbackToSavePoint() {
  if (save_points_.empty()) return Status::NotFound();
  const SavePoint sp = save_points_.back();
  save_points_.pop_back();
  // The batch only grows between save points (Clear drops them), so sp.size <= size().
  rep_.resize(sp.size);
  WriteBatchInternal::SetCount(this, sp.count);
  return Status::OK();
}

Status WriteBatch::PopSavePoint() {
  if (save_points_.empty()) return Status::NotFound();
  save_points_.pop_back();
  return Status::OK();
}

Status WriteBatch::Iterate(Handler* handler) const { return IterateRep(rep_, handler); }

uint32_t WriteBatch::Count() const { return WriteBatchInternal::Count(this); }

bool WriteBatch::HasPut() const { return Kinds(rep_).put; }
bool WriteBatch::HasDelete() const { return Kinds(rep_).del; }
bool WriteBatch::HasSingleDelete() const { return Kinds(rep_).single_del; }
bool WriteBatch::HasDeleteRange() const { return Kinds(rep_).delete_range; }
bool WriteBatch::HasMerge() const { return Kinds(rep_).merge; }
bool WriteBatch::HasBeginPrepare() const { return Kinds(rep_).begin_prepare; }
bool WriteBatch::HasEndPrepare() const { return Kinds(rep_).end_prepare; }
bool WriteBatch::HasCommit() const { return Kinds(rep_).commit; }
bool WriteBatch::HasRollback() const { return Kinds(rep_).rollback; }

uint32_t WriteBatchInternal::Count(const WriteBatch* batch) {
  if (batch->rep_.size() < kHeader) return 0;
  return DecodeFixed32(batch->rep_.data() + 8);
}

void WriteBatchInternal::SetCount(WriteBatch* batch, uint32_t n) {
  EnsureHeader(&batch->rep_);
  EncodeFixed32(batch->rep_.data() + 8, n);
}

SequenceNumber WriteBatchInternal::Sequence(const WriteBatch* batch) {
  if (batch->rep_.size() < kHeader) return 0;
  return DecodeFixed64(batch->rep_.data());
}

void WriteBatchInternal::SetSequence(WriteBatch* batch, SequenceNumber seq) {
  EnsureHeader(&batch->rep_);
  EncodeFixed64(batch->rep_.data(), seq);
}

Status WriteBatchInternal::SetContents(WriteBatch* batch, const Slice& contents) {
  Status s = IterateRep<WriteBatch::Handler>(contents, nullptr);
  if (!s.ok()) return s;
  batch->rep_.assign(contents.data(), contents.size());
  batch->save_points_.clear();  // they described the old contents
  return Status::OK();
}

Status WriteBatchInternal::IterateForRecovery(const WriteBatch* batch, WriteBatch::Handler* handler,
                                              PreparePolicy policy) {
  return IterateRep(batch->rep_, handler, &policy);
}

Status WriteBatchInternal::Append(WriteBatch* dst, const WriteBatch* src) {
  if (src->rep_.size() < kHeader) {
    return Status::Corruption("malformed WriteBatch: shorter than its 12-byte header");
  }
  const uint32_t added = Count(src);
  EnsureHeader(&dst->rep_);
  if (src == dst) {
    const std::string records = src->rep_.substr(kHeader);  // copied: appending to itself
    dst->rep_.append(records);
  } else {
    dst->rep_.append(src->rep_, kHeader, std::string::npos);
  }
  SetCount(dst, Count(dst) + added);
  return Status::OK();
}

void WriteBatchInternal::InsertNoop(WriteBatch* batch) {
  EnsureHeader(&batch->rep_);
  batch->rep_.push_back(static_cast<char>(kTypeNoop));
}

Status WriteBatchInternal::MarkEndPrepare(WriteBatch* batch, const Slice& xid,
                                          PreparePolicy policy) {
  std::string& rep = batch->rep_;
  if (rep.size() <= kHeader || static_cast<unsigned char>(rep[kHeader]) != kTypeNoop) {
    return Status::InvalidArgument("MarkEndPrepare: the batch does not start with a Noop");
  }
  if (TooLarge(xid)) return Status::InvalidArgument("transaction name is too large");
  const unsigned char begin = policy == PreparePolicy::kWritePrepared
                                  ? kTypeBeginPersistedPrepareXID
                                  : static_cast<unsigned char>(kTypeBeginPrepareXID);
  rep[kHeader] = static_cast<char>(begin);
  rep.push_back(static_cast<char>(kTypeEndPrepareXID));
  PutLengthPrefixedSlice(&rep, xid);
  return Status::OK();
}

void WriteBatchInternal::MarkCommit(WriteBatch* batch, const Slice& xid) {
  EnsureHeader(&batch->rep_);
  batch->rep_.push_back(static_cast<char>(kTypeCommitXID));
  PutLengthPrefixedSlice(&batch->rep_, xid);
}

void WriteBatchInternal::MarkRollback(WriteBatch* batch, const Slice& xid) {
  EnsureHeader(&batch->rep_);
  batch->rep_.push_back(static_cast<char>(kTypeRollbackXID));
  PutLengthPrefixedSlice(&batch->rep_, xid);
}

Status WriteBatchInternal::ValidateForWrite(const WriteBatch* batch,
                                            const ColumnFamilyMemTables* families, bool txn_markers,
                                            bool* has_merge, uint64_t* sub_batches,
                                            bool* begin_prepare, bool* commit) {
  Slice key;
  Slice value;
  if (IsSinglePut(batch->rep_, &key, &value)) {
    // Default column family, no marker, one sub-batch.
    *has_merge = false;
    if (sub_batches != nullptr) *sub_batches = 1;
    if (begin_prepare != nullptr) *begin_prepare = false;
    if (commit != nullptr) *commit = false;
    return Status::OK();
  }
  if (ValidatePlainRecords(batch->rep_, sub_batches != nullptr, has_merge, sub_batches)) {
    if (begin_prepare != nullptr) *begin_prepare = false;
    if (commit != nullptr) *commit = false;
    return Status::OK();
  }
  ColumnFamilyChecker checker(families, txn_markers, sub_batches != nullptr);
  Status s = IterateRep(batch->rep_, &checker);
  *has_merge = checker.has_merge;
  if (sub_batches != nullptr) *sub_batches = checker.splitter.sub_batches();
  if (begin_prepare != nullptr) *begin_prepare = checker.begin_prepare;
  if (commit != nullptr) *commit = checker.commit;
  return s;
}

Status WriteBatchInternal::InsertInto(const WriteBatch* batch, SequenceNumber first_seq,
                                      MemTable* mem, ColumnFamilyMemTables* families,
                                      bool concurrent, uint64_t sub_batches, MergeFolder* folder,
                                      uint64_t prep_log) {
  Slice key;
  Slice value;
  if (IsSinglePut(batch->rep_, &key, &value)) {
    // Numbered per record or per sub-batch, the one record takes first_seq.
    if (prep_log != 0) mem->RefLogContainingPrepSection(prep_log);
    mem->Add(first_seq, kTypeValue, key, value, concurrent);
    return Status::OK();
  }
  MemTableInserter inserter(first_seq, mem, families, concurrent, sub_batches, folder, prep_log);
  return IterateRep(batch->rep_, &inserter);
}

void WriteBatchInternal::PrefetchForInsert(const WriteBatch* batch, const MemTable* mem) {
  Slice key;
  Slice value;
  if (IsSinglePut(batch->rep_, &key, &value)) mem->PrefetchForAdd(key);
}

}  // namespace shale
