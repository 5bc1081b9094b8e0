// WalReplayer, recovery's replay of WAL batches: sequence numbering across prepares and
// commits, WALs older than the MANIFEST's log number read for markers only, and the batches
// it refuses whole (nothing applied): bad prepared sections, a commit no WAL prepared,
// sequence numbers past the largest, a prepare without allow_2pc. Also the WritePrepared
// form (seq_per_batch): numbers per sub-batch, prepares applied at once, commits resolving.
#include "db/wal_replay.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "db/write_batch_internal.h"
#include "memtable/memtable.h"
#include "shale/comparator.h"
#include "tests/testutil/test_util.h"
#include "util/dbformat.h"

namespace shale {
namespace {

class WalReplayTest : public testing::Test {
 protected:
  WalReplayTest() : icmp_(BytewiseComparator()), mem_(new MemTable(icmp_, 1 << 20)) { mem_->Ref(); }
  ~WalReplayTest() override { mem_->Unref(); }

  static WriteBatch Prepared(const std::string& name, const std::string& key,
                             PreparePolicy policy = PreparePolicy::kWriteCommitted) {
    WriteBatch b;
    WriteBatchInternal::InsertNoop(&b);
    EXPECT_OK(b.Put(key, name));
    EXPECT_OK(WriteBatchInternal::MarkEndPrepare(&b, name, policy));
    return b;
  }
  static WriteBatch At(WriteBatch b, SequenceNumber seq) {
    WriteBatchInternal::SetSequence(&b, seq);
    return b;
  }

  InternalKeyComparator icmp_;
  MemTable* mem_;
};

TEST_F(WalReplayTest, PrepareTakesNoSequenceAndCommitNumbersItsRecordsAfterItsOwn) {
  WalReplayer r(/*allow_2pc=*/true, /*min_data_log=*/5);
  SequenceNumber next = 0;
  ASSERT_OK(r.Apply(At(Prepared("t1", "p"), 10), 5, mem_, &next));
  EXPECT_EQ(next, 10u) << "a prepare numbers nothing";
  EXPECT_EQ(mem_->num_entries(), 0u);
  WriteBatch commit;
  ASSERT_OK(commit.Put("c", "1"));
  WriteBatchInternal::MarkCommit(&commit, "t1");
  ASSERT_OK(r.Apply(At(commit, 10), 6, mem_, &next));
  EXPECT_EQ(next, 12u) << "the commit-time record, then the prepared one";
  EXPECT_EQ(mem_->num_entries(), 2u);
  EXPECT_TRUE(r.TakePrepared().empty());
}

TEST_F(WalReplayTest, OlderWalIsReadForMarkersOnly) {
  WalReplayer r(/*allow_2pc=*/true, /*min_data_log=*/5);
  SequenceNumber next = 0;
  WriteBatch plain;
  ASSERT_OK(plain.Put("old", "1"));
  ASSERT_OK(r.Apply(At(plain, 3), 4, static_cast<MemTable*>(nullptr), &next));
  EXPECT_EQ(next, 4u);
  ASSERT_OK(r.Apply(At(Prepared("t1", "p"), 4), 4, static_cast<MemTable*>(nullptr), &next));
  ASSERT_OK(r.Apply(At(Prepared("t2", "q"), 4), 4, static_cast<MemTable*>(nullptr), &next));
  WriteBatch commit;
  WriteBatchInternal::MarkCommit(&commit, "t1");
  ASSERT_OK(r.Apply(At(commit, 4), 4, mem_, &next));  // its records are in an SST already
  EXPECT_EQ(next, 5u);
  EXPECT_EQ(mem_->num_entries(), 0u);
  auto open = r.TakePrepared();
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open.begin()->first, "t2");
  EXPECT_EQ(open.begin()->second.log_number, 4u);
}

TEST_F(WalReplayTest, RefusedBatchesApplyNothing) {
  WalReplayer r(/*allow_2pc=*/true, /*min_data_log=*/1);
  SequenceNumber next = 0;
  // Records before a nested BeginPrepare must not be applied.
  WriteBatch nested;
  ASSERT_OK(nested.Put("first", "1"));
  std::string rep = WriteBatchInternal::Contents(&nested).ToString();
  rep += static_cast<char>(kTypeBeginPrepareXID);
  rep += static_cast<char>(kTypeBeginPrepareXID);
  WriteBatch bad;
  ASSERT_OK(WriteBatchInternal::SetContents(&bad, rep));
  EXPECT_TRUE(r.Apply(At(bad, 1), 1, mem_, &next).IsCorruption());
  // A commit in a replayed WAL of a transaction no WAL prepared: its records are lost.
  WriteBatch commit;
  ASSERT_OK(commit.Put("c", "1"));
  WriteBatchInternal::MarkCommit(&commit, "nobody");
  EXPECT_TRUE(r.Apply(At(commit, 1), 1, mem_, &next).IsCorruption());
  // Numbering past the largest sequence.
  WriteBatch two;
  ASSERT_OK(two.Put("a", "1"));
  ASSERT_OK(two.Put("b", "1"));
  EXPECT_TRUE(r.Apply(At(two, kMaxSequenceNumber), 1, mem_, &next).IsCorruption());
  EXPECT_TRUE(r.Apply(At(two, ~SequenceNumber{0}), 1, mem_, &next).IsCorruption());
  ASSERT_OK(r.Apply(At(two, kMaxSequenceNumber - 1), 1, mem_, &next));
  EXPECT_EQ(mem_->num_entries(), 2u) << "only the last batch applied";
  // The same name prepared twice.
  ASSERT_OK(r.Apply(At(Prepared("t", "x"), 1), 1, mem_, &next));
  EXPECT_TRUE(r.Apply(At(Prepared("t", "y"), 1), 1, mem_, &next).IsCorruption());
}

TEST_F(WalReplayTest, PrepareWithoutTwoPhaseCommitIsNotSupported) {
  WalReplayer r(/*allow_2pc=*/false, /*min_data_log=*/1);
  SequenceNumber next = 0;
  Status s = r.Apply(At(Prepared("t", "x"), 1), 1, mem_, &next);
  EXPECT_TRUE(s.IsNotSupported());
  EXPECT_NE(s.ToString().find("Open with TransactionDB::Open()"), std::string::npos);
  WriteBatch lone;  // a Commit alone is passed over
  WriteBatchInternal::MarkCommit(&lone, "t");
  ASSERT_OK(r.Apply(At(lone, 1), 1, mem_, &next));
}

TEST_F(WalReplayTest, WritePreparedPrepareIsAppliedAtOnceAndCommitOnlyResolves) {
  WalReplayer r(/*allow_2pc=*/true, /*seq_per_batch=*/true, /*min_data_log=*/5);
  SequenceNumber next = 0;
  WriteBatch prepare;
  WriteBatchInternal::InsertNoop(&prepare);
  ASSERT_OK(prepare.Put("a", "1"));
  ASSERT_OK(prepare.Put("a", "2"));  // a second sub-batch
  ASSERT_OK(prepare.Put("b", "3"));
  ASSERT_OK(WriteBatchInternal::MarkEndPrepare(&prepare, "t1", PreparePolicy::kWritePrepared));
  ASSERT_OK(r.Apply(At(prepare, 10), 5, mem_, &next));
  EXPECT_EQ(next, 12u) << "two sub-batches: 10 and 11";
  EXPECT_EQ(mem_->num_entries(), 3u);
  auto prepared = r.TakePrepared();
  ASSERT_EQ(1u, prepared.size());
  EXPECT_EQ(10u, prepared["t1"].prepare_seq);
  EXPECT_EQ(2u, prepared["t1"].sub_batches);
  EXPECT_EQ(3u, prepared["t1"].batch.Count());

  WalReplayer r2(/*allow_2pc=*/true, /*seq_per_batch=*/true, /*min_data_log=*/5);
  ASSERT_OK(r2.Apply(At(prepare, 10), /*log=*/4, static_cast<MemTable*>(nullptr),
                     &next));  // an older WAL
  WriteBatch commit;
  WriteBatchInternal::MarkCommit(&commit, "t1");
  ASSERT_OK(r2.Apply(At(commit, 12), 6, mem_, &next));
  EXPECT_EQ(next, 13u) << "a commit takes one number";
  EXPECT_EQ(mem_->num_entries(), 3u) << "and inserts nothing";
  EXPECT_TRUE(r2.TakePrepared().empty());
  // A commit whose prepare no kept WAL holds (its records are in SST files) is passed over.
  WriteBatch other;
  WriteBatchInternal::MarkCommit(&other, "gone");
  ASSERT_OK(r2.Apply(At(other, 13), 6, mem_, &next));
  EXPECT_EQ(next, 14u);
}

TEST_F(WalReplayTest, WritePreparedPrepareMustHoldItsWholeRecord) {
  WalReplayer r(/*allow_2pc=*/true, /*seq_per_batch=*/true, /*min_data_log=*/1);
  SequenceNumber next = 0;
  WriteBatch after = Prepared("t1", "k", PreparePolicy::kWritePrepared);
  ASSERT_OK(after.Put("x", "1"));
  EXPECT_TRUE(r.Apply(At(after, 10), 1, mem_, &next).IsCorruption());
  WriteBatch before;
  ASSERT_OK(before.Put("x", "1"));
  ASSERT_OK(WriteBatchInternal::Append(&before, &after));  // a record, then a prepare
  EXPECT_TRUE(r.Apply(At(before, 10), 1, mem_, &next).IsCorruption());
  EXPECT_EQ(mem_->num_entries(), 0u) << "a refused batch applies nothing";
  EXPECT_TRUE(r.TakePrepared().empty());
}

TEST_F(WalReplayTest, APrepareOfTheOtherWritePolicyIsRefused) {
  SequenceNumber next = 0;
  for (bool seq_per_batch : {false, true}) {
    SCOPED_TRACE(seq_per_batch ? "replayed as WRITE_PREPARED" : "replayed as WRITE_COMMITTED");
    const PreparePolicy other =
        seq_per_batch ? PreparePolicy::kWriteCommitted : PreparePolicy::kWritePrepared;
    WalReplayer r(/*allow_2pc=*/true, seq_per_batch, /*min_data_log=*/1);
    Status s = r.Apply(At(Prepared("t1", "k", other), 10), 1, mem_, &next);
    EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
    EXPECT_NE(std::string::npos, s.ToString().find("the WAL must be emptied")) << s.ToString();
    // Also behind other records (which a WRITE_PREPARED prepare never is: Corruption
    // first), and in an older WAL read only for its markers.
    WriteBatch behind;
    ASSERT_OK(behind.Put("x", "1"));
    WriteBatch prepare = Prepared("t2", "k", other);
    ASSERT_OK(WriteBatchInternal::Append(&behind, &prepare));
    s = r.Apply(At(behind, 10), 1, mem_, &next);
    EXPECT_TRUE(seq_per_batch ? s.IsCorruption() : s.IsNotSupported()) << s.ToString();
    WalReplayer old_logs(/*allow_2pc=*/true, seq_per_batch, /*min_data_log=*/5);
    EXPECT_TRUE(
        old_logs
            .Apply(At(Prepared("t3", "k", other), 10), 1, static_cast<MemTable*>(nullptr), &next)
            .IsNotSupported());
    EXPECT_EQ(mem_->num_entries(), 0u) << "a refused batch applies nothing";
    EXPECT_TRUE(r.TakePrepared().empty());
    EXPECT_TRUE(old_logs.TakePrepared().empty());
    // The policy's own tag is accepted.
    const PreparePolicy own =
        seq_per_batch ? PreparePolicy::kWritePrepared : PreparePolicy::kWriteCommitted;
    EXPECT_OK(r.Apply(At(Prepared("t4", "k", own), 10), 1, mem_, &next));
    EXPECT_EQ(1u, r.TakePrepared().size());
  }
  // Without allow_2pc, either tag asks for a TransactionDB, as before.
  for (PreparePolicy p : {PreparePolicy::kWriteCommitted, PreparePolicy::kWritePrepared}) {
    WalReplayer plain(/*allow_2pc=*/false, /*min_data_log=*/1);
    Status s = plain.Apply(At(Prepared("t", "k", p), 10), 1, mem_, &next);
    EXPECT_TRUE(s.IsNotSupported());
    EXPECT_NE(std::string::npos, s.ToString().find("TransactionDB::Open()")) << s.ToString();
  }
}

}  // namespace
}  // namespace shale
