// Changing a TransactionDB's write policy between opens while its WAL still holds
// prepared transactions. The two policies log a prepare differently (a WRITE_PREPARED
// prepare's records reached the memtable at once, numbered per sub-batch; a
// WRITE_COMMITTED prepare's reach it at the commit), so neither can replay the other's:
// the open fails with NotSupported telling the user to empty the WAL first (RocksDB's
// status), and nothing is lost: reopened under the policy that wrote it, the DB holds the
// same committed data and the same prepared transactions, which then commit as usual.
// Without prepared sections in the WAL (committed, rolled back or flushed away) the
// policy may change.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/utilities/transaction_fixture.h"

namespace shale {
namespace {

struct Switch {
  const char* name;
  TxnDBWritePolicy from;
  TxnDBWritePolicy to;
  bool two_queues;  // with unordered_write, for WRITE_PREPARED
  bool flush;       // the prepared data flushed before the close
};

const Switch kSwitches[] = {
    {"PreparedToCommitted", WRITE_PREPARED, WRITE_COMMITTED, false, false},
    {"PreparedToCommittedFlushed", WRITE_PREPARED, WRITE_COMMITTED, false, true},
    {"PreparedUnorderedToCommitted", WRITE_PREPARED, WRITE_COMMITTED, true, false},
    {"PreparedUnorderedToCommittedFlushed", WRITE_PREPARED, WRITE_COMMITTED, true, true},
    {"CommittedToPrepared", WRITE_COMMITTED, WRITE_PREPARED, false, false},
    {"CommittedToPreparedFlushed", WRITE_COMMITTED, WRITE_PREPARED, false, true},
    {"CommittedToPreparedUnordered", WRITE_COMMITTED, WRITE_PREPARED, true, false},
};

class WritePolicySwitchTest : public TransactionTestBase,
                              public testing::WithParamInterface<Switch> {
 protected:
  void UsePolicy(TxnDBWritePolicy policy) {
    txn_db_options_.write_policy = policy;
    // unordered_write is WRITE_PREPARED's only (with two queues).
    const bool wp_unordered = policy == WRITE_PREPARED && GetParam().two_queues;
    options_.two_write_queues = GetParam().two_queues;
    options_.unordered_write = wp_unordered;
  }

  // Committed data, one transaction committed through Prepare and Commit, and two left
  // prepared ("p1" over a committed key, "p2" on a new one), then a close.
  void WriteUnderTheOldPolicy() {
    UsePolicy(GetParam().from);
    Open();
    ASSERT_OK(db_->Put(WriteOptions(), "a", "a0"));
    ASSERT_OK(db_->Put(WriteOptions(), "b", "b0"));
    {
      auto c = Begin();
      ASSERT_OK(c->SetName("c"));
      ASSERT_OK(c->Put("c", "c1"));
      ASSERT_OK(c->Prepare());
      ASSERT_OK(c->Commit());
    }
    auto p1 = Begin();
    ASSERT_OK(p1->SetName("p1"));
    ASSERT_OK(p1->Put("a", "a1"));
    ASSERT_OK(p1->Delete("b"));
    ASSERT_OK(p1->Prepare());
    auto p2 = Begin();
    ASSERT_OK(p2->SetName("p2"));
    ASSERT_OK(p2->Put("n", "n1"));
    ASSERT_OK(p2->Prepare());
    ASSERT_OK(db_->Put(WriteOptions(), "d", "d0"));
    if (GetParam().flush) ASSERT_OK(db_->Flush(FlushOptions()));
    p1.reset();  // both stay prepared in the WAL
    p2.reset();
    Close();
  }

  // What the old policy's DB must hold, with p1 and p2 still prepared.
  void ExpectTheOldState() {
    EXPECT_EQ("a0", Get("a"));
    EXPECT_EQ("b0", Get("b"));
    EXPECT_EQ("c1", Get("c"));
    EXPECT_EQ("d0", Get("d"));
    EXPECT_EQ("NOT_FOUND", Get("n"));
    for (const char* name : {"p1", "p2"}) {
      std::unique_ptr<Transaction> t(db_->GetTransactionByName(name));
      ASSERT_NE(nullptr, t) << name;
      EXPECT_EQ(Transaction::PREPARED, t->GetState()) << name;
      t.release();  // still the DB's, until resolved
    }
  }

  void ExpectRefusedUnder(TxnDBWritePolicy policy) {
    UsePolicy(policy);
    Status s = TryOpen();
    EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
    EXPECT_NE(std::string::npos,
              s.ToString().find("the WAL must be emptied before changing the WritePolicy"))
        << s.ToString();
    EXPECT_EQ(nullptr, db_);
  }
};

TEST_P(WritePolicySwitchTest, RefusedWhilePreparedAndNothingIsLost) {
  WriteUnderTheOldPolicy();
  ExpectRefusedUnder(GetParam().to);
  // A second refused try changes nothing either.
  ExpectRefusedUnder(GetParam().to);

  UsePolicy(GetParam().from);
  Open();
  ExpectTheOldState();
  // Resolve both under the old policy: p1 commits, p2 rolls back.
  std::unique_ptr<Transaction> p1(db_->GetTransactionByName("p1"));
  ASSERT_OK(p1->Commit());
  p1.reset();
  std::unique_ptr<Transaction> p2(db_->GetTransactionByName("p2"));
  ASSERT_OK(p2->Rollback());
  p2.reset();
  EXPECT_EQ("a1", Get("a"));
  EXPECT_EQ("NOT_FOUND", Get("b"));
  EXPECT_EQ("NOT_FOUND", Get("n"));

  // Emptied (nothing prepared, everything flushed), the WAL no longer ties the DB to its
  // policy: the other one opens it and reads the same.
  ASSERT_OK(db_->Flush(FlushOptions()));
  Close();
  UsePolicy(GetParam().to);
  Open();
  EXPECT_EQ(nullptr, db_->GetTransactionByName("p1"));
  EXPECT_EQ("a1", Get("a"));
  EXPECT_EQ("NOT_FOUND", Get("b"));
  EXPECT_EQ("c1", Get("c"));
  EXPECT_EQ("d0", Get("d"));
  EXPECT_EQ("NOT_FOUND", Get("n"));
  ASSERT_OK(db_->Put(WriteOptions(), "e", "e0"));
  Reopen();
  EXPECT_EQ("a1", Get("a"));
  EXPECT_EQ("e0", Get("e"));
}

TEST_P(WritePolicySwitchTest, APlainDbStillAsksForATransactionDb) {
  WriteUnderTheOldPolicy();
  DB* db = nullptr;
  Options plain = options_;
  plain.unordered_write = false;
  Status s = DB::Open(plain, dbname(), &db);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("TransactionDB::Open()")) << s.ToString();
  delete db;
  UsePolicy(GetParam().from);
  Open();
  ExpectTheOldState();
}

INSTANTIATE_TEST_SUITE_P(Switches, WritePolicySwitchTest, testing::ValuesIn(kSwitches),
                         [](const testing::TestParamInfo<Switch>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace shale
