// Tests for WriteBatch (the public class) and WriteBatchInternal: the serialized format,
// validation of foreign bytes, and applying a batch to a MemTable.
#include "shale/write_batch.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "db/sub_batch.h"
#include "db/wal_replay.h"
#include "db/write_batch_internal.h"
#include "memtable/memtable.h"
#include "shale/comparator.h"
#include "shale/db.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"
#include "util/dbformat.h"
#include "util/random.h"

namespace shale {
namespace {

// Records every callback as text, in order.
class Recorder : public WriteBatch::Handler {
 public:
  std::vector<std::string> seen;
  int stop_after = -1;  // Continue() turns false after this many records

  Status PutCF(uint32_t cf, const Slice& key, const Slice& value) override {
    seen.push_back("Put(" + Cf(cf) + key.ToString() + ", " + value.ToString() + ")");
    return Status::OK();
  }
  Status DeleteCF(uint32_t cf, const Slice& key) override {
    seen.push_back("Delete(" + Cf(cf) + key.ToString() + ")");
    return Status::OK();
  }
  Status SingleDeleteCF(uint32_t cf, const Slice& key) override {
    seen.push_back("SingleDelete(" + Cf(cf) + key.ToString() + ")");
    return Status::OK();
  }
  Status MergeCF(uint32_t cf, const Slice& key, const Slice& value) override {
    seen.push_back("Merge(" + Cf(cf) + key.ToString() + ", " + value.ToString() + ")");
    return Status::OK();
  }
  void LogData(const Slice& blob) override { seen.push_back("LogData(" + blob.ToString() + ")"); }
  bool Continue() override { return stop_after < 0 || static_cast<int>(seen.size()) < stop_after; }

 private:
  static std::string Cf(uint32_t cf) { return cf == 0 ? "" : std::to_string(cf) + ":"; }
};

std::vector<std::string> Records(const WriteBatch& b) {
  Recorder r;
  Status s = b.Iterate(&r);
  EXPECT_OK(s);
  return r.seen;
}

class FakeColumnFamily : public ColumnFamilyHandle {
 public:
  explicit FakeColumnFamily(uint32_t id) : id_(id), name_("cf" + std::to_string(id)) {}
  const std::string& GetName() const override { return name_; }
  uint32_t GetID() const override { return id_; }
  Status GetDescriptor(ColumnFamilyDescriptor*) override { return Status::NotSupported(); }
  const Comparator* GetComparator() const override { return BytewiseComparator(); }

 private:
  uint32_t id_;
  std::string name_;
};

TEST(WriteBatchTest, Empty) {
  WriteBatch b;
  EXPECT_EQ(b.Count(), 0u);
  EXPECT_EQ(b.GetDataSize(), WriteBatchInternal::kHeader);
  EXPECT_EQ(WriteBatchInternal::Sequence(&b), 0u);
  EXPECT_TRUE(Records(b).empty());
  EXPECT_FALSE(b.HasPut() || b.HasDelete() || b.HasSingleDelete() || b.HasMerge());
}

TEST(WriteBatchTest, EveryOperationInOrder) {
  WriteBatch b;
  ASSERT_OK(b.Put("foo", "bar"));
  ASSERT_OK(b.Delete("box"));
  ASSERT_OK(b.SingleDelete("once"));
  ASSERT_OK(b.Merge("m", "+1"));
  ASSERT_OK(b.PutLogData("blob"));
  ASSERT_OK(b.Put("", ""));
  EXPECT_EQ(b.Count(), 5u);  // the blob is not counted
  EXPECT_EQ(Records(b),
            (std::vector<std::string>{"Put(foo, bar)", "Delete(box)", "SingleDelete(once)",
                                      "Merge(m, +1)", "LogData(blob)", "Put(, )"}));
  EXPECT_TRUE(b.HasPut() && b.HasDelete() && b.HasSingleDelete() && b.HasMerge());

  // Tag bytes are RocksDB's: the first record starts right after the header.
  EXPECT_EQ(b.Data()[WriteBatchInternal::kHeader], static_cast<char>(kTypeValue));

  b.Clear();
  EXPECT_EQ(b.Count(), 0u);
  EXPECT_TRUE(Records(b).empty());
  ASSERT_OK(b.Delete("x"));
  EXPECT_FALSE(b.HasPut());
  EXPECT_TRUE(b.HasDelete());
}

TEST(WriteBatchTest, PutLogDataAloneCountsNothing) {
  WriteBatch b;
  ASSERT_OK(b.PutLogData("a"));
  ASSERT_OK(b.PutLogData(""));
  EXPECT_EQ(b.Count(), 0u);
  EXPECT_EQ(Records(b), (std::vector<std::string>{"LogData(a)", "LogData()"}));
  WriteBatch copy;
  ASSERT_OK(WriteBatchInternal::SetContents(&copy, WriteBatchInternal::Contents(&b)));
  EXPECT_EQ(Records(copy), Records(b));
}

TEST(WriteBatchTest, ColumnFamilyTags) {
  FakeColumnFamily zero(0), seven(7), big(300);
  WriteBatch b;
  ASSERT_OK(b.Put(&seven, "k", "v"));
  ASSERT_OK(b.Delete(&big, "d"));
  ASSERT_OK(b.SingleDelete(&seven, "s"));
  ASSERT_OK(b.Merge(&big, "m", "x"));
  ASSERT_OK(b.Put(&zero, "plain", "v0"));
  EXPECT_EQ(Records(b),
            (std::vector<std::string>{"Put(7:k, v)", "Delete(300:d)", "SingleDelete(7:s)",
                                      "Merge(300:m, x)", "Put(plain, v0)"}));
  const std::string& data = b.Data();
  EXPECT_EQ(data[WriteBatchInternal::kHeader], static_cast<char>(kTypeColumnFamilyValue));
  EXPECT_EQ(data[WriteBatchInternal::kHeader + 1], 7);
  // Column family 0 through a handle uses the plain tag.
  WriteBatch plain;
  ASSERT_OK(plain.Put("plain", "v0"));
  EXPECT_TRUE(data.ends_with(plain.Data().substr(WriteBatchInternal::kHeader)));

  // The Handler defaults turn non-default families away.
  WriteBatch::Handler defaults;
  Status s = b.Iterate(&defaults);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
}

TEST(WriteBatchTest, CountAndSequence) {
  WriteBatch b;
  WriteBatchInternal::SetSequence(&b, 0x0102030405060708ull);
  for (int i = 0; i < 100; i++) ASSERT_OK(b.Put("k" + std::to_string(i), "v"));
  EXPECT_EQ(b.Count(), 100u);
  EXPECT_EQ(WriteBatchInternal::Count(&b), 100u);
  EXPECT_EQ(WriteBatchInternal::Sequence(&b), 0x0102030405060708ull);
  EXPECT_EQ(DecodeFixed64(b.Data().data()), 0x0102030405060708ull);
  EXPECT_EQ(DecodeFixed32(b.Data().data() + 8), 100u);
  EXPECT_EQ(WriteBatchInternal::ByteSize(&b), b.Data().size());
  WriteBatchInternal::SetCount(&b, 7);
  EXPECT_EQ(b.Count(), 7u);
  EXPECT_TRUE(b.Iterate(nullptr).IsCorruption());  // count no longer matches
}

TEST(WriteBatchTest, DataRoundTripThroughSetContents) {
  WriteBatch b;
  WriteBatchInternal::SetSequence(&b, 42);
  ASSERT_OK(b.Put("a", std::string(1000, 'x')));
  ASSERT_OK(b.Delete("b"));
  ASSERT_OK(b.PutLogData("log"));
  ASSERT_OK(b.Merge("c", "d"));

  WriteBatch copy;
  ASSERT_OK(WriteBatchInternal::SetContents(&copy, WriteBatchInternal::Contents(&b)));
  EXPECT_EQ(copy.Data(), b.Data());
  EXPECT_EQ(WriteBatchInternal::Sequence(&copy), 42u);
  EXPECT_EQ(copy.Count(), 3u);
  EXPECT_EQ(Records(copy), Records(b));

  WriteBatch from_string(b.Data());
  EXPECT_EQ(Records(from_string), Records(b));
  WriteBatch copied = b;
  EXPECT_EQ(copied.Data(), b.Data());
}

TEST(WriteBatchTest, MalformedContentsAreCorruption) {
  WriteBatch good;
  ASSERT_OK(good.Put("key", "value"));
  ASSERT_OK(good.Merge("c", "d"));
  ASSERT_OK(good.Delete(nullptr, "x"));
  const std::string data = good.Data();

  std::vector<std::string> bad;
  bad.push_back("");
  bad.push_back(data.substr(0, 11));  // shorter than the header
  // Every proper prefix that cuts a record.
  for (size_t n = WriteBatchInternal::kHeader + 1; n < data.size(); n++) {
    bad.push_back(data.substr(0, n));
  }
  std::string unknown_tag = data;
  unknown_tag[WriteBatchInternal::kHeader] = 0x3f;
  bad.push_back(unknown_tag);
  std::string wrong_count = data;
  EncodeFixed32(wrong_count.data() + 8, 4);
  bad.push_back(wrong_count);
  std::string huge_length = data;
  huge_length[WriteBatchInternal::kHeader + 1] = static_cast<char>(0x7f);
  bad.push_back(huge_length);
  std::string bad_varint = data.substr(0, WriteBatchInternal::kHeader) +
                           static_cast<char>(kTypeColumnFamilyValue) + "\xff\xff\xff\xff\xff\xff";
  EncodeFixed32(bad_varint.data() + 8, 1);
  bad.push_back(bad_varint);

  for (const std::string& b : bad) {
    WriteBatch target;
    ASSERT_OK(target.Put("keep", "me"));
    const std::string before = target.Data();
    Status s = WriteBatchInternal::SetContents(&target, b);
    EXPECT_TRUE(s.IsCorruption()) << b.size() << " " << s.ToString();
    EXPECT_EQ(target.Data(), before);  // untouched

    WriteBatch raw(b);
    Recorder r;
    EXPECT_TRUE(raw.Iterate(&r).IsCorruption()) << b.size();
    raw.HasPut();  // must not crash on garbage
    EXPECT_LE(raw.Count(), 4u);
  }
  // Trailing records after a full prefix that the count does not include.
  WriteBatch extra(data + data.substr(WriteBatchInternal::kHeader));
  EXPECT_TRUE(extra.Iterate(nullptr).IsCorruption());
}

TEST(WriteBatchTest, RandomContentsNeverCrash) {
  Random rnd(TestSeed());
  for (int i = 0; i < 2000; i++) {
    std::string bytes = RandomBinaryString(&rnd, rnd.Skewed(8));
    if (bytes.size() >= 9 && rnd.OneIn(2)) bytes[8] = static_cast<char>(rnd.Uniform(4));
    WriteBatch b;
    Status s = WriteBatchInternal::SetContents(&b, bytes);
    if (s.ok()) {
      EXPECT_EQ(b.Data(), bytes);
      Recorder r;
      EXPECT_OK(b.Iterate(&r));
    } else {
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    }
  }
}

TEST(WriteBatchTest, IterateStopsWhenHandlerSaysSo) {
  WriteBatch b;
  for (int i = 0; i < 5; i++) ASSERT_OK(b.Put(std::to_string(i), "v"));
  Recorder r;
  r.stop_after = 2;
  ASSERT_OK(b.Iterate(&r));  // stopping early is not a count mismatch
  EXPECT_EQ(r.seen.size(), 2u);
}

TEST(WriteBatchTest, Append) {
  WriteBatch dst, src;
  WriteBatchInternal::SetSequence(&dst, 200);
  WriteBatchInternal::SetSequence(&src, 100);
  ASSERT_OK(WriteBatchInternal::Append(&dst, &src));
  EXPECT_EQ(dst.Count(), 0u);
  EXPECT_EQ(dst.GetDataSize(), WriteBatchInternal::kHeader);

  ASSERT_OK(src.Put("a", "va"));
  ASSERT_OK(WriteBatchInternal::Append(&dst, &src));
  EXPECT_EQ(Records(dst), (std::vector<std::string>{"Put(a, va)"}));

  src.Clear();
  ASSERT_OK(src.Delete("b"));
  ASSERT_OK(src.PutLogData("blob"));
  ASSERT_OK(src.Merge("c", "vc"));
  ASSERT_OK(WriteBatchInternal::Append(&dst, &src));
  EXPECT_EQ(Records(dst),
            (std::vector<std::string>{"Put(a, va)", "Delete(b)", "LogData(blob)", "Merge(c, vc)"}));
  EXPECT_EQ(dst.Count(), 3u);
  EXPECT_EQ(WriteBatchInternal::Sequence(&dst), 200u);  // dst keeps its own

  // Appending a batch to itself doubles it.
  ASSERT_OK(WriteBatchInternal::Append(&dst, &dst));
  EXPECT_EQ(dst.Count(), 6u);
  EXPECT_EQ(Records(dst).size(), 8u);

  WriteBatch broken(std::string("short"));
  EXPECT_TRUE(WriteBatchInternal::Append(&dst, &broken).IsCorruption());
  EXPECT_EQ(dst.Count(), 6u);
}

TEST(WriteBatchTest, EditsRepairATooShortBatch) {
  WriteBatch b(std::string("abc"));
  EXPECT_EQ(b.Count(), 0u);
  EXPECT_EQ(WriteBatchInternal::Sequence(&b), 0u);
  ASSERT_OK(b.Put("k", "v"));
  EXPECT_EQ(b.Count(), 1u);
  EXPECT_EQ(b.Data().size(), WriteBatchInternal::kHeader + 5);
}

// A memtable reference held for one test.
class MemTableTest : public ::testing::Test {
 protected:
  MemTableTest() : icmp_(BytewiseComparator()), mem_(new MemTable(icmp_, 1 << 20)) { mem_->Ref(); }
  ~MemTableTest() override { mem_->Unref(); }

  // What a read at `seq` sees: the value, "NOT_FOUND" for a deletion, "MERGE" for a merge
  // operand, "ABSENT" if the memtable has nothing visible.
  std::string Get(const std::string& key, SequenceNumber seq, SequenceNumber* found_seq) {
    LookupKey lkey(key, seq);
    std::string value;
    Status s;
    *found_seq = 0;
    if (!mem_->Get(lkey, &value, &s, found_seq)) return "ABSENT";
    if (s.IsNotFound()) return "NOT_FOUND";
    if (s.IsNotSupported()) return "MERGE";
    EXPECT_OK(s);
    return value;
  }

  // Applies b to mem_ as recovery does (db/wal_replay.h), from a WAL whose records count.
  Status Replay(const WriteBatch& b) {
    WalReplayer replayer(/*allow_2pc=*/false, /*min_data_log=*/1);
    SequenceNumber next;
    return replayer.Apply(b, /*log=*/1, mem_, &next);
  }

  InternalKeyComparator icmp_;
  MemTable* mem_;
};

TEST_F(MemTableTest, ReplayNumbersRecordsFromTheBatchSequence) {
  WriteBatch b;
  WriteBatchInternal::SetSequence(&b, 100);
  ASSERT_OK(b.Put("a", "va"));         // 100
  ASSERT_OK(b.PutLogData("ignored"));  // takes no number
  ASSERT_OK(b.Put("b", "vb"));         // 101
  ASSERT_OK(b.Delete("a"));            // 102
  ASSERT_OK(b.SingleDelete("b"));      // 103
  ASSERT_OK(b.Merge("m", "op"));       // 104
  ASSERT_OK(b.Put("c", "vc"));         // 105
  ASSERT_OK(Replay(b));
  EXPECT_EQ(mem_->num_entries(), 6u);
  EXPECT_EQ(mem_->num_deletes(), 2u);
  EXPECT_EQ(mem_->first_seqno(), 100u);

  SequenceNumber seq;
  EXPECT_EQ(Get("a", 99, &seq), "ABSENT");
  EXPECT_EQ(Get("a", 100, &seq), "va");
  EXPECT_EQ(seq, 100u);
  EXPECT_EQ(Get("a", 101, &seq), "va");
  EXPECT_EQ(Get("a", 102, &seq), "NOT_FOUND");
  EXPECT_EQ(seq, 102u);
  EXPECT_EQ(Get("b", 101, &seq), "vb");
  EXPECT_EQ(seq, 101u);
  EXPECT_EQ(Get("b", 103, &seq), "NOT_FOUND");
  EXPECT_EQ(Get("m", 104, &seq), "MERGE");
  EXPECT_EQ(seq, 104u);
  EXPECT_EQ(Get("c", kMaxSequenceNumber, &seq), "vc");
  EXPECT_EQ(seq, 105u);
  EXPECT_EQ(Get("ignored", kMaxSequenceNumber, &seq), "ABSENT");
}

TEST_F(MemTableTest, ReplayAfterWalRoundTrip) {
  WriteBatch b;
  WriteBatchInternal::SetSequence(&b, 7);
  for (int i = 0; i < 50; i++) ASSERT_OK(b.Put("key" + std::to_string(i), std::to_string(i)));
  WriteBatch replayed;
  ASSERT_OK(WriteBatchInternal::SetContents(&replayed, WriteBatchInternal::Contents(&b)));
  ASSERT_OK(Replay(replayed));
  SequenceNumber seq;
  for (int i = 0; i < 50; i++) {
    EXPECT_EQ(Get("key" + std::to_string(i), kMaxSequenceNumber, &seq), std::to_string(i));
    EXPECT_EQ(seq, 7u + i);
  }
}

TEST_F(MemTableTest, ReplayAppliesNothingFromABadBatch) {
  FakeColumnFamily other(3);
  WriteBatch b;
  WriteBatchInternal::SetSequence(&b, 1);
  ASSERT_OK(b.Put("a", "1"));
  ASSERT_OK(b.Put(&other, "b", "2"));
  Status s = Replay(b);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_TRUE(mem_->IsEmpty());

  WriteBatch ok;
  ASSERT_OK(ok.Put("a", "1"));
  ASSERT_OK(ok.Put("b", "2"));
  WriteBatch truncated(ok.Data().substr(0, ok.Data().size() - 1));
  s = Replay(truncated);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_TRUE(mem_->IsEmpty());
}

// A batch of one Put (what DB::Put writes) is checked and applied without the general
// walk; it must be numbered and refused exactly as the walk would.
TEST_F(MemTableTest, SinglePutBatchIsCheckedAndAppliedLikeAnyOther) {
  WriteBatch one;
  ASSERT_OK(one.Put("k", "v1"));
  bool has_merge = true;
  uint64_t sub_batches = 0;
  ASSERT_OK(WriteBatchInternal::ValidateForWrite(&one, nullptr, false, &has_merge, &sub_batches));
  EXPECT_FALSE(has_merge);
  EXPECT_EQ(sub_batches, 1u);
  ASSERT_OK(WriteBatchInternal::InsertInto(&one, 10, mem_, nullptr, false, 0, nullptr));
  WriteBatch two;
  ASSERT_OK(two.Put("k", "v2"));
  ASSERT_OK(WriteBatchInternal::InsertInto(&two, 11, mem_, nullptr, true, 1, nullptr));
  SequenceNumber seq;
  EXPECT_EQ(Get("k", 9, &seq), "ABSENT");
  EXPECT_EQ(Get("k", 10, &seq), "v1");
  EXPECT_EQ(seq, 10u);
  EXPECT_EQ(Get("k", kMaxSequenceNumber, &seq), "v2");
  EXPECT_EQ(seq, 11u);

  // Near misses of the single-Put form: each is refused with what the walk finds.
  const std::string data = one.Data();
  std::vector<std::string> corrupt;
  corrupt.push_back(data + "x");                       // a byte after the record
  corrupt.push_back(data.substr(0, data.size() - 1));  // the value cut short
  std::string twice = data + data.substr(WriteBatchInternal::kHeader);
  corrupt.push_back(twice);  // two records, count 1
  std::string long_value = data;
  long_value[long_value.size() - 3] = 3;  // the value's length says 3, 2 bytes follow
  corrupt.push_back(long_value);
  for (const std::string& c : corrupt) {
    WriteBatch b(c);
    Status s = WriteBatchInternal::ValidateForWrite(&b, nullptr, false, &has_merge, &sub_batches);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  }
  FakeColumnFamily other(3);
  WriteBatch cf;
  ASSERT_OK(cf.Put(&other, "k", "v"));
  Status s = WriteBatchInternal::ValidateForWrite(&cf, nullptr, false, &has_merge, &sub_batches);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  WriteBatch merge;
  ASSERT_OK(merge.Merge("k", "m"));
  ASSERT_OK(WriteBatchInternal::ValidateForWrite(&merge, nullptr, false, &has_merge, &sub_batches));
  EXPECT_TRUE(has_merge);
}

// ValidateForWrite takes the common batch (default-family records only) through a walk of
// its own: on random batches, some damaged or holding other kinds, its answers must be the
// general walk's (the model below: iterate, then decide as ValidateForWrite documents).
TEST(WriteBatchTest, ValidateForWriteMatchesTheGeneralWalkOnRandomBatches) {
  const uint64_t seed = TestSeed();
  Random rnd(static_cast<uint32_t>(seed));
  FakeColumnFamily other(2);
  for (int round = 0; round < 3000; round++) {
    WriteBatch b;
    const int records = static_cast<int>(rnd.Uniform(12));
    for (int r = 0; r < records; r++) {
      const std::string key(1 + rnd.Uniform(3), static_cast<char>('a' + rnd.Uniform(4)));
      switch (rnd.Uniform(round % 3 == 0 ? 8 : 4)) {
        case 0: ASSERT_OK(b.Put(key, "v")); break;
        case 1: ASSERT_OK(b.Delete(key)); break;
        case 2: ASSERT_OK(b.SingleDelete(key)); break;
        case 3: ASSERT_OK(b.Merge(key, "m")); break;
        case 4: ASSERT_OK(b.PutLogData("blob")); break;
        case 5: ASSERT_OK(b.Put(&other, key, "v")); break;
        case 6: WriteBatchInternal::MarkCommit(&b, "x"); break;
        default: WriteBatchInternal::InsertNoop(&b); break;
      }
    }
    std::string rep = b.Data();
    if (round % 5 == 1 && rep.size() > WriteBatchInternal::kHeader) {
      rep.resize(rep.size() - 1 - rnd.Uniform(3));  // cut short
    } else if (round % 5 == 2) {
      EncodeFixed32(&rep[8], DecodeFixed32(rep.data() + 8) + 1);  // a count that is off
    }
    const WriteBatch damaged(rep);
    for (bool txn_markers : {false, true}) {
      // The model: the general walk's verdict and facts.
      struct Model : WriteBatch::Handler {
        bool merge = false, marker = false, other_cf = false;
        SubBatchSplitter splitter;
        Status PutCF(uint32_t cf, const Slice& k, const Slice&) override { return Key(cf, k); }
        Status DeleteCF(uint32_t cf, const Slice& k) override { return Key(cf, k); }
        Status SingleDeleteCF(uint32_t cf, const Slice& k) override { return Key(cf, k); }
        Status MergeCF(uint32_t cf, const Slice& k, const Slice&) override {
          merge = true;
          return Key(cf, k);
        }
        Status MarkCommit(const Slice&) override {
          marker = true;
          return Status::OK();
        }
        Status Key(uint32_t cf, const Slice& k) {
          other_cf = other_cf || cf != 0;
          if (cf == 0) splitter.StartsNew(k);
          return Status::OK();
        }
      } model;
      const Status walked = damaged.Iterate(&model);
      bool has_merge = false;
      uint64_t sub_batches = 0;
      const Status s = WriteBatchInternal::ValidateForWrite(&damaged, nullptr, txn_markers,
                                                            &has_merge, &sub_batches);
      SCOPED_TRACE("seed " + std::to_string(seed) + " round " + std::to_string(round));
      if (!walked.ok()) {
        // Refused; for damage, unless a record before it was refused first.
        EXPECT_FALSE(s.ok());
        if (!model.other_cf && !model.marker) EXPECT_TRUE(s.IsCorruption()) << s.ToString();
        continue;
      }
      // Markers and another family: the first met decides, in record order; each alone
      // is enough to check the kind.
      if (model.other_cf && !model.marker) {
        EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
      } else if (model.marker && !txn_markers && !model.other_cf) {
        EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
      } else if (!model.marker && !model.other_cf) {
        ASSERT_OK(s);
        EXPECT_EQ(model.merge, has_merge);
        EXPECT_EQ(model.splitter.sub_batches(), sub_batches);
      }
    }
  }
}

TEST(WriteBatchTest, SavePointWithoutOneIsNotFound) {
  WriteBatch b;
  EXPECT_TRUE(b.RollbackToSavePoint().IsNotFound());
  EXPECT_TRUE(b.PopSavePoint().IsNotFound());
  ASSERT_OK(b.Put("a", "1"));
  EXPECT_TRUE(b.RollbackToSavePoint().IsNotFound());
  EXPECT_EQ(Records(b), std::vector<std::string>({"Put(a, 1)"}));
}

TEST(WriteBatchTest, RollbackRestoresRecordsCountAndKinds) {
  WriteBatch b;
  ASSERT_OK(b.Put("a", "1"));
  b.SetSavePoint();
  const std::string at_first = b.Data();
  ASSERT_OK(b.Delete("b"));
  ASSERT_OK(b.PutLogData("blob"));
  b.SetSavePoint();
  ASSERT_OK(b.Merge("c", "m"));
  ASSERT_OK(b.SingleDelete("d"));
  EXPECT_EQ(b.Count(), 4u);
  EXPECT_TRUE(b.HasMerge());

  ASSERT_OK(b.RollbackToSavePoint());  // the newest: back to Put, Delete, LogData
  EXPECT_EQ(b.Count(), 2u);
  EXPECT_FALSE(b.HasMerge() || b.HasSingleDelete());
  EXPECT_EQ(Records(b), std::vector<std::string>({"Put(a, 1)", "Delete(b)", "LogData(blob)"}));

  ASSERT_OK(b.RollbackToSavePoint());
  EXPECT_EQ(b.Data(), at_first);
  EXPECT_EQ(b.Count(), 1u);
  EXPECT_FALSE(b.HasDelete());
  EXPECT_TRUE(b.RollbackToSavePoint().IsNotFound());  // each rollback used one up
}

TEST(WriteBatchTest, PopSavePointKeepsRecords) {
  WriteBatch b;
  b.SetSavePoint();
  ASSERT_OK(b.Put("a", "1"));
  b.SetSavePoint();
  ASSERT_OK(b.Put("b", "2"));
  ASSERT_OK(b.PopSavePoint());  // drops the newest save point, not the records
  EXPECT_EQ(b.Count(), 2u);
  ASSERT_OK(b.RollbackToSavePoint());  // so this goes back to the first one: empty
  EXPECT_EQ(b.Count(), 0u);
  EXPECT_TRUE(Records(b).empty());
  EXPECT_TRUE(b.PopSavePoint().IsNotFound());
}

TEST(WriteBatchTest, ClearAndSetContentsDropSavePoints) {
  WriteBatch b;
  b.SetSavePoint();
  ASSERT_OK(b.Put("a", "1"));
  b.Clear();
  EXPECT_TRUE(b.RollbackToSavePoint().IsNotFound());

  WriteBatch other;
  ASSERT_OK(other.Put("x", "y"));
  b.SetSavePoint();
  ASSERT_OK(WriteBatchInternal::SetContents(&b, WriteBatchInternal::Contents(&other)));
  EXPECT_TRUE(b.RollbackToSavePoint().IsNotFound());
  EXPECT_EQ(Records(b), std::vector<std::string>({"Put(x, y)"}));
}

TEST(WriteBatchTest, RolledBackBatchAppliesOnlyWhatIsLeft) {
  WriteBatch b;
  ASSERT_OK(b.Put("keep", "v"));
  b.SetSavePoint();
  ASSERT_OK(b.Put("drop", "v"));
  ASSERT_OK(b.RollbackToSavePoint());
  ASSERT_OK(b.Put("also", "w"));
  // Well formed: the count in the header matches the records that remain.
  WriteBatch copy;
  ASSERT_OK(WriteBatchInternal::SetContents(&copy, WriteBatchInternal::Contents(&b)));
  EXPECT_EQ(Records(copy), std::vector<std::string>({"Put(keep, v)", "Put(also, w)"}));
}

}  // namespace
}  // namespace shale
