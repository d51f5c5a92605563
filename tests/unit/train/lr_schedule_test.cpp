#include "train/lr_schedule.hpp"

#include <gtest/gtest.h>

namespace hpo {
namespace {

TEST(WarmupLinearDecayFactor, RisesOverWarmupThenDecaysToZeroAtTotal) {
  // 10 steps, warm-up ceil(0.2 * 10) = 2.
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(0, 10, 0.2), 0.0);
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(1, 10, 0.2), 0.5);
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(2, 10, 0.2), 1.0);
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(6, 10, 0.2), 0.5);
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(9, 10, 0.2), 0.125);
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(10, 10, 0.2), 0.0);
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(12, 10, 0.2), 0.0);
}

TEST(WarmupLinearDecayFactor, WithoutWarmupStartsAtOne) {
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(0, 10, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(5, 10, 0.0), 0.5);
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(10, 10, 0.0), 0.0);
}

TEST(WarmupLinearDecayFactor, WarmupStepsAreTheCeilingOfTheProduct) {
  // 7 * 0.1 = 0.7: one warm-up step.
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(0, 7, 0.1), 0.0);
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(1, 7, 0.1), 1.0);
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(4, 7, 0.1), 0.5);
  // 100 * 0.07 is 7.000000000000001 in doubles, so warm-up is 8 steps, as in Python's math.ceil.
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(7, 100, 0.07), 0.875);
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(8, 100, 0.07), 1.0);
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(54, 100, 0.07), 0.5);
}

TEST(WarmupLinearDecayFactor, WarmupOverAllStepsNeverDecays) {
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(0, 4, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(3, 4, 1.0), 0.75);
  // step == total == warmup: max(0, 0 / max(1, 0)).
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(4, 4, 1.0), 0.0);
}

TEST(WarmupLinearDecayFactor, ZeroTotalStepsGivesZero) {
  EXPECT_DOUBLE_EQ(WarmupLinearDecayFactor(0, 0, 0.1), 0.0);
}

}  // namespace
}  // namespace hpo
