// WRITE_PREPARED transactions through the public API, in each write configuration the
// policy allows (one queue; two queues; two queues with unordered_write): prepared data is
// in the DB yet hidden from every read until Commit; snapshots keep their view; Rollback
// restores the values from before the prepare; recovery brings prepared transactions back
// hidden (also after their data was flushed) and committed data visible; flush and
// compaction keep what uncommitted data would otherwise drop; a commit cache small enough
// to evict all the time; and threads preparing, committing and rolling back while readers
// check atomicity at snapshots, then the committed state after reopen.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "shale/utilities/merge_operators.h"
#include "tests/testutil/write_prepared_config.h"
#include "tests/utilities/transaction_fixture.h"
#include "util/random.h"
#include "utilities/transactions/write_prepared_txn_db.h"

namespace shale {
namespace {

using Config = WritePreparedConfig;

class WritePreparedTxnTest : public TransactionTestBase,
                             public testing::WithParamInterface<Config> {
 protected:
  WritePreparedTxnTest() {
    UseWritePrepared(GetParam(), &options_, &txn_db_options_);
    // Small enough that commits evict each other within a test.
    txn_db_options_.wp_commit_cache_bits = 4;
    options_.merge_operator = MergeOperators::CreateFromStringId("stringappend");
    Open();
  }

  std::unique_ptr<Transaction> Prepared(const std::string& name,
                                        const std::map<std::string, std::string>& puts) {
    auto txn = Begin();
    EXPECT_OK(txn->SetName(name));
    for (const auto& [k, v] : puts) EXPECT_OK(txn->Put(k, v));
    EXPECT_OK(txn->Prepare());
    return txn;
  }
  // The base DB's own read: no visibility callback, so it sees prepared data.
  std::string RawGet(const std::string& key) { return ReadValue(db_->GetBaseDB(), key); }
  std::string Scan(const ReadOptions& ro = ReadOptions(), bool backward = false) {
    std::unique_ptr<Iterator> it(db_->NewIterator(ro));
    std::string out;
    backward ? it->SeekToLast() : it->SeekToFirst();
    for (; it->Valid(); backward ? it->Prev() : it->Next()) {
      out += it->key().ToString() + "=" + it->value().ToString() + ",";
    }
    return it->status().ok() ? out : out + it->status().ToString();
  }
  std::string MultiGetOne(const std::string& key, const ReadOptions& ro = ReadOptions()) {
    std::vector<std::string> values;
    std::vector<Status> s = db_->MultiGet(ro, {Slice(key)}, &values);
    if (s[0].IsNotFound()) return "NOT_FOUND";
    return s[0].ok() ? values[0] : s[0].ToString();
  }
};

TEST_P(WritePreparedTxnTest, PreparedDataIsInTheDbButHiddenUntilCommit) {
  ASSERT_OK(db_->Put(WriteOptions(), "a", "old"));
  auto txn = Prepared("t1", {{"a", "new"}, {"b", "new"}});
  // With one queue the prepare's numbers are published (its data is hidden by the
  // callback alone); with two, only commits publish.
  if (!GetParam().two_queues) EXPECT_EQ("new", RawGet("a")) << "the prepare wrote the memtable";
  EXPECT_EQ("old", Get("a"));
  EXPECT_EQ("NOT_FOUND", Get("b"));
  EXPECT_EQ("old", MultiGetOne("a"));
  EXPECT_EQ("NOT_FOUND", MultiGetOne("b"));
  EXPECT_EQ("a=old,", Scan());
  EXPECT_EQ("a=old,", Scan(ReadOptions(), /*backward=*/true));
  const Snapshot* before = db_->GetSnapshot();
  ASSERT_OK(txn->Commit());
  EXPECT_EQ("new", Get("a"));
  EXPECT_EQ("new", Get("b"));
  EXPECT_EQ("new", MultiGetOne("b"));
  EXPECT_EQ("a=new,b=new,", Scan());
  ReadOptions at_before;
  at_before.snapshot = before;
  EXPECT_EQ("old", ReadValue(db_.get(), "a", at_before)) << "a snapshot keeps its view";
  EXPECT_EQ("NOT_FOUND", ReadValue(db_.get(), "b", at_before));
  EXPECT_EQ("a=old,", Scan(at_before));
  db_->ReleaseSnapshot(before);
}

TEST_P(WritePreparedTxnTest, MergeOperandsOfAPrepareAreHidden) {
  ASSERT_OK(db_->Merge(WriteOptions(), "m", "1"));
  auto txn = Begin();
  ASSERT_OK(txn->SetName("t"));
  ASSERT_OK(txn->Merge("m", "2"));
  ASSERT_OK(txn->Prepare());
  EXPECT_EQ("1", Get("m"));
  if (!GetParam().two_queues) EXPECT_EQ("1,2", RawGet("m"));
  std::vector<PinnableSlice> operands(4);
  GetMergeOperandsOptions gmo;
  gmo.expected_max_number_of_operands = 4;
  int n = 0;
  ASSERT_OK(db_->GetMergeOperands(ReadOptions(), db_->DefaultColumnFamily(), "m", operands.data(),
                                  &gmo, &n));
  EXPECT_EQ(1, n);
  ASSERT_OK(txn->Commit());
  EXPECT_EQ("1,2", Get("m"));
}

TEST_P(WritePreparedTxnTest, RollbackRestoresTheValuesFromBeforeThePrepare) {
  ASSERT_OK(db_->Put(WriteOptions(), "p", "before"));
  ASSERT_OK(db_->Merge(WriteOptions(), "m", "x"));
  auto txn = Begin();
  ASSERT_OK(txn->SetName("r"));
  ASSERT_OK(txn->Put("p", "txn"));
  ASSERT_OK(txn->Delete("m"));
  ASSERT_OK(txn->Put("fresh", "txn"));
  ASSERT_OK(txn->Prepare());
  ASSERT_OK(txn->Rollback());
  EXPECT_EQ(Transaction::ROLLEDBACK, txn->GetState());
  EXPECT_EQ("before", Get("p"));
  EXPECT_EQ("x", Get("m"));
  EXPECT_EQ("NOT_FOUND", Get("fresh"));
  EXPECT_EQ("m=x,p=before,", Scan());
  // The same after reopen, the rollback's records replayed from the WAL.
  txn.reset();
  Reopen();
  EXPECT_EQ("before", Get("p"));
  EXPECT_EQ("NOT_FOUND", Get("fresh"));
  std::vector<Transaction*> prepared;
  db_->GetAllPreparedTransactions(&prepared);
  EXPECT_TRUE(prepared.empty());
}

// RocksDB's rollback_merge_operands: with false (the default) a key the transaction only
// merged into keeps its operands, which commit with the rollback; with true it is restored
// too. A key it also put or deleted is restored either way.
TEST_P(WritePreparedTxnTest, RollbackOfMergesFollowsRollbackMergeOperands) {
  for (bool rollback_merges : {false, true}) {
    SCOPED_TRACE(rollback_merges ? "rollback_merge_operands" : "default");
    txn_db_options_.rollback_merge_operands = rollback_merges;
    Reopen();
    const std::string m = rollback_merges ? "m1" : "m0";
    const std::string pm = rollback_merges ? "pm1" : "pm0";
    ASSERT_OK(db_->Merge(WriteOptions(), m, "x"));
    ASSERT_OK(db_->Put(WriteOptions(), pm, "y"));
    auto txn = Begin();
    ASSERT_OK(txn->SetName("r" + m));
    ASSERT_OK(txn->Merge(m, "2"));
    ASSERT_OK(txn->Put(pm, "p"));
    ASSERT_OK(txn->Merge(pm, "3"));
    ASSERT_OK(txn->Prepare());
    EXPECT_EQ("x", Get(m));
    ASSERT_OK(txn->Rollback());
    EXPECT_EQ(rollback_merges ? "x" : "x,2", Get(m));
    EXPECT_EQ("y", Get(pm)) << "a key the transaction put is restored either way";
    txn.reset();
    Reopen();
    EXPECT_EQ(rollback_merges ? "x" : "x,2", Get(m));
    EXPECT_EQ("y", Get(pm));
  }
}

// The commit-time batch's records commit with the prepare, in one write with the marker:
// invisible before the commit and to older snapshots, visible after, and recovered as
// committed (with and without a flush in between).
TEST_P(WritePreparedTxnTest, CommitTimeBatchCommitsWithThePrepare) {
  for (bool flush : {false, true}) {
    SCOPED_TRACE(flush ? "flushed" : "in the WAL only");
    const std::string x = flush ? "1" : "0";
    ASSERT_OK(db_->Put(WriteOptions(), "a" + x, "old"));
    auto txn = Prepared("c" + x, {{"a" + x, "prepared"}, {"b" + x, "prepared"}});
    ASSERT_OK(txn->GetCommitTimeWriteBatch()->Put("ct" + x, "c"));
    ASSERT_OK(txn->GetCommitTimeWriteBatch()->Put("b" + x, "commit-time"));  // newer
    ASSERT_OK(txn->GetCommitTimeWriteBatch()->Merge("m" + x, "z"));
    const Snapshot* before = db_->GetSnapshot();
    ASSERT_OK(txn->Commit());
    EXPECT_EQ(Transaction::COMMITTED, txn->GetState());
    EXPECT_EQ("prepared", Get("a" + x));
    EXPECT_EQ("commit-time", Get("b" + x));
    EXPECT_EQ("c", Get("ct" + x));
    EXPECT_EQ("z", Get("m" + x));
    ReadOptions at_before;
    at_before.snapshot = before;
    EXPECT_EQ("old", ReadValue(db_.get(), "a" + x, at_before));
    EXPECT_EQ("NOT_FOUND", ReadValue(db_.get(), "ct" + x, at_before));
    EXPECT_EQ("NOT_FOUND", ReadValue(db_.get(), "b" + x, at_before));
    db_->ReleaseSnapshot(before);
    txn.reset();
    if (flush) ASSERT_OK(db_->Flush(FlushOptions()));
    Reopen();
    EXPECT_EQ("prepared", Get("a" + x));
    EXPECT_EQ("commit-time", Get("b" + x));
    EXPECT_EQ("c", Get("ct" + x));
    EXPECT_EQ("z", Get("m" + x));
    std::vector<Transaction*> prepared;
    db_->GetAllPreparedTransactions(&prepared);
    EXPECT_TRUE(prepared.empty());
  }
}

// A commit marker is what resolves a prepare at recovery: without the WAL the engine
// refuses the commit, with or without commit-time records, and the transaction stays
// prepared and hidden.
TEST_P(WritePreparedTxnTest, CommitWithoutTheWalIsRefusedAndStaysPrepared) {
  WriteOptions no_wal;
  no_wal.disableWAL = true;
  for (bool commit_time : {false, true}) {
    SCOPED_TRACE(commit_time ? "with commit-time records" : "marker only");
    const std::string x = commit_time ? "1" : "0";
    std::unique_ptr<Transaction> txn(db_->BeginTransaction(no_wal, TransactionOptions()));
    ASSERT_OK(txn->SetName("nw" + x));
    ASSERT_OK(txn->Put("k" + x, "v"));
    Status s = txn->Prepare();
    if (!s.ok()) {
      // Refused already at Prepare: nothing of it is in the DB.
      EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
      EXPECT_EQ("NOT_FOUND", RawGet("k" + x));
      continue;
    }
    if (commit_time) ASSERT_OK(txn->GetCommitTimeWriteBatch()->Put("ct" + x, "c"));
    s = txn->Commit();
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_EQ("NOT_FOUND", Get("k" + x));
    EXPECT_EQ("NOT_FOUND", Get("ct" + x));
    ASSERT_OK(txn->Rollback());
  }
}

TEST_P(WritePreparedTxnTest, RecoveryBringsPreparedTransactionsBackHidden) {
  for (bool flush : {false, true}) {
    SCOPED_TRACE(flush ? "flushed" : "in the WAL only");
    const std::string c = flush ? "c1" : "c0";
    const std::string r = flush ? "r1" : "r0";
    ASSERT_OK(db_->Put(WriteOptions(), "k" + c, "committed-before"));
    auto commit_me = Prepared(c, {{"k" + c, "committed-after"}, {"n" + c, "new"}});
    auto roll_me = Prepared(r, {{"k" + r, "never"}});
    if (flush) ASSERT_OK(db_->Flush(FlushOptions()));
    commit_me.reset();  // both stay prepared in the WAL
    roll_me.reset();
    Reopen();
    EXPECT_EQ("committed-before", Get("k" + c));
    EXPECT_EQ("NOT_FOUND", Get("n" + c));
    EXPECT_EQ("NOT_FOUND", Get("k" + r));
    Transaction* t = db_->GetTransactionByName(c);
    ASSERT_NE(nullptr, t);
    ASSERT_EQ(Transaction::PREPARED, t->GetState());
    ASSERT_OK(t->Commit());
    delete t;
    t = db_->GetTransactionByName(r);
    ASSERT_NE(nullptr, t);
    ASSERT_OK(t->Rollback());
    delete t;
    EXPECT_EQ("committed-after", Get("k" + c));
    EXPECT_EQ("new", Get("n" + c));
    EXPECT_EQ("NOT_FOUND", Get("k" + r));
    Reopen();
    EXPECT_EQ("committed-after", Get("k" + c));
    EXPECT_EQ("NOT_FOUND", Get("k" + r));
  }
}

TEST_P(WritePreparedTxnTest, FlushAndCompactionKeepTheCommittedValueUnderAPrepare) {
  ASSERT_OK(db_->Put(WriteOptions(), "k", "v1"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  auto txn = Prepared("t", {{"k", "v2"}});
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  EXPECT_EQ("v1", Get("k")) << "the uncommitted v2 must not have dropped v1";
  ASSERT_OK(txn->Commit());
  EXPECT_EQ("v2", Get("k"));
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  EXPECT_EQ("v2", Get("k"));
}

// A flush judges its entries by a snapshot of its own, taken after it read the smallest
// number still in flight: entries below that are committed as of the job's snapshot
// without a look into the commit cache. Only the prepare's entry is looked up; it stays
// hidden, and the committed ones stay visible.
TEST_P(WritePreparedTxnTest, FlushLooksUpOnlyEntriesFromTheOldestInFlightOn) {
  auto* wp = dynamic_cast<WritePreparedTxnDB*>(db_.get());
  ASSERT_NE(nullptr, wp);
  auto lookups = std::make_shared<std::atomic<int>>(0);
  wp->visibility()->TEST_SetBeforeCacheLookup([lookups] { lookups->fetch_add(1); });
  for (int i = 0; i < 100; i++) {
    ASSERT_OK(db_->Put(WriteOptions(), "k" + std::to_string(i), "v"));
  }
  auto txn = Prepared("late", {{"z", "prepared"}});
  lookups->store(0);
  ASSERT_OK(db_->Flush(FlushOptions()));
  EXPECT_LT(lookups->load(), 10) << "the committed entries below the prepare were looked up";
  EXPECT_EQ("NOT_FOUND", Get("z"));
  EXPECT_EQ("v", Get("k7"));
  ASSERT_OK(txn->Commit());
  EXPECT_EQ("prepared", Get("z"));
  wp->visibility()->TEST_SetBeforeCacheLookup(nullptr);
}

TEST_P(WritePreparedTxnTest, WritesOutsideTransactionsAndWithoutPrepare) {
  WriteBatch batch;
  ASSERT_OK(batch.Put("x", "1"));
  ASSERT_OK(batch.Put("x", "2"));  // one key twice: two sub-batches
  ASSERT_OK(batch.Put("y", "3"));
  ASSERT_OK(db_->Write(WriteOptions(), &batch));
  EXPECT_EQ("2", Get("x"));
  EXPECT_EQ("3", Get("y"));
  auto txn = Begin();
  ASSERT_OK(txn->Put("x", "4"));
  EXPECT_EQ("2", Get("x"));
  ASSERT_OK(txn->Commit());
  EXPECT_EQ("4", Get("x"));
  Reopen();
  EXPECT_EQ("4", Get("x"));
  EXPECT_EQ("3", Get("y"));
}

TEST_P(WritePreparedTxnTest, ConflictCheckSeesACommitAfterTheSnapshot) {
  ASSERT_OK(db_->Put(WriteOptions(), "k", "0"));
  // Prepared before the reader's snapshot, committed after it: its write is newer than the
  // snapshot although its number is older.
  auto writer = Prepared("w", {{"k", "1"}});
  TransactionOptions with_snapshot;
  with_snapshot.set_snapshot = true;
  auto reader = Begin(with_snapshot);
  ASSERT_OK(writer->Commit());
  std::string value;
  EXPECT_TRUE(reader->GetForUpdate(ReadOptions(), "k", &value).IsBusy());
  // A key committed before the snapshot is no conflict.
  auto later = Begin(with_snapshot);
  ASSERT_OK(later->GetForUpdate(ReadOptions(), "k", &value));
  EXPECT_EQ("1", value);
}

// Many commits through a two-entry commit cache while snapshots are held: commits are
// evicted at once, max_evicted_seq moves, and old snapshots rely on the old-commit map.
TEST_P(WritePreparedTxnTest, TinyCommitCacheKeepsSnapshotsRight) {
  Close();
  txn_db_options_.wp_commit_cache_bits = 1;
  Open();
  std::vector<std::pair<const Snapshot*, int>> snapshots;
  auto slow = Prepared("slow", {{"slow", "x"}});  // delayed once the maximum passes it
  for (int i = 0; i < 200; i++) {
    auto txn = Begin();
    ASSERT_OK(txn->SetName("t" + std::to_string(i)));
    ASSERT_OK(txn->Put("counter", std::to_string(i)));
    ASSERT_OK(txn->Prepare());
    if (i % 40 == 0) snapshots.emplace_back(db_->GetSnapshot(), i - 1);
    ASSERT_OK(txn->Commit());
  }
  EXPECT_EQ("199", Get("counter"));
  EXPECT_EQ("NOT_FOUND", Get("slow"));
  for (auto& [snap, expect] : snapshots) {
    ReadOptions ro;
    ro.snapshot = snap;
    EXPECT_EQ(expect < 0 ? "NOT_FOUND" : std::to_string(expect),
              ReadValue(db_.get(), "counter", ro));
    EXPECT_EQ("NOT_FOUND", ReadValue(db_.get(), "slow", ro));
    db_->ReleaseSnapshot(snap);
  }
  ASSERT_OK(slow->Commit());
  EXPECT_EQ("x", Get("slow"));
}

// Threads run transactions that each write the same value to two keys of a pair, some
// committed after Prepare, some without, some rolled back; readers at snapshots and
// without them must always see both keys of a pair equal, and never a rolled-back value. Then the
// committed state must equal the model, before and after reopen.
TEST_P(WritePreparedTxnTest, ThreadsKeepTransactionsAtomicForReaders) {
  const uint64_t seed = TestSeed();
  constexpr int kWriters = 4;
  constexpr int kTxns = 300;
  constexpr int kPairs = 8;
  std::vector<std::vector<std::string>> last(kWriters, std::vector<std::string>(kPairs));
  std::atomic<bool> done{false};
  std::atomic<int> torn{0};
  std::atomic<int> rolled_back_seen{0};
  auto pair_key = [](int w, int p, char half) {
    return "w" + std::to_string(w) + "p" + std::to_string(p) + half;
  };
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; r++) {
    threads.emplace_back([&, r] {
      while (!done.load()) {
        ReadOptions ro;
        const Snapshot* snap = r == 0 ? db_->GetSnapshot() : nullptr;
        ro.snapshot = snap;
        for (int w = 0; w < kWriters; w++) {
          for (int p = 0; p < kPairs; p++) {
            std::vector<std::string> values;
            std::vector<Status> s = db_->MultiGet(
                ro, {Slice(pair_key(w, p, 'a')), Slice(pair_key(w, p, 'b'))}, &values);
            const std::string a = s[0].ok() ? values[0] : s[0].ToString();
            const std::string b = s[1].ok() ? values[1] : s[1].ToString();
            if (a != b) torn++;
            // A rolled-back transaction's values are never committed, so never seen.
            if (a.find("_rb") != std::string::npos) rolled_back_seen++;
          }
        }
        if (snap != nullptr) db_->ReleaseSnapshot(snap);
      }
    });
  }
  for (int w = 0; w < kWriters; w++) {
    threads.emplace_back([&, w] {
      Random rnd(static_cast<uint32_t>(seed + w));
      for (int i = 0; i < kTxns; i++) {
        const int p = static_cast<int>(rnd.Uniform(kPairs));
        const uint32_t how = rnd.Uniform(3);
        const std::string v = std::to_string(w) + "_" + std::to_string(i) + (how == 2 ? "_rb" : "");
        auto txn = Begin();
        ASSERT_OK(txn->Put(pair_key(w, p, 'a'), v));
        ASSERT_OK(txn->Put(pair_key(w, p, 'b'), v));
        if (how != 0) {
          ASSERT_OK(txn->SetName("w" + std::to_string(w) + "_" + std::to_string(i)));
          ASSERT_OK(txn->Prepare());
        }
        if (how == 2) {
          ASSERT_OK(txn->Rollback());
        } else {
          ASSERT_OK(txn->Commit());
          last[w][p] = v;
        }
        if (i % 100 == 99 && w == 0) ASSERT_OK(db_->Flush(FlushOptions()));
      }
    });
  }
  for (int i = 2; i < 2 + kWriters; i++) threads[i].join();
  done = true;
  threads[0].join();
  threads[1].join();
  EXPECT_EQ(0, torn.load());
  EXPECT_EQ(0, rolled_back_seen.load());
  for (int pass = 0; pass < 2; pass++) {
    for (int w = 0; w < kWriters; w++) {
      for (int p = 0; p < kPairs; p++) {
        const std::string expect = last[w][p].empty() ? "NOT_FOUND" : last[w][p];
        ASSERT_EQ(expect, Get(pair_key(w, p, 'a'))) << pass;
        ASSERT_EQ(expect, Get(pair_key(w, p, 'b'))) << pass;
      }
    }
    Reopen();
    ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  }
}

// A prepare committed more numbers after it than a commit cache slot can encode (4,096
// with 4 bits) is evicted at once, at its commit's number, which is then the newest: with
// no write after it, a read without a snapshot and GetSnapshot used to wait forever for a
// number above the maximum (write_prepared_crash_test hung so, committing a transaction
// recovered after a crash). Each read runs on a thread of its own, so that a hang fails.
TEST_P(WritePreparedTxnTest, ReadsAfterACommitEvictedAtOnceDoNotWaitForAWrite) {
  for (const char* read : {"Get", "GetSnapshot", "iterator"}) {
    SCOPED_TRACE(read);
    auto txn = Prepared(std::string("far_") + read, {{"k", read}});
    for (int i = 0; i < 5000; i++) ASSERT_OK(db_->Put(WriteOptions(), "other", std::to_string(i)));
    ASSERT_OK(txn->Commit());
    // Shared with the reader, which may still be in set_value when the wait returns.
    auto result = std::make_shared<std::promise<std::string>>();
    std::future<std::string> done = result->get_future();
    std::thread([this, result, read] {
      std::string value;
      if (read == std::string("Get")) {
        value = Get("k");
      } else if (read == std::string("GetSnapshot")) {
        const Snapshot* s = db_->GetSnapshot();
        ReadOptions ro;
        ro.snapshot = s;
        value = ReadValue(db_.get(), "k", ro);
        db_->ReleaseSnapshot(s);
      } else {
        std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
        it->Seek("k");
        value = it->Valid() ? it->value().ToString() : "NOT_FOUND";
      }
      result->set_value(value);  // the reader's last use of the DB is over
    }).detach();
    if (done.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
      // The reader still uses the DB: the process cannot go on.
      fprintf(stderr, "FAILED: %s after the commit is still waiting after 30 s\n", read);
      std::_Exit(1);
    }
    EXPECT_EQ(read, done.get());
  }
}

// The same case when no write can be made any more (a background error): a read cannot
// get past max_evicted_seq, and answers TryAgain (RocksDB's status for such a read), a
// snapshot is null, an iterator holds TryAgain, instead of waiting for a write forever.
TEST_P(WritePreparedTxnTest, ReadsThatNeedAWriteGiveUpWhenNoWriteCanBeMade) {
  FaultInjectionTestEnv* env = UseFaultInjectionEnv();
  Reopen();
  auto txn = Prepared("far", {{"k", "v"}});
  for (int i = 0; i < 5000; i++) ASSERT_OK(db_->Put(WriteOptions(), "other", std::to_string(i)));
  ASSERT_OK(txn->Commit());  // evicted at once: max_evicted_seq is the newest number
  env->SetFilesystemActive(false);
  EXPECT_FALSE(db_->Put(WriteOptions(), "x", "y").ok());  // a background error from now on
  auto result = std::make_shared<std::promise<std::string>>();
  std::future<std::string> done = result->get_future();
  std::thread([this, result] {
    std::string out;
    std::string value;
    Status s = db_->Get(ReadOptions(), "k", &value);
    out += s.IsTryAgain() ? "TryAgain" : s.ToString();
    const Snapshot* snap = db_->GetSnapshot();
    out += snap == nullptr ? " null" : " snapshot";
    db_->ReleaseSnapshot(snap);
    std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
    it->SeekToFirst();
    out += it->status().IsTryAgain() ? " TryAgain" : " " + it->status().ToString();
    result->set_value(out);
  }).detach();
  if (done.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    fprintf(stderr, "FAILED: a read after the background error still waits after 30 s\n");
    std::_Exit(1);
  }
  EXPECT_EQ("TryAgain null TryAgain", done.get());
  txn.reset();
  env->SetFilesystemActive(true);
}

INSTANTIATE_TEST_SUITE_P(Configs, WritePreparedTxnTest, testing::ValuesIn(kWritePreparedConfigs),
                         [](const testing::TestParamInfo<Config>& i) { return i.param.name; });

}  // namespace
}  // namespace shale
