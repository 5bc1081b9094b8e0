// ClosedWals: the WAL files a memtable switch stopped appending to while they still held
// records no Sync had made durable. Syncing such a file at the switch would hold up every
// writer for the time the disk takes to write a memtable's worth of log (tens of
// milliseconds); instead it is synced off the write path:
// - by the flush of its memtable, before the flush starts (in the background, as
//   RocksDB's SyncClosedLogs);
// - by a write with sync=true, before it syncs the current WAL: such a write promises
//   every write before it, and those may lie in a closed WAL whose flush has not run yet.
// Once synced, a file is closed.
//
// Thread safety: every method is thread-safe. SyncAll holds sync_mu_ across its syncs, so
// that a caller returns only once every WAL added before its call is durable, whichever
// thread synced it; Add never waits for a sync (it takes mu_ alone, held for no I/O).
// Lock order: a caller may hold log_mutex_ (a sync=true write does); sync_mu_, then mu_.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "db/log_writer.h"
#include "util/mutexlock.h"

namespace shale {

class ClosedWals {
 public:
  // Takes a WAL no record will be added to any more.
  void Add(std::unique_ptr<log::Writer> wal) {
    MutexLock l(&mu_);
    wals_.push_back(std::move(wal));
  }

  // Syncs (fsync when use_fsync, else fdatasync) and closes every WAL added so far. On an
  // error the WAL that failed and those after it are kept, and the error is returned: a
  // later call tries them again.
  Status SyncAll(bool use_fsync) {
    MutexLock sync_lock(&sync_mu_);
    std::vector<std::unique_ptr<log::Writer>> todo;
    {
      MutexLock l(&mu_);
      todo.swap(wals_);
    }
    Status s;
    size_t done = 0;
    for (; done < todo.size(); done++) {
      s = todo[done]->Sync(use_fsync);
      if (s.ok()) s = todo[done]->Close();
      if (!s.ok()) break;
    }
    if (!s.ok()) {
      MutexLock l(&mu_);
      // Ahead of any added meanwhile: the files stay in the order they were closed.
      wals_.insert(wals_.begin(), std::make_move_iterator(todo.begin() + done),
                   std::make_move_iterator(todo.end()));
    }
    return s;
  }

  // Closes every WAL added so far without syncing it (the DB is closing: its current WAL
  // is not synced either). Returns the first error.
  Status CloseAll() {
    MutexLock sync_lock(&sync_mu_);
    MutexLock l(&mu_);
    Status result;
    for (auto& wal : wals_) {
      Status s = wal->Close();
      if (result.ok()) result = s;
    }
    wals_.clear();
    return result;
  }

 private:
  Mutex sync_mu_;
  Mutex mu_ ACQUIRED_AFTER(sync_mu_);
  std::vector<std::unique_ptr<log::Writer>> wals_ GUARDED_BY(mu_);
};

}  // namespace shale
