// DBOptions::atomic_flush: a memtable switch takes every family with data, the flush
// writes all their memtables and records them in one MANIFEST write, so that writes made
// without the WAL come back after a power loss as the same prefix in every family. Each
// randomized case prints its seed (SHALE_TEST_SEED replays one).
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "shale/db.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/family_handles.h"
#include "util/random.h"

namespace shale {
namespace {

class DBAtomicFlushTest : public DBTestBase {
 protected:
  static constexpr int kFamilies = 3;  // the default, "one" and "small"
  DBAtomicFlushTest() : DBTestBase("db_atomic_flush") {
    options_.create_missing_column_families = true;
    options_.atomic_flush = true;
    options_.write_buffer_size = 1 << 20;
    options_.level0_file_num_compaction_trigger = 4;
  }
  ~DBAtomicFlushTest() override { CloseAll(); }

  static std::string Name(int f) {
    return f == 0 ? kDefaultColumnFamilyName : (f == 1 ? "one" : "small");
  }

  // Family "small" fills its memtable first: its switches decide when the others' happen.
  void OpenAll() {
    std::vector<ColumnFamilyDescriptor> descs;
    for (int f = 0; f < kFamilies; f++) descs.emplace_back(Name(f), options_);
    descs[2].options.write_buffer_size = 16 << 10;
    ASSERT_OK(ReopenWithFamilies(options_, dbname_, descs, &handles_, &db_));
  }
  void CloseAll() { ReleaseHandles(db_.get(), &handles_); }

  // A new DB with atomic_flush as given; returns write options without the WAL.
  WriteOptions FreshDB(bool atomic) {
    CloseAll();
    options_.atomic_flush = atomic;
    Destroy();
    OpenAll();
    WriteOptions no_wal;
    no_wal.disableWAL = true;
    return no_wal;
  }

  int FilesAtL0(int f) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty(handles_[f], "shale.num-files-at-level0", &v));
    return std::stoi(v);
  }

  std::vector<ColumnFamilyHandle*> handles_;
};

// A full memtable in one family flushes every family with data, not only that one; without
// atomic_flush the others keep their memtables.
TEST_F(DBAtomicFlushTest, AFullMemtableFlushesEveryFamilyWithData) {
  for (bool atomic : {true, false}) {
    SCOPED_TRACE(atomic ? "atomic_flush" : "without atomic_flush");
    const WriteOptions no_wal = FreshDB(atomic);
    ASSERT_OK(db_->Put(no_wal, handles_[0], "a", "in default"));
    ASSERT_OK(db_->Put(no_wal, handles_[1], "a", "in one"));
    const std::string value(1000, 'x');
    for (int i = 0; i < 40; i++) {  // 40 KB into a 16 KB memtable
      ASSERT_OK(db_->Put(no_wal, handles_[2], "k" + std::to_string(i), value));
    }
    ASSERT_OK(db_->Flush(FlushOptions(), handles_[2]));
    EXPECT_GE(FilesAtL0(2), 1);
    EXPECT_EQ(atomic ? 1 : 0, FilesAtL0(0));
    EXPECT_EQ(atomic ? 1 : 0, FilesAtL0(1));
  }
}

// Flush over several families with atomic_flush records them together; after a reopen
// every family has its data, and the families not named keep their memtables.
TEST_F(DBAtomicFlushTest, FlushOfSeveralFamiliesRecordsThemTogether) {
  OpenAll();
  WriteOptions no_wal;
  no_wal.disableWAL = true;
  for (int f = 0; f < kFamilies; f++) ASSERT_OK(db_->Put(no_wal, handles_[f], "k", Name(f)));
  ASSERT_OK(db_->Flush(FlushOptions(), {handles_[0], handles_[2]}));
  EXPECT_EQ(1, FilesAtL0(0));
  EXPECT_EQ(0, FilesAtL0(1));
  EXPECT_EQ(1, FilesAtL0(2));
  OpenAll();  // Close flushes family one too
  for (int f = 0; f < kFamilies; f++) {
    std::string v;
    ASSERT_OK(db_->Get(ReadOptions(), handles_[f], "k", &v));
    EXPECT_EQ(Name(f), v);
  }
}

// CompactRange flushes the family's memtable first; with atomic_flush, as RocksDB's, every
// family with data flushes with it (else one family would be durable past the others).
TEST_F(DBAtomicFlushTest, CompactRangeFlushesEveryFamilyWithData) {
  for (bool atomic : {true, false}) {
    SCOPED_TRACE(atomic ? "atomic_flush" : "without atomic_flush");
    const WriteOptions no_wal = FreshDB(atomic);
    for (int f = 0; f < kFamilies; f++) ASSERT_OK(db_->Put(no_wal, handles_[f], "k", Name(f)));
    ASSERT_OK(db_->CompactRange(CompactRangeOptions(), handles_[1], nullptr, nullptr));
    EXPECT_EQ(atomic ? 1 : 0, FilesAtL0(0));
    EXPECT_EQ(atomic ? 1 : 0, FilesAtL0(2));
  }
}

// Batches across families, written with or without the WAL, while family "small" switches
// every memtable (and Flush over all families now and then); then a power loss. With the
// WAL (synced) every batch survives. Without it, the families come back at one and the
// same batch, no earlier than the last completed Flush: each family's "last" key names it,
// and every key of every family holds that batch's state.
class DBAtomicFlushPowerLossTest : public DBAtomicFlushTest,
                                   public testing::WithParamInterface<std::tuple<bool, int>> {};

TEST_P(DBAtomicFlushPowerLossTest, FamiliesComeBackAtTheSameBatch) {
  const bool with_wal = std::get<0>(GetParam());
  const uint64_t seed = TestSeed();  // printed; SHALE_TEST_SEED replays it
  std::printf("%s\n", with_wal ? "synced WAL" : "no WAL");
  Random rnd(static_cast<uint32_t>(seed));
  FaultInjectionTestEnv* env = UseFaultInjectionEnv();
  OpenAll();
  WriteOptions wo;
  wo.disableWAL = !with_wal;
  wo.sync = with_wal;
  constexpr int kKeys = 40;
  const int steps = 300 + static_cast<int>(rnd.Uniform(200));
  // The file system stops (a power loss's moment) a few calls after this batch, most
  // likely inside a flush.
  const int crash_at = steps / 2 + static_cast<int>(rnd.Uniform(steps / 2));
  int acked = -1;            // the last batch whose Write returned OK
  int flushed_through = -1;  // the last batch before a Flush that returned OK
  for (int step = 0; step < steps; step++) {
    if (step == crash_at) env->DeactivateAfter(static_cast<int>(rnd.Uniform(30)));
    WriteBatch batch;
    const std::string value = std::to_string(step) + std::string(rnd.Uniform(200), 'v');
    for (int f = 0; f < kFamilies; f++) {
      ASSERT_OK(batch.Put(handles_[f], "k" + std::to_string(step % kKeys), value));
      ASSERT_OK(batch.Put(handles_[f], "last", std::to_string(step)));
    }
    if (!db_->Write(wo, &batch).ok()) break;  // only once the file system stopped
    acked = step;
    if (rnd.OneIn(60)) {
      FlushOptions fo;
      fo.wait = rnd.OneIn(2);
      if (db_->Flush(fo, handles_).ok() && fo.wait) flushed_through = step;
    } else if (rnd.OneIn(80)) {
      // Flushes every family too (see CompactRangeFlushesEveryFamilyWithData).
      db_->CompactRange(CompactRangeOptions(), handles_[rnd.Uniform(kFamilies)], nullptr, nullptr)
          .PermitUncheckedError();  // fails once the file system stopped
    }
  }
  ASSERT_GE(acked, crash_at - 1);
  env->DeactivateAfter(-1);  // the countdown may not have run out: stop now, whatever
  ASSERT_OK(CloseInAPowerLoss(env, &handles_, &db_));
  OpenAll();

  std::string last0;
  Status s0 = db_->Get(ReadOptions(), handles_[0], "last", &last0);
  const int last = s0.IsNotFound() ? -1 : std::stoi(last0);
  std::printf("back at batch %d of %d acknowledged (flushed through %d)\n", last, acked,
              flushed_through);
  if (with_wal) {
    // A batch whose sync failed may be there too.
    EXPECT_GE(last, acked);
    EXPECT_LE(last, acked + 1);
  }
  EXPECT_GE(last, flushed_through);
  for (int f = 0; f < kFamilies; f++) {
    SCOPED_TRACE(Name(f));
    std::string v;
    Status s = db_->Get(ReadOptions(), handles_[f], "last", &v);
    if (last < 0) {
      ASSERT_TRUE(s.IsNotFound()) << s.ToString();
    } else {
      ASSERT_OK(s);
      ASSERT_EQ(std::to_string(last), v) << "the families came back at different batches";
    }
    for (int k = 0; k < kKeys; k++) {
      // The newest batch at or before `last` that wrote key k.
      int expect = -1;
      for (int step = last; step >= 0; step--) {
        if (step % kKeys == k) {
          expect = step;
          break;
        }
      }
      s = db_->Get(ReadOptions(), handles_[f], "k" + std::to_string(k), &v);
      if (expect < 0) {
        ASSERT_TRUE(s.IsNotFound()) << "k" << k << " " << s.ToString();
      } else {
        ASSERT_OK(s) << "k" << k;
        ASSERT_EQ(std::to_string(expect), v.substr(0, v.find('v'))) << "k" << k;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(WalAndRounds, DBAtomicFlushPowerLossTest,
                         testing::Combine(testing::Bool(), testing::Range(0, 3)));

// Writers across families, atomic flushes all the time, and a family created, written,
// flushed and dropped meanwhile (for ThreadSanitizer, and for a flush whose family is
// dropped while it runs): every write to a live family succeeds and reads back.
TEST_F(DBAtomicFlushTest, FlushesWhileFamiliesComeAndGo) {
  options_.write_buffer_size = 32 << 10;
  OpenAll();
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; t++) {
    threads.emplace_back([&, t] {
      WriteOptions no_wal;
      no_wal.disableWAL = true;
      for (int i = 0; i < 2000 && errors.load() == 0; i++) {
        WriteBatch batch;
        const std::string k = "t" + std::to_string(t) + "." + std::to_string(i);
        for (int f = 0; f < kFamilies; f++) {
          if (!batch.Put(handles_[f], k, std::string(100, 'v')).ok()) errors++;
        }
        if (!db_->Write(no_wal, &batch).ok()) errors++;
      }
    });
  }
  threads.emplace_back([&] {
    for (int round = 0; round < 15; round++) {
      ColumnFamilyHandle* tmp = nullptr;
      if (!db_->CreateColumnFamily(options_, "tmp", &tmp).ok()) errors++;
      for (int i = 0; i < 300; i++) {
        if (!db_->Put(WriteOptions(), tmp, "k" + std::to_string(i), std::string(100, 't')).ok()) {
          errors++;
        }
      }
      FlushOptions fo;
      fo.wait = false;
      if (!db_->Flush(fo, tmp).ok()) errors++;
      if (!db_->DropColumnFamily(tmp).ok()) errors++;
      if (!db_->DestroyColumnFamilyHandle(tmp).ok()) errors++;
    }
  });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(0, errors.load());
  OpenAll();  // Close flushes what is left
  for (int f = 0; f < kFamilies; f++) {
    std::string v;
    ASSERT_OK(db_->Get(ReadOptions(), handles_[f], "t2.1999", &v));
    ASSERT_OK(db_->Get(ReadOptions(), handles_[f], "t0.777", &v));
  }
}

}  // namespace
}  // namespace shale
