// DBImpl's side of the transaction door (db/db_for_transactions.h): how the transaction
// layer finds the engine, the conflict check's answer to "when was a key last written?",
// and snapshots for WritePrepared. A pessimistic transaction holds the key's lock when it
// asks, so no other writer can change the answer until it commits; the answer is compared
// against the transaction's snapshot (utilities/transactions/).
#include <algorithm>
#include <string>
#include <vector>

#include "db/db_impl.h"
#include "db/range_del_read.h"
#include "shale/utilities/stackable_db.h"

namespace shale {

Status DBForTransactions::Open(const Options& options, const std::string& dbname,
                               bool seq_per_batch, DB** dbptr) {
  return DBImpl::Open(options, dbname, seq_per_batch, dbptr);
}

Status DBForTransactions::Open(const DBOptions& db_options, const std::string& dbname,
                               const std::vector<ColumnFamilyDescriptor>& column_families,
                               std::vector<ColumnFamilyHandle*>* handles, bool seq_per_batch,
                               DB** dbptr) {
  return DBImpl::Open(db_options, dbname, column_families, handles, seq_per_batch, dbptr);
}

SequenceNumber DBForTransactions::MinUncommittedOf(const Snapshot* snapshot) {
  return static_cast<const SnapshotImpl*>(snapshot)->min_uncommitted();
}

DBForTransactions* DBForTransactions::From(DB* db) {
  auto* stacked = dynamic_cast<StackableDB*>(db);
  return dynamic_cast<DBImpl*>(stacked != nullptr ? stacked->GetRootDB() : db);
}

Status DBImpl::GetLatestSequenceForKey(ColumnFamilyHandle* cf, const Slice& key, bool cache_only,
                                       SequenceNumber* seq, bool* found) {
  *found = false;
  *seq = kMaxSequenceNumber;
  if (!IsOwnFamily(cf)) return Status::InvalidArgument("column family handle of another DB");
  std::shared_ptr<SuperVersion> sv = CfdOf(cf)->GetSuperVersion();
  if (sv == nullptr) return Status::ShutdownInProgress();

  // Every entry counts, whatever its type and whoever's snapshot: the newest sequence is
  // what decides a conflict, so the lookup reads at the largest sequence. Without a merge
  // context a lookup stops at the first entry, a Merge included, and reports its sequence.
  LookupKey lkey(key, kMaxSequenceNumber);
  std::string unused;
  Status s;
  SequenceNumber found_seq = kMaxSequenceNumber;
  // A range tombstone covering the key is a write to it: the newest one seen so far
  // answers for the older entries (answered at its sequence) and, with none, for itself.
  SequenceNumber covered = CoveringTombstoneSeq(sv->mem, key, kMaxSequenceNumber, nullptr);
  bool hit = sv->mem->Get(lkey, &unused, &s, &found_seq, nullptr, nullptr, covered);
  for (size_t i = 0; !hit && i < sv->imm.size(); i++) {
    covered = std::max(covered, CoveringTombstoneSeq(sv->imm[i], key, kMaxSequenceNumber, nullptr));
    hit = sv->imm[i]->Get(lkey, &unused, &s, &found_seq, nullptr, nullptr, covered);
  }
  // Flushed memtables kept for this (max_write_buffer_size_to_maintain) answer before
  // the files, and without reading them.
  for (size_t i = 0; !hit && i < sv->history.size(); i++) {
    covered =
        std::max(covered, CoveringTombstoneSeq(sv->history[i], key, kMaxSequenceNumber, nullptr));
    hit = sv->history[i]->Get(lkey, &unused, &s, &found_seq, nullptr, nullptr, covered);
  }
  if (!hit && covered != 0) {
    hit = true;
    found_seq = covered;
  }
  if (hit) {
    *found = true;
    *seq = found_seq;
    return Status::OK();
  }
  if (cache_only) {
    // How far back this answer is good for: every write from the oldest memtable's
    // earliest sequence on is in a memtable.
    SequenceNumber oldest = sv->mem->earliest_seqno();
    for (MemTable* m : sv->imm) oldest = std::min(oldest, m->earliest_seqno());
    for (MemTable* m : sv->history) oldest = std::min(oldest, m->earliest_seqno());
    *seq = oldest;
    return Status::OK();
  }
  // A file's answer sets found_seq; a file that could not be read returns true with the
  // error in s and leaves found_seq alone, which is how the two are told apart.
  // A tombstone only a file holds, over a key no file holds older: still a write to it.
  SequenceNumber file_covered = 0;
  hit = sv->current->Get(ReadOptions(), lkey, &unused, &s, &found_seq, nullptr, nullptr, nullptr,
                         nullptr, /*deleted_below=*/0, &file_covered);
  if (!hit && file_covered != 0) {
    hit = true;
    found_seq = file_covered;
  }
  if (!hit) return Status::OK();
  if (found_seq == kMaxSequenceNumber) return s.ok() ? Status::Corruption("no sequence") : s;
  *found = true;
  *seq = found_seq;
  return Status::OK();
}

std::vector<SequenceNumber> DBImpl::SnapshotsUpTo(SequenceNumber max) {
  std::vector<SequenceNumber> all;
  {
    MutexLock l(&snapshots_mu_);
    all = snapshots_.GetAll();
  }
  all.erase(std::upper_bound(all.begin(), all.end(), max), all.end());
  return all;
}

const Snapshot* DBImpl::GetSnapshotWithMinUncommitted(SequenceNumber min_uncommitted) {
  MutexLock l(&snapshots_mu_);
  return snapshots_.New(pipeline_->LastPublished(), min_uncommitted);
}

}  // namespace shale
