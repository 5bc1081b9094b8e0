#include "util/range_tombstone.h"

#include <algorithm>
#include <utility>

#include "util/dbformat.h"

namespace shale {

FragmentedRangeTombstones::FragmentedRangeTombstones(std::vector<RangeTombstone> tombstones,
                                                     const Comparator* ucmp,
                                                     const std::vector<SequenceNumber>& snapshots)
    : ucmp_(ucmp) {
  auto less = [ucmp](const std::string& a, const std::string& b) {
    return ucmp->Compare(a, b) < 0;
  };
  std::erase_if(tombstones,
                [ucmp](const RangeTombstone& t) { return ucmp->Compare(t.begin, t.end) >= 0; });
  std::sort(
      tombstones.begin(), tombstones.end(),
      [&](const RangeTombstone& a, const RangeTombstone& b) { return less(a.begin, b.begin); });
  for (const RangeTombstone& t : tombstones) {
    keys_.push_back(t.begin);
    keys_.push_back(t.end);
    max_seq_ = std::max(max_seq_, t.seq);
  }
  std::sort(keys_.begin(), keys_.end(), less);
  keys_.erase(std::unique(keys_.begin(), keys_.end(),
                          [ucmp](const std::string& a, const std::string& b) {
                            return ucmp->Compare(a, b) == 0;
                          }),
              keys_.end());

  // A sweep over the cut points: `active` holds the tombstones spanning the point, as
  // (index of their end in keys_, seq).
  std::vector<std::pair<size_t, SequenceNumber>> active;
  std::vector<SequenceNumber> fragment_seqs;
  size_t next = 0;  // the first tombstone not yet active
  for (size_t k = 0; k + 1 < keys_.size(); k++) {
    std::erase_if(active, [k](const std::pair<size_t, SequenceNumber>& a) { return a.first <= k; });
    while (next < tombstones.size() && ucmp->Compare(tombstones[next].begin, keys_[k]) == 0) {
      size_t end =
          std::lower_bound(keys_.begin(), keys_.end(), tombstones[next].end, less) - keys_.begin();
      active.emplace_back(end, tombstones[next].seq);
      next++;
    }
    if (active.empty()) continue;
    fragment_seqs.clear();
    for (const auto& a : active) fragment_seqs.push_back(a.second);
    std::sort(fragment_seqs.begin(), fragment_seqs.end(), std::greater<>());
    fragment_seqs.erase(std::unique(fragment_seqs.begin(), fragment_seqs.end()),
                        fragment_seqs.end());
    Fragment f;
    f.begin = keys_[k];
    f.end = keys_[k + 1];
    f.first_seq = seqs_.size();
    // With snapshots, keep the newest of each stripe: stripe(s) is the index of the first
    // snapshot >= s, and seqs arrive newest first.
    size_t last_stripe = SIZE_MAX;
    for (SequenceNumber s : fragment_seqs) {
      if (!snapshots.empty()) {
        size_t stripe = std::lower_bound(snapshots.begin(), snapshots.end(), s) - snapshots.begin();
        if (stripe == last_stripe) continue;
        last_stripe = stripe;
      }
      seqs_.push_back(s);
    }
    f.last_seq = seqs_.size();
    fragments_.push_back(f);
  }
}

Status FragmentedRangeTombstones::FromIterator(InternalIterator* it, const Comparator* ucmp,
                                               std::unique_ptr<FragmentedRangeTombstones>* result) {
  std::vector<RangeTombstone> tombstones;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ParsedInternalKey parsed;
    Status s = ParseInternalKey(it->key(), &parsed);
    if (!s.ok() || parsed.type != kTypeRangeDeletion) {
      return Status::Corruption("range tombstone with a malformed key",
                                Slice(it->key()).ToString(/*hex=*/true));
    }
    RangeTombstone t;
    t.begin = parsed.user_key.ToString();
    t.end = it->value().ToString();
    t.seq = parsed.sequence;
    tombstones.push_back(std::move(t));
  }
  if (!it->status().ok()) return it->status();
  *result = std::make_unique<FragmentedRangeTombstones>(std::move(tombstones), ucmp);
  return Status::OK();
}

size_t FragmentedRangeTombstones::FindFragment(const Slice& user_key) const {
  auto it = std::upper_bound(
      fragments_.begin(), fragments_.end(), user_key,
      [this](const Slice& k, const Fragment& f) { return ucmp_->Compare(k, f.end) < 0; });
  return it - fragments_.begin();
}

SequenceNumber FragmentedRangeTombstones::VisibleSeq(size_t i, SequenceNumber snapshot,
                                                     ReadCallback* callback) const {
  const Fragment& f = fragments_[i];
  // Newest first: skip those above the snapshot with a binary search.
  auto first = std::lower_bound(seqs_.begin() + f.first_seq, seqs_.begin() + f.last_seq, snapshot,
                                std::greater<>());
  for (auto s = first; s != seqs_.begin() + f.last_seq; ++s) {
    if (callback == nullptr || callback->IsVisible(*s)) return *s;
  }
  return 0;
}

std::vector<RangeTombstone> FragmentedRangeTombstones::ToTombstones() const {
  std::vector<RangeTombstone> out;
  for (const Fragment& f : fragments_) {
    for (size_t s = f.first_seq; s < f.last_seq; s++) {
      out.push_back(RangeTombstone{f.begin.ToString(), f.end.ToString(), seqs_[s]});
    }
  }
  return out;
}

size_t FragmentedRangeTombstones::ApproximateMemoryUsage() const {
  size_t n = sizeof(*this) + fragments_.capacity() * sizeof(Fragment) +
             seqs_.capacity() * sizeof(SequenceNumber) + keys_.capacity() * sizeof(std::string);
  for (const std::string& k : keys_) n += k.capacity();
  return n;
}

}  // namespace shale
