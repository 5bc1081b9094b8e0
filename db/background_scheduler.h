// BackgroundScheduler: the DB's background threads and the bookkeeping of what runs on
// them. Flushes run on a pool of their own, one at a time (each flush takes the oldest
// immutable memtable, so that L0 files and the WAL numbers the MANIFEST records stay in
// memtable order); compactions run on a second pool of max_compactions threads. Keeping the
// pools apart is the flush-before-compaction priority: a flush never queues behind a long
// compaction, so writers stalled on memtables wake as soon as the flush is done.
//
// It decides nothing about what to flush or compact: the DB asks it whether a job may be
// scheduled, hands it the job, and reports when the job's call returns; it keeps the
// counts that Close, CompactRange and WaitForCompact wait on and the properties report.
//
// Thread safety: every method except the constructor and Stop REQUIRES the DB mutex (the
// counts are the DB's scheduling state). A job runs on a pool thread and takes the DB
// mutex itself; it must end by calling FlushCallDone / CompactionCallDone under it.
#pragma once

#include <functional>
#include <memory>

#include "util/thread_pool.h"

namespace shale {

class BackgroundScheduler {
 public:
  // max_compactions >= 1 compaction threads.
  explicit BackgroundScheduler(int max_compactions);
  // Stops the pools (see Stop).
  ~BackgroundScheduler();
  BackgroundScheduler(const BackgroundScheduler&) = delete;
  BackgroundScheduler& operator=(const BackgroundScheduler&) = delete;

  // ---- Flushes: at most one scheduled at a time.
  bool flush_scheduled() const { return flush_scheduled_; }
  // Schedules job on the flush thread. REQUIRES: !flush_scheduled().
  void ScheduleFlush(std::function<void()> job);
  // The flush job's call is ending (it must not touch the DB after releasing the mutex).
  void FlushCallDone() { flush_scheduled_ = false; }

  // ---- Compactions: at most max_compactions scheduled at a time.
  bool CanScheduleCompaction() const { return compactions_scheduled_ < max_compactions_; }
  // A new limit (SetDBOptions), >= 1: the pool grows at once; when it shrinks, jobs already
  // scheduled finish and no new one starts until fewer than the limit are scheduled.
  void SetMaxCompactions(int max_compactions);
  int compactions_scheduled() const { return compactions_scheduled_; }
  // Schedules job on a compaction thread. REQUIRES: CanScheduleCompaction().
  void ScheduleCompaction(std::function<void()> job);
  void CompactionCallDone() { compactions_scheduled_--; }

  // No job scheduled or running.
  bool Idle() const { return !flush_scheduled_ && compactions_scheduled_ == 0; }

  // Jobs doing I/O right now (the "num-running-flushes/compactions" properties): a job
  // brackets its work with Begin/End.
  void BeginFlush() { running_flushes_++; }
  void EndFlush() { running_flushes_--; }
  void BeginCompaction() { running_compactions_++; }
  void EndCompaction() { running_compactions_--; }
  int running_flushes() const { return running_flushes_; }
  int running_compactions() const { return running_compactions_; }

  // Runs what is still queued and joins the threads; nothing may be scheduled after it.
  // REQUIRES: the DB mutex NOT held (jobs take it), and Idle() was seen under it with no
  // new job scheduled since.
  void Stop();

 private:
  int max_compactions_;
  bool flush_scheduled_ = false;
  int compactions_scheduled_ = 0;
  int running_flushes_ = 0;
  int running_compactions_ = 0;
  std::unique_ptr<ThreadPool> flush_pool_;
  std::unique_ptr<ThreadPool> compaction_pool_;
};

}  // namespace shale
