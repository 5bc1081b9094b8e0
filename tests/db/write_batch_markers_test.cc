// Two-phase commit markers in a WriteBatch (BeginPrepare, EndPrepare, Commit, Rollback,
// Noop): how they are written and read back, what a handler that does not expect them is
// told, and what a DB without transactions does with them: a write holding one is
// refused, and a WAL holding a prepared transaction fails the open with RocksDB's status
// and message, its data left in place, while a lone Commit marker is passed over.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "db/filename.h"
#include "db/log_writer.h"
#include "db/write_batch_internal.h"
#include "shale/db.h"
#include "shale/write_batch.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

// Every record and marker as text: "BeginPrepare Put(a,1) EndPrepare(x) ...".
class Recorder : public WriteBatch::Handler {
 public:
  std::string seen;
  Status PutCF(uint32_t, const Slice& k, const Slice& v) override {
    return Add("Put(" + k.ToString() + "," + v.ToString() + ")");
  }
  Status DeleteCF(uint32_t, const Slice& k) override { return Add("Delete(" + k.ToString() + ")"); }
  Status MarkBeginPrepare(bool) override { return Add("BeginPrepare"); }
  Status MarkEndPrepare(const Slice& xid) override {
    return Add("EndPrepare(" + xid.ToString() + ")");
  }
  Status MarkCommit(const Slice& xid) override { return Add("Commit(" + xid.ToString() + ")"); }
  Status MarkRollback(const Slice& xid) override { return Add("Rollback(" + xid.ToString() + ")"); }
  Status MarkNoop(bool empty_batch) override {
    return Add(empty_batch ? "Noop(first)" : "Noop(later)");
  }

 private:
  Status Add(const std::string& what) {
    seen += (seen.empty() ? "" : " ") + what;
    return Status::OK();
  }
};

// A prepared transaction's batch, as a TransactionDB's Prepare will log it.
WriteBatch Prepared(const std::string& xid, PreparePolicy policy = PreparePolicy::kWriteCommitted) {
  WriteBatch b;
  WriteBatchInternal::InsertNoop(&b);
  EXPECT_OK(b.Put("a", "1"));
  EXPECT_OK(b.Delete("b"));
  EXPECT_OK(WriteBatchInternal::MarkEndPrepare(&b, xid, policy));
  return b;
}

TEST(WriteBatchMarkersTest, PreparedBatchReadsBackWithItsMarkers) {
  for (PreparePolicy policy : {PreparePolicy::kWriteCommitted, PreparePolicy::kWritePrepared}) {
    WriteBatch b = Prepared("xid1", policy);
    // The policy is in BeginPrepare's tag (RocksDB's values), for recovery to check.
    EXPECT_EQ(
        policy == PreparePolicy::kWritePrepared ? 0x12 : 0x9,
        static_cast<unsigned char>(WriteBatchInternal::Contents(&b)[WriteBatchInternal::kHeader]));
    Recorder r;
    ASSERT_OK(b.Iterate(&r));
    EXPECT_EQ(r.seen, "BeginPrepare Put(a,1) Delete(b) EndPrepare(xid1)");
    EXPECT_EQ(b.Count(), 2u) << "markers are not counted";
    EXPECT_TRUE(b.HasBeginPrepare());
    EXPECT_TRUE(b.HasEndPrepare());
    EXPECT_FALSE(b.HasCommit());
    EXPECT_FALSE(b.HasRollback());
    EXPECT_TRUE(b.HasPut());

    // The bytes are a well-formed batch: a WAL record of them decodes to the same thing.
    WriteBatch copy;
    ASSERT_OK(WriteBatchInternal::SetContents(&copy, WriteBatchInternal::Contents(&b)));
    Recorder r2;
    ASSERT_OK(copy.Iterate(&r2));
    EXPECT_EQ(r2.seen, r.seen);
  }
}

TEST(WriteBatchMarkersTest, CommitAndRollbackMarkers) {
  WriteBatch b;
  WriteBatchInternal::MarkCommit(&b, "t1");
  WriteBatchInternal::MarkRollback(&b, "t2");
  Recorder r;
  ASSERT_OK(b.Iterate(&r));
  EXPECT_EQ(r.seen, "Commit(t1) Rollback(t2)");
  EXPECT_EQ(b.Count(), 0u);
  EXPECT_TRUE(b.HasCommit());
  EXPECT_TRUE(b.HasRollback());
  EXPECT_FALSE(b.HasBeginPrepare());
}

TEST(WriteBatchMarkersTest, NoopSaysWhetherAnythingCameBefore) {
  WriteBatch b;
  WriteBatchInternal::InsertNoop(&b);
  ASSERT_OK(b.Put("k", "v"));
  WriteBatchInternal::InsertNoop(&b);
  Recorder r;
  ASSERT_OK(b.Iterate(&r));
  EXPECT_EQ(r.seen, "Noop(first) Put(k,v) Noop(later)");
}

TEST(WriteBatchMarkersTest, EndPrepareNeedsTheLeadingNoopOnce) {
  WriteBatch plain;
  ASSERT_OK(plain.Put("k", "v"));
  const std::string before = plain.Data();
  EXPECT_TRUE(WriteBatchInternal::MarkEndPrepare(&plain, "x").IsInvalidArgument());
  EXPECT_EQ(plain.Data(), before) << "a refused mark changes nothing";

  WriteBatch empty;
  EXPECT_TRUE(WriteBatchInternal::MarkEndPrepare(&empty, "x").IsInvalidArgument());

  WriteBatch b = Prepared("x");
  const std::string prepared = b.Data();
  EXPECT_TRUE(WriteBatchInternal::MarkEndPrepare(&b, "y").IsInvalidArgument());
  EXPECT_EQ(b.Data(), prepared);
}

// A handler written before transactions (it overrides only the data records) is told
// what it met, with RocksDB's messages, instead of silently skipping a marker.
TEST(WriteBatchMarkersTest, HandlerWithoutMarkerCallbacksFailsOnThem) {
  struct PutsOnly : WriteBatch::Handler {
    int puts = 0;
    void Put(const Slice&, const Slice&) override { puts++; }
  };
  PutsOnly h;
  Status s = Prepared("x").Iterate(&h);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("MarkBeginPrepare() handler not defined."), std::string::npos)
      << s.ToString();
  EXPECT_EQ(h.puts, 0);

  WriteBatch commit;
  WriteBatchInternal::MarkCommit(&commit, "x");
  s = commit.Iterate(&h);
  EXPECT_NE(s.ToString().find("MarkCommit() handler not defined."), std::string::npos)
      << s.ToString();

  WriteBatch noop;  // a Noop is harmless to every handler
  WriteBatchInternal::InsertNoop(&noop);
  EXPECT_OK(noop.Iterate(&h));
}

TEST(WriteBatchMarkersTest, TruncatedMarkerIsCorruption) {
  WriteBatch b;
  WriteBatchInternal::MarkCommit(&b, "a-transaction-name");
  const std::string whole = b.Data();
  for (size_t cut = WriteBatchInternal::kHeader + 1; cut < whole.size(); cut++) {
    WriteBatch copy;
    Status s = WriteBatchInternal::SetContents(&copy, Slice(whole.data(), cut));
    EXPECT_TRUE(s.IsCorruption()) << "cut at " << cut << ": " << s.ToString();
  }
}

class DBMarkersTest : public DBTestBase {
 protected:
  DBMarkersTest() : DBTestBase("db_markers") {}

  // Writes WAL `number` (past every file the DB made) holding `batch` at sequence `seq`,
  // as a crash after the write would leave it.
  void WriteWal(uint64_t number, WriteBatch batch, SequenceNumber seq) {
    std::unique_ptr<WritableFile> file;
    ASSERT_OK(Env::Default()->NewWritableFile(LogFileName(dbname_, number), &file, EnvOptions()));
    log::Writer writer(std::move(file), number);
    WriteBatchInternal::SetSequence(&batch, seq);
    ASSERT_OK(writer.AddRecord(WriteBatchInternal::Contents(&batch)));
    ASSERT_OK(writer.Sync(false));
    ASSERT_OK(writer.Close());
  }
};

TEST_F(DBMarkersTest, WriteWithMarkersIsRefusedAndAppliesNothing) {
  Open();
  WriteBatch prepared = Prepared("x");
  Status s = db_->Write(WriteOptions(), &prepared);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  WriteBatch commit;
  ASSERT_OK(commit.Put("c", "1"));
  WriteBatchInternal::MarkCommit(&commit, "x");
  EXPECT_TRUE(db_->Write(WriteOptions(), &commit).IsNotSupported());
  EXPECT_EQ(Contents(), "");

  WriteBatch noop;  // a Noop is no transaction: the batch is applied
  WriteBatchInternal::InsertNoop(&noop);
  ASSERT_OK(noop.Put("n", "1"));
  ASSERT_OK(db_->Write(WriteOptions(), &noop));
  EXPECT_EQ(Contents(), "n=1,");
  Reopen();
  EXPECT_EQ(Contents(), "n=1,");
}

TEST_F(DBMarkersTest, PreparedTransactionInTheWalFailsThePlainOpen) {
  Open();
  ASSERT_OK(Put("before", "1"));
  ASSERT_OK(Flush());
  Close();
  WriteWal(1000, Prepared("xid7"), /*seq=*/2);

  Status s = TryReopen();
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_NE(s.ToString().find("WAL contains prepared transactions. Open with "
                              "TransactionDB::Open()."),
            std::string::npos)
      << s.ToString();
  EXPECT_OK(Env::Default()->FileExists(LogFileName(dbname_, 1000)))
      << "the WAL holding the transaction is kept";
  // Every mode fails the same way: it is not damage to skip.
  options_.wal_recovery_mode = WALRecoveryMode::kSkipAnyCorruptedRecords;
  EXPECT_TRUE(TryReopen().IsNotSupported());
}

TEST_F(DBMarkersTest, LoneCommitMarkerIsPassedOver) {
  Open();
  Close();
  WriteBatch b;  // a commit whose prepared section lived in a WAL since deleted
  ASSERT_OK(b.Put("k", "v"));
  WriteBatchInternal::MarkCommit(&b, "gone");
  WriteWal(1000, std::move(b), /*seq=*/1);
  Open();
  EXPECT_EQ(Contents(), "k=v,");
}

}  // namespace
}  // namespace shale
