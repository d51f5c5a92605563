// The Sobol' searcher (method: random, search.sampler: sobol): the unscrambled sequence against
// reference points of the Joe-Kuo sequence in all 32 dimensions, the (0, m, 2)-net property of its
// first two dimensions, stratified categorical/int/normal values, valid values for every
// distribution, seeding, a lower integration error than random search, the dimension limit and
// saved state.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../../core/src/search/sobol.hpp"
#include "hpo/config.hpp"
#include "search/searcher.hpp"
#include "searcher_test_support.hpp"

namespace hpo {
namespace {

using test_support::Choices;
using test_support::IsValidValue;
using test_support::MakeConfig;
using test_support::MakeOrDie;
using test_support::Parameter;
using test_support::Shaped;

SweepConfig SobolConfig(std::vector<ParameterSpec> parameters, uint64_t seed) {
  SweepConfig config = MakeConfig(SearchMethod::kRandom, std::move(parameters), seed);
  config.search.sampler = RandomSampler::kSobol;
  return config;
}

SweepConfig UnitSquare(SearchMethod method, RandomSampler sampler, uint64_t seed) {
  SweepConfig config = MakeConfig(method,
                                  {Parameter("x", Distribution::kUniform, 0.0, 1.0),
                                   Parameter("y", Distribution::kUniform, 0.0, 1.0)},
                                  seed);
  config.search.sampler = sampler;
  return config;
}

std::vector<Assignment> Suggestions(Searcher& searcher, int64_t first, int64_t count) {
  std::vector<Assignment> suggestions;
  for (int64_t id = first; id < first + count; ++id) {
    std::optional<Assignment> params = searcher.Suggest(id);
    EXPECT_TRUE(params.has_value()) << "trial " << id;
    if (params) suggestions.push_back(*params);
  }
  return suggestions;
}

double Coordinate(const Assignment& params, size_t index) {
  return std::get<double>(params[index].value);
}

TEST(ScrambledSobolSequenceTest, UnscrambledPointsMatchTheJoeKuoSequence) {
  // Points of the plain Sobol' sequence with new-joe-kuo-6.21201 direction numbers, as computed by
  // SciPy 1.10 (scipy.stats.qmc.Sobol(d=32, scramble=False, bits=30), whose i-th point in its Gray
  // code order is point i ^ (i >> 1) here), times 2^30.
  struct Reference {
    uint64_t index;
    int64_t times_two_to_30[32];
  };
  const Reference references[] = {
      {3, {805306368, 268435456, 268435456, 268435456, 805306368, 805306368, 268435456, 805306368,
           805306368, 805306368, 805306368, 805306368, 268435456, 268435456, 805306368, 268435456,
           805306368, 268435456, 805306368, 268435456, 268435456, 805306368, 268435456, 268435456,
           268435456, 805306368, 268435456, 805306368, 268435456, 805306368, 268435456, 268435456}},
      {1000, {99614720,  173015040,  483393536, 976224256, 1066401792, 175112192,  17825792,
              686817280, 1072693248, 131072000, 248512512, 1060110336, 149946368,  1001390080,
              944766976, 17825792,   716177408, 464519168, 818937856,  483393536,  282066944,
              667942912, 510656512,  355467264, 795869184, 913309696,  1034944512, 936378368,
              523239424, 208666624,  210763776, 531628032}},
      {123456789,
       {707589816, 400121016, 1059545864, 830028184, 496303032,  770823592, 347836888, 634017400,
        435850968, 861972376, 249401064,  977681544, 1033620824, 837585288, 353860280, 68528920,
        449638712, 734523672, 223272728,  442449384, 157040648,  621512904, 215246776, 148948712,
        967528728, 525175992, 587609688,  23015304,  788720216,  795083432, 829517192, 962219352}},
  };
  const ScrambledSobolSequence plain(ScrambledSobolSequence::kMaxDimensions, false, 0);
  EXPECT_EQ(plain.PointDigits(0), std::vector<uint64_t>(32, 0));
  for (const Reference& reference : references) {
    const std::vector<uint64_t> digits = plain.PointDigits(reference.index);
    ASSERT_EQ(digits.size(), 32u);
    for (size_t d = 0; d < digits.size(); ++d) {
      EXPECT_EQ(static_cast<int64_t>(digits[d] >> 34), reference.times_two_to_30[d])
          << "point " << reference.index << ", dimension " << d + 1;
    }
  }
}

TEST(SobolSearcherTest, FirstTwoDimensionsAreZeroMTwoNets) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    std::unique_ptr<Searcher> sobol =
        MakeOrDie(UnitSquare(SearchMethod::kRandom, RandomSampler::kSobol, seed));
    for (int m = 1; m <= 10; ++m) {
      const int64_t count = int64_t{1} << m;
      // The first 2^m points, and the next 2^m as well.
      for (int64_t first : {int64_t{0}, count}) {
        const std::vector<Assignment> points = Suggestions(*sobol, first, count);
        for (int a = 0; a <= m; ++a) {  // boxes of 2^-a x 2^-(m - a)
          std::map<std::pair<int64_t, int64_t>, int> per_box;
          for (const Assignment& point : points) {
            const auto column = static_cast<int64_t>(std::floor(Coordinate(point, 0) * (1 << a)));
            const auto row =
                static_cast<int64_t>(std::floor(Coordinate(point, 1) * (1 << (m - a))));
            ++per_box[{column, row}];
          }
          EXPECT_EQ(per_box.size(), static_cast<size_t>(count))
              << "seed " << seed << ", points " << first << ".." << first + count - 1
              << ", boxes 2^-" << a << " x 2^-" << m - a;
        }
      }
    }
  }
}

TEST(SobolSearcherTest, CategoricalIntAndNormalValuesAreStratified) {
  const SweepConfig config = SobolConfig(
      {Choices(
           "optimizer", ParamType::kString,
           {std::string("sgd"), std::string("adam"), std::string("adamw"), std::string("lion")}),
       Parameter("width", Distribution::kIntUniform, 1, 8),
       Shaped("normal", Distribution::kNormal, 2.0, 3.0),
       Choices("batch_size", ParamType::kInt, {int64_t{32}, int64_t{64}}, {0.25, 0.75})},
      9);
  std::unique_ptr<Searcher> sobol = MakeOrDie(config);
  const std::vector<Assignment> points = Suggestions(*sobol, 0, 64);
  std::map<std::string, int> optimizers;
  std::map<int64_t, int> widths;
  std::map<int64_t, int> batch_sizes;
  int below_mean = 0;
  int below_first_quartile = 0;
  const double first_quartile = 2.0 - 3.0 * 0.6744897501960817;
  for (const Assignment& point : points) {
    ++optimizers[std::get<std::string>(point[0].value)];
    ++widths[std::get<int64_t>(point[1].value)];
    below_mean += std::get<double>(point[2].value) < 2.0;
    below_first_quartile += std::get<double>(point[2].value) < first_quartile;
    ++batch_sizes[std::get<int64_t>(point[3].value)];
  }
  ASSERT_EQ(optimizers.size(), 4u);
  for (const auto& [name, count] : optimizers) EXPECT_EQ(count, 16) << name;
  ASSERT_EQ(widths.size(), 8u);
  for (const auto& [width, count] : widths) EXPECT_EQ(count, 8) << "width " << width;
  EXPECT_EQ(below_mean, 32);
  EXPECT_EQ(below_first_quartile, 16);
  EXPECT_EQ(batch_sizes[32], 16);
  EXPECT_EQ(batch_sizes[64], 48);
}

TEST(SobolSearcherTest, ValuesRespectEveryDistributionsBoundsAndTypes) {
  const std::vector<ParameterSpec> parameters = test_support::EveryDistribution();
  std::unique_ptr<Searcher> sobol = MakeOrDie(SobolConfig(parameters, 4));
  EXPECT_FALSE(sobol->SpaceSize().has_value());
  for (const Assignment& params : Suggestions(*sobol, 0, 512)) {
    ASSERT_EQ(params.size(), parameters.size());
    for (size_t i = 0; i < parameters.size(); ++i) {
      EXPECT_EQ(params[i].name, parameters[i].name);
      EXPECT_TRUE(IsValidValue(parameters[i], params[i].value));
    }
  }
}

TEST(SobolSearcherTest, SameSeedSamePointsDifferentSeedDifferentPoints) {
  std::unique_ptr<Searcher> first =
      MakeOrDie(UnitSquare(SearchMethod::kRandom, RandomSampler::kSobol, 5));
  std::unique_ptr<Searcher> second =
      MakeOrDie(UnitSquare(SearchMethod::kRandom, RandomSampler::kSobol, 5));
  std::unique_ptr<Searcher> other =
      MakeOrDie(UnitSquare(SearchMethod::kRandom, RandomSampler::kSobol, 6));
  const std::vector<Assignment> a = Suggestions(*first, 0, 64);
  const std::vector<Assignment> other_points = Suggestions(*other, 0, 64);
  int same_as_other = 0;
  for (int64_t id = 63; id >= 0; --id) {  // any call order gives the same trial
    const Assignment b = *second->Suggest(id);
    EXPECT_EQ(Coordinate(a[id], 0), Coordinate(b, 0)) << "trial " << id;
    EXPECT_EQ(Coordinate(a[id], 1), Coordinate(b, 1)) << "trial " << id;
    same_as_other += Coordinate(a[id], 0) == Coordinate(other_points[id], 0);
  }
  EXPECT_EQ(same_as_other, 0);
}

// The largest error, over `seeds` seeds, of the mean of exp(x) sin(pi y) over the unit square
// estimated from the first 64 trials.
double WorstMeanError(RandomSampler sampler, int seeds) {
  const double exact = (std::exp(1.0) - 1.0) * 2.0 / M_PI;
  double worst = 0.0;
  for (int seed = 1; seed <= seeds; ++seed) {
    std::unique_ptr<Searcher> searcher =
        MakeOrDie(UnitSquare(SearchMethod::kRandom, sampler, static_cast<uint64_t>(seed)));
    double total = 0.0;
    const std::vector<Assignment> points = Suggestions(*searcher, 0, 64);
    for (const Assignment& point : points) {
      total += std::exp(Coordinate(point, 0)) * std::sin(M_PI * Coordinate(point, 1));
    }
    worst = std::max(worst, std::abs(total / static_cast<double>(points.size()) - exact));
  }
  return worst;
}

TEST(SobolSearcherTest, EstimatesASmoothMeanBetterThanRandomSearch) {
  const double sobol = WorstMeanError(RandomSampler::kSobol, 20);
  const double random = WorstMeanError(RandomSampler::kIndependent, 20);
  EXPECT_LT(sobol, random / 10.0) << "worst error: sobol " << sobol << ", random " << random;
}

TEST(SobolSearcherTest, RejectsMoreThanThirtyTwoSequenceDimensions) {
  std::vector<ParameterSpec> parameters;
  for (int i = 0; i < 32; ++i) {
    parameters.push_back(Parameter("p" + std::to_string(i), Distribution::kUniform, 0.0, 1.0));
  }
  // Constants and beta parameters take no dimension of the sequence.
  ParameterSpec constant = Choices("fixed", ParamType::kInt, {int64_t{3}});
  constant.distribution = Distribution::kConstant;
  parameters.push_back(constant);
  parameters.push_back(Shaped("beta", Distribution::kBeta, 2.0, 2.0));
  std::unique_ptr<Searcher> searcher;
  EXPECT_TRUE(MakeSearcher(SobolConfig(parameters, 1), &searcher).ok());

  parameters.push_back(Parameter("one_too_many", Distribution::kUniform, 0.0, 1.0));
  const Status status = MakeSearcher(SobolConfig(parameters, 1), &searcher);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_NE(status.message().find("at most 32"), std::string::npos) << status.message();
}

TEST(SobolSearcherTest, IsBuiltFromAParsedRandomConfigWithTheSobolSampler) {
  const std::string text = R"(task: synthetic
seed: 4
sweep:
  method: random
  run_cap: 16
  metric: {name: val_loss}
  parameters:
    dropout: {min: 0.0, max: 0.5}
    width: {min: 8, max: 15}
search:
  sampler: sobol
)";
  SweepConfig config;
  const Status parsed = ParseConfig(text, "sobol.yaml", &config);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  std::unique_ptr<Searcher> sobol = MakeOrDie(config);
  std::map<int64_t, int> widths;
  for (const Assignment& params : Suggestions(*sobol, 0, 16)) {
    EXPECT_TRUE(IsValidValue(config.sweep.parameters[0], params[0].value));
    ++widths[std::get<int64_t>(params[1].value)];
  }
  EXPECT_EQ(widths.size(), 8u);  // stratified: every width exactly twice
  for (const auto& [width, count] : widths) EXPECT_EQ(count, 2) << "width " << width;
}

TEST(SobolSearcherTest, StateRoundTripsAndRejectsOthers) {
  std::unique_ptr<Searcher> sobol =
      MakeOrDie(UnitSquare(SearchMethod::kRandom, RandomSampler::kSobol, 5));
  const std::string state = sobol->SaveState();
  std::unique_ptr<Searcher> restored =
      MakeOrDie(UnitSquare(SearchMethod::kRandom, RandomSampler::kSobol, 5));
  EXPECT_TRUE(restored->RestoreState(state).ok());
  EXPECT_EQ(Coordinate(*restored->Suggest(7), 0), Coordinate(*sobol->Suggest(7), 0));

  std::unique_ptr<Searcher> other_seed =
      MakeOrDie(UnitSquare(SearchMethod::kRandom, RandomSampler::kSobol, 6));
  EXPECT_EQ(other_seed->RestoreState(state).code(), Status::Code::kBadInput);
  std::unique_ptr<Searcher> random =
      MakeOrDie(UnitSquare(SearchMethod::kRandom, RandomSampler::kIndependent, 5));
  EXPECT_EQ(random->RestoreState(state).code(), Status::Code::kBadInput);
  EXPECT_EQ(sobol->RestoreState(random->SaveState()).code(), Status::Code::kBadInput);
  EXPECT_EQ(sobol->RestoreState("garbage").code(), Status::Code::kBadInput);
}

}  // namespace
}  // namespace hpo
