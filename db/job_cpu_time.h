// ThreadCpuMicros: CPU time the calling thread has used, for the LOG lines of flush and
// compaction jobs. Wall time includes waiting for the disk and for the other cores of a
// busy machine; CPU time is what the job's own code costs, so the two together tell
// whether a slow job was slow to compute or slow to write.
//
// Thread safety: reads the caller's own clock; any thread may call it.
#pragma once

#include <cstdint>
#include <ctime>

namespace shale {

// 0 where the platform has no per-thread CPU clock.
inline uint64_t ThreadCpuMicros() {
#if defined(CLOCK_THREAD_CPUTIME_ID)
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * 1000000 + static_cast<uint64_t>(ts.tv_nsec) / 1000;
#else
  return 0;
#endif
}

}  // namespace shale
