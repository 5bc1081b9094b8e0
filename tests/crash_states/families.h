// The column-family side of the oracle (oracle.h R7): one model per family inside the one
// History.
//
// Naming. A key of the family with id `id` is "<id>/<key>" in the history; the drop of a
// family is a write of one delete, of "<id>/*", which removes the family's every key. Ids
// are never reused (a family made again under a dropped one's name has a new id), so a
// history names each incarnation of a name apart.
//
// The rule. A recovered DB is opened with every family its MANIFEST lists and read family
// by family into one map of history keys. Each family f must then equal the history after
// its own first n_f writes, with
//   - lo_f <= n_f <= hi: lo_f is 1 + the last write to f durable at the crash point, either
//     for every family (a synced WAL write, oracle.h) or for f alone (f's flush); hi is the
//     writes issued before the point;
//   - a family that is present not dropped within its first n_f writes (a dropped family
//     must not come back), one that is absent empty there;
//   - every write that spans several families inside the first n_f of all of them or of
//     none (a batch is all or nothing across families; a family whose n_f passes its
//     drop shows none of its writes, so they count neither way);
//   - WAL order: a WAL write y acknowledged before a WAL write x was issued precedes x in
//     the WAL, so if x is kept in one of its families, y is kept in each of its own (no
//     holes across families: a family's flush syncs the WALs before its memtable, as
//     RocksDB's does, so one family flushed past a WAL cannot keep what another lost).
// A family may stand past another only as far as no batch breaks and the WAL order holds.
//
// Several writers (CheckOptions::writers) whose writes' sequence numbers are not known (a
// history recorded without them; with them the checker uses R2 in sequence order instead,
// oracle.h): the same rule with each thread's keys as a "family" of the one default family
// ("<thread>/<key>" in the DB itself): each thread's keys are a prefix of its own writes,
// and the WAL order rule gives the prefix across threads in real time (group commit may
// order concurrent writes either way).
//
// Thread safety: none; functions only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "shale/db.h"
#include "tests/crash_states/oracle.h"

namespace shale::crash_states {

std::string FamilyKey(uint32_t id, const std::string& key);
std::string DropMarker(uint32_t id);
// The family part of a history key ("" for a key of a workload without families).
std::string FamilyOf(const std::string& key);

// Releases the handles, then closes and resets *db.
Status CloseFamilies(std::unique_ptr<DB>* db, std::vector<ColumnFamilyHandle*>* handles);

// A DB opened with every family of its MANIFEST (the default alone on a directory that
// holds no DB yet). Closing drops the handles before the DB.
class FamilyDb {
 public:
  ~FamilyDb();
  Status Open(const Options& options, const std::string& dbname);
  Status Close();
  // Every key of every family as history keys (*out), the ids present (*present) and
  // R4 family by family: a Get of each of `keys` that disagrees with the iterator is
  // described in *disagreement.
  Status Read(const std::set<std::string>& keys, std::map<std::string, std::string>* out,
              std::set<std::string>* present, std::string* disagreement);
  DB* db() { return db_.get(); }

 private:
  std::unique_ptr<DB> db_;
  std::vector<ColumnFamilyHandle*> handles_;
};

// R7: "" when some n_f per family satisfies the rule above for the state at `point`,
// otherwise what fails.
std::string MatchFamilies(const History& h, size_t point, size_t hi,
                          const std::map<std::string, std::string>& got,
                          const std::set<std::string>& present);
// For each family present in got: the least n <= hi whose first n writes leave it as got
// holds it, skipping families without one (what a recovery showed of each family: every
// write to it below that n is in what it showed).
std::map<std::string, size_t> FamilyPrefixes(const History& h, size_t hi,
                                             const std::map<std::string, std::string>& got,
                                             const std::set<std::string>& present);

}  // namespace shale::crash_states
