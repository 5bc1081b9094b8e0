// The end of the MANIFEST after a crash or damage. An edit is synced before it takes
// effect, so damage with nothing intact after it is the unsynced tail of an edit never
// acknowledged, torn or garbled by a power loss: the DB opens with the edits before it.
// But damage to a durable last edit must not pass for such a tail when what that edit
// allowed has happened (its WAL deleted): Open reports Corruption instead of showing the
// older state with OK.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "db/filename.h"
#include "db/log_format.h"
#include "shale/db.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"
#include "util/coding.h"

namespace shale {
namespace {

class ManifestTailTest : public DBTestBase {
 protected:
  ManifestTailTest() : DBTestBase("manifest_tail") {}

  // A DB holding k=v in an SST file, its WAL deleted by the flush; returns the MANIFEST.
  std::string MakeFlushedDB() {
    EXPECT_OK(TryReopen());
    EXPECT_OK(Put("k", "v"));
    EXPECT_OK(Flush());
    EXPECT_OK(TryClose());
    std::string current;
    EXPECT_OK(ReadFileToString(Env::Default(), CurrentFileName(dbname_), &current));
    return dbname_ + "/" + current.substr(0, current.size() - 1);
  }

  // Status of Open, and k's value when it opens.
  Status OpenAndGet(std::string* value) {
    std::unique_ptr<DB> db;
    Status s = DB::Open(Options(), dbname_, &db);
    if (!s.ok()) return s;
    return db->Get(ReadOptions(), "k", value);
  }

};

TEST_F(ManifestTailTest, GarbageAfterTheLastEditIsAnUnsyncedTail) {
  const std::string manifest = MakeFlushedDB();
  std::string data;
  ASSERT_OK(ReadFileToString(Env::Default(), manifest, &data));
  // A header whose length fits the block and whose checksum is wrong, then garbage: what
  // a power loss leaves of an edit appended but not synced.
  std::string tail(7, '\0');
  EncodeFixed32(&tail[0], 0x12345678);
  tail[4] = 20;
  tail[6] = static_cast<char>(log::kFullType);
  tail += std::string(20, '\x5a');
  ASSERT_OK(WriteStringToFile(Env::Default(), data + tail, manifest, true));
  std::string v;
  ASSERT_OK(OpenAndGet(&v));
  EXPECT_EQ(v, "v");
}

TEST_F(ManifestTailTest, DamagedDurableLastEditIsCorruption) {
  const std::string manifest = MakeFlushedDB();
  std::string data;
  ASSERT_OK(ReadFileToString(Env::Default(), manifest, &data));
  // Find the last record (all records of this small MANIFEST lie in its first block).
  size_t offset = 0, last = 0;
  while (offset + log::kHeaderSize <= data.size()) {
    last = offset;
    offset += log::kHeaderSize + DecodeFixed16(data.data() + offset + 4);
  }
  ASSERT_EQ(offset, data.size());
  // Its length now runs past the end of the file: it reads like a torn write.
  EncodeFixed16(&data[last + 4], 0x6000);
  ASSERT_OK(WriteStringToFile(Env::Default(), data, manifest, true));
  std::string v;
  Status s = OpenAndGet(&v);
  if (s.ok()) {
    EXPECT_EQ(v, "v");
  } else {
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();  // not NotFound: k was flushed
  }
}

}  // namespace
}  // namespace shale
