// FaultInjectionTestEnv over real files and over the in-memory Env: power-loss semantics
// (unsynced bytes dropped, entries not made durable by a directory sync undone) and
// injected failures by kind, mode and file-name filter.
#include "tests/testutil/fault_injection_env.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/test_util.h"

namespace shale {
namespace {

class FaultInjectionEnvTest : public ::testing::TestWithParam<bool> {
 protected:
  FaultInjectionEnvTest() {
    if (GetParam()) {
      mem_.reset(NewMemEnv(Env::Default()));
      base_ = mem_.get();
    } else {
      base_ = Env::Default();
    }
    dir_ = std::make_unique<TempDirectory>("fault_env", base_);
    env_ = std::make_unique<FaultInjectionTestEnv>(base_);
    EXPECT_OK(env_->NewDirectory(dir_->path(), &dirhandle_));
  }
  ~FaultInjectionEnvTest() override {
    dirhandle_.reset();
    env_.reset();
    dir_.reset();
  }

  std::string Path(const std::string& name) const { return dir_->File(name); }

  // Creates name holding synced + unsynced bytes, Sync() in between.
  void Write(const std::string& name, const std::string& synced, const std::string& unsynced) {
    std::unique_ptr<WritableFile> f;
    ASSERT_OK(env_->NewWritableFile(Path(name), &f, EnvOptions()));
    ASSERT_OK(f->Append(synced));
    if (!synced.empty()) {
      ASSERT_OK(f->Sync());
    }
    ASSERT_OK(f->Append(unsynced));
    ASSERT_OK(f->Close());
  }

  std::string Contents(const std::string& name) {
    std::string data;
    Status s = ReadFileToString(base_, Path(name), &data);
    return s.ok() ? data : "<" + s.ToString() + ">";
  }
  bool Exists(const std::string& name) { return base_->FileExists(Path(name)).ok(); }

  std::unique_ptr<Env> mem_;
  Env* base_ = nullptr;
  std::unique_ptr<TempDirectory> dir_;
  std::unique_ptr<FaultInjectionTestEnv> env_;
  std::unique_ptr<Directory> dirhandle_;
};

TEST_P(FaultInjectionEnvTest, UnsyncedDataIsDropped) {
  Write("a.log", "durable", "lost");
  Write("b.log", "", "never synced");
  ASSERT_OK(dirhandle_->Fsync());
  ASSERT_EQ("durablelost", Contents("a.log"));
  ASSERT_EQ(7, env_->SyncedSize(Path("a.log")));
  ASSERT_EQ(0, env_->SyncedSize(Path("b.log")));
  ASSERT_EQ(-1, env_->SyncedSize(Path("untracked")));

  ASSERT_OK(env_->DropUnsyncedFileData());
  ASSERT_EQ("durable", Contents("a.log"));
  ASSERT_EQ("", Contents("b.log"));
  // Files that existed before the env saw them are left alone.
  ASSERT_OK(WriteStringToFile(base_, "outside", Path("c")));
  ASSERT_OK(env_->DropUnsyncedFileData());
  ASSERT_EQ("outside", Contents("c"));
}

TEST_P(FaultInjectionEnvTest, SyncsAccumulateAndFsyncCounts) {
  std::unique_ptr<WritableFile> f;
  ASSERT_OK(env_->NewWritableFile(Path("x"), &f, EnvOptions()));
  ASSERT_OK(f->Append("one"));
  ASSERT_OK(f->Sync());
  ASSERT_OK(f->Append("two"));
  ASSERT_OK(f->Fsync());
  ASSERT_OK(f->Append("three"));
  ASSERT_OK(f->Flush());
  ASSERT_EQ(11u, f->GetFileSize());
  ASSERT_OK(f->Close());
  ASSERT_OK(dirhandle_->Fsync());
  ASSERT_OK(env_->SimulatePowerLoss());
  ASSERT_EQ("onetwo", Contents("x"));
}

TEST_P(FaultInjectionEnvTest, FilesNotDirSyncedAreDeleted) {
  Write("old", "kept", "");
  ASSERT_OK(dirhandle_->Fsync());
  Write("new", "synced data, but no directory entry", "");
  ASSERT_OK(env_->DeleteFilesCreatedAfterLastDirSync());
  ASSERT_TRUE(Exists("old"));
  ASSERT_FALSE(Exists("new"));
  ASSERT_EQ("kept", Contents("old"));
  // Rewriting an existing file is not a new directory entry.
  Write("old", "rewritten", "");
  ASSERT_OK(env_->DeleteFilesCreatedAfterLastDirSync());
  ASSERT_EQ("rewritten", Contents("old"));
}

TEST_P(FaultInjectionEnvTest, DirSyncOfAnotherDirectoryDoesNotCount) {
  ASSERT_OK(env_->CreateDir(Path("sub")));
  std::unique_ptr<Directory> sub;
  ASSERT_OK(env_->NewDirectory(Path("sub") + "/", &sub));
  Write("top", "t", "");
  Write("sub/inner", "i", "");
  ASSERT_OK(sub->Fsync());
  ASSERT_OK(env_->SimulatePowerLoss());
  ASSERT_FALSE(Exists("top"));
  ASSERT_TRUE(Exists("sub/inner"));
}

// The CURRENT dance: write a temp file, sync it, rename it over CURRENT, sync the dir.
TEST_P(FaultInjectionEnvTest, RenameWithoutDirSyncIsUndone) {
  Write("CURRENT", "MANIFEST-000001\n", "");
  ASSERT_OK(dirhandle_->Fsync());
  Write("000002.dbtmp", "MANIFEST-000002\n", "");
  ASSERT_OK(env_->RenameFile(Path("000002.dbtmp"), Path("CURRENT")));
  ASSERT_EQ("MANIFEST-000002\n", Contents("CURRENT"));
  ASSERT_OK(env_->SimulatePowerLoss());
  ASSERT_EQ("MANIFEST-000001\n", Contents("CURRENT"));
  ASSERT_FALSE(Exists("000002.dbtmp"));  // its creation was not durable either

  Write("000003.dbtmp", "MANIFEST-000003\n", "");
  ASSERT_OK(env_->RenameFile(Path("000003.dbtmp"), Path("CURRENT")));
  ASSERT_OK(dirhandle_->Fsync());
  ASSERT_OK(env_->SimulatePowerLoss());
  ASSERT_EQ("MANIFEST-000003\n", Contents("CURRENT"));
  ASSERT_FALSE(Exists("000003.dbtmp"));
}

TEST_P(FaultInjectionEnvTest, RenameOfDurableFileIsUndone) {
  Write("a", "synced", "+unsynced");
  ASSERT_OK(dirhandle_->Fsync());
  ASSERT_OK(env_->RenameFile(Path("a"), Path("b")));
  ASSERT_EQ(6, env_->SyncedSize(Path("b")));  // the tracked state follows the name
  ASSERT_OK(env_->SimulatePowerLoss());
  ASSERT_FALSE(Exists("b"));
  ASSERT_EQ("synced", Contents("a"));
}

TEST_P(FaultInjectionEnvTest, InactiveFilesystemFailsMutations) {
  Write("durable", "d", "");
  ASSERT_OK(dirhandle_->Fsync());
  std::unique_ptr<WritableFile> open_file;
  ASSERT_OK(env_->NewWritableFile(Path("open"), &open_file, EnvOptions()));
  ASSERT_OK(open_file->Append("before"));

  env_->SetFilesystemActive(false, Status::IOError("power is off"));
  ASSERT_FALSE(env_->IsFilesystemActive());
  ASSERT_EQ("IO error: power is off", env_->GetError().ToString());
  auto is_power_off = [](const Status& s) { return s.ToString() == "IO error: power is off"; };
  std::unique_ptr<WritableFile> f;
  ASSERT_TRUE(is_power_off(env_->NewWritableFile(Path("new"), &f, EnvOptions())));
  ASSERT_TRUE(is_power_off(open_file->Append("x")));
  ASSERT_TRUE(is_power_off(open_file->Flush()));
  ASSERT_TRUE(is_power_off(open_file->Sync()));
  ASSERT_TRUE(is_power_off(open_file->Close()));
  ASSERT_TRUE(is_power_off(env_->RenameFile(Path("durable"), Path("r"))));
  ASSERT_TRUE(is_power_off(env_->DeleteFile(Path("durable"))));
  ASSERT_TRUE(is_power_off(env_->CreateDir(Path("d"))));
  ASSERT_TRUE(is_power_off(env_->CreateDirIfMissing(Path("d"))));
  ASSERT_TRUE(is_power_off(env_->TruncateFile(Path("durable"), 0)));
  ASSERT_TRUE(is_power_off(dirhandle_->Fsync()));
  std::string data;
  ASSERT_OK(ReadFileToString(env_.get(), Path("durable"), &data));  // reads still work
  ASSERT_EQ("d", data);

  ASSERT_OK(env_->SimulatePowerLoss());
  ASSERT_FALSE(Exists("open"));
  ASSERT_EQ("d", Contents("durable"));
  env_->SetFilesystemActive(true);
  ASSERT_OK(env_->NewWritableFile(Path("new"), &f, EnvOptions()));
  ASSERT_OK(f->Close());
}

TEST_P(FaultInjectionEnvTest, NthWriteFailsOnlyForMatchingFiles) {
  env_->SetFailure(FailOn::kWrite, 3, FailMode::kNth, ".log");
  std::unique_ptr<WritableFile> log, sst;
  ASSERT_OK(env_->NewWritableFile(Path("000001.log"), &log, EnvOptions()));
  ASSERT_OK(env_->NewWritableFile(Path("000002.sst"), &sst, EnvOptions()));
  for (int i = 0; i < 5; i++) ASSERT_OK(sst->Append("s"));
  ASSERT_OK(log->Append("1"));
  ASSERT_OK(log->Append("2"));
  Status s = log->Append("3");
  ASSERT_TRUE(s.IsIOError());
  ASSERT_EQ("IO error: injected write error", s.ToString());
  ASSERT_OK(log->Append("4"));        // kNth fails once
  ASSERT_EQ(3u, log->GetFileSize());  // the failed append added nothing
  ASSERT_EQ(9u, env_->CallCount(FailOn::kWrite));
  ASSERT_EQ(1u, env_->InjectedCount(FailOn::kWrite));
  ASSERT_OK(log->Sync());
  ASSERT_OK(log->Close());
  ASSERT_OK(sst->Close());
  ASSERT_EQ("124", Contents("000001.log"));
}

TEST_P(FaultInjectionEnvTest, FromNthSyncFailsUntilCleared) {
  env_->SetFailure(FailOn::kSync, 2, FailMode::kFromNth, "MANIFEST", Status::NoSpace("disk full"));
  std::unique_ptr<WritableFile> f;
  ASSERT_OK(env_->NewWritableFile(Path("MANIFEST-000005"), &f, EnvOptions()));
  ASSERT_OK(f->Append("a"));
  ASSERT_OK(f->Sync());
  ASSERT_OK(f->Append("b"));
  ASSERT_TRUE(f->Sync().IsNoSpace());
  ASSERT_TRUE(f->Fsync().IsNoSpace());
  ASSERT_EQ(1, env_->SyncedSize(Path("MANIFEST-000005")));
  env_->ClearFailure(FailOn::kSync);
  ASSERT_OK(f->Sync());
  ASSERT_EQ(2, env_->SyncedSize(Path("MANIFEST-000005")));
  ASSERT_EQ(2u, env_->InjectedCount(FailOn::kSync));
  ASSERT_OK(f->Close());
}

TEST_P(FaultInjectionEnvTest, CreateRenameDirSyncAndReadFailures) {
  env_->SetFailure(FailOn::kCreate, 1, FailMode::kNth, "MANIFEST");
  std::unique_ptr<WritableFile> f;
  ASSERT_OK(env_->NewWritableFile(Path("000001.log"), &f, EnvOptions()));
  ASSERT_NOK(env_->NewWritableFile(Path("MANIFEST-000001"), &f, EnvOptions()));
  ASSERT_FALSE(Exists("MANIFEST-000001"));
  ASSERT_OK(env_->NewWritableFile(Path("MANIFEST-000001"), &f, EnvOptions()));
  ASSERT_OK(f->Append("manifest"));
  ASSERT_OK(f->Close());

  env_->SetFailure(FailOn::kRename, 1, FailMode::kNth, "CURRENT");  // matches the target
  ASSERT_NOK(env_->RenameFile(Path("MANIFEST-000001"), Path("CURRENT")));
  ASSERT_TRUE(Exists("MANIFEST-000001"));
  ASSERT_OK(env_->RenameFile(Path("MANIFEST-000001"), Path("CURRENT")));
  ASSERT_EQ(1u, env_->InjectedCount(FailOn::kRename));

  env_->SetFailure(FailOn::kDirSync, 1, FailMode::kNth);
  ASSERT_NOK(dirhandle_->Fsync());
  ASSERT_OK(dirhandle_->Fsync());

  env_->SetFailure(FailOn::kRead, 1, FailMode::kOneIn);  // 1 in 1: every read
  std::string data;
  ASSERT_TRUE(ReadFileToString(env_.get(), Path("CURRENT"), &data).IsIOError());
  std::unique_ptr<RandomAccessFile> ra;
  ASSERT_OK(env_->NewRandomAccessFile(Path("CURRENT"), &ra, EnvOptions()));
  char scratch[16];
  Slice r;
  ASSERT_NOK(ra->Read(0, 8, &r, scratch));
  env_->ClearFailure(FailOn::kRead);
  ASSERT_OK(ra->Read(0, 8, &r, scratch));
  ASSERT_EQ("manifest", r.ToString());
}

TEST_P(FaultInjectionEnvTest, OneInFailsAboutThatOften) {
  const uint64_t seed = TestSeed();
  env_->SetSeed(seed);
  env_->SetFailure(FailOn::kWrite, 4, FailMode::kOneIn);
  std::unique_ptr<WritableFile> f;
  ASSERT_OK(env_->NewWritableFile(Path("f"), &f, EnvOptions()));
  int failed = 0;
  for (int i = 0; i < 2000; i++) failed += f->Append("x").ok() ? 0 : 1;
  ASSERT_EQ(static_cast<uint64_t>(failed), env_->InjectedCount(FailOn::kWrite));
  ASSERT_GT(failed, 300);  // expected 500; far outside any plausible deviation
  ASSERT_LT(failed, 700);
  ASSERT_EQ(2000u - failed, f->GetFileSize());
}

TEST_P(FaultInjectionEnvTest, ResetStateForgetsEverything) {
  Write("a", "s", "u");
  env_->SetFailure(FailOn::kWrite, 1, FailMode::kFromNth);
  env_->SetFilesystemActive(false);
  env_->ResetState();
  ASSERT_TRUE(env_->IsFilesystemActive());
  ASSERT_EQ(0u, env_->CallCount(FailOn::kWrite));
  ASSERT_OK(env_->SimulatePowerLoss());
  ASSERT_EQ("su", Contents("a"));  // no longer tracked: left as it is
  Write("b", "x", "");             // and writes work again
}

TEST_P(FaultInjectionEnvTest, ConcurrentWritersAreTracked) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([this, t] {
      std::unique_ptr<WritableFile> f;
      const std::string name = Path("t" + std::to_string(t));
      if (!env_->NewWritableFile(name, &f, EnvOptions()).ok()) return;
      for (int i = 0; i < 100; i++) {
        f->Append(std::string(1, static_cast<char>('a' + t))).PermitUncheckedError();
        if (i == 49) f->Sync().PermitUncheckedError();
      }
      f->Close().PermitUncheckedError();
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_OK(dirhandle_->Fsync());
  ASSERT_OK(env_->SimulatePowerLoss());
  for (int t = 0; t < 4; t++) {
    ASSERT_EQ(std::string(50, static_cast<char>('a' + t)), Contents("t" + std::to_string(t)));
  }
}

INSTANTIATE_TEST_SUITE_P(PosixAndMem, FaultInjectionEnvTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Mem" : "Posix"; });

}  // namespace
}  // namespace shale
