// Range deletions in the stacked DBs, as RocksDB 11.8.1 answers them: a TransactionDB refuses
// DeleteRange and a batch holding one unless the write promises skip_concurrency_control
// (and, under WRITE_PREPARED, skip_duplicate_key_check); an OptimisticTransactionDB refuses
// both; DBWithTTL passes them through. Under WRITE_PREPARED (a snapshot checker, so flush and
// compaction leave out nothing beforehand) no merge operand is folded onto a value a
// tombstone deleted; and the transactions' conflict check counts a tombstone that only a
// file holds as a write to the keys it covers.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "db/db_impl.h"
#include "shale/utilities/db_ttl.h"
#include "shale/utilities/merge_operators.h"
#include "shale/utilities/optimistic_transaction_db.h"
#include "shale/write_batch.h"
#include "tests/testutil/write_prepared_config.h"
#include "tests/utilities/transaction_fixture.h"

namespace shale {
namespace {

// WRITE_COMMITTED, then each WRITE_PREPARED configuration.
struct Policy {
  const char* name;
  bool write_prepared;
  WritePreparedConfig config;
};
const Policy kPolicies[] = {
    {"WriteCommitted", false, {"", false, false}},
    {"WritePreparedOneQueue", true, kWritePreparedConfigs[0]},
    {"WritePreparedTwoQueues", true, kWritePreparedConfigs[1]},
    {"WritePreparedTwoQueuesUnordered", true, kWritePreparedConfigs[2]},
};

class TransactionRangeDelTest : public TransactionTestBase,
                                public testing::WithParamInterface<Policy> {
 protected:
  TransactionRangeDelTest() {
    if (GetParam().write_prepared) {
      UseWritePrepared(GetParam().config, &options_, &txn_db_options_);
    }
    options_.merge_operator = MergeOperators::CreateStringAppendOperator();
    options_.disable_auto_compactions = true;
  }

  // A range deletion written as RocksDB allows it in a TransactionDB.
  Status DeleteRangeUnlocked(const std::string& begin, const std::string& end) {
    WriteBatch batch;
    Status s = batch.DeleteRange(begin, end);
    if (!s.ok()) return s;
    TransactionDBWriteOptimizations promises;
    promises.skip_concurrency_control = true;
    promises.skip_duplicate_key_check = true;
    return db_->Write(WriteOptions(), promises, &batch);
  }
  DBImpl* impl() { return static_cast<DBImpl*>(db_->GetRootDB()); }
  std::string Scan() {
    std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
    std::string out;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out += it->key().ToString() + "=" + it->value().ToString() + ",";
    }
    return it->status().ok() ? out : it->status().ToString();
  }
};

TEST_P(TransactionRangeDelTest, RefusedUnlessTheWritePromisesNoConflict) {
  Open();
  ASSERT_OK(db_->Put(WriteOptions(), "a", "1"));
  EXPECT_TRUE(
      db_->DeleteRange(WriteOptions(), db_->DefaultColumnFamily(), "a", "b").IsNotSupported());
  EXPECT_TRUE(db_->DeleteRange(WriteOptions(), "a", "b").IsNotSupported());

  WriteBatch batch;
  ASSERT_OK(batch.Put("x", "2"));
  ASSERT_OK(batch.DeleteRange("a", "b"));
  Status s = db_->Write(WriteOptions(), &batch);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  TransactionDBWriteOptimizations promises;
  s = db_->Write(WriteOptions(), promises, &batch);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  promises.skip_concurrency_control = true;
  s = db_->Write(WriteOptions(), promises, &batch);
  if (GetParam().write_prepared) {
    // WRITE_PREPARED also wants the batch's keys promised distinct.
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_EQ("1", Get("a"));
    EXPECT_EQ("NOT_FOUND", Get("x"));  // nothing of a refused batch is written
    promises.skip_duplicate_key_check = true;
    s = db_->Write(WriteOptions(), promises, &batch);
  }
  ASSERT_OK(s);
  EXPECT_EQ("NOT_FOUND", Get("a"));
  EXPECT_EQ("2", Get("x"));
}

TEST_P(TransactionRangeDelTest, SkipConcurrencyControlOptionAsRocksDB) {
  txn_db_options_.skip_concurrency_control = true;
  Open();
  ASSERT_OK(db_->Put(WriteOptions(), "a", "1"));
  WriteBatch batch;
  ASSERT_OK(batch.DeleteRange("a", "b"));
  const Status s = db_->Write(WriteOptions(), &batch);
  if (GetParam().write_prepared) {
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_EQ("1", Get("a"));
  } else {
    ASSERT_OK(s);
    EXPECT_EQ("NOT_FOUND", Get("a"));
  }
  EXPECT_TRUE(db_->DeleteRange(WriteOptions(), "a", "b").IsNotSupported());
}

// The operand above a tombstone merges onto nothing, in the memtable, after a flush (the
// flush sees the value, the tombstone and the operand in one memtable) and after a
// compaction that meets them in different files.
TEST_P(TransactionRangeDelTest, NoOperandFoldsOntoADeletedValue) {
  Open();
  ASSERT_OK(db_->Put(WriteOptions(), "k1", "old"));
  ASSERT_OK(DeleteRangeUnlocked("k", "l"));
  ASSERT_OK(db_->Merge(WriteOptions(), "k1", "new"));
  EXPECT_EQ("new", Get("k1"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  EXPECT_EQ("new", Get("k1"));
  EXPECT_EQ("k1=new,", Scan());

  ASSERT_OK(db_->Put(WriteOptions(), "k2", "old"));
  ASSERT_OK(db_->Merge(WriteOptions(), "k2", "op1"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(DeleteRangeUnlocked("k2", "k3"));
  ASSERT_OK(db_->Merge(WriteOptions(), "k2", "op2"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(db_->Merge(WriteOptions(), "k2", "op3"));
  EXPECT_EQ("op2,op3", Get("k2"));
  CompactRangeOptions cro;
  cro.bottommost_level_compaction = BottommostLevelCompaction::kForce;
  ASSERT_OK(db_->CompactRange(cro, nullptr, nullptr));
  EXPECT_EQ("op2,op3", Get("k2"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(db_->CompactRange(cro, nullptr, nullptr));
  EXPECT_EQ("op2,op3", Get("k2"));
  EXPECT_EQ("k1=new,k2=op2,op3,", Scan());
  Reopen();
  EXPECT_EQ("k1=new,k2=op2,op3,", Scan());
}

// A snapshot between the value and the tombstone keeps the value for itself; the operand
// above still merges onto nothing for the latest state.
TEST_P(TransactionRangeDelTest, SnapshotKeepsTheDeletedValueForItself) {
  Open();
  ASSERT_OK(db_->Put(WriteOptions(), "k", "old"));
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_OK(DeleteRangeUnlocked("a", "z"));
  ASSERT_OK(db_->Merge(WriteOptions(), "k", "new"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  ReadOptions at_snap;
  at_snap.snapshot = snap;
  std::string value;
  ASSERT_OK(db_->Get(at_snap, "k", &value));
  EXPECT_EQ("old", value);
  EXPECT_EQ("new", Get("k"));
  db_->ReleaseSnapshot(snap);
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  EXPECT_EQ("new", Get("k"));
}

// A tombstone that only a file holds, over a key that no file holds older, is the newest
// write to that key: the conflict check finds it.
TEST_P(TransactionRangeDelTest, ConflictCheckSeesATombstoneOnlyAFileHolds) {
  Open();
  ASSERT_OK(db_->Put(WriteOptions(), "other", "v"));
  const SequenceNumber before = db_->GetLatestSequenceNumber();
  ASSERT_OK(DeleteRangeUnlocked("a", "c"));
  // The tombstone's own number (with two write queues a commit number follows it).
  const SequenceNumber after = db_->GetLatestSequenceNumber();
  ASSERT_OK(db_->Flush(FlushOptions()));
  SequenceNumber seq = 0;
  bool found = false;
  ASSERT_OK(impl()->GetLatestSequenceForKey(nullptr, "b", /*cache_only=*/false, &seq, &found));
  EXPECT_TRUE(found);
  EXPECT_GT(seq, before);
  EXPECT_LE(seq, after);
  ASSERT_OK(impl()->GetLatestSequenceForKey(nullptr, "c", /*cache_only=*/false, &seq, &found));
  EXPECT_FALSE(found);  // the end is exclusive

  // A transaction whose snapshot predates a file-only tombstone over its key conflicts.
  TransactionOptions with_snapshot;
  with_snapshot.set_snapshot = true;
  auto txn = Begin(with_snapshot);
  ASSERT_OK(DeleteRangeUnlocked("m", "p"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  std::string value;
  const Status s = txn->GetForUpdate(ReadOptions(), "n", &value);
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
}

INSTANTIATE_TEST_SUITE_P(Policies, TransactionRangeDelTest, testing::ValuesIn(kPolicies),
                         [](const testing::TestParamInfo<Policy>& i) { return i.param.name; });

TEST(OptimisticTransactionRangeDelTest, RefusedAsRocksDB) {
  TempDirectory dir("occ_range_del");
  Options options;
  options.create_if_missing = true;
  OptimisticTransactionDB* raw = nullptr;
  ASSERT_OK(OptimisticTransactionDB::Open(options, dir.path() + "/db", &raw));
  std::unique_ptr<OptimisticTransactionDB> db(raw);
  ASSERT_OK(db->Put(WriteOptions(), "a", "1"));
  EXPECT_TRUE(db->DeleteRange(WriteOptions(), "a", "b").IsNotSupported());
  EXPECT_TRUE(
      db->DeleteRange(WriteOptions(), db->DefaultColumnFamily(), "a", "b").IsNotSupported());
  WriteBatch batch;
  ASSERT_OK(batch.Put("x", "2"));
  ASSERT_OK(batch.DeleteRange("a", "b"));
  EXPECT_TRUE(db->Write(WriteOptions(), &batch).IsNotSupported());
  EXPECT_EQ("1", ReadValue(db.get(), "a"));
  EXPECT_EQ("NOT_FOUND", ReadValue(db.get(), "x"));
  ASSERT_OK(db->Close());
}

TEST(TtlRangeDelTest, DeleteRangeAndBatchesPassThrough) {
  TempDirectory dir("ttl_range_del");
  Options options;
  options.create_if_missing = true;
  DBWithTTL* raw = nullptr;
  ASSERT_OK(DBWithTTL::Open(options, dir.path() + "/db", &raw, /*ttl=*/1000));
  std::unique_ptr<DBWithTTL> db(raw);
  for (const char* k : {"a", "b", "c", "d", "e"}) ASSERT_OK(db->Put(WriteOptions(), k, "v"));
  ASSERT_OK(db->DeleteRange(WriteOptions(), "a", "c"));
  WriteBatch batch;
  ASSERT_OK(batch.DeleteRange("d", "e"));
  ASSERT_OK(batch.Put("f", "w"));
  ASSERT_OK(db->Write(WriteOptions(), &batch));
  std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions()));
  std::string out;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    out += it->key().ToString() + "=" + it->value().ToString() + ",";
  }
  ASSERT_OK(it->status());
  EXPECT_EQ("c=v,e=v,f=w,", out);
  it.reset();
  ASSERT_OK(db->Close());
}

}  // namespace
}  // namespace shale
