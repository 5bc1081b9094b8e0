// The realistic power-loss model of FaultInjectionTestEnv: synced bytes always survive,
// of the unsynced ones a prefix survives whose end may be garbage, files created or
// deleted since the last directory sync are deleted or brought back, and DeactivateAfter
// cuts the power after a given number of mutating calls.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/testutil/fault_injection_env.h"
#include "tests/testutil/test_util.h"

namespace shale {
namespace {

TEST(FaultInjectionPowerLossTest, RealisticPowerLossKeepsSyncedBytesAndTearsTheRest) {
  const uint64_t seed = TestSeed();
  TempDirectory dir("fault_env");
  FaultInjectionTestEnv env(Env::Default());
  env.SetSeed(seed);
  env.SetRealisticPowerLoss(true);
  const std::string synced(1000, 's'), unsynced(3000, 'u');
  int torn = 0, garbage = 0;
  for (int round = 0; round < 50; round++) {
    const std::string fname = dir.File("f" + std::to_string(round));
    std::unique_ptr<Directory> d;
    ASSERT_OK(env.NewDirectory(dir.path(), &d));
    std::unique_ptr<WritableFile> f;
    ASSERT_OK(env.NewWritableFile(fname, &f, EnvOptions()));
    ASSERT_OK(d->Fsync());  // the file's creation is durable
    ASSERT_OK(f->Append(synced));
    ASSERT_OK(f->Sync());
    ASSERT_OK(f->Append(unsynced));
    ASSERT_OK(f->Close());
    ASSERT_OK(env.SimulatePowerLoss());
    std::string data;
    ASSERT_OK(ReadFileToString(Env::Default(), fname, &data));
    ASSERT_GE(data.size(), synced.size()) << "seed " << seed;
    ASSERT_LE(data.size(), synced.size() + unsynced.size());
    ASSERT_EQ(data.substr(0, synced.size()), synced) << "synced bytes changed, seed " << seed;
    if (data.size() < synced.size() + unsynced.size()) torn++;
    if (data.find_first_not_of("su") != std::string::npos) garbage++;
    env.ResetState();
  }
  EXPECT_GT(torn, 0) << "seed " << seed;
  EXPECT_GT(garbage, 0) << "seed " << seed;
}

TEST(FaultInjectionPowerLossTest, UnsyncedDeletionAndCreationAreUndone) {
  TempDirectory dir("fault_env_delete");
  FaultInjectionTestEnv env(Env::Default());
  env.SetRealisticPowerLoss(true);
  const std::string old_file = dir.File("old"), new_file = dir.File("new");
  ASSERT_OK(WriteStringToFile(Env::Default(), "old contents", old_file, true));
  ASSERT_OK(env.DeleteFile(old_file));
  ASSERT_OK(WriteStringToFile(&env, "new contents", new_file, true));
  ASSERT_TRUE(env.FileExists(old_file).IsNotFound());
  ASSERT_OK(env.SimulatePowerLoss());
  std::string data;
  ASSERT_OK(ReadFileToString(Env::Default(), old_file, &data));
  EXPECT_EQ(data, "old contents");
  EXPECT_TRUE(Env::Default()->FileExists(new_file).IsNotFound());

  // After a directory sync the deletion is durable.
  env.ResetState();
  ASSERT_OK(env.DeleteFile(old_file));
  std::unique_ptr<Directory> d;
  ASSERT_OK(env.NewDirectory(dir.path(), &d));
  ASSERT_OK(d->Fsync());
  ASSERT_OK(env.SimulatePowerLoss());
  EXPECT_TRUE(Env::Default()->FileExists(old_file).IsNotFound());
}

TEST(FaultInjectionPowerLossTest, DeactivateAfterCutsThePowerAtTheNthCall) {
  TempDirectory dir("fault_env_deactivate");
  FaultInjectionTestEnv env(Env::Default());
  std::unique_ptr<WritableFile> f;
  ASSERT_OK(env.NewWritableFile(dir.File("f"), &f, EnvOptions()));
  env.DeactivateAfter(2);
  EXPECT_OK(f->Append("a"));
  EXPECT_OK(f->Append("b"));
  EXPECT_NOK(f->Append("c"));
  EXPECT_FALSE(env.IsFilesystemActive());
  env.ResetState();
  EXPECT_OK(f->Append("d"));
}

}  // namespace
}  // namespace shale
