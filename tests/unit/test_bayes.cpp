// The searchers of method bayes, TPE (search.model: tpe) and the Gaussian process (gp): start-up,
// concentration on good regions, goal direction, failed trials, constant liar, determinism, saved
// state, value validity and BOHB-style multi-fidelity fitting; the GP's regression and expected
// improvement.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "../../core/src/search/gaussian_process.hpp"
#include "hpo/config.hpp"
#include "search/searcher.hpp"
#include "search/searchers.hpp"
#include "search/trial_history.hpp"
#include "searcher_test_support.hpp"

namespace hpo {
namespace {

using test_support::IsValidValue;
using test_support::MakeConfig;
using test_support::MakeOrDie;
using test_support::Parameter;

constexpr double kOptimumX = 0.7;
constexpr double kOptimumY = 0.2;
constexpr double kNearRadius = 0.15;
constexpr int kSeeds = 10;
constexpr int kTrials = 60;
constexpr int kLastTrials = 30;

using Objective = std::function<double(const Assignment&)>;

double X(const Assignment& params) { return std::get<double>(params[0].value); }
double Y(const Assignment& params) { return std::get<double>(params[1].value); }

double DistanceTo(const Assignment& params, double x, double y) {
  return std::hypot(X(params) - x, Y(params) - y);
}

// (x - 0.7)^2 + (y - 0.2)^2, minimal at (0.7, 0.2).
double Bowl(const Assignment& params) {
  const double distance = DistanceTo(params, kOptimumX, kOptimumY);
  return distance * distance;
}

SweepConfig SquareConfig(SearchMethod method, BayesModel model, uint64_t seed) {
  SweepConfig config = MakeConfig(method,
                                  {Parameter("x", Distribution::kUniform, 0.0, 1.0),
                                   Parameter("y", Distribution::kUniform, 0.0, 1.0)},
                                  seed);
  config.search.model = model;
  return config;
}
SweepConfig SquareConfig(SearchMethod method, uint64_t seed) {
  return SquareConfig(method, BayesModel::kTpe, seed);
}

// The behaviour both models of method bayes share; parameterised by search.model.
class BayesSearcherTest : public ::testing::TestWithParam<BayesModel> {};

struct RunResult {
  double best = std::numeric_limits<double>::infinity();  // smallest objective seen
  std::vector<Assignment> suggestions;
};

// Suggests and observes trials `first` .. `first + count - 1` one after the other, each reporting
// its objective as epoch 1 and as its final result.
RunResult RunSequentially(Searcher& searcher, const Objective& objective, int64_t first,
                          int64_t count) {
  RunResult result;
  for (int64_t id = first; id < first + count; ++id) {
    const std::optional<Assignment> params = searcher.Suggest(id);
    EXPECT_TRUE(params.has_value());
    if (!params) break;
    const double value = objective(*params);
    searcher.ObserveEpoch(id, *params, 1, value);  // data only with early termination enabled
    searcher.Observe(id, *params,
                     std::isnan(value) ? TrialStatus::kFailed : TrialStatus::kCompleted, value);
    if (!std::isnan(value)) result.best = std::min(result.best, value);
    result.suggestions.push_back(*params);
  }
  return result;
}

double FractionWithin(const std::vector<Assignment>& suggestions, size_t from, double x, double y,
                      double radius) {
  int near = 0;
  for (size_t i = from; i < suggestions.size(); ++i)
    near += DistanceTo(suggestions[i], x, y) < radius;
  return static_cast<double>(near) / static_cast<double>(suggestions.size() - from);
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

double Mean(const std::vector<double>& values) {
  double total = 0.0;
  for (double value : values) total += value;
  return total / static_cast<double>(values.size());
}

bool SameAssignment(const Assignment& a, const Assignment& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].value != b[i].value) return false;
  }
  return true;
}

TEST_P(BayesSearcherTest, StartupTrialsAreRandomSearchsTrials) {
  SweepConfig config = SquareConfig(SearchMethod::kBayes, GetParam(), 5);
  config.search.startup_trials = 7;
  std::unique_ptr<Searcher> bayes = MakeOrDie(config);
  std::unique_ptr<Searcher> random = MakeOrDie(SquareConfig(SearchMethod::kRandom, 5));
  const RunResult run = RunSequentially(*bayes, Bowl, 0, 8);
  for (int64_t id = 0; id < 7; ++id) {
    EXPECT_TRUE(SameAssignment(run.suggestions[id], *random->Suggest(id))) << "trial " << id;
  }
  EXPECT_FALSE(SameAssignment(run.suggestions[7], *random->Suggest(7)));
  EXPECT_FALSE(bayes->SpaceSize().has_value());
}

TEST_P(BayesSearcherTest, ConcentratesOnTheGoodRegionFarMoreThanRandomSearch) {
  std::vector<double> bayes_best, random_best, bayes_near, random_near;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    std::unique_ptr<Searcher> bayes =
        MakeOrDie(SquareConfig(SearchMethod::kBayes, GetParam(), seed));
    std::unique_ptr<Searcher> random = MakeOrDie(SquareConfig(SearchMethod::kRandom, seed));
    const RunResult bayes_run = RunSequentially(*bayes, Bowl, 0, kTrials);
    const RunResult random_run = RunSequentially(*random, Bowl, 0, kTrials);
    bayes_best.push_back(bayes_run.best);
    random_best.push_back(random_run.best);
    const size_t from = kTrials - kLastTrials;
    bayes_near.push_back(
        FractionWithin(bayes_run.suggestions, from, kOptimumX, kOptimumY, kNearRadius));
    random_near.push_back(
        FractionWithin(random_run.suggestions, from, kOptimumX, kOptimumY, kNearRadius));
  }
  EXPECT_LT(Median(bayes_best), Median(random_best) / 3.0)
      << "bayes median best " << Median(bayes_best) << ", random " << Median(random_best);
  EXPECT_GT(Mean(bayes_near), 2.0 * Mean(random_near))
      << "bayes near fraction " << Mean(bayes_near) << ", random " << Mean(random_near);
  EXPECT_GT(Mean(bayes_near), 0.3);
}

TEST_P(BayesSearcherTest, MaximizesWhenTheGoalSaysSo) {
  std::vector<double> near;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SweepConfig config = SquareConfig(SearchMethod::kBayes, GetParam(), seed);
    config.sweep.metric.goal = Goal::kMaximize;
    std::unique_ptr<Searcher> bayes = MakeOrDie(config);
    const RunResult run = RunSequentially(
        *bayes, [](const Assignment& params) { return -Bowl(params); }, 0, kTrials);
    near.push_back(
        FractionWithin(run.suggestions, kTrials - kLastTrials, kOptimumX, kOptimumY, kNearRadius));
  }
  EXPECT_GT(Mean(near), 0.3);
}

TEST(TpeSearcherTest, FailedTrialsCountAsTheWorst) {
  // Trials with x > 0.6 fail. Reporting them as NaN must be the same as reporting a value worse
  // than every other (ties are broken by trial id either way), for either goal.
  for (Goal goal : {Goal::kMinimize, Goal::kMaximize}) {
    const double sign = goal == Goal::kMinimize ? 1.0 : -1.0;
    const auto with_failures = [sign](double failed_value) -> Objective {
      return [sign, failed_value](const Assignment& params) {
        return X(params) > 0.6 ? failed_value : sign * Bowl(params);
      };
    };
    SweepConfig config = SquareConfig(SearchMethod::kBayes, 21);
    config.sweep.metric.goal = goal;
    std::unique_ptr<Searcher> failing = MakeOrDie(config);
    std::unique_ptr<Searcher> worst = MakeOrDie(config);
    const RunResult failed_run =
        RunSequentially(*failing, with_failures(std::numeric_limits<double>::quiet_NaN()), 0, 40);
    const RunResult worst_run = RunSequentially(*worst, with_failures(sign * 1e9), 0, 40);
    for (size_t i = 0; i < failed_run.suggestions.size(); ++i) {
      EXPECT_TRUE(SameAssignment(failed_run.suggestions[i], worst_run.suggestions[i]))
          << GoalName(goal) << " trial " << i;
    }
    // And a failure is not the best: reported as the best value instead, the trials differ.
    std::unique_ptr<Searcher> best = MakeOrDie(config);
    const RunResult best_run = RunSequentially(*best, with_failures(-sign * 1e9), 0, 40);
    EXPECT_FALSE(SameAssignment(failed_run.suggestions.back(), best_run.suggestions.back()));
  }
}

// Mean pairwise distance between suggestions.
double MeanPairwiseDistance(const std::vector<Assignment>& suggestions) {
  double total = 0.0;
  int pairs = 0;
  for (size_t i = 0; i < suggestions.size(); ++i) {
    for (size_t j = i + 1; j < suggestions.size(); ++j) {
      total += DistanceTo(suggestions[i], X(suggestions[j]), Y(suggestions[j]));
      ++pairs;
    }
  }
  return total / pairs;
}

TEST_P(BayesSearcherTest, ConstantLiarKeepsConcurrentSuggestionsApart) {
  constexpr int64_t kObserved = 20;
  constexpr int64_t kConcurrent = 4;
  for (bool multi_fidelity : {false, true}) {  // fitted on final objectives, or on epoch 1
    std::vector<double> with_liar, without_liar;
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      SweepConfig config = SquareConfig(SearchMethod::kBayes, GetParam(), seed);
      config.sweep.early_terminate.enabled = multi_fidelity;
      std::unique_ptr<Searcher> bayes = MakeOrDie(config);
      RunSequentially(*bayes, Bowl, 0, kObserved);
      const std::string observed_state = bayes->SaveState();
      // Concurrent: four suggestions for busy groups, none observed yet.
      std::vector<Assignment> concurrent;
      for (int64_t id = kObserved; id < kObserved + kConcurrent; ++id) {
        concurrent.push_back(*bayes->Suggest(id));
      }
      // The same trials, each suggested by a searcher that knows nothing of the others.
      std::vector<Assignment> independent;
      for (int64_t id = kObserved; id < kObserved + kConcurrent; ++id) {
        std::unique_ptr<Searcher> alone = MakeOrDie(config);
        ASSERT_TRUE(alone->RestoreState(observed_state).ok());
        independent.push_back(*alone->Suggest(id));
      }
      EXPECT_TRUE(SameAssignment(concurrent[0], independent[0]));
      with_liar.push_back(MeanPairwiseDistance(concurrent));
      without_liar.push_back(MeanPairwiseDistance(independent));
    }
    // Multivariate TPE under early termination draws its candidates from the prior (4 of them),
    // so its suggestions are spread without the liar too; the liar still spreads them further.
    const double factor = multi_fidelity && GetParam() == BayesModel::kTpe ? 1.15 : 1.5;
    EXPECT_GT(Mean(with_liar), factor * Mean(without_liar))
        << "early_terminate " << multi_fidelity << ": mean pairwise distance with the liar "
        << Mean(with_liar) << ", without " << Mean(without_liar);
  }
}

TEST_P(BayesSearcherTest, SameSeedAndObservationsGiveTheSameSuggestions) {
  const SweepConfig config = SquareConfig(SearchMethod::kBayes, GetParam(), 11);
  std::unique_ptr<Searcher> first = MakeOrDie(config);
  std::unique_ptr<Searcher> second = MakeOrDie(config);
  const RunResult a = RunSequentially(*first, Bowl, 0, 40);
  const RunResult b = RunSequentially(*second, Bowl, 0, 40);
  for (size_t i = 0; i < a.suggestions.size(); ++i) {
    EXPECT_TRUE(SameAssignment(a.suggestions[i], b.suggestions[i])) << "trial " << i;
  }
  // The same observations told in reverse order, without any Suggest: the same next trials.
  std::unique_ptr<Searcher> reversed = MakeOrDie(config);
  for (int64_t id = 39; id >= 0; --id) {
    reversed->Observe(id, a.suggestions[id], TrialStatus::kCompleted, Bowl(a.suggestions[id]));
  }
  for (int64_t id = 40; id < 45; ++id) {
    EXPECT_TRUE(SameAssignment(*first->Suggest(id), *reversed->Suggest(id))) << "trial " << id;
  }
  // Asking again for a pending trial gives the same answer.
  EXPECT_TRUE(SameAssignment(*first->Suggest(42), *reversed->Suggest(42)));

  std::unique_ptr<Searcher> other_seed =
      MakeOrDie(SquareConfig(SearchMethod::kBayes, GetParam(), 12));
  EXPECT_FALSE(SameAssignment(*other_seed->Suggest(0), a.suggestions[0]));
}

TEST_P(BayesSearcherTest, ASuggestionComputedAsideIsTheSuggestionAtItsStart) {
  const SweepConfig config = SquareConfig(SearchMethod::kBayes, GetParam(), 5);
  std::unique_ptr<Searcher> aside = MakeOrDie(config);
  std::unique_ptr<Searcher> direct = MakeOrDie(config);
  const RunResult history = RunSequentially(*aside, Bowl, 0, 20);
  RunSequentially(*direct, Bowl, 0, 20);
  const Searcher::SuggestionComputation computation = aside->StartSuggestion(20);
  ASSERT_TRUE(computation) << "a model suggestion is computed aside";
  // The searcher goes on being used while the computation waits: it must not see this.
  aside->Observe(21, history.suggestions[0], TrialStatus::kCompleted, -50.0);
  aside->ObserveEpoch(22, history.suggestions[1], 1, -60.0);
  aside->Observe(3, history.suggestions[3], TrialStatus::kCompleted, -100.0);
  const Assignment computed = *aside->FinishSuggestion(20, computation());
  EXPECT_TRUE(SameAssignment(computed, *direct->Suggest(20)));
  // A start-up trial computes nothing.
  EXPECT_FALSE(MakeOrDie(config)->StartSuggestion(0));
}

TEST_P(BayesSearcherTest, RestoredStateContinuesTheIdenticalSequence) {
  SweepConfig config = SquareConfig(SearchMethod::kBayes, GetParam(), 3);
  config.sweep.early_terminate.enabled = true;
  std::unique_ptr<Searcher> original = MakeOrDie(config);
  RunSequentially(*original, Bowl, 0, 22);
  // Two pending trials, one with an epoch report.
  const Assignment pending = *original->Suggest(22);
  original->Suggest(23);
  original->ObserveEpoch(22, pending, 1, Bowl(pending));

  std::unique_ptr<Searcher> restored = MakeOrDie(config);
  ASSERT_TRUE(restored->RestoreState(original->SaveState()).ok());
  EXPECT_EQ(restored->SaveState(), original->SaveState());
  for (int64_t id = 24; id < 34; ++id) {
    const Assignment a = *original->Suggest(id);
    const Assignment b = *restored->Suggest(id);
    EXPECT_TRUE(SameAssignment(a, b)) << "trial " << id;
    original->Observe(id, a, TrialStatus::kCompleted, Bowl(a));
    restored->Observe(id, b, TrialStatus::kCompleted, Bowl(b));
  }
}

TEST_P(BayesSearcherTest, RejectsStateFromAnotherConfigOrGarbage) {
  const SweepConfig config = SquareConfig(SearchMethod::kBayes, GetParam(), 3);
  std::unique_ptr<Searcher> searcher = MakeOrDie(config);
  RunSequentially(*searcher, Bowl, 0, 12);
  const std::string state = searcher->SaveState();

  SweepConfig renamed = config;
  renamed.sweep.parameters[1].name = "z";
  std::unique_ptr<Searcher> other = MakeOrDie(renamed);
  const Status from_other_config = other->RestoreState(state);
  EXPECT_EQ(from_other_config.code(), Status::Code::kBadInput);
  EXPECT_NE(from_other_config.message().find("another config"), std::string::npos)
      << from_other_config.message();
  EXPECT_EQ(from_other_config.message().find("sampler: random"), std::string::npos);
  if (GetParam() == BayesModel::kTpe) {
    // A study begun with random start-up trials, resumed under the Sobol default: say what to add.
    SweepConfig sobol = config;
    sobol.search.sampler = RandomSampler::kSobol;
    const Status from_random_startup = MakeOrDie(sobol)->RestoreState(state);
    EXPECT_EQ(from_random_startup.code(), Status::Code::kBadInput);
    EXPECT_NE(from_random_startup.message().find("add `search: {sampler: random}`"),
              std::string::npos)
        << from_random_startup.message();
    // One begun as TPE with ASHA, resumed under curves_tpe (the default with early_terminate).
    SweepConfig asha = config;
    asha.execution.epochs = 9;
    asha.sweep.early_terminate.enabled = true;
    asha.sweep.early_terminate.min_iter = 1;
    std::unique_ptr<Searcher> tpe_asha = MakeOrDie(asha);
    RunSequentially(*tpe_asha, Bowl, 0, 12);
    SweepConfig curves = asha;
    curves.search.model = BayesModel::kCurvesTpe;
    const Status from_tpe_asha = MakeOrDie(curves)->RestoreState(tpe_asha->SaveState());
    EXPECT_NE(from_tpe_asha.message().find("add `search: {model: tpe}`"), std::string::npos)
        << from_tpe_asha.message();
  }

  std::unique_ptr<Searcher> fresh = MakeOrDie(config);
  EXPECT_EQ(fresh->RestoreState("garbage").code(), Status::Code::kBadInput);
  EXPECT_EQ(fresh->RestoreState("").code(), Status::Code::kBadInput);
  EXPECT_EQ(fresh->RestoreState(state.substr(0, state.size() - 3)).code(), Status::Code::kBadInput);
  EXPECT_EQ(fresh->RestoreState(state + "x").code(), Status::Code::kBadInput);
  std::unique_ptr<Searcher> random = MakeOrDie(SquareConfig(SearchMethod::kRandom, 3));
  EXPECT_EQ(fresh->RestoreState(random->SaveState()).code(), Status::Code::kBadInput);
  // A failed restore leaves the searcher as it was: still fresh, so trial 0 is random search's.
  EXPECT_TRUE(SameAssignment(*fresh->Suggest(0), *random->Suggest(0)));
}

TEST_P(BayesSearcherTest, SuggestionsAreAlwaysValidValues) {
  const std::vector<ParameterSpec> parameters = test_support::EveryDistribution();
  SweepConfig config = MakeConfig(SearchMethod::kBayes, parameters, 17);
  config.search.model = GetParam();
  config.search.startup_trials = 5;
  std::unique_ptr<Searcher> bayes = MakeOrDie(config);
  // Any numeric objective that depends on several parameters.
  const Objective objective = [](const Assignment& params) {
    double value = 0.0;
    for (const NamedValue& entry : params) {
      const double number = ParamAsDouble(entry.value);
      if (std::isfinite(number)) value += std::sin(number);
    }
    return value;
  };
  const RunResult run = RunSequentially(*bayes, objective, 0, 80);
  ASSERT_EQ(run.suggestions.size(), 80u);
  for (const Assignment& params : run.suggestions) {
    ASSERT_EQ(params.size(), parameters.size());
    for (size_t i = 0; i < parameters.size(); ++i) {
      EXPECT_EQ(params[i].name, parameters[i].name);
      EXPECT_TRUE(IsValidValue(parameters[i], params[i].value));
    }
  }
}

// Runs trials `first` .. `first + count - 1`, each reporting `epoch` only and staying running.
std::vector<Assignment> RunReportingEpoch(Searcher& searcher, const Objective& objective,
                                          int64_t epoch, int64_t first, int64_t count) {
  std::vector<Assignment> suggestions;
  for (int64_t id = first; id < first + count; ++id) {
    suggestions.push_back(*searcher.Suggest(id));
    searcher.ObserveEpoch(id, suggestions.back(), epoch, objective(suggestions.back()));
  }
  return suggestions;
}

TEST_P(BayesSearcherTest, MultiFidelityFitsOnTheHighestEpochWithEnoughReports) {
  if (GetParam() == BayesModel::kCurves) {
    GTEST_SKIP() << "curves fits predicted finals, not a fidelity (test_curve_model.cpp)";
  }
  // Epoch 1 is good near (0.7, 0.2), epoch 3 near (0.2, 0.8). Trials report and keep running.
  const Objective epoch_three = [](const Assignment& params) {
    return DistanceTo(params, 0.2, 0.8);
  };
  std::vector<double> near_epoch_one, near_epoch_three, near_without;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SweepConfig config = SquareConfig(SearchMethod::kBayes, GetParam(), seed);
    config.sweep.early_terminate.enabled = true;
    std::unique_ptr<Searcher> bayes = MakeOrDie(config);
    std::vector<Assignment> reported = RunReportingEpoch(*bayes, Bowl, 1, 0, 40);
    for (int64_t id = 0; id < 5; ++id) {  // too few epoch-3 reports to fit on
      bayes->ObserveEpoch(id, reported[id], 3, epoch_three(reported[id]));
    }
    const std::vector<Assignment> fitted_on_one = RunReportingEpoch(*bayes, Bowl, 1, 40, 20);
    near_epoch_one.push_back(FractionWithin(fitted_on_one, 0, kOptimumX, kOptimumY, kNearRadius));
    for (int64_t id = 5; id < 40; ++id) {  // now epoch 3 has 40 reports
      bayes->ObserveEpoch(id, reported[id], 3, epoch_three(reported[id]));
    }
    const std::vector<Assignment> fitted_on_three =
        RunReportingEpoch(*bayes, epoch_three, 3, 60, 20);
    near_epoch_three.push_back(FractionWithin(fitted_on_three, 0, 0.2, 0.8, kNearRadius));

    // Without early termination the epoch reports are not data: trials stay random.
    config.sweep.early_terminate.enabled = false;
    std::unique_ptr<Searcher> final_only = MakeOrDie(config);
    const std::vector<Assignment> unfitted = RunReportingEpoch(*final_only, Bowl, 1, 0, 60);
    near_without.push_back(FractionWithin(unfitted, 40, kOptimumX, kOptimumY, kNearRadius));
  }
  // Random search puts pi 0.15^2 = 0.07 of its trials within kNearRadius of a point.
  // Multivariate TPE under early termination scores 4 draws from the prior (tpe_searcher.cpp):
  // it leans towards the fidelity's optimum without going back to it every time, so its shares
  // are lower (0.24 and 0.14 against 0.07 at random; 0.11 without early termination).
  const bool prior_candidates = GetParam() == BayesModel::kTpe;
  EXPECT_GT(Mean(near_epoch_one), prior_candidates ? 0.18 : 0.3);
  EXPECT_GT(Mean(near_epoch_three), prior_candidates ? 0.1 : 0.2);
  EXPECT_GT(Mean(near_epoch_one), (prior_candidates ? 1.8 : 3.0) * Mean(near_without))
      << Mean(near_epoch_one) << " vs " << Mean(near_without);
}

// One trial of the scripted multi-fidelity histories below: trial `id` reaches epoch 3 (id % 3 ==
// 0), is stopped at epoch 2 or 1, or fails (id % 6 == 5); epoch e reports Bowl * e (so early
// values look best). Suggests it, reports its epochs and its end to `searcher`.
struct ScriptedTrial {
  Assignment params;
  int64_t last_epoch = 0;
  bool fails = false;
  TrialStatus status = TrialStatus::kRunning;
  double objective = 0.0;  // as observed: the last epoch's value, NaN when it failed
};

ScriptedTrial RunScriptedTrial(Searcher& searcher, int64_t id) {
  ScriptedTrial trial;
  trial.params = *searcher.Suggest(id);
  trial.last_epoch = id % 3 == 0 ? 3 : id % 3 == 1 ? 2 : 1;
  trial.fails = id % 6 == 5;
  for (int64_t epoch = 1; epoch <= trial.last_epoch; ++epoch) {
    trial.objective = Bowl(trial.params) * static_cast<double>(epoch);
    searcher.ObserveEpoch(id, trial.params, epoch, trial.objective);
  }
  trial.status = trial.fails             ? TrialStatus::kFailed
                 : trial.last_epoch == 3 ? TrialStatus::kCompleted
                                         : TrialStatus::kStopped;
  if (trial.fails) trial.objective = std::numeric_limits<double>::quiet_NaN();
  searcher.Observe(id, trial.params, trial.status, trial.objective);
  return trial;
}

TEST(TpeSearcherTest, MultiFidelityRanksTrialsStoppedEarlyBehindThoseThatReachedTheFidelity) {
  // Trials reach epoch 3 (a third of them), are stopped at epoch 2 or 1, or fail. Fitted on epoch
  // 3, the ranking is: epoch-3 values; then stopped trials, later stops first, each by its final
  // objective (however good it looks); then failures. A searcher without early termination told
  // final objectives that rank the same way must suggest exactly the same trials. (Independent
  // TPE: multivariate TPE sizes l(x) by the trials at the fidelity, see GoodGroupSize below.)
  SweepConfig config = SquareConfig(SearchMethod::kBayes, 8);
  config.search.model = BayesModel::kTpeIndependent;
  config.sweep.early_terminate.enabled = true;
  std::unique_ptr<Searcher> multi_fidelity = MakeOrDie(config);
  config.sweep.early_terminate.enabled = false;
  std::unique_ptr<Searcher> final_only = MakeOrDie(config);
  for (int64_t id = 0; id < 42; ++id) {
    const ScriptedTrial trial = RunScriptedTrial(*multi_fidelity, id);
    const double equivalent =
        trial.fails ? trial.objective : trial.objective + 100.0 * (3 - trial.last_epoch);
    final_only->Observe(id, trial.params, trial.status, equivalent);
  }
  for (int64_t id = 42; id < 52; ++id) {
    const Assignment a = *multi_fidelity->Suggest(id);
    const Assignment b = *final_only->Suggest(id);
    EXPECT_TRUE(SameAssignment(a, b)) << "trial " << id;
    multi_fidelity->ObserveEpoch(id, a, 1, Bowl(a));
    multi_fidelity->Observe(id, a, TrialStatus::kStopped, Bowl(a) + 1.0);
    final_only->Observe(id, b, TrialStatus::kStopped, Bowl(b) + 200.0 + 1.0);
  }
}

TEST(TpeSearcherTest, MultivariateSizesTheGoodGroupByTheTrialsThatReachedTheFidelity) {
  // 40 data points: 9 from epoch 3 (the fidelity), 31 stopped at epochs 1 and 2.
  const std::vector<double> coordinates = {0.5};
  std::vector<TrialHistory::DataPoint> observed;
  for (int64_t id = 0; id < 40; ++id) {
    observed.push_back({id, &coordinates, id < 9 ? 3 : 1 + id % 2, 0.1 * static_cast<double>(id)});
  }
  EXPECT_EQ(TpeSearcher::GoodGroupSize(observed, /*multivariate=*/true), 5u);   // ceil(1.5 * 3)
  EXPECT_EQ(TpeSearcher::GoodGroupSize(observed, /*multivariate=*/false), 4u);  // ceil(0.1 * 40)
  // Without early termination every point is final (epoch 0): ceil(1.5 sqrt(40)).
  for (TrialHistory::DataPoint& point : observed) point.epoch = 0;
  EXPECT_EQ(TpeSearcher::GoodGroupSize(observed, /*multivariate=*/true), 10u);
  // A failed trial (epoch -1) is not at the fidelity; at most 25.
  observed.resize(1000, {0, &coordinates, 0, 1.0});
  observed[0].epoch = TrialHistory::kFailedEpoch;
  EXPECT_EQ(TpeSearcher::GoodGroupSize(observed, /*multivariate=*/true), 25u);
  observed.resize(2);
  EXPECT_EQ(TpeSearcher::GoodGroupSize(observed, /*multivariate=*/true), 2u);
}

TEST_P(BayesSearcherTest, IsBuiltFromAParsedBayesConfig) {
  const std::string text = R"(task: synthetic
seed: 4
sweep:
  method: bayes
  run_cap: 30
  metric: {name: val_loss, goal: minimize}
  parameters:
    lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}
    optimizer: {values: [sgd, adam]}
    width: {min: 8, max: 64}
search:
  startup_trials: 4
)" + std::string(GetParam() == BayesModel::kGp       ? "  model: gp\n"
                 : GetParam() == BayesModel::kCurves ? "  model: curves\n"
                 : GetParam() == BayesModel::kTpeIndependent
                     ? "  model: tpe_independent\n  candidates: 16\n"
                     : "  candidates: 16\n");
  SweepConfig config;
  const Status parsed = ParseConfig(text, "bayes.yaml", &config);
  EXPECT_EQ(config.search.model, GetParam());
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  std::unique_ptr<Searcher> bayes = MakeOrDie(config);
  for (int64_t id = 0; id < 30; ++id) {
    const Assignment params = *bayes->Suggest(id);
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(IsValidValue(config.sweep.parameters[i], params[i].value)) << "trial " << id;
    }
    bayes->Observe(id, params, TrialStatus::kCompleted,
                   std::abs(std::log10(ParamAsDouble(params[0].value)) + 2.5));
  }
}

// Suggestions for trials kFirst.. from one saved state, each drawn alone (no pending trials).
std::vector<Assignment> DrawsFromState(const SweepConfig& config, const std::string& state,
                                       int64_t first, int64_t count) {
  std::vector<Assignment> draws;
  for (int64_t id = first; id < first + count; ++id) {
    std::unique_ptr<Searcher> searcher = MakeOrDie(config);
    EXPECT_TRUE(searcher->RestoreState(state).ok());
    draws.push_back(*searcher->Suggest(id));
  }
  return draws;
}

TEST(TpeSearcherTest, OnPredictedFinalsTwelvePriorDrawsLeanFurtherTowardsTheBestThanFour) {
  // curves_tpe's trials report 3 epochs each, falling towards 1.5 * Bowl: their predicted finals
  // rank them as Bowl does. TPE with ASHA (search.model tpe) keeps 4 prior draws.
  std::vector<double> default_share, four_share;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SweepConfig config = SquareConfig(SearchMethod::kBayes, BayesModel::kCurvesTpe, seed);
    config.execution.epochs = 3;
    config.sweep.early_terminate.enabled = true;
    std::unique_ptr<Searcher> curves = MakeOrDie(config);
    for (int64_t id = 0; id < 30; ++id) {
      const Assignment params = *curves->Suggest(id);
      for (int64_t epoch = 1; epoch <= 3; ++epoch) {
        curves->ObserveEpoch(id, params, epoch, Bowl(params) * (1.0 + 1.0 / epoch));
      }
      curves->Observe(id, params, TrialStatus::kCompleted, Bowl(params) * (4.0 / 3.0));
    }
    const std::string state = curves->SaveState();
    const std::vector<Assignment> by_default = DrawsFromState(config, state, 30, 100);
    SweepConfig twelve = config;
    twelve.search.candidates = 12;
    twelve.search.candidates_given = true;
    SweepConfig four = twelve;
    four.search.candidates = 4;
    const std::vector<Assignment> given_twelve = DrawsFromState(twelve, state, 30, 100);
    for (size_t i = 0; i < by_default.size(); ++i) {
      ASSERT_TRUE(SameAssignment(by_default[i], given_twelve[i]))
          << "seed " << seed << " draw " << i;
    }
    default_share.push_back(FractionWithin(by_default, 0, kOptimumX, kOptimumY, kNearRadius));
    four_share.push_back(
        FractionWithin(DrawsFromState(four, state, 30, 100), 0, kOptimumX, kOptimumY, kNearRadius));

    SweepConfig asha = config;
    asha.search.model = BayesModel::kTpe;
    std::unique_ptr<Searcher> tpe = MakeOrDie(asha);
    RunSequentially(*tpe, Bowl, 0, 30);
    SweepConfig asha_four = asha;
    asha_four.search.candidates = 4;
    asha_four.search.candidates_given = true;
    const std::vector<Assignment> asha_default = DrawsFromState(asha, tpe->SaveState(), 30, 20);
    const std::vector<Assignment> asha_given = DrawsFromState(asha_four, tpe->SaveState(), 30, 20);
    for (size_t i = 0; i < asha_default.size(); ++i) {
      ASSERT_TRUE(SameAssignment(asha_default[i], asha_given[i])) << "seed " << seed;
    }
  }
  // 0.54 against 0.23 within kNearRadius of the optimum (random search: 0.07).
  EXPECT_GT(Mean(default_share), 1.3 * Mean(four_share))
      << Mean(default_share) << " vs " << Mean(four_share);
}

TEST(TpeSearcherTest, RejectsNoCandidates) {
  SweepConfig config = SquareConfig(SearchMethod::kBayes, 1);
  config.search.candidates = 0;
  std::unique_ptr<Searcher> searcher;
  EXPECT_EQ(MakeSearcher(config, &searcher).code(), Status::Code::kBadInput);
}

INSTANTIATE_TEST_SUITE_P(Models, BayesSearcherTest,
                         ::testing::Values(BayesModel::kTpe, BayesModel::kTpeIndependent,
                                           BayesModel::kGp, BayesModel::kCurves),
                         [](const ::testing::TestParamInfo<BayesModel>& info) {
                           switch (info.param) {
                             case BayesModel::kTpe:
                               return std::string("Tpe");
                             case BayesModel::kTpeIndependent:
                               return std::string("TpeIndependent");
                             case BayesModel::kCurves:
                               return std::string("Curves");
                             case BayesModel::kCurvesTpe:  // its own tests: test_curve_model
                             case BayesModel::kGp:
                               break;
                           }
                           return std::string("Gp");
                         });

TEST(GpSearcherTest, FindsTheOptimumSoonerThanTpe) {
  // A smooth function with interacting parameters is where a GP should beat TPE's independent
  // estimators: after 25 trials (10 of them random start-up) its median best is far lower.
  std::vector<double> gp_best, tpe_best;
  const Objective tilted = [](const Assignment& params) {
    const double u = X(params) - kOptimumX + 0.5 * (Y(params) - kOptimumY);
    const double v = Y(params) - kOptimumY;
    return u * u + 4.0 * v * v;
  };
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    std::unique_ptr<Searcher> gp =
        MakeOrDie(SquareConfig(SearchMethod::kBayes, BayesModel::kGp, seed));
    std::unique_ptr<Searcher> tpe = MakeOrDie(SquareConfig(SearchMethod::kBayes, seed));
    gp_best.push_back(RunSequentially(*gp, tilted, 0, 25).best);
    tpe_best.push_back(RunSequentially(*tpe, tilted, 0, 25).best);
  }
  EXPECT_LT(Median(gp_best), Median(tpe_best) / 5.0)
      << "GP median best " << Median(gp_best) << ", TPE " << Median(tpe_best);
}

TEST(GpSearcherTest, AvoidsTheRegionWhereTrialsFail) {
  // Trials with x > 0.6 fail; the best trials that do not fail lie at its edge. A failure counts
  // as the worst value seen, so the GP keeps most suggestions out of the failing region.
  const Objective failing = [](const Assignment& params) {
    return X(params) > 0.6 ? std::numeric_limits<double>::quiet_NaN() : Bowl(params);
  };
  std::vector<double> gp_failed, random_failed;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    std::unique_ptr<Searcher> gp =
        MakeOrDie(SquareConfig(SearchMethod::kBayes, BayesModel::kGp, seed));
    std::unique_ptr<Searcher> random = MakeOrDie(SquareConfig(SearchMethod::kRandom, seed));
    for (auto [searcher, failed] :
         {std::pair{gp.get(), &gp_failed}, {random.get(), &random_failed}}) {
      const RunResult run = RunSequentially(*searcher, failing, 0, 40);
      int count = 0;
      for (size_t i = 20; i < run.suggestions.size(); ++i) count += X(run.suggestions[i]) > 0.6;
      failed->push_back(count / 20.0);
    }
  }
  EXPECT_LT(Mean(gp_failed), 0.5 * Mean(random_failed))
      << "failing share of trials 20-39: GP " << Mean(gp_failed) << ", random "
      << Mean(random_failed);
}

TEST(GpSearcherTest, MultiFidelityCountsTrialsStoppedBeforeTheFidelityAsTheWorst) {
  // Fitted on epoch 3, trials stopped at epoch 1 or 2 and failed ones take the worst epoch-3
  // value, exactly as failed trials do without early termination: a searcher told epoch-3 values
  // as final objectives and NaN for the others suggests the same trials.
  SweepConfig config = SquareConfig(SearchMethod::kBayes, BayesModel::kGp, 8);
  config.sweep.early_terminate.enabled = true;
  std::unique_ptr<Searcher> multi_fidelity = MakeOrDie(config);
  config.sweep.early_terminate.enabled = false;
  std::unique_ptr<Searcher> final_only = MakeOrDie(config);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t id = 0; id < 42; ++id) {
    const ScriptedTrial trial = RunScriptedTrial(*multi_fidelity, id);
    final_only->Observe(id, trial.params, trial.status,
                        trial.last_epoch == 3 ? trial.objective : nan);
  }
  for (int64_t id = 42; id < 50; ++id) {
    const Assignment a = *multi_fidelity->Suggest(id);
    const Assignment b = *final_only->Suggest(id);
    EXPECT_TRUE(SameAssignment(a, b)) << "trial " << id;
    multi_fidelity->ObserveEpoch(id, a, 1, Bowl(a));
    multi_fidelity->Observe(id, a, TrialStatus::kStopped, Bowl(a));
    final_only->Observe(id, b, TrialStatus::kStopped, nan);
  }
}

TEST(GpSearcherTest, CandidatesKeyIsOnlyForTpe) {
  const std::string text = R"(task: synthetic
sweep:
  method: bayes
  run_cap: 3
  metric: {name: val_loss, goal: minimize}
  parameters:
    lr: {min: 0.001, max: 0.1}
search:
  model: gp
  candidates: 16
)";
  SweepConfig config;
  const Status parsed = ParseConfig(text, "gp.yaml", &config);
  EXPECT_EQ(parsed.code(), Status::Code::kBadInput);
  EXPECT_EQ(parsed.message(),
            "gp.yaml:10: search.candidates: only used by model tpe (model gp scores its own "
            "candidate set)");
}

// Rows of `values` as a column matrix.
Eigen::MatrixXd Column(const std::vector<double>& values) {
  return Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(values.size()));
}

TEST(GaussianProcessTest, InterpolatesASmoothFunctionAndIsUnsureAwayFromData) {
  const auto f = [](double x) { return std::sin(6.0 * x) + 0.5 * x; };
  std::vector<double> xs, ys;
  for (int i = 0; i <= 12; ++i) {
    xs.push_back(0.6 * i / 12.0);  // data on [0, 0.6] only
    ys.push_back(f(xs.back()));
  }
  const Eigen::MatrixXd points = Column(xs);
  const Eigen::VectorXd values = Column(ys);
  const GaussianProcess process(points, values, points, values, {false});
  const Eigen::MatrixXd queries = Column({0.025, 0.275, 0.525, 0.95});
  Eigen::VectorXd mean, variance;
  process.Predict(queries, &mean, &variance);
  for (Eigen::Index i = 0; i < 3; ++i) {
    EXPECT_NEAR(mean(i), f(queries(i, 0)), 0.02) << "x = " << queries(i, 0);
    EXPECT_LT(variance(i), 1e-3) << "x = " << queries(i, 0);
  }
  EXPECT_GT(variance(3), 100.0 * variance(1)) << "far from the data the GP must be unsure";
  EXPECT_LT(process.hyperparameters().noise_variance, 1e-3);
}

TEST(GaussianProcessTest, AValueWithKnownNoisePullsTheFitLess) {
  // A smooth line with one outlier at x = 0.5. With the outlier's known variance large, the
  // posterior mean there stays near the line; without it, the fit follows the outlier more.
  std::vector<double> xs, ys;
  for (int i = 0; i <= 10; ++i) {
    xs.push_back(i / 10.0);
    ys.push_back(i == 5 ? 2.0 : xs.back());
  }
  const Eigen::MatrixXd points = Column(xs);
  const Eigen::VectorXd values = Column(ys);
  Eigen::VectorXd noise = Eigen::VectorXd::Zero(11);
  noise(5) = 100.0;
  const GaussianProcess plain(points, values, points, values, {false});
  const GaussianProcess known(points, values, points, values, {false}, noise, noise);
  const Eigen::MatrixXd query = Column({0.5});
  Eigen::VectorXd plain_mean, known_mean, variance;
  plain.Predict(query, &plain_mean, &variance);
  known.Predict(query, &known_mean, &variance);
  EXPECT_NEAR(known_mean(0), 0.5, 0.1);
  EXPECT_GT(plain_mean(0), known_mean(0) + 0.3) << plain_mean(0) << " vs " << known_mean(0);
}

TEST(GaussianProcessTest, LearnsThatAnIrrelevantInputDoesNotMatter) {
  // y depends on input 0 and on the categorical input 2 (one category shifts y); input 1 is
  // irrelevant. The fitted inverse squared lengthscale of input 1 is far below those of 0 and 2.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  Eigen::MatrixXd points(40, 3);
  Eigen::VectorXd values(40);
  for (Eigen::Index i = 0; i < 40; ++i) {
    points(i, 0) = uniform(rng);
    points(i, 1) = uniform(rng);
    points(i, 2) = static_cast<double>(i % 3);
    values(i) = std::cos(4.0 * points(i, 0)) + (points(i, 2) == 1.0 ? 1.0 : 0.0);
  }
  const GaussianProcess process(points, values, points, values, {false, false, true});
  const std::vector<double>& w = process.hyperparameters().inverse_squared_lengthscales;
  EXPECT_LT(w[1], 0.1 * w[0]) << w[0] << " " << w[1] << " " << w[2];
  EXPECT_LT(w[1], 0.2 * w[2]) << w[0] << " " << w[1] << " " << w[2];
  // And it predicts a new point of category 1 well.
  Eigen::MatrixXd query(1, 3);
  query << 0.5, 0.9, 1.0;
  Eigen::VectorXd mean, variance;
  process.Predict(query, &mean, &variance);
  EXPECT_NEAR(mean(0), std::cos(2.0) + 1.0, 0.05);
}

TEST(GaussianProcessTest, LogExpectedImprovementIsAccurateIntoTheTail) {
  const auto direct = [](double mean, double sigma, double best) {
    const double z = (best - mean) / sigma;
    const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
    const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
    return std::log(sigma * (z * cdf + pdf));
  };
  for (double z = -5.9; z < 4.0; z += 0.37) {
    EXPECT_NEAR(LogExpectedImprovement(-z * 2.0, 4.0, 0.0), direct(-z * 2.0, 2.0, 0.0), 1e-9)
        << "z = " << z;
  }
  // Across the switch to the series at z = -6, and far beyond: finite, smooth and decreasing.
  double previous = LogExpectedImprovement(5.9, 1.0, 0.0);
  EXPECT_NEAR(LogExpectedImprovement(6.0, 1.0, 0.0), direct(6.0, 1.0, 0.0), 1e-3);
  for (double mean = 6.0; mean < 40.0; mean += 0.5) {
    const double value = LogExpectedImprovement(mean, 1.0, 0.0);
    EXPECT_TRUE(std::isfinite(value)) << mean;
    EXPECT_LT(value, previous) << mean;
    previous = value;
  }
  // Zero variance: the improvement itself, or a very small number where there is none.
  EXPECT_NEAR(LogExpectedImprovement(-1.0, 0.0, 0.0), 0.0, 1e-9);
  EXPECT_LT(LogExpectedImprovement(1.0, 0.0, 0.0), -1e10);
}

}  // namespace
}  // namespace hpo
