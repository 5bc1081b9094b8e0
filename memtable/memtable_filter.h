// MemTableFilter: a Bloom filter over the user keys added to one memtable. A point lookup of
// a key the memtable does not hold, the common case for every memtable but the one holding
// the key, then costs one cache line instead of a skip-list search: in a memtable of a few
// hundred thousand entries that search is a chain of some twenty dependent cache misses, and
// profiles of reads beside a writer put it at a fifth to a third of the readers' time.
//
// The filter answers "may contain" for a 64-bit hash of the user key. It is blocked: each
// hash picks one 64-byte line and sets kProbes bits within it, so an Add or a check touches
// one cache line. False positives only cost the search the filter would have spared; there
// are no false negatives for hashes added before the check (see "Ordering" below).
//
// Only a comparator under which equal keys have equal bytes may use it (the memtable asks
// Comparator::CanKeysWithDifferentByteContentsBeEqual): hashes of bytes must agree for keys
// the comparator calls equal.
//
// Thread safety: MayContain may run from any thread at any time. Adds passing
// concurrent=true may run together (their fetch_or loses no bit); an Add passing false must
// not overlap any other Add.
//
// Ordering: bits are set with relaxed operations, before the entry is linked into the skip
// list (so before MemTable::Add returns). A reader that must see an entry (its snapshot or
// the published last sequence covers the entry's sequence) has acquired, through that
// sequence or a snapshot taken after it, a release made after the Add returned, and so
// after the bits were set: its relaxed loads see them. A reader racing an insert it need
// not see may miss the entry, as it may in the skip list itself.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace shale {

class MemTableFilter {
 public:
  // bytes is rounded up to whole 64-byte lines (at least one).
  explicit MemTableFilter(size_t bytes)
      : num_lines_(bytes < kLineBytes ? 1 : (bytes + kLineBytes - 1) / kLineBytes),
        lines_(new Line[num_lines_]()) {}
  MemTableFilter(const MemTableFilter&) = delete;
  MemTableFilter& operator=(const MemTableFilter&) = delete;

  // Sets hash's bits. With concurrent=false the caller promises that no other Add runs at
  // the same time (readers may): each word is then written with a plain store, which costs
  // no locked instruction (a locked one on a line just missed in the cache stalls the
  // writer until the line arrives). concurrent=true uses fetch_or.
  void Add(uint64_t hash, bool concurrent) {
    Line& line = lines_[LineOf(hash)];
    uint64_t masks[kWords] = {};
    Masks(hash, masks);
    for (int w = 0; w < kWords; w++) {
      const uint64_t m = masks[w];
      if (m == 0) continue;
      const uint64_t old = line.words[w].load(std::memory_order_relaxed);
      if ((old & m) == m) continue;
      if (concurrent) {
        line.words[w].fetch_or(m, std::memory_order_relaxed);
      } else {
        line.words[w].store(old | m, std::memory_order_relaxed);
      }
    }
  }

  // Starts loading hash's line into the cache, for an Add or a check a little later.
  void Prefetch(uint64_t hash) const { __builtin_prefetch(&lines_[LineOf(hash)]); }

  bool MayContain(uint64_t hash) const {
    const Line& line = lines_[LineOf(hash)];
    uint64_t masks[kWords] = {};
    Masks(hash, masks);
    for (int w = 0; w < kWords; w++) {
      if ((line.words[w].load(std::memory_order_relaxed) & masks[w]) != masks[w]) return false;
    }
    return true;
  }

  size_t bytes() const { return num_lines_ * kLineBytes; }

 private:
  static constexpr size_t kLineBytes = 64;
  static constexpr int kWords = kLineBytes / sizeof(uint64_t);
  // Six bits in a 512-bit line: at ten bits per key about 1% false positives, at twenty
  // about 0.1% (a blocked filter pays a little over a plain one for its single line).
  static constexpr int kProbes = 6;

  struct alignas(kLineBytes) Line {
    std::atomic<uint64_t> words[kWords];
  };

  // The line from the hash's upper half, by multiply-shift (no division).
  size_t LineOf(uint64_t hash) const {
    return static_cast<size_t>(((hash >> 32) * static_cast<uint64_t>(num_lines_)) >> 32);
  }
  // The probes from nine-bit pieces of the hash remixed by an odd multiplier, so that they
  // do not repeat the bits that chose the line.
  static void Masks(uint64_t hash, uint64_t* masks) {
    uint64_t h = hash * 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < kProbes; i++) {
      const unsigned bit = static_cast<unsigned>(h >> 55);  // top nine bits: 0..511
      masks[bit >> 6] |= uint64_t{1} << (bit & 63);
      h <<= 9;
    }
  }

  const size_t num_lines_;
  const std::unique_ptr<Line[]> lines_;  // zeroed by value-initialization
};

}  // namespace shale
