// Keys and values for db_bench, made as RocksDB's db_bench makes them, so that both
// binaries write the same shape of data:
//  - a key is key_size bytes: the key number big-endian in (at most) its first 8 bytes,
//    then '0' characters;
//  - values come from a 1 MiB buffer built from 100-byte pieces, each a random prefix of
//    compression_ratio * 100 bytes (each byte 0..126, as RocksDB 11's generator draws them)
//    repeated, so that a block compressor shrinks values to about that fraction. With the
//    same generator and seed the buffer is byte for byte RocksDB's.
//
// Thread safety: every class here belongs to one benchmark thread.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "shale/slice.h"

namespace shale::tools {

// Writes the key for number v into key[0, key_size).
void GenerateKeyFromInt(uint64_t v, int key_size, char* key);

// A small multiplicative congruential generator (Park-Miller, modulus 2^31-1): the same
// kind LevelDB and RocksDB use for their value text, kept for its fixed, seedable output.
class Lehmer {
 public:
  explicit Lehmer(uint32_t seed);
  uint32_t Next();
  uint32_t Uniform(uint32_t n) { return Next() % n; }

 private:
  uint32_t state_;
};

class RandomGenerator {
 public:
  // Builds max(1 MiB, min_size) bytes of compressible text.
  RandomGenerator(double compression_ratio, size_t min_size);
  // The next len bytes of the buffer, wrapping to its start. Valid while *this lives.
  Slice Generate(size_t len);

 private:
  std::string data_;
  size_t pos_ = 0;
};

// The key numbers a write benchmark visits, each in [0, num).
class KeyGenerator {
 public:
  enum class Order { kSequential, kRandom, kUniqueRandom };
  KeyGenerator(std::mt19937_64* rand, Order order, uint64_t num, uint64_t seed);
  uint64_t Next();

 private:
  std::mt19937_64* rand_;
  Order order_;
  uint64_t num_;
  uint64_t next_ = 0;
  std::vector<uint64_t> permutation_;  // kUniqueRandom only
};

// Whether db_bench's write loop adds a range deletion after the put that brings a thread's
// puts to num_written, as RocksDB's does: once more than `before` puts were made
// (--writes_before_delete_range), after every `per`-th put (--writes_per_range_tombstone),
// until `max` deletions were added (--max_num_range_tombstones). per <= 0: never.
bool RangeTombstoneDue(int64_t num_written, int64_t before, int64_t per, int64_t max);

// CRC-32C (Castagnoli) of data: SSE4.2 when the CPU has it, else a table.
uint32_t Crc32c(const char* data, size_t n);

}  // namespace shale::tools
