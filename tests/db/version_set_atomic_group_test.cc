// Atomic groups in the MANIFEST (DBOptions::atomic_flush): LogAndApply of several families'
// edits writes them as one group, and recovery applies a group whole or, when the MANIFEST
// ends inside it (its writer died before the sync), not at all.
#include <optional>
#include <string>
#include <vector>

#include "tests/db/version_set_fixture.h"

namespace shale {
namespace {

class VersionSetAtomicGroupTest : public VersionSetTest {
 protected:
  VersionSet::FamilySetup FamilySetupForTest() { return {&options_, &icmp_, table_cache_.get()}; }

  // Recovers with every family the MANIFEST names opened.
  Status ReopenWithFamilies() {
    OpenVersionSet();
    MutexLock l(vset_->db_mutex());
    return vset_->Recover([this](uint32_t, const std::string&) {
      return std::optional<VersionSet::FamilySetup>(FamilySetupForTest());
    });
  }

  size_t NumFiles(uint32_t family, int level) {
    MutexLock l(vset_->db_mutex());
    Version* v = vset_->current(family);
    return v == nullptr ? 0 : v->files(level).size();
  }

  Status ApplyGroup(const std::vector<VersionEdit*>& edits) {
    MutexLock l(vset_->db_mutex());
    return vset_->LogAndApply(edits);
  }

  // A MANIFEST written by hand: a new DB with family "one" (id 1), then `edits`.
  void WriteManifest(const std::vector<VersionEdit>& edits) {
    VersionEdit base;
    base.SetComparatorName(BytewiseComparator()->Name());
    base.SetLogNumber(0);
    base.SetNextFile(100);
    base.SetLastSequence(0);
    VersionEdit add;
    add.SetColumnFamily(1);
    add.AddColumnFamily("one");
    add.SetMaxColumnFamily(1);
    std::unique_ptr<WritableFile> file;
    ASSERT_OK(Env::Default()->NewWritableFile(DescriptorFileName(dbname_, 1), &file, EnvOptions()));
    log::Writer writer(std::move(file), 1);
    std::vector<const VersionEdit*> all{&base, &add};
    for (const VersionEdit& e : edits) all.push_back(&e);
    for (const VersionEdit* e : all) {
      std::string record;
      e->EncodeTo(&record);
      ASSERT_OK(writer.AddRecord(record));
    }
    ASSERT_OK(writer.Sync(false));
    ASSERT_OK(writer.Close());
    ASSERT_OK(SetCurrentFile(Env::Default(), dbname_, 1, nullptr));
  }

  // An edit of `family` adding `file` at L0, in a group with `remaining` edits after it
  // (none: not in a group).
  static VersionEdit AddEdit(uint32_t family, const FileMetaData& file,
                             std::optional<uint32_t> remaining) {
    VersionEdit e;
    e.SetColumnFamily(family);
    e.AddFile(0, file);
    if (remaining) e.SetAtomicGroup(*remaining);
    return e;
  }
};

TEST_F(VersionSetAtomicGroupTest, AGroupIsEncodedAndDecoded) {
  VersionEdit e = AddEdit(3, BuildRange(10, 0, 5, 1, 1), 2);
  std::string record;
  e.EncodeTo(&record);
  VersionEdit back;
  ASSERT_OK(back.DecodeFrom(record));
  EXPECT_TRUE(back.is_in_atomic_group());
  EXPECT_EQ(2u, back.remaining_entries());
  EXPECT_EQ(3u, back.column_family());
  VersionEdit plain = AddEdit(3, BuildRange(11, 0, 5, 1, 1), std::nullopt);
  record.clear();
  plain.EncodeTo(&record);
  ASSERT_OK(back.DecodeFrom(record));
  EXPECT_FALSE(back.is_in_atomic_group());
}

TEST_F(VersionSetAtomicGroupTest, LogAndApplyWritesAGroupThatRecoveryReadsWhole) {
  NewDB();
  ASSERT_OK(ReopenWithFamilies());
  {
    MutexLock l(vset_->db_mutex());
    VersionEdit create;
    create.SetColumnFamily(vset_->NewColumnFamilyId());
    create.AddColumnFamily("one");
    VersionSet::FamilySetup setup = FamilySetupForTest();
    ASSERT_OK(vset_->LogAndApply(&create, &setup));
  }
  VersionEdit a = AddEdit(0, BuildRange(vset_->NewFileNumber(), 0, 10, 1, 5), std::nullopt);
  VersionEdit b = AddEdit(1, BuildRange(vset_->NewFileNumber(), 0, 10, 1, 5), std::nullopt);
  a.SetLastSequence(5);
  b.SetLastSequence(5);
  ASSERT_OK(ApplyGroup({&a, &b}));
  EXPECT_TRUE(a.is_in_atomic_group());
  EXPECT_EQ(1u, a.remaining_entries());
  EXPECT_EQ(0u, b.remaining_entries());
  EXPECT_EQ(1u, NumFiles(0, 0));
  EXPECT_EQ(1u, NumFiles(1, 0));

  ASSERT_OK(ReopenWithFamilies());
  EXPECT_EQ(1u, NumFiles(0, 0));
  EXPECT_EQ(1u, NumFiles(1, 0));
  EXPECT_EQ(5u, vset_->LastSequence());
}

TEST_F(VersionSetAtomicGroupTest, AGroupNamesEachFamilyOnceAndCreatesNone) {
  NewDB();
  ASSERT_OK(ReopenWithFamilies());
  VersionEdit a = AddEdit(0, BuildRange(vset_->NewFileNumber(), 0, 10, 1, 5), std::nullopt);
  VersionEdit b = AddEdit(0, BuildRange(vset_->NewFileNumber(), 20, 30, 1, 5), std::nullopt);
  EXPECT_TRUE(ApplyGroup({&a, &b}).IsInvalidArgument());
  VersionEdit c = AddEdit(0, BuildRange(vset_->NewFileNumber(), 40, 50, 1, 5), std::nullopt);
  VersionEdit create;
  create.SetColumnFamily(1);
  create.AddColumnFamily("one");
  EXPECT_TRUE(ApplyGroup({&c, &create}).IsInvalidArgument());
  VersionEdit missing = AddEdit(7, BuildRange(vset_->NewFileNumber(), 0, 10, 1, 5), std::nullopt);
  EXPECT_TRUE(ApplyGroup({&c, &missing}).IsInvalidArgument());
  // None of them changed anything, here or on disk.
  EXPECT_EQ(0u, NumFiles(0, 0));
  ASSERT_OK(ReopenWithFamilies());
  EXPECT_EQ(0u, NumFiles(0, 0));
}

TEST_F(VersionSetAtomicGroupTest, AGroupTheManifestEndsInsideIsDropped) {
  const FileMetaData f1 = BuildRange(10, 0, 10, 1, 1);
  const FileMetaData f2 = BuildRange(11, 0, 10, 1, 1);
  const FileMetaData f3 = BuildRange(12, 20, 30, 1, 2);
  const FileMetaData f4 = BuildRange(13, 20, 30, 1, 2);
  // A whole group of two, then two edits of a group of three: its last edit never made
  // it to the file.
  WriteManifest({AddEdit(0, f1, 1), AddEdit(1, f2, 0), AddEdit(0, f3, 2), AddEdit(1, f4, 1)});
  ASSERT_OK(ReopenWithFamilies());
  EXPECT_EQ(1u, NumFiles(0, 0));
  EXPECT_EQ(1u, NumFiles(1, 0));
  EXPECT_EQ(std::vector<uint64_t>{f1.number}, FileNumbers(0));
}

TEST_F(VersionSetAtomicGroupTest, AGroupCutByAnotherEditIsCorruption) {
  const FileMetaData f1 = BuildRange(10, 0, 10, 1, 1);
  const FileMetaData f2 = BuildRange(11, 0, 10, 1, 1);
  WriteManifest({AddEdit(0, f1, 1), AddEdit(1, f2, std::nullopt)});
  Status s = ReopenWithFamilies();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("atomic group")) << s.ToString();
}

TEST_F(VersionSetAtomicGroupTest, AGroupOutOfOrderIsCorruption) {
  const FileMetaData f1 = BuildRange(10, 0, 10, 1, 1);
  const FileMetaData f2 = BuildRange(11, 0, 10, 1, 1);
  WriteManifest({AddEdit(0, f1, 2), AddEdit(1, f2, 0)});
  Status s = ReopenWithFamilies();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}

}  // namespace
}  // namespace shale
