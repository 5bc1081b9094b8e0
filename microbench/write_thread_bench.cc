// write_thread_bench: the cost of passing writes between threads in the WriteThread, with
// no WAL and no memtable behind it. Every thread submits one-record batches as fast as it
// can; a group's leader busy-waits 1 us (standing in for a WAL append) and completes the
// group. Items/s over 1..8 threads shows how fast a follower learns that its write is done
// and the next leader that it leads (the handoffs), which bounds every multi-threaded
// write workload.
#include <atomic>
#include <chrono>

#include "db/write_thread.h"
#include "microbench/bench_util.h"
#include "shale/write_batch.h"

namespace shale::microbench {
namespace {

// The DB's ordered mode waits briefly for a companion writer (see AwaitCompanion).
WriteThread* Thread(bool companion_wait) {
  static WriteThread* plain = new WriteThread();
  static WriteThread* companion =
      new WriteThread(WriteThread::WaitOptions{}, WriteThread::kCompanionWaitNanos);
  return companion_wait ? companion : plain;
}

std::atomic<uint64_t> applied{0};

void BusyWaitNanos(int64_t nanos) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(nanos);
  while (std::chrono::steady_clock::now() < end) {
  }
}

void Handoff(benchmark::State& state, bool companion_wait) {
  WriteThread* wt = Thread(companion_wait);
  WriteBatch batch;
  if (!batch.Put("key", "value").ok()) Fail(state, "Put");
  for (auto _ : state) {
    WriteThread::Writer w;
    w.batch = &batch;
    if (wt->JoinBatchGroup(&w) == WriteThread::kGroupLeader) {
      WriteThread::WriteGroup group;
      wt->EnterAsBatchGroupLeader(&w, &group);
      BusyWaitNanos(1000);
      applied.fetch_add(group.size, std::memory_order_relaxed);
      group.ForEach([](WriteThread::Writer* m) { m->status = Status::OK(); });
      wt->ExitGroup(&group, &w);
    }
  }
  state.SetItemsProcessed(state.iterations());
}
void BM_WriteThreadHandoff(benchmark::State& state) { Handoff(state, false); }
void BM_WriteThreadHandoffCompanionWait(benchmark::State& state) { Handoff(state, true); }
BENCHMARK(BM_WriteThreadHandoff)->ThreadRange(1, 8)->UseRealTime();
BENCHMARK(BM_WriteThreadHandoffCompanionWait)->ThreadRange(1, 8)->UseRealTime();

}  // namespace
}  // namespace shale::microbench

SHALE_MICROBENCH_MAIN();
