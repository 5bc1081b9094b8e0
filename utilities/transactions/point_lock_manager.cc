#include "utilities/transactions/point_lock_manager.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "util/hash.h"

namespace shale {

namespace {

// Seconds since the epoch, the unit of DeadlockPath::deadlock_time.
int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

PointLockManager::LockMap::LockMap(size_t num_stripes) {
  stripes.reserve(num_stripes);
  for (size_t i = 0; i < num_stripes; i++) stripes.push_back(std::make_unique<Stripe>());
}

size_t PointLockManager::KeyHash::operator()(std::string_view k) const {
  return static_cast<size_t>(Hash64(k.data(), k.size()));
}

size_t PointLockManager::LockMap::StripeIndex(const Slice& key) const {
  // Another seed than the stripe's own table uses, so that one stripe's keys still spread
  // over that table's buckets.
  return Hash64(key.data(), key.size(), /*seed=*/0x5bd1e995) % stripes.size();
}

bool PointLockManager::LockMap::TryCountNewKey(int64_t max_num_locks) {
  if (max_num_locks <= 0) return true;
  int64_t n = locked_keys.load(std::memory_order_relaxed);
  while (n < max_num_locks) {
    if (locked_keys.compare_exchange_weak(n, n + 1, std::memory_order_relaxed)) return true;
  }
  return false;
}

PointLockManager::PointLockManager(Options options)
    : num_stripes_(std::max<size_t>(1, options.num_stripes)),
      max_num_locks_(options.max_num_locks),
      env_(options.env != nullptr ? options.env : Env::Default()),
      try_steal_expired_(std::move(options.try_steal_expired)),
      deadlocks_(options.max_num_deadlocks) {}

void PointLockManager::AddColumnFamily(uint32_t cf_id) {
  MutexLock l(&lock_maps_mu_);
  if (lock_maps_.count(cf_id) == 0) {
    auto map = std::make_shared<LockMap>(num_stripes_);
    if (cf_id == 0) default_map_.store(map.get(), std::memory_order_release);
    lock_maps_.emplace(cf_id, std::move(map));
  }
}

void PointLockManager::RemoveColumnFamily(uint32_t cf_id) {
  if (cf_id == 0) return;  // the default family stays
  // A request holding the shared_ptr keeps the map alive until it returns.
  std::shared_ptr<LockMap> map;
  {
    MutexLock l(&lock_maps_mu_);
    auto it = lock_maps_.find(cf_id);
    if (it == lock_maps_.end()) return;
    map = std::move(it->second);
    lock_maps_.erase(it);
  }
  map->removed.store(true, std::memory_order_release);
  for (auto& stripe : map->stripes) {
    // Taking the mutex waits out a waiter between its check and its wait.
    { MutexLock l(&stripe->mu); }
    stripe->cv.SignalAll();
  }
}

PointLockManager::LockMap* PointLockManager::GetLockMap(uint32_t cf_id,
                                                        std::shared_ptr<LockMap>* holder) {
  if (cf_id == 0) {
    LockMap* map = default_map_.load(std::memory_order_acquire);
    if (map != nullptr) return map;
  }
  MutexLock l(&lock_maps_mu_);
  auto it = lock_maps_.find(cf_id);
  if (it == lock_maps_.end()) return nullptr;
  *holder = it->second;
  return holder->get();
}

Status PointLockManager::TryLock(const LockRequester& txn, uint32_t cf_id, const Slice& key,
                                 bool exclusive) {
  std::shared_ptr<LockMap> holder;
  LockMap* map = GetLockMap(cf_id, &holder);
  if (map == nullptr) {
    return Status::InvalidArgument("Column family id not found: " + std::to_string(cf_id));
  }
  Stripe* stripe = map->StripeFor(key);
  MutexLock l(&stripe->mu);
  uint64_t expire_hint = 0;
  std::vector<TransactionID> holders;
  Status s = AcquireLocked(map, stripe, txn, key, exclusive, &expire_hint, &holders);
  // Only a conflict waits: a lock limit is answered at once, since an unlock on another
  // stripe would never wake this one. The deadline counts from the first conflict (the
  // uncontended path reads no clock).
  const uint64_t deadline = s.IsTimedOut() && txn.lock_timeout_us > 0
                                ? env_->NowMicros() + static_cast<uint64_t>(txn.lock_timeout_us)
                                : 0;
  while (s.IsTimedOut() && txn.lock_timeout_us != 0) {
    if (map->removed.load(std::memory_order_acquire)) {
      return Status::ColumnFamilyDropped("lock request on a dropped column family");
    }
    const uint64_t now = env_->NowMicros();
    if (deadline != 0 && now >= deadline) break;
    // Wake at the deadline, or earlier when the holders expire, to try stealing the lock.
    uint64_t wake = deadline;
    if (expire_hint != 0 && (wake == 0 || expire_hint < wake)) wake = expire_hint;

    if (txn.deadlock_detect && IncrementWaiters(txn, holders, cf_id, key, exclusive)) {
      return Status::Busy(Status::kDeadlock);
    }
    if (wake == 0) {
      stripe->cv.Wait(&stripe->mu);
    } else if (wake > now) {
      stripe->cv.TimedWaitMicros(&stripe->mu, wake - now);
    }
    if (txn.deadlock_detect) DecrementWaiters(txn.id, holders);

    expire_hint = 0;
    holders.clear();
    s = AcquireLocked(map, stripe, txn, key, exclusive, &expire_hint, &holders);
  }
  return s;
}

Status PointLockManager::AcquireLocked(LockMap* map, Stripe* stripe, const LockRequester& txn,
                                       const Slice& key, bool exclusive, uint64_t* expire_hint,
                                       std::vector<TransactionID>* holders) {
  auto it = stripe->keys.find(key.ToStringView());
  if (it == stripe->keys.end()) {
    if (!map->TryCountNewKey(max_num_locks_)) return Status::LockLimit();
    stripe->keys.emplace(key.ToString(), LockInfo{exclusive, {txn.id}, txn.expiration_time_us});
    return Status::OK();
  }

  LockInfo& lock = it->second;
  if (!lock.exclusive && !exclusive) {
    // Shared with shared: join the holders. The lock expires only when every holder has,
    // so one holder that never expires (0) keeps it from expiring at all.
    if (std::find(lock.txn_ids.begin(), lock.txn_ids.end(), txn.id) == lock.txn_ids.end()) {
      lock.txn_ids.push_back(txn.id);
    }
    if (lock.expiration_time == 0 || txn.expiration_time_us == 0) {
      lock.expiration_time = 0;
    } else {
      lock.expiration_time = std::max(lock.expiration_time, txn.expiration_time_us);
    }
    return Status::OK();
  }

  if (lock.txn_ids.size() == 1 && lock.txn_ids[0] == txn.id) {
    // Our own lock: again, or an upgrade. A shared request keeps an exclusive lock
    // exclusive; giving it up is UnLock's business.
    lock.exclusive = lock.exclusive || exclusive;
    lock.expiration_time = txn.expiration_time_us;
    return Status::OK();
  }

  if (IsLockExpired(txn.id, lock, expire_hint)) {
    // The key stays locked, so the count of locked keys does not change.
    lock = LockInfo{exclusive, {txn.id}, txn.expiration_time_us};
    return Status::OK();
  }

  for (TransactionID id : lock.txn_ids) {
    if (id != txn.id) holders->push_back(id);  // a transaction never waits for itself
  }
  return Status::TimedOut(Status::kLockTimeout);
}

bool PointLockManager::IsLockExpired(TransactionID txn, const LockInfo& lock,
                                     uint64_t* expire_hint) {
  *expire_hint = 0;
  if (lock.expiration_time == 0) return false;
  if (lock.expiration_time > env_->NowMicros()) {
    *expire_hint = lock.expiration_time;
    return false;
  }
  for (TransactionID id : lock.txn_ids) {
    if (id == txn) continue;
    // A holder that refuses (it is committing, say) keeps the lock; no point waking up
    // for its expiration again, so the hint stays 0.
    if (try_steal_expired_ && !try_steal_expired_(id)) return false;
  }
  return true;
}

void PointLockManager::UnLockKey(TransactionID txn, LockMap* map, Stripe* stripe,
                                 const Slice& key) {
  auto it = stripe->keys.find(key.ToStringView());
  if (it == stripe->keys.end()) return;
  std::vector<TransactionID>& ids = it->second.txn_ids;
  auto pos = std::find(ids.begin(), ids.end(), txn);
  if (pos == ids.end()) return;
  *pos = ids.back();
  ids.pop_back();
  if (ids.empty()) {
    stripe->keys.erase(it);
    if (max_num_locks_ > 0) map->locked_keys.fetch_sub(1, std::memory_order_relaxed);
  }
}

void PointLockManager::UnLock(TransactionID txn, uint32_t cf_id, const Slice& key) {
  std::shared_ptr<LockMap> holder;
  LockMap* map = GetLockMap(cf_id, &holder);
  if (map == nullptr) return;  // the column family was removed, and its locks with it
  Stripe* stripe = map->StripeFor(key);
  {
    MutexLock l(&stripe->mu);
    UnLockKey(txn, map, stripe, key);
  }
  stripe->cv.SignalAll();
}

void PointLockManager::UnLock(TransactionID txn, uint32_t cf_id,
                              const std::vector<std::string>& keys) {
  UnLockAll(txn, cf_id, keys);
}

void PointLockManager::UnLock(TransactionID txn, uint32_t cf_id, const std::vector<Slice>& keys) {
  UnLockAll(txn, cf_id, keys);
}

template <typename Keys>
void PointLockManager::UnLockAll(TransactionID txn, uint32_t cf_id, const Keys& keys) {
  if (keys.empty()) return;
  std::shared_ptr<LockMap> holder;
  LockMap* map = GetLockMap(cf_id, &holder);
  if (map == nullptr) return;
  // Sorted by stripe, so that each stripe is locked, and woken, once.
  std::vector<std::pair<size_t, Slice>> by_stripe;
  by_stripe.reserve(keys.size());
  for (const auto& key : keys) by_stripe.emplace_back(map->StripeIndex(key), Slice(key));
  std::sort(by_stripe.begin(), by_stripe.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < by_stripe.size();) {
    Stripe* stripe = map->stripes[by_stripe[i].first].get();
    {
      MutexLock l(&stripe->mu);
      for (const size_t first = by_stripe[i].first;
           i < by_stripe.size() && by_stripe[i].first == first; i++) {
        UnLockKey(txn, map, stripe, by_stripe[i].second);
      }
    }
    stripe->cv.SignalAll();
  }
}

PointLockManager::LockStatusData PointLockManager::GetLockStatusData() {
  std::vector<std::pair<uint32_t, std::shared_ptr<LockMap>>> maps;
  {
    MutexLock l(&lock_maps_mu_);
    maps.assign(lock_maps_.begin(), lock_maps_.end());
  }
  LockStatusData data;
  for (auto& [cf_id, map] : maps) {
    for (auto& stripe : map->stripes) {
      MutexLock l(&stripe->mu);
      for (const auto& [key, lock] : stripe->keys) {
        data.emplace(cf_id, KeyLockInfo{key, lock.txn_ids, lock.exclusive});
      }
    }
  }
  return data;
}

bool PointLockManager::IncrementWaiters(const LockRequester& txn,
                                        const std::vector<TransactionID>& holders, uint32_t cf_id,
                                        const Slice& key, bool exclusive) {
  MutexLock l(&wait_mu_);
  waiting_[txn.id] = WaitEdges{holders, cf_id, exclusive, key.ToString()};
  for (TransactionID h : holders) waited_on_[h]++;
  // Only a transaction somebody waits for can close a cycle.
  if (waited_on_.count(txn.id) == 0) return false;

  // Breadth-first from the holders. The queue keeps every visited transaction with the
  // index of the one that led to it, so that a cycle can be read back. At most depth
  // transactions are queued or examined, as RocksDB bounds its search.
  struct Visit {
    TransactionID id;
    int parent;
  };
  const size_t depth =
      txn.deadlock_detect_depth > 0 ? static_cast<size_t>(txn.deadlock_detect_depth) : 0;
  std::vector<Visit> queue;
  for (TransactionID h : holders) {
    if (queue.size() < depth) queue.push_back({h, -1});
  }
  for (size_t head = 0; head < depth; head++) {
    if (head == queue.size()) return false;  // searched everything: no cycle
    const Visit v = queue[head];
    if (v.id == txn.id) {
      // The chain back from here is the cycle, last edge first.
      std::vector<DeadlockInfo> path;
      for (int i = static_cast<int>(head); i != -1; i = queue[i].parent) {
        const WaitEdges& e = waiting_.at(queue[i].id);
        path.push_back({queue[i].id, e.cf_id, e.exclusive, e.key});
      }
      std::reverse(path.begin(), path.end());
      deadlocks_.AddNewPath(DeadlockPath(std::move(path), NowSeconds()));
      DecrementWaitersLocked(txn.id, holders);
      return true;
    }
    auto w = waiting_.find(v.id);
    if (w == waiting_.end()) continue;  // v runs: this branch ends
    for (TransactionID next : w->second.holders) {
      if (queue.size() < depth) queue.push_back({next, static_cast<int>(head)});
    }
  }
  // The wait chain is longer than the depth: assume the worst, as RocksDB does.
  deadlocks_.AddNewPath(DeadlockPath(NowSeconds(), true));
  DecrementWaitersLocked(txn.id, holders);
  return true;
}

void PointLockManager::DecrementWaiters(TransactionID txn,
                                        const std::vector<TransactionID>& holders) {
  MutexLock l(&wait_mu_);
  DecrementWaitersLocked(txn, holders);
}

void PointLockManager::DecrementWaitersLocked(TransactionID txn,
                                              const std::vector<TransactionID>& holders) {
  waiting_.erase(txn);
  for (TransactionID h : holders) {
    auto it = waited_on_.find(h);
    if (it != waited_on_.end() && --it->second == 0) waited_on_.erase(it);
  }
}

}  // namespace shale
