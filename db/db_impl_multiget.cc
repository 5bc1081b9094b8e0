// DB::MultiGet: many point lookups answered from one read view.
//
// The sequence and the SuperVersion are taken once per call (AcquireReadView), so every
// key is answered as of the same state of the DB, whatever writes, flushes and compactions
// run meanwhile. Each key is then looked up exactly as Get looks one up (GetFromView); the
// keys are visited in comparator order so that lookups landing in the same files and blocks
// follow each other. Nothing else is batched.
#include <algorithm>
#include <numeric>

#include "db/db_impl.h"
#include "util/statistics.h"

namespace shale {

namespace {

void FailAll(size_t num_keys, PinnableSlice* values, Status* statuses, const Status& s) {
  for (size_t i = 0; i < num_keys; i++) {
    if (values != nullptr) values[i].Reset();
    statuses[i] = s;
  }
}

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
  MultiGetFromView(o, default_cf_.get(), num_keys, keys, values, statuses, sorted_input, callback);
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
  MultiGetFromView(o, default_cf_.get(), n, keys.data(), results.data(), statuses.data(),
                   /*sorted_input=*/false, /*callback=*/nullptr);
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
  std::vector<size_t> order(num_keys);
  std::iota(order.begin(), order.end(), size_t{0});
  if (!sorted_input) {
    const Comparator* ucmp = cfd->user_comparator();
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return ucmp->Compare(keys[a], keys[b]) < 0; });
  }
  uint64_t bytes_read = 0;
  uint64_t found = 0;
  for (size_t i : order) {
    int level = -2;
    statuses[i] = GetFromView(o, cfd, sv.get(), seq, callback, keys[i], &values[i], &level);
    RecordLookupLevel(level);
    if (statuses[i].ok()) {
      found++;
      bytes_read += values[i].size();
    } else {
      values[i].GetSelf()->clear();  // no stale bytes behind a key that has no value
    }
  }
  RecordTick(stats_, NUMBER_MULTIGET_CALLS);
  RecordTick(stats_, NUMBER_MULTIGET_KEYS_READ, num_keys);
  RecordTick(stats_, NUMBER_MULTIGET_BYTES_READ, bytes_read);
  RecordTick(stats_, NUMBER_MULTIGET_KEYS_FOUND, found);
  RecordInHistogram(stats_, BYTES_PER_MULTIGET, bytes_read);
}

}  // namespace shale
