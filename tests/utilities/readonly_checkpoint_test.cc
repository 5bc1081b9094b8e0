// A checkpoint of a read-only instance (DB::OpenForReadOnly, utilities/checkpoint/), which
// RocksDB supports: nothing is flushed, so the copy takes the WALs with the table files,
// and the DB's own directory is left as it was.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "shale/db.h"
#include "shale/utilities/checkpoint.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

class ReadOnlyCheckpointTest : public DBTestBase {
 protected:
  ReadOnlyCheckpointTest() : DBTestBase("readonly_checkpoint") {}

  // name -> contents of every file in dir.
  static std::map<std::string, std::string> Files(const std::string& dir) {
    std::vector<std::string> children;
    EXPECT_OK(Env::Default()->GetChildren(dir, &children));
    std::map<std::string, std::string> files;
    for (const std::string& name : children) {
      if (name == "." || name == "..") continue;
      EXPECT_OK(ReadFileToString(Env::Default(), dir + "/" + name, &files[name]));
    }
    return files;
  }
};

TEST_F(ReadOnlyCheckpointTest, CopiesTablesAndWals) {
  Open();
  for (int i = 0; i < 200; i++) ASSERT_OK(Put(Key(i), "flushed"));
  ASSERT_OK(Flush());
  for (int i = 100; i < 300; i++) ASSERT_OK(Put(Key(i), "in the wal"));
  Close();
  const std::map<std::string, std::string> before = Files(dbname_);

  std::unique_ptr<DB> ro;
  ASSERT_OK(DB::OpenForReadOnly(options_, dbname_, &ro));
  Checkpoint* raw = nullptr;
  ASSERT_OK(Checkpoint::Create(ro.get(), &raw));
  std::unique_ptr<Checkpoint> checkpoint(raw);
  TempDirectory parent("readonly_checkpoint_copy");
  const std::string copy = parent.File("copy");
  // log_size_for_flush 0 asks for a flush, which a read-only instance does not make.
  ASSERT_OK(checkpoint->CreateCheckpoint(copy, /*log_size_for_flush=*/0));
  ro.reset();
  EXPECT_TRUE(Files(dbname_) == before) << "the DB's directory changed";

  std::unique_ptr<DB> opened;
  ASSERT_OK(DB::Open(options_, copy, &opened));
  for (int i = 0; i < 300; i++) {
    ASSERT_EQ(ReadValue(opened.get(), Key(i)), i < 100 ? "flushed" : "in the wal") << i;
  }
}

}  // namespace
}  // namespace shale
