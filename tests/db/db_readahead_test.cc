// Readahead in the DB (table/readahead_file.h): a compaction reads its input tables
// compaction_readahead_size bytes at a time (SetDBOptions changes it; 0 reads block by
// block), and an iterator scanning a table reads ahead once its reads run in file order
// (ReadOptions::readahead_size fixes the window). Counted by the reads the SST files see,
// against the number of data blocks; every key reads back right.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

#include "shale/cache.h"
#include "shale/db.h"
#include "shale/table.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

constexpr int kKeys = 20000;
constexpr int kRounds = 4;

// Counts the reads of SST files opened through it.
class SstReadCountingEnv : public EnvWrapper {
 public:
  explicit SstReadCountingEnv(Env* base) : EnvWrapper(base) {}

  Status NewRandomAccessFile(const std::string& fname, std::unique_ptr<RandomAccessFile>* result,
                             const EnvOptions& options) override {
    Status s = target()->NewRandomAccessFile(fname, result, options);
    if (s.ok() && fname.size() > 4 && fname.compare(fname.size() - 4, 4, ".sst") == 0) {
      *result = std::make_unique<File>(this, std::move(*result));
    }
    return s;
  }

  uint64_t reads() const { return reads_.load(); }

 private:
  class File final : public RandomAccessFile {
   public:
    File(SstReadCountingEnv* env, std::unique_ptr<RandomAccessFile> target)
        : env_(env), target_(std::move(target)) {}
    Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
      env_->reads_++;
      return target_->Read(offset, n, result, scratch);
    }

   private:
    SstReadCountingEnv* const env_;
    const std::unique_ptr<RandomAccessFile> target_;
  };

  std::atomic<uint64_t> reads_{0};
};

std::string ValueOf(int i, int round) {
  return "value-" + std::to_string(round) + "-" + Key(i) + std::string(80, 'v');
}

class DBReadaheadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.create_if_missing = true;
    options_.env = &env_;
    options_.disable_auto_compactions = true;
    options_.compression = kNoCompression;  // blocks of a known size: 4 KiB of entries
    BlockBasedTableOptions table;
    table.block_cache = NewLRUCache(8 << 20);
    options_.table_factory.reset(NewBlockBasedTableFactory(table));
  }

  // kRounds L0 files, each with every key; the last round's values win.
  void Fill() {
    ASSERT_OK(DB::Open(options_, dir_.path() + "/db", &db_));
    for (int round = 0; round < kRounds; round++) {
      for (int i = 0; i < kKeys; i++) {
        ASSERT_OK(db_->Put(WriteOptions(), Key(i), ValueOf(i, round)));
      }
      ASSERT_OK(db_->Flush(FlushOptions()));
    }
  }

  // The data blocks a full read of the DB's tables holds, about.
  uint64_t DataBlocks() {
    std::string v;
    EXPECT_TRUE(db_->GetProperty(DB::Properties::kTotalSstFilesSize, &v));
    return std::stoull(v) / BlockBasedTableOptions().block_size;
  }

  void ExpectEveryKey(int round) {
    std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
    int i = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), i++) {
      ASSERT_EQ(Key(i), it->key().ToString());
      ASSERT_EQ(ValueOf(i, round), it->value().ToString());
    }
    ASSERT_OK(it->status());
    ASSERT_EQ(kKeys, i);
  }

  TempDirectory dir_{"db_readahead"};
  SstReadCountingEnv env_{Env::Default()};
  Options options_;
  std::unique_ptr<DB> db_;
};

TEST_F(DBReadaheadTest, CompactionReadsItsInputsAWindowAtATime) {
  Fill();
  const uint64_t blocks = DataBlocks();
  ASSERT_GT(blocks, 1000u);
  const uint64_t before = env_.reads();
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  const uint64_t reads = env_.reads() - before;
  // 2 MiB windows: a read or two per input file (each well under 2 MiB), not one a block.
  EXPECT_LT(reads, blocks / 20) << blocks << " blocks";
  ExpectEveryKey(kRounds - 1);
}

TEST_F(DBReadaheadTest, CompactionWithoutReadaheadReadsBlockByBlock) {
  Fill();
  ASSERT_OK(db_->SetDBOptions({{"compaction_readahead_size", "0"}}));
  const uint64_t blocks = DataBlocks();
  const uint64_t before = env_.reads();
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  EXPECT_GE(env_.reads() - before, blocks * 9 / 10) << blocks << " blocks";
  ExpectEveryKey(kRounds - 1);
}

TEST_F(DBReadaheadTest, AScanReadsAheadOnceItsReadsRunInOrder) {
  Fill();
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  ASSERT_OK(db_->Close());
  db_.reset();
  // A fresh block cache: every block of the scan is read from its file.
  BlockBasedTableOptions table;
  table.block_cache = NewLRUCache(8 << 20);
  options_.table_factory.reset(NewBlockBasedTableFactory(table));
  ASSERT_OK(DB::Open(options_, dir_.path() + "/db", &db_));
  const uint64_t blocks = DataBlocks();
  uint64_t before = env_.reads();
  ExpectEveryKey(kRounds - 1);
  // Automatic windows grow to 256 KiB: far fewer reads than blocks.
  EXPECT_LT(env_.reads() - before, blocks / 20) << blocks << " blocks";

  // A fixed window from the first read on, the blocks not in the cache this time.
  ReadOptions ro;
  ro.fill_cache = false;
  ro.readahead_size = 16 << 10;
  ASSERT_OK(db_->Close());
  db_.reset();
  table.block_cache = NewLRUCache(8 << 20);
  options_.table_factory.reset(NewBlockBasedTableFactory(table));
  ASSERT_OK(DB::Open(options_, dir_.path() + "/db", &db_));
  before = env_.reads();
  std::unique_ptr<Iterator> it(db_->NewIterator(ro));
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  ASSERT_OK(it->status());
  ASSERT_EQ(kKeys, n);
  const uint64_t reads = env_.reads() - before;
  EXPECT_LT(reads, blocks / 3) << blocks << " blocks";
  EXPECT_GT(reads, blocks / 5) << blocks << " blocks";
}

}  // namespace
}  // namespace shale
