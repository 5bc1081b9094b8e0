#include "db/background_scheduler.h"

#include <cassert>
#include <utility>

namespace shale {

BackgroundScheduler::BackgroundScheduler(int max_compactions)
    : max_compactions_(max_compactions),
      flush_pool_(std::make_unique<ThreadPool>(1, "shale:flush")),
      compaction_pool_(std::make_unique<ThreadPool>(max_compactions, "shale:compact")) {}

BackgroundScheduler::~BackgroundScheduler() { Stop(); }

void BackgroundScheduler::ScheduleFlush(std::function<void()> job) {
  assert(!flush_scheduled_ && flush_pool_ != nullptr);
  flush_scheduled_ = true;
  flush_pool_->Schedule(std::move(job));
}

void BackgroundScheduler::ScheduleCompaction(std::function<void()> job) {
  assert(CanScheduleCompaction() && compaction_pool_ != nullptr);
  compactions_scheduled_++;
  compaction_pool_->Schedule(std::move(job));
}

void BackgroundScheduler::SetMaxCompactions(int max_compactions) {
  assert(max_compactions >= 1);
  max_compactions_ = max_compactions;
  if (compaction_pool_ != nullptr) compaction_pool_->SetBackgroundThreads(max_compactions);
}

void BackgroundScheduler::Stop() {
  flush_pool_.reset();
  compaction_pool_.reset();
}

}  // namespace shale
