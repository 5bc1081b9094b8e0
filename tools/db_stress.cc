// db_stress: the driver. Draws the DB options from --seed (each may be pinned by its flag)
// and prints them, opens the DB and the expected state, verifies every key, then runs
// --threads workers over the operation table for --ops_per_thread operations or
// --duration seconds, reopening the DB --reopen times along the way (verifying every key
// after each reopen), and verifies again at the end. Exit status 0 means no disagreement
// with the oracle; 1 a failure (printed); 2 bad flags.
//
// With --column_families=N the oracle covers every family's keys (Context in db_stress.h):
// batches span families, and --clear_column_family_one_in now and then drops a family and
// creates it again, empty.
//
// Crash testing: run it again on the same --db and --expected_values_dir after a SIGKILL
// (tools/db_crashtest.py does). --kill_random_test=N kills the process at a random kill
// point inside the engine's file I/O (db_stress_env.h), 1 time in N; --kill_at=<point> lets
// only that point fire. Runs with --disable_wal log their writes so that a restart after a
// crash can check the prefix rule (db_stress_state.h). With --use_txn or
// --use_optimistic_txn every write is a transaction, and a restart resolves the prepared
// ones it finds before it verifies (db_stress_txn.h).
#include "tools/db_stress.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "shale/cache.h"
#include "shale/db.h"
#include "shale/filter_policy.h"
#include "shale/table.h"
#include "shale/utilities/merge_operators.h"
#include "tools/db_stress_env.h"
#include "tools/db_stress_filter.h"
#include "tools/db_stress_prefix.h"
#include "tools/db_stress_txn.h"

#ifndef GFLAGS_NAMESPACE
#define GFLAGS_NAMESPACE google
#endif

DEFINE_string(db, "", "DB directory (required)");
DEFINE_string(expected_values_dir, "",
              "Directory of the expected-state file (default: <db>.expected); keep it with "
              "the DB across crashes");
DEFINE_uint64(seed, 0, "Seed of the drawn options and the operations (0: from the clock)");
DEFINE_int32(threads, 4, "Worker threads");
DEFINE_uint64(max_key, 20000, "Keys are 0 .. max_key-1 (in each column family)");
DEFINE_int32(column_families, 1,
             "Column families: \"default\", \"1\", \"2\", ..., each with --max_key keys; "
             "writes, batches (across families), reads, iterators, flushes and compactions "
             "are spread over them, and the oracle keeps every family's keys. Not with "
             "--disable_wal or transactions");
DEFINE_int32(clear_column_family_one_in, 1000000,
             "With several column families: before an operation, 1 time in N (0: never), drop "
             "a random family other than the default one and create it again, empty, while "
             "no other worker uses it");
DEFINE_uint32(max_value_size, 100, "Longest filler after a value's 8-byte base");
DEFINE_uint64(ops_per_thread, 10000, "Operations per worker (0: until --duration ends)");
DEFINE_int32(duration, 0, "Seconds to run (0: until --ops_per_thread are done)");
DEFINE_int32(reopen, 2, "Times the DB is closed, reopened and verified during the run");
DEFINE_bool(destroy_db_initially, false, "Start from an empty DB and expected state");
DEFINE_int32(log2_keys_per_lock, 2, "Keys per lock stripe, as a power of two");
DEFINE_uint32(kill_random_test, 0, "Kill the process at a kill point 1 time in N (0: never)");
DEFINE_bool(kill_during_recovery, false, "Arm kill points already while the DB opens");
DEFINE_string(kill_at, "",
              "Only this kill point may fire (wal_append, wal_sync, sst_append, sst_sync, "
              "manifest_append, manifest_sync, current_rename, delete)");
DEFINE_uint32(write_log_limit, 0,
              "disable_wal runs: entries after which the write log is emptied after a Flush "
              "(0 or more than three quarters of its capacity: three quarters)");
DEFINE_bool(test_drop_durable_key, false,
            "Test of the checker: at start after a disable_wal run, delete one key whose "
            "value is durable before verifying; the verification must then fail");
DEFINE_bool(test_inject_hole, false,
            "Test of the checker: at start after a crash of a disable_wal run, give one key "
            "back an older value though a later write of another key survived (a hole no "
            "per-key rule sees); the verification must then fail");
DEFINE_bool(strict_recovered_seq, true,
            "disable_wal runs: after a crash the DB must hold every logged write at or "
            "below the sequence it recovered, not only a prefix (db_stress_prefix.h); "
            "false accepts any cut at or below it");

// Options: -1 (or "") draws the value from --seed.
DEFINE_string(compression_type, "", "none, snappy, lz4, zstd");
DEFINE_int64(block_size, -1, "Table block size");
DEFINE_string(filter, "", "none, bloom, ribbon");
DEFINE_int64(cache_size, -1, "Block cache bytes (0: no block cache)");
DEFINE_string(cache_type, "", "lru_cache, hyper_clock_cache");
DEFINE_int32(data_block_hash_index, -1,
             "1: data_block_index_type = kDataBlockBinaryAndHash; 0: kDataBlockBinarySearch");
DEFINE_int64(write_buffer_size, -1, "Memtable bytes");
DEFINE_int64(max_bytes_for_level_base, -1, "L1 target bytes");
DEFINE_int64(target_file_size_base, -1, "SST target bytes");
DEFINE_int32(level0_file_num_compaction_trigger, -1, "L0 compaction trigger");
DEFINE_int32(sync, -1, "WriteOptions::sync");
DEFINE_int32(disable_wal, 0,
             "WriteOptions::disableWAL (-1: drawn). A crash then loses unflushed writes: "
             "the run logs its writes with their sequences, and the next start checks that "
             "the DB holds a prefix of them that keeps every flushed one "
             "(db_stress_prefix.h)");
DEFINE_int32(wal_recovery_mode, -1, "0..3 as WALRecoveryMode (-1: PIT or tolerate-tail)");
DEFINE_int32(allow_concurrent_memtable_write, -1, "Write mode option");
DEFINE_int32(enable_pipelined_write, -1, "Write mode option");
DEFINE_int32(unordered_write, -1, "Write mode option");
DEFINE_int32(two_write_queues, -1, "Write mode option");
DEFINE_int32(mmap_read, -1, "DBOptions::allow_mmap_reads (-1: drawn)");
DEFINE_int32(atomic_flush, -1,
             "DBOptions::atomic_flush with several column families (-1: drawn; always on with "
             "--disable_wal, whose prefix rule needs the families flushed as one)");

namespace shale::stress {
namespace {

// The options and write options for this run, drawn from rnd unless pinned by a flag.
struct Drawn {
  Options options;
  WriteOptions write_options;
  std::string summary;
};

template <typename T>
T Pick(Random* rnd, int64_t flag, std::initializer_list<T> choices) {
  const T drawn = choices.begin()[rnd->Uniform(static_cast<uint32_t>(choices.size()))];
  return flag >= 0 ? static_cast<T>(flag) : drawn;
}

std::string PickName(Random* rnd, const std::string& flag, std::initializer_list<const char*> c) {
  const char* drawn = c.begin()[rnd->Uniform(static_cast<uint32_t>(c.size()))];
  return flag.empty() ? drawn : flag;
}

bool DrawOptions(uint64_t seed, Drawn* d) {
  Random rnd(seed * 2654435761u + 17);
  Options& o = d->options;
  o.create_if_missing = true;
  o.merge_operator = MergeOperators::CreateUInt64AddOperator();
  const std::string compression =
      PickName(&rnd, FLAGS_compression_type, {"none", "snappy", "lz4", "zstd"});
  if (compression == "none") {
    o.compression = kNoCompression;
  } else if (compression == "snappy") {
    o.compression = kSnappyCompression;
  } else if (compression == "lz4") {
    o.compression = kLZ4Compression;
  } else if (compression == "zstd") {
    o.compression = kZSTD;
  } else {
    fprintf(stderr, "db_stress: unknown --compression_type %s\n", compression.c_str());
    return false;
  }
  if (!CompressionTypeSupported(o.compression)) o.compression = kNoCompression;
  BlockBasedTableOptions t;
  t.block_size = Pick<size_t>(&rnd, FLAGS_block_size, {256, 1024, 4096, 16384});
  const std::string filter = PickName(&rnd, FLAGS_filter, {"none", "bloom", "ribbon"});
  if (filter == "bloom") t.filter_policy.reset(NewBloomFilterPolicy(10));
  if (filter == "ribbon") t.filter_policy.reset(NewRibbonFilterPolicy(10));
  const int64_t cache = Pick<int64_t>(&rnd, FLAGS_cache_size, {0, 64 << 10, 1 << 20, 8 << 20});
  if (cache == 0) {
    t.no_block_cache = true;
  } else {
    t.block_cache = NewLRUCache(static_cast<size_t>(cache));
  }
  t.cache_index_and_filter_blocks = rnd.OneIn(2);
  o.write_buffer_size =
      Pick<size_t>(&rnd, FLAGS_write_buffer_size, {64 << 10, 256 << 10, 1 << 20, 4 << 20});
  o.max_bytes_for_level_base =
      Pick<uint64_t>(&rnd, FLAGS_max_bytes_for_level_base, {256 << 10, 1 << 20, 10 << 20});
  o.target_file_size_base =
      Pick<uint64_t>(&rnd, FLAGS_target_file_size_base, {64 << 10, 256 << 10, 2 << 20});
  o.level0_file_num_compaction_trigger =
      Pick<int>(&rnd, FLAGS_level0_file_num_compaction_trigger, {2, 4, 8});
  o.wal_recovery_mode = Pick<WALRecoveryMode>(
      &rnd, FLAGS_wal_recovery_mode,
      {WALRecoveryMode::kPointInTimeRecovery, WALRecoveryMode::kTolerateCorruptedTailRecords});
  // One write mode, unless the flags pin some of its options.
  const int mode = static_cast<int>(rnd.Uniform(5));  // default, serial, pipelined, unordered, 2q
  o.allow_concurrent_memtable_write =
      Pick<bool>(&rnd, FLAGS_allow_concurrent_memtable_write, {mode != 1});
  o.enable_pipelined_write = Pick<bool>(&rnd, FLAGS_enable_pipelined_write, {mode == 2});
  // TransactionDB takes unordered_write only under WRITE_PREPARED with two write queues,
  // as RocksDB's does.
  const bool write_prepared = FLAGS_use_txn && FLAGS_txn_write_policy == 1;  // WRITE_PREPARED
  o.unordered_write =
      Pick<bool>(&rnd, FLAGS_unordered_write, {mode == 3 && (!FLAGS_use_txn || write_prepared)});
  o.two_write_queues =
      Pick<bool>(&rnd, FLAGS_two_write_queues, {mode == 4 || (write_prepared && mode == 3)});
  d->write_options.sync = Pick<bool>(&rnd, FLAGS_sync, {false, false, false, true});
  d->write_options.disableWAL = Pick<bool>(&rnd, FLAGS_disable_wal, {false, false, false, true});
  // Transactions keep the WAL: two-phase commit lives in it, and the prefix rule of runs
  // without it has no notion of a transaction.
  if (FLAGS_use_txn || FLAGS_use_optimistic_txn) d->write_options.disableWAL = false;
  // The compaction filter keeps the WAL too (db_stress_filter.h).
  if (FLAGS_enable_compaction_filter) d->write_options.disableWAL = false;
  if (d->write_options.disableWAL) d->write_options.sync = false;

  // Drawn last, so that the draws above stay what they were for a given seed.
  const std::string cache_type =
      PickName(&rnd, FLAGS_cache_type, {"lru_cache", "hyper_clock_cache"});
  const bool hash_index = Pick<bool>(&rnd, FLAGS_data_block_hash_index, {false, true});
  if (cache != 0 && cache_type == "hyper_clock_cache") {
    t.block_cache = NewHyperClockCache(static_cast<size_t>(cache), t.block_size);
  } else if (cache_type != "lru_cache" && cache_type != "hyper_clock_cache") {
    fprintf(stderr, "db_stress: unknown --cache_type %s\n", cache_type.c_str());
    return false;
  }
  if (hash_index) t.data_block_index_type = BlockBasedTableOptions::kDataBlockBinaryAndHash;
  o.table_factory.reset(NewBlockBasedTableFactory(t));
  o.allow_mmap_reads = Pick<bool>(&rnd, FLAGS_mmap_read, {false, true});
  if (FLAGS_column_families > 1) {
    o.atomic_flush = Pick<bool>(&rnd, FLAGS_atomic_flush, {false, true});
    if (d->write_options.disableWAL) o.atomic_flush = true;
  }

  char buf[1024];
  snprintf(buf, sizeof(buf),
           "--compression_type=%s --block_size=%zu --filter=%s --cache_size=%lld "
           "--write_buffer_size=%zu --max_bytes_for_level_base=%llu "
           "--target_file_size_base=%llu --level0_file_num_compaction_trigger=%d "
           "--wal_recovery_mode=%d --allow_concurrent_memtable_write=%d "
           "--enable_pipelined_write=%d --unordered_write=%d --two_write_queues=%d --sync=%d "
           "--disable_wal=%d --cache_type=%s --data_block_hash_index=%d --mmap_read=%d "
           "--atomic_flush=%d --enable_compaction_filter=%d (cache_index_and_filter_blocks=%d)",
           compression.c_str(), t.block_size, filter.c_str(), static_cast<long long>(cache),
           o.write_buffer_size, static_cast<unsigned long long>(o.max_bytes_for_level_base),
           static_cast<unsigned long long>(o.target_file_size_base),
           o.level0_file_num_compaction_trigger, static_cast<int>(o.wal_recovery_mode),
           o.allow_concurrent_memtable_write, o.enable_pipelined_write, o.unordered_write,
           o.two_write_queues, d->write_options.sync, d->write_options.disableWAL,
           cache_type.c_str(), hash_index, o.allow_mmap_reads, o.atomic_flush,
           FLAGS_enable_compaction_filter, t.cache_index_and_filter_blocks);
  d->summary = buf;
  return true;
}

void Worker(Context* ctx, ThreadState* t, uint64_t ops, std::chrono::steady_clock::time_point end,
            std::vector<uint64_t>* counts) {
  const OpKind* table = OpTable();
  int64_t total = 0;
  for (const OpKind* k = table; k->name != nullptr; k++) total += std::max(0, *k->weight);
  if (total == 0) return;
  for (uint64_t i = 0; (ops == 0 || i < ops) && !ctx->stop.load(); i++) {
    if (FLAGS_duration > 0 && (i & 63) == 0 && std::chrono::steady_clock::now() >= end) break;
    int64_t r = t->rnd.Uniform(static_cast<uint32_t>(total));
    const OpKind* k = table;
    for (; r >= std::max(0, *k->weight); k++) r -= std::max(0, *k->weight);
    if (ctx->cfs.size() > 1 && FLAGS_clear_column_family_one_in > 0 &&
        t->rnd.OneIn(FLAGS_clear_column_family_one_in) && !ClearColumnFamily(ctx, t)) {
      return;
    }
    if (!DrainSnapshots(ctx, t, false) || !k->run(ctx, t)) return;
    (*counts)[k - table]++;
    t->ops_done++;
  }
  DrainSnapshots(ctx, t, true);
}

// --test_drop_durable_key: deletes (without the WAL, then flushed) the first key whose
// value is durable and set, with no later write logged and none in flight, so that the
// prefix rule must report a hole.
bool DropDurableKey(Context* ctx) {
  ExpectedState* state = ctx->state;
  std::vector<bool> touched(ctx->max_key, false);
  for (uint32_t pos = 0; pos < state->log_count(); pos++) {
    uint64_t key, seq;
    uint32_t word;
    if (state->ReadLog(pos, &key, &word, &seq) && seq > state->durable_seq()) {
      touched[key] = true;
    }
  }
  for (uint64_t key = 0; key < ctx->max_key; key++) {
    if (touched[key] || state->pending(key) != 0 || state->committed(key) == 0) continue;
    WriteOptions wo;
    wo.disableWAL = true;
    Status s = ctx->db->Delete(wo, KeyString(key));
    if (s.ok()) s = ctx->db->Flush(FlushOptions());
    if (!s.ok()) return Fail(ctx, "test_drop_durable_key: " + s.ToString());
    printf("db_stress: test: deleted durable key %s\n", KeyString(key).c_str());
    return true;
  }
  return Fail(ctx, "test_drop_durable_key: no durable key to delete");
}

// --test_inject_hole: writes back an older value of one key, chosen so that the DB is no
// longer any prefix of the history (PrefixCheck::FindHole), though each key still holds
// a value it held at some point after the last Flush.
bool InjectHole(Context* ctx) {
  std::vector<uint32_t> held(ctx->max_key, 0);
  for (uint64_t key = 0; key < ctx->max_key; key++) {
    std::string value;
    Status s = ctx->db->Get(ReadOptions(), KeyString(key), &value);
    bool parsed = true;
    if (s.ok()) held[key] = ParseValue(key, value, ctx->max_value_size, &parsed);
    if (!parsed || !(s.ok() || s.IsNotFound())) return true;  // the verification reports it
  }
  PrefixCheck check(*ctx->state);
  uint64_t key;
  uint32_t older;
  // +1: the write below takes the next sequence, which the verification then counts.
  if (!check.FindHole(held, ctx->db->GetLatestSequenceNumber() + 1, &key, &older)) {
    return Fail(ctx, "test_inject_hole: no write to take away (" + std::to_string(check.writes()) +
                         " logged writes)");
  }
  WriteOptions wo;
  wo.disableWAL = true;
  const std::string k = KeyString(key);
  Status s = older == 0 ? ctx->db->Delete(wo, k)
                        : ctx->db->Put(wo, k, ValueString(key, older, ctx->max_value_size));
  if (!s.ok()) return Fail(ctx, "test_inject_hole: " + s.ToString());
  printf("db_stress: test: %s set back to %s, its value before its newest surviving write\n",
         k.c_str(), Describe(older).c_str());
  return true;
}

int Run() {
  if (FLAGS_db.empty()) {
    fprintf(stderr, "db_stress: --db is required\n");
    return 2;
  }
  if (FLAGS_max_key == 0 || FLAGS_threads < 1 || FLAGS_reopen < 0) {
    fprintf(stderr, "db_stress: --max_key and --threads must be positive, --reopen >= 0\n");
    return 2;
  }
  const bool txn = FLAGS_use_txn || FLAGS_use_optimistic_txn;
  if (FLAGS_use_txn && FLAGS_use_optimistic_txn) {
    fprintf(stderr, "db_stress: --use_txn and --use_optimistic_txn exclude each other\n");
    return 2;
  }
  if (txn && (FLAGS_disable_wal == 1 || FLAGS_threads > ExpectedState::kTxnSlots)) {
    fprintf(stderr, "db_stress: transactions need the WAL and at most %d --threads\n",
            ExpectedState::kTxnSlots);
    return 2;
  }
  if (!txn) FLAGS_txn_rmw_weight = 0;
  // Writes go through transactions there, which take no range deletion (RocksDB refuses
  // one in a pessimistic transaction; its crash test turns DeleteRange off for them).
  if (FLAGS_delrangepercent < 0 || FLAGS_range_deletion_width < 1 ||
      (txn && FLAGS_delrangepercent > 0)) {
    fprintf(stderr,
            "db_stress: --delrangepercent must be >= 0 (0 with transactions), "
            "--range_deletion_width >= 1\n");
    return 2;
  }
  if (FLAGS_column_families < 1 || FLAGS_clear_column_family_one_in < 0) {
    fprintf(stderr,
            "db_stress: --column_families must be positive, --clear_column_family_one_in "
            ">= 0\n");
    return 2;
  }
  const bool families = FLAGS_column_families > 1;
  // The transaction layer opens the default family only so far. Without the WAL, a crash
  // leaves one prefix of the history across families only if they flush as one
  // (atomic_flush, then set), and a family dropped would take its writes out of it.
  if (families && txn) {
    fprintf(stderr, "db_stress: --column_families > 1 runs without transactions\n");
    return 2;
  }
  if (families && FLAGS_disable_wal == 1 && FLAGS_clear_column_family_one_in != 0) {
    fprintf(stderr,
            "db_stress: --disable_wal with --column_families > 1 needs "
            "--clear_column_family_one_in=0\n");
    return 2;
  }
  if (families && FLAGS_disable_wal != 1) FLAGS_disable_wal = 0;
  if (FLAGS_max_key * static_cast<uint64_t>(FLAGS_column_families) > UINT32_MAX) {
    fprintf(stderr, "db_stress: --max_key times --column_families must fit in 32 bits\n");
    return 2;
  }
  const uint64_t seed =
      FLAGS_seed != 0
          ? FLAGS_seed
          : static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  Drawn drawn;
  if (!DrawOptions(seed, &drawn)) return 2;
  const std::string expected_dir =
      FLAGS_expected_values_dir.empty() ? FLAGS_db + ".expected" : FLAGS_expected_values_dir;
  const std::string family_flags =
      families
          ? " --column_families=" + std::to_string(FLAGS_column_families) +
                " --clear_column_family_one_in=" + std::to_string(FLAGS_clear_column_family_one_in)
          : "";
  printf("db_stress: --seed=%llu --threads=%d --max_key=%llu%s %s %s\n",
         static_cast<unsigned long long>(seed), FLAGS_threads,
         static_cast<unsigned long long>(FLAGS_max_key), family_flags.c_str(),
         drawn.summary.c_str(), TxnSummary().c_str());
  fflush(stdout);

  KillPoint only = KillPoint::kNone;
  if (!FLAGS_kill_at.empty() && !ParseKillPoint(FLAGS_kill_at, &only)) {
    fprintf(stderr, "db_stress: unknown --kill_at %s\n", FLAGS_kill_at.c_str());
    return 2;
  }
  KillPointEnv env(Env::Default(), FLAGS_kill_random_test, seed, only);
  drawn.options.env = &env;
  if (FLAGS_destroy_db_initially) {
    Status s = DestroyDB(FLAGS_db, Options());
    if (!s.ok()) fprintf(stderr, "db_stress: DestroyDB: %s\n", s.ToString().c_str());
  }
  std::unique_ptr<ExpectedState> state;
  const uint64_t max_key = FLAGS_max_key * static_cast<uint64_t>(FLAGS_column_families);
  Status s =
      ExpectedState::Open(expected_dir, max_key, static_cast<uint32_t>(FLAGS_column_families),
                          FLAGS_destroy_db_initially, &state);
  if (!s.ok()) {
    fprintf(stderr, "db_stress: expected state: %s\n", s.ToString().c_str());
    return 1;
  }
  KeyLocks locks(max_key, FLAGS_log2_keys_per_lock);
  Context ctx;
  std::shared_ptr<StressFilterFactory> filter_factory;
  if (FLAGS_enable_compaction_filter) {
    // A snapshot could read what the filter removed (db_stress_filter.h).
    FLAGS_snapshot_weight = 0;
    filter_factory = std::make_shared<StressFilterFactory>(&ctx);
    ctx.filter_factory = filter_factory.get();
    drawn.options.compaction_filter_factory = filter_factory;
  }
  ctx.state = state.get();
  ctx.locks = &locks;
  ctx.max_key = max_key;
  ctx.keys_per_family = FLAGS_max_key;
  if (families) {
    ctx.cf_mu = std::make_unique<SharedMutex[]>(FLAGS_column_families);
    ctx.cf_generation = std::make_unique<std::atomic<uint64_t>[]>(FLAGS_column_families);
    ctx.cf_options = ColumnFamilyOptions(drawn.options);
  }
  ctx.max_value_size = FLAGS_max_value_size;
  ctx.write_options = drawn.write_options;
  ctx.strict_recovered_seq = FLAGS_strict_recovered_seq;
  ctx.log_limit = ExpectedState::kLogCapacity / 4 * 3;
  if (FLAGS_write_log_limit > 0) ctx.log_limit = std::min(ctx.log_limit, FLAGS_write_log_limit);

  std::unique_ptr<DB> db;
  // The family handles go before the DB does, however the run ends.
  auto close = [&]() -> Status {
    Status cs;
    if (families) {
      for (ColumnFamilyHandle* h : ctx.cfs) {
        if (h != nullptr && db != nullptr) {
          Status ds = db->DestroyColumnFamilyHandle(h);
          if (cs.ok()) cs = ds;
        }
      }
    }
    ctx.cfs.clear();
    if (db != nullptr) {
      Status ds = db->Close();
      if (cs.ok()) cs = ds;
    }
    db.reset();
    ctx.db = nullptr;
    return cs;
  };
  struct CloseAtExit {
    std::function<Status()> close;
    ~CloseAtExit() { close().PermitUncheckedError(); }
  } close_at_exit{close};
  // The first open follows whatever ended the last run, perhaps a crash of a run without
  // the WAL; later ones follow a clean Close, after which every acknowledged write is in.
  bool after_crash = true;
  auto open = [&]() -> bool {
    env.SetEnabled(FLAGS_kill_during_recovery);
    ctx.cfs.clear();
    Status os = OpenStressDB(drawn.options, FLAGS_db, &ctx, &db);
    if (!os.ok()) return Fail(&ctx, "Open: " + os.ToString());
    ctx.db = db.get();
    if (!families) ctx.cfs = {db->DefaultColumnFamily()};
    for (size_t f = 0; filter_factory != nullptr && f < ctx.cfs.size(); f++) {
      filter_factory->SetFamily(ctx.cfs[f]->GetID(), f);
    }
    // Before anything reads: the prepared transactions of a dead run, resolved as it meant to.
    if (!ResolvePrepared(&ctx)) return false;
    const bool prefix = after_crash && state->prefix_mode();
    if (prefix && FLAGS_test_drop_durable_key && !DropDurableKey(&ctx)) return false;
    if (prefix && FLAGS_test_inject_hole && !InjectHole(&ctx)) return false;
    if (!VerifyAll(&ctx, prefix)) return false;
    after_crash = false;
    state->SetPrefixMode(ctx.write_options.disableWAL);
    ctx.log_writes = ctx.write_options.disableWAL;
    env.SetEnabled(true);
    return true;
  };
  if (!open()) return 1;

  const OpKind* table = OpTable();
  size_t kinds = 0;
  while (table[kinds].name != nullptr) kinds++;
  std::vector<std::vector<uint64_t>> counts(FLAGS_threads, std::vector<uint64_t>(kinds, 0));
  std::vector<ThreadState> threads(FLAGS_threads);
  for (int i = 0; i < FLAGS_threads; i++) {
    threads[i].id = i;
    threads[i].rnd = Random(seed + 1000003ull * (i + 1));
    // Names differ from those of earlier runs, whose prepared transactions a restart resolves.
    threads[i].txn_serial = threads[i].rnd.Next();
  }
  const auto start = std::chrono::steady_clock::now();
  const int phases = FLAGS_reopen + 1;
  for (int phase = 0; phase < phases && !ctx.failed.load(); phase++) {
    const auto end = start + std::chrono::seconds(FLAGS_duration) * (phase + 1) / phases;
    const uint64_t ops = FLAGS_ops_per_thread / phases;
    std::vector<std::thread> workers;
    for (int i = 0; i < FLAGS_threads; i++) {
      workers.emplace_back(Worker, &ctx, &threads[i], ops, end, &counts[i]);
    }
    for (auto& w : workers) w.join();
    if (ctx.failed.load()) break;
    if (phase + 1 < phases) {
      s = close();
      if (!s.ok()) {
        Fail(&ctx, "Close: " + s.ToString());
        break;
      }
      if (!open()) break;
    }
  }
  // The verification folds what the DB holds into the oracle's base and empties the write
  // log; without the WAL that is durable only once flushed. Flushing first means a kill
  // inside Close (whitebox) finds nothing unflushed, and a kill inside this Flush still
  // finds the log that accepts its outcome.
  if (!ctx.failed.load() && ctx.log_writes) {
    const SequenceNumber published = db->GetLatestSequenceNumber();
    s = FlushEveryFamily(&ctx);
    if (s.ok()) {
      state->AdvanceDurable(published);
    } else {
      Fail(&ctx, "Flush before the last verification: " + s.ToString());
    }
  }
  if (!ctx.failed.load() && VerifyAll(&ctx, false)) {
    s = close();
    if (!s.ok()) Fail(&ctx, "Close: " + s.ToString());
  }
  uint64_t total = 0;
  std::string line;
  for (size_t k = 0; k < kinds; k++) {
    uint64_t n = 0;
    for (const auto& c : counts) n += c[k];
    total += n;
    line += std::string(" ") + table[k].name + "=" + std::to_string(n);
  }
  if (txn) line += TxnCounts(ctx);
  if (families) line += " clear_column_family=" + std::to_string(ctx.cf_clears.load());
  if (filter_factory != nullptr) {
    line += "; compaction filter removed " + std::to_string(filter_factory->removed()) + " (kept " +
            std::to_string(filter_factory->busy()) + " with their lock busy)";
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (ctx.seq_writes.load() > 0) {
    line += "; sequences of " + std::to_string(ctx.seq_writes.load()) + " logged writes, " +
            std::to_string(ctx.seq_searches.load()) + " searched for (" +
            std::to_string(ctx.seq_reads.load()) + " reads)";
  }
  printf("db_stress: %llu operations in %.1f s:%s; %s\n", static_cast<unsigned long long>(total),
         secs, line.c_str(), ctx.failed.load() ? "FAILED" : "no failures");
  return ctx.failed.load() ? 1 : 0;
}

}  // namespace
}  // namespace shale::stress

int main(int argc, char** argv) {
  GFLAGS_NAMESPACE::SetUsageMessage("db_stress --db=<dir> [--expected_values_dir=<dir>] ...");
  GFLAGS_NAMESPACE::ParseCommandLineFlags(&argc, &argv, true);
  return shale::stress::Run();
}
