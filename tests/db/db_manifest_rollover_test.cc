// The MANIFEST rolled over by size (DBOptions::max_manifest_file_size): a new MANIFEST
// holding the whole tree replaces the old one, CURRENT is switched to it and the old one is
// deleted. The limit decides when (never under the default in a short run, at every edit
// with 0, after a few edits with 1 KiB); a reopen finds the tree every rollover described,
// and a power loss at any file-system call of a rollover loses no flushed data.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "db/filename.h"
#include "shale/db.h"
#include "tests/testutil/db_test_base.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

class ManifestRolloverTest : public DBTestBase {
 protected:
  ManifestRolloverTest() : DBTestBase("manifest_rollover") {
    options_.disable_auto_compactions = true;
  }

  // The MANIFEST files in the DB directory.
  std::vector<std::string> Manifests(Env* env) {
    std::vector<std::string> children;
    EXPECT_OK(env->GetChildren(dbname_, &children));
    std::vector<std::string> manifests;
    for (const std::string& name : children) {
      uint64_t number;
      FileType type;
      if (ParseFileName(name, &number, &type) && type == kDescriptorFile) {
        manifests.push_back(name);
      }
    }
    return manifests;
  }

  // The MANIFEST CURRENT names, after checking that it is the only one in the directory.
  std::string OnlyManifest() {
    std::string current;
    EXPECT_OK(ReadFileToString(Env::Default(), CurrentFileName(dbname_), &current));
    EXPECT_FALSE(current.empty());
    current.resize(current.size() - 1);  // the newline
    EXPECT_EQ(Manifests(Env::Default()), std::vector<std::string>{current})
        << "an old MANIFEST left behind, or CURRENT naming another";
    return current;
  }

  // The files per level are `files`, and a reopen (which writes a new MANIFEST from the
  // last one) finds the same files and contents.
  void ExpectSameTreeAfterReopen(const std::string& files) {
    EXPECT_EQ(FilesPerLevel(), files);
    const std::string contents = Contents();
    Reopen();
    EXPECT_EQ(Contents(), contents);
    EXPECT_EQ(FilesPerLevel(), files);
    OnlyManifest();
  }

  // Writes and flushes `flushes` L0 files of two keys each (key numbers from *next), and
  // returns how many distinct MANIFESTs were live after them.
  size_t FlushAndCountManifests(int flushes, int* next) {
    std::set<std::string> seen{OnlyManifest()};
    for (int i = 0; i < flushes; i++) {
      EXPECT_OK(Put(Key((*next)++), std::to_string(i)));
      EXPECT_OK(Put(Key((*next)++), std::to_string(i)));
      EXPECT_OK(Flush());
      seen.insert(OnlyManifest());
    }
    return seen.size();
  }
};

TEST_F(ManifestRolloverTest, DefaultLimitKeepsOneManifest) {
  Open();
  int next = 0;
  EXPECT_EQ(FlushAndCountManifests(20, &next), 1u);
}

TEST_F(ManifestRolloverTest, ZeroLimitsRollOverAtEveryEditAndReopenGivesTheSameTree) {
  options_.max_manifest_file_size = 0;
  Open();
  int next = 0;
  // The MANIFEST Open wrote, then one per flush.
  EXPECT_EQ(FlushAndCountManifests(12, &next), 13u);
  ASSERT_OK(CompactAll());
  OnlyManifest();
  EXPECT_OK(Put(Key(next++), "after the compaction"));
  EXPECT_EQ(FlushAndCountManifests(3, &next), 4u);
  ExpectSameTreeAfterReopen("3,1");
}

TEST_F(ManifestRolloverTest, SmallLimitRollsOverSeveralTimes) {
  // A dozen flushes' edits fill it; once the tree's description passes it alone, every
  // edit starts a new MANIFEST (RocksDB's hard limit).
  options_.max_manifest_file_size = 1024;
  Open();
  int next = 0;
  std::set<std::string> seen;
  std::string previous = OnlyManifest();
  uint64_t largest = 0;
  for (int i = 0; i < 60; i++) {
    ASSERT_OK(Put(Key(next++), "v"));
    ASSERT_OK(Flush());
    const std::string manifest = OnlyManifest();
    uint64_t size = 0;
    ASSERT_OK(Env::Default()->GetFileSize(dbname_ + "/" + manifest, &size));
    // Appended to only while under the limit, and a flush's edit is well under 1 KiB.
    if (manifest == previous) {
      EXPECT_LT(size, 2048u) << "flush " << i;
    }
    previous = manifest;
    seen.insert(manifest);
    largest = std::max(largest, size);
  }
  EXPECT_GE(seen.size(), 10u);
  EXPECT_GT(largest, 1024u);
  ExpectSameTreeAfterReopen("60");
}

// A power loss after each of the first n file-system calls of a flush that rolls the MANIFEST
// over: the DB opens, every earlier flush's keys are there, and the flushed keys (written
// without the WAL, so only the flush can keep them) are there if the flush was
// acknowledged, all or none otherwise.
TEST_F(ManifestRolloverTest, PowerLossAtEveryCallOfARollover) {
  FaultInjectionTestEnv* env = UseFaultInjectionEnv();
  options_.max_manifest_file_size = 0;
  WriteOptions no_wal;
  no_wal.disableWAL = true;
  int round = 0;
  bool flushed = false;
  for (int n = 0; !flushed; n++) {
    ASSERT_LT(n, 200) << "the flush never got through";
    SCOPED_TRACE("power lost after " + std::to_string(n) + " calls");
    Open();
    // Durable before the round: earlier rounds' keys and two flushed files of this one.
    ASSERT_OK(Put(Key(4 * round), "x", no_wal));
    ASSERT_OK(Flush());
    ASSERT_OK(Put(Key(4 * round + 1), "y", no_wal));
    ASSERT_OK(Flush());
    const std::string before = Contents();
    ASSERT_OK(Put(Key(4 * round + 2), "z", no_wal));
    ASSERT_OK(Put(Key(4 * round + 3), "w", no_wal));
    const std::string after = Contents();
    const std::string manifest = OnlyManifest();

    env->DeactivateAfter(n);
    const Status s = Flush();
    flushed = s.ok() && env->IsFilesystemActive();
    if (flushed) {
      EXPECT_NE(OnlyManifest(), manifest) << "the flush did not roll over";
    }
    env->SetFilesystemActive(false);
    db_.reset();
    ASSERT_OK(env->SimulatePowerLoss());
    env->ResetState();

    ASSERT_OK(TryReopen());
    const std::string got = Contents();
    if (s.ok()) {
      EXPECT_EQ(got, after) << "an acknowledged flush is durable";
    } else {
      EXPECT_TRUE(got == before || got == after) << got;
    }
    Close();
    round++;
  }
  EXPECT_GT(round, 5);
}

}  // namespace
}  // namespace shale
