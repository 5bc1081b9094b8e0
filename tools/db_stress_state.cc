#include "tools/db_stress_state.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "util/coding.h"
#include "util/hash.h"

namespace shale::stress {

namespace {

constexpr uint64_t kMagic = 0x5348414c45535431ull;  // "SHALEST1"
constexpr size_t kHeaderWords = 4;                  // magic (2 words), max_key (2 words)

uint64_t Mix(uint64_t key, uint32_t base) {
  const std::string k = KeyString(key);
  return Hash64(k.data(), k.size(), base);
}

}  // namespace

std::string KeyString(uint64_t key) {
  char buf[24];
  snprintf(buf, sizeof(buf), "%012llu", static_cast<unsigned long long>(key));
  return buf;
}

std::string ValueString(uint64_t key, uint32_t word, uint32_t max_value_size) {
  std::string v;
  PutFixed64(&v, word & kBaseMask);
  if ((word & kBare) != 0) return v;
  const uint64_t h = Mix(key, word & kBaseMask);
  const size_t filler = 1 + h % std::max<uint32_t>(max_value_size, 1);
  for (size_t i = 0; i < filler; i++) v.push_back(static_cast<char>('a' + (h >> (i % 50)) % 26));
  return v;
}

uint32_t ParseValue(uint64_t key, const std::string& value, uint32_t max_value_size, bool* ok) {
  *ok = false;
  if (value.size() < 8) return 0;
  const uint64_t base = DecodeFixed64(value.data());
  if (base > kBaseMask) return 0;
  const uint32_t word = kExists | static_cast<uint32_t>(base) | (value.size() == 8 ? kBare : 0u);
  if (ValueString(key, word, max_value_size) != value) return 0;
  *ok = true;
  return word;
}

uint32_t MergeResult(uint32_t word, uint32_t d) {
  // uint64add reads an absent value and a non-8-byte one as 0.
  const uint64_t before = (word & kBare) != 0 ? (word & kBaseMask) : 0;
  const uint64_t sum = before + d;
  if (sum > kBaseMask || sum == 0) return 0;
  return kExists | kBare | static_cast<uint32_t>(sum);
}

std::string Describe(uint32_t word) {
  if (word == 0) return "absent";
  return "base " + std::to_string(word & kBaseMask) + ((word & kBare) != 0 ? " (bare)" : "");
}

uint32_t ExpectedState::Load(const uint32_t* p) {
  return std::atomic_ref<const uint32_t>(*p).load(std::memory_order_relaxed);
}

void ExpectedState::Store(uint32_t* p, uint32_t v) {
  std::atomic_ref<uint32_t>(*p).store(v, std::memory_order_relaxed);
}

Status ExpectedState::Open(const std::string& dir, uint64_t max_key, bool fresh,
                           std::unique_ptr<ExpectedState>* out) {
  const std::string path = dir + "/shale_stress.expected";
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    const std::string prefix = dir.substr(0, slash);  // each ancestor, then dir itself
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::IOError(prefix, strerror(errno));
    }
    if (slash == std::string::npos) break;
  }
  const size_t bytes = (kHeaderWords + 2 * max_key) * sizeof(uint32_t);
  struct stat st;
  const bool exists = stat(path.c_str(), &st) == 0;
  if (exists && !fresh && static_cast<size_t>(st.st_size) != bytes) {
    return Status::InvalidArgument(path, "was made for another --max_key");
  }
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | (fresh ? O_TRUNC : 0), 0644);
  if (fd < 0) return Status::IOError(path, strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    close(fd);
    return Status::IOError(path, strerror(errno));
  }
  void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    close(fd);
    return Status::IOError(path, strerror(errno));
  }
  std::unique_ptr<ExpectedState> state(new ExpectedState);
  state->fd_ = fd;
  state->bytes_ = bytes;
  state->map_ = map;
  state->max_key_ = max_key;
  auto* words = static_cast<uint32_t*>(map);
  state->slots_ = words + kHeaderWords;
  uint64_t magic, keys;
  memcpy(&magic, words, 8);
  memcpy(&keys, words + 2, 8);
  if (!exists || fresh || magic == 0) {
    memset(map, 0, bytes);
    memcpy(words, &kMagic, 8);
    memcpy(words + 2, &max_key, 8);
  } else if (magic != kMagic || keys != max_key) {
    return Status::Corruption(path, "not an expected-state file for this --max_key");
  }
  *out = std::move(state);
  return Status::OK();
}

ExpectedState::~ExpectedState() {
  if (map_ != nullptr) {
    msync(map_, bytes_, MS_SYNC);
    munmap(map_, bytes_);
  }
  if (fd_ >= 0) close(fd_);
}

KeyLocks::KeyLocks(uint64_t max_key, int log2_keys_per_lock)
    : shift_(log2_keys_per_lock), locks_((max_key >> log2_keys_per_lock) + 1) {}

std::vector<std::unique_lock<std::mutex>> KeyLocks::LockRange(uint64_t first, uint64_t last) {
  std::vector<std::unique_lock<std::mutex>> held;
  for (uint64_t i = first >> shift_; i <= (last >> shift_); i++) held.emplace_back(locks_[i]);
  return held;
}

std::vector<std::unique_lock<std::mutex>> KeyLocks::LockKeys(std::vector<uint64_t> keys) {
  for (uint64_t& k : keys) k >>= shift_;
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<std::unique_lock<std::mutex>> held;
  for (uint64_t i : keys) held.emplace_back(locks_[i]);
  return held;
}

}  // namespace shale::stress
