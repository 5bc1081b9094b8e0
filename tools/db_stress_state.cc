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

constexpr uint64_t kMagic = 0x5348414c45535434ull;  // "SHALEST4"
// magic (2 words), max_key (2 words), prefix mode, log count, log generation, the number
// of column families when more than one (0 otherwise, as in files from before families),
// the durable sequence (2 words)
constexpr size_t kHeaderWords = 10;
// key, word, sequence (2 words, low first), check
constexpr size_t kEntryWords = 5;

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

Status ExpectedState::Open(const std::string& dir, uint64_t max_key, uint32_t families, bool fresh,
                           std::unique_ptr<ExpectedState>* out) {
  const std::string path = dir + "/shale_stress.expected";
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    const std::string prefix = dir.substr(0, slash);  // each ancestor, then dir itself
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::IOError(prefix, strerror(errno));
    }
    if (slash == std::string::npos) break;
  }
  if (max_key > UINT32_MAX) return Status::InvalidArgument("--max_key must fit in 32 bits");
  const size_t bytes =
      (kHeaderWords + 3 * max_key + kEntryWords * kLogCapacity + kTxnSlots * kTxnWords) *
      sizeof(uint32_t);
  struct stat st;
  const bool exists = stat(path.c_str(), &st) == 0;
  if (exists && !fresh && static_cast<size_t>(st.st_size) != bytes) {
    return Status::InvalidArgument(
        path, "was made for another --max_key, --column_families or db_stress version");
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
  state->header_ = words;
  state->slots_ = words + kHeaderWords;
  state->base_ = state->slots_ + 2 * max_key;
  state->log_ = state->base_ + max_key;
  state->txns_ = state->log_ + kEntryWords * kLogCapacity;
  uint64_t magic, keys;
  memcpy(&magic, words, 8);
  memcpy(&keys, words + 2, 8);
  const uint32_t families_word = families > 1 ? families : 0;
  if (!exists || fresh || magic == 0) {
    memset(map, 0, bytes);
    memcpy(words, &kMagic, 8);
    memcpy(words + 2, &max_key, 8);
    words[kFamilies] = families_word;
  } else if (magic != kMagic || keys != max_key) {
    return Status::Corruption(path, "not an expected-state file for this --max_key");
  } else if (words[kFamilies] != families_word) {
    return Status::InvalidArgument(
        path, "was made for --column_families=" + std::to_string(std::max(words[kFamilies], 1u)));
  }
  *out = std::move(state);
  return Status::OK();
}

uint32_t ExpectedState::EntryCheck(uint32_t pos, uint32_t key, uint32_t word, uint64_t seq) const {
  // The generation makes an entry left from an earlier log at the same position invalid.
  const uint32_t low = static_cast<uint32_t>(seq), high = static_cast<uint32_t>(seq >> 32);
  const uint32_t in[6] = {Load(&header_[kLogGeneration]), pos, key, word, low, high};
  return static_cast<uint32_t>(Hash64(reinterpret_cast<const char*>(in), sizeof(in))) | 1u;
}

uint64_t ExpectedState::durable_seq() const {
  return std::atomic_ref<const uint64_t>(*reinterpret_cast<const uint64_t*>(&header_[kDurable]))
      .load(std::memory_order_relaxed);
}

bool ExpectedState::AppendLog(uint64_t key, uint32_t word, uint64_t seq) {
  const uint32_t pos =
      std::atomic_ref<uint32_t>(header_[kLogCount]).fetch_add(1, std::memory_order_relaxed);
  if (pos >= kLogCapacity) return false;
  uint32_t* e = &log_[kEntryWords * pos];
  Store(&e[0], static_cast<uint32_t>(key));
  Store(&e[1], word);
  Store(&e[2], static_cast<uint32_t>(seq));
  Store(&e[3], static_cast<uint32_t>(seq >> 32));
  // Written last: a kill before it leaves an entry that reads as torn, not as a write.
  std::atomic_ref<uint32_t>(e[4]).store(EntryCheck(pos, static_cast<uint32_t>(key), word, seq),
                                        std::memory_order_release);
  return true;
}

void ExpectedState::AdvanceDurable(uint64_t seq) {
  std::atomic_ref<uint64_t> durable(*reinterpret_cast<uint64_t*>(&header_[kDurable]));
  uint64_t cur = durable.load(std::memory_order_relaxed);
  while (cur < seq && !durable.compare_exchange_weak(cur, seq, std::memory_order_relaxed)) {
  }
}

bool ExpectedState::ReadLog(uint32_t pos, uint64_t* key, uint32_t* word, uint64_t* seq) const {
  const uint32_t* e = &log_[kEntryWords * pos];
  const uint32_t check = std::atomic_ref<const uint32_t>(e[4]).load(std::memory_order_acquire);
  const uint32_t k = Load(&e[0]), w = Load(&e[1]);
  const uint64_t q = Load(&e[2]) | (static_cast<uint64_t>(Load(&e[3])) << 32);
  if (check != EntryCheck(pos, k, w, q) || k >= max_key_) return false;
  *key = k;
  *word = w;
  *seq = q;
  return true;
}

void ExpectedState::ResetLog() {
  // Generation first: from then on the old entries read as torn, and base holds them.
  Store(&header_[kLogGeneration], Load(&header_[kLogGeneration]) + 1);
  Store(&header_[kLogCount], 0);
}

void ExpectedState::BeginTxn(int slot, TxnRecord::Intent intent, uint32_t serial,
                             const std::vector<TxnKey>& keys) {
  uint32_t* r = &txns_[kTxnWords * slot];
  Store(&r[1], 0);
  Store(&r[2], serial);
  Store(&r[3], static_cast<uint32_t>(keys.size()));
  for (size_t i = 0; i < keys.size(); i++) {
    Store(&r[4 + 3 * i], static_cast<uint32_t>(keys[i].key));
    Store(&r[5 + 3 * i], keys[i].before);
    Store(&r[6 + 3 * i], keys[i].word);
  }
  std::atomic_ref<uint32_t>(r[0]).store(intent, std::memory_order_release);
}

void ExpectedState::MarkPrepared(int slot) { Store(&txns_[kTxnWords * slot + 1], 1); }

void ExpectedState::EndTxn(int slot) { Store(&txns_[kTxnWords * slot], TxnRecord::kNone); }

bool ExpectedState::ReadTxn(int slot, TxnRecord* rec) const {
  const uint32_t* r = &txns_[kTxnWords * slot];
  const uint32_t intent = std::atomic_ref<const uint32_t>(r[0]).load(std::memory_order_acquire);
  if (intent != TxnRecord::kCommit && intent != TxnRecord::kRollback) return false;
  rec->intent = static_cast<TxnRecord::Intent>(intent);
  rec->prepared = Load(&r[1]) != 0;
  rec->serial = Load(&r[2]);
  const uint32_t n = std::min<uint32_t>(Load(&r[3]), kTxnKeys);
  rec->keys.clear();
  for (uint32_t i = 0; i < n; i++) {
    TxnKey k;
    k.key = Load(&r[4 + 3 * i]);
    k.before = Load(&r[5 + 3 * i]);
    k.word = Load(&r[6 + 3 * i]);
    if (k.key < max_key_) rec->keys.push_back(k);
  }
  return true;
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

KeyLocks::Set KeyLocks::LockRange(uint64_t first, uint64_t last) {
  Set held;
  for (uint64_t i = first >> shift_; i <= (last >> shift_); i++) held.Add(&locks_[i]);
  return held;
}

KeyLocks::Set KeyLocks::LockKeys(std::vector<uint64_t> keys) {
  for (uint64_t& k : keys) k >>= shift_;
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  Set held;
  for (uint64_t i : keys) held.Add(&locks_[i]);
  return held;
}

}  // namespace shale::stress
