// DB::MultiGet: many point lookups answered from one read view, batched through the files.
//
// The sequence and the SuperVersion are taken once per call (AcquireReadView), so every
// key is answered as of the same state of the DB, whatever writes, flushes and compactions
// run meanwhile. The keys are put in comparator order and taken in chunks of up to kChunk;
// each is looked up in the memtables on its own (a skip-list search, cheap), and those of a
// chunk the memtables do not answer go down the files together (Version::MultiGet): one
// walk of the levels, one filter and index fetch per file, one fetch per data block for all
// the keys it holds. Each key's answer is the one Get would give in the same view, with the
// same callback: the same visibility, merge folding and tombstones.
#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <optional>

#include "db/db_impl.h"
#include "db/range_del_read.h"
#include "memtable/merge_context.h"
#include "util/statistics.h"

namespace shale {

namespace {

void FailAll(size_t num_keys, PinnableSlice* values, Status* statuses, const Status& s) {
  for (size_t i = 0; i < num_keys; i++) {
    if (values != nullptr) values[i].Reset();
    statuses[i] = s;
  }
}

// The sorted keys go down the files this many at a time, all in the same view: the
// scratch a key needs (its lookup key, merge context and place in the batch, some 500
// bytes) stays bounded whatever the size of the call, and keys sharing a block are split
// only at a chunk's edge. (RocksDB's batches hold 32 keys.)
constexpr size_t kChunk = 128;

// One key's lookup: its key for the view's sequence, the operands gathered on the way
// down (with a merge operator), and its place in the files' batch.
struct KeyLookup {
  std::optional<LookupKey> lkey;
  MergeContext mc;
  VersionGetItem item;
};

}  // namespace

void DBImpl::MultiGet(const ReadOptions& o, ColumnFamilyHandle* cf, size_t num_keys,
                      const Slice* keys, PinnableSlice* values, Status* statuses,
                      bool sorted_input) {
  MultiGetWithCallback(o, cf, num_keys, keys, values, statuses, sorted_input, nullptr);
}

void DBImpl::MultiGetWithCallback(const ReadOptions& o, ColumnFamilyHandle* cf, size_t num_keys,
                                  const Slice* keys, PinnableSlice* values, Status* statuses,
                                  bool sorted_input, ReadCallback* callback) {
  if (num_keys == 0) return;
  if (!IsOwnFamily(cf)) {
    FailAll(num_keys, values, statuses,
            Status::InvalidArgument("MultiGet: column family handle of another DB"));
    return;
  }
  MultiGetFromView(o, CfdOf(cf), num_keys, keys, values, statuses, sorted_input, callback);
}

std::vector<Status> DBImpl::MultiGet(const ReadOptions& o,
                                     const std::vector<ColumnFamilyHandle*>& cfs,
                                     const std::vector<Slice>& keys,
                                     std::vector<std::string>* values) {
  const size_t n = keys.size();
  std::vector<Status> statuses(n);
  Status invalid;
  if (values == nullptr) {
    invalid = Status::InvalidArgument("MultiGet: values is nullptr");
  } else if (cfs.size() != n) {
    invalid = Status::InvalidArgument("MultiGet: column_family and keys differ in size");
  } else if (!std::all_of(cfs.begin(), cfs.end(),
                          [this](ColumnFamilyHandle* cf) { return IsOwnFamily(cf); })) {
    invalid = Status::InvalidArgument("MultiGet: column family handle of another DB");
  }
  if (values != nullptr) {
    values->resize(n);
    if (!invalid.ok()) {
      for (std::string& v : *values) v.clear();
    }
  }
  if (!invalid.ok()) {
    FailAll(n, nullptr, statuses.data(), invalid);
    return statuses;
  }
  // Each result lands in the caller's string unless a block pins it: copied below.
  std::vector<PinnableSlice> results;
  results.reserve(n);
  for (std::string& v : *values) results.emplace_back(&v);
  if (std::all_of(cfs.begin(), cfs.end(),
                  [&](ColumnFamilyHandle* cf) { return CfdOf(cf) == CfdOf(cfs[0]); })) {
    MultiGetFromView(o, n == 0 ? default_cf_ : CfdOf(cfs[0]), n, keys.data(), results.data(),
                     statuses.data(), /*sorted_input=*/false, /*callback=*/nullptr);
  } else {
    // Several families: each is looked up in its own view, all at one sequence number.
    ReadOptions ro = o;
    const Snapshot* own = ro.snapshot == nullptr ? GetSnapshot() : nullptr;
    if (own != nullptr) ro.snapshot = own;
    std::map<ColumnFamilyData*, std::vector<size_t>> by_family;
    for (size_t i = 0; i < n; i++) by_family[CfdOf(cfs[i])].push_back(i);
    for (const auto& [cfd, idx] : by_family) {
      std::vector<Slice> k;
      std::vector<PinnableSlice> r(idx.size());
      std::vector<Status> st(idx.size());
      for (size_t i : idx) k.push_back(keys[i]);
      MultiGetFromView(ro, cfd, idx.size(), k.data(), r.data(), st.data(),
                       /*sorted_input=*/false, /*callback=*/nullptr);
      for (size_t j = 0; j < idx.size(); j++) {
        statuses[idx[j]] = st[j];
        (*values)[idx[j]].assign(r[j].data(), r[j].size());
      }
    }
    if (own != nullptr) ReleaseSnapshot(own);
    return statuses;
  }
  for (size_t i = 0; i < n; i++) {
    if (results[i].IsPinned()) (*values)[i].assign(results[i].data(), results[i].size());
  }
  return statuses;
}

void DBImpl::MultiGetFromView(const ReadOptions& o, ColumnFamilyData* cfd, size_t num_keys,
                              const Slice* keys, PinnableSlice* values, Status* statuses,
                              bool sorted_input, ReadCallback* callback) {
  SequenceNumber seq;
  // One Refresh for the whole batch: every key is judged against the same view.
  SuperVersionPin sv = AcquireReadView(o, cfd, &seq, callback);
  if (!sv) {
    FailAll(num_keys, values, statuses, Status::ShutdownInProgress());
    return;
  }
  StopWatch timer(env_, stats_, DB_MULTIGET);
  const Comparator* ucmp = cfd->user_comparator();
  const auto less = [&](size_t a, size_t b) { return ucmp->Compare(keys[a], keys[b]) < 0; };
  std::vector<size_t> order(num_keys);
  std::iota(order.begin(), order.end(), size_t{0});
  // Version::MultiGet needs the order, so a caller's claim of sorted input is checked.
  if (!sorted_input || !std::is_sorted(order.begin(), order.end(), less)) {
    std::stable_sort(order.begin(), order.end(), less);
  }
  const MergeOperator* merge_op = cfd->options().merge_operator.get();
  SuperVersion* const view = sv.get();
  std::vector<VersionGetItem*> to_files;  // in key order
  to_files.reserve(std::min(num_keys, kChunk));
  uint64_t bytes_read = 0;
  uint64_t found = 0;
  for (size_t start = 0; start < num_keys; start += kChunk) {
    const size_t len = std::min(kChunk, num_keys - start);
    const size_t* const chunk = order.data() + start;
    std::unique_ptr<KeyLookup[]> lookups(new KeyLookup[len]);
    to_files.clear();
    for (size_t c = 0; c < len; c++) {
      const size_t i = chunk[c];
      KeyLookup& k = lookups[c];
      values[i].Reset();  // drops what a previous read pinned into it
      std::string* dst = values[i].GetSelf();
      k.lkey.emplace(keys[i], seq);
      // As LookupKeyIn: without a merge operator the first operand ends the lookup with
      // NotSupported, and a value found in a file stays pinned in its block.
      MergeContext* mc = nullptr;
      if (merge_op != nullptr) {
        k.mc.merge_operator = merge_op;
        mc = &k.mc;
      }
      VersionGetItem& item = k.item;
      item.merge_context = mc;  // FinishLookup folds what the memtables or files gathered
      // Range tombstones as in LookupKeyIn: the newest covering one seen so far deletes
      // the older entries here and beneath.
      item.deleted_below = CoveringTombstoneSeq(view->mem, keys[i], seq, callback);
      item.found =
          view->mem->Get(*k.lkey, dst, &item.status, &item.seq, callback, mc, item.deleted_below);
      for (size_t m = 0; !item.found && m < view->imm.size(); m++) {
        item.deleted_below = std::max(item.deleted_below,
                                      CoveringTombstoneSeq(view->imm[m], keys[i], seq, callback));
        item.found = view->imm[m]->Get(*k.lkey, dst, &item.status, &item.seq, callback, mc,
                                       item.deleted_below);
      }
      if (item.found) {
        item.hit_level = -1;
        continue;
      }
      item.key = &*k.lkey;
      item.value = dst;
      item.pinned = mc == nullptr ? &values[i] : nullptr;
      to_files.push_back(&item);
    }
    if (!to_files.empty()) view->current->MultiGet(o, to_files.data(), to_files.size(), callback);

    for (size_t c = 0; c < len; c++) {
      const size_t i = chunk[c];
      const VersionGetItem& item = lookups[c].item;
      RecordLookupLevel(item.found ? item.hit_level : -2);
      statuses[i] = FinishLookup(keys[i], item.found ? item.status : Status::NotFound(),
                                 item.merge_context, &values[i]);
      if (statuses[i].ok()) {
        found++;
        bytes_read += values[i].size();
      } else {
        values[i].GetSelf()->clear();  // no stale bytes behind a key that has no value
      }
    }
  }
  RecordTick(stats_, NUMBER_MULTIGET_CALLS);
  RecordTick(stats_, NUMBER_MULTIGET_KEYS_READ, num_keys);
  RecordTick(stats_, NUMBER_MULTIGET_BYTES_READ, bytes_read);
  RecordTick(stats_, NUMBER_MULTIGET_KEYS_FOUND, found);
  RecordInHistogram(stats_, BYTES_PER_MULTIGET, bytes_read);
}

}  // namespace shale
