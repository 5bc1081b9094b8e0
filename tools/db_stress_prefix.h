// The prefix rule of db_stress runs without the WAL: after a crash, the DB must hold the
// writes of the expected state's write log (db_stress_state.h) replayed in sequence order
// up to one cut, across all keys. A cut keeps every write at or below some sequence number
// and drops every write above it (so the keys a DeleteRange logged at its one sequence go
// together). Which cut is acceptable:
//
//   - it keeps every durable write (those at or below ExpectedState::durable_seq());
//   - it keeps no write above the sequence the DB recovered (DB::GetLatestSequenceNumber
//     after the open): the DB never recovers data it says it has not got;
//   - strict: it is the cut at the recovered sequence itself, every write at or below it
//     kept. RocksDB's crash test demands this since RocksDB records in the MANIFEST the
//     largest sequence its files hold. shale records the sequence published when a flush
//     is installed, which counts writes that went to the next memtable and are lost in a
//     crash, so the strict rule fails on it (docs/reliability.md); db_stress checks it only
//     with --strict_recovered_seq.
//
// A write that was in flight at the crash (its key's pending word, with no log entry) may
// be present or absent; its sequence is unknown but above every logged write of its key.
// A key holding a value that no cut gives it is a hole (a write lost while a later one, of
// it or of another key, survived) or a value never written.
//
// How: for each key, the cuts at which the DB's value for it is the replayed one form a
// union of disjoint ranges of the sorted log; a counter over the cuts adds each range, and
// a cut is consistent when every key with logged writes counts it. O(log + keys).
//
// Thread safety: none; built and used by one thread while no worker runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/db_stress_state.h"

namespace shale::stress {

class PrefixCheck {
 public:
  // Reads the log of `state` (counting torn entries) and sorts it by sequence.
  explicit PrefixCheck(const ExpectedState& state);

  // Whether `held` (what the DB holds, one word per key) is the replay of the log up to an
  // acceptable cut, given the sequence the DB recovered. On success, cut_seq() and
  // lost_at_or_below_recovered() describe the cut chosen (the newest acceptable one); on
  // failure *why says what is wrong, naming keys and sequences.
  bool Check(const std::vector<uint32_t>& held, uint64_t recovered, bool strict, std::string* why);

  // For --test_inject_hole: a key and an older word of it that, held instead of what
  // `held` has, leave no acceptable cut though every other key keeps its value. Found
  // among the writes above the durable sequence that the cut Check chose keeps, newest
  // first, so that a later write of another key survives the one taken away, and the
  // older word is one the key held after the durable sequence (the old rule per key
  // accepted it). False when there is none (or Check fails).
  bool FindHole(std::vector<uint32_t> held, uint64_t recovered, uint64_t* key,
                uint32_t* older_word);

  size_t writes() const { return writes_.size(); }
  uint32_t torn() const { return torn_; }
  // The sequence of the newest write the chosen cut keeps (0 when it keeps none).
  uint64_t cut_seq() const { return cut_ == 0 ? 0 : writes_[cut_ - 1].seq; }
  // Logged writes at or below the recovered sequence that the chosen cut drops.
  size_t lost_at_or_below_recovered() const { return at_or_below_recovered_ - cut_; }

 private:
  struct Write {
    uint64_t key;
    uint32_t word;
    uint64_t seq;
  };
  // What key holds at cut i (the first i writes of writes_ kept).
  uint32_t ValueAt(uint64_t key, size_t i) const;
  // Names the first few keys whose value differs from the replay at cut i.
  std::string Differences(const std::vector<uint32_t>& held, size_t i) const;

  const ExpectedState& state_;
  std::vector<Write> writes_;     // by sequence
  std::vector<uint32_t> first_;   // key k's writes are by_key_[first_[k] .. first_[k+1])
  std::vector<uint32_t> by_key_;  // indices into writes_, ascending
  std::string order_error_;       // a key whose log order is not its sequence order
  uint32_t torn_ = 0;
  size_t cut_ = 0;
  size_t at_or_below_recovered_ = 0;
};

}  // namespace shale::stress
