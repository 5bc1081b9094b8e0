// Helpers shared by the microbench binaries: where DB files go, fixed-width keys, value
// bytes of a chosen compressibility, error reporting that fails the run, and the main().
//
// Every binary ends with SHALE_MICROBENCH_MAIN(). Its exit status is non-zero when any
// benchmark called Fail() (which also marks the benchmark as errored for google
// benchmark), so a smoke run under ctest catches a bad Status, not only a crash.
//
// Directories: $TEST_TMPDIR (else the system temporary directory) holds one directory per
// process, <binary>-<pid>, removed when main returns; BenchDir(name) is a fresh
// subdirectory of it.
//
// Thread safety: Fail() may be called from any benchmark thread; the rest is called from
// setup code (one thread) only.
#pragma once

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <system_error>
#include <vector>

#include "shale/status.h"
#include "util/random.h"

namespace shale::microbench {

inline std::atomic<bool>& ErrorSeen() {
  static std::atomic<bool> seen{false};
  return seen;
}

// Marks the benchmark as failed; a benchmark loop must stop (break) after calling it.
inline void Fail(benchmark::State& state, const std::string& what) {
  ErrorSeen().store(true);
  state.SkipWithError(what.c_str());
}

// False (after Fail) when s is not OK.
inline bool CheckOk(benchmark::State& state, const Status& s, const char* what) {
  if (s.ok()) return true;
  Fail(state, std::string(what) + ": " + s.ToString());
  return false;
}

inline std::string& ProcessDirSlot() {
  static std::string dir;
  return dir;
}

inline void InitProcessDir(const char* argv0) {
  const char* env = std::getenv("TEST_TMPDIR");
  std::filesystem::path root = env != nullptr && env[0] != '\0'
                                   ? std::filesystem::path(env)
                                   : std::filesystem::temp_directory_path();
  std::filesystem::path dir =
      root / (std::filesystem::path(argv0).filename().string() + "-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  ProcessDirSlot() = dir.string();
}

// A new, empty directory for one DB or file set.
inline std::string BenchDir(const std::string& name) {
  std::filesystem::path dir = std::filesystem::path(ProcessDirSlot()) / name;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Work to do after the last benchmark and before the directory goes (closing shared DBs).
inline std::vector<std::function<void()>>& Cleanups() {
  static std::vector<std::function<void()>> fns;
  return fns;
}

inline void AtExit() {
  auto& fns = Cleanups();
  while (!fns.empty()) {
    std::function<void()> fn = std::move(fns.back());
    fns.pop_back();
    fn();
  }
}

inline void RemoveProcessDir() {
  std::error_code ec;
  if (!ProcessDirSlot().empty()) std::filesystem::remove_all(ProcessDirSlot(), ec);
}

// Keys are kKeySize bytes: "k" and the number in decimal, zero-padded. Sorted numerically.
inline constexpr size_t kKeySize = 16;

inline void FormatKey(uint64_t n, char* out) {
  out[0] = 'k';
  for (size_t i = kKeySize - 1; i > 0; --i) {
    out[i] = static_cast<char>('0' + n % 10);
    n /= 10;
  }
}

inline std::string Key(uint64_t n) {
  std::string k(kKeySize, '\0');
  FormatKey(n, k.data());
  return k;
}

// n keys laid end to end, kKeySize bytes apart: key i is Key(first + i * stride).
inline std::string KeyArray(uint64_t first, uint64_t stride, size_t n) {
  std::string keys(n * kKeySize, '\0');
  for (size_t i = 0; i < n; ++i) FormatKey(first + i * stride, keys.data() + i * kKeySize);
  return keys;
}

// size bytes that LZ-style compressors shrink to about half: each 32-byte piece is 16
// random letters written twice.
inline std::string CompressibleBytes(Random* rnd, size_t size) {
  std::string out;
  out.reserve(size + 32);
  while (out.size() < size) {
    char piece[16];
    for (char& c : piece) c = static_cast<char>('a' + rnd->Uniform(26));
    out.append(piece, sizeof(piece));
    out.append(piece, sizeof(piece));
  }
  out.resize(size);
  return out;
}

// A table of random indexes below bound, so the timed loop draws targets with a mask
// instead of calling a generator. Its size is a power of two.
inline std::vector<uint32_t> RandomIndexes(uint32_t bound, size_t count_log2, uint64_t seed) {
  Random rnd(seed);
  std::vector<uint32_t> out(size_t{1} << count_log2);
  for (uint32_t& x : out) x = rnd.Uniform(bound);
  return out;
}

}  // namespace shale::microbench

// Runs the benchmarks selected by the command line; exit status 1 on an unknown flag or
// when any benchmark failed. register_fn (may be empty) adds benchmarks known only at run
// time.
#define SHALE_MICROBENCH_MAIN_WITH(register_fn)                       \
  int main(int argc, char** argv) {                                   \
    benchmark::Initialize(&argc, argv);                               \
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1; \
    shale::microbench::InitProcessDir(argv[0]);                       \
    register_fn();                                                    \
    benchmark::RunSpecifiedBenchmarks();                              \
    benchmark::Shutdown();                                            \
    shale::microbench::AtExit();                                      \
    shale::microbench::RemoveProcessDir();                            \
    return shale::microbench::ErrorSeen().load() ? 1 : 0;             \
  }

#define SHALE_MICROBENCH_MAIN() SHALE_MICROBENCH_MAIN_WITH([] {})
