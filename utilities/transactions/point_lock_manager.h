// PointLockManager: the key locks of pessimistic transactions. A lock is on one key of one
// column family and held by transaction ids, either by one transaction exclusively or by
// any number of them shared. TransactionDB takes a lock before each write or GetForUpdate
// and releases all of a transaction's locks when it commits or rolls back.
//
// Behaviour (RocksDB's point lock manager):
// - Re-entrant: a holder asking again gets OK at once; a sole shared holder asking for
//   exclusive is upgraded in place. Locks are not counted: one UnLock releases the key
//   however often it was locked (the transaction tracks what it holds).
// - A request that conflicts waits on the key's stripe until the holders unlock, for at
//   most LockRequester::lock_timeout_us: 0 tries once, a negative value waits forever. A
//   request that cannot be granted in time gets TimedOut(kLockTimeout).
// - max_num_locks > 0 caps the number of locked keys per column family (a key held shared
//   by several transactions counts once); a request for a new key at the cap gets
//   LockLimit() (Aborted, kLockLimit, IsLockLimit()) at once, without waiting.
// - A lock whose holders' expiration times have all passed may be taken over: the
//   manager asks Options::try_steal_expired about each other holder, and steals the lock
//   only if every one agrees (the transaction layer marks those transactions so that they
//   can no longer commit).
// - With deadlock_detect, a request about to wait first adds its edges (itself -> the
//   holders) to a wait-for graph and searches it breadth-first from the holders, visiting
//   at most deadlock_detect_depth transactions. Reaching itself is a deadlock; giving up
//   at the depth counts as one too. Either way the request gets Busy(kDeadlock) and the
//   deadlock (its cycle, or limit_exceeded) goes into a ring of the last max_num_deadlocks.
//   Only requests that ask for detection appear in the graph.
//
// Thread safety: every public method may be called from any thread. Each stripe has a
// mutex and a condition variable; a key's lock state is guarded by its stripe's mutex.
// The default family's (id 0) locks are found without any other lock: it is never
// removed. Lock order: lock_maps_mu_ is never held while taking another; a stripe mutex
// may be held while taking wait_mu_; try_steal_expired runs under a stripe mutex, so it
// must not call back into the manager.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "shale/env.h"
#include "shale/slice.h"
#include "shale/status.h"
#include "shale/utilities/lock_info.h"
#include "util/mutexlock.h"
#include "utilities/transactions/deadlock_info_buffer.h"

namespace shale {

// Who asks for a lock, and how long it may wait: what the transaction knows of itself.
struct LockRequester {
  TransactionID id = 0;
  // Microseconds to wait for a conflicting lock: 0 tries once, negative waits forever.
  int64_t lock_timeout_us = 0;
  // When this transaction's locks may be stolen, in Env::NowMicros() time; 0 = never.
  uint64_t expiration_time_us = 0;
  bool deadlock_detect = false;
  int64_t deadlock_detect_depth = 50;
};

class PointLockManager {
 public:
  struct Options {
    // Stripes per column family (TransactionDBOptions::num_stripes); at least 1 is used.
    size_t num_stripes = 16;
    // Locked keys per column family; 0 or negative means no limit.
    int64_t max_num_locks = -1;
    // Deadlocks kept for GetDeadlockInfoBuffer.
    uint32_t max_num_deadlocks = 5;
    // The clock for timeouts and expiration; Env::Default() when null.
    Env* env = nullptr;
    // Asked, under a stripe mutex, whether the expired transaction id gives up its
    // locks; true = it does and will not commit. Null means every expired holder does.
    std::function<bool(TransactionID)> try_steal_expired;
  };

  explicit PointLockManager(Options options);
  PointLockManager(const PointLockManager&) = delete;
  PointLockManager& operator=(const PointLockManager&) = delete;

  // Column families must be added before their keys are locked; a request for an unknown
  // one gets InvalidArgument. Removing one drops its locks from the manager and wakes the
  // requests waiting on its keys, which end with ColumnFamilyDropped (a dropped family's
  // keys can never be written again, so waiting on would only run into the timeout). The
  // default family (id 0), like RocksDB's, cannot be removed: its removal is ignored.
  void AddColumnFamily(uint32_t cf_id) EXCLUDES(lock_maps_mu_);
  void RemoveColumnFamily(uint32_t cf_id) EXCLUDES(lock_maps_mu_);

  // Locks key for txn, waiting as the header describes. OK, TimedOut(kLockTimeout),
  // Busy(kDeadlock), LockLimit(), InvalidArgument (unknown column family) or
  // ColumnFamilyDropped (the family was removed while the request waited).
  Status TryLock(const LockRequester& txn, uint32_t cf_id, const Slice& key, bool exclusive)
      EXCLUDES(lock_maps_mu_);

  // Releases txn's hold on the key(s) and wakes the waiters of their stripes. Keys txn
  // does not hold (never locked, or stolen after it expired) are skipped.
  void UnLock(TransactionID txn, uint32_t cf_id, const Slice& key) EXCLUDES(lock_maps_mu_);
  void UnLock(TransactionID txn, uint32_t cf_id, const std::vector<std::string>& keys)
      EXCLUDES(lock_maps_mu_);
  void UnLock(TransactionID txn, uint32_t cf_id, const std::vector<Slice>& keys)
      EXCLUDES(lock_maps_mu_);

  // Every locked key, by column family. Each stripe is read under its own mutex, so the
  // result is consistent per stripe, not across stripes.
  using LockStatusData = std::unordered_multimap<uint32_t, KeyLockInfo>;
  LockStatusData GetLockStatusData() EXCLUDES(lock_maps_mu_);

  // The recorded deadlocks, newest first; Resize changes how many are kept.
  std::vector<DeadlockPath> GetDeadlockInfoBuffer() { return deadlocks_.PrepareBuffer(); }
  void Resize(uint32_t target_size) { deadlocks_.Resize(target_size); }

 private:
  struct LockInfo {
    bool exclusive;
    std::vector<TransactionID> txn_ids;  // one element when exclusive
    uint64_t expiration_time;            // 0 when some holder never expires
  };

  // Looks keys up by string_view, without building a string.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view k) const;
  };

  struct Stripe {
    Stripe() : cv(&mu) {}
    Mutex mu;
    CondVar cv;  // signalled when a key of this stripe is unlocked
    std::unordered_map<std::string, LockInfo, KeyHash, std::equal_to<>> keys GUARDED_BY(mu);
  };

  // One column family's locks.
  struct LockMap {
    explicit LockMap(size_t num_stripes);
    size_t StripeIndex(const Slice& key) const;
    Stripe* StripeFor(const Slice& key) { return stripes[StripeIndex(key)].get(); }
    // Counts a newly locked key unless that would pass max_num_locks (> 0).
    bool TryCountNewKey(int64_t max_num_locks);

    std::vector<std::unique_ptr<Stripe>> stripes;
    // Locked keys, kept only when max_num_locks > 0. An atomic rather than a mutex:
    // stripes update it concurrently, and compare-and-swap keeps it at or below the cap.
    std::atomic<int64_t> locked_keys{0};
    // Set once by RemoveColumnFamily, before it takes and signals each stripe: a waiter
    // reads it under its stripe's mutex before each wait, so it either sees it or is woken.
    std::atomic<bool> removed{false};
  };

  // The edges of one waiting transaction in the wait-for graph.
  struct WaitEdges {
    std::vector<TransactionID> holders;
    uint32_t cf_id;
    bool exclusive;
    std::string key;
  };

  // The family's locks, or null if unknown; *holder keeps a family other than the
  // default one alive while the caller uses it.
  LockMap* GetLockMap(uint32_t cf_id, std::shared_ptr<LockMap>* holder) EXCLUDES(lock_maps_mu_);
  template <typename Keys>
  void UnLockAll(TransactionID txn, uint32_t cf_id, const Keys& keys) EXCLUDES(lock_maps_mu_);

  // One attempt. TimedOut(kLockTimeout) with *holders = the conflicting holders (never
  // txn itself) and *expire_hint = when they expire (0 = not known to expire), or
  // LockLimit(), or OK.
  Status AcquireLocked(LockMap* map, Stripe* stripe, const LockRequester& txn, const Slice& key,
                       bool exclusive, uint64_t* expire_hint, std::vector<TransactionID>* holders)
      REQUIRES(stripe->mu);
  // True if every holder of lock other than txn has expired and gave its locks up.
  bool IsLockExpired(TransactionID txn, const LockInfo& lock, uint64_t* expire_hint);
  void UnLockKey(TransactionID txn, LockMap* map, Stripe* stripe, const Slice& key)
      REQUIRES(stripe->mu);

  // Adds txn's edges; if that closes a cycle (or the search passes the depth) removes
  // them again, records the deadlock and returns true.
  bool IncrementWaiters(const LockRequester& txn, const std::vector<TransactionID>& holders,
                        uint32_t cf_id, const Slice& key, bool exclusive) EXCLUDES(wait_mu_);
  void DecrementWaiters(TransactionID txn, const std::vector<TransactionID>& holders)
      EXCLUDES(wait_mu_);
  void DecrementWaitersLocked(TransactionID txn, const std::vector<TransactionID>& holders)
      REQUIRES(wait_mu_);

  const size_t num_stripes_;
  const int64_t max_num_locks_;
  Env* const env_;
  const std::function<bool(TransactionID)> try_steal_expired_;

  Mutex lock_maps_mu_;
  std::unordered_map<uint32_t, std::shared_ptr<LockMap>> lock_maps_ GUARDED_BY(lock_maps_mu_);
  // The default family's map once added; lock_maps_ keeps it for the manager's life.
  std::atomic<LockMap*> default_map_{nullptr};

  // The wait-for graph: who waits for whom, and how many wait for each transaction.
  Mutex wait_mu_;
  std::unordered_map<TransactionID, WaitEdges> waiting_ GUARDED_BY(wait_mu_);
  std::unordered_map<TransactionID, int> waited_on_ GUARDED_BY(wait_mu_);

  DeadlockInfoBuffer deadlocks_;
};

}  // namespace shale
