// KeyFilterBuilder: builds the key filters that L0 table readers without a filter block
// ask for (TableReader::WantsKeyFilter), one at a time on a thread of its own, started at
// the first request. Building one reads the whole file; on the thread of the lookup that
// asked, that would land on one read's latency.
//
// A failed build (a read error, a corrupt block) leaves the reader without a filter: its
// lookups search the file as before and report what they find.
//
// Thread safety: Request may be called from any thread. The destructor drops the requests
// not started, stops the one running at its next check, and joins the thread; it must run
// before the readers' files and Env go away (a TableCache owns the builder).
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <thread>

#include "table/table_reader.h"
#include "util/mutexlock.h"

namespace shale {

class KeyFilterBuilder {
 public:
  KeyFilterBuilder() = default;
  ~KeyFilterBuilder();
  KeyFilterBuilder(const KeyFilterBuilder&) = delete;
  KeyFilterBuilder& operator=(const KeyFilterBuilder&) = delete;

  // Queues reader for a filter. The builder holds it until the build ends.
  void Request(std::shared_ptr<TableReader> reader);

  // Waits until every request made before the call has been built or has failed (tests).
  void WaitIdle();

 private:
  void Run();

  Mutex mu_;
  CondVar work_cv_{&mu_};  // a request queued, or stop_
  CondVar idle_cv_{&mu_};  // the queue emptied and nothing is being built
  std::deque<std::shared_ptr<TableReader>> queue_ GUARDED_BY(mu_);
  bool building_ GUARDED_BY(mu_) = false;
  bool started_ GUARDED_BY(mu_) = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace shale
