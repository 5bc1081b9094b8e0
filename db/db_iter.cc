#include "db/db_iter.h"

#include <algorithm>
#include <cassert>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "db/merge_helper.h"
#include "memtable/merge_context.h"
#include "util/key_buffer.h"
#include "util/statistics.h"

namespace shale {
namespace {

// Positioning invariants, which every public method restores before it returns:
//  - kForward and valid_: iter_ is at the newest visible entry of saved_key_, and value()
//    reads straight from iter_; or, when that entry is a merge operand (merged_), iter_ is
//    past the entries the merge used (at an older entry of saved_key_, a later key, or the
//    end) and the merged value is in value_.
//  - kReverse and valid_: iter_ is at the last entry whose user key is before saved_key_
//    (or past the beginning), and the value was captured in value_.
// saved_key_ always holds a whole user key, so key() never points into iter_.
class DBIter final : public Iterator {
 public:
  DBIter(const ReadOptions& read_options, const Comparator* user_cmp, InternalIterator* iter,
         SequenceNumber sequence, ReadCallback* callback, uint64_t max_skip,
         const MergeOperator* merge_operator, Logger* logger, Statistics* stats)
      : iter_(iter),
        stats_(stats),
        cmp_(user_cmp),
        callback_(callback),
        merge_operator_(merge_operator),
        logger_(logger),
        lower_(read_options.iterate_lower_bound),
        upper_(read_options.iterate_upper_bound),
        sequence_(sequence),
        max_skip_(std::max<uint64_t>(max_skip, 1)) {}

  bool Valid() const override { return valid_; }
  Slice key() const override {
    assert(valid_);
    return saved_key_.slice();
  }
  Slice value() const override {
    assert(valid_);
    return direction_ == kForward && !merged_ ? iter_->value() : value_;
  }
  Status status() const override { return status_.ok() ? iter_->status() : status_; }

  void Seek(const Slice& target) override;
  void SeekForPrev(const Slice& target) override;
  void SeekToFirst() override;
  void SeekToLast() override;
  void Next() override;
  void Prev() override;

 private:
  void SeekImpl(const Slice& target);
  void SeekForPrevImpl(const Slice& target);
  void SeekToFirstImpl();
  void SeekToLastImpl();

 private:
  enum Direction { kForward, kReverse };

  // Statistics of one positioning call: the ticker counts it, found_ticker counts it when
  // it lands on an entry, whose bytes go to ITER_BYTES_READ.
  void RecordMove(uint32_t ticker, uint32_t found_ticker) {
    if (stats_ == nullptr) return;
    stats_->recordTick(ticker);
    if (valid_) {
      stats_->recordTick(found_ticker);
      stats_->recordTick(ITER_BYTES_READ, key().size() + value().size());
    }
  }

  bool IsVisible(SequenceNumber seq) const {
    return seq <= sequence_ && (callback_ == nullptr || callback_->IsVisible(seq));
  }
  // Parses iter_->key(); on failure records Corruption and invalidates the DBIter.
  bool ParseKey(ParsedInternalKey* ikey);
  void SetCorruptType(const ParsedInternalKey& ikey);
  // Without a merge operator an operand as the newest visible entry ends the scan with
  // NotSupported. Always returns false.
  bool ResolveMerge();
  // iter_ is at the newest visible entry of saved_key_, an operand. Gathers the operands
  // below it down to a Put (the base), a tombstone or the next key, and merges them into
  // value_, leaving iter_ just past what it used. False, with status_ set, on an error.
  bool MergeForward();
  // Merges ops (oldest first) onto *base (null: none) into value_; false with status_ set
  // when the operator fails.
  bool FinishMerge(const Slice* base, const std::vector<Slice>& ops);

  // iter_->Seek / SeekForPrev to the internal key (user_key, seq, type).
  void InternalSeek(const Slice& user_key, SequenceNumber seq, ValueType type);
  void InternalSeekForPrev(const Slice& user_key, SequenceNumber seq, ValueType type);

  // Forward: from iter_, finds the first user key with a visible Put. With skipping, the
  // remaining entries of saved_key_ are stepped over first.
  void FindNextUserEntry(bool skipping);
  // Backward: from iter_ (the last entry of some user key), finds the previous user key
  // whose newest visible entry is a Put.
  void PrevInternal();
  // iter_ is at the oldest entry of saved_key_. Scans back over its versions to the newest
  // visible one, leaving iter_ before saved_key_. True if that entry is a Put (value_ set);
  // false if the key is hidden or an error was recorded.
  bool FindValueForCurrentKey();
  // Same contract; used when saved_key_ has too many versions to step over one by one.
  bool FindValueForCurrentKeyUsingSeek();
  void CaptureValue();

  std::unique_ptr<InternalIterator> iter_;
  Statistics* const stats_;  // may be null
  const Comparator* const cmp_;
  ReadCallback* const callback_;
  const MergeOperator* const merge_operator_;  // null: operands give NotSupported
  Logger* const logger_;
  const Slice* const lower_;
  const Slice* const upper_;
  const SequenceNumber sequence_;
  const uint64_t max_skip_;

  KeyBuffer saved_key_;         // user key of the current entry (or of the run being skipped)
  std::string saved_value_;     // backing store of value_ when iter_'s value is not pinned
  Slice value_;                 // kReverse only
  KeyBuffer seek_key_;          // scratch for internal seek targets
  std::string merged_value_;    // backing store of value_ after a merge
  MergeContext merge_context_;  // operands gathered forward, newest first
  // Operands gathered backward (oldest first) and copies of the unpinned ones.
  std::vector<Slice> reverse_ops_;
  std::list<std::string> reverse_copies_;  // a list: no allocation until used
  bool merged_ = false;                    // kForward: value_ holds a merged value
  Status status_;
  Direction direction_ = kForward;
  bool valid_ = false;
};

bool DBIter::ParseKey(ParsedInternalKey* ikey) {
  Status s = ParseInternalKey(iter_->key(), ikey);
  if (!s.ok()) {
    status_ = Status::Corruption("DBIter: corrupted internal key",
                                 s.getState() != nullptr ? s.getState() : "");
    valid_ = false;
    return false;
  }
  return true;
}

void DBIter::SetCorruptType(const ParsedInternalKey& ikey) {
  status_ =
      Status::Corruption("DBIter: unexpected entry type in point data", ikey.DebugString(true));
  valid_ = false;
}

bool DBIter::ResolveMerge() {
  status_ =
      Status::NotSupported("Merge operator not configured, key", saved_key_.slice().ToString(true));
  valid_ = false;
  return false;
}

bool DBIter::FinishMerge(const Slice* base, const std::vector<Slice>& ops) {
  std::string merged;
  Status s = FullMergeOperands(merge_operator_, saved_key_.slice(), base, ops, &merged, logger_);
  if (!s.ok()) {
    status_ = std::move(s);
    valid_ = false;
    return false;
  }
  merged_value_.swap(merged);
  value_ = merged_value_;
  return true;
}

bool DBIter::MergeForward() {
  if (merge_operator_ == nullptr) return ResolveMerge();
  merge_context_.Clear();
  // Memtable values stay put while the iterator lives; others move with iter_.
  auto push = [this] {
    if (iter_->IsValuePinned()) {
      merge_context_.PushOperand(iter_->value());
    } else {
      merge_context_.PushOperandCopy(iter_->value());
    }
  };
  push();
  iter_->Next();
  while (iter_->Valid()) {
    ParsedInternalKey ikey;
    if (!ParseKey(&ikey)) return false;
    if (cmp_->Compare(ikey.user_key, saved_key_.slice()) != 0) break;
    if (IsVisible(ikey.sequence)) {
      if (ikey.type == kTypeValue) {
        const Slice base = iter_->value();
        return FinishMerge(&base, merge_context_.GetOperands());
      }
      if (ikey.type == kTypeDeletion || ikey.type == kTypeSingleDeletion) break;
      if (ikey.type != kTypeMerge) {
        SetCorruptType(ikey);
        return false;
      }
      push();
    }
    iter_->Next();
  }
  if (!iter_->status().ok()) {
    valid_ = false;
    return false;
  }
  return FinishMerge(nullptr, merge_context_.GetOperands());
}

void DBIter::InternalSeek(const Slice& user_key, SequenceNumber seq, ValueType type) {
  seek_key_.SetInternalKey(user_key, seq, type);
  iter_->Seek(seek_key_.slice());
}

void DBIter::InternalSeekForPrev(const Slice& user_key, SequenceNumber seq, ValueType type) {
  seek_key_.SetInternalKey(user_key, seq, type);
  iter_->SeekForPrev(seek_key_.slice());
}

void DBIter::CaptureValue() {
  if (iter_->IsValuePinned()) {
    value_ = iter_->value();
  } else {
    const Slice v = iter_->value();
    saved_value_.assign(v.data(), v.size());
    value_ = saved_value_;
  }
}

void DBIter::FindNextUserEntry(bool skipping) {
  assert(direction_ == kForward);
  // in_run: saved_key_ names the user key whose entries iter_ is among.
  bool in_run = skipping;
  uint64_t num_skipped = 0;
  while (iter_->Valid()) {
    ParsedInternalKey ikey;
    if (!ParseKey(&ikey)) return;
    if (!in_run || cmp_->Compare(ikey.user_key, saved_key_.slice()) != 0) {
      // Entries of one user key share the bound check, so it runs once per key.
      if (upper_ != nullptr && cmp_->Compare(ikey.user_key, *upper_) >= 0) break;
      saved_key_.Assign(ikey.user_key);
      in_run = true;
      skipping = false;
      num_skipped = 0;
    }
    if (!skipping && IsVisible(ikey.sequence)) {
      switch (ikey.type) {
        case kTypeValue: valid_ = true; return;
        case kTypeDeletion:
        case kTypeSingleDeletion: skipping = true; break;
        case kTypeMerge:
          if (MergeForward()) {
            merged_ = true;
            valid_ = true;
          }
          return;
        default: SetCorruptType(ikey); return;
      }
    }
    // Stepping over an entry of saved_key_. Past max_skip_ of them, one seek jumps the rest.
    if (++num_skipped > max_skip_) {
      num_skipped = 0;
      if (skipping) {
        // Footer 0 is the last internal key a user key can have.
        InternalSeek(saved_key_.slice(), 0, kTypeDeletion);
        continue;
      }
      if (ikey.sequence > sequence_) {
        // Straight to the first entry old enough to be visible; strictly ahead of iter_.
        InternalSeek(saved_key_.slice(), sequence_, kValueTypeForSeek);
        continue;
      }
    }
    iter_->Next();
  }
  valid_ = false;
}

void DBIter::PrevInternal() {
  assert(direction_ == kReverse);
  while (iter_->Valid()) {
    ParsedInternalKey ikey;
    if (!ParseKey(&ikey)) return;
    if (lower_ != nullptr && cmp_->Compare(ikey.user_key, *lower_) < 0) break;
    saved_key_.Assign(ikey.user_key);
    const bool live = FindValueForCurrentKey();
    if (!status_.ok() || !iter_->status().ok()) {
      valid_ = false;
      return;
    }
    if (live) {
      valid_ = true;
      return;
    }
  }
  valid_ = false;
}

bool DBIter::FindValueForCurrentKey() {
  // Going backward meets a key's versions oldest first, so the last visible one wins.
  bool have_visible = false;
  ParsedInternalKey newest;  // of the visible entries seen so far; user_key unused
  uint64_t scanned = 0;
  // The operands above the newest base seen so far, oldest first, and whether that base is
  // a Put (in value_).
  bool base_is_value = false;
  reverse_ops_.clear();
  reverse_copies_.clear();
  while (iter_->Valid()) {
    ParsedInternalKey ikey;
    if (!ParseKey(&ikey)) return false;
    if (cmp_->Compare(ikey.user_key, saved_key_.slice()) != 0) break;
    if (scanned++ >= max_skip_) return FindValueForCurrentKeyUsingSeek();
    if (IsVisible(ikey.sequence)) {
      have_visible = true;
      newest.sequence = ikey.sequence;
      newest.type = ikey.type;
      if (ikey.type == kTypeMerge) {
        if (iter_->IsValuePinned()) {
          reverse_ops_.push_back(iter_->value());
        } else {
          const Slice v = iter_->value();
          reverse_copies_.emplace_back(v.data(), v.size());
          reverse_ops_.push_back(reverse_copies_.back());
        }
      } else {
        reverse_ops_.clear();
        reverse_copies_.clear();
        base_is_value = ikey.type == kTypeValue;
        if (base_is_value) CaptureValue();
      }
    }
    iter_->Prev();
  }
  if (!iter_->status().ok() || !have_visible) return false;
  switch (newest.type) {
    case kTypeValue: return true;
    case kTypeDeletion:
    case kTypeSingleDeletion: return false;
    case kTypeMerge:
      if (merge_operator_ == nullptr) return ResolveMerge();
      return FinishMerge(base_is_value ? &value_ : nullptr, reverse_ops_);
    default:
      newest.user_key = saved_key_.slice();
      SetCorruptType(newest);
      return false;
  }
}

bool DBIter::FindValueForCurrentKeyUsingSeek() {
  // The first visible entry forward from (saved_key_.slice(), sequence_) is the newest visible one.
  InternalSeek(saved_key_.slice(), sequence_, kValueTypeForSeek);
  bool live = false;
  while (iter_->Valid()) {
    ParsedInternalKey ikey;
    if (!ParseKey(&ikey)) return false;
    if (cmp_->Compare(ikey.user_key, saved_key_.slice()) != 0) break;
    if (IsVisible(ikey.sequence)) {
      if (ikey.type == kTypeValue) {
        CaptureValue();
        live = true;
        break;
      }
      if (ikey.type == kTypeDeletion || ikey.type == kTypeSingleDeletion) break;
      if (ikey.type == kTypeMerge) {
        if (!MergeForward()) return false;
        live = true;
        break;
      }
      SetCorruptType(ikey);
      return false;
    }
    iter_->Next();
  }
  if (!iter_->status().ok()) return false;
  // Back to just before saved_key_: no real entry sorts before its (max seq, max type) key.
  InternalSeekForPrev(saved_key_.slice(), kMaxSequenceNumber, kValueTypeForSeek);
  return live;
}

void DBIter::Seek(const Slice& target) {
  StopWatch timer(nullptr, stats_, DB_SEEK);
  SeekImpl(target);
  RecordMove(NUMBER_DB_SEEK, NUMBER_DB_SEEK_FOUND);
}

void DBIter::SeekImpl(const Slice& target) {
  status_ = Status::OK();
  valid_ = false;
  merged_ = false;
  direction_ = kForward;
  const Slice* t = &target;
  if (lower_ != nullptr && cmp_->Compare(target, *lower_) < 0) t = lower_;
  InternalSeek(*t, sequence_, kValueTypeForSeek);
  FindNextUserEntry(false);
}

void DBIter::SeekForPrev(const Slice& target) {
  StopWatch timer(nullptr, stats_, DB_SEEK);
  SeekForPrevImpl(target);
  RecordMove(NUMBER_DB_SEEK, NUMBER_DB_SEEK_FOUND);
}

void DBIter::SeekForPrevImpl(const Slice& target) {
  status_ = Status::OK();
  valid_ = false;
  merged_ = false;
  direction_ = kReverse;
  if (upper_ != nullptr && cmp_->Compare(target, *upper_) >= 0) {
    InternalSeekForPrev(*upper_, kMaxSequenceNumber, kValueTypeForSeek);
  } else {
    InternalSeekForPrev(target, 0, kTypeDeletion);
  }
  PrevInternal();
}

void DBIter::SeekToFirst() {
  StopWatch timer(nullptr, stats_, DB_SEEK);
  SeekToFirstImpl();
  RecordMove(NUMBER_DB_SEEK, NUMBER_DB_SEEK_FOUND);
}

void DBIter::SeekToFirstImpl() {
  if (lower_ != nullptr) {
    SeekImpl(*lower_);
    return;
  }
  status_ = Status::OK();
  valid_ = false;
  merged_ = false;
  direction_ = kForward;
  iter_->SeekToFirst();
  FindNextUserEntry(false);
}

void DBIter::SeekToLast() {
  StopWatch timer(nullptr, stats_, DB_SEEK);
  SeekToLastImpl();
  RecordMove(NUMBER_DB_SEEK, NUMBER_DB_SEEK_FOUND);
}

void DBIter::SeekToLastImpl() {
  status_ = Status::OK();
  valid_ = false;
  merged_ = false;
  direction_ = kReverse;
  if (upper_ != nullptr) {
    InternalSeekForPrev(*upper_, kMaxSequenceNumber, kValueTypeForSeek);
  } else {
    iter_->SeekToLast();
  }
  PrevInternal();
}

void DBIter::Next() {
  assert(valid_);
  if (!valid_) return;
  if (direction_ == kReverse) {
    // iter_ sits before saved_key_; jump to its last possible entry and skip from there.
    direction_ = kForward;
    InternalSeek(saved_key_.slice(), 0, kTypeDeletion);
  } else if (!merged_) {
    iter_->Next();
  }  // else the merge left iter_ past the entries it used
  merged_ = false;
  FindNextUserEntry(true);
  RecordMove(NUMBER_DB_NEXT, NUMBER_DB_NEXT_FOUND);
}

void DBIter::Prev() {
  assert(valid_);
  if (!valid_) return;
  if (direction_ == kForward && merged_) {
    // iter_ may be anywhere past saved_key_'s first entries, even at the end.
    direction_ = kReverse;
    merged_ = false;
    InternalSeekForPrev(saved_key_.slice(), kMaxSequenceNumber, kValueTypeForSeek);
  } else if (direction_ == kForward) {
    // iter_ is at saved_key_'s newest visible entry; newer hidden ones may precede it.
    direction_ = kReverse;
    iter_->Prev();
    uint64_t steps = 0;
    while (iter_->Valid()) {
      ParsedInternalKey ikey;
      if (!ParseKey(&ikey)) return;
      if (cmp_->Compare(ikey.user_key, saved_key_.slice()) != 0) break;
      if (++steps > max_skip_) {
        InternalSeekForPrev(saved_key_.slice(), kMaxSequenceNumber, kValueTypeForSeek);
        break;
      }
      iter_->Prev();
    }
  }
  PrevInternal();
  RecordMove(NUMBER_DB_PREV, NUMBER_DB_PREV_FOUND);
}

}  // namespace

Iterator* NewDBIterator(const ReadOptions& read_options, const Comparator* user_cmp,
                        InternalIterator* internal_iter, SequenceNumber sequence,
                        ReadCallback* callback, uint64_t max_sequential_skip,
                        const MergeOperator* merge_operator, Logger* logger, Statistics* stats) {
  return new DBIter(read_options, user_cmp, internal_iter, sequence, callback, max_sequential_skip,
                    merge_operator, logger, stats);
}

}  // namespace shale
