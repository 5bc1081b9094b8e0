// Two-phase commit in the DB (allow_2pc), below TransactionDB: a prepare reaches only the
// WAL and takes no sequence; a commit applies the prepared records at its own sequence;
// recovery rebuilds the prepared transactions still open and applies the committed ones
// exactly once; a WAL holding an open prepare outlives flushes, and goes once it is
// resolved and flushed past; the misuses of the interface are refused.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "db/db_impl.h"
#include "db/filename.h"
#include "db/write_batch_internal.h"
#include "shale/merge_operator.h"
#include "shale/utilities/merge_operators.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/gated_sst_env.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"

namespace shale {
namespace {

// The records of a transaction, as its write batch holds them before Prepare.
WriteBatch Records(const std::vector<std::pair<std::string, std::string>>& puts) {
  WriteBatch b;
  for (const auto& [k, v] : puts) EXPECT_OK(b.Put(k, v));
  return b;
}

// The batch Prepare logs: Noop (turned into BeginPrepare), the records, EndPrepare(name).
WriteBatch PrepareBatch(const WriteBatch& records, const std::string& name) {
  WriteBatch b;
  WriteBatchInternal::InsertNoop(&b);
  EXPECT_OK(WriteBatchInternal::Append(&b, &records));
  EXPECT_OK(WriteBatchInternal::MarkEndPrepare(&b, name));
  return b;
}

class DB2PCTest : public DBTestBase {
 protected:
  DB2PCTest() : DBTestBase("db_2pc") { options_.allow_2pc = true; }

  DBImpl* impl() { return static_cast<DBImpl*>(db_.get()); }

  // Logs the prepare; returns its WAL.
  uint64_t Prepare(const WriteBatch& records, const std::string& name) {
    WriteBatch b = PrepareBatch(records, name);
    DBImpl::TxnWrite t;
    t.wal_only = true;
    uint64_t log = 0;
    t.log_used = &log;
    EXPECT_OK(impl()->WriteTxn(WriteOptions(), &b, t));
    EXPECT_NE(log, 0u);
    return log;
  }

  // Commits a prepared transaction (commit_time: records logged with the marker).
  Status Commit(const WriteBatch& records, const std::string& name, uint64_t prep_log,
                WriteBatch commit_time = WriteBatch(), SequenceNumber* seq = nullptr) {
    WriteBatchInternal::MarkCommit(&commit_time, name);
    DBImpl::TxnWrite t;
    t.txn_batch = &records;
    t.prep_log = prep_log;
    t.seq_used = seq;
    Status s = impl()->WriteTxn(WriteOptions(), &commit_time, t);
    if (s.ok()) impl()->MarkPrepareResolved(prep_log);
    return s;
  }

  Status Rollback(const std::string& name, uint64_t prep_log) {
    WriteBatch b;
    WriteBatchInternal::MarkRollback(&b, name);
    DBImpl::TxnWrite t;
    t.wal_only = true;
    Status s = impl()->WriteTxn(WriteOptions(), &b, t);
    if (s.ok()) impl()->MarkPrepareResolved(prep_log);
    return s;
  }

  bool WalExists(uint64_t log) {
    return Env::Default()->FileExists(LogFileName(dbname_, log)).ok();
  }
};

TEST_F(DB2PCTest, PrepareReachesOnlyTheWalAndTakesNoSequence) {
  Open();
  ASSERT_OK(Put("x", "0"));
  const SequenceNumber before = db_->GetLatestSequenceNumber();
  Prepare(Records({{"a", "1"}, {"b", "2"}}), "t1");
  EXPECT_EQ(db_->GetLatestSequenceNumber(), before);
  EXPECT_EQ(Contents(), "x=0,");
  ASSERT_OK(Put("y", "0"));
  EXPECT_EQ(db_->GetLatestSequenceNumber(), before + 1) << "the next write follows on";
}

TEST_F(DB2PCTest, CommitAppliesCommitTimeThenPreparedRecordsAtItsSequence) {
  Open();
  const WriteBatch records = Records({{"a", "1"}, {"b", "2"}});
  const uint64_t log = Prepare(records, "t1");
  ASSERT_OK(Put("a", "old"));  // written after the prepare, overwritten by the commit
  const SequenceNumber before = db_->GetLatestSequenceNumber();
  SequenceNumber seq = 0;
  ASSERT_OK(Commit(records, "t1", log, Records({{"c", "3"}}), &seq));
  EXPECT_EQ(seq, before + 1);
  EXPECT_EQ(db_->GetLatestSequenceNumber(), before + 3);
  EXPECT_EQ(Contents(), "a=1,b=2,c=3,");
  Reopen();
  EXPECT_EQ(Contents(), "a=1,b=2,c=3,");
  EXPECT_TRUE(impl()->TakeRecoveredTransactions().empty());
  ASSERT_OK(Put("d", "4"));
  EXPECT_EQ(db_->GetLatestSequenceNumber(), before + 4)
      << "recovery counted the commit's prepared records";
}

TEST_F(DB2PCTest, OpenPrepareIsRecoveredAndCanBeCommittedAfterReopen) {
  Open();
  ASSERT_OK(Put("x", "0"));
  const uint64_t log = Prepare(Records({{"a", "1"}, {"b", "2"}}), "t1");
  Prepare(Records({{"c", "3"}}), "t2");
  Reopen();
  EXPECT_EQ(Contents(), "x=0,");
  auto txns = impl()->TakeRecoveredTransactions();
  ASSERT_EQ(txns.size(), 2u);
  ASSERT_EQ(txns.count("t1"), 1u);
  EXPECT_EQ(txns["t1"].log_number, log);
  EXPECT_EQ(WriteBatchInternal::Count(&txns["t1"].batch), 2u);
  EXPECT_TRUE(impl()->TakeRecoveredTransactions().empty()) << "taken once";

  ASSERT_OK(Commit(txns["t1"].batch, "t1", txns["t1"].log_number));
  ASSERT_OK(Rollback("t2", txns["t2"].log_number));
  EXPECT_EQ(Contents(), "a=1,b=2,x=0,");
  Reopen();
  EXPECT_EQ(Contents(), "a=1,b=2,x=0,");
  EXPECT_TRUE(impl()->TakeRecoveredTransactions().empty());
}

TEST_F(DB2PCTest, WalOfAnOpenPrepareOutlivesFlushesUntilResolved) {
  options_.write_buffer_size = 64 << 10;
  Open();
  const WriteBatch records = Records({{"p", "prepared"}});
  const uint64_t log = Prepare(records, "t1");
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 50; i++) ASSERT_OK(Put("k" + std::to_string(i), std::to_string(round)));
    ASSERT_OK(Flush());
  }
  EXPECT_TRUE(WalExists(log)) << "the prepare's WAL must outlive the flushes";
  Reopen();
  auto txns = impl()->TakeRecoveredTransactions();
  ASSERT_EQ(txns.count("t1"), 1u);
  EXPECT_EQ(txns["t1"].log_number, log);
  EXPECT_EQ(Get("p"), "NOT_FOUND");

  // Once committed and flushed past, the WAL goes, and the data lives in an SST file.
  ASSERT_OK(Commit(txns["t1"].batch, "t1", log));
  ASSERT_OK(Flush());
  ASSERT_OK(Put("z", "1"));
  ASSERT_OK(Flush());
  EXPECT_FALSE(WalExists(log));
  Reopen();
  EXPECT_EQ(Get("p"), "prepared");
  EXPECT_TRUE(impl()->TakeRecoveredTransactions().empty());
}

TEST_F(DB2PCTest, CommitAfterTheLastFlushIsReplayedFromTheOlderPrepareWal) {
  Open();
  const WriteBatch records = Records({{"p", "1"}});
  const uint64_t log = Prepare(records, "t1");
  ASSERT_OK(Put("x", "1"));
  ASSERT_OK(Flush());  // the prepare's WAL is now older than the MANIFEST's log number
  ASSERT_OK(Commit(records, "t1", log));
  // Not flushed: replay needs the prepared records from the older WAL.
  Reopen();
  EXPECT_EQ(Get("p"), "1");
  EXPECT_TRUE(impl()->TakeRecoveredTransactions().empty());
}

class DB2PCGateTest : public DB2PCTest {
 protected:
  DB2PCGateTest() { options_.env = &env; }
  ~DB2PCGateTest() override {
    env.SetOpen(true);
    TryClose().PermitUncheckedError();  // before the env goes
  }
  GatedSstEnv env;
};

TEST_F(DB2PCGateTest, UnflushedCommitKeepsThePrepareWalThroughAnOlderFlush) {
  Open();
  const WriteBatch records = Records({{"p", "1"}});
  const uint64_t log = Prepare(records, "t1");
  ASSERT_OK(Put("x", "1"));
  // The memtable of the prepare's WAL becomes immutable; its flush waits at the gate.
  env.SetOpen(false);
  FlushOptions no_wait;
  no_wait.wait = false;
  ASSERT_OK(db_->Flush(no_wait));
  // The commit goes to the new memtable and resolves the prepare: from now on only that
  // memtable says the prepare's WAL is still needed.
  ASSERT_OK(Commit(records, "t1", log));
  env.SetOpen(true);
  for (int i = 0; i < 2000 && IntProperty("shale.num-immutable-mem-table") > 0; i++) {
    Env::Default()->SleepForMicroseconds(1000);
  }
  ASSERT_EQ(IntProperty("shale.num-immutable-mem-table"), 0u);
  ASSERT_OK(Put("y", "1"));  // the commit's memtable stays unflushed
  EXPECT_TRUE(WalExists(log)) << "deleted while an unflushed commit needs its records";
  Reopen();
  EXPECT_EQ(Get("p"), "1");
}

TEST_F(DB2PCTest, CommitInAFlushedWalIsNotAppliedTwice) {
  options_.merge_operator = MergeOperators::CreateUInt64AddOperator();
  Open();
  std::string one;
  PutFixed64(&one, 1);
  WriteBatch records;
  ASSERT_OK(records.Merge("counter", one));
  const uint64_t log = Prepare(records, "t1");
  ASSERT_OK(Commit(records, "t1", log));
  Prepare(Records({{"q", "1"}}), "t2");  // keeps the WAL of t1's commit
  ASSERT_OK(Flush());
  Reopen();
  std::string value = Get("counter");
  ASSERT_EQ(value.size(), 8u);
  EXPECT_EQ(DecodeFixed64(value.data()), 1u) << "the commit's merge was applied again";
  auto txns = impl()->TakeRecoveredTransactions();
  EXPECT_EQ(txns.size(), 1u);
  EXPECT_EQ(txns.count("t2"), 1u);
}

TEST_F(DB2PCTest, MisusesAreRefused) {
  Open();
  const WriteBatch records = Records({{"a", "1"}});
  WriteBatch prepared = PrepareBatch(records, "t1");
  DBImpl::TxnWrite memtable_write;  // a prepared section must be WAL-only
  EXPECT_TRUE(impl()->WriteTxn(WriteOptions(), &prepared, memtable_write).IsInvalidArgument());
  DBImpl::TxnWrite wal_only;
  wal_only.wal_only = true;
  WriteBatch loose = Records({{"a", "1"}});  // keys outside a prepared section
  EXPECT_TRUE(impl()->WriteTxn(WriteOptions(), &loose, wal_only).IsInvalidArgument());
  WriteOptions no_wal;
  no_wal.disableWAL = true;
  EXPECT_TRUE(impl()->WriteTxn(no_wal, &prepared, wal_only).IsInvalidArgument());
  WriteBatch commit;
  WriteBatchInternal::MarkCommit(&commit, "t1");
  DBImpl::TxnWrite commit_write;
  commit_write.txn_batch = &records;
  EXPECT_TRUE(impl()->WriteTxn(no_wal, &commit, commit_write).IsInvalidArgument());
  EXPECT_TRUE(db_->Write(WriteOptions(), &prepared).IsNotSupported())
      << "a plain write never carries markers";
  EXPECT_EQ(Contents(), "");

  options_.allow_2pc = false;
  Reopen();
  EXPECT_TRUE(impl()->WriteTxn(WriteOptions(), &prepared, wal_only).IsNotSupported());
}

TEST_F(DB2PCTest, PlainOpenRefusesAWalWithAPrepare) {
  Open();
  Prepare(Records({{"a", "1"}}), "t1");
  Close();
  options_.allow_2pc = false;
  Status s = TryReopen();
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  options_.allow_2pc = true;
  Open();
  EXPECT_EQ(impl()->TakeRecoveredTransactions().size(), 1u);
}

// Writers prepare and commit transactions while others write plainly, in every write mode;
// after a reopen, every committed transaction is whole and every open one is recovered.
class DB2PCModesTest : public DB2PCTest,
                       public ::testing::WithParamInterface<std::tuple<bool, bool, bool>> {};

TEST_P(DB2PCModesTest, ConcurrentPreparesCommitsAndWrites) {
  const auto [pipelined, unordered, two_queues] = GetParam();
  options_.enable_pipelined_write = pipelined;
  options_.unordered_write = unordered;
  options_.two_write_queues = two_queues;
  options_.write_buffer_size = 8 << 10;  // memtable switches and flushes during the run
  Open();
  constexpr int kThreads = 4;
  constexpr int kTxns = 150;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kTxns; i++) {
        const std::string name = "t" + std::to_string(t) + "_" + std::to_string(i);
        const WriteBatch records = Records({{name + "_a", "1"}, {name + "_b", "2"}});
        const uint64_t log = Prepare(records, name);
        ASSERT_OK(Put("plain" + std::to_string(t), std::to_string(i)));
        // The last transaction of each thread stays prepared; every third one rolls back.
        if (i == kTxns - 1) continue;
        if (i % 3 == 2) {
          ASSERT_OK(Rollback(name, log));
        } else {
          ASSERT_OK(Commit(records, name, log));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  const std::string before = Contents();
  Reopen();
  EXPECT_EQ(Contents(), before);
  auto txns = impl()->TakeRecoveredTransactions();
  EXPECT_EQ(txns.size(), static_cast<size_t>(kThreads));
  for (int t = 0; t < kThreads; t++) {
    const std::string name = "t" + std::to_string(t) + "_" + std::to_string(kTxns - 1);
    EXPECT_EQ(txns.count(name), 1u) << name;
    for (int i = 0; i < kTxns - 1; i++) {
      const std::string n = "t" + std::to_string(t) + "_" + std::to_string(i);
      EXPECT_EQ(Get(n + "_a"), i % 3 == 2 ? "NOT_FOUND" : "1") << n;
      EXPECT_EQ(Get(n + "_b"), i % 3 == 2 ? "NOT_FOUND" : "2") << n;
    }
  }
}

std::string ModeName(const std::tuple<bool, bool, bool>& m) {
  return std::string(std::get<0>(m)   ? "Pipelined"
                     : std::get<1>(m) ? "Unordered"
                                      : "Ordered") +
         (std::get<2>(m) ? "TwoQueues" : "");
}

INSTANTIATE_TEST_SUITE_P(Modes, DB2PCModesTest,
                         ::testing::Values(std::make_tuple(false, false, false),
                                           std::make_tuple(true, false, false),
                                           std::make_tuple(false, true, false),
                                           std::make_tuple(false, false, true)),
                         [](const auto& info) { return ModeName(info.param); });

}  // namespace
}  // namespace shale
