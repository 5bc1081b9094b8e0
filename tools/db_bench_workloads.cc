// The benchmark methods of db_bench: each runs on one benchmark thread and records what
// it did in thread->stats. Operation counts, key choice, bytes counted and messages follow
// RocksDB db_bench's workloads of the same names.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "shale/iterator.h"
#include "shale/write_batch.h"
#include "table/compression.h"
#include "tools/db_bench.h"
#include "tools/db_bench_flags.h"

namespace shale::tools {

void Fail(const char* what, const Status& s) {
  fprintf(stderr, "%s error: %s\n", what, s.ToString().c_str());
  exit(1);
}

namespace {

std::string FoundMessage(int64_t found, int64_t total) {
  char msg[100];
  snprintf(msg, sizeof(msg), "(%" PRId64 " of %" PRId64 " found)\n", found, total);
  return msg;
}

}  // namespace

void Benchmark::DoWrite(ThreadState* thread, KeyGenerator::Order order) {
  // Random writes may run for --duration; sequential and unique ones write writes_ keys.
  const uint64_t seconds = order == KeyGenerator::Order::kRandom ? FLAGS_duration : 0;
  // With --num_hot_column_families, the writes fall into one stage per set of hot families
  // (RocksDB's arithmetic); each stage's first write creates that stage's families.
  int64_t ops_per_stage = writes_;
  if (FLAGS_num_column_families > 1 && FLAGS_num_hot_column_families > 0) {
    ops_per_stage = (writes_ - 1) / (FLAGS_num_column_families / FLAGS_num_hot_column_families) + 1;
  }
  Duration duration(seconds, writes_, ops_per_stage);
  int64_t stage = 0;
  // A range deletion starts at the generator's next number, so the key space grows by one
  // number for each, as in RocksDB.
  const int64_t max_range_deletions =
      FLAGS_writes_per_range_tombstone > 0 ? FLAGS_max_num_range_tombstones : 0;
  KeyGenerator keys(&thread->rand, order, static_cast<uint64_t>(num_ + max_range_deletions),
                    seed_base_ + static_cast<uint64_t>(thread->tid));
  RandomGenerator gen(FLAGS_compression_ratio, static_cast<size_t>(value_size_));
  if (num_ != FLAGS_num) {
    char msg[100];
    snprintf(msg, sizeof(msg), "(%" PRId64 " ops)", num_);
    thread->stats.AddMessage(msg);
  }
  WriteBatch batch;
  std::string key;
  std::string begin_key;
  std::string end_key;
  int64_t bytes = 0;
  int64_t num_written = 0;
  int64_t num_range_deletions = 0;
  while (!duration.Done(entries_per_batch_)) {
    if (duration.GetStage() != stage) {
      stage = duration.GetStage();
      CreateNewCf(stage);
    }
    // RocksDB's loop draws a DB (of --num_multi_db) for each batch of non-sequential
    // writes; the draw is kept so that a seed picks the same keys in both binaries.
    if (order != KeyGenerator::Order::kSequential) thread->rand();
    batch.Clear();
    for (int64_t j = 0; j < entries_per_batch_; j++) {
      // The key's number also picks its family, so that a reader finds it (FamilyOf).
      const uint64_t n = keys.Next();
      ColumnFamilyHandle* cf = cfh_.size() > 1 ? GetCfh(static_cast<int64_t>(n)) : nullptr;
      MakeKey(n, &key);
      Slice value = gen.Generate(static_cast<size_t>(value_size_));
      Status s = batch.Put(cf, key, value);
      if (!s.ok()) Fail("put", s);
      bytes += static_cast<int64_t>(key.size() + value.size());
      ++num_written;
      if (!RangeTombstoneDue(num_written, FLAGS_writes_before_delete_range,
                             FLAGS_writes_per_range_tombstone, max_range_deletions)) {
        continue;
      }
      // [begin, begin + width) in the family of the key just put, in the same batch.
      ++num_range_deletions;
      const uint64_t begin = keys.Next();
      const auto width = static_cast<uint64_t>(FLAGS_range_tombstone_width);
      if (FLAGS_expand_range_tombstones) {
        for (uint64_t k = begin; k < begin + width && s.ok(); k++) {
          MakeKey(k, &key);
          s = batch.Delete(cf, key);
        }
      } else {
        MakeKey(begin, &begin_key);
        MakeKey(begin + width, &end_key);
        s = batch.DeleteRange(cf, begin_key, end_key);
      }
      if (!s.ok()) Fail("put", s);
    }
    Status s = db_->Write(write_options_, &batch);
    if (!s.ok()) Fail("put", s);
    thread->stats.FinishedOps(entries_per_batch_, OpType::kWrite);
  }
  if (num_range_deletions > 0) {
    fprintf(stdout, "Number of range deletions: %" PRId64 "\n", num_range_deletions);
  }
  thread->stats.AddBytes(bytes);
}

void Benchmark::ReadSequential(ThreadState* thread) {
  std::unique_ptr<Iterator> iter(db_->NewIterator(read_options_));
  int64_t i = 0;
  int64_t bytes = 0;
  for (iter->SeekToFirst(); i < reads_ && iter->Valid(); iter->Next()) {
    bytes += static_cast<int64_t>(iter->key().size() + iter->value().size());
    thread->stats.FinishedOps(1, OpType::kRead);
    ++i;
  }
  if (!iter->status().ok()) Fail("iterator", iter->status());
  thread->stats.AddBytes(bytes);
}

void Benchmark::ReadReverse(ThreadState* thread) {
  std::unique_ptr<Iterator> iter(db_->NewIterator(read_options_));
  int64_t i = 0;
  int64_t bytes = 0;
  for (iter->SeekToLast(); i < reads_ && iter->Valid(); iter->Prev()) {
    bytes += static_cast<int64_t>(iter->key().size() + iter->value().size());
    thread->stats.FinishedOps(1, OpType::kRead);
    ++i;
  }
  if (!iter->status().ok()) Fail("iterator", iter->status());
  thread->stats.AddBytes(bytes);
}

void Benchmark::ReadRandom(ThreadState* thread) {
  Duration duration(FLAGS_duration, reads_);
  std::string key;
  PinnableSlice value;
  // readrandomoperands: a few operand slots to start with, grown when a key has more.
  std::vector<PinnableSlice> operands(read_operands_ ? 8 : 0);
  int64_t read = 0;
  int64_t found = 0;
  int64_t bytes = 0;
  while (!duration.Done(1)) {
    const uint64_t n = thread->rand() % static_cast<uint64_t>(FLAGS_num);
    MakeKey(n, &key);
    read++;
    value.Reset();
    int64_t operand_bytes = 0;
    // The family the key's writer chose (RocksDB's readrandom reads it there too).
    ColumnFamilyHandle* cf = FamilyOf(static_cast<int64_t>(n));
    Status s = read_operands_ ? ReadOperands(cf, key, &operands, &operand_bytes)
                              : db_->Get(read_options_, cf, key, &value);
    if (s.ok()) {
      found++;
      bytes += static_cast<int64_t>(key.size() + value.size()) + operand_bytes;
    } else if (!s.IsNotFound()) {
      Fail(read_operands_ ? "GetMergeOperands" : "get", s);
    }
    thread->stats.FinishedOps(1, OpType::kRead);
  }
  thread->stats.AddBytes(bytes);
  thread->stats.AddMessage(FoundMessage(found, read));
}

void Benchmark::MultiReadRandom(ThreadState* thread) {
  // Each operation asks for entries_per_batch_ keys in one MultiGet call (the batched form
  // with --multiread_batched): random keys, or with --multiread_stride consecutive keys that
  // far apart from a random start. The call is one histogram entry; the keys count as
  // entries_per_batch_ operations.
  const int64_t batch = entries_per_batch_;
  const uint64_t num = static_cast<uint64_t>(FLAGS_num);
  const uint64_t stride =
      FLAGS_multiread_stride > 0 ? static_cast<uint64_t>(FLAGS_multiread_stride) : 0;
  Duration duration(FLAGS_duration, reads_);
  std::vector<std::string> keys(batch);
  std::vector<Slice> slices(batch);
  std::vector<std::string> values;
  std::vector<PinnableSlice> pinned(batch);
  std::vector<Status> statuses(batch);
  int64_t calls = 0;
  int64_t found = 0;
  int64_t bytes = 0;
  while (!duration.Done(batch)) {
    uint64_t start = thread->rand() % num;
    // A strided batch that would run past the last key starts early enough to fit.
    const uint64_t span = stride * static_cast<uint64_t>(batch);
    if (stride > 0 && start + span - stride >= num) start = num > span ? num - span : 0;
    for (int64_t i = 0; i < batch; i++) {
      MakeKey(stride > 0 ? start + static_cast<uint64_t>(i) * stride : thread->rand() % num,
              &keys[i]);
      slices[i] = keys[i];
    }
    if (FLAGS_multiread_batched) {
      db_->MultiGet(read_options_, db_->DefaultColumnFamily(), slices.size(), slices.data(),
                    pinned.data(), statuses.data());
    } else {
      statuses = db_->MultiGet(read_options_, slices, &values);
    }
    calls++;
    for (int64_t i = 0; i < batch; i++) {
      if (statuses[i].ok()) {
        found++;
        const size_t value_size = FLAGS_multiread_batched ? pinned[i].size() : values[i].size();
        bytes += static_cast<int64_t>(keys[i].size() + value_size);
      } else if (!statuses[i].IsNotFound()) {
        Fail("MultiGet", statuses[i]);
      }
      pinned[i].Reset();
    }
    thread->stats.FinishedOps(batch, OpType::kRead);
  }
  char msg[100];
  snprintf(msg, sizeof(msg), "(%" PRId64 " of %" PRId64 " found)", found, calls * batch);
  thread->stats.AddBytes(bytes);
  thread->stats.AddMessage(msg);
}

void Benchmark::SeekRandom(ThreadState* thread) {
  Duration duration(FLAGS_duration, reads_);
  std::string key;
  char value_copy[256];
  int64_t read = 0;
  int64_t found = 0;
  int64_t bytes = 0;
  while (!duration.Done(1)) {
    // A new iterator per seek, as RocksDB's does without a tailing iterator, so that it
    // sees what other threads wrote meanwhile.
    std::unique_ptr<Iterator> iter(db_->NewIterator(read_options_));
    MakeKey(thread->rand() % static_cast<uint64_t>(FLAGS_num), &key);
    iter->Seek(key);
    read++;
    if (iter->Valid() && iter->key().compare(key) == 0) found++;
    for (int j = 0; j < FLAGS_seek_nexts && iter->Valid(); j++) {
      // Copy the value out so that it is really read.
      const Slice v = iter->value();
      memcpy(value_copy, v.data(), std::min(v.size(), sizeof(value_copy)));
      bytes += static_cast<int64_t>(iter->key().size() + v.size());
      if (FLAGS_reverse_iterator) {
        iter->Prev();
      } else {
        iter->Next();
      }
    }
    if (!iter->status().ok()) Fail("seek", iter->status());
    thread->stats.FinishedOps(1, OpType::kSeek);
  }
  thread->stats.AddBytes(bytes);
  thread->stats.AddMessage(FoundMessage(found, read));
}

void Benchmark::ReadWhileWriting(ThreadState* thread) {
  if (thread->tid > 0) {
    ReadRandom(thread);
  } else {
    BGWriter(thread, /*merge=*/false);
  }
}

void Benchmark::BGWriter(ThreadState* thread, bool merge) {
  // Writes until every reader is done; its numbers stay out of the result.
  thread->stats.SetExcludeFromMerge();
  RandomGenerator gen(FLAGS_compression_ratio, static_cast<size_t>(value_size_));
  std::string key;
  int64_t bytes = 0;
  SharedState* shared = thread->shared;
  // --benchmark_write_rate_limit (bytes/second): the writer sleeps whenever it is ahead of
  // the rate, so that readers can be compared under the same write load whatever each
  // engine's write speed.
  const uint64_t rate = FLAGS_benchmark_write_rate_limit;
  const uint64_t start = NowMicros();
  while (shared->num_done.load(std::memory_order_acquire) + 1 < shared->total) {
    MakeKey(thread->rand() % static_cast<uint64_t>(FLAGS_num), &key);
    Slice value = gen.Generate(static_cast<size_t>(value_size_));
    Status s =
        merge ? db_->Merge(write_options_, key, value) : db_->Put(write_options_, key, value);
    if (!s.ok()) Fail(merge ? "merge" : "put", s);
    bytes += static_cast<int64_t>(key.size() + value.size());
    thread->stats.FinishedOps(1, merge ? OpType::kMerge : OpType::kWrite);
    if (rate > 0) {
      const uint64_t due = static_cast<uint64_t>(bytes) * 1000000 / rate;
      const uint64_t elapsed = NowMicros() - start;
      if (due > elapsed) std::this_thread::sleep_for(std::chrono::microseconds(due - elapsed));
    }
  }
  thread->stats.AddBytes(bytes);
}

void Benchmark::ReadRandomWriteRandom(ThreadState* thread) {
  Duration duration(FLAGS_duration, readwrites_);
  RandomGenerator gen(FLAGS_compression_ratio, static_cast<size_t>(value_size_));
  std::string key;
  std::string value;
  int64_t reads_done = 0;
  int64_t writes_done = 0;
  int64_t found = 0;
  // Each round of 100 operations: readwritepercent gets first, then the puts.
  int get_weight = 0;
  int put_weight = 0;
  while (!duration.Done(1)) {
    MakeKey(thread->rand() % static_cast<uint64_t>(FLAGS_num), &key);
    if (get_weight == 0 && put_weight == 0) {
      get_weight = FLAGS_readwritepercent;
      put_weight = 100 - get_weight;
    }
    if (get_weight > 0) {
      Status s = db_->Get(read_options_, key, &value);
      if (s.ok()) {
        found++;
      } else if (!s.IsNotFound()) {
        fprintf(stderr, "get error: %s\n", s.ToString().c_str());
      }
      get_weight--;
      reads_done++;
      thread->stats.FinishedOps(1, OpType::kRead);
    } else if (put_weight > 0) {
      Status s = db_->Put(write_options_, key, gen.Generate(static_cast<size_t>(value_size_)));
      if (!s.ok()) Fail("put", s);
      put_weight--;
      writes_done++;
      thread->stats.FinishedOps(1, OpType::kWrite);
    }
  }
  char msg[160];
  snprintf(msg, sizeof(msg),
           "( reads:%" PRId64 " writes:%" PRId64 " total:%" PRId64 " found:%" PRId64 ")",
           reads_done, writes_done, readwrites_, found);
  thread->stats.AddMessage(msg);
}

void Benchmark::UpdateRandom(ThreadState* thread) {
  Duration duration(FLAGS_duration, readwrites_);
  RandomGenerator gen(FLAGS_compression_ratio, static_cast<size_t>(value_size_));
  std::string key;
  std::string value;
  int64_t found = 0;
  int64_t bytes = 0;
  while (!duration.Done(1)) {
    MakeKey(thread->rand() % static_cast<uint64_t>(FLAGS_num), &key);
    Status s = db_->Get(read_options_, key, &value);
    if (s.ok()) {
      found++;
      bytes += static_cast<int64_t>(key.size() + value.size());
    } else if (!s.IsNotFound()) {
      Fail("get", s);
    }
    Slice next = gen.Generate(static_cast<size_t>(value_size_));
    s = db_->Put(write_options_, key, next);
    if (!s.ok()) Fail("put", s);
    bytes += static_cast<int64_t>(key.size() + next.size());
    thread->stats.FinishedOps(1, OpType::kUpdate);
  }
  char msg[100];
  snprintf(msg, sizeof(msg), "( updates:%" PRId64 " found:%" PRId64 ")", readwrites_, found);
  thread->stats.AddBytes(bytes);
  thread->stats.AddMessage(msg);
}

void Benchmark::DoDelete(ThreadState* thread, bool seq) {
  Duration duration(seq ? 0 : FLAGS_duration, deletes_);
  WriteBatch batch;
  std::string key;
  int64_t i = 0;
  while (!duration.Done(entries_per_batch_)) {
    batch.Clear();
    for (int64_t j = 0; j < entries_per_batch_; j++) {
      const uint64_t k =
          seq ? static_cast<uint64_t>(i + j) : thread->rand() % static_cast<uint64_t>(FLAGS_num);
      MakeKey(k, &key);
      Status s = batch.Delete(key);
      if (!s.ok()) Fail("del", s);
    }
    Status s = db_->Write(write_options_, &batch);
    if (!s.ok()) Fail("del", s);
    thread->stats.FinishedOps(entries_per_batch_, OpType::kDelete);
    i += entries_per_batch_;
  }
}

void Benchmark::Crc32cBench(ThreadState* thread) {
  // About 5000 MiB of --block_size blocks, as RocksDB's.
  const size_t size = FLAGS_block_size > 0 ? static_cast<size_t>(FLAGS_block_size) : 4096;
  const std::string data(size, 'x');
  uint64_t bytes = 0;
  uint32_t sum = 0;
  while (bytes < 5000ull * 1048576) {
    sum += Crc32c(data.data(), data.size());
    thread->stats.FinishedOps(1, OpType::kCrc);
    bytes += size;
  }
  fprintf(stderr, "... val=0x%x\r", sum);  // keeps the loop from being optimized away
  thread->stats.AddBytes(static_cast<int64_t>(bytes));
  char msg[64];
  snprintf(msg, sizeof(msg), "(%zu per op)", size);
  thread->stats.AddMessage(msg);
}

namespace {

// compress and uncompress work through 1 GiB of input, one --block_size block at a time.
constexpr uint64_t kCompressBenchBytes = 1024ull * 1048576;

size_t BenchBlockSize() {
  return FLAGS_block_size > 0 ? static_cast<size_t>(FLAGS_block_size) : 4096;
}

}  // namespace

void Benchmark::CompressBench(ThreadState* thread) {
  RandomGenerator gen(FLAGS_compression_ratio, BenchBlockSize());
  const Slice input = gen.Generate(BenchBlockSize());
  std::string compressed;
  uint64_t bytes = 0;
  uint64_t produced = 0;
  bool ok = true;
  while (ok && bytes < kCompressBenchBytes) {
    ok = CompressBlock(options_.compression, input, &compressed);
    produced += compressed.size();
    bytes += input.size();
    thread->stats.FinishedOps(1, OpType::kCompress);
  }
  if (!ok) {
    thread->stats.AddMessage("(compression failure)");
    return;
  }
  char msg[64];
  snprintf(msg, sizeof(msg), "(output: %.1f%%)", produced * 100.0 / bytes);
  thread->stats.AddMessage(msg);
  thread->stats.AddBytes(static_cast<int64_t>(bytes));
}

void Benchmark::UncompressBench(ThreadState* thread) {
  RandomGenerator gen(FLAGS_compression_ratio, BenchBlockSize());
  const Slice input = gen.Generate(BenchBlockSize());
  std::string compressed;
  bool ok = CompressBlock(options_.compression, input, &compressed);
  uint64_t bytes = 0;
  std::unique_ptr<char[]> out;
  size_t out_size = 0;
  while (ok && bytes < kCompressBenchBytes) {
    ok = DecompressBlock(options_.compression, compressed, &out, &out_size).ok();
    bytes += input.size();
    thread->stats.FinishedOps(1, OpType::kUncompress);
  }
  if (!ok) {
    thread->stats.AddMessage("(compression failure)");
    return;
  }
  thread->stats.AddBytes(static_cast<int64_t>(bytes));
}

void Benchmark::ReadRandomFast(ThreadState* thread) {
  // Keys drawn from the next power of two at or above --num, so some are missing; the
  // clock and the counters are looked at once per 100 reads.
  uint64_t pot = 1;
  while (pot < static_cast<uint64_t>(FLAGS_num)) pot <<= 1;
  Duration duration(FLAGS_duration, reads_);
  std::string key;
  std::string value;
  int64_t read = 0;
  int64_t found = 0;
  int64_t nonexist = 0;
  do {
    for (int i = 0; i < 100; i++) {
      const uint64_t k = thread->rand() & (pot - 1);
      MakeKey(k, &key);
      read++;
      Status s = db_->Get(read_options_, key, &value);
      if (s.ok()) {
        found++;
      } else if (!s.IsNotFound()) {
        Fail("get", s);
      }
      if (k >= static_cast<uint64_t>(FLAGS_num)) nonexist++;
    }
    thread->stats.FinishedOps(100, OpType::kRead);
  } while (!duration.Done(100));
  char msg[160];
  snprintf(msg, sizeof(msg),
           "(%" PRId64 " of %" PRId64 " found, issued %" PRId64 " non-exist keys)\n", found, read,
           nonexist);
  thread->stats.AddMessage(msg);
}

}  // namespace shale::tools
