// The DB's reads: the read view (a SuperVersion and a sequence), Get, iterators,
// snapshots, and the read tickers. The point lookup itself and GetMergeOperands are in
// db_impl_merge.cc, MultiGet in db_impl_multiget.cc.
#include <memory>

#include "db/db_impl.h"
#include "db/db_iter.h"
#include "db/merge_helper.h"
#include "db/range_del_iterator.h"
#include "memtable/merge_context.h"
#include "table/merging_iterator.h"
#include "util/statistics.h"

namespace shale {

SuperVersionPin DBImpl::AcquireReadView(const ReadOptions& o, ColumnFamilyData* cfd,
                                        SequenceNumber* seq, ReadCallback* callback) {
  if (o.snapshot != nullptr) {
    *seq = o.snapshot->GetSequenceNumber();
  } else if (read_only_) {
    // A secondary's next view may lack versions older than the sequence it publishes (the
    // primary compacted them away), so the view is taken first, then a sequence: the
    // catch-up publishes its sequence before its views, and an older view holds nothing
    // newer than its own (db/db_impl_secondary.h).
    SuperVersionPin pin = cfd->PinSuperVersion();
    *seq = pipeline_->LastPublished();
    if (callback != nullptr) callback->Refresh(*seq);
    return pin;
  } else {
    *seq = pipeline_->LastPublished();
    // The callback's bound must be the sequence this view holds, not "anything": judged
    // against kMaxSequenceNumber, data committed after the view was taken would pass the
    // full check and show through a read that does not hold its commit.
    if (callback != nullptr) callback->Refresh(*seq);
  }
  return cfd->PinSuperVersion();
}

Status DBImpl::Get(const ReadOptions& o, ColumnFamilyHandle* cf, const Slice& key,
                   PinnableSlice* value) {
  return GetWithCallback(o, cf, key, value, nullptr);
}

Status DBImpl::GetWithCallback(const ReadOptions& o, ColumnFamilyHandle* cf, const Slice& key,
                               PinnableSlice* value, ReadCallback* callback) {
  if (!IsOwnFamily(cf)) return Status::InvalidArgument("column family is not this DB's");
  ColumnFamilyData* cfd = CfdOf(cf);
  SequenceNumber seq;
  SuperVersionPin sv = AcquireReadView(o, cfd, &seq, callback);
  if (!sv) return Status::ShutdownInProgress();
  StopWatch timer(env_, stats_, DB_GET);
  int level = -2;
  Status s = GetFromView(o, cfd, sv.get(), seq, callback, key, value, &level);
  RecordGetStats(level, s, *value);
  return s;
}

Status DBImpl::GetFromView(const ReadOptions& o, ColumnFamilyData* cfd, SuperVersion* sv,
                           SequenceNumber seq, ReadCallback* callback, const Slice& key,
                           PinnableSlice* value, int* found_level) {
  value->Reset();  // drops what a previous read pinned into it
  // Without a merge operator the first operand met ends the lookup with NotSupported, and a
  // value found in a file stays in its block, pinned by *value, instead of being copied.
  // With one, memtable operands are referenced: sv keeps the memtables alive.
  MergeContext mc;
  mc.merge_operator = cfd->options().merge_operator.get();
  MergeContext* const mcp = mc.merge_operator != nullptr ? &mc : nullptr;
  Status s = LookupKeyIn(o, sv, key, seq, value->GetSelf(), mcp, mcp == nullptr ? value : nullptr,
                         found_level, callback);
  return FinishLookup(key, std::move(s), mcp, value);
}

Status DBImpl::FinishLookup(const Slice& key, Status s, MergeContext* mc, PinnableSlice* value) {
  if (mc == nullptr || mc->empty() || !(s.ok() || s.IsNotFound() || s.IsMergeInProgress())) {
    if (s.ok() && !value->IsPinned()) value->PinSelf();
    return s;
  }
  std::string* dst = value->GetSelf();
  std::string merged;
  const Slice base(*dst);
  s = FullMergeOperands(mc->merge_operator, key, s.ok() ? &base : nullptr, mc->GetOperands(),
                        &merged, info_log_);
  if (!s.ok()) {
    RecordTick(stats_, NUMBER_MERGE_FAILURES);
    return s;
  }
  dst->swap(merged);
  value->PinSelf();
  return s;
}

void DBImpl::RecordLookupLevel(int level) {
  if (stats_ == nullptr) return;
  stats_->recordTick(level == -1 ? MEMTABLE_HIT : MEMTABLE_MISS);
  if (level == 0) stats_->recordTick(GET_HIT_L0);
  if (level == 1) stats_->recordTick(GET_HIT_L1);
  if (level >= 2) stats_->recordTick(GET_HIT_L2_AND_UP);
}

void DBImpl::RecordGetStats(int level, const Status& s, const Slice& value) {
  if (stats_ == nullptr) return;
  stats_->recordTick(NUMBER_KEYS_READ);
  RecordLookupLevel(level);
  if (s.ok()) {
    stats_->recordTick(BYTES_READ, value.size());
    stats_->recordInHistogram(BYTES_PER_READ, value.size());
  }
}

Iterator* DBImpl::NewIterator(const ReadOptions& o, ColumnFamilyHandle* cf) {
  return NewIteratorWithCallback(o, cf, nullptr);
}

Iterator* DBImpl::NewIteratorWithCallback(const ReadOptions& o, ColumnFamilyHandle* cf,
                                          std::unique_ptr<ReadCallback> callback) {
  if (!IsOwnFamily(cf)) {
    return NewErrorIterator(Status::InvalidArgument("column family is not this DB's"));
  }
  ColumnFamilyData* cfd = CfdOf(cf);
  SequenceNumber seq;
  SuperVersion* sv;
  {
    // An iterator may be used and deleted on another thread: it takes a reference of its
    // own instead of keeping this thread's cached one.
    SuperVersionPin pin = AcquireReadView(o, cfd, &seq, callback.get());
    sv = pin.get();
    if (sv == nullptr) return NewErrorIterator(Status::ShutdownInProgress());
    sv->Ref();
  }
  std::vector<InternalIterator*> children;
  // Each child's own range tombstones (null: none), in the same order.
  std::vector<std::shared_ptr<const FragmentedRangeTombstones>> tombstones;
  // An empty memtable has nothing this view may see: every write at or below seq reached
  // its memtable before seq was published (under unordered_write, whose inserts may come
  // after, a view is allowed to miss them: options.h). Leaving it out spares a child that
  // every seek would visit, and often the merge itself: a compacted DB is one level.
  if (!sv->mem->IsEmpty()) {
    children.push_back(sv->mem->NewIterator());
    tombstones.push_back(sv->mem->RangeTombstones());
  }
  for (MemTable* m : sv->imm) {
    if (m->IsEmpty()) continue;
    children.push_back(m->NewIterator());
    tombstones.push_back(m->RangeTombstones());
  }
  const size_t memtables = children.size();
  // For each file child, the union of its newer files' tombstones, which the Version makes
  // once for every iterator over it.
  std::vector<std::shared_ptr<const FragmentedRangeTombstones>> newer_files;
  sv->current->AddIterators(o, &children, &tombstones, &newer_files);
  // Children come newest first: each is read under its own tombstones and every newer
  // one's (db/range_del_iterator.h): the memtables' (merged here, few) and, for a file
  // child, its newer files'. Without tombstones the children stay as they are.
  std::shared_ptr<const FragmentedRangeTombstones> newer_mem;
  for (size_t i = 0; i < children.size(); i++) {
    if (i < memtables) {
      children[i] =
          NewRangeDelIterator(children[i], newer_mem, nullptr, tombstones[i], seq, callback.get());
      newer_mem = MergeRangeTombstones(newer_mem, tombstones[i], cfd->user_comparator());
    } else {
      children[i] = NewRangeDelIterator(children[i], newer_mem, newer_files[i - memtables],
                                        tombstones[i], seq, callback.get());
    }
  }
  InternalIterator* merged = NewMergingIterator(&cfd->internal_comparator(), children.data(),
                                                static_cast<int>(children.size()));
  Iterator* iter = NewDBIterator(o, cfd->user_comparator(), merged, seq, callback.get(),
                                 kDefaultMaxSequentialSkip, cfd->options().merge_operator.get(),
                                 info_log_, stats_);
  if (callback != nullptr) {
    // Cleanups run after the DBIter is gone, so the callback outlives every use.
    iter->RegisterCleanup(
        [](void* arg1, void* /*arg2*/) {
          std::unique_ptr<ReadCallback> owned(static_cast<ReadCallback*>(arg1));
        },
        callback.release(), nullptr);
  }
  // The iterator keeps the view (and so its memtables and files) alive until deleted.
  iter->RegisterCleanup(
      [](void* arg1, void* arg2) {
        static_cast<DBImpl*>(arg2)->ReleaseIteratorView(static_cast<SuperVersion*>(arg1));
      },
      sv, this);
  return iter;
}

void DBImpl::ReleaseIteratorView(SuperVersion* view) {
  // The last holder of an outdated view frees the files only it kept: delete them now, as
  // RocksDB does when an iterator goes, rather than at the next flush or compaction.
  // `held` is only compared, never followed: the Version may be gone.
  Version* const held = view->current;
  if (!UnrefSuperVersion(view)) return;
  DbLock l(this);
  if (shutting_down_) return;
  for (const auto& [id, cfd] : families_.live()) {
    if (versions_->current(id) == held) return;  // still current: nothing of it is obsolete
  }
  DeleteObsoleteFiles();
}

const Snapshot* DBImpl::GetSnapshot() {
  MutexLock l(&snapshots_mu_);
  return snapshots_.New(pipeline_->LastPublished());
}

void DBImpl::ReleaseSnapshot(const Snapshot* snapshot) {
  if (snapshot == nullptr) return;
  MutexLock l(&snapshots_mu_);
  snapshots_.Delete(static_cast<const SnapshotImpl*>(snapshot));
}

}  // namespace shale
