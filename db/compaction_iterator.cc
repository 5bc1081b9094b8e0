#include "db/compaction_iterator.h"

#include <algorithm>
#include <utility>

#include "db/compaction.h"
#include "db/merge_helper.h"
#include "util/statistics.h"

namespace shale {

void CompactionIterationStats::Add(const CompactionIterationStats& o) {
  num_input_records += o.num_input_records;
  num_input_deletion_records += o.num_input_deletion_records;
  num_output_records += o.num_output_records;
  num_record_drop_hidden += o.num_record_drop_hidden;
  num_record_drop_obsolete += o.num_record_drop_obsolete;
  num_optimized_del_drop_obsolete += o.num_optimized_del_drop_obsolete;
  num_single_del_fallthru += o.num_single_del_fallthru;
  num_single_del_mismatch += o.num_single_del_mismatch;
  num_record_drop_merged += o.num_record_drop_merged;
  num_merge_failures += o.num_merge_failures;
  num_record_drop_user += o.num_record_drop_user;
  total_input_raw_key_bytes += o.total_input_raw_key_bytes;
  total_input_raw_value_bytes += o.total_input_raw_value_bytes;
}

Status ChooseCompactionFilter(const Options& options, const CompactionFilter::Context& context,
                              std::unique_ptr<CompactionFilter>* owned,
                              const CompactionFilter** filter) {
  owned->reset();
  *filter = nullptr;
  if (context.reason == TableFileCreationReason::kCompaction &&
      options.compaction_filter != nullptr) {
    *filter = options.compaction_filter;
  } else if (options.compaction_filter_factory != nullptr &&
             options.compaction_filter_factory->ShouldFilterTableFileCreation(context.reason)) {
    *owned = options.compaction_filter_factory->CreateCompactionFilter(context);
    *filter = owned->get();
  }
  if (*filter != nullptr && !(*filter)->IgnoreSnapshots()) {
    *filter = nullptr;
    owned->reset();
    return Status::NotSupported(
        "CompactionFilter::IgnoreSnapshots() = false is not supported anymore.");
  }
  return Status::OK();
}

namespace {

std::vector<SequenceNumber> Sorted(std::vector<SequenceNumber> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

CompactionIterator::CompactionIterator(InternalIterator* input, const Comparator* ucmp,
                                       std::vector<SequenceNumber> snapshots,
                                       const Compaction* compaction, const Slice* end_user_key,
                                       const MergeOperator* merge_operator, Logger* info_log,
                                       Statistics* statistics,
                                       const SnapshotChecker* snapshot_checker,
                                       SequenceNumber job_snapshot)
    : input_(input),
      ucmp_(ucmp),
      snapshots_(Sorted(std::move(snapshots))),
      earliest_snapshot_(snapshots_.empty() ? kMaxSequenceNumber : snapshots_.front()),
      compaction_(compaction),
      end_user_key_(end_user_key),
      merge_operator_(merge_operator),
      info_log_(info_log),
      statistics_(statistics),
      snapshot_checker_(snapshot_checker),
      job_snapshot_(job_snapshot) {}

bool CompactionIterator::IsReleased(SequenceNumber snapshot) const {
  return std::find(released_.begin(), released_.end(), snapshot) != released_.end();
}

SequenceNumber CompactionIterator::EarliestLiveSnapshot() const {
  if (released_.empty()) return earliest_snapshot_;
  for (SequenceNumber s : snapshots_) {
    if (!IsReleased(s)) return s;
  }
  return kMaxSequenceNumber;
}

bool CompactionIterator::StripeOf(SequenceNumber seq, SequenceNumber* stripe) {
  auto it = std::lower_bound(snapshots_.begin(), snapshots_.end(), seq);
  if (snapshot_checker_ == nullptr) {
    *stripe = it == snapshots_.end() ? kMaxSequenceNumber : *it;
    return true;
  }
  using Result = SnapshotChecker::Result;
  // Committed as of the job's snapshot, or treated as not committed at all: a commit
  // after it may be invisible to a snapshot taken since, which this job cannot know of.
  // A released answer here (the job's snapshot should be live) is not trusted either.
  if (snapshot_checker_->CheckInSnapshot(seq, job_snapshot_) != Result::kInSnapshot) {
    return false;
  }
  // The first snapshot at or past the commit sees it, and so does every later one. A
  // released snapshot answers nothing about the entry (the checker may have forgotten
  // which commits it saw), so it is skipped, and remembered, so that every later entry of
  // the job skips it too and two entries are never judged against different lists.
  for (; it != snapshots_.end(); ++it) {
    if (IsReleased(*it)) continue;
    const Result r = snapshot_checker_->CheckInSnapshot(seq, *it);
    if (r == Result::kInSnapshot) {
      *stripe = *it;
      return true;
    }
    if (r == Result::kSnapshotReleased) released_.push_back(*it);
  }
  *stripe = kMaxSequenceNumber;
  return true;
}

bool CompactionIterator::InCurrentStripe(SequenceNumber seq) {
  SequenceNumber stripe;
  return StripeOf(seq, &stripe) && stripe == stripe_;
}

CompactionIterator::RangeCover CompactionIterator::CoveredByRange(SequenceNumber seq,
                                                                  SequenceNumber newest) {
  if (tombstones_ == nullptr) return RangeCover::kNone;
  const size_t i = tombstones_->FindFragment(current_user_key_);
  if (!tombstones_->FragmentCovers(i, current_user_key_)) return RangeCover::kNone;
  const FragmentedRangeTombstones::Fragment& f = tombstones_->fragment(i);
  RangeCover cover = RangeCover::kNone;
  for (size_t k = f.first_seq; k < f.last_seq; k++) {  // newest first
    const SequenceNumber t = tombstones_->seqs()[k];
    if (t <= seq) break;
    if (t > newest) continue;
    // Every reader of the stripe sees t when the earliest snapshot that sees it is no later
    // than the stripe's (visibility only grows with the snapshot).
    SequenceNumber t_stripe;
    if (StripeOf(t, &t_stripe) && t_stripe <= stripe_) return RangeCover::kCovered;
    cover = RangeCover::kMaybe;
  }
  return cover;
}

void CompactionIterator::RememberDroppedTombstone(const Slice& key, const Slice& value,
                                                  bool optimized) {
  if (snapshot_checker_ == nullptr || has_dropped_tombstone_) return;
  has_dropped_tombstone_ = true;
  dropped_tombstone_optimized_ = optimized;
  dropped_tombstone_.first.assign(key.data(), key.size());
  dropped_tombstone_.second.assign(value.data(), value.size());
}

void CompactionIterator::CoverStripe() {
  stripe_covered_ = true;
  if (!has_cover_ || stripe_ < cover_stripe_) cover_stripe_ = stripe_;
  has_cover_ = true;
}

CompactionFilter::Decision CompactionIterator::Offer(const ParsedInternalKey& ik,
                                                     const Slice& value) {
  using Decision = CompactionFilter::Decision;
  const CompactionFilter::ValueType type =
      ik.type == kTypeMerge ? CompactionFilter::kMergeOperand : CompactionFilter::kValue;
  filter_value_.clear();
  filter_skip_until_.clear();
  Decision d =
      filter_->FilterV3(filter_level_, ik.user_key, type, &value, /*existing_columns=*/nullptr,
                        &filter_value_, /*new_columns=*/nullptr, &filter_skip_until_);
  switch (d) {
    case Decision::kKeep:
    case Decision::kRemove:
    case Decision::kChangeValue:
    case Decision::kPurge: return d;
    case Decision::kRemoveAndSkipUntil:
      // A bound not past the key would move backwards: the entry is kept instead.
      if (ucmp_->Compare(filter_skip_until_, ik.user_key) <= 0) return Decision::kKeep;
      return d;
    case Decision::kChangeBlobIndex:
      status_ = Status::NotSupported(
          "Only stacked BlobDB's internal compaction filter can return kChangeBlobIndex.");
      break;
    case Decision::kIOError:
      status_ =
          Status::NotSupported("CompactionFilter for integrated BlobDB should not return kIOError");
      break;
    case Decision::kChangeWideColumnEntity:
      status_ = Status::NotSupported("compaction filter: shale stores no wide-column entities");
      break;
    default: status_ = Status::NotSupported("FilterV2/V3 should never return kUndetermined"); break;
  }
  return Decision::kUndetermined;
}

void CompactionIterator::SkipToFilterBound() {
  std::string target;
  AppendInternalKey(&target, filter_skip_until_, kMaxSequenceNumber, kValueTypeForSeek);
  input_->Seek(target);
  input_unprocessed_ = true;
}

void CompactionIterator::SeekToFirst() {
  input_unprocessed_ = true;
  has_current_user_key_ = false;
  has_stripe_ = false;
  stripe_covered_ = false;
  has_cover_ = false;
  has_dropped_tombstone_ = false;
  key_offered_ = false;
  queue_.clear();
  queue_pos_ = 0;
  status_ = Status::OK();
  NextFromInput();
}

void CompactionIterator::Next() { NextFromInput(); }

void CompactionIterator::CountInput(const ParsedInternalKey& ik, const Slice& value) {
  stats_.num_input_records++;
  if (ik.type == kTypeDeletion || ik.type == kTypeSingleDeletion) {
    stats_.num_input_deletion_records++;
  }
  stats_.total_input_raw_key_bytes += ik.user_key.size() + 8;
  stats_.total_input_raw_value_bytes += value.size();
}

void CompactionIterator::EmitFromInput(const ParsedInternalKey& ik) {
  key_ = input_->key();
  value_ = input_->value();
  ikey_ = ik;
  valid_ = true;
  stats_.num_output_records++;
}

void CompactionIterator::EmitCopy(const Slice& key, const Slice& value) {
  key_buf_.assign(key.data(), key.size());
  value_buf_.assign(value.data(), value.size());
  key_ = key_buf_;
  value_ = value_buf_;
  ParseInternalKey(key_, &ikey_).PermitUncheckedError();  // parsed once already
  valid_ = true;
  stats_.num_output_records++;
}

bool CompactionIterator::EmitQueued() {
  if (queue_pos_ == queue_.size()) return false;
  const auto& [key, value] = queue_[queue_pos_++];
  key_ = key;
  value_ = value;
  ParseInternalKey(key_, &ikey_).PermitUncheckedError();  // parsed once already
  valid_ = true;
  stats_.num_output_records++;
  return true;
}

bool CompactionIterator::ResolveMerge(const ParsedInternalKey& first) {
  if (merge_operator_ == nullptr) {
    EmitFromInput(first);
    return true;
  }
  using Decision = CompactionFilter::Decision;
  // Operands a snapshot sees are kept without asking the filter.
  const SequenceNumber latest_snapshot = snapshots_.empty() ? 0 : snapshots_.back();
  bool skipped = false;  // the filter moved the input past the key
  // Adds the operand at the input to the run, as the filter decides. False: stop (an
  // error in status_, or skipped).
  auto take = [&](const ParsedInternalKey& op) {
    Decision d = Decision::kKeep;
    if (filter_ != nullptr && op.sequence > latest_snapshot) d = Offer(op, input_->value());
    switch (d) {
      case Decision::kKeep:
        run_.emplace_back(input_->key().ToString(), input_->value().ToString());
        return true;
      case Decision::kChangeValue:
        run_.emplace_back(input_->key().ToString(), filter_value_);
        return true;
      case Decision::kRemove:
      case Decision::kPurge: stats_.num_record_drop_user++; return true;
      case Decision::kRemoveAndSkipUntil:
        stats_.num_record_drop_user++;
        SkipToFilterBound();
        skipped = true;
        return false;
      default: return false;
    }
  };
  // Gather the stripe's run of operands, then look at what lies beneath it.
  run_.clear();
  enum class Beneath { kPut, kDelete, kSingleDelete, kCovered, kNothing, kUnknown };
  Beneath beneath = Beneath::kUnknown;
  ParsedInternalKey base;  // the entry beneath, when in the same stripe
  bool more = take(first);
  while (more) {
    input_->Next();
    input_unprocessed_ = true;
    if (!input_->Valid()) {
      // The end of the input; an error is reported by the next round.
      if (input_->status().ok()) beneath = Beneath::kNothing;
      break;
    }
    if (!ParseInternalKey(input_->key(), &base).ok()) break;  // reported by the next round
    if (ucmp_->Compare(base.user_key, current_user_key_) != 0) {
      beneath = Beneath::kNothing;
      break;
    }
    // An older stripe (or an uncommitted entry): left to the next round.
    if (!InCurrentStripe(base.sequence)) break;
    // Deleted by a range tombstone for the run's readers: the run ends on nothing; for some
    // of them only: the run ends here unresolved.
    const RangeCover cover = CoveredByRange(base.sequence, first.sequence);
    if (cover == RangeCover::kCovered) beneath = Beneath::kCovered;
    if (cover != RangeCover::kNone) break;
    if (base.type == kTypeMerge) {
      CountInput(base, input_->value());
      input_unprocessed_ = false;
      more = take(base);
      continue;
    }
    if (base.type == kTypeValue) beneath = Beneath::kPut;
    if (base.type == kTypeDeletion) beneath = Beneath::kDelete;
    if (base.type == kTypeSingleDeletion) beneath = Beneath::kSingleDelete;
    break;
  }
  if (!status_.ok()) return true;
  // Skipped: the key's older entries were dropped unread, as at another key.
  if (skipped) beneath = Beneath::kNothing;
  // Every operand dropped: what lies beneath is judged on its own by the next round.
  if (run_.empty()) return false;
  ParsedInternalKey newest;
  ParseInternalKey(run_.front().first, &newest).PermitUncheckedError();  // parsed once already

  std::vector<Slice> operands;  // oldest first
  operands.reserve(run_.size());
  for (auto it = run_.rbegin(); it != run_.rend(); ++it) operands.emplace_back(it->second);
  const Slice user_key = current_user_key_;
  const bool no_older_value = beneath == Beneath::kNothing && compaction_ != nullptr &&
                              compaction_->KeyNotExistsBeyondOutputLevel(current_user_key_);
  std::string result;
  std::string result_key;
  if (beneath == Beneath::kPut || beneath == Beneath::kDelete ||
      beneath == Beneath::kSingleDelete || beneath == Beneath::kCovered || no_older_value) {
    const bool has_value = beneath == Beneath::kPut;
    const Slice base_value = has_value ? input_->value() : Slice();
    const Status s = FullMergeOperands(merge_operator_, user_key, has_value ? &base_value : nullptr,
                                       operands, &result, info_log_);
    if (!s.ok()) {
      stats_.num_merge_failures++;
      RecordTick(statistics_, NUMBER_MERGE_FAILURES);
      status_ = s;
      return true;
    }
    stats_.num_record_drop_merged += run_.size() - 1;
    if (beneath == Beneath::kPut || beneath == Beneath::kDelete) {
      // The base is consumed into the result, which hides the rest of the stripe.
      CountInput(base, input_->value());
      input_unprocessed_ = false;
      stats_.num_record_drop_merged++;
    }
    // Covered: only SingleDeletes are still judged below (such as the one beneath).
    CoverStripe();
    AppendInternalKey(&result_key, user_key, newest.sequence, kTypeValue);
    EmitCopy(result_key, result);
    return true;
  }
  if (PartialMergeOperands(merge_operator_, user_key, operands, &result, info_log_)) {
    stats_.num_record_drop_merged += run_.size() - 1;
    AppendInternalKey(&result_key, user_key, newest.sequence, kTypeMerge);
    EmitCopy(result_key, result);
    return true;
  }
  queue_.swap(run_);
  queue_pos_ = 0;
  EmitQueued();
  return true;
}

void CompactionIterator::NextFromInput() {
  valid_ = false;
  if (EmitQueued()) return;
  // Set once a SingleDelete cancelled its Put and nothing of that key and stripe was
  // emitted since: older Puts stay hidden, but an older Delete is judged on its own, as
  // it may hide Puts below this compaction (Put, Delete, Put, SingleDelete is allowed).
  bool after_cancel = false;
  while (status_.ok()) {
    if (!input_unprocessed_) input_->Next();
    input_unprocessed_ = true;
    if (!input_->Valid()) {
      status_ = input_->status();
      return;
    }
    ParsedInternalKey ik;
    if (!ParseInternalKey(input_->key(), &ik).ok()) {
      status_ = Status::Corruption("corrupted internal key in compaction input: " +
                                   input_->key().ToString(/*hex=*/true));
      return;
    }
    if (end_user_key_ != nullptr && ucmp_->Compare(ik.user_key, *end_user_key_) >= 0) return;
    input_unprocessed_ = false;
    CountInput(ik, input_->value());

    if (!has_current_user_key_ || ucmp_->Compare(ik.user_key, current_user_key_) != 0) {
      current_user_key_.assign(ik.user_key.data(), ik.user_key.size());
      has_current_user_key_ = true;
      has_stripe_ = false;
      has_cover_ = false;
      has_dropped_tombstone_ = false;
      key_offered_ = false;
      after_cancel = false;
    }
    SequenceNumber stripe;
    if (!StripeOf(ik.sequence, &stripe)) {
      // Uncommitted: kept as it is, and the stripe's state is left as if it were not there.
      if (has_dropped_tombstone_) {
        // It may commit after the tombstone dropped above it (no lock kept the key while
        // it was prepared): the tombstone must go on hiding it, so it comes back first.
        has_dropped_tombstone_ = false;
        stats_.num_record_drop_obsolete--;
        if (dropped_tombstone_optimized_) stats_.num_optimized_del_drop_obsolete--;
        queue_.clear();
        queue_.emplace_back(input_->key().ToString(), input_->value().ToString());
        queue_pos_ = 0;
        EmitCopy(dropped_tombstone_.first, dropped_tombstone_.second);
        return;
      }
      EmitFromInput(ik);
      return;
    }
    // The entry as it goes on: the input's, or the filter's rewrite of it.
    Slice entry_key = input_->key();
    Slice entry_value = input_->value();
    bool rewritten = false;
    if (!key_offered_) {
      key_offered_ = true;
      if (filter_ != nullptr && ik.type == kTypeValue) {
        using Decision = CompactionFilter::Decision;
        const Decision d = Offer(ik, entry_value);
        if (d == Decision::kUndetermined) return;  // status_ says why
        if (d == Decision::kRemoveAndSkipUntil) {
          stats_.num_record_drop_user++;
          SkipToFilterBound();
          continue;
        }
        if (d != Decision::kKeep) {
          if (d == Decision::kRemove) ik.type = kTypeDeletion;
          if (d == Decision::kPurge) ik.type = kTypeSingleDeletion;
          if (d == Decision::kChangeValue) {
            rewritten_value_.swap(filter_value_);
          } else {
            stats_.num_record_drop_user++;
            rewritten_value_.clear();
          }
          rewritten_key_.clear();
          AppendInternalKey(&rewritten_key_, ik.user_key, ik.sequence, ik.type);
          entry_key = rewritten_key_;
          entry_value = rewritten_value_;
          ParseInternalKey(entry_key, &ik).PermitUncheckedError();  // just encoded
          rewritten = true;
        }
      }
    }
    if (has_cover_ && stripe > cover_stripe_ && ik.type != kTypeSingleDeletion) {
      // Committed after a newer Put or Delete that every one of its readers also sees
      // (only with a checker: without one, stripes never grow towards older entries).
      stats_.num_record_drop_hidden++;
      continue;
    }
    if (!has_stripe_ || stripe != stripe_) {
      has_stripe_ = true;
      stripe_ = stripe;
      stripe_covered_ = false;
      after_cancel = false;
    } else if (after_cancel && ik.type == kTypeValue) {
      stats_.num_record_drop_hidden++;
      continue;
    } else if (stripe_covered_ && ik.type != kTypeSingleDeletion) {
      stats_.num_record_drop_hidden++;
      continue;
    }

    if (ik.type == kTypeMerge) {
      if (ResolveMerge(ik)) return;
      continue;
    }

    if (ik.type == kTypeSingleDeletion) {
      // Hides older entries of this stripe only (see the header).
      stripe_covered_ = true;
      // Peek at the next entry: the Put this SingleDelete cancels, if it is in this stripe.
      const std::string sd_key = entry_key.ToString();
      const std::string sd_value = entry_value.ToString();
      input_->Next();
      input_unprocessed_ = true;
      ParsedInternalKey next;
      const bool same_key = input_->Valid() && ParseInternalKey(input_->key(), &next).ok() &&
                            ucmp_->Compare(next.user_key, current_user_key_) == 0;
      if (same_key) {
        if (!InCurrentStripe(next.sequence)) {
          EmitCopy(sd_key, sd_value);
          return;
        }
        if (next.type == kTypeSingleDeletion || next.type == kTypeDeletion) {
          // Two deletions in a row: the first goes; the second is judged on its own. A
          // Delete must never be cancelled with the SingleDelete: it may hide Puts older
          // than this compaction's inputs (the API allows SingleDelete after Delete).
          stats_.num_record_drop_obsolete++;
          stats_.num_single_del_mismatch++;
          RememberDroppedTombstone(sd_key, sd_value, /*optimized=*/false);
          stripe_covered_ = false;
          continue;
        }
        if (next.type != kTypeValue) stats_.num_single_del_mismatch++;
        CountInput(next, input_->value());
        input_unprocessed_ = false;  // consumed: the loop moves past it
        stats_.num_record_drop_hidden++;
        stats_.num_record_drop_obsolete++;
        RememberDroppedTombstone(sd_key, sd_value, /*optimized=*/false);
        stripe_covered_ = false;
        after_cancel = true;
        continue;
      }
      // Another key, the end, or an error (seen by the next round).
      // Seen by every snapshot (its stripe is the earliest), as the Delete below.
      if (compaction_ != nullptr && stripe_ == EarliestLiveSnapshot() &&
          compaction_->KeyNotExistsBeyondOutputLevel(current_user_key_)) {
        stats_.num_record_drop_obsolete++;
        stats_.num_single_del_fallthru++;
        if (!compaction_->bottommost_level()) stats_.num_optimized_del_drop_obsolete++;
        continue;
      }
      EmitCopy(sd_key, sd_value);
      return;
    }

    CoverStripe();
    if (ik.type == kTypeDeletion && compaction_ != nullptr && stripe_ == EarliestLiveSnapshot() &&
        compaction_->KeyNotExistsBeyondOutputLevel(ik.user_key)) {
      // No reader can see anything older, and nothing below needs hiding.
      stats_.num_record_drop_obsolete++;
      const bool optimized = !compaction_->bottommost_level();
      if (optimized) stats_.num_optimized_del_drop_obsolete++;
      RememberDroppedTombstone(entry_key, entry_value, optimized);
      continue;
    }
    if (rewritten) {
      EmitCopy(entry_key, entry_value);
    } else {
      EmitFromInput(ik);
    }
    return;
  }
}

}  // namespace shale
