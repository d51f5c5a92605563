// The start-up design of method bayes (space_filling.hpp's StartupDesign): with the Sobol sampler,
// balanced categorical values, stratified numeric values, the parameters it leaves to random
// draws, determinism in (seed, trial) and that the model-based searchers start with it; without,
// random search's trials.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "../../core/src/search/space_filling.hpp"
#include "common/seeding.hpp"
#include "hpo/config.hpp"
#include "search/sampling.hpp"
#include "searcher_test_support.hpp"

namespace hpo {
namespace {

using test_support::Choices;
using test_support::EveryDistribution;
using test_support::IsValidValue;
using test_support::MakeConfig;
using test_support::MakeOrDie;
using test_support::Parameter;
using test_support::Shaped;

bool Same(const Assignment& a, const Assignment& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].value != b[i].value) return false;
  }
  return true;
}

std::vector<ParameterSpec> MixedSpace() {
  return {Choices("optimizer", ParamType::kString,
                  {std::string("sgd"), std::string("adam"), std::string("adamw")}),
          Parameter("dropout", Distribution::kUniform, 0.0, 0.5),
          Choices("width", ParamType::kInt,
                  {int64_t{4}, int64_t{8}, int64_t{16}, int64_t{32}, int64_t{64}}),
          Parameter("lr", Distribution::kLogUniformValues, 1e-5, 1e-1),
          Parameter("layers", Distribution::kIntUniform, 1, 8)};
}

TEST(StartupDesignTest, EveryCategoricalValueIsDrawnEquallyOftenInEachBlock) {
  for (uint64_t seed : {1, 2, 77}) {
    const StartupDesign design(MixedSpace(), seed, RandomSampler::kSobol);
    for (const auto& [index, count] : std::map<size_t, int64_t>{{0, 3}, {2, 5}}) {
      for (int64_t blocks : {1, 2, 4}) {
        std::map<std::string, int> seen;
        for (int64_t id = 0; id < blocks * count; ++id) {
          seen[FormatParamValue(design.TrialAt(id)[index].value)] += 1;
        }
        ASSERT_EQ(static_cast<int64_t>(seen.size()), count) << "seed " << seed;
        for (const auto& [value, times] : seen) {
          EXPECT_EQ(times, blocks)
              << "seed " << seed << ", value " << value << ", " << blocks * count << " trials";
        }
      }
    }
  }
}

TEST(StartupDesignTest, BalancedBlocksAreNotOneFixedOrder) {
  const StartupDesign design(MixedSpace(), 5, RandomSampler::kSobol);
  std::set<std::vector<std::string>> orders;
  for (int64_t block = 0; block < 8; ++block) {
    std::vector<std::string> order;
    for (int64_t id = block * 5; id < block * 5 + 5; ++id) {
      order.push_back(FormatParamValue(design.TrialAt(id)[2].value));
    }
    orders.insert(order);
  }
  EXPECT_GT(orders.size(), 1u);
}

TEST(StartupDesignTest, NumericValuesAreStratified) {
  // The first 2^m trials put one dropout in each of 2^m equal slices of [0, 0.5], one log10(lr)
  // in each slice of [-5, -1] and the same number of `layers` on each of its 8 integers.
  for (uint64_t seed : {3, 4}) {
    const StartupDesign design(MixedSpace(), seed, RandomSampler::kSobol);
    for (int m : {1, 2, 3, 4}) {
      const int64_t n = int64_t{1} << m;
      std::set<int> dropout_slices;
      std::set<int> lr_slices;
      std::map<int64_t, int> layers;
      for (int64_t id = 0; id < n; ++id) {
        const Assignment trial = design.TrialAt(id);
        dropout_slices.insert(static_cast<int>(std::get<double>(trial[1].value) / 0.5 * n));
        lr_slices.insert(
            static_cast<int>((std::log10(std::get<double>(trial[3].value)) + 5.0) / 4.0 * n));
        layers[std::get<int64_t>(trial[4].value)] += 1;
      }
      EXPECT_EQ(static_cast<int64_t>(dropout_slices.size()), n) << "seed " << seed;
      EXPECT_EQ(static_cast<int64_t>(lr_slices.size()), n) << "seed " << seed;
      if (n >= 8) {
        for (const auto& [value, times] : layers) EXPECT_EQ(times, n / 8) << "layers " << value;
      }
    }
  }
}

TEST(StartupDesignTest, ValuesAreValidForEveryDistribution) {
  const std::vector<ParameterSpec> parameters = EveryDistribution();
  const StartupDesign design(parameters, 9, RandomSampler::kSobol);
  for (int64_t id = 0; id < 64; ++id) {
    const Assignment trial = design.TrialAt(id);
    ASSERT_EQ(trial.size(), parameters.size());
    for (size_t p = 0; p < parameters.size(); ++p) {
      EXPECT_EQ(trial[p].name, parameters[p].name);
      EXPECT_TRUE(IsValidValue(parameters[p], trial[p].value))
          << parameters[p].name << " in trial " << id;
    }
  }
}

TEST(StartupDesignTest, DependsOnlyOnSeedAndTrial) {
  const StartupDesign design(EveryDistribution(), 11, RandomSampler::kSobol);
  const StartupDesign same(EveryDistribution(), 11, RandomSampler::kSobol);
  const StartupDesign other(EveryDistribution(), 12, RandomSampler::kSobol);
  int differing = 0;
  for (int64_t id : {40, 3, 17, 0, 3}) {
    EXPECT_TRUE(Same(design.TrialAt(id), same.TrialAt(id))) << "trial " << id;
    differing += !Same(design.TrialAt(id), other.TrialAt(id));
  }
  EXPECT_EQ(differing, 5);
}

TEST(StartupDesignTest, ParametersBeyondTheSequencesDimensionsAreDrawnAsRandomSearchDrawsThem) {
  // 40 numeric parameters: the first 32 take the sequence, the other 8 random search's draws;
  // beta has no quantile and is drawn too.
  std::vector<ParameterSpec> parameters;
  for (int i = 0; i < 40; ++i) {
    parameters.push_back(Parameter("x" + std::to_string(i), Distribution::kUniform, 0.0, 1.0));
  }
  parameters.push_back(Shaped("beta", Distribution::kBeta, 2.0, 5.0));
  const StartupDesign design(parameters, 21, RandomSampler::kSobol);
  for (size_t p : {0, 31}) {
    std::set<int> quarters;
    for (int64_t id = 0; id < 4; ++id) {
      quarters.insert(static_cast<int>(std::get<double>(design.TrialAt(id)[p].value) * 4));
    }
    EXPECT_EQ(quarters.size(), 4u) << "x" << p << " is a sequence dimension";
  }
  for (int64_t id = 0; id < 8; ++id) {
    const Assignment trial = design.TrialAt(id);
    std::mt19937_64 rng(DeriveSeed(21, kSamplingPurpose, static_cast<uint64_t>(id)));
    for (size_t p = 32; p < parameters.size(); ++p) {
      EXPECT_EQ(trial[p].value, SampleParameter(parameters[p], rng)) << parameters[p].name;
    }
  }
}

TEST(StartupDesignTest, WithoutSobolItIsRandomSearch) {
  std::unique_ptr<Searcher> random = MakeOrDie(MakeConfig(SearchMethod::kRandom, MixedSpace(), 4));
  const StartupDesign design(MixedSpace(), 4, RandomSampler::kIndependent);
  for (int64_t id = 0; id < 12; ++id) {
    EXPECT_TRUE(Same(design.TrialAt(id), *random->Suggest(id))) << "trial " << id;
  }
}

TEST(StartupDesignTest, ModelBasedSearchersStartWithItsSobolDesignWhenAskedTo) {
  for (BayesModel model : {BayesModel::kTpe, BayesModel::kTpeIndependent, BayesModel::kGp}) {
    SweepConfig config = MakeConfig(SearchMethod::kBayes, MixedSpace(), 8);
    config.search.model = model;
    config.search.startup_trials = 6;
    config.search.sampler = RandomSampler::kSobol;
    std::unique_ptr<Searcher> searcher = MakeOrDie(config);
    const StartupDesign design(MixedSpace(), 8, RandomSampler::kSobol);
    for (int64_t id = 0; id < 6; ++id) {
      EXPECT_TRUE(Same(*searcher->Suggest(id), design.TrialAt(id))) << "trial " << id;
    }
  }
}

TEST(StartupDesignTest, AStudyOfOneStartupDoesNotResumeWithTheOther) {
  SweepConfig random = MakeConfig(SearchMethod::kBayes, MixedSpace(), 8);
  SweepConfig sobol = random;
  sobol.search.sampler = RandomSampler::kSobol;
  std::unique_ptr<Searcher> with_random = MakeOrDie(random);
  std::unique_ptr<Searcher> with_sobol = MakeOrDie(sobol);
  EXPECT_NE(with_random->ConfigFingerprint(), with_sobol->ConfigFingerprint());
  EXPECT_EQ(with_sobol->RestoreState(with_random->SaveState()).code(), Status::Code::kBadInput);
  // The default's fingerprint is what studies written before the option hold.
  EXPECT_EQ(with_random->ConfigFingerprint().find("+sobol"), std::string::npos);
}

}  // namespace
}  // namespace hpo
