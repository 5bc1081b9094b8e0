// Two-phase commit's bookkeeping in the DB (allow_2pc): which WALs must outlive their
// flushes because they hold prepared records, and the prepared transactions recovery found.
// The writes themselves go through DBImpl::WriteTxn (db_impl_write.cc); recovery's replay
// is db/wal_replay.cc.
#include <algorithm>

#include "db/db_impl.h"

namespace shale {

void DBImpl::MarkPrepareResolved(uint64_t log) { pipeline_->prepared_logs().Remove(log); }

std::map<std::string, RecoveredTransaction> DBImpl::TakeRecoveredTransactions() {
  DbLock l(this);
  return std::move(recovered_txns_);
}

uint64_t DBImpl::MinLogToKeepFor2PC(uint64_t data_log,
                                    const std::vector<const MemTable*>& flushed) {
  uint64_t keep = data_log;
  auto consider = [&keep](uint64_t log) {
    if (log != 0) keep = std::min(keep, log);
  };
  // A prepare is counted before the write that logged it returns, and resolved only after
  // its commit's records are in a memtable (which then holds the reference): between the
  // two, one of these always names the WAL.
  consider(pipeline_->prepared_logs().Min());
  for (const auto& [id, cfd] : families_.live()) {
    HeldFor(cfd);
    for (const MemTable* m : cfd->imm()) {
      if (std::find(flushed.begin(), flushed.end(), m) == flushed.end()) {
        consider(m->MinLogContainingPrepSection());
      }
    }
    consider(cfd->mem()->MinLogContainingPrepSection());
  }
  return keep;
}

}  // namespace shale
