// db_stress's expected-state oracle: the latest value of every key, in a memory-mapped file
// that survives a SIGKILL of the process (the pages belong to the kernel's page cache), and
// the per-key locks that keep the oracle and the DB in step.
//
// Each key has two 32-bit words. `committed` is the value the DB must hold; `pending`, when
// non-zero, is a write issued to the DB but not yet known to have finished: after a crash
// the DB may hold either. A writer, holding the key's lock, stores pending, writes the DB,
// then stores committed and clears pending. A reader holding the lock sees exactly what the
// DB must return.
//
// A value word: 0 means absent (never written, or deleted). Otherwise bit 31 is set,
// bit 30 says the value is "bare" (exactly the 8 bytes of Fixed64(base), what the
// uint64add merge operator produces) and bits 0..28 are the base. A non-bare value is
// Fixed64(base) followed by 1..N filler bytes derived from the key and the base (never
// 8 bytes long, so uint64add reads it as 0).
//
// Keys whose index is a multiple of kSingleDeleteStride are "single-delete keys": only
// ever Put while absent and SingleDeleted while present, so SingleDelete's contract (at
// most one Put since the last deletion, no Delete, no Merge) always holds for them.
//
// Runs without the WAL (--disable_wal) lose their unflushed writes in a crash, so the
// latest value is not what a restarted DB must hold; what it must hold is a prefix of the
// history: every write up to some sequence number, none after it, across all keys. For
// them the file also keeps a write log: every acknowledged write as (key, word, the
// sequence number the write got), appended in each key's order but not in sequence order
// across keys (writers of different keys race; the checker sorts), and a durable
// sequence, at or below which every write is durable (a Flush that then succeeded started
// after it was published). After a crash the DB must equal the base with the log's writes
// replayed in sequence order up to some cut, a cut that includes every durable write and
// no write above the sequence the DB recovered (db_stress_prefix.h). `prefix_mode`
// records that the last writer ran without the WAL, so the next start verifies by this
// rule. The log is emptied (folded into base, which holds only durable values) at each
// start, at the end of a run before its clean Close, and when it fills, after a Flush.
//
// Transactions (--use_txn, --use_optimistic_txn) write several keys at once: after a
// crash each key may hold its pending word or its committed one, but a transaction's keys
// must all hold the one or all the other, never half of it. Each worker therefore records
// its transaction in flight (its keys, what they held before and after, whether it meant
// to commit or roll back, and whether it reached Prepare) in a slot of the file before
// the transaction's first write reaches the DB, and clears it after the oracle took the
// outcome. A restart resolves the prepared transactions the DB gives back against these
// records and then checks each recorded transaction all-or-nothing (db_stress_txn.h).
//
// Thread safety: Slot words may be read and written from any thread holding the key's
// lock (KeyLocks); Open/Close from one thread while no worker runs. AppendLog from any
// thread; AdvanceDurable from any thread; the log readers and ResetLog only while no thread
// appends (db_stress serializes them with a reader-writer lock).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shale/status.h"
#include "util/mutexlock.h"

namespace shale::stress {

inline constexpr uint32_t kExists = 1u << 31;
inline constexpr uint32_t kBare = 1u << 30;
inline constexpr uint32_t kBaseMask = (1u << 29) - 1;
inline constexpr uint32_t kSingleDeleteStride = 8;

inline bool IsSingleDeleteKey(uint64_t key) { return key % kSingleDeleteStride == 0; }

// The key's bytes: fixed-width decimal, so byte order is numeric order.
std::string KeyString(uint64_t key);
// The value bytes a value word stands for (REQUIRES: word != 0).
std::string ValueString(uint64_t key, uint32_t word, uint32_t max_value_size);
// The word for a value read from the DB, if it is one this tool could have written for
// the key; 0 (with *ok false) when it is not.
uint32_t ParseValue(uint64_t key, const std::string& value, uint32_t max_value_size, bool* ok);
// The word uint64add leaves after merging operand d into `word`; 0 when the sum would
// not fit in a base (the caller writes something else then).
uint32_t MergeResult(uint32_t word, uint32_t d);
// "absent" or "base 123 (bare)" for messages.
std::string Describe(uint32_t word);

// One key of a transaction in flight: what it held before and what the transaction writes.
struct TxnKey {
  uint64_t key = 0;
  uint32_t before = 0;
  uint32_t word = 0;
};

// A worker's transaction in flight, as recorded in the expected state.
struct TxnRecord {
  enum Intent : uint32_t { kNone = 0, kCommit = 1, kRollback = 2 };
  Intent intent = kNone;
  bool prepared = false;  // Prepare was called (it may or may not have reached the WAL)
  uint32_t serial = 0;    // names the transaction (TxnName in db_stress_txn.h)
  std::vector<TxnKey> keys;
};

class ExpectedState {
 public:
  // Workers that may record transactions, and keys per transaction.
  static constexpr int kTxnSlots = 64;
  static constexpr size_t kTxnKeys = 16;

  ~ExpectedState();
  // Maps <dir>/shale_stress.expected for max_key keys in `families` column families
  // (db_stress's oracle keys over all families, see Context), creating it (all absent) if
  // it does not exist or `fresh`. An existing file made for another max_key or number of
  // families is an error. The number of families is a header word that files from before
  // families have as 0, which means one: such a file opens with families == 1.
  static Status Open(const std::string& dir, uint64_t max_key, uint32_t families, bool fresh,
                     std::unique_ptr<ExpectedState>* out);

  uint64_t max_key() const { return max_key_; }
  uint32_t committed(uint64_t key) const { return Load(&slots_[2 * key]); }
  uint32_t pending(uint64_t key) const { return Load(&slots_[2 * key + 1]); }
  // Before the DB write: word may now be in the DB.
  void SetPending(uint64_t key, uint32_t word) { Store(&slots_[2 * key + 1], word | kPendingBit); }
  // After an acknowledged DB write, or after verification resolved what the DB holds.
  void Commit(uint64_t key, uint32_t word) {
    Store(&slots_[2 * key], word);
    Store(&slots_[2 * key + 1], 0);
  }
  // The pending word without its marker; valid when pending(key) != 0.
  static uint32_t PendingWord(uint32_t pending) { return pending & ~kPendingBit; }

  // ---- The write log of disable_wal runs (see the top of this file). ----
  static constexpr uint32_t kLogCapacity = 1u << 20;
  bool prefix_mode() const { return Load(&header_[kPrefixMode]) != 0; }
  void SetPrefixMode(bool on) { Store(&header_[kPrefixMode], on ? 1 : 0); }
  uint32_t base(uint64_t key) const { return Load(&base_[key]); }
  void SetBase(uint64_t key, uint32_t word) { Store(&base_[key], word); }
  // Entries reserved so far (some may be torn by a crash); at most kLogCapacity count.
  uint32_t log_count() const { return std::min(Load(&header_[kLogCount]), kLogCapacity); }
  // Every write whose sequence is at or below this one is durable.
  uint64_t durable_seq() const;
  // Records an acknowledged write and its sequence; false when the log is full.
  bool AppendLog(uint64_t key, uint32_t word, uint64_t seq);
  // Every write at or below seq is durable now (the durable sequence only rises).
  void AdvanceDurable(uint64_t seq);
  // Entry pos (< log_count()); false for one a crash left half written.
  bool ReadLog(uint32_t pos, uint64_t* key, uint32_t* word, uint64_t* seq) const;
  // Empties the log. The caller has made base() hold what it folds in first, so a crash
  // at any point leaves a log and base that accept the same DB states.
  void ResetLog();

  // ---- Transactions in flight (see the top of this file); slot < kTxnSlots. ----
  // Records the transaction before any of its writes can reach the DB (REQUIRES:
  // keys.size() <= kTxnKeys, intent != kNone). The intent word is written last, so a kill
  // inside leaves an empty slot, which is right: nothing of the transaction was written.
  void BeginTxn(int slot, TxnRecord::Intent intent, uint32_t serial,
                const std::vector<TxnKey>& keys);
  // Before Prepare: the DB may give the transaction back prepared after a crash.
  void MarkPrepared(int slot);
  // After the oracle took the outcome (the keys' committed words are set).
  void EndTxn(int slot);
  // The slot's transaction; false when the slot is empty.
  bool ReadTxn(int slot, TxnRecord* rec) const;

 private:
  // Marks a pending word as present even when the word itself is 0 (a pending delete).
  // Bit 29 is free: bases stay below 2^29 (kBaseMask).
  static constexpr uint32_t kPendingBit = 1u << 29;
  ExpectedState() = default;
  static uint32_t Load(const uint32_t* p);
  static void Store(uint32_t* p, uint32_t v);
  uint32_t EntryCheck(uint32_t pos, uint32_t key, uint32_t word, uint64_t seq) const;

  // Header words after the magic and max_key. The durable sequence is one 64-bit word at
  // an 8-byte aligned offset (words 8 and 9), so it can be advanced atomically.
  // A transaction record: intent, prepared, serial, key count, then (key, before, word).
  static constexpr size_t kTxnWords = 4 + 3 * kTxnKeys;
  static constexpr int kPrefixMode = 4, kLogCount = 5, kLogGeneration = 6, kFamilies = 7,
                       kDurable = 8;

  int fd_ = -1;
  size_t bytes_ = 0;
  uint64_t max_key_ = 0;
  uint32_t* header_ = nullptr;
  uint32_t* slots_ = nullptr;  // 2 * max_key_ words after the header
  uint32_t* base_ = nullptr;   // max_key_ words after the slots
  uint32_t* log_ = nullptr;    // kLogCapacity entries of 5 words (key, word, seq, check)
  uint32_t* txns_ = nullptr;   // kTxnSlots records of kTxnWords words
  void* map_ = nullptr;
};

// Striped per-key locks: key k uses lock k >> log2_keys_per_lock, so a run of consecutive
// keys shares few locks. Sets of locks are always taken in ascending order.
class KeyLocks {
 public:
  KeyLocks(uint64_t max_key, int log2_keys_per_lock);
  Mutex* For(uint64_t key) { return &locks_[key >> shift_]; }

  // Locks held together, unlocked when it dies. The set depends on the keys at run time,
  // which the thread-safety analysis cannot follow: it is unchecked.
  class Set {
   public:
    Set() = default;
    Set(Set&& other) noexcept : held_(std::move(other.held_)) { other.held_.clear(); }
    Set(const Set&) = delete;
    Set& operator=(const Set&) = delete;
    ~Set() NO_THREAD_SAFETY_ANALYSIS {
      for (Mutex* mu : held_) mu->Unlock();
    }
    void Add(Mutex* mu) NO_THREAD_SAFETY_ANALYSIS {
      mu->Lock();
      held_.push_back(mu);
    }

   private:
    std::vector<Mutex*> held_;
  };
  // Locks every key in [first, last] (inclusive), in order.
  Set LockRange(uint64_t first, uint64_t last);
  // Locks the given keys (any order, duplicates allowed).
  Set LockKeys(std::vector<uint64_t> keys);

 private:
  const int shift_;
  std::vector<Mutex> locks_;
};

}  // namespace shale::stress
