#include "hpo/reduced_float.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace hpo {
namespace {

constexpr ReducedFloat kBf16 = ReducedFloat::kBFloat16;
constexpr ReducedFloat kFp16 = ReducedFloat::kFloat16;

float RoundTrip(float value, ReducedFloat format) {
  return FromReducedFloat(ToReducedFloat(value, format), format);
}

TEST(ReducedFloatTest, RepresentableValuesRoundTripExactly) {
  for (float value : {0.0f, -0.0f, 1.0f, -2.5f, 0.15625f, 3.0f * 65536.0f, 1.0e-30f}) {
    const float bf16 = RoundTrip(value, kBf16);
    if (value == 1.0e-30f) {
      EXPECT_NEAR(bf16, value, value * 0x1p-8f);  // 8 significant bits
    } else {
      EXPECT_EQ(bf16, value) << value;
    }
  }
  for (float value : {0.0f, 1.0f, -2.5f, 0.15625f, 65504.0f, 0x1p-24f, -0x1p-14f}) {
    EXPECT_EQ(RoundTrip(value, kFp16), value) << value;
  }
  EXPECT_EQ(ToReducedFloat(1.0f, kBf16), 0x3f80);
  EXPECT_EQ(ToReducedFloat(1.0f, kFp16), 0x3c00);
  EXPECT_EQ(ToReducedFloat(-2.0f, kFp16), 0xc000);
}

TEST(ReducedFloatTest, RoundsToNearestTiesToEven) {
  // bf16 keeps 7 fraction bits: around 1 the spacing is 2^-7.
  EXPECT_EQ(RoundTrip(1.0f + 0x1p-8f, kBf16), 1.0f);                       // tie -> even (1.0)
  EXPECT_EQ(RoundTrip(1.0f + 3 * 0x1p-8f, kBf16), 1.0f + 0x1p-6f);         // tie -> even (2/128)
  EXPECT_EQ(RoundTrip(1.0f + 0x1p-8f + 0x1p-20f, kBf16), 1.0f + 0x1p-7f);  // above the tie
  // fp16 keeps 10 fraction bits: around 1 the spacing is 2^-10.
  EXPECT_EQ(RoundTrip(1.0f + 0x1p-11f, kFp16), 1.0f);
  EXPECT_EQ(RoundTrip(1.0f + 3 * 0x1p-11f, kFp16), 1.0f + 0x1p-9f);
  EXPECT_EQ(RoundTrip(2049.0f, kFp16), 2048.0f);
}

TEST(ReducedFloatTest, RangeLimitsInfinitiesAndNan) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(RoundTrip(65520.0f, kFp16), inf);  // past fp16's largest finite value, rounds up
  EXPECT_EQ(RoundTrip(-1.0e6f, kFp16), -inf);
  EXPECT_EQ(RoundTrip(1.0e-9f, kFp16), 0.0f);  // below half the smallest subnormal
  EXPECT_NEAR(RoundTrip(1.0e30f, kBf16), 1.0e30f, 1.0e30f * 0x1p-8f);
  EXPECT_TRUE(std::isfinite(RoundTrip(3.0e38f, kBf16)));  // bf16 has float32's range
  EXPECT_EQ(RoundTrip(inf, kBf16), inf);
  EXPECT_EQ(RoundTrip(-inf, kFp16), -inf);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(RoundTrip(nan, kBf16)));
  EXPECT_TRUE(std::isnan(RoundTrip(nan, kFp16)));
  EXPECT_TRUE(std::isnan(RoundTrip(-nan, kBf16)));
}

TEST(ReducedFloatTest, AccumulateRoundsEverySum) {
  // bf16 spacing at 256 is 2: 256 + 1 is a tie and rounds to the even 256; 256 + 3 -> 260.
  std::vector<uint16_t> in = {ToReducedFloat(1.0f, kBf16), ToReducedFloat(3.0f, kBf16),
                              ToReducedFloat(-0.5f, kBf16)};
  std::vector<uint16_t> inout = {ToReducedFloat(256.0f, kBf16), ToReducedFloat(256.0f, kBf16),
                                 ToReducedFloat(0.25f, kBf16)};
  AccumulateReducedFloats(in.data(), inout.data(), in.size(), kBf16);
  EXPECT_EQ(FromReducedFloat(inout[0], kBf16), 256.0f);
  EXPECT_EQ(FromReducedFloat(inout[1], kBf16), 260.0f);
  EXPECT_EQ(FromReducedFloat(inout[2], kBf16), -0.25f);
  // fp16 spacing at 2048 is 2.
  uint16_t one = ToReducedFloat(1.0f, kFp16);
  uint16_t sum = ToReducedFloat(2048.0f, kFp16);
  AccumulateReducedFloats(&one, &sum, 1, kFp16);
  EXPECT_EQ(FromReducedFloat(sum, kFp16), 2048.0f);
  uint16_t big = ToReducedFloat(60000.0f, kFp16);
  uint16_t overflow = ToReducedFloat(60000.0f, kFp16);
  AccumulateReducedFloats(&big, &overflow, 1, kFp16);
  EXPECT_EQ(FromReducedFloat(overflow, kFp16), std::numeric_limits<float>::infinity());
  EXPECT_STREQ(ReducedFloatName(kBf16), "bf16");
  EXPECT_STREQ(ReducedFloatName(kFp16), "fp16");
}

}  // namespace
}  // namespace hpo
