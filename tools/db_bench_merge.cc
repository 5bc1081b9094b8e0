// The merge-operator workloads of db_bench: blind read-modify-writes through DB::Merge
// (mergerandom), merges mixed with reads (readrandommergerandom, readwhilemerging,
// seekrandomwhilemerging), and reading operands back with DB::GetMergeOperands
// (readrandomoperands, getmergeoperands). Which keys are picked, what is counted and the
// messages follow RocksDB db_bench's benchmarks of the same names, so that one command line
// measures the same thing with either binary.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/db_bench.h"
#include "tools/db_bench_flags.h"

namespace shale::tools {

namespace {

// The numbers of a comma-separated list of non-negative decimals ("1,2,3"), in *out.
void ParseNumberList(const Slice& list, std::vector<int>* out) {
  out->clear();
  int n = 0;
  bool in_number = false;
  for (size_t i = 0; i < list.size(); i++) {
    const char c = list[i];
    if (c >= '0' && c <= '9') {
      n = n * 10 + (c - '0');
      in_number = true;
    } else if (in_number) {
      out->push_back(n);
      n = 0;
      in_number = false;
    }
  }
  if (in_number) out->push_back(n);
}

double SecondsSince(uint64_t start_micros) { return (NowMicros() - start_micros) * 1e-6; }

}  // namespace

void Benchmark::MergeRandom(ThreadState* thread) {
  // Each operation is one Merge of a value_size_ operand (with uint64add and
  // --value_size=8: an 8-byte counter increment) on one of merge_keys_ keys.
  Duration duration(FLAGS_duration, readwrites_);
  RandomGenerator gen(FLAGS_compression_ratio, static_cast<size_t>(value_size_));
  std::string key;
  int64_t bytes = 0;
  while (!duration.Done(1)) {
    const uint64_t n = thread->rand() % static_cast<uint64_t>(merge_keys_);
    MakeKey(n, &key);
    const Slice operand = gen.Generate(static_cast<size_t>(value_size_));
    Status s = db_->Merge(write_options_, FamilyOf(static_cast<int64_t>(n)), key, operand);
    if (!s.ok()) Fail("merge", s);
    bytes += static_cast<int64_t>(key.size() + operand.size());
    thread->stats.FinishedOps(1, OpType::kMerge);
  }
  char msg[100];
  snprintf(msg, sizeof(msg), "( updates:%" PRId64 ")", readwrites_);
  thread->stats.AddBytes(bytes);
  thread->stats.AddMessage(msg);
}

void Benchmark::ReadRandomMergeRandom(ThreadState* thread) {
  // Each operation picks a key among merge_keys_, then merges into it with probability
  // mergereadpercent% and otherwise reads it (folding its operands).
  Duration duration(FLAGS_duration, readwrites_);
  RandomGenerator gen(FLAGS_compression_ratio, static_cast<size_t>(value_size_));
  std::string key;
  std::string value;
  int64_t reads = 0;
  int64_t merges = 0;
  int64_t hits = 0;
  size_t max_length = 0;
  while (!duration.Done(1)) {
    MakeKey(thread->rand() % static_cast<uint64_t>(merge_keys_), &key);
    const bool merge = static_cast<int>(thread->rand() % 100) < FLAGS_mergereadpercent;
    if (merge) {
      Status s = db_->Merge(write_options_, key, gen.Generate(static_cast<size_t>(value_size_)));
      if (!s.ok()) Fail("merge", s);
      merges++;
      thread->stats.FinishedOps(1, OpType::kMerge);
    } else {
      Status s = db_->Get(read_options_, key, &value);
      if (s.ok()) {
        hits++;
        max_length = std::max(max_length, value.size());
      } else if (!s.IsNotFound()) {
        Fail("get", s);
      }
      reads++;
      thread->stats.FinishedOps(1, OpType::kRead);
    }
  }
  char msg[160];
  snprintf(msg, sizeof(msg),
           "(reads:%" PRId64 " merges:%" PRId64 " total:%" PRId64 " hits:%" PRId64
           " maxlength:%zu)",
           reads, merges, readwrites_, hits, max_length);
  thread->stats.AddMessage(msg);
}

void Benchmark::ReadWhileMerging(ThreadState* thread) {
  if (thread->tid > 0) {
    ReadRandom(thread);
  } else {
    BGWriter(thread, /*merge=*/true);
  }
}

void Benchmark::SeekRandomWhileMerging(ThreadState* thread) {
  if (thread->tid > 0) {
    SeekRandom(thread);
  } else {
    BGWriter(thread, /*merge=*/true);
  }
}

Status Benchmark::GetAllOperands(ColumnFamilyHandle* cf, const Slice& key,
                                 std::vector<PinnableSlice>* slots, int* count) {
  GetMergeOperandsOptions options;
  Status s;
  // Incomplete: the key has more operands than there are slots (*count says how many).
  // Make room for all of them (with headroom: other threads may be merging into the key
  // meanwhile) and read again, as an application would.
  for (int attempt = 0; attempt < 64; attempt++) {
    options.expected_max_number_of_operands = static_cast<int>(slots->size());
    s = db_->GetMergeOperands(read_options_, cf, key, slots->data(), &options, count);
    if (!s.IsIncomplete()) break;
    slots->resize(static_cast<size_t>(*count) * 2);
  }
  return s;
}

Status Benchmark::ReadOperands(ColumnFamilyHandle* cf, const Slice& key,
                               std::vector<PinnableSlice>* slots, int64_t* bytes) {
  int count = 0;
  Status s = GetAllOperands(cf, key, slots, &count);
  const size_t filled = std::min(slots->size(), static_cast<size_t>(std::max(count, 0)));
  for (size_t i = 0; i < filled; i++) {
    if (s.ok()) *bytes += static_cast<int64_t>((*slots)[i].size());
    (*slots)[i].Reset();
  }
  return s;
}

void Benchmark::GetMergeOperandLists(ThreadState* /*thread*/) {
  // One key gets 999 operands, each a comma-separated list of the 99 numbers between two
  // multiples of 100 (1..99, 101..199, ...). Then the time to find the number 1 two ways:
  // Get folds everything into one list (with stringappend: all the numbers, in order)
  // that is parsed and binary-searched; GetMergeOperands returns the lists as they were
  // written, searched one by one until the number turns up (in the first). The time of
  // the whole benchmark, merges included, is its one operation. Meant for
  // --merge_operator=stringappend (RocksDB's runs it with its sortlist operator, whose
  // Get result is the same sorted list).
  constexpr int kNumbers = 100000;
  constexpr int kPerList = 100;
  constexpr int kLookup = 1;
  const std::string key = "my_key";
  std::string list;
  for (int i = 1; i < kNumbers; i++) {
    if (i % kPerList != 0) {
      list.append(std::to_string(i)).push_back(',');
      continue;
    }
    list.pop_back();  // the last ','
    Status s = db_->Merge(WriteOptions(), key, list);
    if (!s.ok()) Fail("merge", s);
    list.clear();
  }

  std::vector<int> numbers;
  fprintf(stdout, "--- Get API call --- \n");
  PinnableSlice whole;
  uint64_t start = NowMicros();
  Status s = db_->Get(ReadOptions(), db_->DefaultColumnFamily(), key, &whole);
  if (!s.ok()) Fail("get", s);
  ParseNumberList(whole, &numbers);
  bool found = std::binary_search(numbers.begin(), numbers.end(), kLookup);
  const double get_seconds = SecondsSince(start);
  fprintf(stdout, "Found key? %d\n", found ? 1 : 0);
  fprintf(stdout, "Get: %g seconds\n", get_seconds);
  fprintf(stdout, "Sample data from Get API call: %s\n", whole.ToString().substr(0, 10).c_str());

  fprintf(stdout, "--- GetMergeOperands API --- \n");
  std::vector<PinnableSlice> operands(kNumbers / kPerList + 1);
  start = NowMicros();
  int count = 0;
  // More than 999 operands when the key was written before (an existing DB, or several
  // threads): RocksDB's would stop at Incomplete; this one reads them all.
  s = GetAllOperands(db_->DefaultColumnFamily(), key, &operands, &count);
  if (!s.ok()) Fail("GetMergeOperands", s);
  found = false;
  for (int i = 0; i < count && !found; i++) {
    ParseNumberList(operands[static_cast<size_t>(i)], &numbers);
    found = std::binary_search(numbers.begin(), numbers.end(), kLookup);
  }
  const double operands_seconds = SecondsSince(start);
  fprintf(stdout, "Found key? %d\n", found ? 1 : 0);
  fprintf(stdout, "Get Merge operands: %g seconds \n", operands_seconds);
  fprintf(stdout, "Sample data from GetMergeOperands API call: %d operands", count);
  for (int i = 0; i < std::min(count, 4); i++) {
    fprintf(stdout, "%s %s...", i == 0 ? ":" : ",",
            operands[static_cast<size_t>(i)].ToString().substr(0, 10).c_str());
  }
  fprintf(stdout, "\n");
}

}  // namespace shale::tools
