#include "tools/db_stress_prefix.h"

#include <algorithm>

namespace shale::stress {

PrefixCheck::PrefixCheck(const ExpectedState& state) : state_(state) {
  const uint64_t keys = state.max_key();
  std::vector<uint32_t> log_pos;
  for (uint32_t pos = 0; pos < state.log_count(); pos++) {
    Write w;
    if (state.ReadLog(pos, &w.key, &w.word, &w.seq)) {
      writes_.push_back(w);
      log_pos.push_back(pos);
    } else {
      torn_++;  // a write a kill interrupted: its key's pending word covers it
    }
  }
  std::vector<uint32_t> order(writes_.size());
  for (uint32_t i = 0; i < order.size(); i++) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return writes_[a].seq < writes_[b].seq; });
  std::vector<Write> sorted;
  sorted.reserve(writes_.size());
  for (uint32_t i : order) sorted.push_back(writes_[i]);
  // A key's writes were logged in its own order (its lock was held from the write to the
  // log entry), so by sequence they must come in the same order.
  std::vector<uint32_t> last_pos(keys, 0);
  std::vector<bool> seen(keys, false);
  for (uint32_t i : order) {
    const uint64_t k = writes_[i].key;
    if (seen[k] && log_pos[i] < last_pos[k] && order_error_.empty()) {
      order_error_ = "writes of key " + KeyString(k) +
                     " have sequences out of the order they were acknowledged in (one at " +
                     std::to_string(writes_[i].seq) + ")";
    }
    seen[k] = true;
    last_pos[k] = log_pos[i];
  }
  writes_ = std::move(sorted);
  first_.assign(keys + 1, 0);
  for (const Write& w : writes_) first_[w.key + 1]++;
  for (uint64_t k = 0; k < keys; k++) first_[k + 1] += first_[k];
  by_key_.resize(writes_.size());
  std::vector<uint32_t> fill(first_.begin(), first_.end() - 1);
  for (uint32_t i = 0; i < writes_.size(); i++) by_key_[fill[writes_[i].key]++] = i;
}

uint32_t PrefixCheck::ValueAt(uint64_t key, size_t i) const {
  uint32_t word = state_.base(key);
  for (uint32_t j = first_[key]; j < first_[key + 1] && by_key_[j] < i; j++) {
    word = writes_[by_key_[j]].word;
  }
  return word;
}

std::string PrefixCheck::Differences(const std::vector<uint32_t>& held, size_t i) const {
  std::string out;
  int shown = 0;
  for (uint64_t k = 0; k < state_.max_key() && shown < 3; k++) {
    const uint32_t want = ValueAt(k, i);
    const uint32_t pending = state_.pending(k);
    if (held[k] == want || (pending != 0 && held[k] == ExpectedState::PendingWord(pending))) {
      continue;
    }
    // The key's newest write the cut keeps, and its oldest one the cut drops.
    std::string kept = "none", dropped = "none";
    for (uint32_t j = first_[k]; j < first_[k + 1]; j++) {
      const Write& w = writes_[by_key_[j]];
      if (by_key_[j] < i) {
        kept = Describe(w.word) + " at " + std::to_string(w.seq);
      } else if (dropped == "none") {
        dropped = Describe(w.word) + " at " + std::to_string(w.seq);
      }
    }
    out += std::string(shown++ == 0 ? "" : "; ") + KeyString(k) + " holds " + Describe(held[k]) +
           ", the cut gives " + Describe(want) + " (newest write kept: " + kept +
           ", oldest dropped: " + dropped + ")";
  }
  return out;
}

bool PrefixCheck::Check(const std::vector<uint32_t>& held, uint64_t recovered, bool strict,
                        std::string* why) {
  if (!order_error_.empty()) {
    *why = order_error_;
    return false;
  }
  cut_ = 0;
  const size_t m = writes_.size();
  auto count_at_or_below = [&](uint64_t seq) {
    return static_cast<size_t>(
        std::upper_bound(writes_.begin(), writes_.end(), seq,
                         [](uint64_t s, const Write& w) { return s < w.seq; }) -
        writes_.begin());
  };
  const uint64_t durable = state_.durable_seq();
  const size_t lowest = count_at_or_below(durable);
  at_or_below_recovered_ = count_at_or_below(recovered);
  // diff[i] - diff[i-1]: how many keys accept cut i more than cut i-1.
  std::vector<int64_t> diff(m + 2, 0);
  int64_t constrained = 0;
  for (uint64_t k = 0; k < state_.max_key(); k++) {
    const uint32_t v = held[k];
    const uint32_t pending = state_.pending(k);
    const bool in_flight = pending != 0 && v == ExpectedState::PendingWord(pending);
    const uint32_t begin = first_[k], end = first_[k + 1];
    if (begin == end) {
      if (v == state_.base(k) || in_flight) continue;
      *why = KeyString(k) + " holds " + Describe(v) + ", but its durable value is " +
             Describe(state_.base(k)) + " and no later write of it is logged: a hole or a " +
             "value never written";
      return false;
    }
    constrained++;
    // Key k's value is base on cuts [0, w1], then word j on cuts (wj, wj+1], the last one
    // (or a write in flight after it) on (wr, m].
    bool any = false;
    size_t lo = 0;
    uint32_t word = state_.base(k);
    for (uint32_t j = begin; j <= end; j++) {
      const size_t hi = j < end ? by_key_[j] : m;
      if (v == word || (j == end && in_flight)) {
        diff[lo]++;
        diff[hi + 1]--;
        any = true;
      }
      if (j < end) {
        lo = by_key_[j] + 1;
        word = writes_[by_key_[j]].word;
      }
    }
    if (!any) {
      *why = KeyString(k) + " holds " + Describe(v) + ", which no cut of its " +
             std::to_string(end - begin) + " logged writes gives it (base " +
             Describe(state_.base(k)) + ", last " + Describe(writes_[by_key_[end - 1]].word) +
             "): a value never written";
      return false;
    }
  }
  // The newest acceptable cut, whether any cut at all matches, and (for the message) the
  // newest allowed cut the most keys accept.
  const size_t highest = std::min(at_or_below_recovered_, m);
  bool found = false, any_cut = false;
  size_t newest_any = 0, closest = highest;
  int64_t accepting = 0, most = -1;
  for (size_t i = 0; i <= m; i++) {
    accepting += diff[i];
    // Writes of one sequence (a DeleteRange's keys) are all kept or all dropped.
    if (i > 0 && i < m && writes_[i - 1].seq == writes_[i].seq) continue;
    if (i >= lowest && i <= highest && accepting >= most) {
      most = accepting;
      closest = i;
    }
    if (accepting != constrained) continue;
    any_cut = true;
    newest_any = i;
    if (i >= lowest && i <= highest) {
      found = true;
      cut_ = i;
    }
  }
  const std::string where = " (" + std::to_string(m) + " logged writes, durable sequence " +
                            std::to_string(durable) + ", recovered sequence " +
                            std::to_string(recovered) + ")";
  if (!found) {
    if (!any_cut) {
      *why = "no cut of the write history gives what the DB holds: a hole" + where +
             "; against the closest cut, at sequence " +
             std::to_string(closest == 0 ? 0 : writes_[closest - 1].seq) + ": " +
             Differences(held, closest);
    } else if (newest_any < lowest) {
      *why = "the DB holds the history only up to sequence " +
             std::to_string(newest_any == 0 ? 0 : writes_[newest_any - 1].seq) +
             ", below the durable sequence: durable writes lost, a hole" + where + "; " +
             Differences(held, lowest);
    } else {
      *why = "the DB holds writes above the sequence it recovered" + where + "; " +
             Differences(held, highest);
    }
    return false;
  }
  if (strict && cut_ != highest) {
    // cut_ is the newest acceptable cut; the cut at the recovered sequence is not one.
    *why =
        "--strict_recovered_seq: the DB does not hold every write at or below its "
        "recovered sequence: it holds the history up to sequence " +
        std::to_string(cut_seq()) + ", " + std::to_string(highest - cut_) +
        " logged writes at or below the recovered sequence are missing" + where + "; " +
        Differences(held, highest);
    return false;
  }
  return true;
}

bool PrefixCheck::FindHole(std::vector<uint32_t> held, uint64_t recovered, uint64_t* key,
                           uint32_t* older_word) {
  std::string why;
  if (!Check(held, recovered, false, &why)) return false;
  const size_t cut = cut_;
  // Only writes above the durable sequence: taking one of them away leaves each key with a
  // value it held after the last Flush, which a rule per key accepts.
  const uint64_t durable = state_.durable_seq();
  int tries = 0;
  for (size_t i = cut; i-- > 0 && tries < 64 && writes_[i].seq > durable;) {
    const uint64_t k = writes_[i].key;
    // Only key k's newest kept write can be taken away alone.
    if (ValueAt(k, cut) != writes_[i].word || held[k] != writes_[i].word) continue;
    bool newest = true;
    for (uint32_t j = first_[k]; j < first_[k + 1]; j++) {
      if (by_key_[j] > i && by_key_[j] < cut) newest = false;
    }
    const uint32_t older = ValueAt(k, i);
    if (!newest || older == writes_[i].word) continue;
    tries++;
    held[k] = older;
    const bool caught = !Check(held, recovered, false, &why);
    held[k] = writes_[i].word;
    if (caught) {
      *key = k;
      *older_word = older;
      return Check(held, recovered, false, &why);  // restores cut_ for the caller
    }
  }
  return false;
}

}  // namespace shale::stress
