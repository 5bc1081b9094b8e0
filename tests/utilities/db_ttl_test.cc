// DBWithTTL with an injected clock: the 4-byte stamp, expiry for Get, MultiGet and
// iterators, compaction dropping expired values, per-family TTLs (Open with descriptors,
// CreateColumnFamilyWithTtl, SetTtl, GetTtl), TTL <= 0 as forever, bad stamps as
// Corruption, a user's filter and factory chained, merges through the TTL operator, and
// readers racing SetTtl and compactions.
#include "shale/utilities/db_ttl.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "shale/compaction_filter.h"
#include "shale/utilities/merge_operators.h"
#include "shale/write_batch.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"
#include "tests/utilities/iterator_walk.h"
#include "util/coding.h"

namespace shale {
namespace {

// Real time plus an offset the test advances: the DB's own timing keeps running.
class ClockEnv : public EnvWrapper {
 public:
  ClockEnv() : EnvWrapper(Env::Default()) {}
  uint64_t NowMicros() override { return target()->NowMicros() + offset_.load(); }
  uint64_t NowNanos() override { return NowMicros() * 1000; }
  void Advance(int64_t seconds) { offset_ += static_cast<uint64_t>(seconds) * 1000000; }
  int64_t Seconds() { return static_cast<int64_t>(NowMicros() / 1000000); }

 private:
  std::atomic<uint64_t> offset_{0};
};

// Changes values of keys starting "ch" (appends '!') and removes keys starting "rm";
// records what it was offered.
class UserFilter : public CompactionFilter {
 public:
  bool Filter(int, const Slice& key, const Slice& value, std::string* new_value,
              bool* value_changed) const override {
    {
      std::lock_guard<std::mutex> l(mu_);
      offered_.insert(key.ToString() + "=" + value.ToString());
    }
    if (key.starts_with("rm")) return true;
    if (key.starts_with("ch")) {
      *new_value = value.ToString() + "!";
      *value_changed = true;
    }
    return false;
  }
  const char* Name() const override { return "UserFilter"; }
  std::set<std::string> offered() const {
    std::lock_guard<std::mutex> l(mu_);
    return offered_;
  }

 private:
  mutable std::mutex mu_;
  mutable std::set<std::string> offered_;
};

class UserFactory : public CompactionFilterFactory {
 public:
  std::unique_ptr<CompactionFilter> CreateCompactionFilter(
      const CompactionFilter::Context&) override {
    made_++;
    return std::make_unique<UserFilter>();
  }
  const char* Name() const override { return "UserFactory"; }
  std::atomic<int> made_{0};
};

class DBTTLTest : public DBTestBase {
 protected:
  DBTTLTest() : DBTestBase("db_ttl") {
    options_.env = &clock_;
    options_.disable_auto_compactions = true;
  }
  ~DBTTLTest() override { CloseTtl(); }

  void OpenTtl(int32_t ttl) {
    DBWithTTL* db = nullptr;
    ASSERT_OK(DBWithTTL::Open(options_, dbname_, &db, ttl));
    ttl_db_.reset(db);
  }
  void CloseTtl() {
    for (ColumnFamilyHandle* h : handles_) ASSERT_OK(ttl_db_->DestroyColumnFamilyHandle(h));
    handles_.clear();
    if (ttl_db_ != nullptr) ASSERT_OK(ttl_db_->Close());
    ttl_db_.reset();
  }
  std::string Read(const std::string& key, ColumnFamilyHandle* cf = nullptr) {
    std::string v;
    Status s =
        ttl_db_->Get(ReadOptions(), cf != nullptr ? cf : ttl_db_->DefaultColumnFamily(), key, &v);
    if (s.IsNotFound()) return "NOT_FOUND";
    return s.ok() ? v : s.ToString();
  }
  // What the base DB holds, stamps included.
  std::string Raw(const std::string& key) { return ReadValue(ttl_db_->GetBaseDB(), key); }
  std::string Scan(bool reverse = false) {
    std::unique_ptr<Iterator> it(ttl_db_->NewIterator(ReadOptions()));
    return Walk(it.get(), reverse);
  }
  Status CompactForced(ColumnFamilyHandle* cf = nullptr) {
    CompactRangeOptions o;
    o.bottommost_level_compaction = BottommostLevelCompaction::kForce;
    return ttl_db_->CompactRange(o, cf != nullptr ? cf : ttl_db_->DefaultColumnFamily(), nullptr,
                                 nullptr);
  }
  static std::string Stamped(const std::string& v, int64_t seconds) {
    std::string out = v;
    PutFixed32(&out, static_cast<uint32_t>(seconds));
    return out;
  }

  ClockEnv clock_;
  std::unique_ptr<DBWithTTL> ttl_db_;
  std::vector<ColumnFamilyHandle*> handles_;
};

TEST_F(DBTTLTest, ValuesCarryTheirWriteTimeAndExpire) {
  OpenTtl(100);
  const WriteOptions wo;
  const int64_t t0 = clock_.Seconds();
  ASSERT_OK(ttl_db_->Put(wo, "a", "1"));
  ASSERT_OK(ttl_db_->Put(wo, "b", "2"));
  // RocksDB's layout: the value, then the time in seconds, 4 bytes little-endian.
  const std::string raw = Raw("a");
  ASSERT_EQ(raw.size(), 5u);
  EXPECT_EQ(raw.substr(0, 1), "1");
  const int64_t stamp = DecodeFixed32(raw.data() + 1);
  EXPECT_GE(stamp, t0);
  EXPECT_LE(stamp, clock_.Seconds());
  EXPECT_EQ(Read("a"), "1");

  clock_.Advance(60);
  ASSERT_OK(ttl_db_->Put(wo, "b", "3"));  // rewritten: a new time
  ASSERT_OK(ttl_db_->Put(wo, "c", "4"));
  EXPECT_EQ(Scan(), "a=1,b=3,c=4,");
  clock_.Advance(50);  // a is 110 s old, b and c 50 s
  EXPECT_EQ(Read("a"), "NOT_FOUND");
  EXPECT_EQ(Read("b"), "3");
  EXPECT_EQ(Scan(), "b=3,c=4,");
  EXPECT_EQ(Scan(/*reverse=*/true), "c=4,b=3,");
  std::unique_ptr<Iterator> it(ttl_db_->NewIterator(ReadOptions()));
  it->Seek("a");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "b");
  it->SeekForPrev("a");
  EXPECT_FALSE(it->Valid());
  EXPECT_OK(it->status());
  it.reset();

  std::vector<std::string> values;
  std::vector<Status> ss = ttl_db_->MultiGet(ReadOptions(), {"a", "b", "zz"}, &values);
  ASSERT_EQ(ss.size(), 3u);
  EXPECT_TRUE(ss[0].IsNotFound());
  EXPECT_OK(ss[1]);
  EXPECT_EQ(values[1], "3");
  EXPECT_TRUE(ss[2].IsNotFound());
  Slice keys[2] = {"a", "c"};
  PinnableSlice pinned[2];
  Status statuses[2];
  ttl_db_->MultiGet(ReadOptions(), ttl_db_->DefaultColumnFamily(), 2, keys, pinned, statuses);
  EXPECT_TRUE(statuses[0].IsNotFound());
  EXPECT_OK(statuses[1]);
  EXPECT_EQ(pinned[1].ToString(), "4");
  for (PinnableSlice& p : pinned) p.Reset();

  // The expired value is still stored until a compaction drops it.
  EXPECT_NE(Raw("a"), "NOT_FOUND");
  ASSERT_OK(ttl_db_->Flush(FlushOptions()));
  ASSERT_OK(CompactForced());
  EXPECT_EQ(Raw("a"), "NOT_FOUND");
  EXPECT_EQ(Read("b"), "3");
  CloseTtl();
  OpenTtl(100);
  EXPECT_EQ(Scan(), "b=3,c=4,");
}

TEST_F(DBTTLTest, NonPositiveTtlIsForever) {
  for (int32_t ttl : {0, -5}) {
    SCOPED_TRACE(ttl);
    OpenTtl(ttl);
    ASSERT_OK(ttl_db_->Put(WriteOptions(), "k", "v"));
    ASSERT_OK(ttl_db_->Flush(FlushOptions()));
    clock_.Advance(100000000);  // three years
    ASSERT_OK(CompactForced());
    EXPECT_EQ(Read("k"), "v");
    EXPECT_EQ(Scan(), "k=v,");
    int32_t got = 1;
    ASSERT_OK(ttl_db_->GetTtl(ttl_db_->DefaultColumnFamily(), &got));
    EXPECT_EQ(got, ttl);
    CloseTtl();
  }
}

TEST_F(DBTTLTest, BadStampsAreCorruption) {
  OpenTtl(100);
  DB* base = ttl_db_->GetBaseDB();
  ASSERT_OK(base->Put(WriteOptions(), "a_short", "ab"));              // too short for a stamp
  ASSERT_OK(base->Put(WriteOptions(), "b_old", Stamped("x", 1000)));  // before the feature
  ASSERT_OK(ttl_db_->Put(WriteOptions(), "ok", "fine"));
  EXPECT_NE(Read("a_short").find("Corruption"), std::string::npos) << Read("a_short");
  EXPECT_NE(Read("b_old").find("Corruption"), std::string::npos) << Read("b_old");
  EXPECT_EQ(Read("ok"), "fine");
  // The iterator stops at the bad value with Corruption; a Seek past it goes on.
  std::unique_ptr<Iterator> it(ttl_db_->NewIterator(ReadOptions()));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
  it->Seek("ok");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "fine");
  EXPECT_OK(it->status());
  it.reset();
  // Compaction keeps them as they are, even long after.
  ASSERT_OK(ttl_db_->Flush(FlushOptions()));
  clock_.Advance(1000);
  ASSERT_OK(CompactForced());
  EXPECT_EQ(Raw("a_short"), "ab");
  EXPECT_EQ(Raw("b_old"), Stamped("x", 1000));
  EXPECT_EQ(Raw("ok"), "NOT_FOUND");
}

TEST_F(DBTTLTest, OpenArguments) {
  DBWithTTL* db = nullptr;
  std::vector<ColumnFamilyHandle*> handles;
  const std::vector<ColumnFamilyDescriptor> families = {
      ColumnFamilyDescriptor(kDefaultColumnFamilyName, options_)};
  EXPECT_TRUE(
      DBWithTTL::Open(options_, dbname_, families, &handles, &db, {1, 2}).IsInvalidArgument());
  EXPECT_EQ(db, nullptr);
  OpenTtl(10);
  int32_t ttl = 0;
  EXPECT_TRUE(ttl_db_->GetTtl(nullptr, &ttl).IsInvalidArgument());
  EXPECT_TRUE(ttl_db_->GetTtl(ttl_db_->DefaultColumnFamily(), nullptr).IsInvalidArgument());
}

// read_only: reads see the stamped values and their expiry; every write is refused.
TEST_F(DBTTLTest, ReadOnly) {
  OpenTtl(100);
  ASSERT_OK(ttl_db_->Put(WriteOptions(), "a", "1"));
  ASSERT_OK(ttl_db_->Flush(FlushOptions()));
  clock_.Advance(60);
  ASSERT_OK(ttl_db_->Put(WriteOptions(), "b", "2"));  // left in the WAL
  ttl_db_.reset();
  DBWithTTL* db = nullptr;
  ASSERT_OK(DBWithTTL::Open(options_, dbname_, &db, 100, /*read_only=*/true));
  std::unique_ptr<DBWithTTL> ro(db);
  std::string v;
  ASSERT_OK(ro->Get(ReadOptions(), "a", &v));
  EXPECT_EQ(v, "1");
  ASSERT_OK(ro->Get(ReadOptions(), "b", &v));
  EXPECT_EQ(v, "2");
  clock_.Advance(50);  // a is 110 s old, b 50 s
  EXPECT_TRUE(ro->Get(ReadOptions(), "a", &v).IsNotFound());
  ASSERT_OK(ro->Get(ReadOptions(), "b", &v));
  Status s = ro->Put(WriteOptions(), "c", "3");
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_TRUE(ro->Delete(WriteOptions(), "b").IsNotSupported());
  EXPECT_TRUE(ro->Flush(FlushOptions()).IsNotSupported());
  EXPECT_TRUE(ro->Get(ReadOptions(), "c", &v).IsNotFound());
}

TEST_F(DBTTLTest, TtlPerFamily) {
  options_.create_if_missing = true;
  options_.create_missing_column_families = true;
  std::vector<ColumnFamilyDescriptor> families = {
      ColumnFamilyDescriptor(kDefaultColumnFamilyName, options_),
      ColumnFamilyDescriptor("short", options_)};
  DBWithTTL* db = nullptr;
  ASSERT_OK(DBWithTTL::Open(options_, dbname_, families, &handles_, &db, {0, 10}));
  ttl_db_.reset(db);
  ColumnFamilyHandle* shortcf = handles_[1];
  ColumnFamilyHandle* longcf = nullptr;
  ASSERT_OK(ttl_db_->CreateColumnFamilyWithTtl(options_, "long", &longcf, 1000));
  handles_.push_back(longcf);
  ColumnFamilyHandle* plain = nullptr;  // CreateColumnFamily: TTL 0
  ASSERT_OK(ttl_db_->CreateColumnFamily(options_, "plain", &plain));
  handles_.push_back(plain);

  // One batch across the families, every kind of record: stamped where it carries a value.
  WriteBatch batch;
  ASSERT_OK(batch.Put(handles_[0], "k", "default"));
  ASSERT_OK(batch.Put(shortcf, "k", "short"));
  ASSERT_OK(batch.Put(longcf, "k", "long"));
  ASSERT_OK(batch.Put(plain, "k", "plain"));
  ASSERT_OK(batch.Put(longcf, "gone", "x"));
  ASSERT_OK(batch.Delete(longcf, "gone"));
  ASSERT_OK(batch.Put(longcf, "single", "x"));
  ASSERT_OK(batch.SingleDelete(longcf, "single"));
  ASSERT_OK(batch.PutLogData("blob"));
  ASSERT_OK(ttl_db_->Write(WriteOptions(), &batch));
  EXPECT_EQ(Read("k", shortcf), "short");
  EXPECT_EQ(Read("gone", longcf), "NOT_FOUND");
  EXPECT_EQ(Read("single", longcf), "NOT_FOUND");
  std::string raw;
  ASSERT_OK(ttl_db_->GetBaseDB()->Get(ReadOptions(), longcf, "k", &raw));
  EXPECT_EQ(raw.size(), 4u + 4u);

  int32_t ttl = 0;
  ASSERT_OK(ttl_db_->GetTtl(shortcf, &ttl));
  EXPECT_EQ(ttl, 10);
  ASSERT_OK(ttl_db_->GetTtl(longcf, &ttl));
  EXPECT_EQ(ttl, 1000);
  ASSERT_OK(ttl_db_->GetTtl(plain, &ttl));
  EXPECT_EQ(ttl, 0);

  clock_.Advance(20);
  EXPECT_EQ(Read("k"), "default");
  EXPECT_EQ(Read("k", shortcf), "NOT_FOUND");
  EXPECT_EQ(Read("k", longcf), "long");
  std::vector<std::string> values;
  std::vector<Status> ss =
      ttl_db_->MultiGet(ReadOptions(), {handles_[0], shortcf, longcf}, {"k", "k", "k"}, &values);
  EXPECT_OK(ss[0]);
  EXPECT_TRUE(ss[1].IsNotFound());
  EXPECT_EQ(values[2], "long");
  std::vector<Iterator*> its;
  ASSERT_OK(ttl_db_->NewIterators(ReadOptions(), {shortcf, longcf}, &its));
  its[0]->SeekToFirst();
  EXPECT_FALSE(its[0]->Valid());
  its[1]->SeekToFirst();
  ASSERT_TRUE(its[1]->Valid());
  EXPECT_EQ(its[1]->value().ToString(), "long");
  for (Iterator* it : its) delete it;

  // SetTtl: reads and compactions from now on. The short family's value comes back when
  // its TTL grows (it was only hidden), then compaction drops what expires under the new one.
  ttl_db_->SetTtl(longcf, 5);
  ttl_db_->SetTtl(shortcf, 100);
  ttl_db_->SetTtl(1);  // the default family
  ASSERT_OK(ttl_db_->GetTtl(longcf, &ttl));
  EXPECT_EQ(ttl, 5);
  EXPECT_EQ(Read("k", longcf), "NOT_FOUND");
  EXPECT_EQ(Read("k", shortcf), "short");
  EXPECT_EQ(Read("k"), "NOT_FOUND");
  for (ColumnFamilyHandle* cf : {handles_[0], shortcf, longcf, plain}) {
    ASSERT_OK(ttl_db_->Flush(FlushOptions(), cf));
    ASSERT_OK(CompactForced(cf));
  }
  ASSERT_OK(ttl_db_->GetBaseDB()->Get(ReadOptions(), shortcf, "k", &raw));
  EXPECT_TRUE(ttl_db_->GetBaseDB()->Get(ReadOptions(), longcf, "k", &raw).IsNotFound());
  EXPECT_EQ(ReadValue(ttl_db_->GetBaseDB(), "k"), "NOT_FOUND");
  EXPECT_EQ(Read("k", plain), "plain");
}

TEST_F(DBTTLTest, UserFilterIsChained) {
  UserFilter user;
  options_.compaction_filter = &user;
  OpenTtl(100);
  const WriteOptions wo;
  ASSERT_OK(ttl_db_->Put(wo, "old", "o"));
  clock_.Advance(60);
  const int64_t t1 = clock_.Seconds();
  ASSERT_OK(ttl_db_->Put(wo, "ch", "c"));
  const std::string ch_stamp = Raw("ch").substr(1);
  ASSERT_OK(ttl_db_->Put(wo, "rm", "r"));
  ASSERT_OK(ttl_db_->Put(wo, "keep", "k"));
  clock_.Advance(50);  // "old" expired
  ASSERT_OK(ttl_db_->Flush(FlushOptions()));
  ASSERT_OK(CompactForced());
  // The user's filter saw values without stamps, and never the expired one.
  EXPECT_EQ(user.offered(), (std::set<std::string>{"ch=c", "keep=k", "rm=r"}));
  EXPECT_EQ(Scan(), "ch=c!,keep=k,");
  // The changed value kept its write time: it expires with its neighbours.
  EXPECT_EQ(Raw("ch"), "c!" + ch_stamp);
  clock_.Advance(t1 + 101 - clock_.Seconds());
  EXPECT_EQ(Scan(), "");
  CloseTtl();
  Destroy();

  // A factory's filters are chained the same way.
  auto factory = std::make_shared<UserFactory>();
  options_.compaction_filter = nullptr;
  options_.compaction_filter_factory = factory;
  OpenTtl(0);
  ASSERT_OK(ttl_db_->Put(wo, "rm2", "x"));
  ASSERT_OK(ttl_db_->Put(wo, "ch2", "y"));
  ASSERT_OK(ttl_db_->Flush(FlushOptions()));
  ASSERT_OK(CompactForced());
  EXPECT_GE(factory->made_.load(), 1);
  EXPECT_EQ(Read("ch2"), "y!");
  EXPECT_EQ(Read("rm2"), "NOT_FOUND");
}

TEST_F(DBTTLTest, MergeThroughTheTtlOperator) {
  options_.merge_operator = MergeOperators::CreateStringAppendOperator();
  OpenTtl(100);
  const WriteOptions wo;
  ASSERT_OK(ttl_db_->Put(wo, "k", "a"));
  ASSERT_OK(ttl_db_->Merge(wo, "k", "b"));
  ASSERT_OK(ttl_db_->Merge(wo, "m", "x"));
  ASSERT_OK(ttl_db_->Merge(wo, "m", "y"));
  EXPECT_EQ(Read("k"), "a,b");
  EXPECT_EQ(Read("m"), "x,y");
  EXPECT_EQ(Scan(), "k=a,b,m=x,y,");
  // Compaction folds them into one value stamped with the time of the merge.
  clock_.Advance(30);
  const int64_t merged_at = clock_.Seconds();
  ASSERT_OK(ttl_db_->Flush(FlushOptions()));
  ASSERT_OK(CompactForced());
  const std::string raw = Raw("m");
  ASSERT_EQ(raw.size(), 3u + 4u);
  EXPECT_EQ(raw.substr(0, 3), "x,y");
  EXPECT_GE(static_cast<int64_t>(DecodeFixed32(raw.data() + 3)), merged_at);
  EXPECT_EQ(Read("m"), "x,y");
  // An operand too short to carry a stamp fails the merge.
  ASSERT_OK(ttl_db_->GetBaseDB()->Merge(wo, "bad", "z"));
  EXPECT_NE(Read("bad").find("Corruption"), std::string::npos) << Read("bad");
}

// Readers and writers while SetTtl changes the TTL and compactions run (for ThreadSanitizer):
// every value read is a value written, never one with its stamp.
TEST_F(DBTTLTest, ConcurrentReadersWritersAndSetTtl) {
  options_.write_buffer_size = 16 << 10;
  options_.disable_auto_compactions = false;
  OpenTtl(1000);
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; i++) {
        const std::string key = "k" + std::to_string((i * 7 + t) % 100);
        if (t % 2 == 0) {
          if (!ttl_db_->Put(WriteOptions(), key, "value" + std::to_string(i)).ok()) bad++;
        } else {
          std::string v;
          Status s = ttl_db_->Get(ReadOptions(), key, &v);
          if (s.ok() ? v.rfind("value", 0) != 0 : !s.IsNotFound()) bad++;
        }
      }
    });
  }
  threads.emplace_back([&] {
    int32_t ttl = 1000;
    while (!stop.load()) {
      ttl = ttl == 1000 ? 2000 : 1000;
      ttl_db_->SetTtl(ttl);
      std::unique_ptr<Iterator> it(ttl_db_->NewIterator(ReadOptions()));
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        if (!it->value().starts_with("value")) bad++;
      }
      if (!it->status().ok()) bad++;
    }
  });
  for (int t = 0; t < 4; t++) threads[t].join();
  ASSERT_OK(CompactForced());
  stop = true;
  threads.back().join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_NE(Scan().find("value"), std::string::npos);
}

}  // namespace
}  // namespace shale
