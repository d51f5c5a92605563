// Multivariate TPE (search.model: tpe, the default) against independent TPE (tpe_independent),
// and the joint Parzen estimator it is built on.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "../../core/src/search/model_space.hpp"
#include "../../core/src/search/parzen_estimator.hpp"
#include "hpo/config.hpp"
#include "search/searcher.hpp"
#include "searcher_test_support.hpp"

namespace hpo {
namespace {

using test_support::MakeConfig;
using test_support::MakeOrDie;
using test_support::Parameter;

// A narrow valley along the diagonal x = y, lowest at (0.8, 0.8): neither parameter alone says
// where the good region is; only their combination does.
double DiagonalValley(double x, double y) {
  return 50.0 * (x - y) * (x - y) + 0.5 * (x + y - 1.6) * (x + y - 1.6);
}

bool InValley(double x, double y) { return std::abs(x - y) < 0.05; }

// Of trials 40..79 of 80 sequential trials, how many lie in the valley, summed over seeds 1..5.
int ValleyHits(BayesModel model) {
  int hits = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SweepConfig config = MakeConfig(SearchMethod::kBayes,
                                    {Parameter("x", Distribution::kUniform, 0.0, 1.0),
                                     Parameter("y", Distribution::kUniform, 0.0, 1.0)},
                                    seed);
    config.search.model = model;
    std::unique_ptr<Searcher> searcher = MakeOrDie(config);
    for (int64_t trial = 0; trial < 80; ++trial) {
      const Assignment params = *searcher->Suggest(trial);
      const double x = std::get<double>(params[0].value);
      const double y = std::get<double>(params[1].value);
      searcher->Observe(trial, params, TrialStatus::kCompleted, DiagonalValley(x, y));
      if (trial >= 40 && InValley(x, y)) ++hits;
    }
  }
  return hits;
}

TEST(MultivariateTpeTest, PrefersTheGoodRegionOfACorrelatedFunctionOverIndependentTpe) {
  const int multivariate = ValleyHits(BayesModel::kTpe);
  const int independent = ValleyHits(BayesModel::kTpeIndependent);
  // 200 late trials each; uniform draws would put 10% in the valley.
  EXPECT_GT(multivariate, 100) << "multivariate " << multivariate;
  EXPECT_GT(multivariate, independent + 40)
      << "multivariate " << multivariate << ", independent " << independent;
}

// Of trials 20..59 of 60 sequential trials on x in [0, 1], each reporting (x - 0.9)^2 at epoch 1
// and then stopped there (early_terminate) or finishing with it (no early termination), how many
// lie within 0.05 of 0.9, summed over seeds 1..5.
int NearTheEarlyLeader(bool early_terminate) {
  int hits = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SweepConfig config =
        MakeConfig(SearchMethod::kBayes, {Parameter("x", Distribution::kUniform, 0.0, 1.0)}, seed);
    config.execution.epochs = 27;
    config.sweep.early_terminate.enabled = early_terminate;
    config.sweep.early_terminate.min_iter = 1;
    config.search.model_given = true;  // TPE by name, with ASHA
    std::unique_ptr<Searcher> searcher = MakeOrDie(config);
    for (int64_t trial = 0; trial < 60; ++trial) {
      const Assignment params = *searcher->Suggest(trial);
      const double x = std::get<double>(params[0].value);
      const double value = (x - 0.9) * (x - 0.9);
      searcher->ObserveEpoch(trial, params, 1, value);
      searcher->Observe(trial, params,
                        early_terminate ? TrialStatus::kStopped : TrialStatus::kCompleted, value);
      if (trial >= 20 && std::abs(x - 0.9) < 0.05) ++hits;
    }
  }
  return hits;
}

TEST(MultivariateTpeTest, UnderEarlyTerminationCandidatesComeFromThePrior) {
  // Early reports rank the settings that start fast first, whether or not they end best: under
  // early termination TPE scores draws from the prior by l(x) / g(x) instead of drawing from
  // l(x), so it leans towards the early leader without going back to it every time.
  const int stopped = NearTheEarlyLeader(true);
  const int finished = NearTheEarlyLeader(false);
  // 200 late trials each; uniform draws would put 10% within 0.05 of 0.9.
  EXPECT_GT(stopped, 20) << "early termination " << stopped;
  EXPECT_LT(stopped, finished) << "early termination " << stopped << ", none " << finished;
  EXPECT_GT(finished, 100) << "none " << finished;
}

TEST(MultivariateTpeTest, DefaultModelIsMultivariate) {
  EXPECT_EQ(SearchOptions().model, BayesModel::kTpe);
}

// The estimator: draws stay in range, the density integrates to 1 over a continuous and a grid
// dimension, and points near the observations are denser than points away from them.
TEST(MultivariateParzenEstimatorTest, IsANormalisedDensityPeakedAtTheObservations) {
  ParameterSpec x = Parameter("x", Distribution::kUniform, 0.0, 1.0);
  ParameterSpec n = Parameter("n", Distribution::kIntUniform, 0.0, 9.0);
  const std::vector<ModelDimension> dimensions = ModelDimensionsOf({x, n});
  const std::vector<double> a = {0.2, 3.0};
  const std::vector<double> b = {0.25, 4.0};
  const std::vector<double> c = {0.8, 8.0};
  MultivariateParzenEstimator::Options options;
  options.scott = true;
  options.bandwidth_factor = 1.0;
  const MultivariateParzenEstimator estimator(dimensions, {&a, &b, &c}, options);
  EXPECT_EQ(estimator.kernel_count(), 4u);

  std::mt19937_64 rng(3);
  std::vector<double> point;
  for (int i = 0; i < 200; ++i) {
    estimator.Sample(rng, &point);
    ASSERT_EQ(point.size(), 2u);
    EXPECT_GE(point[0], 0.0);
    EXPECT_LE(point[0], 1.0);
    EXPECT_EQ(point[1], std::round(point[1]));
    EXPECT_GE(point[1], 0.0);
    EXPECT_LE(point[1], 9.0);
  }

  // Midpoint rule over x (2,000 cells) times the sum over the 10 grid points.
  constexpr int kCells = 2000;
  std::vector<double> grid;
  for (int i = 0; i < kCells; ++i) {
    for (int j = 0; j <= 9; ++j) {
      grid.push_back((i + 0.5) / kCells);
      grid.push_back(j);
    }
  }
  std::vector<double> log_densities(grid.size() / 2);
  std::vector<double> scratch;
  estimator.LogDensities(grid.data(), log_densities.size(), log_densities.data(), &scratch);
  double total = 0.0;
  for (double log_density : log_densities) total += std::exp(log_density) / kCells;
  EXPECT_NEAR(total, 1.0, 1e-3);

  const std::vector<double> probes = {0.22, 3.0, 0.98, 0.0};
  double probe_densities[2];
  estimator.LogDensities(probes.data(), 2, probe_densities, &scratch);
  EXPECT_GT(probe_densities[0], probe_densities[1] + 1.0);
}

}  // namespace
}  // namespace hpo
