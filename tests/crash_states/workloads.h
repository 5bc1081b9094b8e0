// Workloads for the crash-state checker: each runs a short, single-threaded sequence of DB
// operations on an in-memory Env through a RecordingEnv, keeping the history the oracle
// needs (oracle.h). Background flushes and compactions run as usual; their calls land in
// the log in the order they happened, so one recording is one real interleaving.
//
// Thread safety: a Context is used by the one thread running the workload, except that
// Put, Delete, Write and WriteFamilies may be called from several threads at once (the
// history is appended under a mutex; set `writers` so that the checker reads it so).
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shale/db.h"
#include "shale/env.h"
#include "shale/utilities/transaction_db.h"
#include "shale/write_batch.h"
#include "tests/crash_states/families.h"
#include "tests/crash_states/oracle.h"
#include "tests/testutil/recording_env.h"

namespace shale::crash_states {

// What a workload leaves: the starting files, the call log, the history, how to open.
struct Recording {
  std::map<std::string, std::string> initial;
  std::vector<std::string> initial_dirs;  // existing at the start, even if empty
  std::vector<FsOp> ops;
  History history;
  CheckOptions check;
};

class Context {
 public:
  Context();
  ~Context();

  // The options every Open uses (env and create_if_missing are set by Open).
  Options options;
  const std::string dbname = "/db";
  // Several threads write, each its own keys "<thread>/<key>" (oracle.h R7).
  bool writers = false;
  // After StartRecording, before Open: each WAL sync waits until every thread between its
  // WriterBegin and WriterDone has a write in flight, so that they queue behind the
  // syncing leader and the next leader commits them as one group.
  void GroupWriters();
  void WriterBegin();
  void WriterDone();

  // Before StartRecording: an unrecorded DB on the base Env, for a starting state.
  Status OpenUnrecorded(std::unique_ptr<DB>* db);
  // Replaces the base Env with a fresh one holding the files under dbname as they are now
  // (what a crash that lost nothing would leave), for a recording that starts there. The
  // DBs open on the old Env must be dropped before (they are not closed cleanly: a crash).
  Status CrashAndKeepEverything(std::unique_ptr<DB>* db);
  // Puts the files and directories of a crash state on the base Env: a recording that
  // starts from a state a power loss left (before StartRecording).
  Status Seed(const CrashState& state);
  // From now on calls are logged; the files under dbname are the durable start, and every
  // write so far is durable.
  Status StartRecording();
  Status Open(std::unique_ptr<DB>* db);

  // Writes through db, logged in the history. key and value must not hold whitespace.
  Status Put(DB* db, const std::string& key, const std::string& value,
             const WriteOptions& wo = WriteOptions());
  Status Delete(DB* db, const std::string& key, const WriteOptions& wo = WriteOptions());
  Status Write(DB* db, const std::vector<std::pair<std::string, std::optional<std::string>>>& ops,
               const WriteOptions& wo = WriteOptions());
  // A blocking flush; afterwards every earlier write is durable.
  Status Flush(DB* db);

  // Column families (the checker then opens every family and matches each: oracle.h R7).
  // Open with these families (the default among them or not; missing ones are created),
  // handles in their order; the caller releases them with db->DestroyColumnFamilyHandle
  // before the DB goes. Before StartRecording it opens on the base Env, unrecorded.
  Status OpenFamilies(const std::vector<std::string>& names,
                      std::vector<ColumnFamilyHandle*>* handles, std::unique_ptr<DB>* db);
  // Opens db with every family the files under dbname list (FamilyDb::Open).
  Status OpenAllFamilies(FamilyDb* db);
  Status CreateFamily(DB* db, const std::string& name, ColumnFamilyHandle** handle);
  // Drops the family (its handle stays the caller's); from its acknowledgement the drop is
  // durable and the family's data must never come back.
  Status DropFamily(DB* db, ColumnFamilyHandle* family);
  struct FamilyOp {
    ColumnFamilyHandle* family;
    std::string key;
    std::optional<std::string> value;  // nullopt: a delete
  };
  // One WriteBatch across families.
  Status WriteFamilies(DB* db, const std::vector<FamilyOp>& ops,
                       const WriteOptions& wo = WriteOptions());
  // A blocking flush of these families (together under atomic_flush); afterwards every
  // earlier write is durable in each of them.
  Status FlushFamilies(DB* db, const std::vector<ColumnFamilyHandle*>& families);

  // Checkpoint::CreateCheckpoint(dir, log_size_for_flush) of db; the checker then holds dir
  // to R8 (oracle.h). With log_size_for_flush 0 the DB is flushed first, so every earlier
  // write is durable once it returns.
  Status Checkpoint(DB* db, const std::string& dir, uint64_t log_size_for_flush);

  // Through a TransactionDB (policy 1: WRITE_COMMITTED, 2: WRITE_PREPARED; the checker
  // opens it the same way).
  Status OpenTxn(int policy, std::unique_ptr<TransactionDB>* db);
  // A named transaction with sync=true: writes ops, prepares, then commits (kCommit),
  // rolls back (kRollback) or is deleted prepared (kLeavePrepared: it stays in the WAL).
  enum class Resolve { kCommit, kRollback, kLeavePrepared };
  Status Txn(TransactionDB* db, const std::string& name,
             const std::vector<std::pair<std::string, std::optional<std::string>>>& ops,
             Resolve resolve);

  Recording Finish();
  // Calls logged so far (0 before StartRecording).
  size_t Count();

 private:
  std::unique_ptr<Env> base_;
  std::unique_ptr<RecordingEnv> recording_;
  std::map<std::string, std::string> initial_;
  std::vector<std::string> initial_dirs_;
  // Records a write of batch (ops as the history names them).
  Status Record(DB* db, WriteBatch* batch,
                std::vector<std::pair<std::string, std::optional<std::string>>> ops,
                const WriteOptions& wo);
  Env* env();

  class GroupingEnv;
  void WaitForWritersInFlight();
  std::unique_ptr<Env> grouping_;
  std::mutex flight_mu_;
  std::condition_variable flight_cv_;
  int in_flight_ = 0;       // writes issued, not yet returned (under flight_mu_)
  int active_writers_ = 0;  // threads not yet done (under flight_mu_)

  std::mutex history_mu_;
  History history_;  // appended under history_mu_ by Record
  int txn_ = 0;
  bool families_ = false;
  std::vector<CheckpointCheck> checkpoints_;
};

struct Workload {
  std::string name;
  std::string what;
  bool long_run = false;  // bounded in CI (persistence points only)
  std::function<Status(Context*)> run;
};

// Every workload, short ones first.
const std::vector<Workload>& AllWorkloads();

WriteOptions Sync();
WriteOptions NoWal();

}  // namespace shale::crash_states
