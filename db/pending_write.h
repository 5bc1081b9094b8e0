// PendingWrite: one write on its way through the WritePipeline (db/write_pipeline.h): the
// queue's Writer (db/write_thread.h: what grouping needs) plus what the pipeline decided
// about the write when it classified it (how many sequence numbers it takes, whether it
// reaches the memtable, its transaction parts) and what the leader tells it (its memtable
// and its WAL).
//
// Lifetime and threads: it lives on the writing thread's stack for one call. Its
// classification fields are set before it joins a queue and read-only afterwards; the
// leader fields are written by the group's leader before it hands the writer a new state
// (which orders them before the writer reads them). Every Writer the pipeline queues is a
// PendingWrite, so a group's members may be taken back with Of().
#pragma once

#include <cstdint>

#include "db/write_thread.h"

namespace shale {

class MemTable;
class PreReleaseCallback;

struct PendingWrite : WriteThread::Writer {
  // The Writer the pipeline queued as w.
  static PendingWrite* Of(WriteThread::Writer* w) { return static_cast<PendingWrite*>(w); }

  // ---- Classification (WritePipeline::Classify).
  // Sequences the write takes: the records it inserts, or (seq_per_batch) its
  // sub-batches, at least 1 (db/sub_batch.h). keys: the records it inserts.
  uint64_t seq_count = 0;
  uint64_t keys = 0;
  // The batch is logged, never inserted, and takes no sequence (seq_per_batch: one, and
  // the WAL may be off: a commit that only takes a number).
  bool wal_only = false;

  // ---- Transaction parts (DBForTransactions::TxnWrite; all unset for a plain write).
  // prepares: the batch holds a prepared section, whose WAL must be kept. commits: it
  // holds a Commit marker, which needs the WAL (it resolves the prepare at recovery).
  // txn_batch:
  // inserted after batch, numbered on from it, never logged (a commit's prepared records,
  // logged at Prepare in WAL prep_log).
  bool prepares = false;
  bool commits = false;
  const WriteBatch* txn_batch = nullptr;
  uint64_t prep_log = 0;
  PreReleaseCallback* pre_release = nullptr;  // db/pre_release_callback.h; may be null

  // ---- Set by the leader.
  MemTable* mem = nullptr;  // where the batch goes
  uint64_t log_used = 0;    // the WAL it was logged to (0: none)
};

}  // namespace shale
