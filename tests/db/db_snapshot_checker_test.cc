// Flush and compaction with a SnapshotChecker (WritePrepared transactions): data written
// into the DB before it commits. A model checker stands in for the transaction layer:
// every write is real, and the model says which of them are committed and when (a commit
// takes a sequence of its own from a write to a key the checks ignore). What the flush or
// compaction kept is read back from the table files and judged by the model: every
// snapshot still alive, and the latest state, read what they read before; uncommitted
// entries are there unchanged; and with every entry committed in sequence order, exactly
// what a run without a checker keeps is kept; a WritePrepared DB (seq_per_batch) keeps
// everything until its checker is installed. One test per case of the checker's rules,
// RocksDB's issues 4883 (a commit during a compaction, with a snapshot taken after it
// started) and 6113 (a flush that did not wait for a pending unordered_write insert), and a
// randomized test against the model (it prints its seed; SHALE_TEST_SEED replays).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "db/db_impl.h"
#include "db/filename.h"
#include "db/snapshot_checker.h"
#include "shale/merge_operator.h"
#include "table/table_reader.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"
#include "util/random.h"

namespace shale {
namespace {

using Result = SnapshotChecker::Result;

// Joins operands with ','; also combines operands alone, so that flushes and compactions
// above the bottom fold runs of operands (PartialMergeMulti).
class JoinOperator final : public MergeOperator {
 public:
  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    std::string v = in.existing_value != nullptr ? in.existing_value->ToString() : "";
    for (const Slice& op : in.operand_list) {
      if (!v.empty()) v += ',';
      v.append(op.data(), op.size());
    }
    out->new_value = v;
    return true;
  }
  bool PartialMerge(const Slice&, const Slice& left, const Slice& right, std::string* out,
                    Logger*) const override {
    *out = left.ToString() + "," + right.ToString();
    return true;
  }
  const char* Name() const override { return "JoinOperator"; }
};

// The transaction layer's answers, from a model: an entry commits at its own sequence
// unless Prepare says otherwise; then it is uncommitted until Commit (never, for a rollback).
// Thread-safe: flush and compaction threads ask while the test thread commits.
class ModelChecker final : public SnapshotChecker {
 public:
  void Prepare(SequenceNumber seq) {
    std::lock_guard<std::mutex> l(mu_);
    prepared_.insert(seq);
  }
  void Commit(SequenceNumber seq, SequenceNumber commit_seq) {
    std::lock_guard<std::mutex> l(mu_);
    prepared_.erase(seq);
    commits_[seq] = commit_seq;
  }
  // The snapshot answers kSnapshotReleased from now on (as if released while a job runs).
  void Release(SequenceNumber snapshot) {
    std::lock_guard<std::mutex> l(mu_);
    released_.insert(snapshot);
  }
  // Runs once, on the thread of the next question, before it is answered.
  void OnNextCheck(std::function<void()> f) {
    std::lock_guard<std::mutex> l(mu_);
    on_check_ = std::move(f);
  }
  // Whether a reader at snapshot sees the entry at seq (kMaxSequenceNumber: the latest).
  bool Visible(SequenceNumber seq, SequenceNumber snapshot) const {
    std::lock_guard<std::mutex> l(mu_);
    return VisibleLocked(seq, snapshot);
  }
  bool IsPrepared(SequenceNumber seq) const {
    std::lock_guard<std::mutex> l(mu_);
    return prepared_.count(seq) > 0;
  }
  uint64_t checks() const { return checks_.load(); }
  // How the entry at seq commits, for messages: "" at seq, "@c" at c, "@-" not yet.
  std::string Describe(SequenceNumber seq) const {
    std::lock_guard<std::mutex> l(mu_);
    if (prepared_.count(seq) > 0) return "@-";
    auto it = commits_.find(seq);
    return it == commits_.end() ? "" : "@" + std::to_string(it->second);
  }
  std::string ReleasedList() const {
    std::lock_guard<std::mutex> l(mu_);
    std::string out;
    for (SequenceNumber s : released_) out += " " + std::to_string(s);
    return out;
  }

  Result CheckInSnapshot(SequenceNumber seq, SequenceNumber snapshot) const override {
    std::function<void()> hook;
    {
      std::lock_guard<std::mutex> l(mu_);
      hook.swap(on_check_);
    }
    if (hook) hook();
    checks_++;
    std::lock_guard<std::mutex> l(mu_);
    if (released_.count(snapshot) > 0) return Result::kSnapshotReleased;
    return VisibleLocked(seq, snapshot) ? Result::kInSnapshot : Result::kNotInSnapshot;
  }

 private:
  bool VisibleLocked(SequenceNumber seq, SequenceNumber snapshot) const {
    if (prepared_.count(seq) > 0) return false;
    auto it = commits_.find(seq);
    return (it == commits_.end() ? seq : it->second) <= snapshot;
  }

  mutable std::mutex mu_;
  std::set<SequenceNumber> prepared_;
  std::map<SequenceNumber, SequenceNumber> commits_;
  std::set<SequenceNumber> released_;
  mutable std::function<void()> on_check_;
  mutable std::atomic<uint64_t> checks_{0};
};

// One stored or written entry of a key.
struct Entry {
  SequenceNumber seq;
  char type;  // 'P', 'D', 'S' or 'M' as TEST_KeyVersions writes them
  std::string value;
  bool operator==(const Entry& o) const {
    return seq == o.seq && type == o.type && value == o.value;
  }
};

// " 5Pv 4D": sequence, type and value (of a Put or Merge) of each entry; with a model,
// how each commits too (ModelChecker::Describe).
std::string Show(const std::vector<Entry>& entries, const ModelChecker* model = nullptr) {
  std::string out;
  for (const Entry& e : entries) {
    out += " " + std::to_string(e.seq) + e.type + (e.type == 'P' || e.type == 'M' ? e.value : "");
    if (model != nullptr) out += model->Describe(e.seq);
  }
  return out;
}

// What a reader at snapshot reads from entries (any order) when it sees only what the
// model says: the newest visible entry, operands folded down to a Put or a deletion.
std::string ModelRead(std::vector<Entry> entries, const ModelChecker& model,
                      SequenceNumber snapshot) {
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.seq > b.seq; });
  std::vector<std::string> operands;  // newest first
  std::string base;
  bool has_base = false;
  for (const Entry& e : entries) {
    if (!model.Visible(e.seq, snapshot)) continue;
    if (e.type == 'M') {
      operands.push_back(e.value);
      continue;
    }
    if (e.type == 'P') {
      base = e.value;
      has_base = true;
    }
    break;
  }
  if (!has_base && operands.empty()) return "NOT_FOUND";
  std::string v = base;
  for (auto it = operands.rbegin(); it != operands.rend(); ++it) {
    if (!v.empty()) v += ',';
    v += *it;
  }
  return v;
}

class DBSnapshotCheckerTest : public DBTestBase {
 protected:
  DBSnapshotCheckerTest() : DBTestBase("db_snapshot_checker") {
    options_.merge_operator = std::make_shared<JoinOperator>();
    options_.disable_auto_compactions = true;
    options_.write_buffer_size = 64 << 20;
  }
  ~DBSnapshotCheckerTest() override {
    if (db_ == nullptr) return;
    for (const Snapshot* s : snapshots_) db_->ReleaseSnapshot(s);
    for (const Snapshot* s : zombies_) db_->ReleaseSnapshot(s);
  }

  DBImpl* impl() { return static_cast<DBImpl*>(db_.get()); }
  // Opens (or reopens) the DB as the WritePrepared TransactionDB does (seq_per_batch),
  // without installing a checker.
  void OpenWritePrepared() {
    if (db_ != nullptr) ASSERT_OK(db_->Close());
    db_.reset();
    DB* db = nullptr;
    ASSERT_OK(DBImpl::Open(options_, dbname_, /*seq_per_batch=*/true, &db));
    db_.reset(db);
  }
  // Opens the DB and installs the model as its checker (unless without).
  void OpenWithChecker(bool with = true) {
    Open();
    if (with) impl()->SetSnapshotChecker(model_);
  }

  // Writes op ('P', 'D', 'S' or 'M') of key; prepared: uncommitted until CommitNow.
  SequenceNumber Write(char op, const std::string& key, const std::string& value = "",
                       bool prepared = false) {
    Status s;
    if (op == 'P') s = Put(key, value);
    if (op == 'D') s = Delete(key);
    if (op == 'S') s = SingleDelete(key);
    if (op == 'M') s = Merge(key, value);
    EXPECT_OK(s);
    const SequenceNumber seq = db_->GetLatestSequenceNumber();
    if (prepared) model_->Prepare(seq);
    written_[key].push_back(Entry{seq, op, op == 'P' || op == 'M' ? value : ""});
    return seq;
  }
  // Commits the prepared entry at seq with a sequence of its own, above every snapshot.
  SequenceNumber CommitNow(SequenceNumber seq) {
    EXPECT_OK(Put(kTick, ""));
    const SequenceNumber commit = db_->GetLatestSequenceNumber();
    model_->Commit(seq, commit);
    return commit;
  }
  const Snapshot* TakeSnapshot() {
    snapshots_.push_back(db_->GetSnapshot());
    return snapshots_.back();
  }
  void DropSnapshot(const Snapshot* s) {
    snapshots_.erase(std::find(snapshots_.begin(), snapshots_.end(), s));
    db_->ReleaseSnapshot(s);
  }
  // Released as far as the checker knows (it answers kSnapshotReleased for s's sequence),
  // still in the DB's list and so in the next jobs' lists, as a snapshot released while
  // a job runs. Every snapshot at that sequence goes with it (the transaction layer
  // reports a sequence released only when no snapshot holds it), and a write moves the
  // sequence on so that no later snapshot gets it again.
  void ReleaseInModel(const Snapshot* s) {
    const SequenceNumber seq = s->GetSequenceNumber();
    model_->Release(seq);
    for (auto it = snapshots_.begin(); it != snapshots_.end();) {
      if ((*it)->GetSequenceNumber() != seq) {
        ++it;
        continue;
      }
      zombies_.push_back(*it);
      it = snapshots_.erase(it);
    }
    EXPECT_OK(Put(kTick, ""));
  }

  // Flushes, then compacts everything into the bottommost level and rewrites that level
  // (files moved down whole are rewritten by the second CompactRange).
  void CompactToBottom() {
    ASSERT_OK(Flush());
    RewriteBottom();
    RewriteBottom();
  }
  void RewriteBottom() {
    CompactRangeOptions o;
    o.bottommost_level_compaction = BottommostLevelCompaction::kForce;
    ASSERT_OK(db_->CompactRange(o, nullptr, nullptr));
  }

  // Every entry of key the DB holds, from the table files TEST_KeyVersions names (the
  // memtables must be empty), newest first.
  std::vector<Entry> Stored(const std::string& key) {
    const std::string versions = impl()->TEST_KeyVersions(key);
    EXPECT_EQ(versions.rfind("mem:", 0), 0u) << versions;
    EXPECT_TRUE(versions.size() < 5 || versions[4] == ';') << "memtable not empty: " << versions;
    std::vector<Entry> out;
    const InternalKeyComparator icmp(options_.comparator);
    for (size_t pos = versions.find('#'); pos != std::string::npos;
         pos = versions.find('#', pos + 1)) {
      const uint64_t number = std::stoull(versions.substr(pos + 1));
      const std::string path = TableFileName(dbname_, number);
      uint64_t size = 0;
      std::unique_ptr<RandomAccessFile> file;
      std::unique_ptr<TableReader> reader;
      EXPECT_OK(Env::Default()->GetFileSize(path, &size));
      EXPECT_OK(Env::Default()->NewRandomAccessFile(path, &file, EnvOptions()));
      TableReaderOptions ro;
      ro.icmp = &icmp;
      ro.file_name = path;
      EXPECT_OK(TableReader::Open(ro, std::move(file), size, &reader));
      if (reader == nullptr) return out;
      std::unique_ptr<InternalIterator> it(reader->NewIterator(ReadOptions()));
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        ParsedInternalKey ik;
        EXPECT_OK(ParseInternalKey(it->key(), &ik));
        if (ik.user_key != Slice(key)) continue;
        const char type = ik.type == kTypeValue            ? 'P'
                          : ik.type == kTypeDeletion       ? 'D'
                          : ik.type == kTypeSingleDeletion ? 'S'
                                                           : 'M';
        out.push_back(Entry{ik.sequence, type, it->value().ToString()});
        if (type == 'D' || type == 'S') out.back().value.clear();
      }
      EXPECT_OK(it->status());
    }
    std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.seq > b.seq; });
    return out;
  }

  // Every live snapshot and the latest state read key from the stored entries as from
  // everything written; every prepared entry is stored unchanged.
  void Verify(const std::string& key, const std::string& when) {
    const std::vector<Entry> stored = Stored(key);
    const std::vector<Entry>& all = written_[key];
    std::vector<SequenceNumber> readers = {kMaxSequenceNumber};
    std::string listed;
    for (const Snapshot* s : snapshots_) readers.push_back(s->GetSequenceNumber());
    for (const Snapshot* s : zombies_) listed += " " + std::to_string(s->GetSequenceNumber());
    for (size_t i = 1; i < readers.size(); i++) listed += " " + std::to_string(readers[i]);
    const std::string trace = when + ": key " + key + " written" + Show(all, model_.get()) +
                              ", stored" + Show(stored) + ", snapshots" + listed +
                              ", released in the model" + model_->ReleasedList();
    for (SequenceNumber r : readers) {
      ASSERT_EQ(ModelRead(stored, *model_, r), ModelRead(all, *model_, r))
          << trace << ", reader at " << r;
    }
    for (const Entry& e : all) {
      if (!model_->IsPrepared(e.seq)) continue;
      ASSERT_NE(std::find(stored.begin(), stored.end(), e), stored.end())
          << trace << ": the uncommitted " << e.seq << e.type << " changed or went";
    }
  }

  static constexpr const char* kTick = "~tick";
  std::shared_ptr<ModelChecker> model_ = std::make_shared<ModelChecker>();
  std::map<std::string, std::vector<Entry>> written_;
  std::vector<const Snapshot*> snapshots_;  // live: verified
  std::vector<const Snapshot*> zombies_;    // released in the model only (ReleaseInModel)
};

// An uncommitted Delete over a committed Put hides nothing and survives unchanged, in the
// flush and at the bottom; a rollback (it never commits) leaves the Put readable.

// The job's checker answers from its bound only for the job's own snapshot and entries
// below the bound; everything else goes to the DB's checker.
TEST(JobSnapshotCheckerTest, AnswersFromTheBoundOnlyAtTheJobsSnapshot) {
  KeepAllSnapshotChecker none_committed;
  auto inner =
      std::shared_ptr<const SnapshotChecker>(&none_committed, [](const SnapshotChecker*) {});
  JobSnapshotChecker job(inner, /*job_snapshot=*/50, /*min_uncommitted=*/20);
  using Result = SnapshotChecker::Result;
  EXPECT_EQ(Result::kInSnapshot, job.CheckInSnapshot(19, 50));
  EXPECT_EQ(Result::kNotInSnapshot, job.CheckInSnapshot(20, 50));
  EXPECT_EQ(Result::kNotInSnapshot, job.CheckInSnapshot(19, 40)) << "another snapshot";
  EXPECT_EQ(Result::kNotInSnapshot, job.CheckInSnapshot(19, kMaxSequenceNumber));
  EXPECT_EQ(0u, none_committed.SmallestUncommitted());
}

TEST_F(DBSnapshotCheckerTest, UncommittedDeleteHidesNothing) {
  OpenWithChecker();
  const SequenceNumber put = Write('P', "k", "v1");
  const SequenceNumber del = Write('D', "k", "", /*prepared=*/true);
  ASSERT_OK(Flush());
  ASSERT_EQ(Show(Stored("k")), Show({{del, 'D', ""}, {put, 'P', "v1"}}));
  CompactToBottom();
  ASSERT_EQ(Show(Stored("k")), Show({{del, 'D', ""}, {put, 'P', "v1"}}));
  ASSERT_GT(model_->checks(), 0u);
  Verify("k", "rolled back");
  CommitNow(del);
  Verify("k", "committed");
  CompactToBottom();
  ASSERT_EQ(Show(Stored("k")), "");  // committed now: the tombstone and the Put go
}

// Automatic compactions ask the checker too: two L0 files, a committed Put and an
// uncommitted Delete over it, are compacted down by the DB itself and both survive.
TEST_F(DBSnapshotCheckerTest, AutomaticCompactionKeepsUncommittedDelete) {
  options_.disable_auto_compactions = false;
  options_.level0_file_num_compaction_trigger = 2;
  OpenWithChecker();
  const SequenceNumber put = Write('P', "k", "v1");
  ASSERT_OK(Flush());
  const SequenceNumber del = Write('D', "k", "", /*prepared=*/true);
  ASSERT_OK(Flush());
  ASSERT_OK(WaitForCompact());
  const std::string versions = impl()->TEST_KeyVersions("k");
  ASSERT_EQ(versions.find("L0"), std::string::npos) << versions;
  ASSERT_EQ(Show(Stored("k")), Show({{del, 'D', ""}, {put, 'P', "v1"}}));
  Verify("k", "rolled back");
}

// A Delete committed after the earliest snapshot was taken is not seen by it, so at the
// bottom it is neither dropped nor lets the Put under it go, although its sequence is
// below the snapshot; once the snapshot is released both go.
TEST_F(DBSnapshotCheckerTest, TombstoneAtBottomOnlyWhenEarliestSnapshotSeesIt) {
  OpenWithChecker();
  const SequenceNumber put = Write('P', "k", "v1");
  const SequenceNumber del = Write('D', "k", "", /*prepared=*/true);
  const Snapshot* s = TakeSnapshot();
  ASSERT_GE(s->GetSequenceNumber(), del);
  CommitNow(del);
  ASSERT_OK(Flush());
  ASSERT_EQ(Show(Stored("k")), Show({{del, 'D', ""}, {put, 'P', "v1"}}));
  CompactToBottom();
  ASSERT_EQ(Show(Stored("k")), Show({{del, 'D', ""}, {put, 'P', "v1"}}));
  Verify("k", "snapshot held");
  DropSnapshot(s);
  CompactToBottom();
  ASSERT_EQ(Show(Stored("k")), "");
}

// An uncommitted SingleDelete does not cancel the committed Put under it, and a committed
// SingleDelete does not cancel an uncommitted Put: all four survive until both commit.
TEST_F(DBSnapshotCheckerTest, SingleDeleteNeverPairsWithUncommitted) {
  OpenWithChecker();
  const SequenceNumber a_put = Write('P', "a", "va");
  const SequenceNumber a_sd = Write('S', "a", "", /*prepared=*/true);
  const SequenceNumber b_put = Write('P', "b", "vb", /*prepared=*/true);
  const SequenceNumber b_sd = Write('S', "b");
  CompactToBottom();
  ASSERT_EQ(Show(Stored("a")), Show({{a_sd, 'S', ""}, {a_put, 'P', "va"}}));
  ASSERT_EQ(Show(Stored("b")), Show({{b_sd, 'S', ""}, {b_put, 'P', "vb"}}));
  Verify("a", "a's SingleDelete prepared");
  CommitNow(a_sd);
  CommitNow(b_put);
  CompactToBottom();
  ASSERT_EQ(Show(Stored("a")), "");
  ASSERT_EQ(Show(Stored("b")), "");
}

// Operands never fold across an uncommitted operand nor onto an uncommitted base: the
// committed ones fold among themselves, and after the commit the reader gets all of them.
TEST_F(DBSnapshotCheckerTest, MergeOverUncommittedOperands) {
  OpenWithChecker();
  Write('P', "k", "a");
  const SequenceNumber b = Write('M', "k", "b", /*prepared=*/true);
  Write('M', "k", "c");
  Write('M', "k", "d");
  const SequenceNumber base = Write('P', "n", "x", /*prepared=*/true);
  Write('M', "n", "y");
  CompactToBottom();
  Verify("k", "b prepared");
  Verify("n", "base prepared");
  ASSERT_EQ(ModelRead(Stored("k"), *model_, kMaxSequenceNumber), "a,c,d");
  ASSERT_EQ(ModelRead(Stored("n"), *model_, kMaxSequenceNumber), "y");
  CommitNow(b);
  CommitNow(base);
  Verify("k", "b committed");
  Verify("n", "base committed");
  ASSERT_EQ(ModelRead(Stored("k"), *model_, kMaxSequenceNumber), "a,b,c,d");
  ASSERT_EQ(ModelRead(Stored("n"), *model_, kMaxSequenceNumber), "x,y");
  CompactToBottom();
  ASSERT_EQ(Stored("k").size(), 1u);  // all committed now: one Put
  Verify("k", "compacted after the commit");
}

// A snapshot released while the job runs (the checker answers kSnapshotReleased) says
// nothing about an entry: it is skipped, not taken to see it. Here s1 is released and s2,
// which sees only the older Put, is live: the older Put must stay for s2.
TEST_F(DBSnapshotCheckerTest, SnapshotReleasedDuringTheJob) {
  OpenWithChecker();
  const SequenceNumber older = Write('P', "k", "old");
  const SequenceNumber newer = Write('P', "k", "new", /*prepared=*/true);
  const Snapshot* s1 = TakeSnapshot();
  ASSERT_OK(Put(kTick, ""));
  TakeSnapshot();  // s2
  CommitNow(newer);
  ReleaseInModel(s1);
  CompactToBottom();
  ASSERT_EQ(Show(Stored("k")), Show({{newer, 'P', "new"}, {older, 'P', "old"}}));
  Verify("k", "s1 released");
}

// Commits out of sequence order: a Delete committed before an older Put of the same key.
// The Delete is seen by the earliest snapshot and dropped at the bottom; the Put, seen
// only by a later snapshot that also sees the Delete, must go with it.
TEST_F(DBSnapshotCheckerTest, DroppedTombstoneTakesOlderEntryCommittedLater) {
  OpenWithChecker();
  const SequenceNumber put = Write('P', "k", "v", /*prepared=*/true);
  Write('D', "k");
  TakeSnapshot();
  CommitNow(put);
  TakeSnapshot();
  CompactToBottom();
  Verify("k", "after the compaction");
  ASSERT_EQ(Show(Stored("k")), "");
}

// Without a lock on the key, a Put may be prepared under a Delete that commits first.
// At the bottom the Delete would be dropped as obsolete, but the Put is kept uncommitted
// and may commit later: the Delete stays to hide it (and so does a SingleDelete that
// cancelled its Put above another uncommitted Put).
TEST_F(DBSnapshotCheckerTest, TombstoneStaysOverUncommittedEntry) {
  OpenWithChecker();
  const SequenceNumber put = Write('P', "k", "v", /*prepared=*/true);
  const SequenceNumber del = Write('D', "k");
  const SequenceNumber put2 = Write('P', "s", "old", /*prepared=*/true);
  Write('P', "s", "new");
  const SequenceNumber sd = Write('S', "s");
  CompactToBottom();
  ASSERT_EQ(Show(Stored("k")), Show({{del, 'D', ""}, {put, 'P', "v"}}));
  ASSERT_EQ(Show(Stored("s")), Show({{sd, 'S', ""}, {put2, 'P', "old"}}));
  CommitNow(put);
  CommitNow(put2);
  Verify("k", "after the commit");
  Verify("s", "after the commit");
}

// A WritePrepared DB whose checker is not installed yet keeps everything, in its flushes
// and compactions and in the flush of WAL recovery, where the replayed memtable may hold
// prepared data that no commit has resolved: a Delete replayed there must not take the Put
// under it. Once the checker says all is committed, both go.
TEST_F(DBSnapshotCheckerTest, WritePreparedDbKeepsAllUntilItsCheckerComes) {
  options_.allow_2pc = true;
  OpenWritePrepared();
  ASSERT_OK(Put("k", "v1"));
  ASSERT_OK(Delete("k"));
  ASSERT_OK(Flush());
  ASSERT_EQ(Stored("k").size(), 2u);
  ASSERT_OK(Put("r", "v1"));
  ASSERT_OK(Delete("r"));
  const std::string before = impl()->TEST_KeyVersions("r");
  OpenWritePrepared();  // the WAL holds both: recovery flushes them
  ASSERT_EQ(Stored("r").size(), 2u) << "before the reopen: " << before;
  CompactToBottom();
  ASSERT_EQ(Stored("k").size(), 2u);
  ASSERT_EQ(Stored("r").size(), 2u);
  impl()->SetSnapshotChecker(model_);
  CompactToBottom();
  ASSERT_EQ(Show(Stored("k")), "");
  ASSERT_EQ(Show(Stored("r")), "");
}

// RocksDB 4883: the compaction starts with no snapshot while a Delete is prepared; while
// it runs, a snapshot is taken and then the Delete commits. The Put under the Delete is
// what that snapshot reads, so it must survive, though the Delete is committed by the time
// the compaction reaches the key.
TEST_F(DBSnapshotCheckerTest, CommitDuringCompactionWithSnapshotTakenAfterItStarted) {
  OpenWithChecker();
  const SequenceNumber put = Write('P', "foo", "bar");
  const SequenceNumber del = Write('D', "foo", "", /*prepared=*/true);
  CompactToBottom();
  bool fired = false;
  model_->OnNextCheck([&] {
    fired = true;
    TakeSnapshot();
    CommitNow(del);
  });
  RewriteBottom();
  ASSERT_TRUE(fired);
  ASSERT_OK(Flush());  // the commit's write
  ASSERT_EQ(Show(Stored("foo")), Show({{del, 'D', ""}, {put, 'P', "bar"}}));
  Verify("foo", "after the compaction");
}

// Two prepared Puts of a key commit while the compaction runs, the older first, with a
// snapshot taken between the commits: that snapshot reads the older Put, so neither may
// hide the other, although both are committed when the compaction reaches the key.
TEST_F(DBSnapshotCheckerTest, TwoCommitsDuringCompactionAroundASnapshot) {
  OpenWithChecker();
  const SequenceNumber older = Write('P', "k", "old", /*prepared=*/true);
  const SequenceNumber newer = Write('P', "k", "new", /*prepared=*/true);
  CompactToBottom();
  bool fired = false;
  model_->OnNextCheck([&] {
    fired = true;
    CommitNow(older);
    TakeSnapshot();
    CommitNow(newer);
  });
  RewriteBottom();
  ASSERT_TRUE(fired);
  ASSERT_OK(Flush());  // the commits' writes
  ASSERT_EQ(Show(Stored("k")), Show({{newer, 'P', "new"}, {older, 'P', "old"}}));
  Verify("k", "after the compaction");
}

// The same for a flush: the flush's own snapshot decides what is committed.
TEST_F(DBSnapshotCheckerTest, CommitDuringFlushWithSnapshotTakenAfterItStarted) {
  OpenWithChecker();
  const SequenceNumber put = Write('P', "foo", "bar");
  const SequenceNumber del = Write('D', "foo", "", /*prepared=*/true);
  bool fired = false;
  model_->OnNextCheck([&] {
    fired = true;
    TakeSnapshot();
    CommitNow(del);
  });
  ASSERT_OK(Flush());  // the hook's write lands in the new memtable
  ASSERT_TRUE(fired);
  ASSERT_OK(Flush());
  ASSERT_EQ(Show(Stored("foo")), Show({{del, 'D', ""}, {put, 'P', "bar"}}));
  Verify("foo", "after the flush");
}

// With every entry committed at its own sequence the checker changes nothing: the same
// writes and snapshots keep exactly the entries a DB without a checker keeps.
TEST_F(DBSnapshotCheckerTest, InOrderCommitsKeepWhatNoCheckerKeeps) {
  const uint64_t seed = TestSeed();
  std::map<std::string, std::string> kept[2];
  for (int with = 0; with < 2; with++) {
    Destroy();
    written_.clear();
    OpenWithChecker(with == 1);
    Random rnd(static_cast<uint32_t>(seed));
    for (int i = 0; i < 1000; i++) {
      const std::string key = "k" + std::to_string(rnd.Uniform(5));
      const uint32_t op = rnd.Uniform(10);
      Write(op < 5 ? 'P' : op < 7 ? 'D' : 'M', key, std::to_string(i));
      if (rnd.OneIn(30)) TakeSnapshot();
      if (rnd.OneIn(40) && !snapshots_.empty())
        DropSnapshot(snapshots_[rnd.Uniform(static_cast<int>(snapshots_.size()))]);
      if (rnd.OneIn(60)) ASSERT_OK(Flush());
      if (rnd.OneIn(150)) CompactToBottom();
    }
    CompactToBottom();
    for (int k = 0; k < 5; k++) {
      const std::string key = "k" + std::to_string(k);
      kept[with][key] = Show(Stored(key));
      Verify(key, with ? "with a checker" : "without");
    }
    for (const Snapshot* s : snapshots_) db_->ReleaseSnapshot(s);
    snapshots_.clear();
    Close();
  }
  ASSERT_EQ(kept[0], kept[1]);
}

// RocksDB 6113 with unordered_write: a Flush while a writer's memtable insert is still
// pending waits for it, so the write is in the flushed file, not lost with the WAL the
// flush retires; it reads back after reopening.
TEST_F(DBSnapshotCheckerTest, FlushWaitsForPendingUnorderedInsert) {
  options_.unordered_write = true;
  OpenWithChecker();
  std::atomic<bool> in_hook{false};
  std::atomic<bool> release{false};
  std::atomic<bool> hold{false};
  impl()->TEST_SetBeforeMemtableInsert([&] {
    if (!hold.exchange(false)) return;  // hold one insert only
    in_hook = true;
    while (!release.load()) std::this_thread::yield();
  });
  // The memtable holds a write, so the Flush switches it (and retires its WAL).
  ASSERT_OK(Put("before", "v"));
  hold = true;
  std::atomic<bool> put_done{false};
  std::thread writer([&] {
    EXPECT_OK(db_->Put(WriteOptions(), "pending", "v"));
    put_done = true;
  });
  while (!in_hook.load()) std::this_thread::yield();
  std::atomic<bool> flushed{false};
  std::thread flusher([&] {
    EXPECT_OK(db_->Flush(FlushOptions()));
    flushed = true;
  });
  // The flush cannot finish while the insert is held.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(flushed.load());
  release = true;
  writer.join();
  flusher.join();
  ASSERT_TRUE(put_done.load());
  const std::string versions = impl()->TEST_KeyVersions("pending");
  ASSERT_NE(versions.find("L0"), std::string::npos) << versions;
  Reopen();
  ASSERT_EQ(Get("pending"), "v");
  ASSERT_EQ(Get("before"), "v");
}

// Random writes, prepares, commits, rollbacks, snapshots, flushes and compactions against
// the model: after every flush and compaction, every live snapshot and the latest state
// read what they read from everything written, and uncommitted entries are kept unchanged.
TEST_F(DBSnapshotCheckerTest, RandomAgainstModel) {
  const uint64_t seed = TestSeed();
  Random rnd(static_cast<uint32_t>(seed));
  OpenWithChecker();
  const int kKeys = 4;
  std::vector<SequenceNumber> pending;  // prepared, not yet committed or rolled back
  auto verify_all = [&](const std::string& when) {
    for (int k = 0; k < kKeys; k++) {
      Verify("k" + std::to_string(k), when);
      if (HasFatalFailure()) return;
    }
  };
  for (int step = 0; step < 1500 && !HasFatalFailure(); step++) {
    const uint32_t what = rnd.Uniform(100);
    const std::string key = "k" + std::to_string(rnd.Uniform(kKeys));
    if (what < 45) {
      const uint32_t op = rnd.Uniform(10);
      const bool prepared = rnd.OneIn(3);
      const SequenceNumber seq = Write(op < 5   ? 'P'
                                       : op < 7 ? 'D'
                                                : 'M',
                                       key, "v" + std::to_string(step), prepared);
      if (prepared) pending.push_back(seq);
    } else if (what < 65 && !pending.empty()) {
      const size_t i = rnd.Uniform(static_cast<int>(pending.size()));
      if (!rnd.OneIn(5)) CommitNow(pending[i]);  // else a rollback: it never commits
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (what < 73) {
      TakeSnapshot();
    } else if (what < 80 && !snapshots_.empty()) {
      DropSnapshot(snapshots_[rnd.Uniform(static_cast<int>(snapshots_.size()))]);
    } else if (what < 83 && !snapshots_.empty()) {
      ReleaseInModel(snapshots_[rnd.Uniform(static_cast<int>(snapshots_.size()))]);
    } else if (what < 90) {
      ASSERT_OK(Flush());
      verify_all("flush at step " + std::to_string(step));
    } else if (what < 93) {
      CompactToBottom();
      verify_all("compaction at step " + std::to_string(step));
    }
  }
  CompactToBottom();
  verify_all("the end");
}

}  // namespace
}  // namespace shale
