// Range deletions on the write path: WriteBatch::DeleteRange's records (RocksDB's tags and
// layout), their handler, the checks before a write, the memtable's tombstone list filled by
// InsertInto and by WAL replay, and concurrent adds beside readers of the list.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "db/wal_replay.h"
#include "db/write_batch_internal.h"
#include "memtable/memtable.h"
#include "shale/comparator.h"
#include "shale/write_batch.h"
#include "tests/testutil/test_util.h"
#include "util/dbformat.h"

namespace shale {
namespace {

// Records the calls a batch makes, one line each.
class Recorder : public WriteBatch::Handler {
 public:
  std::string seen;
  Status PutCF(uint32_t cf, const Slice& key, const Slice& value) override {
    seen += "Put(" + std::to_string(cf) + "," + key.ToString() + "," + value.ToString() + ")";
    return Status::OK();
  }
  Status DeleteRangeCF(uint32_t cf, const Slice& begin, const Slice& end) override {
    seen +=
        "DeleteRange(" + std::to_string(cf) + "," + begin.ToString() + "," + end.ToString() + ")";
    return Status::OK();
  }
};

TEST(RangeDelWriteTest, BatchRecordsAsRocksDBWritesThem) {
  WriteBatch b;
  ASSERT_OK(b.DeleteRange("a", "c"));
  // Default family: tag 0x0F, begin, end.
  EXPECT_EQ(std::string("\x0f\x01"
                        "a\x01"
                        "c",
                        5),
            b.Data().substr(WriteBatchInternal::kHeader));
  EXPECT_EQ(1u, b.Count());
  EXPECT_TRUE(b.HasDeleteRange());
  EXPECT_FALSE(b.HasDelete());

  // Another family: tag 0x0E and the family id. (The batch takes the id as a number here.)
  WriteBatch other;
  ASSERT_OK(WriteBatchInternal::AddRecord(&other, 7, kTypeRangeDeletion, "k", "m"));
  EXPECT_EQ(std::string("\x0e\x07\x01k\x01m", 6), other.Data().substr(WriteBatchInternal::kHeader));

  ASSERT_OK(b.Put("x", "1"));
  ASSERT_OK(WriteBatchInternal::Append(&b, &other));
  Recorder r;
  ASSERT_OK(b.Iterate(&r));
  EXPECT_EQ("DeleteRange(0,a,c)Put(0,x,1)DeleteRange(7,k,m)", r.seen);

  // A batch read back from its bytes (a WAL record) gives the same calls.
  WriteBatch copy;
  ASSERT_OK(WriteBatchInternal::SetContents(&copy, WriteBatchInternal::Contents(&b)));
  Recorder again;
  ASSERT_OK(copy.Iterate(&again));
  EXPECT_EQ(r.seen, again.seen);

  // Truncated in the end key: Corruption, the batch unchanged.
  std::string damaged = b.Data().substr(0, WriteBatchInternal::kHeader + 4);
  EXPECT_TRUE(WriteBatchInternal::SetContents(&copy, damaged).IsCorruption());
  EXPECT_EQ(b.Data(), copy.Data());
}

TEST(RangeDelWriteTest, HandlerWithoutDeleteRangeRefusesIt) {
  WriteBatch b;
  ASSERT_OK(b.DeleteRange("a", "b"));
  WriteBatch::Handler plain;
  Status s = b.Iterate(&plain);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("DeleteRangeCF not implemented"));
}

TEST(RangeDelWriteTest, SavePointDropsRangeDeletions) {
  WriteBatch b;
  ASSERT_OK(b.Put("a", "1"));
  b.SetSavePoint();
  ASSERT_OK(b.DeleteRange("a", "z"));
  ASSERT_OK(b.RollbackToSavePoint());
  EXPECT_EQ(1u, b.Count());
  EXPECT_FALSE(b.HasDeleteRange());
}

TEST(RangeDelWriteTest, ValidateForWrite) {
  bool has_merge = false;
  WriteBatch b;
  ASSERT_OK(b.DeleteRange("a", "c"));
  ASSERT_OK(WriteBatchInternal::ValidateForWrite(&b, nullptr, false, &has_merge));
  WriteBatch empty_range;
  ASSERT_OK(empty_range.DeleteRange("c", "c"));
  ASSERT_OK(WriteBatchInternal::ValidateForWrite(&empty_range, nullptr, false, &has_merge));
  WriteBatch reversed;
  ASSERT_OK(reversed.Put("a", "1"));
  ASSERT_OK(reversed.DeleteRange("d", "c"));
  Status s = WriteBatchInternal::ValidateForWrite(&reversed, nullptr, false, &has_merge);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("end key comes before start key"));
  // An unknown family is refused as for any record.
  WriteBatch unknown;
  ASSERT_OK(WriteBatchInternal::AddRecord(&unknown, 3, kTypeRangeDeletion, "a", "b"));
  EXPECT_TRUE(WriteBatchInternal::ValidateForWrite(&unknown, nullptr, false, &has_merge)
                  .IsInvalidArgument());
}

class RangeDelMemTableTest : public testing::Test {
 protected:
  RangeDelMemTableTest() : icmp_(BytewiseComparator()), mem_(new MemTable(icmp_, 1 << 20)) {
    mem_->Ref();
  }
  ~RangeDelMemTableTest() override { mem_->Unref(); }

  std::string Fragments() const {
    auto list = mem_->RangeTombstones();
    if (list == nullptr) return "(none)";
    std::string out;
    for (const RangeTombstone& t : list->ToTombstones()) {
      out += "[" + t.begin + "," + t.end + ")@" + std::to_string(t.seq) + " ";
    }
    return out;
  }

  InternalKeyComparator icmp_;
  MemTable* mem_;
};

TEST_F(RangeDelMemTableTest, InsertIntoKeepsTombstonesBesidePointEntries) {
  EXPECT_EQ("(none)", Fragments());
  WriteBatch b;
  ASSERT_OK(b.Put("a", "1"));
  ASSERT_OK(b.DeleteRange("b", "d"));
  ASSERT_OK(b.DeleteRange("e", "e"));  // empty: takes a number, adds nothing
  ASSERT_OK(b.DeleteRange("c", "f"));
  ASSERT_OK(b.Put("b", "2"));
  ASSERT_OK(WriteBatchInternal::InsertInto(&b, 10, mem_, nullptr, false, 0, nullptr));
  EXPECT_EQ("[b,c)@11 [c,d)@13 [c,d)@11 [d,f)@13 ", Fragments());
  EXPECT_EQ(2u, mem_->num_range_deletes());
  EXPECT_EQ(4u, mem_->num_entries());

  // Point entries are served as before; the tombstones are the DB's to apply.
  std::string value;
  Status s;
  SequenceNumber seq = 0;
  ASSERT_TRUE(mem_->Get(LookupKey("b", kMaxSequenceNumber), &value, &s, &seq));
  EXPECT_EQ("2", value);
  EXPECT_EQ(14u, seq);

  // A list handed out stays as it was; a later add gives a new one.
  auto before = mem_->RangeTombstones();
  EXPECT_EQ(before, mem_->RangeTombstones());  // built once
  mem_->AddRangeTombstone(20, "a", "b");
  EXPECT_EQ(3u, before->size());
  EXPECT_EQ("[a,b)@20 [b,c)@11 [c,d)@13 [c,d)@11 [d,f)@13 ", Fragments());
}

TEST_F(RangeDelMemTableTest, SequencePerSubBatch) {
  WriteBatch b;
  ASSERT_OK(b.DeleteRange("a", "c"));
  ASSERT_OK(b.Put("b", "1"));
  ASSERT_OK(b.DeleteRange("a", "b"));  // begin "a" again: the next sub-batch
  ASSERT_OK(WriteBatchInternal::InsertInto(&b, 5, mem_, nullptr, false, 2, nullptr));
  EXPECT_EQ("[a,b)@6 [a,b)@5 [b,c)@5 ", Fragments());
}

TEST_F(RangeDelMemTableTest, WalReplayRestoresTombstones) {
  WriteBatch b;
  ASSERT_OK(b.Put("a", "1"));
  ASSERT_OK(b.DeleteRange("a", "m"));
  ASSERT_OK(b.DeleteRange("z", "b"));  // reversed (a WAL some other writer made): ignored
  ASSERT_OK(b.Put("q", "2"));
  WriteBatchInternal::SetSequence(&b, 40);
  WalReplayer replayer(/*allow_2pc=*/false, /*min_data_log=*/0);
  SequenceNumber next = 0;
  ASSERT_OK(replayer.Apply(b, 1, mem_, &next));
  EXPECT_EQ(44u, next);
  EXPECT_EQ("[a,m)@41 ", Fragments());
}

TEST_F(RangeDelMemTableTest, PreparedSectionKeepsItsRangeDeletionUntilCommit) {
  WriteBatch prepare;
  WriteBatchInternal::InsertNoop(&prepare);
  ASSERT_OK(prepare.DeleteRange("a", "c"));
  ASSERT_OK(WriteBatchInternal::MarkEndPrepare(&prepare, "t1"));
  WriteBatchInternal::SetSequence(&prepare, 7);
  WriteBatch commit;
  WriteBatchInternal::MarkCommit(&commit, "t1");
  WriteBatchInternal::SetSequence(&commit, 7);
  WalReplayer replayer(/*allow_2pc=*/true, /*min_data_log=*/0);
  SequenceNumber next = 0;
  ASSERT_OK(replayer.Apply(prepare, 1, mem_, &next));
  EXPECT_EQ("(none)", Fragments());
  ASSERT_OK(replayer.Apply(commit, 1, mem_, &next));
  EXPECT_EQ("[a,c)@7 ", Fragments());
}

// Writers add tombstones from several threads while readers take the list: every reader
// sees a list that holds a prefix of each writer's adds, and the end holds them all.
TEST_F(RangeDelMemTableTest, ConcurrentAddsAndReads) {
  constexpr int kWriters = 4;
  constexpr int kPerWriter = 300;
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; w++) {
    threads.emplace_back([this, w] {
      for (int i = 0; i < kPerWriter; i++) {
        const std::string begin = "k" + std::to_string(w) + "_" + std::to_string(1000 + i);
        mem_->AddRangeTombstone(1 + w * kPerWriter + i, begin, begin + "x");
      }
    });
  }
  std::atomic<size_t> reads{0};
  std::thread reader([&] {
    while (!done.load()) {
      auto list = mem_->RangeTombstones();
      if (list != nullptr) {
        // Each writer's tombstones are disjoint ranges: one fragment each.
        EXPECT_LE(list->size(), static_cast<size_t>(kWriters * kPerWriter));
        reads++;
      }
    }
  });
  for (int w = 0; w < kWriters; w++) threads[w].join();
  done = true;
  reader.join();
  auto list = mem_->RangeTombstones();
  ASSERT_NE(nullptr, list);
  EXPECT_EQ(static_cast<size_t>(kWriters * kPerWriter), list->size());
  EXPECT_EQ(static_cast<uint64_t>(kWriters * kPerWriter), mem_->num_range_deletes());
  EXPECT_EQ(static_cast<SequenceNumber>(kWriters * kPerWriter), list->max_seq());
}

}  // namespace
}  // namespace shale
