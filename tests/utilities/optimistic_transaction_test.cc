// OptimisticTransactionDB: Open's overloads and the policy it refuses; read-your-own-writes
// and isolation; conflicts found at Commit (Busy) for writes and GetForUpdate, from the
// first touch or from the snapshot; untracked writes not checked; TryAgain once a flush
// has taken the history a check needs, and no TryAgain when nothing was written since;
// the calls optimistic transactions refuse; and threads incrementing counters with
// retries, whose sums must be exact after reopen and compaction.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "shale/utilities/optimistic_transaction_db.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

class OptimisticTransactionTest : public testing::Test {
 protected:
  OptimisticTransactionTest() : dir_("otxn") {
    options_.create_if_missing = true;
    Open();
  }
  ~OptimisticTransactionTest() override { db_.reset(); }

  void Open() {
    db_.reset();
    OptimisticTransactionDB* db = nullptr;
    ASSERT_OK(OptimisticTransactionDB::Open(options_, dir_.path() + "/db", &db));
    db_.reset(db);
  }
  void Reopen() {
    ASSERT_OK(db_->Close());
    Open();
  }
  std::unique_ptr<Transaction> Begin(bool set_snapshot = false) {
    OptimisticTransactionOptions o;
    o.set_snapshot = set_snapshot;
    return std::unique_ptr<Transaction>(db_->BeginTransaction(WriteOptions(), o));
  }
  std::string Get(const std::string& key) { return ReadValue(db_.get(), key); }

  TempDirectory dir_;
  Options options_;
  std::unique_ptr<OptimisticTransactionDB> db_;
};

TEST_F(OptimisticTransactionTest, CommitAppliesWritesOthersDidNotSee) {
  ASSERT_OK(db_->Put(WriteOptions(), "a", "db"));
  auto txn = Begin();
  ASSERT_OK(txn->Put("a", "txn"));
  ASSERT_OK(txn->Put("b", "txn"));
  std::string value;
  ASSERT_OK(txn->Get(ReadOptions(), "a", &value));
  EXPECT_EQ(value, "txn");
  EXPECT_EQ(Get("a"), "db");
  EXPECT_EQ(Get("b"), "NOT_FOUND");
  EXPECT_EQ(txn->GetNumKeys(), 2u);
  ASSERT_OK(txn->Commit());
  EXPECT_EQ(txn->GetState(), Transaction::COMMITTED);
  EXPECT_EQ(Get("a"), "txn");
  EXPECT_TRUE(txn->Commit().IsInvalidArgument()) << "committed once";
  txn.reset();
  Reopen();
  EXPECT_EQ(Get("b"), "txn");
}

TEST_F(OptimisticTransactionTest, WriteAfterTheFirstTouchIsAConflict) {
  auto txn = Begin();
  ASSERT_OK(txn->Put("k", "txn"));
  ASSERT_OK(db_->Put(WriteOptions(), "k", "outside"));
  Status s = txn->Commit();
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
  EXPECT_EQ(Get("k"), "outside");
  EXPECT_EQ(txn->GetState(), Transaction::STARTED) << "left for the caller to roll back";
  ASSERT_OK(txn->Rollback());
  EXPECT_EQ(txn->GetState(), Transaction::ROLLEDBACK);

  // Written before the transaction touched the key: no conflict.
  auto later = Begin();
  ASSERT_OK(db_->Put(WriteOptions(), "k", "before"));
  ASSERT_OK(later->Put("k", "txn"));
  ASSERT_OK(later->Commit());
  EXPECT_EQ(Get("k"), "txn");
}

TEST_F(OptimisticTransactionTest, GetForUpdateIsCheckedAndGetIsNot) {
  ASSERT_OK(db_->Put(WriteOptions(), "read", "0"));
  ASSERT_OK(db_->Put(WriteOptions(), "peek", "0"));
  auto txn = Begin();
  std::string value;
  ASSERT_OK(txn->Get(ReadOptions(), "peek", &value));
  ASSERT_OK(txn->GetForUpdate(ReadOptions(), "read", &value));
  ASSERT_OK(txn->Put("out", value));
  auto other = Begin();
  ASSERT_OK(other->Put("peek", "1"));
  ASSERT_OK(other->Commit());
  ASSERT_OK(txn->Commit()) << "a plain Get is not tracked";

  auto again = Begin();
  ASSERT_OK(again->GetForUpdate(ReadOptions(), "read", &value));
  ASSERT_OK(again->Put("out", "2"));
  ASSERT_OK(db_->Put(WriteOptions(), "read", "changed"));
  EXPECT_TRUE(again->Commit().IsBusy());
}

TEST_F(OptimisticTransactionTest, SnapshotMovesTheCheckBack) {
  auto txn = Begin(/*set_snapshot=*/true);
  ASSERT_OK(db_->Put(WriteOptions(), "k", "after-snapshot"));
  ASSERT_OK(txn->Put("k", "txn"));  // touched after the write, but checked from the snapshot
  EXPECT_TRUE(txn->Commit().IsBusy());
  ASSERT_OK(txn->Rollback());
  EXPECT_EQ(Get("k"), "after-snapshot");
}

TEST_F(OptimisticTransactionTest, UntrackedWritesAreNotChecked) {
  auto txn = Begin();
  ASSERT_OK(txn->PutUntracked("k", "txn"));
  ASSERT_OK(db_->Put(WriteOptions(), "k", "outside"));
  ASSERT_OK(txn->Commit());
  EXPECT_EQ(Get("k"), "txn");
}

TEST_F(OptimisticTransactionTest, TryAgainOnlyWhenAFlushTookTheHistoryNeeded) {
  auto txn = Begin();
  ASSERT_OK(txn->Put("k", "txn"));
  ASSERT_OK(db_->Flush(FlushOptions()));  // nothing written since the key was touched
  ASSERT_OK(txn->Commit());

  auto stale = Begin();
  ASSERT_OK(stale->Put("k", "stale"));
  ASSERT_OK(db_->Put(WriteOptions(), "other", "x"));  // may have been anything
  ASSERT_OK(db_->Flush(FlushOptions()));
  Status s = stale->Commit();
  EXPECT_TRUE(s.IsTryAgain()) << s.ToString();
  EXPECT_NE(s.ToString().find("could not check for conflicts"), std::string::npos);
  EXPECT_EQ(Get("k"), "txn");
}

TEST_F(OptimisticTransactionTest, KeptMemtablesAnswerAfterAFlush) {
  options_.max_write_buffer_size_to_maintain = 64 << 20;  // memtables take 2 MiB blocks
  Reopen();
  auto txn = Begin();
  ASSERT_OK(txn->Put("k", "txn"));
  ASSERT_OK(db_->Put(WriteOptions(), "other", "x"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(txn->Commit()) << "the flushed memtable was kept: no TryAgain";

  auto conflict = Begin();
  ASSERT_OK(conflict->Put("k", "late"));
  ASSERT_OK(db_->Put(WriteOptions(), "k", "outside"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(db_->Flush(FlushOptions()));
  Status s = conflict->Commit();
  EXPECT_TRUE(s.IsBusy()) << "found in a kept memtable: " << s.ToString();

  // A limit the memtables outgrow drops the oldest kept ones: TryAgain again.
  options_.max_write_buffer_size_to_maintain = 1;
  Reopen();
  auto stale = Begin();
  ASSERT_OK(stale->Put("k", "stale"));
  ASSERT_OK(db_->Put(WriteOptions(), "other", "y"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  EXPECT_TRUE(stale->Commit().IsTryAgain());
}

TEST_F(OptimisticTransactionTest, RefusedCallsAndOpenForms) {
  auto txn = Begin();
  EXPECT_TRUE(txn->SetName("x").IsInvalidArgument());
  EXPECT_TRUE(txn->Prepare().IsInvalidArgument());
  ASSERT_OK(txn->Put("a", "1"));
  ASSERT_OK(txn->Rollback());
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  // A finished transaction is begun again in place.
  Transaction* raw = txn.get();
  EXPECT_EQ(db_->BeginTransaction(WriteOptions(), OptimisticTransactionOptions(), raw), raw);
  ASSERT_OK(txn->Put("a", "2"));
  ASSERT_OK(txn->Commit());
  EXPECT_EQ(Get("a"), "2");
  txn.reset();
  ASSERT_OK(db_->Close());
  db_.reset();

  std::vector<ColumnFamilyHandle*> handles;
  OptimisticTransactionDB* db = nullptr;
  OptimisticTransactionDBOptions serial;
  serial.validate_policy = OccValidationPolicy::kValidateSerial;
  std::vector<ColumnFamilyDescriptor> families = {
      ColumnFamilyDescriptor(kDefaultColumnFamilyName, ColumnFamilyOptions(options_))};
  EXPECT_TRUE(OptimisticTransactionDB::Open(DBOptions(options_), serial, dir_.path() + "/db",
                                            families, &handles, &db)
                  .IsNotSupported());
  EXPECT_EQ(db, nullptr);
  ASSERT_OK(OptimisticTransactionDB::Open(DBOptions(options_), dir_.path() + "/db", families,
                                          &handles, &db));
  db_.reset(db);
  ASSERT_EQ(handles.size(), 1u);
  EXPECT_EQ(handles[0]->GetID(), 0u);
  EXPECT_EQ(Get("a"), "2");
  ASSERT_OK(db_->DestroyColumnFamilyHandle(handles[0]));
}

// Threads move units between counters with GetForUpdate + Put + Commit, retrying on Busy
// and TryAgain, while small memtables flush underneath: the total never changes, and
// every committed move is in the DB after reopen and compaction.
TEST_F(OptimisticTransactionTest, ConcurrentCounterTransfersKeepTheTotal) {
  options_.write_buffer_size = 16 << 10;
  Reopen();
  const uint64_t seed = TestSeed();
  constexpr int kCounters = 8;
  constexpr int kThreads = 4;
  constexpr int kMoves = 300;
  for (int c = 0; c < kCounters; c++) {
    ASSERT_OK(db_->Put(WriteOptions(), "c" + std::to_string(c), "1000"));
  }
  std::atomic<int> busy{0}, try_again{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      Random rnd(seed + t);
      std::unique_ptr<Transaction> txn;
      for (int m = 0; m < kMoves; m++) {
        const std::string from = "c" + std::to_string(rnd.Uniform(kCounters));
        const std::string to = "c" + std::to_string(rnd.Uniform(kCounters));
        const std::string pad(rnd.Uniform(200), 'p');  // fills memtables: flushes happen
        while (true) {
          txn.reset(
              db_->BeginTransaction(WriteOptions(), OptimisticTransactionOptions(), txn.release()));
          std::string a, b;
          ASSERT_OK(txn->GetForUpdate(ReadOptions(), from, &a));
          ASSERT_OK(txn->GetForUpdate(ReadOptions(), to, &b));
          if (from != to) {
            ASSERT_OK(txn->Put(from, std::to_string(std::stoi(a) - 1)));
            ASSERT_OK(txn->Put(to, std::to_string(std::stoi(b) + 1)));
          }
          ASSERT_OK(txn->Put("pad" + std::to_string(t), pad));
          Status s = txn->Commit();
          if (s.ok()) break;
          ASSERT_TRUE(s.IsBusy() || s.IsTryAgain()) << s.ToString();
          (s.IsBusy() ? busy : try_again)++;
          ASSERT_OK(txn->Rollback());
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  printf("conflicts: %d busy, %d try-again\n", busy.load(), try_again.load());
  auto total = [&] {
    int sum = 0;
    for (int c = 0; c < kCounters; c++) sum += std::stoi(Get("c" + std::to_string(c)));
    return sum;
  };
  EXPECT_EQ(total(), kCounters * 1000);
  Reopen();
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  EXPECT_EQ(total(), kCounters * 1000);
}

}  // namespace
}  // namespace shale
