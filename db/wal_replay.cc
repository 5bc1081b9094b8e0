#include "db/wal_replay.h"

#include <set>
#include <utility>

#include "db/sub_batch.h"
#include "db/write_batch_internal.h"
#include "memtable/memtable.h"
#include "util/dbformat.h"

namespace shale {

// One walk over a batch: the checking pass changes nothing; the applying pass inserts into
// the memtable and updates the replayer's prepared transactions.
class WalReplayer::Pass : public WriteBatch::Handler {
 public:
  Pass(WalReplayer* r, bool apply, uint64_t log, ReplayTargets* targets, SequenceNumber seq)
      : r_(r), apply_(apply), log_(log), targets_(targets), first_(seq), seq_(seq) {}

  // Numbered per sub-batch, a batch takes at least one number (db/sub_batch.h).
  SequenceNumber next_seq() const { return r_->seq_per_batch_ ? seq_ + 1 : seq_; }
  bool in_prepare() const { return in_prepare_; }

  Status PutCF(uint32_t cf, const Slice& key, const Slice& value) override {
    return Record(kTypeValue, cf, key, value);
  }
  Status DeleteCF(uint32_t cf, const Slice& key) override {
    return Record(kTypeDeletion, cf, key, Slice());
  }
  Status SingleDeleteCF(uint32_t cf, const Slice& key) override {
    return Record(kTypeSingleDeletion, cf, key, Slice());
  }
  Status MergeCF(uint32_t cf, const Slice& key, const Slice& value) override {
    return Record(kTypeMerge, cf, key, value);
  }
  Status DeleteRangeCF(uint32_t cf, const Slice& begin, const Slice& end) override {
    return Record(kTypeRangeDeletion, cf, begin, end);
  }

  Status MarkBeginPrepare(bool) override {
    if (!r_->allow_2pc_) {
      return Status::NotSupported(
          "WAL contains prepared transactions. Open with TransactionDB::Open().");
    }
    if (in_prepare_)
      return Status::Corruption("WAL batch", "BeginPrepare inside a prepared section");
    if (r_->seq_per_batch_ && (records_ > 0 || sections_ > 0)) {
      return Status::Corruption("WAL batch", "a WritePrepared prepare shares its record");
    }
    in_prepare_ = true;
    sections_++;
    section_.Clear();
    return Status::OK();
  }

  Status MarkEndPrepare(const Slice& xid) override {
    if (!in_prepare_) return Status::Corruption("WAL batch", "EndPrepare without BeginPrepare");
    in_prepare_ = false;
    const std::string name = xid.ToString();
    if (r_->prepared_.count(name) > 0 || names_.count(name) > 0) {
      return Status::Corruption("WAL batch", "transaction " + name + " prepared twice");
    }
    names_.insert(name);
    if (apply_) {
      RecoveredTransaction& t = r_->prepared_[name];
      t.log_number = log_;
      t.batch = std::move(section_);
      section_.Clear();
      if (r_->seq_per_batch_) {
        t.prepare_seq = first_;
        t.sub_batches = seq_ - first_ + 1;
      }
    }
    return Status::OK();
  }

  Status MarkCommit(const Slice& xid) override {
    if (in_prepare_) return Status::Corruption("WAL batch", "Commit inside a prepared section");
    auto it = r_->prepared_.find(xid.ToString());
    if (r_->seq_per_batch_) {
      // The prepared records went to the memtable at Prepare: the commit only resolves.
      if (apply_ && it != r_->prepared_.end()) r_->prepared_.erase(it);
      return Status::OK();
    }
    if (it == r_->prepared_.end()) {
      if (r_->allow_2pc_ && r_->AppliesRecordsOf(log_)) {
        // The commit's memtable was never flushed, so the prepare's WAL had to be kept.
        return Status::Corruption("WAL batch", "commit of transaction " + xid.ToString() +
                                                   " whose prepared records no WAL holds");
      }
      return Status::OK();
    }
    if (!apply_) {
      seq_ += WriteBatchInternal::Count(&it->second.batch);  // to check the range
      return Status::OK();
    }
    // The prepared records take their sequence numbers here, where the live commit gave
    // them theirs; in an older WAL they are already in SST files and only count.
    Status s = it->second.batch.Iterate(this);
    r_->prepared_.erase(it);
    return s;
  }

  Status MarkRollback(const Slice& xid) override {
    if (in_prepare_) return Status::Corruption("WAL batch", "Rollback inside a prepared section");
    if (apply_) r_->prepared_.erase(xid.ToString());
    return Status::OK();
  }

 private:
  Status Record(ValueType type, uint32_t cf, const Slice& key, const Slice& value) {
    if (!targets_->Knows(cf)) {
      return Status::InvalidArgument("WriteBatch names column family " + std::to_string(cf) +
                                     ", which does not exist");
    }
    if (r_->seq_per_batch_) {
      if (sections_ > 0 && !in_prepare_) {
        return Status::Corruption("WAL batch", "records after a WritePrepared prepare");
      }
      records_++;
      if (splitter_.StartsNew(key)) seq_++;
      if (in_prepare_ && apply_) {
        // Kept to rebuild the transaction, and applied now as the live prepare was.
        Status s = WriteBatchInternal::AddRecord(&section_, cf, type, key, value);
        if (!s.ok()) return s;
      }
      if (apply_) Insert(cf, type, key, value);
      return Status::OK();
    }
    if (in_prepare_) {
      // Kept for the commit; a prepared record takes no sequence number.
      if (!apply_) return Status::OK();
      return WriteBatchInternal::AddRecord(&section_, cf, type, key, value);
    }
    if (apply_) Insert(cf, type, key, value);
    seq_++;
    return Status::OK();
  }

  void Insert(uint32_t cf, ValueType type, const Slice& key, const Slice& value) {
    if (!r_->AppliesRecordsOf(log_)) return;
    MemTable* mem = targets_->For(cf, log_);
    if (mem == nullptr) return;
    if (type != kTypeRangeDeletion) {
      mem->Add(seq_, type, key, value);
    } else if (mem->internal_comparator().user_comparator()->Compare(key, value) < 0) {
      mem->AddRangeTombstone(seq_, key, value);  // an empty range took its number only
    }
  }

  WalReplayer* const r_;
  const bool apply_;
  const uint64_t log_;
  ReplayTargets* const targets_;
  const SequenceNumber first_;
  SequenceNumber seq_;
  bool in_prepare_ = false;
  // seq_per_batch: records and prepared sections seen, and the sub-batch numbering.
  uint64_t records_ = 0;
  int sections_ = 0;
  SubBatchSplitter splitter_;
  WriteBatch section_;
  std::set<std::string> names_;  // prepared in this batch
};

namespace {

// One memtable for the default family, and no other family.
class DefaultOnly final : public ReplayTargets {
 public:
  explicit DefaultOnly(MemTable* mem) : mem_(mem) {}
  bool Knows(uint32_t cf) const override { return cf == 0; }
  MemTable* For(uint32_t /*cf*/, uint64_t /*log*/) override { return mem_; }

 private:
  MemTable* const mem_;
};

}  // namespace

Status WalReplayer::Apply(const WriteBatch& batch, uint64_t log, MemTable* mem,
                          SequenceNumber* next_seq) {
  DefaultOnly targets(mem);
  return Apply(batch, log, &targets, next_seq);
}

Status WalReplayer::Apply(const WriteBatch& batch, uint64_t log, ReplayTargets* targets,
                          SequenceNumber* next_seq) {
  const SequenceNumber first = WriteBatchInternal::Sequence(&batch);
  // A prepared section logged under the other write policy is refused (with allow_2pc;
  // without it, any prepared section is).
  const PreparePolicy policy =
      seq_per_batch_ ? PreparePolicy::kWritePrepared : PreparePolicy::kWriteCommitted;
  Pass check(this, /*apply=*/false, log, targets, first);
  Status s = allow_2pc_ ? WriteBatchInternal::IterateForRecovery(&batch, &check, policy)
                        : batch.Iterate(&check);
  if (s.ok() && check.in_prepare()) {
    s = Status::Corruption("WAL batch", "prepared section without EndPrepare");
  }
  if (!s.ok()) return s;
  // Sequence numbers have 56 bits: a header past them (or records numbered past them,
  // wrapping) is forged or damaged, and would be stored as other sequences.
  const SequenceNumber next = check.next_seq();
  if (first > kMaxSequenceNumber || next < first ||
      (next > first && next - 1 > kMaxSequenceNumber)) {
    return Status::Corruption("WAL batch", "sequence numbers beyond the largest");
  }
  Pass apply(this, /*apply=*/true, log, targets, first);
  s = batch.Iterate(&apply);
  *next_seq = apply.next_seq();
  return s;
}

}  // namespace shale
