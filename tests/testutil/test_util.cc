#include "tests/testutil/test_util.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "util/coding.h"

namespace shale {

::testing::AssertionResult AssertStatusOk(const char* expr, const Status& s) {
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << expr << " is not OK: " << s.ToString();
}

std::string TempDir(const std::string& name, Env* env) {
  static std::atomic<uint64_t> counter{0};
  std::string root;
  Status s = env->GetTestDirectory(&root);
  if (!s.ok()) {
    ADD_FAILURE() << "GetTestDirectory: " << s.ToString();
    return "";
  }
  std::string clean = name;
  std::replace(clean.begin(), clean.end(), '/', '_');
  for (int attempt = 0; attempt < 100; attempt++) {
    const uint64_t n = counter.fetch_add(1);
    const std::string path = root + "/" + clean + "-" + std::to_string(getpid()) + "-" +
                             std::to_string(n) + "-" + std::to_string(env->NowNanos() % 100000);
    s = env->CreateDir(path);  // fails if it exists, so the directory is ours alone
    if (s.ok()) return path;
  }
  ADD_FAILURE() << "cannot create a temporary directory under " << root << ": " << s.ToString();
  return "";
}

TempDirectory::~TempDirectory() {
  if (path_.empty()) return;
  Status s = DestroyDir(path_, env_);
  if (!s.ok())
    fprintf(stderr, "warning: cannot remove %s: %s\n", path_.c_str(), s.ToString().c_str());
}

Status DestroyDir(const std::string& path, Env* env) {
  std::vector<std::string> children;
  Status s = env->GetChildren(path, &children);
  if (s.IsNotFound() || s.IsPathNotFound()) {
    // Not a directory we can list: a plain file, or nothing at all.
    Status d = env->DeleteFile(path);
    return d.ok() || d.IsPathNotFound() ? Status::OK() : d;
  }
  if (!s.ok()) return s;
  for (const std::string& child : children) {
    const std::string p = path + "/" + child;
    if (!env->DeleteFile(p).ok()) {
      s = DestroyDir(p, env);  // a subdirectory
      if (!s.ok()) return s;
    }
  }
  return env->DeleteDir(path);
}

int TestKnob(const char* name, int default_value) {
  const char* env = getenv(name);
  const int n = env != nullptr ? atoi(env) : 0;
  return n > 0 ? n : default_value;
}

uint64_t TestSeed() {
  uint64_t seed;
  const char* env = getenv("SHALE_TEST_SEED");
  if (env != nullptr && env[0] != '\0') {
    seed = strtoull(env, nullptr, 0);
  } else {
    seed = Env::Default()->NowNanos() ^ (static_cast<uint64_t>(getpid()) << 32);
  }
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fprintf(stderr, "%s%s%s: SHALE_TEST_SEED=%llu\n", info ? info->test_suite_name() : "",
          info ? "." : "", info ? info->name() : "random seed",
          static_cast<unsigned long long>(seed));
  return seed;
}

std::string Key(int i) {
  char buf[32];
  snprintf(buf, sizeof(buf), "key%06d", i);
  return buf;
}

std::string TaggedKey(uint64_t i, char tag) {
  std::string k(1, tag);
  PutFixed64(&k, i);
  return k;
}

std::string IKey(const std::string& user_key, SequenceNumber seq, ValueType type) {
  std::string r;
  AppendInternalKey(&r, user_key, seq, type);
  return r;
}

Status CorruptFile(const std::string& path, int64_t offset, int bytes_to_flip, Env* env) {
  std::string contents;
  Status s = ReadFileToString(env, path, &contents);
  if (!s.ok()) return s;
  const auto size = static_cast<int64_t>(contents.size());
  if (offset < 0) offset += size;
  if (offset < 0 || bytes_to_flip < 0 || offset + bytes_to_flip > size) {
    return Status::InvalidArgument("corruption range outside the file", path);
  }
  for (int i = 0; i < bytes_to_flip; i++) contents[offset + i] ^= static_cast<char>(0xff);
  return WriteStringToFile(env, contents, path, /*should_sync=*/false);
}

Status TruncateFileTo(const std::string& path, uint64_t size, Env* env) {
  return env->TruncateFile(path, size);
}

std::string RandomBinaryString(Random* rnd, size_t len) {
  std::string r(len, '\0');
  for (size_t i = 0; i < len; i++) r[i] = static_cast<char>(rnd->Uniform(256));
  return r;
}

std::string RandomString(Random* rnd, size_t len) {
  std::string r(len, '\0');
  for (size_t i = 0; i < len; i++) r[i] = static_cast<char>(' ' + rnd->Uniform(95));
  return r;
}

std::string Fixed64String(uint64_t v) {
  std::string s;
  PutFixed64(&s, v);
  return s;
}

Status StringSource::Read(uint64_t offset, size_t n, Slice* result, char* scratch) const {
  reads_.fetch_add(1);
  if (offset >= contents_.size()) {
    *result = Slice(scratch, 0);
    return Status::OK();
  }
  const size_t got = std::min<uint64_t>(n, contents_.size() - offset);
  memcpy(scratch, contents_.data() + offset, got);
  *result = Slice(scratch, got);
  return Status::OK();
}

std::string RunChildUntilKilled(const std::function<void(int fd)>& child, uint64_t delay_us,
                                std::string* output) {
  output->clear();
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    close(fds[0]);
    child(fds[1]);
    _exit(0);  // child() should not return: the parent reports it
  }
  close(fds[1]);
  usleep(static_cast<useconds_t>(delay_us));
  kill(pid, SIGKILL);
  int status;
  std::string error;
  if (waitpid(pid, &status, 0) != pid) {
    error = "waitpid failed";
  } else if (!WIFSIGNALED(status)) {
    error = "child exited early with " + std::to_string(WEXITSTATUS(status));
  }
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) output->append(buf, static_cast<size_t>(n));
  close(fds[0]);
  return error;
}

}  // namespace shale
