// Concurrent writers in every write mode (ordered with serial or parallel memtable
// inserts, pipelined, unordered, each with two_write_queues where allowed) x (WAL with
// sync, WAL without sync, disableWAL), checked against a model while readers and a flusher
// run: each thread's own keys exact, shared keys end at one writer's last value, merges
// sum exactly, read-your-own-writes always, batches atomic and snapshots immutable (except
// under unordered_write, which documents otherwise), sequences published monotonically;
// then again after Flush, reopen and CompactRange. Also: Open's refusals, a malformed batch
// failing alone, a failed WAL write failing its group and everything after it, WAL order
// equal to sequence order with two queues.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "db/db_impl.h"
#include "db/filename.h"
#include "db/log_reader.h"
#include "db/write_batch_internal.h"
#include "shale/db.h"
#include "shale/utilities/merge_operators.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"

namespace shale {
namespace {

struct WriteMode {
  const char* name;
  bool concurrent;
  bool pipelined;
  bool unordered;
  bool two_queues;
};

const WriteMode kModes[] = {
    {"Serial", false, false, false, false},
    {"Parallel", true, false, false, false},
    {"Pipelined", true, true, false, false},
    {"Unordered", true, false, true, false},
    {"SerialTwoQueues", false, false, false, true},
    {"ParallelTwoQueues", true, false, false, true},
    {"UnorderedTwoQueues", true, false, true, true},
};

enum class Wal { kSync, kNoSync, kDisabled };

Options ModeOptions(const WriteMode& m) {
  Options o;
  o.create_if_missing = true;
  o.allow_concurrent_memtable_write = m.concurrent;
  o.enable_pipelined_write = m.pipelined;
  o.unordered_write = m.unordered;
  o.two_write_queues = m.two_queues;
  o.merge_operator = MergeOperators::CreateFromStringId("uint64add");
  return o;
}

WriteOptions WalOptions(Wal wal) {
  WriteOptions w;
  w.sync = wal == Wal::kSync;
  w.disableWAL = wal == Wal::kDisabled;
  return w;
}

std::string OwnKey(int t, uint32_t k) {
  return "own" + std::to_string(t) + "_" + std::to_string(k);
}
std::string SharedKey(uint32_t k) { return "shared" + std::to_string(k); }
std::string BatchKey(int t, char part) { return "batch" + std::to_string(t) + part; }
const char kCounter[] = "counter";

constexpr int kWriters = 6;
constexpr uint32_t kOwnKeys = 50;
constexpr uint32_t kSharedKeys = 8;

// What one writer thread did.
struct WriterModel {
  std::map<std::string, std::string> own;  // own and batch keys: present ones
  std::set<std::string> own_deleted;
  std::map<std::string, std::string> last_shared;  // its last value per shared key
  uint64_t merges = 0;
};

class DBWriteModesTest : public DBTestBase,
                         public testing::WithParamInterface<std::tuple<WriteMode, Wal>> {
 protected:
  DBWriteModesTest() : DBTestBase("write_modes") {
    options_ = ModeOptions(mode());
    options_.write_buffer_size = 64 << 10;  // writers switch memtables too, not only the flusher
  }
  const WriteMode& mode() const { return std::get<0>(GetParam()); }
  Wal wal() const { return std::get<1>(GetParam()); }
  // Checks the DB against the writers' models.
  void Verify(const std::vector<WriterModel>& models, const char* when);
};

void DBWriteModesTest::Verify(const std::vector<WriterModel>& models, const char* when) {
  SCOPED_TRACE(when);
  std::map<std::string, std::string> expected;
  std::map<std::string, std::set<std::string>> shared_allowed;
  uint64_t merges = 0;
  for (const WriterModel& m : models) {
    expected.insert(m.own.begin(), m.own.end());
    for (const auto& [k, v] : m.last_shared) shared_allowed[k].insert(v);
    merges += m.merges;
  }
  std::string value;
  for (const auto& [k, v] : expected) {
    ASSERT_OK(db_->Get(ReadOptions(), k, &value)) << k;
    ASSERT_EQ(value, v) << k;
  }
  for (const WriterModel& m : models) {
    for (const std::string& k : m.own_deleted) {
      ASSERT_TRUE(db_->Get(ReadOptions(), k, &value).IsNotFound()) << k;
    }
  }
  for (const auto& [k, allowed] : shared_allowed) {
    ASSERT_OK(db_->Get(ReadOptions(), k, &value)) << k;
    ASSERT_TRUE(allowed.count(value)) << k << " = " << value << ": no writer's last value";
  }
  if (merges > 0) {
    ASSERT_OK(db_->Get(ReadOptions(), kCounter, &value));
    ASSERT_EQ(value.size(), 8u);
    ASSERT_EQ(DecodeFixed64(value.data()), merges);
  }
  // An iterator sees exactly the same keys.
  size_t seen = 0;
  std::unique_ptr<Iterator> it(db_->NewIterator(ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string k = it->key().ToString();
    if (k.rfind("own", 0) == 0 || k.rfind("batch", 0) == 0) {
      auto e = expected.find(k);
      ASSERT_NE(e, expected.end()) << k << " should not exist";
      ASSERT_EQ(it->value().ToString(), e->second) << k;
      seen++;
    }
  }
  ASSERT_OK(it->status());
  ASSERT_EQ(seen, expected.size());
}

TEST_P(DBWriteModesTest, ConcurrentWritersReadersAndFlushesAgainstModel) {
  const uint64_t seed = TestSeed();
  Open();
  const WriteOptions wo = WalOptions(wal());
  const int ops = wal() == Wal::kSync ? 200 : 3000;
  const bool ordered = !mode().unordered;
  std::vector<WriterModel> models(kWriters);
  std::atomic<int> writers_left{kWriters};
  std::atomic<int> failures{0};

  auto writer = [&](int t) {
    Random rnd(static_cast<uint32_t>(seed) + t);
    WriterModel& m = models[t];
    std::string got;
    for (int i = 0; i < ops && failures.load() == 0; i++) {
      const std::string value = "t" + std::to_string(t) + "-" + std::to_string(i);
      const uint32_t r = rnd.Uniform(100);
      Status s;
      std::string check_key;  // read back right after the write
      if (r < 40) {
        check_key = OwnKey(t, rnd.Uniform(kOwnKeys));
        s = db_->Put(wo, check_key, value);
        m.own[check_key] = value;
        m.own_deleted.erase(check_key);
      } else if (r < 50) {
        check_key = OwnKey(t, rnd.Uniform(kOwnKeys));
        s = db_->Delete(wo, check_key);
        m.own.erase(check_key);
        m.own_deleted.insert(check_key);
      } else if (r < 65) {
        const std::string k = SharedKey(rnd.Uniform(kSharedKeys));
        s = db_->Put(wo, k, value);
        m.last_shared[k] = value;
      } else if (r < 80) {
        s = db_->Merge(wo, kCounter, Fixed64String(1));
        m.merges++;
      } else {
        // Three keys in one batch, sometimes with a merge (a serial group).
        WriteBatch b;
        for (char part : {'a', 'b', 'c'}) {
          ASSERT_OK(b.Put(BatchKey(t, part), value));
          m.own[BatchKey(t, part)] = value;
        }
        if (rnd.OneIn(3)) {
          ASSERT_OK(b.Merge(kCounter, Fixed64String(1)));
          m.merges++;
        }
        check_key = BatchKey(t, 'b');
        s = db_->Write(wo, &b);
      }
      if (!s.ok()) {
        ADD_FAILURE() << "write: " << s.ToString();
        failures++;
        break;
      }
      if (!check_key.empty()) {
        // Read-your-own-writes, in every mode.
        Status g = db_->Get(ReadOptions(), check_key, &got);
        auto e = m.own.find(check_key);
        if (e == m.own.end() ? !g.IsNotFound() : (!g.ok() || got != e->second)) {
          ADD_FAILURE() << check_key << ": read " << g.ToString() << " " << got;
          failures++;
        }
      }
    }
    writers_left--;
  };

  auto reader = [&](int r) {
    Random rnd(static_cast<uint32_t>(seed) + 100 + r);
    SequenceNumber last_seq = 0;
    while (writers_left.load() > 0 && failures.load() == 0) {
      const SequenceNumber seq = db_->GetLatestSequenceNumber();
      if (seq < last_seq) {
        ADD_FAILURE() << "published sequence went back from " << last_seq << " to " << seq;
        failures++;
      }
      last_seq = seq;
      const int t = static_cast<int>(rnd.Uniform(kWriters));
      ReadOptions ro;
      ro.snapshot = db_->GetSnapshot();
      std::vector<std::string> first(3), again(3);
      for (int pass = 0; pass < 2; pass++) {
        std::vector<std::string>& out = pass == 0 ? first : again;
        for (int p = 0; p < 3; p++) {
          Status s = db_->Get(ro, BatchKey(t, static_cast<char>('a' + p)), &out[p]);
          if (s.IsNotFound()) out[p] = "<none>";
        }
        if (pass == 0) std::this_thread::yield();
      }
      db_->ReleaseSnapshot(ro.snapshot);
      if (ordered && (first[0] != first[1] || first[1] != first[2])) {
        ADD_FAILURE() << "a batch read in part: " << first[0] << " " << first[1] << " " << first[2];
        failures++;
      }
      if (ordered && first != again) {
        ADD_FAILURE() << "a snapshot changed: " << first[0] << " then " << again[0];
        failures++;
      }
    }
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; t++) threads.emplace_back(writer, t);
  for (int r = 0; r < 2; r++) threads.emplace_back(reader, r);
  threads.emplace_back([&] {
    // Memtable switches while writers and pending inserts are in flight.
    while (writers_left.load() > 0 && failures.load() == 0) {
      Status s = db_->Flush(FlushOptions());
      if (!s.ok()) {
        ADD_FAILURE() << "flush: " << s.ToString();
        failures++;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  for (auto& th : threads) th.join();
  ASSERT_EQ(failures.load(), 0) << "seed " << seed;

  Verify(models, "after the writers");
  ASSERT_OK(db_->Flush(FlushOptions()));
  Verify(models, "after Flush");
  ASSERT_OK(db_->Close());
  Open();
  Verify(models, "after reopen");
  ASSERT_OK(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr));
  Verify(models, "after CompactRange");
}

// Under unordered_write, writers return once their insert is done; a Flush and a reopen
// right after lose nothing (the flush waits for pending inserts of other writers too).
TEST_P(DBWriteModesTest, ReopenRightAfterWritersLosesNothing) {
  Open();
  const WriteOptions wo = WalOptions(wal());
  const int per_thread = wal() == Wal::kSync ? 100 : 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < per_thread; i++) {
        EXPECT_OK(db_->Put(wo, OwnKey(t, i), std::to_string(i)));
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_OK(db_->Close());
  Open();
  for (int t = 0; t < kWriters; t++) {
    for (int i = 0; i < per_thread; i++) {
      std::string v;
      ASSERT_OK(db_->Get(ReadOptions(), OwnKey(t, i), &v)) << OwnKey(t, i);
      ASSERT_EQ(v, std::to_string(i));
    }
  }
}

// A Flush while another writer's insert is still pending (held by a test hook) waits for
// it: the flushed file, or the memtable after it, holds the write, and it survives the WAL
// being retired by the flush (RocksDB's issue 6113 lost such writes).
TEST_P(DBWriteModesTest, FlushWaitsForPendingInsert) {
  Open();
  auto* impl = static_cast<DBImpl*>(db_.get());
  std::atomic<bool> in_hook{false};
  std::atomic<bool> held{false};
  impl->TEST_SetBeforeMemtableInsert([&] {
    if (held.exchange(true)) return;  // hold the first insert only
    in_hook = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  });
  const WriteOptions wo = WalOptions(wal());
  ASSERT_OK(db_->Put(wo, "before", "v"));  // the held one, inline
  held = false;
  in_hook = false;
  std::thread writer([&] { EXPECT_OK(db_->Put(wo, "pending", "v")); });
  while (!in_hook.load()) std::this_thread::yield();
  ASSERT_OK(db_->Flush(FlushOptions()));
  writer.join();
  ASSERT_OK(db_->Put(wo, "after", "v"));
  ASSERT_OK(db_->Flush(FlushOptions()));
  ASSERT_OK(db_->Close());
  Open();
  std::string v;
  for (const char* k : {"before", "pending", "after"}) {
    ASSERT_OK(db_->Get(ReadOptions(), k, &v)) << k;
  }
}

std::string ParamName(const testing::TestParamInfo<std::tuple<WriteMode, Wal>>& info) {
  static const char* wal[] = {"SyncWal", "Wal", "NoWal"};
  return std::string(std::get<0>(info.param).name) + wal[static_cast<int>(std::get<1>(info.param))];
}

INSTANTIATE_TEST_SUITE_P(AllModes, DBWriteModesTest,
                         testing::Combine(testing::ValuesIn(kModes),
                                          testing::Values(Wal::kSync, Wal::kNoSync,
                                                          Wal::kDisabled)),
                         ParamName);

TEST(DBWriteModesOpenTest, RefusesWhatRocksDBRefuses) {
  TempDirectory dir("write_modes_open");
  struct Case {
    bool concurrent, pipelined, unordered, two_queues;
    size_t max_successive_merges;
    bool invalid_argument;  // else NotSupported
    const char* message;
  };
  const Case cases[] = {
      {false, false, true, false, 0, true,
       "unordered_write is incompatible with !allow_concurrent_memtable_write"},
      {true, true, true, false, 0, true,
       "unordered_write is incompatible with enable_pipelined_write"},
      {true, false, true, false, 2, true,
       "max_successive_merges > 0 is incompatible with unordered_write"},
      {true, true, false, true, 0, false,
       "pipelined_writes is not compatible with concurrent prepares"},
  };
  for (const Case& c : cases) {
    Options o;
    o.create_if_missing = true;
    o.allow_concurrent_memtable_write = c.concurrent;
    o.enable_pipelined_write = c.pipelined;
    o.unordered_write = c.unordered;
    o.two_write_queues = c.two_queues;
    o.max_successive_merges = c.max_successive_merges;
    std::unique_ptr<DB> db;
    Status s = DB::Open(o, dir.File("db"), &db);
    EXPECT_EQ(db, nullptr);
    EXPECT_EQ(c.invalid_argument ? s.IsInvalidArgument() : s.IsNotSupported(), true)
        << s.ToString();
    EXPECT_NE(s.ToString().find(c.message), std::string::npos) << s.ToString();
  }
  // The combinations that are allowed open.
  for (const WriteMode& m : kModes) {
    std::unique_ptr<DB> db;
    EXPECT_OK(DB::Open(ModeOptions(m), dir.File(m.name), &db)) << m.name;
  }
}

// A batch whose bytes are malformed, or that names a column family that does not exist,
// fails for its own writer, before the WAL; the writers around it succeed, the DB keeps
// taking writes, and the WAL reopens in the strictest recovery mode.
TEST(DBWriteModesErrorTest, MalformedBatchFailsAlone) {
  for (const WriteMode& m : kModes) {
    SCOPED_TRACE(m.name);
    TempDirectory dir("write_modes_bad_batch");
    Options o = ModeOptions(m);
    o.wal_recovery_mode = WALRecoveryMode::kAbsoluteConsistency;
    std::unique_ptr<DB> db;
    ASSERT_OK(DB::Open(o, dir.File("db"), &db));
    std::atomic<int> bad_ok{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 300; i++) {
          if (t == 0 && i % 3 == 0) {
            WriteBatch good;
            ASSERT_OK(good.Put("x", "y"));
            std::string rep = WriteBatchInternal::Contents(&good).ToString();
            EncodeFixed32(rep.data() + 8, 2);  // claims two records, holds one
            WriteBatch bad_count(rep);
            Status s = db->Write(WriteOptions(), &bad_count);
            if (!s.IsCorruption()) bad_ok++;
            rep = WriteBatchInternal::Contents(&good).ToString();
            rep[WriteBatchInternal::kHeader] = static_cast<char>(0x7f);  // unknown tag
            WriteBatch bad_tag(rep);
            if (!db->Write(WriteOptions(), &bad_tag).IsCorruption()) bad_ok++;
            // Column family 7 (tag 0x5: a value in a column family).
            std::string cf_rep(WriteBatchInternal::kHeader, '\0');
            EncodeFixed32(cf_rep.data() + 8, 1);
            cf_rep.push_back(static_cast<char>(0x5));
            PutVarint32(&cf_rep, 7);
            PutLengthPrefixedSlice(&cf_rep, "k");
            PutLengthPrefixedSlice(&cf_rep, "v");
            WriteBatch bad_cf(cf_rep);
            if (!db->Write(WriteOptions(), &bad_cf).IsInvalidArgument()) bad_ok++;
          } else {
            ASSERT_OK(db->Put(WriteOptions(), OwnKey(t, i), "v"));
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(bad_ok.load(), 0);
    ASSERT_OK(db->Put(WriteOptions(), "after", "still writable"));
    ASSERT_OK(db->Close());
    db.reset();
    ASSERT_OK(DB::Open(o, dir.File("db"), &db));
    std::string v;
    for (int t = 1; t < 4; t++) {
      ASSERT_OK(db->Get(ReadOptions(), OwnKey(t, 299), &v));
    }
    EXPECT_TRUE(db->Get(ReadOptions(), "k", &v).IsNotFound());
    EXPECT_TRUE(db->Get(ReadOptions(), "x", &v).IsNotFound());
  }
}

// A WAL append that fails fails every writer of its group and every write after it; what
// was acknowledged before it is there after a reopen.
TEST(DBWriteModesErrorTest, FailedWalWriteFailsGroupAndLaterWrites) {
  for (const WriteMode& m : kModes) {
    SCOPED_TRACE(m.name);
    TempDirectory dir("write_modes_wal_error");
    FaultInjectionTestEnv env(Env::Default());
    Options o = ModeOptions(m);
    o.env = &env;
    std::unique_ptr<DB> db;
    ASSERT_OK(DB::Open(o, dir.File("db"), &db));
    env.SetFailure(FailOn::kWrite, 200, FailMode::kFromNth, ".log");
    std::mutex mu;
    std::set<std::string> acked;
    std::atomic<int> ok_after_failure{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++) {
      threads.emplace_back([&, t] {
        bool failed = false;
        for (int i = 0; i < 400; i++) {
          const std::string k = OwnKey(t, i);
          Status s = db->Put(WriteOptions(), k, "v");
          if (s.ok()) {
            if (failed) ok_after_failure++;
            std::lock_guard<std::mutex> l(mu);
            acked.insert(k);
          } else {
            failed = true;
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(ok_after_failure.load(), 0);
    EXPECT_LT(acked.size(), 1600u);
    EXPECT_NOK(db->Put(WriteOptions(), "later", "v"));
    db->Close().PermitUncheckedError();
    db.reset();
    env.ClearFailure(FailOn::kWrite);
    ASSERT_OK(DB::Open(o, dir.File("db"), &db));
    std::string v;
    for (const std::string& k : acked) {
      ASSERT_OK(db->Get(ReadOptions(), k, &v)) << k;
    }
  }
}

// With two write queues, WAL-only writes (no keys) run beside the main queue; the WAL
// holds every record in sequence order without holes or overlaps, and every blob once.
// Calls fn(file name, batch) for every record of every WAL in dbdir, in file then record
// order.
void ForEachWalBatch(const std::string& dbdir,
                     const std::function<void(const std::string&, const WriteBatch&)>& fn) {
  std::vector<std::string> children;
  ASSERT_OK(Env::Default()->GetChildren(dbdir, &children));
  std::sort(children.begin(), children.end());
  for (const std::string& name : children) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(name, &number, &type) || type != kWalFile) continue;
    std::unique_ptr<SequentialFile> file;
    ASSERT_OK(Env::Default()->NewSequentialFile(dbdir + "/" + name, &file, EnvOptions()));
    log::Reader reader(std::move(file), nullptr, true, number, name);
    std::string scratch;
    Slice record;
    while (reader.ReadRecord(&record, &scratch, WALRecoveryMode::kAbsoluteConsistency)) {
      WriteBatch b;
      ASSERT_OK(WriteBatchInternal::SetContents(&b, record));
      fn(name, b);
    }
  }
}

// The PutLogData blobs of the batches it iterates, and how many came twice.
struct BlobCounter : WriteBatch::Handler {
  std::set<std::string> blobs;
  int duplicates = 0;
  void LogData(const Slice& blob) override {
    if (!blobs.insert(blob.ToString()).second) duplicates++;
  }
};

TEST(DBWriteModesTwoQueuesTest, WalOrderIsSequenceOrder) {
  for (bool unordered : {false, true}) {
    SCOPED_TRACE(unordered ? "unordered" : "ordered");
    TempDirectory dir("write_modes_two_queues");
    Options o = ModeOptions({"", true, false, unordered, true});
    o.write_buffer_size = 64 << 20;  // one WAL
    std::unique_ptr<DB> db;
    ASSERT_OK(DB::Open(o, dir.File("db"), &db));
    auto* impl = static_cast<DBImpl*>(db.get());
    constexpr int kThreads = 6;
    constexpr int kOps = 1000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kOps; i++) {
          if (t % 2 == 0) {
            WriteBatch b;
            ASSERT_OK(b.Put(OwnKey(t, i), "v"));
            if (i % 2 == 0) {
              ASSERT_OK(b.Put(OwnKey(t, i) + "x", "v"));
            }
            ASSERT_OK(db->Write(WriteOptions(), &b));
          } else {
            WriteBatch b;
            ASSERT_OK(b.PutLogData("blob" + std::to_string(t) + "_" + std::to_string(i)));
            ASSERT_OK(impl->TEST_WriteWalOnly(WriteOptions(), &b));
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    WriteBatch with_key;
    ASSERT_OK(with_key.Put("k", "v"));
    EXPECT_TRUE(impl->TEST_WriteWalOnly(WriteOptions(), &with_key).IsInvalidArgument());
    const SequenceNumber last = db->GetLatestSequenceNumber();
    ASSERT_OK(db->Close());
    db.reset();

    BlobCounter counter;
    SequenceNumber next = 0;
    std::set<std::string> logs;
    ForEachWalBatch(dir.File("db"), [&](const std::string& name, const WriteBatch& b) {
      const SequenceNumber seq = WriteBatchInternal::Sequence(&b);
      if (next == 0) next = seq;
      ASSERT_EQ(seq, next) << "record out of sequence order in " << name;
      next += WriteBatchInternal::Count(&b);
      ASSERT_OK(b.Iterate(&counter));
      logs.insert(name);
    });
    if (HasFatalFailure()) return;
    EXPECT_EQ(logs.size(), 1u);
    EXPECT_EQ(next - 1, last);
    EXPECT_EQ(counter.duplicates, 0);
    EXPECT_EQ(counter.blobs.size(), size_t{kThreads / 2} * kOps);
    EXPECT_EQ(last, uint64_t{kThreads / 2} * kOps * 3 / 2);
  }
}

// A batch of PutLogData blobs alone reaches the WAL (for the WAL's readers, as RocksDB's
// does), takes no sequence number and changes nothing else; with disableWAL it does nothing.
TEST_P(DBWriteModesTest, LogDataAloneReachesTheWal) {
  Open();
  ASSERT_OK(db_->Put(WriteOptions(), "k", "v"));
  const SequenceNumber before = db_->GetLatestSequenceNumber();
  WriteBatch blobs;
  ASSERT_OK(blobs.PutLogData("blob-1"));
  ASSERT_OK(blobs.PutLogData("blob-2"));
  ASSERT_OK(db_->Write(WriteOptions(), &blobs));
  WriteBatch unlogged;
  ASSERT_OK(unlogged.PutLogData("blob-unlogged"));
  WriteOptions no_wal;
  no_wal.disableWAL = true;
  ASSERT_OK(db_->Write(no_wal, &unlogged));
  EXPECT_EQ(before, db_->GetLatestSequenceNumber());
  ASSERT_OK(db_->Close());
  db_.reset();
  BlobCounter counter;
  ForEachWalBatch(dbname_,
                  [&](const std::string&, const WriteBatch& b) { ASSERT_OK(b.Iterate(&counter)); });
  EXPECT_EQ((std::set<std::string>{"blob-1", "blob-2"}), counter.blobs);
  Open();
  EXPECT_EQ(before, db_->GetLatestSequenceNumber());
  EXPECT_EQ("v", Get("k"));
}

}  // namespace
}  // namespace shale
