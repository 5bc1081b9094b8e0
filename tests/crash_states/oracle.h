// The oracle and the checker: what a DB recovered from a crash state must hold, and the
// check of one state in every WAL recovery mode.
//
// History. A workload runs single-threaded and logs each write (a put, a delete or a batch
// of them) with the RecordingEnv call counts around it: `issued` before the call, `acked`
// after it returned OK. A write is *durable* from a call count on: its own ack when it
// was written with sync=true, and then every earlier WAL write too (a synced WAL write
// syncs the WALs before it: no holes); the end of a completed Flush for every earlier write
// (with or without the WAL). At crash point p:
//   lo(p) = 1 + the last write durable at p (0 if none): these must all be recovered;
//   hi(p) = the writes issued before p: no later one can be on the disk.
// The rules (per recovery mode, paranoid_checks both ways):
//   R1. Open succeeds, except that kAbsoluteConsistency may refuse, with Corruption, a
//       state whose WAL lost pushed bytes, ends inside a record or holds damage, and
//       kTolerateCorruptedTailRecords one that holds damage before its tail (a hole with
//       data after it, or garbage): the modes' documented refusals (options.h). And
//       kAbsoluteConsistency must refuse the states absolute_consistency.h names: the
//       newest WAL with bytes ends inside a record, or an older one lost records that the
//       next one's predecessor record shows were there.
//   R2. kTolerateCorruptedTailRecords, kAbsoluteConsistency, kPointInTimeRecovery: the
//       DB's contents equal the history's after its first n writes for some n in
//       [lo(p), hi(p)]: every durable write is there, and what is there is a prefix of
//       the history with no holes, batches whole.
//   R3. kSkipAnyCorruptedRecords (salvage) may drop damaged records from the middle: every
//       key reads a value it held at some point of the history (or is absent where it was
//       absent at some point); nothing else is promised.
//   R4. Reads agree: Get of every key of the history answers what the iterator shows.
//   R5. After kPointInTimeRecovery with paranoid_checks, the DB closes and reopens to the
//       same contents (recovery left a state it can recover from).
//   R7. With column families (CheckOptions::families; families.h): R2 holds per family,
//       each family at its own n, with lo per family (a family's flush makes only its own
//       writes durable), a dropped family absent from its drop on, and every batch that
//       spans families in all of them or in none, and the WAL's order kept across them.
//       The same rule checks several writing threads, each thread's keys a family, when
//       their writes' sequence numbers are not known; when they are, the history is put
//       in sequence order, the WAL's, and R2 holds across all threads
//       (History::OrderBySequence).
//   R6. Through a TransactionDB (CheckOptions::txn): a transaction whose synced Prepare was
//       acknowledged and whose Commit or Rollback had not begun comes back prepared; none
//       comes back that had not begun to prepare. The checker rolls the recovered ones
//       back before reading (so a committed transaction is a Write of the history from
//       its Commit on, and nothing else of a transaction is visible).
//   R8. A checkpoint (CheckOptions::checkpoints) is whole or absent: its directory exists
//       once CreateCheckpoint has returned, and whenever it exists it opens
//       (kPointInTimeRecovery, paranoid) with exactly the history's contents at the call.
//       R1-R7 look only at the files under dbname.
// Thread safety: none.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "shale/db.h"
#include "shale/options.h"
#include "shale/status.h"
#include "tests/crash_states/persistence_model.h"

namespace shale::crash_states {

struct Write {
  // In batch order; nullopt is a delete, and the delete of a key ending in '*' deletes
  // every key with the prefix before it (a family's drop, families.h).
  std::vector<std::pair<std::string, std::optional<std::string>>> ops;
  bool wal = true;  // false: written with disableWAL
  size_t issued = 0;
  size_t acked = 0;
  size_t durable = static_cast<size_t>(-1);
  // Durable in one family only, from a call count on (that family's flush; families.h).
  std::map<std::string, size_t> durable_in;
  // The sequence number the engine gave the write's first record (0: not known).
  uint64_t seq = 0;
};

// Applies w's ops to contents m.
void Apply(const Write& w, std::map<std::string, std::string>* m);

// A named two-phase transaction's prepare: `resolved` is the call count when its Commit or
// Rollback began (none yet: -1). Its commit, if any, is also a Write.
struct Prepare {
  std::string name;
  size_t issued = 0;
  size_t acked = 0;
  size_t resolved = static_cast<size_t>(-1);
};

class History {
 public:
  void Add(Write w) { writes_.push_back(std::move(w)); }
  void AddPrepare(Prepare p) { prepares_.push_back(std::move(p)); }
  void Resolve(const std::string& name, size_t at) {
    for (Prepare& p : prepares_) {
      if (p.name == name) p.resolved = at;
    }
  }
  const std::vector<Prepare>& prepares() const { return prepares_; }
  // From call count `at`, every write so far is durable (wal_only: every WAL write), or
  // with acked_by, every write acknowledged by that call count.
  void MarkDurable(size_t at, bool wal_only, size_t acked_by = static_cast<size_t>(-1));
  // From call count `at`, every write so far is durable in `family` (families.h).
  void MarkDurableIn(size_t at, const std::string& family);
  // Several writers whose every WAL write knows its sequence number: puts the writes in
  // sequence order, the WAL's, and makes each write durable whenever a write after it in
  // that order is (a synced write syncs the WAL up to itself). The history is then one
  // order, checked by R2 as a single writer's; Bounds' hi counts only the leading writes
  // issued before the point (a write may take a number before an earlier-issued one).
  // Returns false, changing nothing, if some WAL write has no number.
  bool OrderBySequence();
  bool by_sequence() const { return by_sequence_; }
  void Bounds(size_t point, size_t* lo, size_t* hi) const;
  // Contents after the first n writes.
  std::map<std::string, std::string> StateAfter(size_t n) const;
  const std::vector<Write>& writes() const { return writes_; }

  // A text form, for saved states (keys and values must not hold whitespace).
  std::string Encode() const;
  static Status Decode(const std::string& text, History* history);

 private:
  std::vector<Write> writes_;
  std::vector<Prepare> prepares_;
  bool by_sequence_ = false;
};

// A checkpoint the workload made (R8): CreateCheckpoint(dir) began at call count `issued`,
// after the first `writes` writes of the history, and returned OK at call count `acked`.
struct CheckpointCheck {
  std::string dir;
  size_t issued = 0;
  size_t acked = 0;
  size_t writes = 0;
};

struct CheckOptions {
  std::string dbname = "/db";
  // The options the workload ran with (comparator, merge operator, write buffer...); env,
  // create_if_missing, wal_recovery_mode and paranoid_checks are set per open.
  Options options;
  std::vector<WALRecoveryMode> modes = {
      WALRecoveryMode::kTolerateCorruptedTailRecords, WALRecoveryMode::kAbsoluteConsistency,
      WALRecoveryMode::kPointInTimeRecovery, WALRecoveryMode::kSkipAnyCorruptedRecords};
  bool both_paranoid = true;
  // 0: a plain DB; 1: a TransactionDB, WRITE_COMMITTED; 2: WRITE_PREPARED (R6).
  int txn = 0;
  bool reopen = true;     // R5
  bool families = false;  // R7: every family is opened, read and matched (families.h)
  bool writers = false;   // R7 with each writing thread's keys as a family (families.h)
  std::vector<CheckpointCheck> checkpoints;  // R8
};

// What checking one state found.
struct CheckResult {
  std::vector<std::string> violations;  // empty: the state passed
  int opens = 0;
  int refusals = 0;  // documented refusals (R1)
};

// Every key and value of db, through an iterator.
Status Scan(DB* db, std::map<std::string, std::string>* out);
// One family's keys and values into *out, each key with `prefix` put before it; and R4:
// Get of each of `keys` that starts with prefix (without it) agrees with the iterator, or
// *disagreement says how not.
Status ReadFamily(DB* db, ColumnFamilyHandle* family, const std::string& prefix,
                  const std::set<std::string>& keys, std::map<std::string, std::string>* out,
                  std::string* disagreement);
// Contents for a message (the first few keys, values shortened).
std::string ShowContents(const std::map<std::string, std::string>& m);
// R2: the n in [lo, hi] whose first n writes leave exactly got, or -1.
long MatchPrefix(const History& h, size_t lo, size_t hi,
                 const std::map<std::string, std::string>& got);

// Checks one state (R1-R5) against history with the bounds of its point.
CheckResult CheckState(const CrashState& state, const History& history, size_t lo, size_t hi,
                       const CheckOptions& options);

// Saves a state with its history, bounds, CheckOptions::txn, ::families, ::writers and
// ::checkpoints as directory
// dir, and loads it back: the replay of a violation.
Status SaveState(const std::string& dir, const CrashState& state, const History& history, size_t lo,
                 size_t hi, const CheckOptions& check);
Status LoadState(const std::string& dir, CrashState* state, History* history, size_t* lo,
                 size_t* hi, CheckOptions* check);

}  // namespace shale::crash_states
