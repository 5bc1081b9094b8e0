// Env: the POSIX Env over real files in a temporary directory and the in-memory Env, run
// through the same cases; then what only one of them has (O_DIRECT, LOCK across processes,
// error texts, in-memory directory rules).
#include "shale/env.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

std::string ReadAll(SequentialFile* f, size_t chunk) {
  std::string out;
  std::string scratch(chunk, '\0');
  while (true) {
    Slice r;
    EXPECT_OK(f->Read(chunk, &r, scratch.data()));
    if (r.empty()) break;
    out.append(r.data(), r.size());
  }
  return out;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

class EnvTest : public ::testing::TestWithParam<bool> {
 protected:
  EnvTest() {
    if (GetParam()) {
      mem_.reset(NewMemEnv(Env::Default()));
      env_ = mem_.get();
    } else {
      env_ = Env::Default();
    }
    dir_ = std::make_unique<TempDirectory>("env_test", env_);
  }
  ~EnvTest() override {
    dir_.reset();  // before the mem env it lives in
  }
  std::string Path(const std::string& name) const { return dir_->File(name); }

  std::unique_ptr<Env> mem_;
  Env* env_;
  std::unique_ptr<TempDirectory> dir_;
};

TEST_P(EnvTest, WriteThenReadSequentialAndRandom) {
  const std::string f = Path("data");
  EnvOptions opts;
  opts.writable_file_max_buffer_size = 100;  // many flushes, and appends bigger than it
  std::unique_ptr<WritableFile> w;
  ASSERT_OK(env_->NewWritableFile(f, &w, opts));
  std::string model;
  Random rnd(TestSeed());
  for (int i = 0; i < 200; i++) {
    std::string piece = RandomBinaryString(&rnd, rnd.Skewed(9));
    ASSERT_OK(w->Append(piece));
    model += piece;
    ASSERT_EQ(model.size(), w->GetFileSize());
    if (rnd.OneIn(20)) {
      ASSERT_OK(w->Flush());
    }
    if (rnd.OneIn(50)) {
      ASSERT_OK(w->Sync());
    }
  }
  ASSERT_OK(w->Fsync());
  ASSERT_OK(w->Close());
  ASSERT_NOK(w->Append("after close"));
  w.reset();

  uint64_t size = 0;
  ASSERT_OK(env_->GetFileSize(f, &size));
  ASSERT_EQ(model.size(), size);

  std::unique_ptr<SequentialFile> seq;
  ASSERT_OK(env_->NewSequentialFile(f, &seq, EnvOptions()));
  ASSERT_EQ(model, ReadAll(seq.get(), 77));

  ASSERT_OK(env_->NewSequentialFile(f, &seq, EnvOptions()));
  ASSERT_OK(seq->Skip(10));
  ASSERT_EQ(model.substr(10), ReadAll(seq.get(), 1000));

  std::unique_ptr<RandomAccessFile> ra;
  ASSERT_OK(env_->NewRandomAccessFile(f, &ra, EnvOptions()));
  std::string scratch(500, '\0');
  for (int i = 0; i < 100; i++) {
    uint64_t off = rnd.Uniform(static_cast<uint32_t>(model.size() + 10));
    size_t n = rnd.Uniform(500);
    Slice r;
    ASSERT_OK(ra->Read(off, n, &r, scratch.data()));
    std::string want = off < model.size() ? model.substr(off, n) : "";
    ASSERT_EQ(want, r.ToString()) << "offset " << off << " n " << n;
  }
}

TEST_P(EnvTest, MissingFiles) {
  const std::string f = Path("missing");
  std::unique_ptr<SequentialFile> seq;
  Status s = env_->NewSequentialFile(f, &seq, EnvOptions());
  ASSERT_TRUE(s.IsIOError()) << s.ToString();
  ASSERT_TRUE(s.IsPathNotFound()) << s.ToString();
  ASSERT_NE(std::string::npos, s.ToString().find(f)) << s.ToString();
  std::unique_ptr<RandomAccessFile> ra;
  s = env_->NewRandomAccessFile(f, &ra, EnvOptions());
  ASSERT_TRUE(s.IsPathNotFound()) << s.ToString();
  ASSERT_EQ(nullptr, ra);
  ASSERT_TRUE(env_->FileExists(f).IsNotFound());
  uint64_t size = 1;
  ASSERT_TRUE(env_->GetFileSize(f, &size).IsPathNotFound());
  ASSERT_TRUE(env_->DeleteFile(f).IsPathNotFound());
  ASSERT_TRUE(env_->RenameFile(f, Path("other")).IsPathNotFound());
  ASSERT_NOK(env_->TruncateFile(f, 0));
  std::string data = "junk";
  ASSERT_TRUE(ReadFileToString(env_, f, &data).IsPathNotFound());
  ASSERT_TRUE(data.empty());
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(env_->NewWritableFile(Path("nodir/file"), &w, EnvOptions()).IsPathNotFound());
}

TEST_P(EnvTest, Directories) {
  const std::string sub = Path("sub");
  ASSERT_TRUE(env_->FileExists(sub).IsNotFound());
  ASSERT_OK(env_->CreateDir(sub));
  ASSERT_NOK(env_->CreateDir(sub));
  ASSERT_OK(env_->CreateDirIfMissing(sub));
  ASSERT_OK(env_->FileExists(sub));
  ASSERT_OK(WriteStringToFile(env_, "a", Path("f1")));
  ASSERT_OK(WriteStringToFile(env_, "bb", Path("f2"), true));
  ASSERT_OK(WriteStringToFile(env_, "c", sub + "/inner"));

  std::vector<std::string> children;
  ASSERT_OK(env_->GetChildren(dir_->path(), &children));
  ASSERT_EQ((std::vector<std::string>{"f1", "f2", "sub"}), Sorted(children));
  ASSERT_OK(env_->GetChildren(sub, &children));
  ASSERT_EQ(std::vector<std::string>{"inner"}, children);
  ASSERT_TRUE(env_->GetChildren(Path("nope"), &children).IsNotFound());

  ASSERT_NOK(env_->DeleteDir(sub));                  // not empty
  ASSERT_NOK(env_->CreateDirIfMissing(Path("f1")));  // a file is in the way
  ASSERT_OK(env_->DeleteFile(sub + "/inner"));
  ASSERT_OK(env_->DeleteDir(sub));
  ASSERT_TRUE(env_->FileExists(sub).IsNotFound());
  ASSERT_NOK(env_->DeleteDir(sub));

  std::unique_ptr<Directory> d;
  ASSERT_OK(env_->NewDirectory(dir_->path(), &d));
  ASSERT_OK(d->Fsync());
  ASSERT_NOK(env_->NewDirectory(Path("nope"), &d));
}

TEST_P(EnvTest, RenameTruncateAndRecreate) {
  ASSERT_OK(WriteStringToFile(env_, "source", Path("a")));
  ASSERT_OK(WriteStringToFile(env_, "old target", Path("b")));
  ASSERT_OK(env_->RenameFile(Path("a"), Path("b")));
  ASSERT_TRUE(env_->FileExists(Path("a")).IsNotFound());
  std::string data;
  ASSERT_OK(ReadFileToString(env_, Path("b"), &data));
  ASSERT_EQ("source", data);

  ASSERT_OK(env_->TruncateFile(Path("b"), 3));
  ASSERT_OK(ReadFileToString(env_, Path("b"), &data));
  ASSERT_EQ("sou", data);
  ASSERT_OK(env_->TruncateFile(Path("b"), 5));  // grows with zeros
  ASSERT_OK(ReadFileToString(env_, Path("b"), &data));
  ASSERT_EQ(std::string("sou\0\0", 5), data);

  std::unique_ptr<WritableFile> w;
  ASSERT_OK(env_->NewWritableFile(Path("b"), &w, EnvOptions()));  // truncates
  uint64_t size = 9;
  ASSERT_OK(env_->GetFileSize(Path("b"), &size));
  ASSERT_EQ(0u, size);
  ASSERT_OK(w->Append("new"));
  ASSERT_OK(w->Close());
  ASSERT_OK(ReadFileToString(env_, Path("b"), &data));
  ASSERT_EQ("new", data);
}

TEST_P(EnvTest, OpenFileOutlivesDeleteAndRename) {
  ASSERT_OK(WriteStringToFile(env_, "still here", Path("f")));
  std::unique_ptr<RandomAccessFile> ra;
  ASSERT_OK(env_->NewRandomAccessFile(Path("f"), &ra, EnvOptions()));
  ASSERT_OK(env_->RenameFile(Path("f"), Path("g")));
  ASSERT_OK(env_->DeleteFile(Path("g")));
  char scratch[32];
  Slice r;
  ASSERT_OK(ra->Read(0, sizeof(scratch), &r, scratch));
  ASSERT_EQ("still here", r.ToString());
}

TEST_P(EnvTest, ReaderSeesLaterAppends) {
  std::unique_ptr<WritableFile> w;
  ASSERT_OK(env_->NewWritableFile(Path("log"), &w, EnvOptions()));
  ASSERT_OK(w->Append("first"));
  ASSERT_OK(w->Flush());
  std::unique_ptr<SequentialFile> seq;
  ASSERT_OK(env_->NewSequentialFile(Path("log"), &seq, EnvOptions()));
  ASSERT_EQ("first", ReadAll(seq.get(), 3));
  ASSERT_OK(w->Append("second"));
  ASSERT_OK(w->Flush());
  ASSERT_EQ("second", ReadAll(seq.get(), 100));
  ASSERT_OK(w->Close());
}

TEST_P(EnvTest, LockIsExclusiveInProcess) {
  const std::string f = Path("LOCK");
  FileLock* lock = nullptr;
  ASSERT_OK(env_->LockFile(f, &lock));
  ASSERT_NE(nullptr, lock);
  ASSERT_OK(env_->FileExists(f));
  FileLock* again = nullptr;
  Status s = env_->LockFile(f, &again);
  ASSERT_TRUE(s.IsIOError()) << s.ToString();
  ASSERT_NE(std::string::npos, s.ToString().find("lock hold by current process")) << s.ToString();
  ASSERT_EQ(nullptr, again);
  ASSERT_OK(env_->UnlockFile(lock));
  ASSERT_OK(env_->LockFile(f, &lock));
  ASSERT_OK(env_->UnlockFile(lock));
}

TEST_P(EnvTest, ConcurrentReadsAndWrites) {
  std::string model(100000, '\0');
  Random rnd(TestSeed());
  model = RandomBinaryString(&rnd, model.size());
  ASSERT_OK(WriteStringToFile(env_, model, Path("shared")));
  std::unique_ptr<RandomAccessFile> ra;
  ASSERT_OK(env_->NewRandomAccessFile(Path("shared"), &ra, EnvOptions()));
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      Random r(t + 1);
      std::string scratch(1000, '\0');
      for (int i = 0; i < 300; i++) {
        uint64_t off = r.Uniform(static_cast<uint32_t>(model.size()));
        Slice got;
        if (!ra->Read(off, 1000, &got, scratch.data()).ok() ||
            got != Slice(model).ToStringView().substr(off, 1000)) {
          mismatches++;
        }
      }
      // Meanwhile, each thread writes and lists files of its own.
      const std::string mine = Path("t" + std::to_string(t));
      if (!WriteStringToFile(env_, mine, mine).ok()) mismatches++;
      std::vector<std::string> children;
      if (!env_->GetChildren(dir_->path(), &children).ok()) mismatches++;
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(0, mismatches.load());
  std::vector<std::string> children;
  ASSERT_OK(env_->GetChildren(dir_->path(), &children));
  ASSERT_EQ((std::vector<std::string>{"shared", "t0", "t1", "t2", "t3"}), Sorted(children));
}

// A file read through a mapping (an Env without mappings reads it as usual) answers as
// pread does: every range, a short read at the end, nothing past it; an empty file opens;
// the bytes stay readable after the file is deleted.
TEST_P(EnvTest, MappedReadsMatchTheFile) {
  Random rnd(TestSeed());
  const std::string model = RandomBinaryString(&rnd, 3 * 4096 + 123);
  ASSERT_OK(WriteStringToFile(env_, model, Path("table")));
  ASSERT_OK(WriteStringToFile(env_, "", Path("empty")));
  EnvOptions opts;
  opts.use_mmap_reads = true;
  std::unique_ptr<RandomAccessFile> ra;
  ASSERT_OK(env_->NewRandomAccessFile(Path("table"), &ra, opts));
  std::unique_ptr<RandomAccessFile> empty;
  ASSERT_OK(env_->NewRandomAccessFile(Path("empty"), &empty, opts));
  ASSERT_OK(env_->DeleteFile(Path("table")));
  std::string scratch(20000, '\0');
  Slice r;
  for (int i = 0; i < 300; i++) {
    const uint64_t off = rnd.Uniform(static_cast<uint32_t>(model.size() + 100));
    const size_t n = rnd.Uniform(8000);
    ASSERT_OK(ra->Read(off, n, &r, scratch.data()));
    ASSERT_EQ(off < model.size() ? model.substr(off, n) : "", r.ToString()) << off << " " << n;
    // The POSIX Env hands out the mapped bytes themselves.
    if (!GetParam() && !r.empty()) ASSERT_NE(scratch.data(), r.data());
  }
  ASSERT_OK(ra->Read(model.size() - 5, 100, &r, scratch.data()));
  ASSERT_EQ(model.substr(model.size() - 5), r.ToString());
  ASSERT_OK(empty->Read(0, 10, &r, scratch.data()));
  ASSERT_TRUE(r.empty());
}

TEST_P(EnvTest, TimeAndTestDirectory) {
  const uint64_t n0 = env_->NowNanos();
  const uint64_t m0 = env_->NowMicros();
  env_->SleepForMicroseconds(2000);
  ASSERT_GE(env_->NowNanos() - n0, 2000u * 1000u);
  ASSERT_GE(env_->NowMicros(), m0);
  ASSERT_GT(m0, 1500000000ull * 1000000ull);  // wall clock: after 2017
  std::string dir;
  ASSERT_OK(env_->GetTestDirectory(&dir));
  ASSERT_OK(env_->FileExists(dir));
}

INSTANTIATE_TEST_SUITE_P(PosixAndMem, EnvTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Mem" : "Posix"; });

// --- POSIX only --------------------------------------------------------------------------

TEST(PosixEnvTest, ErrorsNameThePathAndReason) {
  TempDirectory dir("posix_errors");
  Env* env = Env::Default();
  std::unique_ptr<RandomAccessFile> ra;
  Status s = env->NewRandomAccessFile(dir.File("nope"), &ra, EnvOptions());
  ASSERT_EQ(Status::kPathNotFound, s.subcode());
  ASSERT_NE(std::string::npos, s.ToString().find(dir.File("nope")));
  ASSERT_NE(std::string::npos, s.ToString().find("No such file or directory"));
  // ENOTDIR: a path through a regular file.
  ASSERT_OK(WriteStringToFile(env, "x", dir.File("file")));
  ASSERT_TRUE(env->FileExists(dir.File("file/child")).IsNotFound());
  std::unique_ptr<WritableFile> w;
  s = env->NewWritableFile(dir.File("file/child"), &w, EnvOptions());
  ASSERT_TRUE(s.IsIOError());
  ASSERT_NE(std::string::npos, s.ToString().find("Not a directory")) << s.ToString();
}

TEST(PosixEnvTest, TestDirectoryHonorsTestTmpdir) {
  const char* old = getenv("TEST_TMPDIR");
  const std::string saved = old ? old : "";
  TempDirectory dir("tmpdir");
  ASSERT_EQ(0, setenv("TEST_TMPDIR", dir.File("custom").c_str(), 1));
  std::string got;
  Status s = Env::Default()->GetTestDirectory(&got);
  if (old) {
    setenv("TEST_TMPDIR", saved.c_str(), 1);
  } else {
    unsetenv("TEST_TMPDIR");
  }
  ASSERT_OK(s);
  ASSERT_EQ(dir.File("custom"), got);
  ASSERT_OK(Env::Default()->FileExists(got));
}

// Runs fn in a forked child and returns its exit code (fn's return value).
int RunInChild(const std::function<int()>& fn) {
  pid_t pid = fork();
  if (pid == 0) _exit(fn());
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

// The child's LockFile: a path spelled differently, so the in-process set copied by fork
// does not answer and the kernel's flock decides.
int ChildTryLock(const std::string& dir) {
  FileLock* lock = nullptr;
  Status s = Env::Default()->LockFile(dir + "/./LOCK", &lock);
  if (s.ok()) return Env::Default()->UnlockFile(lock).ok() ? 0 : 3;
  if (s.ToString().find("While lock file") != std::string::npos &&
      s.ToString().find("Resource temporarily unavailable") != std::string::npos) {
    return 1;
  }
  return 2;
}

TEST(PosixEnvTest, LockIsExclusiveAcrossProcesses) {
  TempDirectory dir("lock_fork");
  Env* env = Env::Default();
  FileLock* lock = nullptr;
  ASSERT_OK(env->LockFile(dir.File("LOCK"), &lock));
  ASSERT_EQ(1, RunInChild([&] { return ChildTryLock(dir.path()); }));
  ASSERT_OK(env->UnlockFile(lock));
  ASSERT_EQ(0, RunInChild([&] { return ChildTryLock(dir.path()); }));

  // A child holding the lock keeps the parent out until it exits.
  int to_child[2], to_parent[2];
  ASSERT_EQ(0, pipe(to_child));
  ASSERT_EQ(0, pipe(to_parent));
  pid_t pid = fork();
  if (pid == 0) {
    FileLock* l = nullptr;
    char c = Env::Default()->LockFile(dir.path() + "/./LOCK", &l).ok() ? 'y' : 'n';
    if (write(to_parent[1], &c, 1) != 1) _exit(2);
    if (read(to_child[0], &c, 1) != 1) _exit(3);
    _exit(0);  // the kernel drops the lock
  }
  char c = 0;
  ASSERT_EQ(1, read(to_parent[0], &c, 1));
  ASSERT_EQ('y', c);
  Status s = env->LockFile(dir.File("LOCK"), &lock);
  ASSERT_TRUE(s.IsIOError());
  ASSERT_NE(std::string::npos, s.ToString().find("Resource temporarily unavailable"))
      << s.ToString();
  ASSERT_EQ(1, write(to_child[1], "x", 1));
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_OK(env->LockFile(dir.File("LOCK"), &lock));
  ASSERT_OK(env->UnlockFile(lock));
  for (int fd : {to_child[0], to_child[1], to_parent[0], to_parent[1]}) close(fd);
}

// Writes with O_DIRECT in pieces that straddle the alignment, then reads back with O_DIRECT
// at unaligned offsets. In `dir_path` on a file system without O_DIRECT (tmpfs) both fall
// back to buffered I/O and the bytes must be the same.
void DirectRoundTrip(const std::string& dir_path, bool* wrote_direct, bool* read_direct) {
  Env* env = Env::Default();
  const std::string f = dir_path + "/direct.sst";
  EnvOptions opts;
  opts.use_direct_writes = true;
  opts.use_direct_reads = true;
  opts.writable_file_max_buffer_size = 8192;
  Random rnd(TestSeed());
  std::string model;
  std::unique_ptr<WritableFile> w;
  ASSERT_OK(env->NewWritableFile(f, &w, opts));
  *wrote_direct = w->use_direct_io();
  for (int i = 0; i < 60; i++) {
    std::string piece = RandomBinaryString(&rnd, rnd.Uniform(3 * 4096));
    ASSERT_OK(w->Append(piece));
    model += piece;
    if (i == 30) {
      ASSERT_OK(w->Sync());  // padding must not show in the file size
      uint64_t size = 0;
      ASSERT_OK(env->GetFileSize(f, &size));
      ASSERT_EQ(model.size(), size);
    }
  }
  ASSERT_OK(w->Close());
  uint64_t size = 0;
  ASSERT_OK(env->GetFileSize(f, &size));
  ASSERT_EQ(model.size(), size);

  std::unique_ptr<RandomAccessFile> ra;
  ASSERT_OK(env->NewRandomAccessFile(f, &ra, opts));
  *read_direct = ra->use_direct_io();
  std::string scratch(20000, '\0');
  for (int i = 0; i < 200; i++) {
    uint64_t off = rnd.Uniform(static_cast<uint32_t>(model.size() + 100));
    size_t n = rnd.Uniform(20000);
    Slice r;
    ASSERT_OK(ra->Read(off, n, &r, scratch.data()));
    ASSERT_EQ(off < model.size() ? model.substr(off, n) : "", r.ToString());
  }
  std::string all;
  ASSERT_OK(ReadFileToString(env, f, &all));
  ASSERT_EQ(model, all);
}

TEST(PosixEnvTest, DirectIORoundTrip) {
  TempDirectory dir("direct");
  bool wrote_direct = false, read_direct = false;
  DirectRoundTrip(dir.path(), &wrote_direct, &read_direct);
  // Not asserted: $TEST_TMPDIR may be on a file system without O_DIRECT.
  fprintf(stderr, "O_DIRECT in %s: writes %d reads %d\n", dir.path().c_str(), wrote_direct,
          read_direct);
}

// tmpfs refused O_DIRECT before Linux 6.6; either way the bytes must round-trip.
TEST(PosixEnvTest, DirectIOOnTmpfs) {
  struct stat st;
  if (stat("/dev/shm", &st) != 0 || !S_ISDIR(st.st_mode)) GTEST_SKIP() << "no /dev/shm";
  const std::string shm = "/dev/shm/shale-direct-" + std::to_string(getpid());
  ASSERT_OK(Env::Default()->CreateDirIfMissing(shm));
  bool wrote_direct = true, read_direct = true;
  DirectRoundTrip(shm, &wrote_direct, &read_direct);
  ASSERT_OK(DestroyDir(shm));
  fprintf(stderr, "O_DIRECT on tmpfs: writes %d reads %d\n", wrote_direct, read_direct);
}

// Reads the whole of fname as it is on disk now, through a fresh descriptor.
std::string OnDisk(const std::string& fname) {
  std::string all;
  EXPECT_OK(ReadFileToString(Env::Default(), fname, &all));
  return all;
}

// Appends through a mapping reach the file with no Flush: a fresh reader sees each one at
// once, across window boundaries and with pieces larger than a window; the zeroed space
// ahead of the appends is gone after Close.
TEST(PosixEnvTest, MmapWritesAreInTheFileWithoutFlush) {
  TempDirectory dir("mmap");
  const std::string f = dir.File("000007.log");
  EnvOptions opts;
  opts.use_mmap_writes = true;
  std::unique_ptr<WritableFile> w;
  ASSERT_OK(Env::Default()->NewWritableFile(f, &w, opts));
  Random rnd(TestSeed());
  std::string model;
  for (int i = 0; i < 2000; i++) {
    // Mostly WAL-sized pieces; twice one larger than the largest (4 MiB) window.
    const bool big = i % 1000 == 500;
    std::string piece =
        RandomBinaryString(&rnd, big ? (4u << 20) + rnd.Uniform(100000) : rnd.Skewed(14));
    ASSERT_OK(w->Append(piece));
    model += piece;
    ASSERT_EQ(model.size(), w->GetFileSize());
    if (big || i % 200 == 199) {
      const std::string disk = OnDisk(f);
      ASSERT_GE(disk.size(), model.size());
      ASSERT_TRUE(disk.compare(0, model.size(), model) == 0) << "append " << i;
      ASSERT_EQ(std::string::npos, disk.find_first_not_of('\0', model.size()));
    }
    if (rnd.OneIn(500)) ASSERT_OK(w->Sync());
  }
  ASSERT_OK(w->Fsync());
  ASSERT_OK(w->Close());
  ASSERT_NOK(w->Append("after close"));
  uint64_t size = 0;
  ASSERT_OK(Env::Default()->GetFileSize(f, &size));
  ASSERT_EQ(model.size(), size);
  ASSERT_EQ(model, OnDisk(f));
}

// A process killed while writing through a mapping leaves every appended byte, then zeros.
TEST(PosixEnvTest, MmapWritesSurviveAKilledProcess) {
  TempDirectory dir("mmap_kill");
  const std::string f = dir.File("000008.log");
  const uint32_t seed = TestSeed();
  pid_t pid = fork();
  if (pid == 0) {
    EnvOptions opts;
    opts.use_mmap_writes = true;
    std::unique_ptr<WritableFile> w;
    if (!Env::Default()->NewWritableFile(f, &w, opts).ok()) _exit(2);
    Random rnd(seed);
    for (int i = 0; i < 3000; i++) {
      if (!w->Append(RandomBinaryString(&rnd, 100 + rnd.Uniform(200))).ok()) {
        _exit(3);
      }
    }
    raise(SIGKILL);  // no Flush, no Sync, no Close
    _exit(4);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  Random rnd(seed);
  std::string model;
  for (int i = 0; i < 3000; i++) model += RandomBinaryString(&rnd, 100 + rnd.Uniform(200));
  const std::string disk = OnDisk(f);
  ASSERT_GT(disk.size(), model.size());  // the window's zeroed rest
  ASSERT_TRUE(disk.compare(0, model.size(), model) == 0);
  ASSERT_EQ(std::string::npos, disk.find_first_not_of('\0', model.size()));
}

// --- in-memory only ----------------------------------------------------------------------

TEST(MemEnvTest, NamesAreNormalizedAndEnvsIndependent) {
  std::unique_ptr<Env> a(NewMemEnv(Env::Default()));
  std::unique_ptr<Env> b(NewMemEnv(Env::Default()));
  ASSERT_OK(a->CreateDir("/x/y"));  // ancestors come with it
  ASSERT_OK(a->FileExists("/x"));
  ASSERT_OK(WriteStringToFile(a.get(), "v", "/x//y/f"));
  std::string data;
  ASSERT_OK(ReadFileToString(a.get(), "/x/y/f", &data));
  ASSERT_EQ("v", data);
  std::vector<std::string> children;
  ASSERT_OK(a->GetChildren("/x/y/", &children));
  ASSERT_EQ(std::vector<std::string>{"f"}, children);
  ASSERT_OK(a->GetChildren("/", &children));
  ASSERT_EQ(std::vector<std::string>{"x"}, children);
  ASSERT_TRUE(b->FileExists("/x/y/f").IsNotFound());
  ASSERT_NOK(a->DeleteFile("/x"));  // a directory
  ASSERT_NOK(a->RenameFile("/x/y/f", "/nodir/f"));
}

}  // namespace
}  // namespace shale
