// Point-in-time recovery across several WAL files: damage at the end of a WAL that is not
// the newest (an incomplete record, or a corrupted one) must never let recovery replay a
// later WAL whose sequence numbers do not continue from the last batch replayed, or the
// DB would show a hole: later writes without an earlier one.
//
// The WAL files are written by hand with log::Writer, numbered past every file the DB
// has made, as if the DB had switched memtables without flushing before a crash.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "db/filename.h"
#include "db/log_writer.h"
#include "db/write_batch_internal.h"
#include "shale/db.h"
#include "shale/write_batch.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

struct Entry {
  SequenceNumber seq;
  std::string key;
};

// Writes WAL `number` holding one single-Put batch (value "v-<key>") per entry.
void WriteWal(const std::string& dbname, uint64_t number, const std::vector<Entry>& entries) {
  std::unique_ptr<WritableFile> file;
  ASSERT_OK(Env::Default()->NewWritableFile(LogFileName(dbname, number), &file, EnvOptions()));
  log::Writer writer(std::move(file), number);
  for (const Entry& e : entries) {
    WriteBatch batch;
    ASSERT_OK(batch.Put(e.key, "v-" + e.key));
    WriteBatchInternal::SetSequence(&batch, e.seq);
    ASSERT_OK(writer.AddRecord(WriteBatchInternal::Contents(&batch)));
  }
  ASSERT_OK(writer.Sync(false));
  ASSERT_OK(writer.Close());
}

enum class Damage { kTornTail, kCorruptLastRecord };

class PitRecoveryTest : public DBTestBase, public ::testing::WithParamInterface<Damage> {
 protected:
  PitRecoveryTest() : DBTestBase("pit_recovery") {}
  // An empty DB, closed: the cases add WAL files by hand and open it themselves.
  void SetUp() override {
    Open();
    Close();
  }

  // WAL 1000 holds a@1 b@2 c@3, damaged in c; WAL 1001 starts at `next_seq` with d.
  void MakeWals(SequenceNumber next_seq) {
    WriteWal(dbname_, 1000, {{1, "a"}, {2, "b"}, {3, "c"}});
    const std::string old_wal = LogFileName(dbname_, 1000);
    if (GetParam() == Damage::kTornTail) {
      uint64_t size = 0;
      ASSERT_OK(Env::Default()->GetFileSize(old_wal, &size));
      ASSERT_OK(TruncateFileTo(old_wal, size - 3));
    } else {
      ASSERT_OK(CorruptFile(old_wal, -2, 1));  // a byte of c's value: its checksum fails
    }
    WriteWal(dbname_, 1001, {{next_seq, "d"}, {next_seq + 1, "e"}});
  }

  // Opens with point-in-time recovery and returns which of a..e are there.
  std::string Present() {
    Options options;
    options.wal_recovery_mode = WALRecoveryMode::kPointInTimeRecovery;
    std::unique_ptr<DB> db;
    Status s = DB::Open(options, dbname_, &db);
    EXPECT_OK(s);
    if (!s.ok()) return "open failed";
    std::string present;
    for (const char* k : {"a", "b", "c", "d", "e"}) {
      std::string v;
      Status g = db->Get(ReadOptions(), k, &v);
      if (g.ok()) {
        EXPECT_EQ(v, std::string("v-") + k);
        present += k;
      } else {
        EXPECT_TRUE(g.IsNotFound()) << g.ToString();
      }
    }
    return present;
  }

};

// c (sequence 3) is lost with the damage; d starts at 4: replaying it would show d and e
// without c.
TEST_P(PitRecoveryTest, StopsBeforeALaterWalThatWouldLeaveAHole) {
  MakeWals(4);
  EXPECT_EQ(Present(), "ab");
}

// The later WAL continues at 3, right after b: nothing is missing between them, so
// recovery goes on (as RocksDB does for a DB reopened after a point-in-time recovery).
TEST_P(PitRecoveryTest, ContinuesIntoALaterWalThatFollowsOn) {
  MakeWals(3);
  EXPECT_EQ(Present(), "abde");
}

INSTANTIATE_TEST_SUITE_P(Damages, PitRecoveryTest,
                         ::testing::Values(Damage::kTornTail, Damage::kCorruptLastRecord),
                         [](const ::testing::TestParamInfo<Damage>& info) {
                           return info.param == Damage::kTornTail ? std::string("TornTail")
                                                                  : std::string("CorruptRecord");
                         });

}  // namespace
}  // namespace shale
