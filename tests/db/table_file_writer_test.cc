// The one SST-writing path (TableFileWriter, BuildTable) and FlushJob on top of it: the
// metadata it records matches the file, input that cancels out leaves no file, and a failed
// write, sync or verification leaves nothing behind; a flush of a memtable with a filter
// keeps a key filter for its L0 file.
#include "db/table_file_writer.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "db/compaction_iterator.h"
#include "db/filename.h"
#include "db/flush_job.h"
#include "db/table_cache.h"
#include "memtable/memtable.h"
#include "memtable/memtable_filter.h"
#include "shale/filter_policy.h"
#include "shale/table.h"
#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/test_util.h"
#include "util/hash.h"

namespace shale {
namespace {

class TableFileWriterTest : public ::testing::Test {
 protected:
  TableFileWriterTest()
      : dir_("table_file_writer_test"), icmp_(BytewiseComparator()), env_(Env::Default()) {
    options_.env = &env_;
    options_.compression = kNoCompression;
    table_cache_ = std::make_unique<TableCache>(dir_.path(), options_, &icmp_, -1);
    mem_ = new MemTable(icmp_, 1 << 20);
    mem_->Ref();
  }
  ~TableFileWriterTest() override { mem_->Unref(); }

  bool FileExists(uint64_t number) {
    return Env::Default()->FileExists(TableFileName(dir_.path(), number)).ok();
  }

  // Flushes mem_ into file `number` through FlushJob.
  Status Flush(uint64_t number, FileMetaData* meta) {
    FlushJob job(options_, dir_.path(), &icmp_, table_cache_.get(), /*db_dir=*/nullptr, mem_,
                 /*snapshots=*/{}, number);
    Status s = job.Run();
    *meta = job.meta();
    return s;
  }

  TempDirectory dir_;
  InternalKeyComparator icmp_;
  FaultInjectionTestEnv env_;
  Options options_;
  std::unique_ptr<TableCache> table_cache_;
  MemTable* mem_;
};

TEST_F(TableFileWriterTest, FlushRecordsWhatTheFileHolds) {
  mem_->Add(5, kTypeValue, "b", "vb");
  mem_->Add(9, kTypeDeletion, "c", "");
  mem_->Add(7, kTypeValue, "a", "va");
  FileMetaData meta;
  ASSERT_TRUE(Flush(12, &meta).ok());
  EXPECT_EQ(meta.number, 12u);
  EXPECT_EQ(meta.smallest.user_key().ToString(), "a");
  EXPECT_EQ(meta.largest.user_key().ToString(), "c");
  EXPECT_EQ(meta.smallest_seqno, 5u);
  EXPECT_EQ(meta.largest_seqno, 9u);
  EXPECT_EQ(meta.num_entries, 3u);
  EXPECT_EQ(meta.num_deletions, 1u);
  uint64_t size = 0;
  ASSERT_TRUE(Env::Default()->GetFileSize(TableFileName(dir_.path(), 12), &size).ok());
  EXPECT_EQ(meta.file_size, size);
  EXPECT_GT(size, 0u);
  // Flush syncs the file before anything may name it.
  EXPECT_EQ(env_.CallCount(FailOn::kSync), 1u);
  EXPECT_EQ(env_.SyncedSize(TableFileName(dir_.path(), 12)), static_cast<int64_t>(size));

  // The file reads back through the table cache with what was written.
  std::unique_ptr<InternalIterator> it(table_cache_->NewIterator(ReadOptions(), meta));
  std::vector<std::string> keys;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    keys.push_back(ExtractUserKey(it->key()).ToString() + "=" + it->value().ToString());
  }
  ASSERT_TRUE(it->status().ok());
  EXPECT_EQ(keys, (std::vector<std::string>{"a=va", "b=vb", "c="}));
}

TEST_F(TableFileWriterTest, InputThatCancelsOutLeavesNoFile) {
  // A Put and the SingleDelete above it vanish together when no snapshot needs the Put.
  mem_->Add(3, kTypeValue, "k", "v");
  mem_->Add(4, kTypeSingleDeletion, "k", "");
  FileMetaData meta;
  ASSERT_TRUE(Flush(20, &meta).ok());
  EXPECT_EQ(meta.file_size, 0u);
  EXPECT_FALSE(FileExists(20));
  VersionEdit edit;
  FlushJob job(options_, dir_.path(), &icmp_, table_cache_.get(), nullptr, mem_, {}, 20);
  ASSERT_TRUE(job.Run().ok());
  job.AddToEdit(&edit);
  EXPECT_TRUE(edit.new_files().empty());
}

TEST_F(TableFileWriterTest, FailedSyncLeavesNoFile) {
  mem_->Add(1, kTypeValue, "a", "1");
  env_.SetFailure(FailOn::kSync, 1);
  FileMetaData meta;
  Status s = Flush(30, &meta);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_FALSE(FileExists(30));
  EXPECT_EQ(meta.file_size, 0u);
}

TEST_F(TableFileWriterTest, FailedCreateAndAppendLeaveNoFile) {
  mem_->Add(1, kTypeValue, "a", std::string(100000, 'x'));
  env_.SetFailure(FailOn::kCreate, 1);
  FileMetaData meta;
  EXPECT_TRUE(Flush(31, &meta).IsIOError());
  EXPECT_FALSE(FileExists(31));
  env_.SetFailure(FailOn::kWrite, 1);
  EXPECT_TRUE(Flush(32, &meta).IsIOError());
  EXPECT_FALSE(FileExists(32));
}

TEST_F(TableFileWriterTest, UseFsyncAndBufferSizeReachTheFile) {
  // Flush and compaction share one writer: both honour use_fsync (the fault env counts
  // Fsync and Sync alike, so check through a wrapper that tells them apart).
  struct CountingFile : public WritableFile {
    std::unique_ptr<WritableFile> base;
    int* fsyncs;
    Status Append(const Slice& d) override { return base->Append(d); }
    Status Close() override { return base->Close(); }
    Status Flush() override { return base->Flush(); }
    Status Sync() override { return base->Sync(); }
    Status Fsync() override {
      ++*fsyncs;
      return base->Fsync();
    }
    uint64_t GetFileSize() override { return base->GetFileSize(); }
  };
  struct CountingEnv : public EnvWrapper {
    using EnvWrapper::EnvWrapper;
    int fsyncs = 0;
    size_t last_buffer = 0;
    Status NewWritableFile(const std::string& f, std::unique_ptr<WritableFile>* r,
                           const EnvOptions& o) override {
      last_buffer = o.writable_file_max_buffer_size;
      auto file = std::make_unique<CountingFile>();
      file->fsyncs = &fsyncs;
      Status s = target()->NewWritableFile(f, &file->base, o);
      if (s.ok()) *r = std::move(file);
      return s;
    }
  } counting(Env::Default());
  options_.env = &counting;
  options_.use_fsync = true;
  options_.writable_file_max_buffer_size = 12345;
  mem_->Add(1, kTypeValue, "a", "1");
  FileMetaData meta;
  ASSERT_TRUE(Flush(40, &meta).ok());
  EXPECT_EQ(counting.fsyncs, 1);
  EXPECT_EQ(counting.last_buffer, 12345u);
}

TEST_F(TableFileWriterTest, FlushOfAMemTableWithAFilterKeepsAKeyFilter) {
  ASSERT_TRUE(mem_->has_filter());
  constexpr int kKeys = 5000;
  SequenceNumber seq = 1;
  for (int i = 0; i < kKeys; i++) {
    const std::string key = "key" + std::to_string(i * 2);
    mem_->Add(seq++, kTypeValue, key, "v");
    if (i % 7 == 0) mem_->Add(seq++, kTypeDeletion, key, "");  // two versions of one key
  }
  FileMetaData meta;
  ASSERT_TRUE(Flush(50, &meta).ok());
  ASSERT_NE(meta.key_filter, nullptr);
  // Every user key is in it (hashed without its sequence and type) ...
  for (int i = 0; i < kKeys; i++) {
    ASSERT_TRUE(meta.key_filter->MayContain(Hash64("key" + std::to_string(i * 2)))) << i;
  }
  // ... at about ten bits a key: near 1% false positives.
  int false_positives = 0;
  for (int i = 0; i < kKeys; i++) {
    false_positives += meta.key_filter->MayContain(Hash64("key" + std::to_string(i * 2 + 1)));
  }
  EXPECT_LT(false_positives, kKeys * 3 / 100);
  EXPECT_LE(meta.key_filter->bytes(), static_cast<size_t>(mem_->num_entries()) * 10 / 8 + 64);
}

TEST_F(TableFileWriterTest, NoKeyFilterWithoutGetsOrBesideTheTablesOwn) {
  // A memtable that kept no filter: Gets were not reaching the memtables.
  MemTable* plain = new MemTable(icmp_, 1 << 20, 0, 0, nullptr, /*with_filter=*/false);
  plain->Ref();
  plain->Add(1, kTypeValue, "a", "1");
  FlushJob job(options_, dir_.path(), &icmp_, table_cache_.get(), nullptr, plain, {}, 60);
  ASSERT_TRUE(job.Run().ok());
  EXPECT_EQ(job.meta().key_filter, nullptr);
  plain->Unref();

  // A table with a filter block of its own needs none in memory.
  BlockBasedTableOptions topts;
  topts.filter_policy.reset(NewBloomFilterPolicy(10));
  options_.table_factory.reset(NewBlockBasedTableFactory(topts));
  mem_->Add(1, kTypeValue, "a", "1");
  FileMetaData meta;
  ASSERT_TRUE(Flush(61, &meta).ok());
  EXPECT_EQ(meta.key_filter, nullptr);

  // A compaction (BuildTable without a key count) keeps none either.
  options_.table_factory.reset(NewBlockBasedTableFactory(BlockBasedTableOptions()));
  std::unique_ptr<InternalIterator> input(mem_->NewIterator());
  input->SeekToFirst();
  CompactionIterator iter(input.get(), BytewiseComparator(), {}, nullptr, nullptr, nullptr, nullptr,
                          nullptr);
  FileMetaData out;
  out.number = 62;
  ASSERT_TRUE(BuildTable(options_, dir_.path(), &icmp_, &iter, 1, false, 0, nullptr, &out).ok());
  EXPECT_GT(out.file_size, 0u);
  EXPECT_EQ(out.key_filter, nullptr);
}

}  // namespace
}  // namespace shale
