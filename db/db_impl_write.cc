// DBImpl's side of the write path: the public writes, which enter the write pipeline
// (db/write_pipeline.h) as a user's write or, through DBForTransactions, as a
// transaction's; the pipeline's Host (room in the memtable, the background error); and
// the memtables themselves: making room, stalls, and switching the memtable and its WAL.
#include <algorithm>

#include "db/db_impl.h"
#include "db/filename.h"
#include "util/statistics.h"

namespace shale {

// ---- The public writes: each builds a batch and goes through WriteImpl.

Status DBImpl::Put(const WriteOptions& o, ColumnFamilyHandle* cf, const Slice& key,
                   const Slice& value) {
  WriteBatch batch(key.size() + value.size() + 24);
  Status s = batch.Put(cf, key, value);
  if (!s.ok()) return s;
  return WriteImpl(o, &batch);
}

Status DBImpl::Delete(const WriteOptions& o, ColumnFamilyHandle* cf, const Slice& key) {
  WriteBatch batch(key.size() + 24);
  Status s = batch.Delete(cf, key);
  if (!s.ok()) return s;
  return WriteImpl(o, &batch);
}

Status DBImpl::SingleDelete(const WriteOptions& o, ColumnFamilyHandle* cf, const Slice& key) {
  WriteBatch batch(key.size() + 24);
  Status s = batch.SingleDelete(cf, key);
  if (!s.ok()) return s;
  return WriteImpl(o, &batch);
}

// For every DB, as RocksDB's: a batch of the one range deletion, through Write (which a
// stacked DB may override).
Status DB::DeleteRange(const WriteOptions& o, ColumnFamilyHandle* cf, const Slice& begin_key,
                       const Slice& end_key) {
  WriteBatch batch(begin_key.size() + end_key.size() + 24);
  Status s = batch.DeleteRange(cf, begin_key, end_key);
  if (!s.ok()) return s;
  return Write(o, &batch);
}

Status DBImpl::Merge(const WriteOptions& o, ColumnFamilyHandle* cf, const Slice& key,
                     const Slice& value) {
  if (!IsOwnFamily(cf)) return Status::InvalidArgument("column family is not this DB's");
  if (CfdOf(cf)->options().merge_operator == nullptr) {
    return Status::NotSupported("Provide a merge_operator when opening DB");
  }
  WriteBatch batch(key.size() + value.size() + 24);
  Status s = batch.Merge(cf, key, value);
  if (!s.ok()) return s;
  return WriteImpl(o, &batch);
}

Status DBImpl::Write(const WriteOptions& o, WriteBatch* updates) {
  return WriteImpl(o, updates);  // a null batch: InvalidArgument (WritePipeline::Classify)
}

Status DBImpl::WriteImpl(const WriteOptions& o, WriteBatch* batch, bool disable_memtable) {
  TxnWrite t;
  t.wal_only = disable_memtable;
  return pipeline_->Write(o, batch, t, WritePipeline::Origin::kUser);
}

Status DBImpl::WriteTxn(const WriteOptions& o, WriteBatch* batch, const TxnWrite& t) {
  return pipeline_->Write(o, batch, t, WritePipeline::Origin::kTransaction);
}

Status DBImpl::WriteNumberOnly(PreReleaseCallback* pre_release) {
  return pipeline_->WriteNumberOnly(pre_release);
}

// ---- WritePipeline::Host.

bool DBImpl::MayNeedRoom() {
  return has_bg_error_.load(std::memory_order_acquire) ||
         shutting_down_.load(std::memory_order_relaxed) ||
         StallStateWithoutMutex() != WriteController::State::kNormal ||
         default_cf_->mem_for_wal_leader()->ShouldFlush() || families_.AnyOtherShouldFlush() ||
         (write_buffer_manager_ != nullptr && OverMemoryBudget());
}

bool DBImpl::OverMemoryBudget() {
  default_cf_->mem_for_wal_leader()->UpdateCharge();
  families_.UpdateCharges();
  return write_buffer_manager_->ShouldFlush() || AtMemoryBudget();
}

size_t DBImpl::MemtableBlockCap(size_t budget) {
  return std::max<size_t>(Arena::kMinBlockSize, budget / 64);
}

bool DBImpl::AtMemoryBudget() {
  const size_t budget = write_buffer_manager_->buffer_size();
  // A write may add a block to its memtable, and a switch a new memtable's first two.
  return budget > 0 &&
         write_buffer_manager_->memory_usage() + 2 * MemtableBlockCap(budget) >= budget;
}

Status DBImpl::MakeRoomForWrite(uint64_t write_bytes, bool no_slowdown) {
  DbLock l(this);
  return MakeRoomForWrite(/*force=*/nullptr, write_bytes, no_slowdown);
}

MemTable* DBImpl::ActiveMemtable() { return default_cf_->mem_for_wal_leader(); }

ColumnFamilyMemTables* DBImpl::FamilyMemtables() { return &families_; }

void DBImpl::SetBackgroundError(const Status& s) {
  DbLock l(this);
  RecordBackgroundError(s);
}

Status DBImpl::BackgroundError() {
  DbLock l(this);
  return bg_error_;
}

bool DBImpl::HasBackgroundError() { return has_bg_error_.load(std::memory_order_acquire); }

// ---- The memtables.

Status DBImpl::SwitchMemtablesForFlush(const std::vector<ColumnFamilyData*>& cfds) {
  // Switching needs the WAL queue to itself.
  return pipeline_->WithQueueAlone([this, &cfds] {
    DbLock l(this);
    return MakeRoomForWrite(&cfds, 0, /*no_slowdown=*/false);
  });
}

Status DBImpl::MakeRoomForWrite(const std::vector<ColumnFamilyData*>* force, uint64_t write_bytes,
                                bool no_slowdown) {
  bool delayed = false;  // a write is slowed at most once
  while (true) {
    if (!bg_error_.ok()) return bg_error_;
    if (shutting_down_ && !force) return Status::ShutdownInProgress();
    const auto state = write_controller_.state();
    if (!force && state == WriteController::State::kDelayed && !delayed) {
      if (no_slowdown) return Status::Incomplete("Write stall");
      delayed = true;
      const uint64_t delay = write_controller_.GetDelay(env_->NowMicros(), write_bytes);
      if (delay > 0) {
        // The leader sleeps without the mutex; its group waits behind it, which is the
        // point of a slowdown.
        UnlockDb();
        env_->SleepForMicroseconds(static_cast<int>(std::min<uint64_t>(delay, 1000000)));
        LockDb();
        write_controller_.AddStallMicros(write_controller_.cause(), false, delay);
        RecordTick(stats_, STALL_MICROS, delay);
        RecordTimeToHistogram(stats_, WRITE_STALL, delay);
      }
      continue;
    }
    if (!force && state == WriteController::State::kStopped) {
      if (no_slowdown) return Status::Incomplete("Write stall");
      const uint64_t start = env_->NowMicros();
      MaybeScheduleFlush();
      MaybeScheduleCompaction();
      bg_cv_.Wait(&mutex_);
      const uint64_t stalled = env_->NowMicros() - start;
      write_controller_.AddStallMicros(write_controller_.cause(), true, stalled);
      RecordTick(stats_, STALL_MICROS, stalled);
      RecordTimeToHistogram(stats_, WRITE_STALL, stalled);
      continue;
    }
    // The families whose memtable is switched: those a flush names, else the full ones.
    std::vector<ColumnFamilyData*> full;
    if (force != nullptr) {
      for (ColumnFamilyData* cfd : *force) {
        HeldFor(cfd);
        if (!cfd->dropped() && !cfd->mem()->IsEmpty()) full.push_back(cfd);
      }
    } else {
      // Over the memory budget of all families: the largest memtable goes too.
      ColumnFamilyData* largest = nullptr;
      size_t largest_size = 0;
      const bool over_budget =
          write_buffer_manager_ != nullptr && write_buffer_manager_->ShouldFlush();
      for (const auto& [id, cfd] : families_.live()) {
        HeldFor(cfd);
        if (cfd->mem()->ShouldFlush()) {
          full.push_back(cfd);
        } else if (over_budget && !cfd->mem()->IsEmpty() &&
                   cfd->mem()->ApproximateMemoryUsage() > largest_size) {
          largest = cfd;
          largest_size = cfd->mem()->ApproximateMemoryUsage();
        }
      }
      if (largest != nullptr && full.empty()) full.push_back(largest);
      if (options_.atomic_flush && !full.empty()) {
        // Every family with unflushed data switches with them, so that one flush records
        // them all as of the same write (see FlushImmutables).
        full.clear();
        for (const auto& [id, cfd] : families_.live()) {
          HeldFor(cfd);
          if (!cfd->mem()->IsEmpty()) full.push_back(cfd);
        }
      }
    }
    // At the memory budget (within two arena blocks of it) with flushes of this DB pending,
    // switching more memtables frees nothing and writing on goes past it: wait for the
    // flushes to bring it down. With allow_stall, wait as well when nothing here is to
    // switch (the memory may be another DB's, sharing the budget).
    const bool wait_for_budget = force == nullptr && write_buffer_manager_ != nullptr &&
                                 ((AtMemoryBudget() && AnyFlushPending()) ||
                                  (write_buffer_manager_->ShouldStall() && full.empty()));
    if (full.empty() || wait_for_budget) {
      if (!wait_for_budget) return Status::OK();
      if (no_slowdown) return Status::Incomplete("Write stall");
      const uint64_t start = env_->NowMicros();
      MaybeScheduleFlush();
      bg_cv_.TimedWaitMicros(&mutex_, 1000);
      const uint64_t stalled = env_->NowMicros() - start;
      write_controller_.AddStallMicros(WriteController::kMemtableLimit, true, stalled);
      RecordTick(stats_, STALL_MICROS, stalled);
      RecordTimeToHistogram(stats_, WRITE_STALL, stalled);
      continue;
    }
    const bool all_full = std::any_of(full.begin(), full.end(), [this](ColumnFamilyData* cfd) {
      AssertDbMutexHeld();
      HeldFor(cfd);
      return static_cast<int>(cfd->imm().size()) >=
             cfd->current_options()->max_write_buffer_number - 1;
    });
    if (all_full) {
      // Every memtable of a family is full: wait for a flush (a write stop).
      if (no_slowdown && force == nullptr) return Status::Incomplete("Write stall");
      const uint64_t start = env_->NowMicros();
      MaybeScheduleFlush();
      bg_cv_.Wait(&mutex_);
      const uint64_t stalled = env_->NowMicros() - start;
      write_controller_.AddStallMicros(WriteController::kMemtableLimit, true, stalled);
      RecordTick(stats_, STALL_MICROS, stalled);
      RecordTimeToHistogram(stats_, WRITE_STALL, stalled);
      RecordInHistogram(stats_, STALL_MEMTABLE_COMPACTION_COUNT, 1);
      continue;
    }
    // Inserts of earlier groups (pipelined) or of unordered writers may still go to the
    // active memtable: it becomes immutable, and may be flushed, only once they are in.
    // The wait needs no DB mutex, and as WAL leader this thread keeps new ones out.
    UnlockDb();
    pipeline_->WaitForMemtableWriters();
    LockDb();
    if (!bg_error_.ok()) return bg_error_;
    Status s = SwitchMemtable(full);
    if (!s.ok()) return s;
    MaybeScheduleFlush();
    return Status::OK();
  }
}

bool DBImpl::AnyFlushPending() {
  for (const auto& [id, cfd] : families_.live()) {
    HeldFor(cfd);
    if (!cfd->imm().empty()) return true;
  }
  return false;
}

void DBImpl::RecalculateWriteStallConditions() {
  // Writes share one queue: the family whose tree asks most decides for all, as in RocksDB.
  WriteController::Condition worst;
  for (const auto& [id, cfd] : families_.live()) {
    HeldFor(cfd);
    worst = WriteController::Worse(
        worst, WriteController::Assess(*cfd->current_options(), versions_->current(id)->NumFiles(0),
                                       EstimatePendingCompactionBytes(cfd)));
  }
  if (write_controller_.Apply(worst)) bg_cv_.SignalAll();  // stopped writers re-check
}

MemTable* DBImpl::NewMemTable(ColumnFamilyData* cfd) {
  HeldFor(cfd);
  // A memtable filter costs each write a cache line and spares each Get of a key the
  // memtable lacks a skip-list search of some twenty. The memtable being replaced tells
  // whether Gets are coming: a filter if they reached it at least once per
  // kEntriesPerGetForFilter entries, so a DB only written to drops it from its second
  // memtable on. With no memtable before (at open), one: a reader of a freshly opened DB
  // may never fill the first memtable, and a writer pays for one memtable only.
  const MemTable* old = cfd->mem();
  const bool with_filter =
      old == nullptr ||
      old->SampledGets() * MemTable::kGetSample * kEntriesPerGetForFilter >= old->num_entries();
  const Options& o = *cfd->current_options();
  size_t block_size = o.arena_block_size;
  size_t filter_for = 0;
  if (write_buffer_manager_ != nullptr && write_buffer_manager_->enabled()) {
    // Under a budget shared by many memtables, a memtable's first arena blocks (two, each
    // write_buffer_size / 8 by default) must stay a small part of it, a 64th at most, and
    // its filter is sized for what the budget lets it hold.
    const size_t budget = write_buffer_manager_->buffer_size();
    const size_t cap = MemtableBlockCap(budget);
    block_size = std::min(Arena::BlockSizeFor(o.arena_block_size, o.write_buffer_size), cap);
    filter_for = std::min<size_t>(o.write_buffer_size, budget / 2);
  }
  auto* mem = new MemTable(cfd->internal_comparator(), o.write_buffer_size, block_size,
                           o.memtable_huge_page_size, memtable_blocks_, with_filter, filter_for);
  if (write_buffer_manager_ != nullptr) mem->ChargeTo(write_buffer_manager_);
  return mem;
}

Status DBImpl::SwitchMemtable(const std::vector<ColumnFamilyData*>& full) {
  // Creating the new WAL file is I/O under the mutex; it happens once per memtable.
  const uint64_t new_log_number = versions_->NewFileNumber();
  std::unique_ptr<WritableFile> file;
  Status s = env_->NewWritableFile(LogFileName(dbname_, new_log_number), &file,
                                   log::WalFileOptions(options_));
  if (s.ok() && db_dir_ != nullptr) {
    // The new WAL's directory entry must be durable before a synced write relies on it.
    s = db_dir_->Fsync();
  }
  if (!s.ok()) {
    RecordBackgroundError(s);
    return s;
  }
  // The pipeline's locks are never taken under the DB mutex: the switch runs without it.
  // As the WAL leader, this thread keeps the main queue's writers out meanwhile.
  UnlockDb();
  Status close = pipeline_->SwitchWal(std::move(file), new_log_number);
  LockDb();
  if (!close.ok()) {
    RecordBackgroundError(close);
    return close;
  }
  logfile_number_ = new_log_number;
  // The WAL leader switches with every earlier write allocated and inserted.
  const SequenceNumber next_seq = pipeline_->LastAllocated() + 1;
  for (ColumnFamilyData* cfd : full) {
    HeldFor(cfd);
    cfd->mem()->MarkImmutableCharge();
    // The sizes in effect now: a SetOptions since the last switch applies from here.
    MemTable* mem = NewMemTable(cfd);
    mem->SetLogNumber(new_log_number);
    mem->SetEarliestSequence(next_seq);
    cfd->SwitchMemtable(mem);
    cfd->TrimHistory(cfd->current_options()->write_buffer_size);
    InstallNewSuperVersion(cfd);
  }
  // A family with nothing unflushed needs no older WAL: its empty memtable starts at the
  // new one, so that the older WALs can go once the families with data have flushed.
  for (const auto& [id, cfd] : families_.live()) {
    HeldFor(cfd);
    if (cfd->NothingUnflushed()) {
      cfd->mem()->SetLogNumber(new_log_number);
      cfd->mem()->SetEarliestSequence(next_seq);
    }
  }
  return Status::OK();
}

}  // namespace shale
