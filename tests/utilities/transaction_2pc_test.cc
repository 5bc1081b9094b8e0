// Two-phase commit through TransactionDB: Prepare makes a transaction durable but
// invisible; after a close and reopen it comes back PREPARED (GetAllPreparedTransactions,
// GetTransactionByName) with its writes and its locks, and can be committed or rolled
// back, for good; a resolved one never comes back; an unresolved one keeps coming back,
// even when the memtables it was prepared with have been flushed; resolving it lets its
// WAL go; and after a simulated power loss synced commits are whole and synced prepares
// come back.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "tests/utilities/transaction_fixture.h"

namespace shale {
namespace {

class Transaction2PCTest : public TransactionTestBase {
 protected:
  Transaction2PCTest() { Open(); }

  // The names of the prepared transactions, sorted.
  std::vector<std::string> Prepared() {
    std::vector<Transaction*> txns;
    db_->GetAllPreparedTransactions(&txns);
    std::vector<std::string> names;
    for (Transaction* t : txns) {
      EXPECT_EQ(t->GetState(), Transaction::PREPARED);
      names.push_back(t->GetName());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  // Begins a transaction named name, writes key=value for each pair, and prepares it.
  void PrepareTxn(const std::string& name,
                  const std::vector<std::pair<std::string, std::string>>& writes) {
    auto txn = Begin();
    ASSERT_OK(txn->SetName(name));
    for (const auto& [k, v] : writes) ASSERT_OK(txn->Put(k, v));
    ASSERT_OK(txn->Prepare());
    ASSERT_EQ(txn->GetState(), Transaction::PREPARED);
    // Deleting it leaves the prepare in the WAL.
  }
};

TEST_F(Transaction2PCTest, PreparedIsInvisibleThenCommitted) {
  auto txn = Begin();
  ASSERT_OK(txn->SetName("xid"));
  ASSERT_OK(txn->Put("a", "1"));
  ASSERT_OK(txn->GetCommitTimeWriteBatch()->Put("ct", "c"));
  ASSERT_OK(txn->Prepare());
  EXPECT_TRUE(txn->Prepare().IsInvalidArgument());
  // A write now would miss the prepared record in the WAL.
  EXPECT_TRUE(txn->Put("b", "2").IsInvalidArgument());
  EXPECT_EQ(Prepared(), std::vector<std::string>{"xid"});
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  EXPECT_TRUE(db_->Put(WriteOptions(), "a", "outside").IsTimedOut());
  ASSERT_OK(txn->Commit());
  EXPECT_EQ(txn->GetState(), Transaction::COMMITTED);
  EXPECT_TRUE(Prepared().empty());
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("ct"), "c");
  txn.reset();
  Reopen();
  EXPECT_TRUE(Prepared().empty());
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("ct"), "c");
}

TEST_F(Transaction2PCTest, PreparedSurvivesReopenAndCommits) {
  PrepareTxn("xid1", {{"a", "1"}, {"b", "2"}});
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  Reopen();
  ASSERT_EQ(Prepared(), std::vector<std::string>{"xid1"});
  Transaction* txn = db_->GetTransactionByName("xid1");
  ASSERT_NE(txn, nullptr);
  EXPECT_EQ(txn->GetState(), Transaction::PREPARED);
  EXPECT_EQ(txn->GetNumKeys(), 2u);
  // Its writes are its own still, and its keys locked.
  EXPECT_EQ(TxnGet(txn, "a"), "1");
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  EXPECT_TRUE(db_->Put(WriteOptions(), "b", "outside").IsTimedOut());
  ASSERT_OK(txn->Commit());
  std::unique_ptr<Transaction> owned(txn);  // resolved: the caller's now
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("b"), "2");
  EXPECT_EQ(db_->GetTransactionByName("xid1"), nullptr);
  ASSERT_OK(db_->Put(WriteOptions(), "b", "later"));
  owned.reset();
  // Committed is committed: not prepared again, and the data stays.
  Reopen();
  EXPECT_TRUE(Prepared().empty());
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("b"), "later");
  Reopen();
  EXPECT_TRUE(Prepared().empty());
  EXPECT_EQ(Get("a"), "1");
}

TEST_F(Transaction2PCTest, PreparedSurvivesReopenAndRollsBack) {
  ASSERT_OK(db_->Put(WriteOptions(), "a", "old"));
  PrepareTxn("xid", {{"a", "new"}});
  Reopen();
  Transaction* txn = db_->GetTransactionByName("xid");
  ASSERT_NE(txn, nullptr);
  ASSERT_OK(txn->Rollback());
  std::unique_ptr<Transaction> owned(txn);
  EXPECT_EQ(txn->GetState(), Transaction::ROLLEDBACK);
  EXPECT_EQ(Get("a"), "old");
  ASSERT_OK(db_->Put(WriteOptions(), "a", "after"));  // the lock went with it
  owned.reset();
  Reopen();
  EXPECT_TRUE(Prepared().empty());
  EXPECT_EQ(Get("a"), "after");
}

TEST_F(Transaction2PCTest, UnresolvedComesBackAcrossFlushesAndReopens) {
  PrepareTxn("p1", {{"x", "1"}});
  PrepareTxn("p2", {{"y", "2"}});
  // Other writes move on and the memtable the prepares went with is flushed; their WAL
  // must stay for them.
  for (int i = 0; i < 100; i++) ASSERT_OK(db_->Put(WriteOptions(), Key(i), "v"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  Reopen();
  EXPECT_EQ(Prepared(), (std::vector<std::string>{"p1", "p2"}));
  ASSERT_OK(db_->Flush(FlushOptions()));
  Reopen();  // nobody resolved them: they come back again
  ASSERT_EQ(Prepared(), (std::vector<std::string>{"p1", "p2"}));
  Transaction* p1 = db_->GetTransactionByName("p1");
  ASSERT_OK(p1->Commit());
  delete p1;  // resolved: the caller's now
  Reopen();
  EXPECT_EQ(Prepared(), std::vector<std::string>{"p2"});
  EXPECT_EQ(Get("x"), "1");
  EXPECT_EQ(Get("y"), "NOT_FOUND");
  EXPECT_EQ(Get(Key(7)), "v");
}

// The WAL files (*.log) in the DB directory, sorted.
std::vector<std::string> WalFiles(const std::string& dir) {
  std::vector<std::string> children, logs;
  EXPECT_OK(Env::Default()->GetChildren(dir, &children));
  for (const std::string& c : children) {
    if (c.size() > 4 && c.compare(c.size() - 4, 4, ".log") == 0) logs.push_back(c);
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

// Commit and Rollback tell the DB that the prepare's WAL is no longer needed for it: once
// the memtables are flushed, that WAL goes; while the transaction is open, it stays.
TEST_F(Transaction2PCTest, ResolvingReleasesThePreparesWal) {
  for (bool commit : {true, false}) {
    SCOPED_TRACE(commit ? "commit" : "rollback");
    auto txn = Begin();
    ASSERT_OK(txn->SetName("xid"));
    ASSERT_OK(txn->Put("k", "v"));
    ASSERT_OK(txn->Prepare());
    const std::string prepare_wal = WalFiles(dbname()).back();
    ASSERT_OK(db_->Put(WriteOptions(), "other", "v"));
    ASSERT_OK(db_->Flush(FlushOptions()));
    ASSERT_OK(db_->Put(WriteOptions(), "other", "v2"));
    ASSERT_OK(db_->Flush(FlushOptions()));
    std::vector<std::string> logs = WalFiles(dbname());
    EXPECT_NE(std::find(logs.begin(), logs.end(), prepare_wal), logs.end());
    ASSERT_OK(commit ? txn->Commit() : txn->Rollback());
    for (int i = 0; i < 2; i++) {
      ASSERT_OK(db_->Put(WriteOptions(), "other", "v3"));
      ASSERT_OK(db_->Flush(FlushOptions()));
    }
    logs = WalFiles(dbname());
    EXPECT_EQ(std::find(logs.begin(), logs.end(), prepare_wal), logs.end());
    EXPECT_EQ(Get("k"), commit ? "v" : "NOT_FOUND");
    ASSERT_OK(db_->Delete(WriteOptions(), "k"));
  }
}

// A power loss with one transaction committed, one prepared, both synced, and one
// prepared without sync: the commit is whole, the synced prepare comes back and can be
// committed, and nothing of the others is half there.
TEST_F(Transaction2PCTest, PowerLossBetweenPrepareAndCommit) {
  FaultInjectionTestEnv* env = UseFaultInjectionEnv();
  Reopen();
  WriteOptions synced;
  synced.sync = true;
  {
    std::unique_ptr<Transaction> open(db_->BeginTransaction(synced));
    ASSERT_OK(open->SetName("open"));
    ASSERT_OK(open->Put("b1", "open"));
    ASSERT_OK(open->Put("b2", "open"));
    ASSERT_OK(open->Prepare());
    // Committed last of the synced writes, so that only its own sync makes it durable.
    std::unique_ptr<Transaction> done(db_->BeginTransaction(synced));
    ASSERT_OK(done->SetName("done"));
    ASSERT_OK(done->Put("a1", "done"));
    ASSERT_OK(done->Put("a2", "done"));
    ASSERT_OK(done->Prepare());
    ASSERT_OK(done->Commit());
    auto unsynced = Begin();
    ASSERT_OK(unsynced->SetName("unsynced"));
    ASSERT_OK(unsynced->Put("c", "unsynced"));
    ASSERT_OK(unsynced->Prepare());
    // The machine stops here: nothing more reaches the disk, and what was not synced is
    // lost.
    env->SetFilesystemActive(false);
  }
  db_.reset();
  env->SetFilesystemActive(true);
  ASSERT_OK(env->SimulatePowerLoss());
  Open();
  ASSERT_EQ(Prepared(), std::vector<std::string>{"open"});
  EXPECT_EQ(Get("a1"), "done");
  EXPECT_EQ(Get("a2"), "done");
  EXPECT_EQ(Get("b1"), "NOT_FOUND");
  EXPECT_EQ(Get("c"), "NOT_FOUND");
  Transaction* open = db_->GetTransactionByName("open");
  ASSERT_OK(open->Commit());
  delete open;
  EXPECT_EQ(Get("b1"), "open");
  EXPECT_EQ(Get("b2"), "open");
  Reopen();
  EXPECT_EQ(Get("b2"), "open");
  EXPECT_EQ(Get("a1"), "done");
}

TEST_F(Transaction2PCTest, NameOfARecoveredTransactionIsTaken) {
  PrepareTxn("xid", {{"a", "1"}});
  Reopen();
  auto txn = Begin();
  EXPECT_TRUE(txn->SetName("xid").IsInvalidArgument());
  Transaction* recovered = db_->GetTransactionByName("xid");
  ASSERT_OK(recovered->Commit());
  delete recovered;
  ASSERT_OK(txn->SetName("xid"));  // free once resolved
}

}  // namespace
}  // namespace shale
