// RecoveredTransaction: a two-phase-commit transaction that WAL recovery found prepared and
// neither committed nor rolled back (db/wal_replay.h builds it; the transaction layer takes
// it through DBForTransactions::TakeRecoveredTransactions and restores it as a prepared
// transaction). A plain value: no locking of its own.
#pragma once

#include <cstdint>

#include "shale/types.h"
#include "shale/write_batch.h"

namespace shale {

struct RecoveredTransaction {
  uint64_t log_number = 0;  // the WAL holding the prepare
  WriteBatch batch;         // the prepared records (no markers)
  // seq_per_batch: the prepare's numbers, prepare_seq .. prepare_seq + sub_batches - 1.
  SequenceNumber prepare_seq = 0;
  uint64_t sub_batches = 0;
};

}  // namespace shale
