// Transactions across column families, under both write policies (TEST_P): every call per
// family (reads, GetForUpdate, MultiGet, iterators in each family's order, writes and their
// untracked forms); locks per family (the same key in two families never conflicts, plain
// writes lock per family too); conflict checks per family; a family created through the
// TransactionDB takes locks at once, and dropping one wakes its waiters with
// ColumnFamilyDropped; a prepared transaction spanning families comes back after a reopen
// (also with one of its families flushed, and after a power loss) and commits or rolls back
// in each; and an OptimisticTransactionDB validates per family.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "shale/comparator.h"
#include "shale/utilities/merge_operators.h"
#include "shale/utilities/optimistic_transaction_db.h"
#include "tests/testutil/test_util.h"
#include "tests/utilities/iterator_walk.h"
#include "tests/utilities/transaction_fixture.h"
#include "util/random.h"

namespace shale {
namespace {

// Families of the fixture's DB, in descriptor order.
enum Family { kDefault = 0, kOne = 1, kRev = 2 };

class TransactionColumnFamilyTest : public TransactionTestBase,
                                    public testing::WithParamInterface<TxnDBWritePolicy> {
 protected:
  TransactionColumnFamilyTest() {
    options_.create_missing_column_families = true;
    options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
    txn_db_options_.write_policy = GetParam();
    // WRITE_PREPARED's rollback restores keys only merged into too, as WRITE_COMMITTED's
    // (which writes nothing) leaves them: the same answers under both policies.
    txn_db_options_.rollback_merge_operands = true;
    OpenFamilies();
  }
  ~TransactionColumnFamilyTest() override { CloseFamilies(); }

  Status TryOpenFamilies() {
    CloseFamilies();
    ColumnFamilyOptions one(options_);
    ColumnFamilyOptions rev(options_);
    rev.comparator = ReverseBytewiseComparator();
    std::vector<ColumnFamilyDescriptor> families = {
        {kDefaultColumnFamilyName, ColumnFamilyOptions(options_)}, {"one", one}, {"rev", rev}};
    TransactionDB* db = nullptr;
    Status s = TransactionDB::Open(DBOptions(options_), txn_db_options_, dbname(), families,
                                   &handles_, &db);
    db_.reset(db);
    return s;
  }
  void OpenFamilies() { ASSERT_OK(TryOpenFamilies()); }
  void CloseFamilies() {
    for (ColumnFamilyHandle* h : handles_) delete h;
    handles_.clear();
    db_.reset();
  }
  void ReopenFamilies() {
    CloseFamilies();
    OpenFamilies();
  }

  ColumnFamilyHandle* cf(Family f) { return handles_[f]; }
  std::string Get(Family f, const std::string& key) {
    std::string value;
    Status s = db_->Get(ReadOptions(), cf(f), key, &value);
    if (s.IsNotFound()) return "NOT_FOUND";
    return s.ok() ? value : s.ToString();
  }
  static std::string TxnGet(Transaction* txn, ColumnFamilyHandle* h, const std::string& key) {
    std::string value;
    Status s = txn->Get(ReadOptions(), h, key, &value);
    if (s.IsNotFound()) return "NOT_FOUND";
    return s.ok() ? value : s.ToString();
  }
  // A transaction named "xid" that put a=d in the default family and a=o in family one,
  // prepared; null on a failure (reported).
  std::unique_ptr<Transaction> PrepareOverTwoFamilies() {
    auto txn = Begin();
    Status s = txn->SetName("xid");
    if (s.ok()) s = txn->Put(cf(kDefault), "a", "d");
    if (s.ok()) s = txn->Put(cf(kOne), "a", "o");
    if (s.ok()) s = txn->Prepare();
    EXPECT_OK(s);
    return s.ok() ? std::move(txn) : nullptr;
  }
  // The names of the prepared transactions.
  std::vector<std::string> Prepared() {
    std::vector<Transaction*> txns;
    db_->GetAllPreparedTransactions(&txns);
    std::vector<std::string> names;
    for (Transaction* t : txns) names.push_back(t->GetName());
    return names;
  }

  std::vector<ColumnFamilyHandle*> handles_;
};

TEST_P(TransactionColumnFamilyTest, EveryCallPerFamily) {
  ASSERT_OK(db_->Put(WriteOptions(), cf(kDefault), "k", "d0"));
  ASSERT_OK(db_->Put(WriteOptions(), cf(kOne), "k", "o0"));
  ASSERT_OK(db_->Put(WriteOptions(), cf(kRev), "a", "r0"));
  ASSERT_OK(db_->Put(WriteOptions(), cf(kOne), "u", "gone"));
  auto txn = Begin();
  ASSERT_OK(txn->Put(cf(kOne), "k", "o1"));
  ASSERT_OK(txn->Merge(cf(kDefault), "k", "d1"));
  ASSERT_OK(txn->Put(cf(kRev), "b", "r1"));
  ASSERT_OK(txn->Put(cf(kRev), "c", "r2"));
  ASSERT_OK(txn->Delete(cf(kRev), "a"));
  ASSERT_OK(txn->PutUntracked(cf(kOne), "p", "pu"));
  ASSERT_OK(txn->MergeUntracked(cf(kOne), "p", "mu"));
  ASSERT_OK(txn->DeleteUntracked(cf(kOne), "u"));
  ASSERT_OK(txn->SingleDeleteUntracked(cf(kRev), "z"));
  ASSERT_OK(txn->SingleDelete(cf(kDefault), "s"));
  // Each family sees its own writes only.
  EXPECT_EQ(TxnGet(txn.get(), cf(kOne), "k"), "o1");
  EXPECT_EQ(TxnGet(txn.get(), cf(kDefault), "k"), "d0,d1");
  EXPECT_EQ(TxnGet(txn.get(), nullptr, "k"), "d0,d1");
  EXPECT_EQ(TxnGet(txn.get(), cf(kRev), "k"), "NOT_FOUND");
  EXPECT_EQ(TxnGet(txn.get(), cf(kOne), "p"), "pu,mu");
  EXPECT_EQ(TxnGet(txn.get(), cf(kOne), "u"), "NOT_FOUND");
  EXPECT_EQ(TxnGet(txn.get(), cf(kRev), "a"), "NOT_FOUND");
  std::string value;
  ASSERT_OK(txn->GetForUpdate(ReadOptions(), cf(kOne), "k", &value));
  EXPECT_EQ(value, "o1");
  PinnableSlice pinned;
  ASSERT_OK(txn->GetForUpdate(ReadOptions(), cf(kDefault), "k", &pinned));
  EXPECT_EQ(pinned.ToString(), "d0,d1");
  std::vector<std::string> values;
  std::vector<Status> st = txn->MultiGet(
      ReadOptions(), {cf(kDefault), cf(kOne), cf(kRev), cf(kRev)}, {"k", "k", "b", "a"}, &values);
  ASSERT_EQ(st.size(), 4u);
  ASSERT_OK(st[0]);
  EXPECT_EQ(values[0], "d0,d1");
  ASSERT_OK(st[1]);
  EXPECT_EQ(values[1], "o1");
  ASSERT_OK(st[2]);
  EXPECT_EQ(values[2], "r1");
  EXPECT_TRUE(st[3].IsNotFound());
  // Iterators in each family's own order: rev runs backwards.
  std::unique_ptr<Iterator> it(txn->GetIterator(ReadOptions(), cf(kRev)));
  EXPECT_EQ(Walk(it.get()), "c=r2,b=r1,");
  EXPECT_EQ(Walk(it.get(), /*backward=*/true), "b=r1,c=r2,");
  it->Seek("bb");  // the first key at or after "bb" in reverse order
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "b");
  it.reset(txn->GetIterator(ReadOptions(), cf(kOne)));
  EXPECT_EQ(Walk(it.get()), "k=o1,p=pu,mu,");
  it.reset(txn->GetIterator(ReadOptions()));
  EXPECT_EQ(Walk(it.get()), "k=d0,d1,");
  it.reset();
  // Nothing is visible outside before the commit; every family after it.
  EXPECT_EQ(Get(kOne, "k"), "o0");
  ASSERT_OK(txn->Commit());
  EXPECT_EQ(Get(kOne, "k"), "o1");
  EXPECT_EQ(Get(kDefault, "k"), "d0,d1");
  EXPECT_EQ(Get(kRev, "b"), "r1");
  EXPECT_EQ(Get(kRev, "a"), "NOT_FOUND");
  EXPECT_EQ(Get(kOne, "p"), "pu,mu");
  EXPECT_EQ(Get(kOne, "u"), "NOT_FOUND");
  ReopenFamilies();
  EXPECT_EQ(Get(kOne, "k"), "o1");
  EXPECT_EQ(Get(kRev, "c"), "r2");
}

TEST_P(TransactionColumnFamilyTest, SameKeyInTwoFamiliesDoesNotConflict) {
  auto a = Begin();
  auto b = Begin();
  ASSERT_OK(a->Put(cf(kOne), "k", "a"));
  ASSERT_OK(b->Put(cf(kDefault), "k", "b"));
  ASSERT_OK(b->GetForUpdate(ReadOptions(), cf(kRev), "k", static_cast<std::string*>(nullptr)));
  Status s = b->Put(cf(kOne), "k", "b");
  EXPECT_TRUE(s.IsTimedOut()) << s.ToString();
  // One lock per family and key.
  auto locks = db_->GetLockStatusData();
  EXPECT_EQ(locks.count(cf(kOne)->GetID()), 1u);
  EXPECT_EQ(locks.count(cf(kDefault)->GetID()), 1u);
  EXPECT_EQ(locks.count(cf(kRev)->GetID()), 1u);
  EXPECT_EQ(a->GetNumKeys(), 1u);
  EXPECT_EQ(b->GetNumKeys(), 2u);
  // Writes outside a transaction lock per family too.
  EXPECT_TRUE(db_->Put(WriteOptions(), cf(kOne), "k", "x").IsTimedOut());
  ASSERT_OK(db_->Put(WriteOptions(), cf(kRev), "other", "x"));
  WriteBatch batch;
  ASSERT_OK(batch.Put(cf(kRev), "k2", "x"));
  ASSERT_OK(batch.Put(cf(kDefault), "k", "x"));  // b holds it
  EXPECT_TRUE(db_->Write(WriteOptions(), &batch).IsTimedOut());
  EXPECT_EQ(Get(kRev, "k2"), "NOT_FOUND");
  ASSERT_OK(a->Commit());
  ASSERT_OK(b->Commit());
  EXPECT_EQ(Get(kOne, "k"), "a");
  EXPECT_EQ(Get(kDefault, "k"), "b");
  ASSERT_OK(db_->Write(WriteOptions(), &batch));
  EXPECT_EQ(Get(kRev, "k2"), "x");
  EXPECT_TRUE(db_->GetLockStatusData().empty());
}

TEST_P(TransactionColumnFamilyTest, SnapshotConflictsArePerFamily) {
  TransactionOptions o;
  o.set_snapshot = true;
  auto txn = Begin(o);
  // Written after the snapshot in one family only.
  ASSERT_OK(db_->Put(WriteOptions(), cf(kOne), "k", "x"));
  ASSERT_OK(db_->Put(WriteOptions(), cf(kDefault), "d", "x"));
  ASSERT_OK(
      txn->GetForUpdate(ReadOptions(), cf(kDefault), "k", static_cast<std::string*>(nullptr)));
  ASSERT_OK(txn->Put(cf(kRev), "k", "v"));
  ASSERT_OK(txn->Put(cf(kOne), "d", "v"));
  Status s = txn->GetForUpdate(ReadOptions(), cf(kOne), "k", static_cast<std::string*>(nullptr));
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
  s = txn->Put(cf(kDefault), "d", "v");
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
  // Also once the write is in a file.
  ASSERT_OK(db_->Put(WriteOptions(), cf(kRev), "f", "x"));
  ASSERT_OK(db_->Flush(FlushOptions(), cf(kRev)));
  EXPECT_TRUE(txn->Put(cf(kRev), "f", "v").IsBusy());
  ASSERT_OK(txn->Put(cf(kOne), "f", "v"));
  ASSERT_OK(txn->Commit());
  EXPECT_EQ(Get(kRev, "k"), "v");
  EXPECT_EQ(Get(kOne, "d"), "v");
  EXPECT_EQ(Get(kOne, "k"), "x");
}

// Two transactions each holding a key the other wants, in different families: the cycle is
// found, and the recorded path names each wait's family.
TEST_P(TransactionColumnFamilyTest, DeadlockAcrossFamilies) {
  TransactionOptions o;
  o.deadlock_detect = true;
  o.lock_timeout = 60 * 1000;  // a deadlock must be found, not waited out
  auto a = Begin(o);
  auto b = Begin(o);
  ASSERT_OK(a->Put(cf(kOne), "k", "a"));
  ASSERT_OK(b->Put(cf(kRev), "k", "b"));
  Status sa;
  std::thread ta([&] {
    sa = a->Put(cf(kRev), "k", "a");
    if (sa.IsDeadlock()) EXPECT_OK(a->Rollback());
  });
  // Let a reach its wait (if b comes first, a is the one told).
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Status sb = b->Put(cf(kOne), "k", "b");
  if (sb.IsDeadlock()) EXPECT_OK(b->Rollback());
  ta.join();
  ASSERT_TRUE(sa.IsDeadlock() != sb.IsDeadlock()) << sa.ToString() << " / " << sb.ToString();
  std::vector<DeadlockPath> paths = db_->GetDeadlockInfoBuffer();
  ASSERT_FALSE(paths.empty());
  ASSERT_EQ(paths[0].path.size(), 2u);
  for (const DeadlockInfo& wait : paths[0].path) {
    // a waits in rev, b in one.
    EXPECT_EQ(wait.m_cf_id, cf(wait.m_txn_id == a->GetID() ? kRev : kOne)->GetID());
    EXPECT_EQ(wait.m_waiting_key, "k");
  }
  Transaction* survivor = sa.ok() ? a.get() : b.get();
  ASSERT_OK(survivor->Commit());
  EXPECT_EQ(Get(kOne, "k"), sa.ok() ? "a" : "b");
  EXPECT_EQ(Get(kRev, "k"), sa.ok() ? "a" : "b");
}

TEST_P(TransactionColumnFamilyTest, CreatedFamilyLocksAndDroppedFamilyWakesWaiters) {
  ColumnFamilyHandle* made = nullptr;
  ASSERT_OK(db_->CreateColumnFamily(ColumnFamilyOptions(options_), "made", &made));
  std::unique_ptr<ColumnFamilyHandle> made_owner(made);
  auto holder = Begin();
  ASSERT_OK(holder->Put(made, "k", "v"));
  EXPECT_TRUE(db_->Put(WriteOptions(), made, "k", "x").IsTimedOut());
  // A waiter with a long timeout ends as soon as the family is dropped.
  TransactionOptions patient;
  patient.lock_timeout = 60 * 1000;
  auto waiter = Begin(patient);
  Status waited;
  std::chrono::steady_clock::time_point end;
  std::thread t([&] {
    waited = waiter->Put(made, "k", "w");
    end = std::chrono::steady_clock::now();
  });
  // Let the waiter reach its wait (a drop before that refuses it at once, which the
  // assertions below accept as well).
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_OK(db_->DropColumnFamily(made));
  t.join();
  EXPECT_TRUE(waited.IsColumnFamilyDropped() || waited.IsInvalidArgument()) << waited.ToString();
  EXPECT_LT(end - start, std::chrono::seconds(30));
  EXPECT_EQ(db_->GetLockStatusData().count(made->GetID()), 0u);
  // The holder can only roll back: the family is gone.
  ASSERT_OK(holder->Rollback());
  EXPECT_TRUE(db_->Put(WriteOptions(), made, "k", "x").IsInvalidArgument());

  std::vector<ColumnFamilyHandle*> more;
  ASSERT_OK(db_->CreateColumnFamilies(ColumnFamilyOptions(options_), {"m1", "m2"}, &more));
  auto txn = Begin();
  for (ColumnFamilyHandle* h : more) ASSERT_OK(txn->Put(h, "k", h->GetName()));
  ASSERT_OK(txn->Commit());
  for (ColumnFamilyHandle* h : more) ASSERT_OK(db_->Put(WriteOptions(), h, "k2", "v"));
  ASSERT_OK(db_->DropColumnFamilies(more));
  for (ColumnFamilyHandle* h : more) ASSERT_OK(db_->DestroyColumnFamilyHandle(h));
}

TEST_P(TransactionColumnFamilyTest, PreparedAcrossFamiliesSurvivesReopen) {
  for (bool commit : {true, false}) {
    SCOPED_TRACE(commit ? "commit" : "rollback");
    const std::string tag = commit ? "c" : "r";
    ASSERT_OK(db_->Put(WriteOptions(), cf(kOne), "k" + tag, "before"));
    {
      auto txn = Begin();
      ASSERT_OK(txn->SetName("xid" + tag));
      ASSERT_OK(txn->Put(cf(kDefault), "k" + tag, "d"));
      ASSERT_OK(txn->Put(cf(kOne), "k" + tag, "o"));
      ASSERT_OK(txn->Merge(cf(kRev), "m" + tag, "r"));
      ASSERT_OK(txn->Prepare());
    }
    ReopenFamilies();
    ASSERT_EQ(Prepared(), std::vector<std::string>{"xid" + tag});
    EXPECT_EQ(Get(kDefault, "k" + tag), "NOT_FOUND");
    EXPECT_EQ(Get(kOne, "k" + tag), "before");
    EXPECT_EQ(Get(kRev, "m" + tag), "NOT_FOUND");
    // The recovered transaction holds its locks in each family.
    EXPECT_TRUE(db_->Put(WriteOptions(), cf(kOne), "k" + tag, "x").IsTimedOut());
    EXPECT_TRUE(db_->Put(WriteOptions(), cf(kRev), "m" + tag, "x").IsTimedOut());
    ASSERT_OK(db_->Put(WriteOptions(), cf(kRev), "k" + tag, "free"));
    Transaction* txn = db_->GetTransactionByName("xid" + tag);
    ASSERT_NE(txn, nullptr);
    EXPECT_EQ(txn->GetNumKeys(), 3u);
    ASSERT_OK(commit ? txn->Commit() : txn->Rollback());
    delete txn;
    for (int i = 0; i < 2; i++) {
      SCOPED_TRACE(i == 0 ? "resolved" : "reopened");
      EXPECT_EQ(Get(kDefault, "k" + tag), commit ? "d" : "NOT_FOUND");
      EXPECT_EQ(Get(kOne, "k" + tag), commit ? "o" : "before");
      EXPECT_EQ(Get(kRev, "m" + tag), commit ? "r" : "NOT_FOUND");
      EXPECT_TRUE(Prepared().empty());
      ReopenFamilies();
    }
  }
}

// A prepared transaction over two families, one of which is dropped before the reopen (and
// made again under the same name, a new family): it comes back with the surviving
// family's records only, and commits them.
TEST_P(TransactionColumnFamilyTest, PreparedRecordsOfADroppedFamilyAreLeftOut) {
  ASSERT_NE(PrepareOverTwoFamilies(), nullptr);  // deleted: the prepare stays in the WAL
  const uint32_t dropped = cf(kOne)->GetID();
  ASSERT_OK(db_->DropColumnFamily(cf(kOne)));
  ReopenFamilies();  // "one" is created afresh
  ASSERT_NE(cf(kOne)->GetID(), dropped);
  Transaction* txn = db_->GetTransactionByName("xid");
  ASSERT_NE(txn, nullptr);
  EXPECT_EQ(txn->GetNumKeys(), 1u);
  ASSERT_OK(txn->Commit());
  delete txn;
  EXPECT_EQ(Get(kDefault, "a"), "d");
  EXPECT_EQ(Get(kOne, "a"), "NOT_FOUND");
  ReopenFamilies();
  EXPECT_EQ(Get(kDefault, "a"), "d");
  EXPECT_EQ(Get(kOne, "a"), "NOT_FOUND");
}

// One transaction writing the same key in every family, and again in some (WRITE_PREPARED
// numbers a repeated key as a new sub-batch, which only a repeat in the same family is):
// prepared, reopened and committed, each family ends with its own newest value.
TEST_P(TransactionColumnFamilyTest, SameKeyRepeatedAcrossFamilies) {
  {
    auto txn = Begin();
    ASSERT_OK(txn->SetName("xid"));
    ASSERT_OK(txn->Put(cf(kDefault), "k", "1"));
    ASSERT_OK(txn->Put(cf(kOne), "k", "2"));
    ASSERT_OK(txn->Merge(cf(kRev), "k", "x"));
    ASSERT_OK(txn->Put(cf(kOne), "k", "3"));
    ASSERT_OK(txn->Merge(cf(kRev), "k", "y"));
    ASSERT_OK(txn->Put(cf(kDefault), "k", "4"));
    EXPECT_EQ(TxnGet(txn.get(), cf(kRev), "k"), "x,y");
    ASSERT_OK(txn->Prepare());
  }
  ReopenFamilies();
  Transaction* txn = db_->GetTransactionByName("xid");
  ASSERT_NE(txn, nullptr);
  EXPECT_EQ(Get(kOne, "k"), "NOT_FOUND");
  EXPECT_EQ(TxnGet(txn, cf(kOne), "k"), "3");
  ASSERT_OK(txn->Commit());
  delete txn;
  for (int i = 0; i < 2; i++) {
    EXPECT_EQ(Get(kDefault, "k"), "4");
    EXPECT_EQ(Get(kOne, "k"), "3");
    EXPECT_EQ(Get(kRev, "k"), "x,y");
    ReopenFamilies();
  }
}

// A prepared transaction over two families, one of them flushed between the prepare and
// the reopen (WRITE_PREPARED: the prepared data goes to that family's file, and recovery
// replays the prepare into the other family only; WRITE_COMMITTED: the WAL moves on past
// the prepare's).
TEST_P(TransactionColumnFamilyTest, PreparedAcrossFamiliesWithOneFamilyFlushed) {
  ASSERT_NE(PrepareOverTwoFamilies(), nullptr);  // deleted: the prepare stays in the WAL
  ASSERT_OK(db_->Put(WriteOptions(), cf(kOne), "other", "x"));
  ASSERT_OK(db_->Flush(FlushOptions(), cf(kOne)));
  ReopenFamilies();
  ASSERT_EQ(Prepared(), std::vector<std::string>{"xid"});
  EXPECT_EQ(Get(kOne, "a"), "NOT_FOUND");
  EXPECT_EQ(Get(kDefault, "a"), "NOT_FOUND");
  Transaction* txn = db_->GetTransactionByName("xid");
  ASSERT_NE(txn, nullptr);
  ASSERT_OK(txn->Commit());
  delete txn;
  EXPECT_EQ(Get(kOne, "a"), "o");
  EXPECT_EQ(Get(kDefault, "a"), "d");
  ReopenFamilies();
  EXPECT_EQ(Get(kOne, "a"), "o");
  EXPECT_EQ(Get(kDefault, "a"), "d");
}

// Two-phase commits across families with synced writes while the families flush at
// different times, then a power loss (unsynced data dropped): every committed transaction
// is in each family it wrote, the one left prepared comes back prepared in every family
// (none of its records visible anywhere) and commits in all of them.
TEST_P(TransactionColumnFamilyTest, TwoPhaseCommitAcrossFamiliesSurvivesAPowerLoss) {
  FaultInjectionTestEnv* env = UseFaultInjectionEnv();
  OpenFamilies();  // again, through the env
  WriteOptions synced;
  synced.sync = true;
  constexpr int kTxns = 30;
  for (int i = 0; i < kTxns; i++) {
    std::unique_ptr<Transaction> txn(db_->BeginTransaction(synced));
    const std::string k = "k" + std::to_string(i);
    ASSERT_OK(txn->SetName("t" + std::to_string(i)));
    for (Family f : {kDefault, kOne, kRev}) ASSERT_OK(txn->Put(cf(f), k, "v" + std::to_string(f)));
    ASSERT_OK(txn->Prepare());
    // One family at a time flushes, some between a prepare and its commit (which then go
    // to different WALs).
    if (i % 4 == 1) ASSERT_OK(db_->Flush(FlushOptions(), cf(static_cast<Family>(i % 3))));
    ASSERT_OK(txn->Commit());
    if (i % 4 == 3) ASSERT_OK(db_->Flush(FlushOptions(), cf(static_cast<Family>(i % 3))));
  }
  {
    std::unique_ptr<Transaction> open(db_->BeginTransaction(synced));
    ASSERT_OK(open->SetName("open"));
    for (Family f : {kDefault, kOne, kRev}) ASSERT_OK(open->Put(cf(f), "p", "x"));
    ASSERT_OK(open->Prepare());
    ASSERT_OK(db_->Flush(FlushOptions(), cf(kRev)));
  }  // deleted prepared: it stays in the WAL
  env->SetFilesystemActive(false);
  CloseFamilies();
  ASSERT_OK(env->SimulatePowerLoss());
  env->SetFilesystemActive(true);
  OpenFamilies();

  for (int i = 0; i < kTxns; i++) {
    for (Family f : {kDefault, kOne, kRev}) {
      EXPECT_EQ(Get(f, "k" + std::to_string(i)), "v" + std::to_string(f)) << i;
    }
  }
  ASSERT_EQ(Prepared(), std::vector<std::string>{"open"});
  for (Family f : {kDefault, kOne, kRev}) EXPECT_EQ(Get(f, "p"), "NOT_FOUND");
  Transaction* txn = db_->GetTransactionByName("open");
  ASSERT_NE(txn, nullptr);
  ASSERT_OK(txn->Commit());
  delete txn;
  ReopenFamilies();
  for (Family f : {kDefault, kOne, kRev}) EXPECT_EQ(Get(f, "p"), "x");
  EXPECT_TRUE(Prepared().empty());
}

// The commit of a prepare whose WAL is older than one family's memtable: that family's
// committed records must keep the prepare's WAL until they are flushed. Default's flush
// (which drops its memtable's reference to the prepare's WAL) must not let the WAL go while
// family one's memtable still holds the committed records only that WAL has.
// (Failed under WRITE_COMMITTED while only the default family's memtable referenced the
// prepare's WAL: recovery found the commit marker without its prepare and family one's
// records were lost.)
TEST_P(TransactionColumnFamilyTest, CommittedRecordsOfEveryFamilyKeepThePreparesWal) {
  std::unique_ptr<Transaction> txn = PrepareOverTwoFamilies();
  ASSERT_NE(txn, nullptr);
  // A new WAL: family one, empty, moves its memtable to it.
  ASSERT_OK(db_->Put(WriteOptions(), cf(kDefault), "x", "1"));
  ASSERT_OK(db_->Flush(FlushOptions(), cf(kDefault)));
  ASSERT_OK(txn->Commit());
  txn.reset();
  // Only the default family's memtable is flushed, twice, so that every WAL before the
  // newest is a candidate for deletion.
  for (int i = 0; i < 2; i++) {
    ASSERT_OK(db_->Put(WriteOptions(), cf(kDefault), "x", std::to_string(i)));
    ASSERT_OK(db_->Flush(FlushOptions(), cf(kDefault)));
  }
  ReopenFamilies();
  EXPECT_EQ(Get(kDefault, "a"), "d");
  EXPECT_EQ(Get(kOne, "a"), "o");
}

TEST_P(TransactionColumnFamilyTest, WritePreparedReadsAcrossFamilies) {
  ASSERT_OK(db_->Put(WriteOptions(), cf(kOne), "k", "o"));
  ASSERT_OK(db_->Put(WriteOptions(), cf(kRev), "k", "r"));
  ASSERT_OK(db_->Put(WriteOptions(), cf(kRev), "j", "r2"));
  auto txn = Begin();
  ASSERT_OK(txn->SetName("xid"));
  ASSERT_OK(txn->Put(cf(kOne), "k", "prepared"));
  ASSERT_OK(txn->Delete(cf(kRev), "k"));
  ASSERT_OK(txn->Prepare());
  std::vector<std::string> values;
  std::vector<Status> st =
      db_->MultiGet(ReadOptions(), {cf(kOne), cf(kRev), cf(kDefault)}, {"k", "k", "k"}, &values);
  ASSERT_EQ(st.size(), 3u);
  ASSERT_OK(st[0]);
  EXPECT_EQ(values[0], "o");
  ASSERT_OK(st[1]);
  EXPECT_EQ(values[1], "r");
  EXPECT_TRUE(st[2].IsNotFound());
  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions(), cf(kRev)));
  EXPECT_EQ(Walk(it.get()), "k=r,j=r2,");
  it.reset();
  ASSERT_OK(txn->Commit());
  st = db_->MultiGet(ReadOptions(), {cf(kOne), cf(kRev)}, {"k", "k"}, &values);
  ASSERT_OK(st[0]);
  EXPECT_EQ(values[0], "prepared");
  EXPECT_TRUE(st[1].IsNotFound());
  it.reset(db_->NewIterator(ReadOptions(), cf(kRev)));
  EXPECT_EQ(Walk(it.get()), "j=r2,");
}

// Threads move units between counters spread over the three families (the same names in
// each), each move a transaction that reads both counters for update, writes both and
// commits, retrying on a conflict; small memtables flush underneath. The total never
// changes, and stays after a reopen.
TEST_P(TransactionColumnFamilyTest, ConcurrentTransfersAcrossFamiliesKeepTheTotal) {
  options_.write_buffer_size = 16 << 10;
  ReopenFamilies();
  const uint64_t seed = TestSeed();
  constexpr int kCounters = 4;  // per family
  constexpr int kThreads = 4;
  constexpr int kMoves = 500;
  constexpr int kInitial = 1000;
  auto name = [](int i) { return "counter" + std::to_string(i); };
  for (Family f : {kDefault, kOne, kRev}) {
    for (int i = 0; i < kCounters; i++) {
      ASSERT_OK(db_->Put(WriteOptions(), cf(f), name(i), std::to_string(kInitial)));
    }
  }
  auto total = [&] {
    int64_t sum = 0;
    for (Family f : {kDefault, kOne, kRev}) {
      for (int i = 0; i < kCounters; i++) sum += std::stoll(Get(f, name(i)));
    }
    return sum;
  };
  std::atomic<int> retries{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      Random rnd(static_cast<uint32_t>(seed) + t);
      TransactionOptions o;
      o.deadlock_detect = true;
      o.lock_timeout = 1000;
      for (int move = 0; move < kMoves;) {
        const Family f1 = static_cast<Family>(rnd.Uniform(3));
        const Family f2 = static_cast<Family>(rnd.Uniform(3));
        const std::string k1 = name(static_cast<int>(rnd.Uniform(kCounters)));
        const std::string k2 = name(static_cast<int>(rnd.Uniform(kCounters)));
        if (f1 == f2 && k1 == k2) continue;
        const int amount = static_cast<int>(rnd.Uniform(10));
        std::unique_ptr<Transaction> txn(db_->BeginTransaction(WriteOptions(), o));
        std::string v1, v2;
        Status s = txn->GetForUpdate(ReadOptions(), cf(f1), k1, &v1);
        if (s.ok()) s = txn->GetForUpdate(ReadOptions(), cf(f2), k2, &v2);
        if (s.ok()) s = txn->Put(cf(f1), k1, std::to_string(std::stoll(v1) - amount));
        if (s.ok()) s = txn->Put(cf(f2), k2, std::to_string(std::stoll(v2) + amount));
        if (s.ok()) s = txn->Commit();
        if (s.ok()) {
          move++;
          continue;
        }
        ASSERT_TRUE(s.IsBusy() || s.IsTimedOut()) << s.ToString() << " seed " << seed;
        EXPECT_OK(txn->Rollback());
        retries++;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(total(), 3 * kCounters * kInitial) << "seed " << seed << ", " << retries << " retries";
  ReopenFamilies();
  EXPECT_EQ(total(), 3 * kCounters * kInitial) << "seed " << seed;
}

INSTANTIATE_TEST_SUITE_P(Policies, TransactionColumnFamilyTest,
                         testing::Values(WRITE_COMMITTED, WRITE_PREPARED),
                         [](const testing::TestParamInfo<TxnDBWritePolicy>& info) {
                           return info.param == WRITE_COMMITTED ? std::string("WriteCommitted")
                                                                : std::string("WritePrepared");
                         });

// ---- Optimistic transactions.

class OptimisticColumnFamilyTest : public testing::Test {
 protected:
  OptimisticColumnFamilyTest() : dir_("occ_cf") {
    DBOptions o;
    o.create_if_missing = true;
    o.create_missing_column_families = true;
    std::vector<ColumnFamilyDescriptor> families = {
        {kDefaultColumnFamilyName, ColumnFamilyOptions()}, {"one", ColumnFamilyOptions()}};
    OptimisticTransactionDB* db = nullptr;
    EXPECT_OK(OptimisticTransactionDB::Open(o, dir_.path() + "/db", families, &handles_, &db));
    db_.reset(db);
  }
  ~OptimisticColumnFamilyTest() override {
    for (ColumnFamilyHandle* h : handles_) delete h;
    db_.reset();
  }
  std::unique_ptr<Transaction> Begin(bool snapshot = false) {
    OptimisticTransactionOptions o;
    o.set_snapshot = snapshot;
    return std::unique_ptr<Transaction>(db_->BeginTransaction(WriteOptions(), o));
  }

  TempDirectory dir_;
  std::vector<ColumnFamilyHandle*> handles_;
  std::unique_ptr<OptimisticTransactionDB> db_;
};

TEST_F(OptimisticColumnFamilyTest, ValidatesPerFamily) {
  ASSERT_EQ(handles_.size(), 2u);
  ColumnFamilyHandle* def = handles_[0];
  ColumnFamilyHandle* one = handles_[1];
  for (bool snapshot : {false, true}) {
    SCOPED_TRACE(snapshot ? "snapshot" : "no snapshot");
    // A write to the same key of another family is no conflict.
    auto txn = Begin(snapshot);
    ASSERT_OK(txn->GetForUpdate(ReadOptions(), one, "k", static_cast<std::string*>(nullptr)));
    ASSERT_OK(txn->Put(def, "w", "t"));
    ASSERT_OK(db_->Put(WriteOptions(), def, "k", "outside"));
    ASSERT_OK(db_->Put(WriteOptions(), one, "w", "outside"));
    ASSERT_OK(txn->Commit());
    // The same key of the same family is.
    txn = Begin(snapshot);
    ASSERT_OK(txn->GetForUpdate(ReadOptions(), one, "k", static_cast<std::string*>(nullptr)));
    ASSERT_OK(txn->Put(def, "w", "t2"));
    ASSERT_OK(db_->Put(WriteOptions(), one, "k", "outside"));
    Status s = txn->Commit();
    EXPECT_TRUE(s.IsBusy()) << s.ToString();
    ASSERT_OK(txn->Rollback());
    std::string value;
    ASSERT_OK(db_->Get(ReadOptions(), def, "w", &value));
    EXPECT_EQ(value, "t");
  }
  // A commit writes both families.
  auto txn = Begin();
  ASSERT_OK(txn->Put(one, "both", "1"));
  ASSERT_OK(txn->Put(def, "both", "0"));
  EXPECT_EQ(txn->GetNumKeys(), 2u);
  ASSERT_OK(txn->Commit());
  std::string value;
  ASSERT_OK(db_->Get(ReadOptions(), one, "both", &value));
  EXPECT_EQ(value, "1");
  ASSERT_OK(db_->Get(ReadOptions(), def, "both", &value));
  EXPECT_EQ(value, "0");
}

}  // namespace
}  // namespace shale
