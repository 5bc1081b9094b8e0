// Checkpoint (utilities/checkpoint/): the copy opens as the DB was at the cut, in every
// column family, while writers, flushes and compactions go on in the source; the source
// is unaffected by the copy and by what is later done to it.
#include "shale/utilities/checkpoint.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "shale/db.h"
#include "shale/utilities/transaction_db.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

const std::vector<std::string> kFamilies = {kDefaultColumnFamilyName, "one", "two"};

// A DB with the families of kFamilies, opened (and created) in a directory.
struct FamilyDB {
  std::unique_ptr<DB> db;
  std::vector<ColumnFamilyHandle*> handles;

  Status Open(const Options& options, const std::string& path) {
    DBOptions db_options(options);
    db_options.create_missing_column_families = true;
    std::vector<ColumnFamilyDescriptor> descriptors;
    for (const std::string& name : kFamilies) descriptors.emplace_back(name, options);
    return DB::Open(db_options, path, descriptors, &handles, &db);
  }
  void Close() {
    for (ColumnFamilyHandle* h : handles) EXPECT_OK(db->DestroyColumnFamilyHandle(h));
    handles.clear();
    if (db != nullptr) EXPECT_OK(db->Close());
    db.reset();
  }
  ~FamilyDB() {
    if (db != nullptr) Close();
  }
  // Every key and value of family f.
  std::map<std::string, std::string> Contents(size_t f, const Snapshot* snapshot = nullptr) {
    ReadOptions ro;
    ro.snapshot = snapshot;
    std::unique_ptr<Iterator> it(db->NewIterator(ro, handles[f]));
    std::map<std::string, std::string> all;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      all[it->key().ToString()] = it->value().ToString();
    }
    EXPECT_OK(it->status());
    return all;
  }
};

class CheckpointTest : public ::testing::Test {
 protected:
  CheckpointTest() {
    options_.create_if_missing = true;
    options_.write_buffer_size = 64 << 10;
    options_.level0_file_num_compaction_trigger = 2;
    options_.target_file_size_base = 64 << 10;
    options_.max_bytes_for_level_base = 256 << 10;
  }

  std::string CheckpointDir(const std::string& name) { return dir_.File(name); }

  std::unique_ptr<Checkpoint> MakeCheckpoint(DB* db) {
    Checkpoint* raw = nullptr;
    EXPECT_OK(Checkpoint::Create(db, &raw));
    return std::unique_ptr<Checkpoint>(raw);
  }

  TempDirectory dir_{"checkpoint"};
  Options options_;
};

bool SameInode(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_ino == sb.st_ino &&
         sa.st_dev == sb.st_dev;
}

TEST_F(CheckpointTest, CopyOpensWithEveryFamilyAsTheSourceWas) {
  FamilyDB src;
  ASSERT_OK(src.Open(options_, dir_.File("db")));
  for (int i = 0; i < 300; i++) {
    for (size_t f = 0; f < kFamilies.size(); f++) {
      ASSERT_OK(
          src.db->Put(WriteOptions(), src.handles[f], Key(i), kFamilies[f] + std::to_string(i)));
    }
    if (i == 100) ASSERT_OK(src.db->Flush(FlushOptions(), src.handles[1]));
  }
  ASSERT_OK(src.db->Delete(WriteOptions(), src.handles[2], Key(7)));
  std::vector<std::map<std::string, std::string>> before;
  for (size_t f = 0; f < kFamilies.size(); f++) before.push_back(src.Contents(f));

  // No flush (the WALs carry the memtables), then the default (flush first).
  for (uint64_t log_size_for_flush : {uint64_t{1} << 40, uint64_t{0}}) {
    SCOPED_TRACE(log_size_for_flush);
    const std::string dir = CheckpointDir("cp" + std::to_string(log_size_for_flush));
    std::unique_ptr<Checkpoint> cp = MakeCheckpoint(src.db.get());
    uint64_t seq = 0;
    ASSERT_OK(cp->CreateCheckpoint(dir, log_size_for_flush, &seq));
    EXPECT_EQ(src.db->GetLatestSequenceNumber(), seq);
    EXPECT_TRUE(Env::Default()->FileExists(dir + ".tmp").IsNotFound());

    // Table files are the source's own, hard-linked.
    std::vector<LiveFileMetaData> live;
    src.db->GetLiveFilesMetaData(&live);
    ASSERT_FALSE(live.empty());
    for (const LiveFileMetaData& m : live) {
      EXPECT_TRUE(SameInode(m.directory + m.name, dir + m.name)) << m.name;
    }

    FamilyDB copy;
    ASSERT_OK(copy.Open(options_, dir));
    for (size_t f = 0; f < kFamilies.size(); f++) {
      EXPECT_EQ(before[f], copy.Contents(f)) << kFamilies[f];
    }
    EXPECT_EQ(seq, copy.db->GetLatestSequenceNumber());
  }
  // The source goes on as it was.
  for (size_t f = 0; f < kFamilies.size(); f++) EXPECT_EQ(before[f], src.Contents(f));
}

TEST_F(CheckpointTest, ExistingDirectoryIsRefusedAndAStaleStagingDirectoryIsReplaced) {
  FamilyDB src;
  ASSERT_OK(src.Open(options_, dir_.File("db")));
  ASSERT_OK(src.db->Put(WriteOptions(), "k", "v"));
  std::unique_ptr<Checkpoint> cp = MakeCheckpoint(src.db.get());

  const std::string taken = CheckpointDir("taken");
  ASSERT_OK(Env::Default()->CreateDir(taken));
  Status s = cp->CreateCheckpoint(taken);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_TRUE(Env::Default()->FileExists(taken + "/CURRENT").IsNotFound());

  // What a crash before the rename leaves: the staging directory with some files.
  const std::string dir = CheckpointDir("cp");
  ASSERT_OK(Env::Default()->CreateDir(dir + ".tmp"));
  ASSERT_OK(WriteStringToFile(Env::Default(), "junk", dir + ".tmp/000001.sst", false));
  ASSERT_OK(cp->CreateCheckpoint(dir + "/"));  // a trailing slash names the same directory
  EXPECT_TRUE(Env::Default()->FileExists(dir + ".tmp").IsNotFound());
  FamilyDB copy;
  ASSERT_OK(copy.Open(options_, dir));
  EXPECT_EQ("v", ReadValue(copy.db.get(), "k"));
}

TEST_F(CheckpointTest, CopyAndSourceGoTheirOwnWays) {
  FamilyDB src;
  ASSERT_OK(src.Open(options_, dir_.File("db")));
  for (int i = 0; i < 2000; i++) {
    ASSERT_OK(src.db->Put(WriteOptions(), src.handles[i % 3], Key(i), std::string(100, 'a')));
  }
  ASSERT_OK(src.db->WaitForCompact(WaitForCompactOptions()));
  std::vector<std::map<std::string, std::string>> before;
  for (size_t f = 0; f < kFamilies.size(); f++) before.push_back(src.Contents(f));

  const std::string dir = CheckpointDir("cp");
  ASSERT_OK(MakeCheckpoint(src.db.get())->CreateCheckpoint(dir));
  {
    // Rewrite and compact everything in the copy: its links to the source's files go.
    FamilyDB copy;
    ASSERT_OK(copy.Open(options_, dir));
    for (size_t f = 0; f < kFamilies.size(); f++) {
      for (int i = 0; i < 2000; i += 3) {
        ASSERT_OK(copy.db->Put(WriteOptions(), copy.handles[f], Key(i), "copy"));
      }
      ASSERT_OK(copy.db->CompactRange(CompactRangeOptions(), copy.handles[f], nullptr, nullptr));
    }
  }
  for (size_t f = 0; f < kFamilies.size(); f++) EXPECT_EQ(before[f], src.Contents(f));
  src.Close();
  ASSERT_OK(src.Open(options_, dir_.File("db")));
  for (size_t f = 0; f < kFamilies.size(); f++) EXPECT_EQ(before[f], src.Contents(f));
}

// Writers put the same key and value into every family with one batch, numbering their
// writes; flushes and compactions run meanwhile. The checkpoint must hold, per writer, a
// prefix of its writes (no later write without an earlier one), the same one in every
// family, at least everything acknowledged before CreateCheckpoint was called, and
// nothing past what was written when it returned.
TEST_F(CheckpointTest, ConsistentCutWhileWritersFlushesAndCompactionsGoOn) {
  const uint64_t seed = TestSeed();
  FamilyDB src;
  ASSERT_OK(src.Open(options_, dir_.File("db")));
  constexpr int kWriters = 3;
  constexpr int kRounds = 3;
  std::atomic<bool> stop{false};
  std::vector<std::atomic<int>> acknowledged(kWriters);
  auto value_of = [seed](int w, int i) {
    std::mt19937_64 rng(seed ^ (uint64_t(w) << 32) ^ uint64_t(i));
    return std::string(20 + rng() % 200, static_cast<char>('a' + rng() % 26));
  };
  auto key_of = [](int w, int i) { return "w" + std::to_string(w) + "-" + Key(i); };
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; w++) {
    writers.emplace_back([&, w] {
      for (int i = 0; !stop.load(); i++) {
        WriteBatch batch;
        for (ColumnFamilyHandle* h : src.handles) {
          ASSERT_OK(batch.Put(h, key_of(w, i), value_of(w, i)));
        }
        ASSERT_OK(src.db->Write(WriteOptions(), &batch));
        acknowledged[w].store(i + 1);
      }
    });
  }
  std::thread compactor([&] {
    while (!stop.load()) {
      ASSERT_OK(src.db->CompactRange(CompactRangeOptions(), src.handles[1], nullptr, nullptr));
    }
  });
  // Stops and joins the threads however the test body ends (a failed ASSERT returns).
  struct Joiner {
    std::atomic<bool>* stop;
    std::vector<std::thread>* threads;
    ~Joiner() {
      stop->store(true);
      for (std::thread& t : *threads) t.join();
    }
  } joiner{&stop, &writers};
  writers.push_back(std::move(compactor));

  for (int round = 0; round < kRounds; round++) {
    while (acknowledged[0].load() < 300 * (round + 1)) std::this_thread::yield();
    std::vector<int> floor(kWriters);
    for (int w = 0; w < kWriters; w++) floor[w] = acknowledged[w].load();
    const std::string dir = CheckpointDir("cp" + std::to_string(round));
    // Alternate between flushing first and carrying the memtables in the WALs.
    const uint64_t log_size_for_flush = round % 2 == 0 ? 0 : uint64_t{1} << 40;
    ASSERT_OK(MakeCheckpoint(src.db.get())->CreateCheckpoint(dir, log_size_for_flush));
    std::vector<int> ceiling(kWriters);
    for (int w = 0; w < kWriters; w++) ceiling[w] = acknowledged[w].load() + 1;

    // The newest WAL was copied while writes landed in it: cut back to whole records, it
    // opens even where recovery refuses a torn tail.
    Options strict = options_;
    strict.wal_recovery_mode = WALRecoveryMode::kAbsoluteConsistency;
    FamilyDB copy;
    ASSERT_OK(copy.Open(strict, dir));
    std::vector<std::map<std::string, std::string>> families;
    for (size_t f = 0; f < kFamilies.size(); f++) families.push_back(copy.Contents(f));
    for (size_t f = 1; f < kFamilies.size(); f++) {
      EXPECT_EQ(families[0], families[f]) << "round " << round << " family " << kFamilies[f];
    }
    for (int w = 0; w < kWriters; w++) {
      int n = 0;
      while (families[0].count(key_of(w, n)) > 0) {
        ASSERT_EQ(value_of(w, n), families[0][key_of(w, n)]) << key_of(w, n);
        n++;
      }
      EXPECT_GE(n, floor[w]) << "round " << round << " writer " << w;
      EXPECT_LE(n, ceiling[w]) << "round " << round << " writer " << w;
      // Nothing past the prefix.
      auto it = families[0].lower_bound("w" + std::to_string(w) + "-");
      size_t of_writer = 0;
      for (; it != families[0].end() && it->first.rfind("w" + std::to_string(w) + "-", 0) == 0;
           ++it) {
        of_writer++;
      }
      EXPECT_EQ(static_cast<size_t>(n), of_writer) << "round " << round << " writer " << w;
    }
  }
}

TEST_F(CheckpointTest, OfATransactionDB) {
  TransactionDBOptions txn_options;
  TransactionDB* raw = nullptr;
  ASSERT_OK(TransactionDB::Open(options_, txn_options, dir_.File("txn"), &raw));
  std::unique_ptr<TransactionDB> txn_db(raw);
  std::unique_ptr<Transaction> txn(txn_db->BeginTransaction(WriteOptions()));
  ASSERT_OK(txn->Put("a", "1"));
  ASSERT_OK(txn->Commit());
  const std::string dir = CheckpointDir("cp");
  ASSERT_OK(MakeCheckpoint(txn_db.get())->CreateCheckpoint(dir));
  std::unique_ptr<DB> copy;
  ASSERT_OK(DB::Open(options_, dir, &copy));
  std::string value;
  ASSERT_OK(copy->Get(ReadOptions(), "a", &value));
  EXPECT_EQ("1", value);
}

}  // namespace
}  // namespace shale
