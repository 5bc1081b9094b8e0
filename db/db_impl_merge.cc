// DBImpl's merge-aware reads: the point lookup shared by Get, GetMergeOperands and the
// write path's max_successive_merges folding.
#include <algorithm>
#include <memory>
#include <utility>

#include "db/db_impl.h"
#include "db/merge_helper.h"
#include "db/range_del_read.h"
#include "memtable/merge_context.h"

namespace shale {

namespace {

// GetMergeOperands pins instead of copying when the operands are this large: RocksDB's
// thresholds (average and total bytes).
constexpr size_t kPinAverageBytes = 256;
constexpr size_t kPinTotalBytes = 32 << 10;

}  // namespace

Status DBImpl::LookupKeyIn(const ReadOptions& o, SuperVersion* sv, const Slice& key,
                           SequenceNumber seq, std::string* value, MergeContext* mc,
                           PinnableSlice* pinned, int* found_level, ReadCallback* callback) {
  LookupKey lkey(key, seq);
  Status s;
  SequenceNumber found_seq;
  int level = -1;
  // The newest range tombstone covering the key that the read sees, so far: it deletes the
  // older entries of this source and of every older one.
  SequenceNumber covered = CoveringTombstoneSeq(sv->mem, key, seq, callback);
  bool found = sv->mem->Get(lkey, value, &s, &found_seq, callback, mc, covered);
  for (size_t i = 0; !found && i < sv->imm.size(); i++) {
    covered = std::max(covered, CoveringTombstoneSeq(sv->imm[i], key, seq, callback));
    found = sv->imm[i]->Get(lkey, value, &s, &found_seq, callback, mc, covered);
  }
  if (!found) {
    found = sv->current->Get(o, lkey, value, &s, &found_seq, callback, mc, pinned, &level, covered);
  }
  if (found_level != nullptr) *found_level = found ? level : -2;
  return found ? s : Status::NotFound();
}

Status DBImpl::GetMergeOperands(const ReadOptions& o, ColumnFamilyHandle* cf, const Slice& key,
                                PinnableSlice* merge_operands, GetMergeOperandsOptions* gmo,
                                int* number_of_operands) {
  return GetMergeOperandsWithCallback(o, cf, key, merge_operands, gmo, number_of_operands, nullptr);
}

Status DBImpl::GetMergeOperandsWithCallback(const ReadOptions& o, ColumnFamilyHandle* cf,
                                            const Slice& key, PinnableSlice* merge_operands,
                                            GetMergeOperandsOptions* gmo, int* number_of_operands,
                                            ReadCallback* callback) {
  if (gmo == nullptr || number_of_operands == nullptr || gmo->expected_max_number_of_operands < 0) {
    return Status::InvalidArgument("GetMergeOperands: bad options");
  }
  // With no slots (0 expected) a call only counts; slots promised must be there.
  if (merge_operands == nullptr && gmo->expected_max_number_of_operands > 0) {
    return Status::InvalidArgument("GetMergeOperands: merge_operands is nullptr");
  }
  *number_of_operands = 0;
  if (!IsOwnFamily(cf)) return Status::InvalidArgument("column family is not this DB's");
  ColumnFamilyData* cfd = CfdOf(cf);
  SequenceNumber seq;
  SuperVersionPin sv = AcquireReadView(o, cfd, &seq, callback);
  if (!sv) return Status::ShutdownInProgress();
  // Operands in blocks are pinned while gathered and memtable ones referenced (the view
  // keeps those memtables alive): no copy yet. The sizes then decide whether the caller
  // gets pins or copies.
  MergeContext mc;
  mc.want_pins = true;
  mc.base_as_operand = true;
  std::string unused;
  Status s = LookupKeyIn(o, sv.get(), key, seq, &unused, &mc, nullptr, nullptr, callback);
  if (!s.ok() && !s.IsNotFound()) return s;
  const size_t n = mc.GetNumOperands();
  *number_of_operands = static_cast<int>(n);
  if (n == 0) return Status::NotFound();
  if (n > static_cast<size_t>(gmo->expected_max_number_of_operands)) {
    return Status::Incomplete("more merge operands than expected_max_number_of_operands");
  }
  const std::vector<Slice>& ops = mc.GetOperands();
  size_t total = 0;
  for (const Slice& op : ops) total += op.size();
  const bool pin = total >= kPinTotalBytes && total >= kPinAverageBytes * n;
  for (size_t i = 0; i < n; i++) {
    PinnableSlice& out = merge_operands[i];
    out.Reset();
    if (!pin || !mc.PinInto(i, &out)) out.PinSelf(ops[i]);
  }
  return Status::OK();
}

bool DBImpl::FoldSuccessiveMerges(uint32_t column_family, MemTable* mem, const Slice& key,
                                  SequenceNumber seq, const Slice& operand, std::string* merged) {
  ColumnFamilyData* cfd = column_family == 0 ? default_cf_ : families_.LiveFamilyFor(column_family);
  if (cfd == nullptr) return false;
  const MergeOperator* op = cfd->options().merge_operator.get();
  const size_t limit = cfd->max_successive_merges();
  if (op == nullptr || limit == 0 || seq == 0) return false;
  if (mem->CountSuccessiveMergeEntries(key, limit) < limit) return false;
  std::shared_ptr<SuperVersion> sv = cfd->GetSuperVersion();
  if (sv == nullptr || sv->mem != mem) return false;
  // Everything written before this operand, including earlier records of its own batch
  // and write group, already in mem but not yet published.
  MergeContext mc;
  mc.merge_operator = op;
  std::string base;
  Status s = LookupKeyIn(ReadOptions(), sv.get(), key, seq - 1, &base, &mc);
  if (!s.ok() && !s.IsNotFound() && !s.IsMergeInProgress()) return false;
  std::vector<Slice> ops = mc.GetOperands();
  ops.push_back(operand);
  // A failing operator is left for the reads to report: the operand is stacked as usual.
  const Slice base_slice(base);
  return FullMergeOperands(op, key, s.ok() ? &base_slice : nullptr, ops, merged, info_log_).ok();
}

}  // namespace shale
