#include "db/filename.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "shale/env.h"

namespace shale {
namespace {

TEST(FileNameTest, MakesRocksDBNames) {
  EXPECT_EQ("db/000123.log", LogFileName("db", 123));
  EXPECT_EQ("db/000007.sst", TableFileName("db", 7));
  EXPECT_EQ("db/1234567.sst", TableFileName("db", 1234567));
  EXPECT_EQ("db/MANIFEST-000005", DescriptorFileName("db", 5));
  EXPECT_EQ("db/CURRENT", CurrentFileName("db"));
  EXPECT_EQ("db/LOCK", LockFileName("db"));
  EXPECT_EQ("db/000009.dbtmp", TempFileName("db", 9));
  EXPECT_EQ("db/LOG", InfoLogFileName("db"));
  EXPECT_EQ("db/LOG.old.42", OldInfoLogFileName("db", 42));
  EXPECT_EQ("db/OPTIONS-000011", OptionsFileName("db", 11));
}

TEST(FileNameTest, ParsesWhatItMakes) {
  struct Case {
    std::string name;
    uint64_t number;
    FileType type;
  };
  const Case cases[] = {
      {"100.log", 100, kWalFile},
      {"0.log", 0, kWalFile},
      {"000123.sst", 123, kTableFile},
      {"18446744073709551615.sst", UINT64_MAX, kTableFile},
      {"CURRENT", 0, kCurrentFile},
      {"LOCK", 0, kDBLockFile},
      {"MANIFEST-2", 2, kDescriptorFile},
      {"MANIFEST-000007", 7, kDescriptorFile},
      {"LOG", 0, kInfoLogFile},
      {"LOG.old.1700000000", 0, kInfoLogFile},
      {"000044.dbtmp", 44, kTempFile},
      {"OPTIONS-000012", 12, kOptionsFile},
      {"OPTIONS-000012.dbtmp", 12, kTempFile},
  };
  for (const Case& c : cases) {
    uint64_t number = 999;
    FileType type = kOptionsFile;
    ASSERT_TRUE(ParseFileName(c.name, &number, &type)) << c.name;
    EXPECT_EQ(c.number, number) << c.name;
    EXPECT_EQ(c.type, type) << c.name;
  }
  // Round trip through the makers (names carry the directory; parsing takes the base name).
  uint64_t number;
  FileType type;
  ASSERT_TRUE(ParseFileName(TableFileName("x", 77).substr(2), &number, &type));
  EXPECT_EQ(77u, number);
  EXPECT_EQ(kTableFile, type);
  ASSERT_TRUE(ParseFileName(DescriptorFileName("x", 78).substr(2), &number, &type));
  EXPECT_EQ(78u, number);
  EXPECT_EQ(kDescriptorFile, type);
}

TEST(FileNameTest, RejectsOtherNames) {
  const char* bad[] = {"",
                       "foo",
                       "foo-dx-100.log",
                       ".log",
                       "100",
                       "100.",
                       "100.lop",
                       "100.sst.bak",
                       "manifest-3",
                       "MANIFEST",
                       "MANIFEST-",
                       "MANIFEST-3x",
                       "MANIFEST-x3",
                       "CURRENTX",
                       "XCURRENT",
                       "LOCKx",
                       "LOG.old",
                       "LOG.old.",
                       "LOG.old.12x",
                       "LOGx",
                       "OPTIONS-",
                       "OPTIONS-5.tmp",
                       "-100.log",
                       "18446744073709551616.log",  // overflows 64 bits
                       "99999999999999999999999.sst"};
  for (const char* name : bad) {
    uint64_t number;
    FileType type;
    EXPECT_FALSE(ParseFileName(name, &number, &type)) << "'" << name << "'";
  }
}

class TempDir {
 public:
  TempDir() {
    std::string base;
    EXPECT_TRUE(Env::Default()->GetTestDirectory(&base).ok());
    EXPECT_TRUE(Env::Default()->CreateDirIfMissing(base).ok());
    std::string tmpl = base + "/filename_test-XXXXXX";
    EXPECT_NE(nullptr, mkdtemp(tmpl.data()));
    path_ = tmpl;
  }
  ~TempDir() {
    std::vector<std::string> children;
    Env* env = Env::Default();
    if (env->GetChildren(path_, &children).ok()) {
      for (const auto& c : children) env->DeleteFile(path_ + "/" + c).PermitUncheckedError();
    }
    env->DeleteDir(path_).PermitUncheckedError();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(FileNameTest, SetCurrentFileSwitchesAtomically) {
  TempDir dir;
  Env* env = Env::Default();
  std::unique_ptr<Directory> d;
  ASSERT_TRUE(env->NewDirectory(dir.path(), &d).ok());
  ASSERT_TRUE(SetCurrentFile(env, dir.path(), 3, d.get()).ok());
  std::string contents;
  ASSERT_TRUE(ReadFileToString(env, CurrentFileName(dir.path()), &contents).ok());
  EXPECT_EQ("MANIFEST-000003\n", contents);

  ASSERT_TRUE(SetCurrentFile(env, dir.path(), 12, nullptr).ok());
  ASSERT_TRUE(ReadFileToString(env, CurrentFileName(dir.path()), &contents).ok());
  EXPECT_EQ("MANIFEST-000012\n", contents);

  // No temp file is left behind.
  std::vector<std::string> children;
  ASSERT_TRUE(env->GetChildren(dir.path(), &children).ok());
  ASSERT_EQ(1u, children.size());
  EXPECT_EQ("CURRENT", children[0]);
}

TEST(FileNameTest, SetCurrentFileFailsInMissingDirectory) {
  TempDir dir;
  Status s = SetCurrentFile(Env::Default(), dir.path() + "/nope", 3, nullptr);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Env::Default()->FileExists(CurrentFileName(dir.path() + "/nope")).IsNotFound());
}

}  // namespace
}  // namespace shale
