// Bulk ingestion under failure and against a model: a power loss at every point of an
// ingestion (the fault-injecting Env stops the file system after n more calls) leaves the
// DB as before or fully ingested, and no table file outside the MANIFEST; random writes,
// deletes, flushes, compactions, snapshots, reopens and ingestions (some of files
// overlapping each other) read as a std::map model says (seed printed); and ingestions
// while other threads write and read (run under ThreadSanitizer too).
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "shale/db.h"
#include "tests/testutil/external_files.h"
#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

using Model = std::map<std::string, std::string>;

// Every key and value db holds (at snapshot, when given).
Model ReadAll(DB* db, const Snapshot* snapshot = nullptr) {
  Model m;
  ReadOptions ro;
  ro.snapshot = snapshot;
  std::unique_ptr<Iterator> it(db->NewIterator(ro));
  for (it->SeekToFirst(); it->Valid(); it->Next()) m[it->key().ToString()] = it->value().ToString();
  EXPECT_OK(it->status());
  return m;
}

// The table files in the DB directory are exactly the live ones.
void ExpectOnlyLiveTables(DB* db, Env* env, const std::string& dbname) {
  std::vector<LiveFileMetaData> live;
  db->GetLiveFilesMetaData(&live);
  std::vector<uint64_t> numbers;
  for (const LiveFileMetaData& f : live) numbers.push_back(f.file_number);
  std::sort(numbers.begin(), numbers.end());
  EXPECT_EQ(TableFilesIn(env, dbname), numbers);
}

// One round per point of failure: n more file system calls succeed, then the power goes.
// with_memtable: the file overlaps a key in the memtable, which the ingestion flushes first.
void PowerLossAtEveryStep(bool with_memtable) {
  TempDirectory dir("ingest_crash");
  const std::string dbname = dir.File("db");
  FaultInjectionTestEnv env(Env::Default());
  Options options;
  options.create_if_missing = true;
  options.env = &env;
  options.disable_auto_compactions = true;
  Options writer = options;
  writer.env = Env::Default();  // the external file is the caller's, outside the crash
  const std::string file = dir.File("ext.sst");
  ASSERT_OK(WriteExternalFile(
      writer, file, {PutEntry("b", "file"), PutEntry("k", "file"), PutEntry("x", "file")}));
  Model before = {{"a", "base"}, {"b", "base"}};
  if (with_memtable) before["k"] = "mem";
  const Model after = {{"a", "base"}, {"b", "file"}, {"k", "file"}, {"x", "file"}};
  bool ingested = false;
  for (int n = 0; n < 400 && !ingested; n++) {
    SCOPED_TRACE("power lost after " + std::to_string(n) + " calls");
    ASSERT_OK(DestroyDir(dbname));
    env.ResetState();
    std::unique_ptr<DB> db;
    ASSERT_OK(DB::Open(options, dbname, &db));
    WriteOptions sync;
    sync.sync = true;
    ASSERT_OK(db->Put(sync, "a", "base"));
    ASSERT_OK(db->Put(sync, "b", "base"));
    ASSERT_OK(db->Flush(FlushOptions()));
    if (with_memtable) {
      ASSERT_OK(db->Put(sync, "k", "mem"));
    }

    env.DeactivateAfter(n);
    Status s = db->IngestExternalFile({file}, IngestExternalFileOptions());
    ingested = s.ok();
    env.SetFilesystemActive(false);
    db.reset();
    ASSERT_OK(env.SimulatePowerLoss());
    env.SetFilesystemActive(true);
    env.ResetState();

    s = DB::Open(options, dbname, &db);
    ASSERT_OK(s);
    const Model got = ReadAll(db.get());
    if (ingested) {
      EXPECT_EQ(got, after) << "acknowledged, so durable";
    } else {
      EXPECT_TRUE(got == before || got == after) << "a state between before and after";
    }
    ExpectOnlyLiveTables(db.get(), &env, dbname);
    EXPECT_OK(env.FileExists(file));
  }
  EXPECT_TRUE(ingested) << "the ingestion never got through";
}

TEST(ExternalFileIngestionCrashTest, PowerLossAtEveryStepLeavesBeforeOrAfter) {
  PowerLossAtEveryStep(/*with_memtable=*/false);
}

TEST(ExternalFileIngestionCrashTest, PowerLossWhileFlushingForTheFileLeavesBeforeOrAfter) {
  PowerLossAtEveryStep(/*with_memtable=*/true);
}

// Random operations against a model, with snapshots checked as they were taken.
TEST(ExternalFileIngestionModelTest, MixedWithWritesMatchesAModel) {
  const uint64_t seed = TestSeed();
  Random rnd(static_cast<uint32_t>(seed));
  TempDirectory dir("ingest_model");
  const std::string dbname = dir.File("db");
  Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 16 << 10;
  options.level0_file_num_compaction_trigger = 3;
  options.max_bytes_for_level_base = 64 << 10;
  options.target_file_size_base = 16 << 10;
  std::unique_ptr<DB> db;
  ASSERT_OK(DB::Open(options, dbname, &db));
  Model model;
  std::vector<std::pair<const Snapshot*, Model>> snapshots;
  auto key = [&rnd] { return "k" + std::to_string(rnd.Uniform(300) + 1000); };
  int files = 0;
  const int steps = TestKnob("SHALE_INGEST_MODEL_STEPS", 600);
  for (int step = 0; step < steps; step++) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " step " + std::to_string(step));
    const uint32_t op = rnd.Uniform(100);
    if (op < 45) {
      const std::string k = key(), v = "w" + std::to_string(step);
      ASSERT_OK(db->Put(WriteOptions(), k, v));
      model[k] = v;
    } else if (op < 55) {
      const std::string k = key();
      ASSERT_OK(db->Delete(WriteOptions(), k));
      model.erase(k);
    } else if (op < 75) {
      // One to three files; later ones win where they overlap.
      const int n = 1 + static_cast<int>(rnd.Uniform(3));
      std::vector<std::string> paths;
      Model next = model;
      for (int f = 0; f < n; f++) {
        std::map<std::string, bool> keys;  // key -> put (else delete)
        const int count = 1 + static_cast<int>(rnd.Uniform(20));
        for (int i = 0; i < count; i++) keys[key()] = !rnd.OneIn(4);
        std::vector<ExternalEntry> entries;
        for (const auto& [k, put] : keys) {
          const std::string v = "f" + std::to_string(step) + "." + std::to_string(f);
          entries.push_back(put ? PutEntry(k, v) : DeleteEntry(k));
          if (put) {
            next[k] = v;
          } else {
            next.erase(k);
          }
        }
        paths.push_back(dir.File("f" + std::to_string(files++) + ".sst"));
        ASSERT_OK(WriteExternalFile(options, paths.back(), entries));
      }
      IngestExternalFileOptions o;
      o.move_files = rnd.OneIn(2);
      ASSERT_OK(db->IngestExternalFile(paths, o));
      model = std::move(next);
    } else if (op < 80) {
      ASSERT_OK(db->Flush(FlushOptions()));
    } else if (op < 83) {
      ASSERT_OK(db->CompactRange(CompactRangeOptions(), nullptr, nullptr));
    } else if (op < 90) {
      snapshots.emplace_back(db->GetSnapshot(), model);
    } else if (op < 94 && !snapshots.empty()) {
      const size_t i = rnd.Uniform(static_cast<uint32_t>(snapshots.size()));
      EXPECT_EQ(ReadAll(db.get(), snapshots[i].first), snapshots[i].second);
      db->ReleaseSnapshot(snapshots[i].first);
      snapshots.erase(snapshots.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (op < 96) {
      for (auto& [snap, m] : snapshots) db->ReleaseSnapshot(snap);
      snapshots.clear();
      db.reset();
      ASSERT_OK(DB::Open(options, dbname, &db));
    }
    if (step % 25 == 0 || step == steps - 1) {
      ASSERT_EQ(ReadAll(db.get()), model);
      for (const auto& [k, v] : model) {
        std::string got;
        ASSERT_OK(db->Get(ReadOptions(), k, &got));
        ASSERT_EQ(got, v) << k;
      }
    }
  }
  for (auto& [snap, m] : snapshots) {
    EXPECT_EQ(ReadAll(db.get(), snap), m);
    db->ReleaseSnapshot(snap);
  }
  ASSERT_OK(db->WaitForCompact(WaitForCompactOptions()));
  EXPECT_EQ(ReadAll(db.get()), model);
  ExpectOnlyLiveTables(db.get(), Env::Default(), dbname);
}

// The write modes an ingestion holds writes back in: "ordered" (the default), "pipelined",
// "unordered".
class ExternalFileIngestionConcurrencyTest : public testing::TestWithParam<std::string> {};

// Writers and readers run while files are ingested into the ranges they write: each
// ingested key reads as ingested from the moment its ingestion returns, and every write
// is kept.
TEST_P(ExternalFileIngestionConcurrencyTest, IngestWhileOthersWriteAndRead) {
  TempDirectory dir("ingest_threads");
  const std::string dbname = dir.File("db");
  Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 32 << 10;
  options.enable_pipelined_write = GetParam() == "pipelined";
  options.unordered_write = GetParam() == "unordered";
  std::unique_ptr<DB> db;
  ASSERT_OK(DB::Open(options, dbname, &db));
  constexpr int kWriters = 3;
  constexpr int kKeys = 400;
  const int kFiles = TestKnob("SHALE_INGEST_THREAD_FILES", 12);
  // Writers take even numbers, ingested files odd ones, in the same ranges.
  auto written = [](int t, int i) {
    return "r" + std::to_string(t) + "_" + std::to_string(10000 + 2 * i);
  };
  auto ingested = [](int t, int i) {
    return "r" + std::to_string(t) + "_" + std::to_string(10000 + 2 * i + 1);
  };
  std::atomic<int> files_done{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kKeys; i++) {
        EXPECT_OK(db->Put(WriteOptions(), written(t, i), "w"));
      }
    });
  }
  threads.emplace_back([&] {
    while (!stop.load()) {
      const int done = files_done.load();
      for (int f = 0; f < done; f++) {
        std::string v;
        const int t = f % kWriters;
        const int i = (f / kWriters) * (kKeys / 4);
        Status s = db->Get(ReadOptions(), ingested(t, i), &v);
        EXPECT_TRUE(s.ok() && v == "f") << ingested(t, i) << " " << s.ToString();
      }
    }
  });
  for (int f = 0; f < kFiles; f++) {
    const int t = f % kWriters;
    const int first = (f / kWriters) * (kKeys / 4);
    std::vector<ExternalEntry> entries;
    for (int i = first; i < first + kKeys / 4 && i < kKeys; i++)
      entries.push_back(PutEntry(ingested(t, i), "f"));
    const std::string path = dir.File("t" + std::to_string(f) + ".sst");
    Status s = WriteExternalFile(options, path, entries);
    if (s.ok()) s = db->IngestExternalFile({path}, IngestExternalFileOptions());
    EXPECT_OK(s);
    if (!s.ok()) break;  // the threads are still joined
    files_done.store(f + 1);
  }
  for (int t = 0; t < kWriters; t++) threads[t].join();
  stop.store(true);
  threads.back().join();
  Model all = ReadAll(db.get());
  for (int t = 0; t < kWriters; t++) {
    for (int i = 0; i < kKeys; i++) EXPECT_EQ(all[written(t, i)], "w") << written(t, i);
  }
  for (int f = 0; f < kFiles; f++) {
    const int t = f % kWriters;
    const int first = (f / kWriters) * (kKeys / 4);
    for (int i = first; i < first + kKeys / 4 && i < kKeys; i++)
      EXPECT_EQ(all[ingested(t, i)], "f");
  }
}

INSTANTIATE_TEST_SUITE_P(WriteModes, ExternalFileIngestionConcurrencyTest,
                         testing::Values("ordered", "pipelined", "unordered"));

}  // namespace
}  // namespace shale
