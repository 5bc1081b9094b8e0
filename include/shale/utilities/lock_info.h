// What a TransactionDB reports about its locks: the keys locked now (GetLockStatusData)
// and the deadlocks it detected recently (GetDeadlockInfoBuffer). RocksDB declares these
// structs in transaction_db.h; shale keeps them here so that the lock manager can fill
// them without the TransactionDB header, which includes this one.
//
// Plain values: a caller owns the copies it is handed and may read them from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace shale {

// A transaction's identity, unique within one TransactionDB while it lives.
using TransactionID = uint64_t;

// One locked key: who holds it, and whether exclusively (then ids has one element).
struct KeyLockInfo {
  std::string key;
  std::vector<TransactionID> ids;
  bool exclusive;
};

// One edge of a deadlock cycle: transaction m_txn_id was waiting to lock m_waiting_key in
// column family m_cf_id (exclusively or shared), held by the next entry's transaction.
struct DeadlockInfo {
  TransactionID m_txn_id;
  uint32_t m_cf_id;
  bool m_exclusive;
  std::string m_waiting_key;
};

// A detected deadlock: the cycle in wait order, ending with the transaction that was told
// Busy(kDeadlock). When the search gave up at deadlock_detect_depth, path is empty and
// limit_exceeded is true. deadlock_time is in seconds since the epoch.
struct DeadlockPath {
  std::vector<DeadlockInfo> path;
  bool limit_exceeded;
  int64_t deadlock_time;

  explicit DeadlockPath(std::vector<DeadlockInfo> path_entry, const int64_t& dl_time)
      : path(std::move(path_entry)), limit_exceeded(false), deadlock_time(dl_time) {}
  // An empty path: the default, or a search that exceeded its depth (limit = true).
  explicit DeadlockPath(const int64_t& dl_time = 0, bool limit = false)
      : limit_exceeded(limit), deadlock_time(dl_time) {}

  bool empty() { return path.empty() && !limit_exceeded; }
};

}  // namespace shale
