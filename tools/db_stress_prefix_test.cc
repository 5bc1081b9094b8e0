// The prefix rule of db_stress (db_stress_prefix.h) on hand-made write logs: a cut keeps
// every write at or below one sequence, so the keys a DeleteRange logged at its single
// sequence are kept or dropped together, while writes at distinct sequences may be cut
// anywhere between the durable and the recovered sequence.
#include "tools/db_stress_prefix.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/testutil/test_util.h"
#include "tools/db_stress_state.h"

namespace shale::stress {
namespace {

constexpr uint32_t kA = kExists | 11;
constexpr uint32_t kB = kExists | 22;
constexpr uint32_t kC = kExists | 33;

class PrefixCheckTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(ExpectedState::Open(dir_.path(), 3, 1, true, &state_));
    // Keys 0 and 1 written at 1 and 2, then both deleted by one DeleteRange at 3, then key 2
    // written at 4.
    ASSERT_TRUE(state_->AppendLog(0, kA, 1));
    ASSERT_TRUE(state_->AppendLog(1, kB, 2));
    ASSERT_TRUE(state_->AppendLog(0, 0, 3));
    ASSERT_TRUE(state_->AppendLog(1, 0, 3));
    ASSERT_TRUE(state_->AppendLog(2, kC, 4));
  }

  bool Accepts(const std::vector<uint32_t>& held, uint64_t* cut = nullptr) {
    PrefixCheck check(*state_);
    why_.clear();
    const bool ok = check.Check(held, /*recovered=*/4, /*strict=*/false, &why_);
    if (cut != nullptr) *cut = check.cut_seq();
    return ok;
  }

  TempDirectory dir_{"db_stress_prefix"};
  std::unique_ptr<ExpectedState> state_;
  std::string why_;
};

TEST_F(PrefixCheckTest, EveryCutAtASequenceIsAccepted) {
  uint64_t cut = 0;
  EXPECT_TRUE(Accepts({0, 0, 0}, &cut)) << why_;
  EXPECT_EQ(cut, 3u);  // the newest cut giving it (cut 0 gives it too)
  EXPECT_TRUE(Accepts({kA, 0, 0}, &cut)) << why_;
  EXPECT_EQ(cut, 1u);
  EXPECT_TRUE(Accepts({kA, kB, 0}, &cut)) << why_;
  EXPECT_EQ(cut, 2u);
  EXPECT_TRUE(Accepts({0, 0, kC}, &cut)) << why_;
  EXPECT_EQ(cut, 4u);
}

TEST_F(PrefixCheckTest, HalfARangeDeletionIsNoCut) {
  EXPECT_FALSE(Accepts({0, kB, 0}));
  EXPECT_NE(why_.find("no cut"), std::string::npos) << why_;
  EXPECT_FALSE(Accepts({0, kB, kC}));
}

TEST_F(PrefixCheckTest, DurableRangeDeletionMustBeKept) {
  state_->AdvanceDurable(3);
  EXPECT_FALSE(Accepts({kA, kB, 0}));
  EXPECT_TRUE(Accepts({0, 0, 0})) << why_;
}

}  // namespace
}  // namespace shale::stress
