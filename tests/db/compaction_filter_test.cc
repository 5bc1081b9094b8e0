// CompactionFilter and CompactionFilterFactory through the whole DB: each decision, what is
// offered (the newest Put of a key, operands newer than the latest snapshot), snapshots,
// a factory's context, per-family filters, flushes only where the factory asks, decisions
// shale cannot honour, and a filter that keeps everything leaving the DB as it was.
#include "shale/compaction_filter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "shale/db.h"
#include "shale/merge_operator.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/random.h"

namespace shale {
namespace {

using Decision = CompactionFilter::Decision;

// Decides by the key's first two letters: "rm" remove, "pg" purge, "ch" change the value
// (appends '!'), "sk" remove and skip to "sl", "io" kIOError; anything else is kept.
// Records every key (and operand) offered.
class PrefixFilter : public CompactionFilter {
 public:
  Decision FilterV2(int /*level*/, const Slice& key, ValueType type, const Slice& value,
                    std::string* new_value, std::string* skip_until) const override {
    {
      std::lock_guard<std::mutex> l(mu_);
      offered_.push_back((type == kMergeOperand ? "op:" : "") + key.ToString() + "=" +
                         value.ToString());
    }
    const std::string p = key.ToString().substr(0, 2);
    if (p == "rm") return Decision::kRemove;
    if (p == "pg") return Decision::kPurge;
    if (p == "io") return Decision::kIOError;
    if (p == "ch") {
      *new_value = value.ToString() + "!";
      return Decision::kChangeValue;
    }
    if (p == "sk") {
      *skip_until = "sl";
      return Decision::kRemoveAndSkipUntil;
    }
    return Decision::kKeep;
  }
  const char* Name() const override { return "PrefixFilter"; }

  std::vector<std::string> offered() const {
    std::lock_guard<std::mutex> l(mu_);
    return offered_;
  }

 private:
  mutable std::mutex mu_;
  mutable std::vector<std::string> offered_;
};

// Keeps everything, counting what it saw.
class KeepAll : public CompactionFilter {
 public:
  bool Filter(int, const Slice&, const Slice&, std::string*, bool*) const override {
    calls_++;
    return false;
  }
  const char* Name() const override { return "KeepAll"; }
  mutable std::atomic<int> calls_{0};
};

// Removes every value (and, through FilterMergeOperand, the operand "100"). Records the
// operands offered as "key:number".
class RemoveAll : public CompactionFilter {
 public:
  bool Filter(int, const Slice&, const Slice&, std::string*, bool*) const override { return true; }
  bool FilterMergeOperand(int, const Slice& key, const Slice& operand) const override {
    const bool fixed = operand.size() == 8;
    {
      std::lock_guard<std::mutex> l(mu_);
      operands_.insert(key.ToString() + ":" +
                       (fixed ? std::to_string(DecodeFixed64(operand.data())) : "?"));
    }
    return fixed && DecodeFixed64(operand.data()) == 100;
  }
  const char* Name() const override { return "RemoveAll"; }

  std::multiset<std::string> TakeOperands() const {
    std::lock_guard<std::mutex> l(mu_);
    return std::exchange(operands_, {});
  }

 private:
  mutable std::mutex mu_;
  mutable std::multiset<std::string> operands_;
};

class SnapshotAware : public KeepAll {
 public:
  bool IgnoreSnapshots() const override { return false; }
};

// Records the contexts it was asked for; makes PrefixFilters for compactions and for the
// other reasons it is given.
class RecordingFactory : public CompactionFilterFactory {
 public:
  explicit RecordingFactory(std::set<TableFileCreationReason> also = {}) : also_(std::move(also)) {}
  bool ShouldFilterTableFileCreation(TableFileCreationReason reason) const override {
    return reason == TableFileCreationReason::kCompaction || also_.count(reason) > 0;
  }
  std::unique_ptr<CompactionFilter> CreateCompactionFilter(
      const CompactionFilter::Context& context) override {
    std::lock_guard<std::mutex> l(mu_);
    contexts_.push_back(context);
    return std::make_unique<PrefixFilter>();
  }
  const char* Name() const override { return "RecordingFactory"; }
  std::vector<CompactionFilter::Context> contexts() {
    std::lock_guard<std::mutex> l(mu_);
    return contexts_;
  }

 private:
  const std::set<TableFileCreationReason> also_;
  std::mutex mu_;
  std::vector<CompactionFilter::Context> contexts_;
};

// Adds fixed 64-bit operands.
class Add64 : public AssociativeMergeOperator {
 public:
  bool Merge(const Slice&, const Slice* existing, const Slice& value, std::string* out,
             Logger*) const override {
    if (value.size() != 8 || (existing != nullptr && existing->size() != 8)) return false;
    const uint64_t base = existing != nullptr ? DecodeFixed64(existing->data()) : 0;
    PutFixed64(out, base + DecodeFixed64(value.data()));
    return true;
  }
  const char* Name() const override { return "Add64"; }
};

const std::set<TableFileCreationReason> kOnFlush = {TableFileCreationReason::kFlush};

std::string U64(uint64_t v) {
  std::string s;
  PutFixed64(&s, v);
  return s;
}

class CompactionFilterTest : public DBTestBase {
 protected:
  CompactionFilterTest() : DBTestBase("compaction_filter") {
    options_.disable_auto_compactions = true;
  }
  ~CompactionFilterTest() override { Close(); }  // the filters below outlive the DB

  // Compacts everything down, the bottommost level included.
  Status CompactForced(ColumnFamilyHandle* cf = nullptr) {
    CompactRangeOptions o;
    o.bottommost_level_compaction = BottommostLevelCompaction::kForce;
    return db_->CompactRange(o, cf != nullptr ? cf : db_->DefaultColumnFamily(), nullptr, nullptr);
  }

  PrefixFilter prefix_;
  KeepAll keep_;
  RemoveAll remove_;
  SnapshotAware snapshot_aware_;
};

TEST_F(CompactionFilterTest, EachDecision) {
  options_.compaction_filter = &prefix_;
  Open();
  for (const char* k : {"aa", "ch1", "io", "pg1", "rm1", "sk1", "sk2", "sk3", "sl", "zz"}) {
    ASSERT_OK(Put(k, std::string("v") + k));
  }
  ASSERT_OK(db_->Delete(WriteOptions(), "io"));  // a deletion is never offered
  ASSERT_OK(Flush());
  ASSERT_EQ(Contents(),
            "aa=vaa,ch1=vch1,pg1=vpg1,rm1=vrm1,sk1=vsk1,sk2=vsk2,sk3=vsk3,sl=vsl,zz=vzz,");
  ASSERT_TRUE(prefix_.offered().empty());  // flush offers nothing without a factory asking
  ASSERT_OK(CompactForced());
  EXPECT_EQ(Contents(), "aa=vaa,ch1=vch1!,sl=vsl,zz=vzz,");
  // sk2 and sk3 were skipped unread.
  EXPECT_EQ(prefix_.offered(),
            (std::vector<std::string>{"aa=vaa", "ch1=vch1", "pg1=vpg1", "rm1=vrm1", "sk1=vsk1",
                                      "sl=vsl", "zz=vzz"}));
  Reopen();
  EXPECT_EQ(Contents(), "aa=vaa,ch1=vch1!,sl=vsl,zz=vzz,");
}

TEST_F(CompactionFilterTest, RemovedValueStaysHiddenOverOlderLevels) {
  Open();
  ASSERT_OK(Put("rm", "old"));
  ASSERT_OK(Put("sk", "old"));
  ASSERT_OK(Flush());
  // No filter yet: "old" moves to L2.
  CompactRangeOptions down;
  down.change_level = true;
  down.target_level = 2;
  ASSERT_OK(db_->CompactRange(down, nullptr, nullptr));
  ASSERT_EQ(FilesPerLevel(), "0,0,1");
  Close();
  // A flush whose filter judges the new values writes its outcome above "old" (a
  // CompactRange would take the old file in too, down to the bottom; an automatic L0 to L1
  // move of one file is trivial and offers nothing, as RocksDB's).
  options_.compaction_filter_factory = std::make_shared<RecordingFactory>(kOnFlush);
  Open();
  ASSERT_OK(Put("rm", "new"));
  ASSERT_OK(Put("sk", "new"));
  ASSERT_OK(Flush());
  ASSERT_EQ(FilesPerLevel(), "1,0,1");
  // kRemove leaves a Delete that hides "old"; kRemoveAndSkipUntil leaves nothing, so the
  // older value below shows again (RocksDB's documented behaviour).
  EXPECT_EQ(Get("rm"), "NOT_FOUND");
  EXPECT_EQ(Get("sk"), "old");
}

TEST_F(CompactionFilterTest, KeepingEverythingChangesNothing) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Random rnd(seed);
  Open();
  std::vector<std::string> ops;
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 300; i++) {
      const std::string k = "k" + std::to_string(rnd.Uniform(200));
      if (rnd.Uniform(5) == 0) {
        ASSERT_OK(db_->Delete(WriteOptions(), k));
      } else {
        ASSERT_OK(Put(k, "v" + std::to_string(rnd.Next())));
      }
    }
    ASSERT_OK(Flush());
  }
  const std::string before = Contents();
  const uint64_t entries_before = IntProperty("rocksdb.estimate-num-keys");
  Close();
  // The same DB compacted without a filter and, in a copy of the writes, with one.
  options_.compaction_filter = &keep_;
  Open();
  ASSERT_OK(CompactForced());
  EXPECT_GT(keep_.calls_.load(), 0);
  EXPECT_EQ(Contents(), before);
  const std::string with_filter = FilesPerLevel();
  EXPECT_LE(IntProperty("rocksdb.estimate-num-keys"), entries_before);
  Reopen();
  EXPECT_EQ(Contents(), before);
  EXPECT_EQ(FilesPerLevel(), with_filter);
}

TEST_F(CompactionFilterTest, SnapshotsKeepOlderVersions) {
  options_.compaction_filter = &remove_;
  Open();
  ASSERT_OK(Put("a", "v1"));
  const Snapshot* s1 = db_->GetSnapshot();
  ASSERT_OK(Put("a", "v2"));
  ASSERT_OK(Put("b", "w1"));
  const Snapshot* s2 = db_->GetSnapshot();
  ASSERT_OK(Flush());
  ASSERT_OK(CompactForced());
  // The newest value of each key is offered whatever snapshot sees it (IgnoreSnapshots):
  // it becomes a Delete. Older versions are never offered: s1 still reads v1.
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  EXPECT_EQ(Get("b"), "NOT_FOUND");
  EXPECT_EQ(Get("a", s1), "v1");
  EXPECT_EQ(Get("b", s1), "NOT_FOUND");
  EXPECT_EQ(Get("a", s2), "NOT_FOUND");
  db_->ReleaseSnapshot(s1);
  db_->ReleaseSnapshot(s2);
  ASSERT_OK(CompactForced());
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  EXPECT_EQ(IntProperty("rocksdb.estimate-num-keys"), 0u);
}

TEST_F(CompactionFilterTest, IgnoreSnapshotsFalseIsNotSupported) {
  options_.compaction_filter = &snapshot_aware_;
  Open();
  ASSERT_OK(Put("a", "1"));
  ASSERT_OK(Flush());
  EXPECT_TRUE(CompactForced().IsNotSupported());
  EXPECT_EQ(snapshot_aware_.calls_.load(), 0);
  EXPECT_EQ(Get("a"), "1");
  // The failed compaction stopped background work (Close reports it), as RocksDB's; nothing
  // is lost.
  EXPECT_FALSE(TryClose().ok());
  options_.compaction_filter = nullptr;
  Open();
  EXPECT_EQ(Get("a"), "1");
}

TEST_F(CompactionFilterTest, UnsupportedDecisionFailsTheCompaction) {
  options_.compaction_filter = &prefix_;
  Open();
  ASSERT_OK(Put("a", "1"));
  ASSERT_OK(Put("io", "2"));
  ASSERT_OK(Flush());
  EXPECT_TRUE(CompactForced().IsNotSupported());
  EXPECT_EQ(Contents(), "a=1,io=2,");
  EXPECT_EQ(FilesPerLevel(), "1");
  EXPECT_FALSE(TryClose().ok());
  options_.compaction_filter = nullptr;
  Open();
  EXPECT_EQ(Contents(), "a=1,io=2,");
}

TEST_F(CompactionFilterTest, MergeOperandsNewerThanTheLatestSnapshot) {
  options_.merge_operator = std::make_shared<Add64>();
  options_.compaction_filter = &remove_;
  Open();
  // A snapshot sees this 100: it is kept.
  ASSERT_OK(Merge("n", U64(100)));
  ASSERT_OK(Flush());
  const Snapshot* snap = db_->GetSnapshot();
  // Each operand in a file of its own: a flush (no filter there) would fold them first.
  // Operands only, newer than the snapshot: no value is offered, operand 100 is dropped.
  for (uint64_t v : {1, 100, 2}) {
    ASSERT_OK(Merge("m", U64(v)));
    ASSERT_OK(Flush());
  }
  for (uint64_t v : {100, 5}) {
    ASSERT_OK(Merge("n", U64(v)));
    ASSERT_OK(Flush());
  }
  ASSERT_OK(CompactForced());
  // The operand the snapshot sees was never offered (the first n:100).
  EXPECT_EQ(remove_.TakeOperands(),
            (std::multiset<std::string>{"m:1", "m:100", "m:2", "n:100", "n:5"}));
  EXPECT_EQ(Get("m"), U64(3));
  EXPECT_EQ(Get("n"), U64(105));
  EXPECT_EQ(Get("n", snap), U64(100));
  db_->ReleaseSnapshot(snap);
  // Every operand dropped: the key is gone (no base beneath).
  ASSERT_OK(Merge("o", U64(100)));
  ASSERT_OK(Flush());
  ASSERT_OK(CompactForced());
  EXPECT_EQ(Get("o"), "NOT_FOUND");
}

TEST_F(CompactionFilterTest, FactoryContextAndFlush) {
  auto factory = std::make_shared<RecordingFactory>();
  options_.compaction_filter_factory = factory;
  Open();
  ASSERT_OK(Put("ch", "x"));
  ASSERT_OK(Flush());
  EXPECT_EQ(Get("ch"), "x");  // no filter in flush by default
  EXPECT_TRUE(factory->contexts().empty());
  ASSERT_OK(CompactForced());
  EXPECT_EQ(Get("ch"), "x!");
  std::vector<CompactionFilter::Context> cs = factory->contexts();
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_TRUE(cs[0].is_manual_compaction);
  EXPECT_TRUE(cs[0].is_full_compaction);
  EXPECT_EQ(cs[0].column_family_id, 0u);
  EXPECT_EQ(cs[0].input_start_level, 0);
  EXPECT_EQ(cs[0].reason, TableFileCreationReason::kCompaction);

  // Two files, one compacted: not a full compaction.
  ASSERT_OK(Put("zz", "1"));
  ASSERT_OK(Flush());
  CompactRangeOptions o;
  o.bottommost_level_compaction = BottommostLevelCompaction::kSkip;
  ASSERT_OK(db_->CompactRange(o, nullptr, nullptr));
  cs = factory->contexts();
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_FALSE(cs[1].is_full_compaction);
  Close();

  // A factory that asks for flushes: the flush's filter changes the value.
  auto on_flush = std::make_shared<RecordingFactory>(kOnFlush);
  options_.compaction_filter_factory = on_flush;
  Open();
  ASSERT_OK(Put("ch2", "y"));
  ASSERT_OK(Flush());
  EXPECT_EQ(Get("ch2"), "y!");
  cs = on_flush->contexts();
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].reason, TableFileCreationReason::kFlush);
  EXPECT_FALSE(cs[0].is_manual_compaction);
  EXPECT_FALSE(cs[0].is_full_compaction);
}

// A memtable replayed from the WAL at open is written for TableFileCreationReason::kRecovery,
// as RocksDB's: the factory is asked about that reason, not kFlush.
TEST_F(CompactionFilterTest, RecoveryAsksForRecovery) {
  auto on_flush = std::make_shared<RecordingFactory>(kOnFlush);
  options_.compaction_filter_factory = on_flush;
  Open();
  ASSERT_OK(Put("ch1", "x"));
  Reopen();  // the WAL is replayed and its memtable flushed
  EXPECT_EQ(Get("ch1"), "x");
  EXPECT_TRUE(on_flush->contexts().empty());
  Close();

  auto on_recovery = std::make_shared<RecordingFactory>(
      std::set<TableFileCreationReason>{TableFileCreationReason::kRecovery});
  options_.compaction_filter_factory = on_recovery;
  Open();
  ASSERT_OK(Put("ch2", "y"));
  Reopen();
  EXPECT_EQ(Get("ch1"), "x");
  EXPECT_EQ(Get("ch2"), "y!");
  std::vector<CompactionFilter::Context> cs = on_recovery->contexts();
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].reason, TableFileCreationReason::kRecovery);
  EXPECT_FALSE(cs[0].is_manual_compaction);
  EXPECT_FALSE(cs[0].is_full_compaction);
  // An ordinary flush is not one it asked for.
  ASSERT_OK(Put("ch3", "z"));
  ASSERT_OK(Flush());
  EXPECT_EQ(Get("ch3"), "z");
  EXPECT_EQ(on_recovery->contexts().size(), 1u);
}

// CompactRange's default (kIfHaveCompactionFilter) rewrites the bottommost level when the
// family has a filter or a factory, and only then: a merge operator alone does not count.
TEST_F(CompactionFilterTest, BottommostLevelIfHaveCompactionFilter) {
  options_.compaction_filter = &prefix_;
  Open();
  ASSERT_OK(Put("ch", "x"));
  ASSERT_OK(Flush());
  ASSERT_OK(CompactAll());  // L0 to L1, which is then the bottommost level
  ASSERT_EQ(FilesPerLevel(), "0,1");
  EXPECT_EQ(Get("ch"), "x!");
  ASSERT_OK(CompactAll());  // L1 alone, rewritten through the filter
  EXPECT_EQ(Get("ch"), "x!!");
  Close();

  auto factory = std::make_shared<RecordingFactory>();
  options_.compaction_filter = nullptr;
  options_.compaction_filter_factory = factory;
  Open();
  ASSERT_OK(CompactAll());
  EXPECT_EQ(Get("ch"), "x!!!");
  EXPECT_EQ(factory->contexts().size(), 1u);
  Close();

  options_.compaction_filter_factory = nullptr;
  options_.merge_operator = std::make_shared<Add64>();
  Open();
  std::vector<std::string> before;
  uint64_t manifest_size = 0;
  ASSERT_OK(db_->GetLiveFiles(before, &manifest_size, /*flush_memtable=*/false));
  ASSERT_OK(CompactAll());
  std::vector<std::string> after;
  ASSERT_OK(db_->GetLiveFiles(after, &manifest_size, /*flush_memtable=*/false));
  EXPECT_EQ(after, before);  // the L1 file was left as it was
  EXPECT_EQ(FilesPerLevel(), "0,1");
}

// A factory on a family other than the default is told that family's id.
TEST_F(CompactionFilterTest, FactoryContextNamesTheFamily) {
  Open();
  auto factory = std::make_shared<RecordingFactory>(kOnFlush);
  ColumnFamilyOptions cf_opts = options_;
  cf_opts.compaction_filter_factory = factory;
  ColumnFamilyHandle* cf = nullptr;
  ASSERT_OK(db_->CreateColumnFamily(cf_opts, "second", &cf));
  ColumnFamilyHandle* cf2 = nullptr;
  ASSERT_OK(db_->CreateColumnFamily(cf_opts, "third", &cf2));
  std::unique_ptr<ColumnFamilyHandle> owned(cf);
  std::unique_ptr<ColumnFamilyHandle> owned2(cf2);
  ASSERT_NE(cf2->GetID(), 0u);
  ASSERT_OK(db_->Put(WriteOptions(), cf2, "ch", "x"));
  ASSERT_OK(db_->Flush(FlushOptions(), cf2));
  ASSERT_OK(CompactForced(cf2));
  std::string v;
  ASSERT_OK(db_->Get(ReadOptions(), cf2, "ch", &v));
  EXPECT_EQ(v, "x!!");
  std::vector<CompactionFilter::Context> cs = factory->contexts();
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0].reason, TableFileCreationReason::kFlush);
  EXPECT_EQ(cs[1].reason, TableFileCreationReason::kCompaction);
  for (const auto& c : cs) EXPECT_EQ(c.column_family_id, cf2->GetID());
  ASSERT_OK(db_->DestroyColumnFamilyHandle(owned.release()));
  ASSERT_OK(db_->DestroyColumnFamilyHandle(owned2.release()));
}

TEST_F(CompactionFilterTest, SharedFilterWinsOverFactory) {
  auto factory = std::make_shared<RecordingFactory>();
  options_.compaction_filter_factory = factory;
  options_.compaction_filter = &keep_;
  Open();
  ASSERT_OK(Put("ch", "x"));
  ASSERT_OK(Flush());
  ASSERT_OK(CompactForced());
  EXPECT_EQ(Get("ch"), "x");
  EXPECT_TRUE(factory->contexts().empty());
  EXPECT_EQ(keep_.calls_.load(), 1);
}

TEST_F(CompactionFilterTest, PerFamilyFilters) {
  Open();
  ColumnFamilyOptions cf_opts = options_;
  cf_opts.compaction_filter = &remove_;
  ColumnFamilyHandle* cf = nullptr;
  ASSERT_OK(db_->CreateColumnFamily(cf_opts, "removing", &cf));
  std::unique_ptr<ColumnFamilyHandle> owned(cf);
  ASSERT_OK(db_->Put(WriteOptions(), "a", "default"));
  ASSERT_OK(db_->Put(WriteOptions(), cf, "a", "family"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(db_->Flush(FlushOptions(), cf));
  ASSERT_OK(CompactForced());
  ASSERT_OK(CompactForced(cf));
  std::string v;
  EXPECT_OK(db_->Get(ReadOptions(), "a", &v));
  EXPECT_EQ(v, "default");
  EXPECT_TRUE(db_->Get(ReadOptions(), cf, "a", &v).IsNotFound());
  ASSERT_OK(db_->DestroyColumnFamilyHandle(owned.release()));
}

TEST_F(CompactionFilterTest, WrittenToTheOptionsFile) {
  auto factory = std::make_shared<RecordingFactory>();
  options_.compaction_filter = &prefix_;
  options_.compaction_filter_factory = factory;
  Open();
  std::vector<std::string> names;
  ASSERT_OK(options_.env->GetChildren(dbname_, &names));
  std::string text;
  for (size_t i = 0; i < names.size(); i++) {
    if (names[i].rfind("OPTIONS-", 0) != 0) continue;
    ASSERT_OK(ReadFileToString(options_.env, dbname_ + "/" + names[i], &text));
  }
  EXPECT_NE(text.find("compaction_filter=PrefixFilter"), std::string::npos) << text;
  EXPECT_NE(text.find("compaction_filter_factory=RecordingFactory"), std::string::npos);
}

}  // namespace
}  // namespace shale
