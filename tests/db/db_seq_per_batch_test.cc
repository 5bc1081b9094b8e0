// The write path numbered per sub-batch (seq_per_batch, the WritePrepared write policy's):
// how a batch splits into sub-batches, that the memtable and recovery number its records
// alike, prepares going to the memtable and coming back from the WAL, commits that only
// take a number, PreReleaseCallback running before its numbers are published, and, with
// two write queues, only the second queue's commits publishing (checked with many threads).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "db/db_impl.h"
#include "db/sub_batch.h"
#include "db/write_batch_internal.h"
#include "shale/db.h"
#include "shale/statistics.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

uint64_t SubBatches(const std::vector<std::string>& keys) {
  SubBatchSplitter splitter;
  for (const std::string& k : keys) splitter.StartsNew(k);
  return splitter.sub_batches();
}

TEST(SubBatchSplitterTest, AKeySeenInTheCurrentSubBatchStartsTheNext) {
  EXPECT_EQ(1u, SubBatches({}));
  EXPECT_EQ(1u, SubBatches({"a"}));
  EXPECT_EQ(1u, SubBatches({"a", "b", "c"}));
  EXPECT_EQ(2u, SubBatches({"a", "a"}));
  EXPECT_EQ(2u, SubBatches({"a", "b", "a"}));
  EXPECT_EQ(3u, SubBatches({"a", "a", "a"}));
  // The second "a" starts {a, b}; the second "b" repeats within it.
  EXPECT_EQ(3u, SubBatches({"a", "b", "a", "b", "c", "b"}));
  // Only the current sub-batch counts: "a" after a split is new again.
  EXPECT_EQ(2u, SubBatches({"a", "b", "b", "a"}));
  EXPECT_EQ(2u, SubBatches({"", "x", ""}));
}

// Random batches over a few keys of mixed lengths (so that sub-batches both stay small
// and grow past the inline array), against a model that keeps the current sub-batch in a
// std::set.
TEST(SubBatchSplitterTest, MatchesAModelOnRandomBatches) {
  const uint64_t seed = TestSeed();
  Random rnd(static_cast<uint32_t>(seed));
  for (int round = 0; round < 2000; round++) {
    const int distinct = 1 + static_cast<int>(rnd.Uniform(round % 2 == 0 ? 8 : 200));
    std::vector<std::string> pool;
    for (int i = 0; i < distinct; i++) {
      // Lengths 0..20, sharing long prefixes and suffixes, so that only a full comparison
      // tells some of them apart.
      std::string k(rnd.Uniform(21), 'p');
      if (!k.empty())
        k[rnd.Uniform(static_cast<uint32_t>(k.size()))] = static_cast<char>('a' + i % 26);
      if (k.size() > 1) k[k.size() / 2] = static_cast<char>('A' + i / 26 % 26);
      pool.push_back(k);
    }
    SubBatchSplitter splitter;
    std::set<std::string> current;
    uint64_t expected = 1;
    const int records = static_cast<int>(rnd.Uniform(300));
    for (int r = 0; r < records; r++) {
      const std::string& k = pool[rnd.Uniform(static_cast<uint32_t>(pool.size()))];
      const bool repeated = current.count(k) != 0;
      if (repeated) {
        current.clear();
        expected++;
      }
      current.insert(k);
      ASSERT_EQ(repeated, splitter.StartsNew(k)) << "round " << round << " record " << r;
    }
    ASSERT_EQ(expected, splitter.sub_batches()) << "round " << round;
  }
}

// Records what each write's callback saw, and whether its numbers were already published
// when it ran (they must not be).
class RecordingCallback : public PreReleaseCallback {
 public:
  explicit RecordingCallback(DBImpl* db) : db_(db) {}
  void Callback(SequenceNumber first_seq, uint64_t count, uint64_t log_number) override {
    first = first_seq;
    this->count = count;
    log = log_number;
    published_before = db_->GetLatestSequenceNumber();
    calls++;
  }
  DBImpl* const db_;
  SequenceNumber first = 0;
  uint64_t count = 0;
  uint64_t log = 0;
  SequenceNumber published_before = 0;
  int calls = 0;
};

// An Env whose WAL files hold each append while the gate is closed: a stand-in for a WAL
// write that takes long, so that a test can see what waits for it.
class GatedWalEnv : public EnvWrapper {
 public:
  GatedWalEnv() : EnvWrapper(Env::Default()) {}

  Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result,
                         const EnvOptions& options) override {
    Status s = EnvWrapper::NewWritableFile(fname, result, options);
    if (s.ok() && fname.size() > 4 && fname.compare(fname.size() - 4, 4, ".log") == 0) {
      *result = std::make_unique<File>(this, std::move(*result));
    }
    return s;
  }
  void SetOpen(bool open) {
    std::lock_guard<std::mutex> l(mu_);
    open_ = open;
    cv_.notify_all();
  }
  void WaitForHeldAppend() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [this] { return held_ > 0; });
  }

 private:
  class File final : public WritableFile {
   public:
    File(GatedWalEnv* env, std::unique_ptr<WritableFile> target)
        : env_(env), target_(std::move(target)) {}
    Status Append(const Slice& data) override {
      env_->Pass();
      return target_->Append(data);
    }
    Status Flush() override { return target_->Flush(); }
    Status Sync() override { return target_->Sync(); }
    Status Close() override { return target_->Close(); }
    uint64_t GetFileSize() override { return target_->GetFileSize(); }

   private:
    GatedWalEnv* const env_;
    const std::unique_ptr<WritableFile> target_;
  };
  void Pass() {
    std::unique_lock<std::mutex> l(mu_);
    held_++;
    cv_.notify_all();
    cv_.wait(l, [this] { return open_; });
    held_--;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int held_ = 0;
};

class DBSeqPerBatchTest : public ::testing::Test {
 protected:
  DBSeqPerBatchTest() : dir_("db_seq_per_batch") {
    options_.create_if_missing = true;
    options_.allow_2pc = true;
  }
  ~DBSeqPerBatchTest() override { db_.reset(); }

  void Open() {
    db_.reset();
    DB* db = nullptr;
    ASSERT_OK(DBImpl::Open(options_, dir_.File("db"), /*seq_per_batch=*/true, &db));
    db_.reset(db);
  }
  DBImpl* impl() { return static_cast<DBImpl*>(db_.get()); }
  std::string Versions(const std::string& key) { return impl()->TEST_KeyVersions(key); }
  std::string Get(const std::string& key) { return ReadValue(db_.get(), key); }

  // A transaction-layer write of batch (wal_only: it inserts nothing).
  Status WriteTxn(WriteBatch* batch, bool wal_only, PreReleaseCallback* cb,
                  const WriteOptions& wo = WriteOptions(), SequenceNumber* seq = nullptr,
                  uint64_t* log = nullptr) {
    DBImpl::TxnWrite t;
    t.wal_only = wal_only;
    t.pre_release = cb;
    t.seq_used = seq;
    t.log_used = log;
    return impl()->WriteTxn(wo, batch, t);
  }

  TempDirectory dir_;
  Options options_;
  std::unique_ptr<DB> db_;
};

TEST_F(DBSeqPerBatchTest, RecordsShareTheirSubBatchsNumberAndRecoveryNumbersThemAlike) {
  Open();
  const SequenceNumber base = db_->GetLatestSequenceNumber();
  WriteBatch batch;
  ASSERT_OK(batch.Put("a", "a1"));
  ASSERT_OK(batch.Put("b", "b1"));
  ASSERT_OK(batch.Put("a", "a2"));  // a second sub-batch
  ASSERT_OK(batch.Delete("c"));
  ASSERT_OK(db_->Write(WriteOptions(), &batch));
  ASSERT_EQ(base + 2, db_->GetLatestSequenceNumber());
  const std::string a = " " + std::to_string(base + 2) + "P " + std::to_string(base + 1) + "P";
  EXPECT_EQ("mem:" + a, Versions("a"));
  EXPECT_EQ("mem: " + std::to_string(base + 1) + "P", Versions("b"));
  EXPECT_EQ("mem: " + std::to_string(base + 2) + "D", Versions("c"));
  EXPECT_EQ("a2", Get("a"));

  WriteBatch next;
  ASSERT_OK(next.Put("b", "b2"));
  ASSERT_OK(db_->Write(WriteOptions(), &next));
  ASSERT_EQ(base + 3, db_->GetLatestSequenceNumber());

  // Recovery replays both records and numbers them as the writes did. (Its flush keeps
  // every entry: without a checker installed, a seq_per_batch DB's jobs drop nothing.)
  Open();
  EXPECT_EQ(base + 3, db_->GetLatestSequenceNumber());
  EXPECT_EQ("mem:; L0 #5:" + a, Versions("a"));
  EXPECT_EQ("mem:; L0 #5: " + std::to_string(base + 3) + "P " + std::to_string(base + 1) + "P",
            Versions("b"));
  EXPECT_EQ("mem:; L0 #5: " + std::to_string(base + 2) + "D", Versions("c"));
  EXPECT_EQ("a2", Get("a"));
  EXPECT_EQ("b2", Get("b"));
  EXPECT_EQ("NOT_FOUND", Get("c"));
}

TEST_F(DBSeqPerBatchTest, GroupedWritersEachLogTheirOwnRecord) {
  // Several threads write batches with repeated keys at once, so that groups form; after
  // reopen every record must be numbered as it was live.
  options_.allow_concurrent_memtable_write = true;
  options_.statistics = CreateDBStatistics();
  Open();
  // Inserts that take a while keep the queue busy, so writers gather behind a leader.
  impl()->TEST_SetBeforeMemtableInsert(
      [] { std::this_thread::sleep_for(std::chrono::microseconds(20)); });
  constexpr int kThreads = 4;
  constexpr int kWrites = 300;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kWrites; i++) {
        WriteBatch b;
        const std::string k = "t" + std::to_string(t) + "_" + std::to_string(i);
        ASSERT_OK(b.Put(k, "x"));
        ASSERT_OK(b.Put(k, "y"));  // two sub-batches
        ASSERT_OK(db_->Write(WriteOptions(), &b));
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_LT(0u, options_.statistics->getTickerCount(WRITE_DONE_BY_OTHER));
  const SequenceNumber last = db_->GetLatestSequenceNumber();
  // Each key's newest entry: the one recovery's flush keeps.
  auto newest = [&](const std::string& key) {
    const std::string v = Versions(key);
    const size_t colon = v.rfind(':');
    return v.substr(colon + 1, v.find(' ', colon + 2) - colon - 1);
  };
  std::vector<std::string> live;
  for (int t = 0; t < kThreads; t++) {
    for (int i = 0; i < kWrites; i++)
      live.push_back(newest("t" + std::to_string(t) + "_" + std::to_string(i)));
  }
  Open();
  EXPECT_EQ(last, db_->GetLatestSequenceNumber());
  size_t n = 0;
  for (int t = 0; t < kThreads; t++) {
    for (int i = 0; i < kWrites; i++, n++) {
      const std::string k = "t" + std::to_string(t) + "_" + std::to_string(i);
      ASSERT_EQ(live[n], newest(k)) << k;
      ASSERT_EQ("y", Get(k));
    }
  }
}

TEST_F(DBSeqPerBatchTest, APrepareGoesToTheMemtableAndComesBackPrepared) {
  Open();
  const SequenceNumber base = db_->GetLatestSequenceNumber();
  WriteBatch prepare;
  WriteBatchInternal::InsertNoop(&prepare);
  ASSERT_OK(prepare.Put("k", "v1"));
  ASSERT_OK(prepare.Put("k", "v2"));
  ASSERT_OK(WriteBatchInternal::MarkEndPrepare(&prepare, "xid1", PreparePolicy::kWritePrepared));
  RecordingCallback cb(impl());
  SequenceNumber seq = 0;
  uint64_t log = 0;
  ASSERT_OK(WriteTxn(&prepare, /*wal_only=*/false, &cb, WriteOptions(), &seq, &log));
  EXPECT_EQ(base + 1, seq);
  EXPECT_EQ(1, cb.calls);
  EXPECT_EQ(base + 1, cb.first);
  EXPECT_EQ(2u, cb.count);
  EXPECT_EQ(log, cb.log);
  EXPECT_NE(0u, log);
  EXPECT_EQ(base, cb.published_before);
  EXPECT_EQ("mem: " + std::to_string(base + 2) + "P " + std::to_string(base + 1) + "P",
            Versions("k"));

  // A flush does not resolve it: the WAL holding the prepare comes back at reopen.
  ASSERT_OK(db_->Flush(FlushOptions()));
  Open();
  auto recovered = impl()->TakeRecoveredTransactions();
  ASSERT_EQ(1u, recovered.size());
  const RecoveredTransaction& t = recovered["xid1"];
  EXPECT_EQ(base + 1, t.prepare_seq);
  EXPECT_EQ(2u, t.sub_batches);
  EXPECT_EQ(2u, t.batch.Count());
  EXPECT_EQ(base + 2, db_->GetLatestSequenceNumber());

  // The commit is a marker that takes one number and inserts nothing.
  WriteBatch commit;
  WriteBatchInternal::MarkCommit(&commit, "xid1");
  RecordingCallback commit_cb(impl());
  ASSERT_OK(WriteTxn(&commit, /*wal_only=*/true, &commit_cb, WriteOptions(), &seq));
  EXPECT_EQ(base + 3, seq);
  EXPECT_EQ(1u, commit_cb.count);
  EXPECT_EQ(base + 2, commit_cb.published_before);
  EXPECT_EQ(base + 3, db_->GetLatestSequenceNumber());
  impl()->MarkPrepareResolved(t.log_number);
  Open();
  EXPECT_TRUE(impl()->TakeRecoveredTransactions().empty());
  EXPECT_EQ(base + 3, db_->GetLatestSequenceNumber());
  EXPECT_EQ("v2", Get("k"));
}

TEST_F(DBSeqPerBatchTest, RefusesWhatAWritePreparedWriteCannotBe) {
  Open();
  WriteBatch prepare;
  WriteBatchInternal::InsertNoop(&prepare);
  ASSERT_OK(prepare.Put("k", "v"));
  ASSERT_OK(WriteBatchInternal::MarkEndPrepare(&prepare, "x", PreparePolicy::kWritePrepared));
  // A prepare is inserted, not WAL-only.
  EXPECT_TRUE(WriteTxn(&prepare, /*wal_only=*/true, nullptr).IsInvalidArgument());
  // A commit inserts no prepared records.
  WriteBatch commit;
  WriteBatchInternal::MarkCommit(&commit, "x");
  DBImpl::TxnWrite t;
  t.txn_batch = &prepare;
  EXPECT_TRUE(impl()->WriteTxn(WriteOptions(), &commit, t).IsNotSupported());
  EXPECT_EQ("NOT_FOUND", Get("k"));
}

// Two write queues: main-queue writes (data) take numbers without publishing them; the
// second queue's commits (here with the WAL off: numbers only) publish. Every number must
// have had its callback by the time a reader sees it published.
TEST_F(DBSeqPerBatchTest, WithTwoQueuesCallbacksRunBeforeAnyLargerNumberIsPublished) {
  for (bool unordered : {false, true}) {
    SCOPED_TRACE(unordered ? "unordered" : "ordered");
    ASSERT_OK(DestroyDir(dir_.File("db")));
    options_.two_write_queues = true;
    options_.unordered_write = unordered;
    Open();
    const SequenceNumber base = db_->GetLatestSequenceNumber();
    constexpr int kThreads = 4;
    constexpr int kWrites = 400;
    constexpr size_t kNumbers = 2 * kThreads * kWrites + 16;
    std::vector<std::atomic<bool>> called(kNumbers);
    struct MarkingCallback : PreReleaseCallback {
      std::vector<std::atomic<bool>>* called;
      SequenceNumber base;
      SequenceNumber* first = nullptr;  // if set (a callback of one thread's): the number
      void Callback(SequenceNumber first_seq, uint64_t count, uint64_t) override {
        for (uint64_t i = 0; i < count; i++) (*called)[first_seq + i - base].store(true);
        if (first != nullptr) *first = first_seq;
      }
    } marker;
    marker.called = &called;
    marker.base = base;

    std::atomic<bool> done{false};
    std::atomic<int> bad{0};
    std::thread reader([&] {
      SequenceNumber checked = base;
      while (!done.load()) {
        const SequenceNumber p = db_->GetLatestSequenceNumber();
        if (p < checked) bad++;
        for (; checked < p; checked++) {
          if (!called[checked + 1 - base].load()) bad++;
        }
      }
    });
    std::vector<std::thread> writers;
    for (int t = 0; t < kThreads; t++) {
      writers.emplace_back([&, t] {
        for (int i = 0; i < kWrites; i++) {
          WriteBatch data;
          ASSERT_OK(data.Put("k" + std::to_string(t), std::to_string(i)));
          SequenceNumber seq = 0;
          ASSERT_OK(WriteTxn(&data, /*wal_only=*/false, &marker, WriteOptions(), &seq));
          ASSERT_LT(base, seq);
          // The commit takes a number three ways, so that they meet: alone
          // (WriteNumberOnly, which queues only while the second queue is busy), through
          // the second queue without the WAL, and as a logged marker.
          SequenceNumber commit_seq = 0;
          if (i % 3 == 0) {
            MarkingCallback own = marker;
            own.first = &commit_seq;
            ASSERT_OK(impl()->WriteNumberOnly(&own));
          } else {
            WriteBatch commit;  // empty: a number only
            WriteOptions wo;
            wo.disableWAL = i % 3 == 1;
            if (!wo.disableWAL) WriteBatchInternal::MarkCommit(&commit, "x");
            ASSERT_OK(WriteTxn(&commit, /*wal_only=*/true, &marker, wo, &commit_seq));
          }
          ASSERT_LT(seq, commit_seq);
          // Published up to our commit at least: the data is in and numbered below it.
          ASSERT_LE(commit_seq, db_->GetLatestSequenceNumber());
          ASSERT_EQ(std::to_string(i), Get("k" + std::to_string(t)));
        }
      });
    }
    for (auto& th : writers) th.join();
    done = true;
    reader.join();
    EXPECT_EQ(0, bad.load());
    // Each write took exactly one number, and the last commit published the last.
    EXPECT_EQ(base + 2 * kThreads * kWrites, db_->GetLatestSequenceNumber());

    // A main-queue write alone publishes nothing.
    const SequenceNumber before = db_->GetLatestSequenceNumber();
    WriteBatch data;
    ASSERT_OK(data.Put("alone", "v"));
    SequenceNumber seq = 0;
    ASSERT_OK(WriteTxn(&data, /*wal_only=*/false, nullptr, WriteOptions(), &seq));
    EXPECT_EQ(before + 1, seq);
    EXPECT_EQ(before, db_->GetLatestSequenceNumber());
    EXPECT_EQ("NOT_FOUND", Get("alone"));
    db_.reset();
  }
}

// Two write queues: WriteNumberOnly numbers and publishes on its own only while the second
// queue is idle. Behind a second-queue write held in its WAL append, whose number is taken
// and whose callback has not run, it must wait: publishing its own larger number would
// make the held one visible first.
TEST_F(DBSeqPerBatchTest, WithTwoQueuesANumberOnlyWriteWaitsForTheSecondQueue) {
  GatedWalEnv env;
  options_.env = &env;
  options_.two_write_queues = true;
  Open();
  const SequenceNumber base = db_->GetLatestSequenceNumber();
  // Unqueued while the second queue is idle.
  RecordingCallback alone(impl());
  ASSERT_OK(impl()->WriteNumberOnly(&alone));
  EXPECT_EQ(base + 1, alone.first);
  EXPECT_EQ(1u, alone.count);
  EXPECT_EQ(base, alone.published_before);
  EXPECT_EQ(base + 1, db_->GetLatestSequenceNumber());

  RecordingCallback logged(impl());
  env.SetOpen(false);
  std::thread marker([&] {
    WriteBatch commit;
    WriteBatchInternal::MarkCommit(&commit, "x");
    ASSERT_OK(WriteTxn(&commit, /*wal_only=*/true, &logged));
  });
  env.WaitForHeldAppend();
  std::atomic<bool> done{false};
  RecordingCallback number(impl());
  std::thread number_only([&] {
    ASSERT_OK(impl()->WriteNumberOnly(&number));
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(done.load()) << "published beside a second-queue write not yet published";
  EXPECT_EQ(base + 1, db_->GetLatestSequenceNumber());
  env.SetOpen(true);
  marker.join();
  number_only.join();
  EXPECT_EQ(base + 2, logged.first);
  EXPECT_EQ(base + 3, number.first);
  EXPECT_EQ(base + 2, number.published_before);
  EXPECT_EQ(base + 3, db_->GetLatestSequenceNumber());
  db_.reset();
}

// Two write queues: a commit that only takes a number (the WAL off) takes it beside a
// main-queue write held in its WAL append, instead of waiting for the append to end; and
// the main-queue write's callback has run by then, as its numbers were taken.
TEST_F(DBSeqPerBatchTest, WithTwoQueuesANumberOnlyCommitDoesNotWaitForAWalAppend) {
  GatedWalEnv env;
  options_.env = &env;
  options_.two_write_queues = true;
  Open();
  RecordingCallback prepare(impl());
  env.SetOpen(false);
  std::thread main_queue([&] {
    WriteBatch data;
    ASSERT_OK(data.Put("k", "v"));
    ASSERT_OK(WriteTxn(&data, /*wal_only=*/false, &prepare));
  });
  env.WaitForHeldAppend();
  EXPECT_EQ(1, prepare.calls);

  std::atomic<bool> committed{false};
  SequenceNumber commit_seq = 0;
  std::thread commit([&] {
    WriteBatch empty;
    WriteOptions no_wal;
    no_wal.disableWAL = true;
    ASSERT_OK(WriteTxn(&empty, /*wal_only=*/true, nullptr, no_wal, &commit_seq));
    committed = true;
  });
  for (int i = 0; i < 500 && !committed.load(); i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(committed.load()) << "the number-only commit waited for the main queue's append";
  env.SetOpen(true);
  main_queue.join();
  commit.join();
  EXPECT_EQ(prepare.first + 1, commit_seq);
  EXPECT_EQ(commit_seq, db_->GetLatestSequenceNumber());
  EXPECT_EQ("v", Get("k"));
  db_.reset();
}

}  // namespace
}  // namespace shale
