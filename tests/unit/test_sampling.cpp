// Sampling from every W&B distribution: bounds, value types, quantization and shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "search/sampling.hpp"

namespace hpo {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kDraws = 10000;

ParameterSpec Range(Distribution distribution, double min, double max, double q = 1.0) {
  ParameterSpec spec;
  spec.name = "x";
  spec.distribution = distribution;
  spec.type = distribution == Distribution::kIntUniform ? ParamType::kInt : ParamType::kFloat;
  spec.min = min;
  spec.max = max;
  spec.q = q;
  return spec;
}

ParameterSpec Gaussian(Distribution distribution, double mu, double sigma, double q = 1.0) {
  ParameterSpec spec;
  spec.name = "x";
  spec.distribution = distribution;
  spec.mu = mu;
  spec.sigma = sigma;
  spec.q = q;
  return spec;
}

ParameterSpec BetaShape(Distribution distribution, double a, double b, double q = 1.0) {
  ParameterSpec spec;
  spec.name = "x";
  spec.distribution = distribution;
  spec.a = a;
  spec.b = b;
  spec.q = q;
  return spec;
}

ParameterSpec Choices(Distribution distribution, ParamType type, std::vector<ParamValue> values,
                      std::vector<double> probabilities = {}) {
  ParameterSpec spec;
  spec.name = "x";
  spec.distribution = distribution;
  spec.type = type;
  spec.values = std::move(values);
  spec.probabilities = std::move(probabilities);
  return spec;
}

std::vector<double> DrawNumbers(const ParameterSpec& spec, int count, uint64_t seed = 7) {
  std::mt19937_64 rng(seed);
  std::vector<double> draws;
  for (int i = 0; i < count; ++i) draws.push_back(ParamAsDouble(SampleParameter(spec, rng)));
  return draws;
}

double Mean(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / values.size();
}

double StandardDeviation(const std::vector<double>& values) {
  const double mean = Mean(values);
  double sum = 0.0;
  for (double value : values) sum += (value - mean) * (value - mean);
  return std::sqrt(sum / (values.size() - 1));
}

bool IsMultipleOf(double value, double q) {
  return std::fabs(value / q - std::round(value / q)) < 1e-9;
}

struct DistributionCase {
  const char* name;
  ParameterSpec spec;
  ValueInterval support;  // every draw must lie in it, and SupportOf must return it
  double quantum;         // draws are multiples of it; 0 when not quantized
};

const DistributionCase kDistributionCases[] = {
    {"Uniform", Range(Distribution::kUniform, -2, 3), {-2, 3, false, false}, 0},
    {"IntUniform", Range(Distribution::kIntUniform, -3, 4), {-3, 4, false, false}, 1},
    // 0.1 rounds to 0, below min: it must move up to 0.25, not leave the bounds.
    {"QUniform", Range(Distribution::kQUniform, 0.1, 2.0, 0.25), {0.1, 2.0, false, false}, 0.25},
    {"LogUniform",
     Range(Distribution::kLogUniform, -3, 1),
     {std::exp(-3), std::exp(1), false, false},
     0},
    {"LogUniformValues",
     Range(Distribution::kLogUniformValues, 1e-4, 1e-1),
     {1e-4, 1e-1, false, false},
     0},
    {"QLogUniform", Range(Distribution::kQLogUniform, 0, 3, 1), {1, std::exp(3), false, false}, 1},
    {"QLogUniformValues",
     Range(Distribution::kQLogUniformValues, 1, 1000, 10),
     {1, 1000, false, false},
     10},
    {"InvLogUniform",
     Range(Distribution::kInvLogUniform, 0, 3),
     {std::exp(-3), 1, false, false},
     0},
    {"InvLogUniformValues",
     Range(Distribution::kInvLogUniformValues, 0.01, 1),
     {0.01, 1, false, false},
     0},
    {"Normal", Gaussian(Distribution::kNormal, 2, 0.5), {-kInf, kInf, true, true}, 0},
    {"QNormal", Gaussian(Distribution::kQNormal, 0, 3, 0.5), {-kInf, kInf, true, true}, 0.5},
    {"LogNormal", Gaussian(Distribution::kLogNormal, 0, 1), {0, kInf, true, true}, 0},
    {"QLogNormal", Gaussian(Distribution::kQLogNormal, 0, 1, 0.5), {0, kInf, false, true}, 0.5},
    {"Beta", BetaShape(Distribution::kBeta, 2, 5), {0, 1, true, true}, 0},
    // Tiny shapes put most mass at the ends, where naive X / (X + Y) underflows to 0/0.
    {"BetaTinyShapes", BetaShape(Distribution::kBeta, 0.01, 0.01), {0, 1, true, true}, 0},
    {"QBeta", BetaShape(Distribution::kQBeta, 2, 2, 0.1), {0, 1, false, false}, 0.1},
};

// Names the case in test listings instead of dumping its bytes.
void PrintTo(const DistributionCase& test_case, std::ostream* out) { *out << test_case.name; }

class DistributionTest : public testing::TestWithParam<DistributionCase> {};

TEST_P(DistributionTest, SupportOfDescribesTheDistribution) {
  const ValueInterval support = SupportOf(GetParam().spec);
  const ValueInterval& expected = GetParam().support;
  EXPECT_DOUBLE_EQ(support.lower, expected.lower);
  EXPECT_DOUBLE_EQ(support.upper, expected.upper);
  EXPECT_EQ(support.lower_open, expected.lower_open);
  EXPECT_EQ(support.upper_open, expected.upper_open);
}

TEST_P(DistributionTest, DrawsStayInsideTheSupportWithTheRightType) {
  const DistributionCase& test_case = GetParam();
  const ValueInterval& support = test_case.support;
  const bool is_int = test_case.spec.distribution == Distribution::kIntUniform;
  std::mt19937_64 rng(11);
  for (int i = 0; i < kDraws; ++i) {
    const ParamValue value = SampleParameter(test_case.spec, rng);
    ASSERT_EQ(std::holds_alternative<int64_t>(value), is_int);
    ASSERT_EQ(std::holds_alternative<double>(value), !is_int);
    const double number = ParamAsDouble(value);
    ASSERT_TRUE(std::isfinite(number)) << number;
    ASSERT_TRUE(support.lower_open ? number > support.lower : number >= support.lower) << number;
    ASSERT_TRUE(support.upper_open ? number < support.upper : number <= support.upper) << number;
    if (test_case.quantum > 0) {
      ASSERT_TRUE(IsMultipleOf(number, test_case.quantum)) << number;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllDistributions, DistributionTest, testing::ValuesIn(kDistributionCases),
                         [](const testing::TestParamInfo<DistributionCase>& info) {
                           return std::string(info.param.name);
                         });

TEST(SamplingTest, IntUniformHitsBothEndsAndEveryValueBetween) {
  std::map<int64_t, int> counts;
  std::mt19937_64 rng(3);
  for (int i = 0; i < kDraws; ++i) {
    ++counts[std::get<int64_t>(SampleParameter(Range(Distribution::kIntUniform, -3, 4), rng))];
  }
  ASSERT_EQ(counts.size(), 8u);
  EXPECT_EQ(counts.begin()->first, -3);
  EXPECT_EQ(counts.rbegin()->first, 4);
}

TEST(SamplingTest, CategoricalPicksEveryValueEquallyOften) {
  const ParameterSpec spec = Choices(
      Distribution::kCategorical, ParamType::kString,
      {std::string("sgd"), std::string("adam"), std::string("adamw"), std::string("rmsprop")});
  std::map<std::string, int> counts;
  std::mt19937_64 rng(5);
  constexpr int kCount = 40000;
  for (int i = 0; i < kCount; ++i) ++counts[std::get<std::string>(SampleParameter(spec, rng))];
  ASSERT_EQ(counts.size(), 4u);
  for (const auto& [value, count] : counts) {
    EXPECT_NEAR(static_cast<double>(count) / kCount, 0.25, 0.015) << value;
  }
}

TEST(SamplingTest, CategoricalWithProbabilitiesFollowsTheProbabilities) {
  const std::vector<double> probabilities = {0.6, 0.3, 0.1, 0.0};
  const ParameterSpec spec =
      Choices(Distribution::kCategoricalWithProbabilities, ParamType::kInt,
              {int64_t{16}, int64_t{32}, int64_t{64}, int64_t{128}}, probabilities);
  std::map<int64_t, int> counts;
  std::mt19937_64 rng(9);
  constexpr int kCount = 40000;
  for (int i = 0; i < kCount; ++i) ++counts[std::get<int64_t>(SampleParameter(spec, rng))];
  EXPECT_NEAR(counts[16] / static_cast<double>(kCount), 0.6, 0.015);
  EXPECT_NEAR(counts[32] / static_cast<double>(kCount), 0.3, 0.015);
  EXPECT_NEAR(counts[64] / static_cast<double>(kCount), 0.1, 0.015);
  EXPECT_EQ(counts[128], 0);
}

TEST(SamplingTest, ConstantReturnsItsValueUnchanged) {
  std::mt19937_64 rng(1);
  EXPECT_EQ(SampleParameter(
                Choices(Distribution::kConstant, ParamType::kString, {std::string("adamw")}), rng),
            ParamValue(std::string("adamw")));
  EXPECT_EQ(SampleParameter(Choices(Distribution::kConstant, ParamType::kInt, {int64_t{7}}), rng),
            ParamValue(int64_t{7}));
  EXPECT_EQ(SampleParameter(Choices(Distribution::kConstant, ParamType::kFloat, {0.5}), rng),
            ParamValue(0.5));
}

TEST(SamplingTest, LogUniformValuesIsUniformInLog) {
  const std::vector<double> draws =
      DrawNumbers(Range(Distribution::kLogUniformValues, 1e-4, 1e-1), 30000);
  int per_decade[3] = {0, 0, 0};
  for (double draw : draws) {
    const int decade = static_cast<int>(std::floor(std::log10(draw) + 4));  // 0, 1 or 2
    ++per_decade[std::min(decade, 2)];
  }
  for (int count : per_decade) EXPECT_NEAR(count / 30000.0, 1.0 / 3.0, 0.02);
}

TEST(SamplingTest, LogUniformExponentiatesAUniformExponent) {
  std::vector<double> exponents;
  for (double draw : DrawNumbers(Range(Distribution::kLogUniform, -4, 0), 20000)) {
    exponents.push_back(std::log(draw));
  }
  EXPECT_NEAR(Mean(exponents), -2.0, 0.05);
  EXPECT_NEAR(StandardDeviation(exponents), 4.0 / std::sqrt(12.0), 0.03);
}

TEST(SamplingTest, InvLogUniformIsTheInverseOfAnExponentiatedUniform) {
  std::vector<double> exponents;
  for (double draw : DrawNumbers(Range(Distribution::kInvLogUniform, 0, 3), 20000)) {
    exponents.push_back(-std::log(draw));
  }
  EXPECT_NEAR(Mean(exponents), 1.5, 0.05);
  EXPECT_NEAR(StandardDeviation(exponents), 3.0 / std::sqrt(12.0), 0.03);
}

TEST(SamplingTest, NormalHasTheGivenMeanAndStandardDeviation) {
  const std::vector<double> draws = DrawNumbers(Gaussian(Distribution::kNormal, 2.0, 0.5), 20000);
  EXPECT_NEAR(Mean(draws), 2.0, 0.02);
  EXPECT_NEAR(StandardDeviation(draws), 0.5, 0.02);
}

TEST(SamplingTest, LogNormalHasANormalLogarithm) {
  std::vector<double> logs;
  for (double draw : DrawNumbers(Gaussian(Distribution::kLogNormal, -3.0, 0.7), 20000)) {
    logs.push_back(std::log(draw));
  }
  EXPECT_NEAR(Mean(logs), -3.0, 0.03);
  EXPECT_NEAR(StandardDeviation(logs), 0.7, 0.03);
}

TEST(SamplingTest, BetaHasTheExpectedMean) {
  const std::vector<double> draws = DrawNumbers(BetaShape(Distribution::kBeta, 2.0, 5.0), 20000);
  EXPECT_NEAR(Mean(draws), 2.0 / 7.0, 0.01);
}

TEST(SamplingTest, SameGeneratorStateGivesSameDraws) {
  const ParameterSpec spec = Range(Distribution::kLogUniformValues, 1e-4, 1e-1);
  EXPECT_EQ(DrawNumbers(spec, 100, 42), DrawNumbers(spec, 100, 42));
  EXPECT_NE(DrawNumbers(spec, 100, 42), DrawNumbers(spec, 100, 43));
}

TEST(ValueIntervalTest, ContainsHonoursOpenEnds) {
  const ValueInterval positive{0, kInf, true, false};  // (0, inf]
  EXPECT_TRUE(positive.Contains({0, 1, true, false}));
  EXPECT_FALSE(positive.Contains({0, 1, false, false}));
  EXPECT_TRUE(positive.Contains({1e-9, kInf, false, true}));
  EXPECT_FALSE(positive.Contains({-kInf, kInf, true, true}));
  const ValueInterval unit{0, 1, false, true};  // [0, 1)
  EXPECT_TRUE(unit.Contains({0, 0.5, false, false}));
  EXPECT_TRUE(unit.Contains({0, 1, true, true}));
  EXPECT_FALSE(unit.Contains({0, 1, false, false}));
}

}  // namespace
}  // namespace hpo
