// WalReplayer: applies the batches read from WAL files to a memtable at recovery, and
// rebuilds the state of two-phase commit on the way.
//
// Two-phase commit in the WAL: a transaction's Prepare logs its records once, between
// BeginPrepare and EndPrepare(name), without sequence numbers and without touching the
// memtable. Its Commit logs a batch of commit-time records followed by Commit(name); the
// memtable then got the commit-time records and, numbered right after them, the prepared
// records. Rollback(name) drops the prepared records. So replay keeps each prepared section
// until its marker comes, applies it at its Commit, and hands back the ones still open.
//
// WALs older than the MANIFEST's log number are read only for their prepared sections and
// markers (allow_2pc keeps them while they matter): their records, and the records of a
// commit logged in them, are already in SST files.
//
// WritePrepared (seq_per_batch) logs otherwise: one record per write, numbered per
// sub-batch (db/sub_batch.h); a prepare is a record of its own, BeginPrepare, the records,
// EndPrepare(name), whose records went to the memtable at once and so are applied at once
// too; Commit(name) and Rollback(name) take a number each and only resolve it (a
// rollback's restoring records come before its marker, applied as any others). A commit
// of a name no kept WAL prepared is passed over: its prepare's records are in SST files.
//
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "db/recovered_transaction.h"
#include "shale/status.h"
#include "shale/types.h"
#include "shale/write_batch.h"

namespace shale {

class MemTable;

// Where replayed records go, per column family (the DB's families at recovery).
class ReplayTargets {
 public:
  virtual ~ReplayTargets() = default;
  // Whether the DB ever had family cf (live or dropped); a record of any other is damage.
  virtual bool Knows(uint32_t cf) const = 0;
  // The memtable family cf's records read from WAL `log` go to, or null when they are
  // passed over: the family was dropped, or its files hold everything of it up to a newer
  // WAL (its log number is above `log`).
  virtual MemTable* For(uint32_t cf, uint64_t log) = 0;
};

class WalReplayer {
 public:
  // allow_2pc: prepared sections are rebuilt; without it a batch holding one fails with
  // NotSupported (RocksDB's message: the WAL needs TransactionDB::Open). min_data_log: the
  // MANIFEST's log number.
  WalReplayer(bool allow_2pc, uint64_t min_data_log)
      : WalReplayer(allow_2pc, /*seq_per_batch=*/false, min_data_log) {}
  // seq_per_batch: the WAL of a WritePrepared DB (above).
  WalReplayer(bool allow_2pc, bool seq_per_batch, uint64_t min_data_log)
      : allow_2pc_(allow_2pc), seq_per_batch_(seq_per_batch), min_data_log_(min_data_log) {}

  // True if records read from WAL `log` go to the memtable (else only markers matter).
  bool AppliesRecordsOf(uint64_t log) const { return log >= min_data_log_; }

  // Applies batch, read from WAL `log`, to the memtables targets gives (mem: the default
  // family's only, which may be null when !AppliesRecordsOf(log)), numbering its records
  // from the batch's sequence upward:
  // PutLogData blobs and prepared records take no number, a commit's prepared records take
  // theirs at its marker (seq_per_batch: as above). *next_seq gets the number after the
  // last one taken (the batch's sequence if none was). The whole batch is checked first and nothing
  // is applied when it is malformed (Corruption), numbers records past kMaxSequenceNumber
  // (Corruption), names a column family targets does not know (InvalidArgument), holds a prepared
  // section without allow_2pc (NotSupported), nests or leaves open a prepared section, prepares a
  // name still open, or (allow_2pc) commits in a WAL whose records are replayed a transaction no
  // kept WAL prepared: its records would be lost (Corruption). A Commit or Rollback of an unknown
  // name in an older WAL, or without allow_2pc, is passed over, as RocksDB's recovery does.
  // seq_per_batch: a prepared section that does not hold the whole batch is Corruption.
  // A prepared section that the other write policy logged (seq_per_batch tells this one's:
  // WRITE_PREPARED) is NotSupported, nothing applied: the WAL must be emptied under the
  // policy that wrote it before the policy changes (RocksDB's rule).
  Status Apply(const WriteBatch& batch, uint64_t log, ReplayTargets* targets,
               SequenceNumber* next_seq);
  Status Apply(const WriteBatch& batch, uint64_t log, MemTable* mem, SequenceNumber* next_seq);

  // The transactions still prepared, by name; the replayer forgets them.
  std::map<std::string, RecoveredTransaction> TakePrepared() { return std::move(prepared_); }

 private:
  class Pass;
  const bool allow_2pc_;
  const bool seq_per_batch_;
  const uint64_t min_data_log_;
  std::map<std::string, RecoveredTransaction> prepared_;
};

}  // namespace shale
