// TransactionDB and Transaction, the single-threaded API: Open's two overloads and the
// policies it refuses, read-your-own-writes and isolation from other readers, every write
// kind and Get form, MultiGet, iterators over the transaction and the DB in both
// directions with bounds, save points (writes and locks), snapshots and their
// notification, names, the state machine's statuses, BeginTransaction reusing a
// transaction, max_write_batch_size and skip_concurrency_control; and a randomized run of
// writes, merges and save points against a model.
// Locks, conflicts and threads: transaction_lock_test.cc; two-phase commit:
// transaction_2pc_test.cc.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "shale/utilities/merge_operators.h"
#include "shale/utilities/write_batch_with_index.h"
#include "tests/utilities/transaction_fixture.h"
#include "util/random.h"

namespace shale {
namespace {

class TransactionTest : public TransactionTestBase {
 protected:
  TransactionTest() { Open(); }
};

// "k=v," over the whole iterator in one direction, then its status if not OK.
std::string Walk(Iterator* it, bool backward) {
  std::string out;
  backward ? it->SeekToLast() : it->SeekToFirst();
  for (; it->Valid(); backward ? it->Prev() : it->Next()) {
    out += it->key().ToString() + "=" + it->value().ToString() + ",";
  }
  return it->status().ok() ? out : out + it->status().ToString();
}

TEST_F(TransactionTest, ReadsOwnWritesAndHidesThemUntilCommit) {
  ASSERT_OK(db_->Put(WriteOptions(), "a", "db-a"));
  auto txn = Begin();
  ASSERT_EQ(txn->GetState(), Transaction::STARTED);
  ASSERT_OK(txn->Put("a", "txn-a"));
  ASSERT_OK(txn->Put("b", "txn-b"));
  EXPECT_EQ(TxnGet(txn.get(), "a"), "txn-a");
  EXPECT_EQ(TxnGet(txn.get(), "b"), "txn-b");
  // Another reader, and another transaction, see only the committed state.
  EXPECT_EQ(Get("a"), "db-a");
  EXPECT_EQ(Get("b"), "NOT_FOUND");
  auto other = Begin();
  EXPECT_EQ(TxnGet(other.get(), "a"), "db-a");
  EXPECT_EQ(txn->GetNumKeys(), 2u);
  EXPECT_NE(txn->GetID(), other->GetID());
  ASSERT_OK(txn->Commit());
  EXPECT_EQ(txn->GetState(), Transaction::COMMITTED);
  EXPECT_EQ(Get("a"), "txn-a");
  EXPECT_EQ(Get("b"), "txn-b");
  EXPECT_EQ(TxnGet(other.get(), "b"), "txn-b");
  // The data is in the DB for good.
  other.reset();
  txn.reset();
  Reopen();
  EXPECT_EQ(Get("a"), "txn-a");
}

TEST_F(TransactionTest, EveryWriteKindAndGetForm) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
  Reopen();
  ASSERT_OK(db_->Put(WriteOptions(), "del", "x"));
  ASSERT_OK(db_->Put(WriteOptions(), "sdel", "x"));
  ASSERT_OK(db_->Put(WriteOptions(), "m", "base"));
  auto txn = Begin();
  ASSERT_OK(txn->Delete("del"));
  ASSERT_OK(txn->SingleDelete("sdel"));
  ASSERT_OK(txn->Merge("m", "op1"));
  ASSERT_OK(txn->Merge(db_->DefaultColumnFamily(), "m", "op2"));
  ASSERT_OK(txn->Put(db_->DefaultColumnFamily(), "p", "v"));
  EXPECT_EQ(TxnGet(txn.get(), "del"), "NOT_FOUND");
  EXPECT_EQ(TxnGet(txn.get(), "sdel"), "NOT_FOUND");
  EXPECT_EQ(TxnGet(txn.get(), "m"), "base,op1,op2");
  PinnableSlice pinned;
  ASSERT_OK(txn->Get(ReadOptions(), "p", &pinned));
  EXPECT_EQ(pinned.ToString(), "v");
  ASSERT_OK(txn->Get(ReadOptions(), db_->DefaultColumnFamily(), "m", &pinned));
  EXPECT_EQ(pinned.ToString(), "base,op1,op2");
  std::string value;
  ASSERT_OK(txn->GetForUpdate(ReadOptions(), "m", &value));
  EXPECT_EQ(value, "base,op1,op2");
  ASSERT_OK(txn->GetForUpdate(ReadOptions(), "p", &pinned));
  EXPECT_EQ(pinned.ToString(), "v");
  EXPECT_TRUE(txn->GetForUpdate(ReadOptions(), "del", &value).IsNotFound());

  std::vector<std::string> values;
  std::vector<Status> st = txn->MultiGet(ReadOptions(), {"p", "del", "m", "nope"}, &values);
  ASSERT_EQ(st.size(), 4u);
  EXPECT_OK(st[0]);
  EXPECT_EQ(values[0], "v");
  EXPECT_TRUE(st[1].IsNotFound());
  EXPECT_OK(st[2]);
  EXPECT_EQ(values[2], "base,op1,op2");
  EXPECT_TRUE(st[3].IsNotFound());
  st = txn->MultiGet(ReadOptions(), {db_->DefaultColumnFamily()}, {"p", "m"}, &values);
  EXPECT_TRUE(st[0].IsInvalidArgument() && st[1].IsInvalidArgument());  // one handle, two keys

  ASSERT_OK(txn->Commit());
  EXPECT_EQ(Get("del"), "NOT_FOUND");
  EXPECT_EQ(Get("sdel"), "NOT_FOUND");
  EXPECT_EQ(Get("m"), "base,op1,op2");
  EXPECT_EQ(Get("p"), "v");
}

TEST_F(TransactionTest, UntrackedWritesAreWrittenAndLocked) {
  auto txn = Begin();
  ASSERT_OK(txn->PutUntracked("a", "1"));
  ASSERT_OK(txn->PutUntracked(db_->DefaultColumnFamily(), "b", "2"));
  ASSERT_OK(txn->DeleteUntracked("c"));
  ASSERT_OK(txn->DeleteUntracked(db_->DefaultColumnFamily(), "d"));
  ASSERT_OK(txn->SingleDeleteUntracked("e"));
  ASSERT_OK(txn->SingleDeleteUntracked(db_->DefaultColumnFamily(), "f"));
  // No merge operator: the write is taken, the read cannot fold it.
  ASSERT_OK(txn->MergeUntracked("g", "x"));
  ASSERT_OK(txn->MergeUntracked(db_->DefaultColumnFamily(), "h", "y"));
  EXPECT_EQ(txn->GetNumKeys(), 8u);
  EXPECT_TRUE(db_->Put(WriteOptions(), "a", "other").IsTimedOut());
  EXPECT_EQ(TxnGet(txn.get(), "b"), "2");
  std::string value;
  EXPECT_TRUE(txn->Get(ReadOptions(), "g", &value).IsMergeInProgress());
  ASSERT_OK(txn->Rollback());
}

TEST_F(TransactionTest, IteratorOverTransactionAndDB) {
  for (const char* k : {"a", "c", "e", "g"}) ASSERT_OK(db_->Put(WriteOptions(), k, "db"));
  auto txn = Begin();
  ASSERT_OK(txn->Put("b", "t"));
  ASSERT_OK(txn->Put("c", "t"));
  ASSERT_OK(txn->Delete("e"));
  ASSERT_OK(txn->Put("h", "t"));
  std::unique_ptr<Iterator> it(txn->GetIterator(ReadOptions()));
  EXPECT_EQ(Walk(it.get(), false), "a=db,b=t,c=t,g=db,h=t,");
  EXPECT_EQ(Walk(it.get(), true), "h=t,g=db,c=t,b=t,a=db,");
  it->Seek("d");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "g");
  it->SeekForPrev("f");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "c");

  Slice lower("b"), upper("g");
  ReadOptions bounded;
  bounded.iterate_lower_bound = &lower;
  bounded.iterate_upper_bound = &upper;
  it.reset(txn->GetIterator(bounded, db_->DefaultColumnFamily()));
  EXPECT_EQ(Walk(it.get(), false), "b=t,c=t,");
  EXPECT_EQ(Walk(it.get(), true), "c=t,b=t,");
  it.reset();
  // Committed, the same view is the DB's own.
  ASSERT_OK(txn->Commit());
  it.reset(db_->NewIterator(ReadOptions()));
  EXPECT_EQ(Walk(it.get(), false), "a=db,b=t,c=t,g=db,h=t,");
}

TEST_F(TransactionTest, SavePointsUndoWritesAndTheirLocks) {
  ASSERT_OK(db_->Put(WriteOptions(), "a", "db"));
  auto txn = Begin();
  EXPECT_TRUE(txn->RollbackToSavePoint().IsNotFound());
  EXPECT_TRUE(txn->PopSavePoint().IsNotFound());
  ASSERT_OK(txn->Put("x", "1"));
  txn->SetSavePoint();
  ASSERT_OK(txn->Put("x", "2"));
  ASSERT_OK(txn->Put("y", "1"));
  ASSERT_OK(txn->Delete("a"));
  txn->SetSavePoint();
  ASSERT_OK(txn->Put("z", "1"));
  EXPECT_EQ(txn->GetNumKeys(), 4u);

  ASSERT_OK(txn->RollbackToSavePoint());  // drops z
  EXPECT_EQ(TxnGet(txn.get(), "z"), "NOT_FOUND");
  EXPECT_EQ(TxnGet(txn.get(), "y"), "1");
  EXPECT_EQ(txn->GetNumKeys(), 3u);
  // z's lock went with it; the others are still held.
  ASSERT_OK(db_->Put(WriteOptions(), "z", "outside"));
  EXPECT_TRUE(db_->Put(WriteOptions(), "y", "outside").IsTimedOut());

  ASSERT_OK(txn->RollbackToSavePoint());  // drops x=2, y and the Delete of a
  EXPECT_EQ(TxnGet(txn.get(), "x"), "1");
  EXPECT_EQ(TxnGet(txn.get(), "y"), "NOT_FOUND");
  EXPECT_EQ(TxnGet(txn.get(), "a"), "db");
  EXPECT_EQ(txn->GetNumKeys(), 1u);
  ASSERT_OK(db_->Put(WriteOptions(), "y", "outside"));
  ASSERT_OK(db_->Put(WriteOptions(), "a", "outside"));
  // x was locked before the first save point: still this transaction's.
  EXPECT_TRUE(db_->Put(WriteOptions(), "x", "outside").IsTimedOut());
  EXPECT_TRUE(txn->RollbackToSavePoint().IsNotFound());

  // A popped save point hands its keys to the one around it.
  txn->SetSavePoint();
  ASSERT_OK(txn->Put("p", "1"));
  txn->SetSavePoint();
  ASSERT_OK(txn->Put("q", "1"));
  ASSERT_OK(txn->PopSavePoint());
  ASSERT_OK(txn->RollbackToSavePoint());
  EXPECT_EQ(TxnGet(txn.get(), "p"), "NOT_FOUND");
  EXPECT_EQ(TxnGet(txn.get(), "q"), "NOT_FOUND");
  ASSERT_OK(db_->Put(WriteOptions(), "q", "outside"));

  ASSERT_OK(txn->Commit());
  EXPECT_EQ(Get("x"), "1");
  EXPECT_EQ(Get("y"), "outside");
  EXPECT_EQ(Get("p"), "NOT_FOUND");
}

TEST_F(TransactionTest, SavePointRestoresTheSnapshot) {
  auto txn = Begin();
  txn->SetSnapshot();
  const Snapshot* first = txn->GetSnapshot();
  ASSERT_NE(first, nullptr);
  txn->SetSavePoint();
  txn->SetSnapshot();
  EXPECT_NE(txn->GetSnapshot(), first);
  ASSERT_OK(txn->RollbackToSavePoint());
  EXPECT_EQ(txn->GetSnapshot(), first);
  txn->ClearSnapshot();
  EXPECT_EQ(txn->GetSnapshot(), nullptr);
}

class CountingNotifier : public TransactionNotifier {
 public:
  void SnapshotCreated(const Snapshot* s) override { seen.push_back(s); }
  std::vector<const Snapshot*> seen;
};

TEST_F(TransactionTest, SnapshotOnNextOperation) {
  auto notifier = std::make_shared<CountingNotifier>();
  auto txn = Begin();
  txn->SetSnapshotOnNextOperation(notifier);
  EXPECT_EQ(txn->GetSnapshot(), nullptr);
  // Written before the transaction's next operation: not a conflict.
  ASSERT_OK(db_->Put(WriteOptions(), "k", "outside"));
  ASSERT_OK(txn->Put("k", "txn"));
  ASSERT_NE(txn->GetSnapshot(), nullptr);
  ASSERT_EQ(notifier->seen.size(), 1u);
  EXPECT_EQ(notifier->seen[0], txn->GetSnapshot());
  // From then on the snapshot holds: a key written after it conflicts.
  ASSERT_OK(db_->Put(WriteOptions(), "j", "outside"));
  EXPECT_TRUE(txn->Put("j", "txn").IsBusy());
  EXPECT_EQ(notifier->seen.size(), 1u);
  ASSERT_OK(txn->Commit());
  EXPECT_EQ(Get("k"), "txn");
}

TEST_F(TransactionTest, SetSnapshotOptionAndReadsAtIt) {
  ASSERT_OK(db_->Put(WriteOptions(), "k", "old"));
  TransactionOptions o;
  o.set_snapshot = true;
  auto txn = Begin(o);
  ASSERT_NE(txn->GetSnapshot(), nullptr);
  ASSERT_OK(db_->Put(WriteOptions(), "k", "new"));
  // Get reads the newest data unless told to read at the snapshot.
  EXPECT_EQ(TxnGet(txn.get(), "k"), "new");
  ReadOptions at;
  at.snapshot = txn->GetSnapshot();
  EXPECT_EQ(TxnGet(txn.get(), "k", at), "old");
  ASSERT_OK(txn->Rollback());
}

TEST_F(TransactionTest, NamesAndLookups) {
  auto a = Begin();
  auto b = Begin();
  EXPECT_TRUE(a->SetName("").IsInvalidArgument());
  EXPECT_TRUE(a->SetName(std::string(513, 'n')).IsInvalidArgument());
  ASSERT_OK(a->SetName(std::string(512, 'n')));
  EXPECT_EQ(a->GetName(), std::string(512, 'n'));
  EXPECT_TRUE(a->SetName("again").IsInvalidArgument());
  EXPECT_TRUE(b->SetName(std::string(512, 'n')).IsInvalidArgument());
  ASSERT_OK(b->SetName("b"));
  EXPECT_EQ(db_->GetTransactionByName("b"), b.get());
  EXPECT_EQ(db_->GetTransactionByName(std::string(512, 'n')), a.get());
  EXPECT_EQ(db_->GetTransactionByName("none"), nullptr);
  // A transaction's name goes with it.
  b.reset();
  EXPECT_EQ(db_->GetTransactionByName("b"), nullptr);
  auto c = Begin();
  ASSERT_OK(c->SetName("b"));
  // And with its commit.
  ASSERT_OK(c->Commit());
  EXPECT_EQ(db_->GetTransactionByName("b"), nullptr);
  EXPECT_TRUE(c->SetName("c").IsInvalidArgument());  // not STARTED any more
}

TEST_F(TransactionTest, StateMachineStatuses) {
  auto txn = Begin();
  EXPECT_TRUE(txn->Prepare().IsInvalidArgument());  // unnamed
  ASSERT_OK(txn->Put("k", "v"));
  ASSERT_OK(txn->Commit());
  EXPECT_TRUE(txn->Commit().IsInvalidArgument());
  EXPECT_TRUE(txn->Rollback().IsInvalidArgument());
  EXPECT_TRUE(txn->SetName("late").IsInvalidArgument());
  EXPECT_TRUE(txn->Put("k2", "v").IsInvalidArgument());  // committed: no more writes

  // Without skip_prepare a commit needs a prepare.
  TransactionOptions o;
  o.skip_prepare = false;
  auto strict = Begin(o);
  ASSERT_OK(strict->Put("s", "v"));
  EXPECT_TRUE(strict->Commit().IsTxnNotPrepared());
  EXPECT_EQ(Get("s"), "NOT_FOUND");
  // A rolled-back transaction drops its writes and locks but may go on.
  ASSERT_OK(strict->Rollback());
  EXPECT_EQ(strict->GetNumKeys(), 0u);
  ASSERT_OK(db_->Put(WriteOptions(), "s", "outside"));
  EXPECT_EQ(TxnGet(strict.get(), "s"), "outside");
}

TEST_F(TransactionTest, BeginTransactionReusesOldTxn) {
  auto txn = Begin();
  ASSERT_OK(txn->SetName("first"));
  ASSERT_OK(txn->Put("a", "1"));
  txn->SetSnapshot();
  const TransactionID first_id = txn->GetID();
  Transaction* again = db_->BeginTransaction(WriteOptions(), TransactionOptions(), txn.get());
  ASSERT_EQ(again, txn.get());
  EXPECT_NE(txn->GetID(), first_id);
  EXPECT_EQ(txn->GetState(), Transaction::STARTED);
  EXPECT_EQ(txn->GetNumKeys(), 0u);
  EXPECT_EQ(txn->GetSnapshot(), nullptr);
  EXPECT_EQ(txn->GetName(), "");
  EXPECT_EQ(db_->GetTransactionByName("first"), nullptr);
  EXPECT_EQ(TxnGet(txn.get(), "a"), "NOT_FOUND");
  ASSERT_OK(db_->Put(WriteOptions(), "a", "outside"));  // the old lock is gone
  // A committed transaction can be reused too.
  ASSERT_OK(txn->Put("b", "2"));
  ASSERT_OK(txn->Commit());
  db_->BeginTransaction(WriteOptions(), TransactionOptions(), txn.get());
  ASSERT_OK(txn->Put("c", "3"));
  ASSERT_OK(txn->Commit());
  EXPECT_EQ(Get("b"), "2");
  EXPECT_EQ(Get("c"), "3");
}

TEST_F(TransactionTest, WriteBatchAccessors) {
  auto txn = Begin();
  ASSERT_OK(txn->Put("a", "1"));
  EXPECT_GT(txn->GetWriteBatch()->GetDataSize(), 0u);
  std::string value;
  ASSERT_OK(txn->GetWriteBatch()->GetFromBatch(DBOptions(), "a", &value));
  EXPECT_EQ(value, "1");
  // The commit-time batch is written with the transaction, unlocked.
  ASSERT_OK(txn->GetCommitTimeWriteBatch()->Put("ct", "v"));
  EXPECT_EQ(Get("ct"), "NOT_FOUND");
  ASSERT_OK(txn->Commit());
  EXPECT_EQ(Get("ct"), "v");
  EXPECT_EQ(Get("a"), "1");
}

TEST_F(TransactionTest, MaxWriteBatchSize) {
  TransactionOptions o;
  o.max_write_batch_size = 64;
  auto txn = Begin(o);
  ASSERT_OK(txn->Put("a", std::string(20, 'x')));
  Status s = txn->Put("b", std::string(40, 'x'));
  EXPECT_TRUE(s.IsAborted() && s.subcode() == Status::kMemoryLimit) << s.ToString();
  EXPECT_LE(txn->GetWriteBatch()->GetDataSize(), 64u);
  ASSERT_OK(txn->Delete("c"));  // a small record still fits
  ASSERT_OK(txn->Commit());
  EXPECT_EQ(Get("b"), "NOT_FOUND");
  EXPECT_EQ(Get("a"), std::string(20, 'x'));
}

TEST_F(TransactionTest, SkipConcurrencyControl) {
  TransactionOptions o;
  o.skip_concurrency_control = true;
  auto txn = Begin(o);
  ASSERT_OK(txn->Put("k", "txn"));
  EXPECT_EQ(txn->GetNumKeys(), 0u);
  ASSERT_OK(db_->Put(WriteOptions(), "k", "outside"));  // no lock held
  ASSERT_OK(txn->Commit());
  EXPECT_EQ(Get("k"), "txn");

  // The DB-wide option spares plain writes the locks.
  txn_db_options_.skip_concurrency_control = true;
  Reopen();
  auto holder = Begin();
  ASSERT_OK(holder->Put("k", "held"));
  ASSERT_OK(db_->Put(WriteOptions(), "k", "outside"));
  ASSERT_OK(holder->Rollback());
  EXPECT_EQ(Get("k"), "outside");
}

TEST_F(TransactionTest, OtherFamiliesAndPoliciesAreRefused) {
  auto txn = Begin();
  // A handle that is not the default family's.
  class OtherFamily : public ColumnFamilyHandle {
   public:
    const std::string& GetName() const override { return name_; }
    uint32_t GetID() const override { return 7; }
    Status GetDescriptor(ColumnFamilyDescriptor*) override { return Status::NotSupported(); }
    const Comparator* GetComparator() const override { return BytewiseComparator(); }
    std::string name_ = "other";
  } other;
  EXPECT_TRUE(txn->Put(&other, "k", "v").IsInvalidArgument());
  std::string value;
  EXPECT_TRUE(txn->Get(ReadOptions(), &other, "k", &value).IsInvalidArgument());
  EXPECT_TRUE(txn->GetForUpdate(ReadOptions(), &other, "k", &value).IsInvalidArgument());
  std::unique_ptr<Iterator> it(txn->GetIterator(ReadOptions(), &other));
  EXPECT_TRUE(it->status().IsInvalidArgument());
  txn.reset();

  Close();
  txn_db_options_.write_policy = WRITE_UNPREPARED;
  EXPECT_TRUE(TryOpen().IsNotSupported());
  EXPECT_EQ(db_, nullptr);
  txn_db_options_.write_policy = static_cast<TxnDBWritePolicy>(3);  // in range, named by none
  EXPECT_TRUE(TryOpen().IsInvalidArgument());
  EXPECT_EQ(db_, nullptr);
  txn_db_options_.write_policy = WRITE_PREPARED;
  for (auto [commit_bits, snapshot_bits] : {std::pair{0, 7}, {33, 7}, {23, -1}, {23, 21}}) {
    txn_db_options_.wp_commit_cache_bits = commit_bits;
    txn_db_options_.wp_snapshot_cache_bits = snapshot_bits;
    EXPECT_TRUE(TryOpen().IsInvalidArgument());
    EXPECT_EQ(db_, nullptr);
  }
  txn_db_options_.wp_commit_cache_bits = 10;
  txn_db_options_.wp_snapshot_cache_bits = 2;
  options_.max_successive_merges = 2;
  EXPECT_TRUE(TryOpen().IsNotSupported());
  EXPECT_EQ(db_, nullptr);
}

// unordered_write with each policy, with RocksDB's statuses and messages; the DB is left
// unopened (create_if_missing would have made one).
TEST_F(TransactionTest, UnorderedWriteCombinations) {
  Close();
  options_.unordered_write = true;
  options_.enable_pipelined_write = false;
  struct Case {
    TxnDBWritePolicy policy;
    bool two_write_queues;
    const char* message;
  };
  const Case cases[] = {
      {WRITE_COMMITTED, false, "WRITE_COMMITTED is incompatible with unordered_writes"},
      {WRITE_COMMITTED, true, "WRITE_COMMITTED is incompatible with unordered_writes"},
      {WRITE_UNPREPARED, true, "WRITE_UNPREPARED is currently incompatible with unordered_writes"},
      {WRITE_PREPARED, false,
       "WRITE_PREPARED is incompatible with unordered_writes if two_write_queues is not "
       "enabled."},
  };
  for (const Case& c : cases) {
    txn_db_options_.write_policy = c.policy;
    options_.two_write_queues = c.two_write_queues;
    Status s = TryOpen();
    EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
    EXPECT_EQ(std::string("Not implemented: ") + c.message, s.ToString());
    EXPECT_EQ(db_, nullptr);
  }
  // Without unordered_write the plain policy opens with either queue setting.
  options_.unordered_write = false;
  txn_db_options_.write_policy = WRITE_COMMITTED;
  options_.two_write_queues = true;
  ASSERT_OK(TryOpen());
}

TEST_F(TransactionTest, OpenWithColumnFamilyDescriptors) {
  ASSERT_OK(db_->Put(WriteOptions(), "k", "v"));
  Close();
  DBOptions db_options(options_);
  std::vector<ColumnFamilyHandle*> handles;
  TransactionDB* raw = nullptr;
  // A family the DB lacks needs create_missing_column_families, as DB::Open.
  std::vector<ColumnFamilyDescriptor> two = {{kDefaultColumnFamilyName, ColumnFamilyOptions()},
                                             {"other", ColumnFamilyOptions()}};
  EXPECT_TRUE(TransactionDB::Open(db_options, txn_db_options_, dbname(), two, &handles, &raw)
                  .IsInvalidArgument());
  EXPECT_EQ(raw, nullptr);
  std::vector<ColumnFamilyDescriptor> one = {{kDefaultColumnFamilyName, ColumnFamilyOptions()}};
  ASSERT_OK(TransactionDB::Open(db_options, txn_db_options_, dbname(), one, &handles, &raw));
  db_.reset(raw);
  ASSERT_EQ(handles.size(), 1u);
  EXPECT_EQ(handles[0]->GetID(), 0u);
  std::string value;
  ASSERT_OK(db_->Get(ReadOptions(), handles[0], "k", &value));
  EXPECT_EQ(value, "v");
  auto txn = Begin();
  ASSERT_OK(txn->Put(handles[0], "k2", "v2"));
  ASSERT_OK(txn->Commit());
  EXPECT_EQ(Get("k2"), "v2");
  ASSERT_OK(db_->DestroyColumnFamilyHandle(handles[0]));
}

// Random writes, merges and save points in one transaction over a DB with data of its own,
// against a model (std::map): after every step Get of a random key, and now and then a
// full walk in both directions, must match; committed, the DB must match too.
TEST_F(TransactionTest, MatchesModel) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator(',');
  Reopen();
  Random rnd(TestSeed());
  const int steps = TestKnob("SHALE_TXN_MODEL_STEPS", 600);
  // Built by appending: GCC 12 warns (-Wrestrict, wrongly) about "literal" + std::string.
  auto named = [](const char* prefix, uint64_t n) {
    return std::string(prefix).append(std::to_string(n));
  };
  auto key = [&] { return named("k", rnd.Uniform(40)); };
  std::map<std::string, std::string> model;
  for (int i = 0; i < 20; i++) {
    std::string k = key(), v = named("db", i);
    ASSERT_OK(db_->Put(WriteOptions(), k, v));
    model[k] = v;
  }
  auto walk_model = [&](bool backward) {
    std::string out;
    auto add = [&](const auto& kv) { out += kv.first + "=" + kv.second + ","; };
    if (backward) {
      for (auto it = model.rbegin(); it != model.rend(); ++it) add(*it);
    } else {
      for (const auto& kv : model) add(kv);
    }
    return out;
  };
  std::vector<std::map<std::string, std::string>> save_points;
  auto txn = Begin();
  for (int step = 0; step < steps; step++) {
    const uint32_t op = rnd.Uniform(20);
    std::string k = key(), v = named("v", step);
    if (op < 8) {
      ASSERT_OK(txn->Put(k, v));
      model[k] = v;
    } else if (op < 12) {
      ASSERT_OK(txn->Delete(k));
      model.erase(k);
    } else if (op < 16) {
      ASSERT_OK(txn->Merge(k, v));
      auto it = model.find(k);
      model[k] = it == model.end() ? v : it->second + "," + v;
    } else if (op < 18) {
      txn->SetSavePoint();
      save_points.push_back(model);
    } else if (op == 18) {
      Status s = txn->RollbackToSavePoint();
      ASSERT_EQ(s.ok(), !save_points.empty()) << s.ToString();
      if (!save_points.empty()) {
        model = save_points.back();
        save_points.pop_back();
      }
    } else {
      Status s = txn->PopSavePoint();
      ASSERT_EQ(s.ok(), !save_points.empty()) << s.ToString();
      if (!save_points.empty()) save_points.pop_back();
    }
    const std::string probe = key();
    auto it = model.find(probe);
    ASSERT_EQ(TxnGet(txn.get(), probe), it == model.end() ? "NOT_FOUND" : it->second)
        << "step " << step << " key " << probe;
    if (step % 50 == 0) {
      std::unique_ptr<Iterator> iter(txn->GetIterator(ReadOptions()));
      ASSERT_EQ(Walk(iter.get(), false), walk_model(false)) << "step " << step;
      ASSERT_EQ(Walk(iter.get(), true), walk_model(true)) << "step " << step;
    }
  }
  ASSERT_OK(txn->Commit());
  std::unique_ptr<Iterator> iter(db_->NewIterator(ReadOptions()));
  EXPECT_EQ(Walk(iter.get(), false), walk_model(false));
}

}  // namespace
}  // namespace shale
