// The TPE searcher (method: bayes, search.model: tpe): start-up, concentration on good regions,
// goal direction, failed trials, constant liar, determinism, saved state, value validity and
// BOHB-style multi-fidelity fitting.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/searcher.hpp"
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

SweepConfig SquareConfig(SearchMethod method, uint64_t seed) {
  return MakeConfig(method,
                    {Parameter("x", Distribution::kUniform, 0.0, 1.0),
                     Parameter("y", Distribution::kUniform, 0.0, 1.0)},
                    seed);
}

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

TEST(TpeSearcherTest, StartupTrialsAreRandomSearchsTrials) {
  SweepConfig bayes = SquareConfig(SearchMethod::kBayes, 5);
  bayes.search.startup_trials = 7;
  std::unique_ptr<Searcher> tpe = MakeOrDie(bayes);
  std::unique_ptr<Searcher> random = MakeOrDie(SquareConfig(SearchMethod::kRandom, 5));
  const RunResult run = RunSequentially(*tpe, Bowl, 0, 8);
  for (int64_t id = 0; id < 7; ++id) {
    EXPECT_TRUE(SameAssignment(run.suggestions[id], *random->Suggest(id))) << "trial " << id;
  }
  EXPECT_FALSE(SameAssignment(run.suggestions[7], *random->Suggest(7)));
  EXPECT_FALSE(tpe->SpaceSize().has_value());
}

TEST(TpeSearcherTest, ConcentratesOnTheGoodRegionFarMoreThanRandomSearch) {
  std::vector<double> tpe_best, random_best, tpe_near, random_near;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    std::unique_ptr<Searcher> tpe = MakeOrDie(SquareConfig(SearchMethod::kBayes, seed));
    std::unique_ptr<Searcher> random = MakeOrDie(SquareConfig(SearchMethod::kRandom, seed));
    const RunResult tpe_run = RunSequentially(*tpe, Bowl, 0, kTrials);
    const RunResult random_run = RunSequentially(*random, Bowl, 0, kTrials);
    tpe_best.push_back(tpe_run.best);
    random_best.push_back(random_run.best);
    const size_t from = kTrials - kLastTrials;
    tpe_near.push_back(
        FractionWithin(tpe_run.suggestions, from, kOptimumX, kOptimumY, kNearRadius));
    random_near.push_back(
        FractionWithin(random_run.suggestions, from, kOptimumX, kOptimumY, kNearRadius));
  }
  EXPECT_LT(Median(tpe_best), Median(random_best) / 3.0)
      << "TPE median best " << Median(tpe_best) << ", random " << Median(random_best);
  EXPECT_GT(Mean(tpe_near), 2.0 * Mean(random_near))
      << "TPE near fraction " << Mean(tpe_near) << ", random " << Mean(random_near);
  EXPECT_GT(Mean(tpe_near), 0.3);
}

TEST(TpeSearcherTest, MaximizesWhenTheGoalSaysSo) {
  std::vector<double> near;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SweepConfig config = SquareConfig(SearchMethod::kBayes, seed);
    config.sweep.metric.goal = Goal::kMaximize;
    std::unique_ptr<Searcher> tpe = MakeOrDie(config);
    const RunResult run = RunSequentially(
        *tpe, [](const Assignment& params) { return -Bowl(params); }, 0, kTrials);
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

TEST(TpeSearcherTest, ConstantLiarKeepsConcurrentSuggestionsApart) {
  constexpr int64_t kObserved = 20;
  constexpr int64_t kConcurrent = 4;
  for (bool multi_fidelity : {false, true}) {  // fitted on final objectives, or on epoch 1
    std::vector<double> with_liar, without_liar;
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      SweepConfig config = SquareConfig(SearchMethod::kBayes, seed);
      config.sweep.early_terminate.enabled = multi_fidelity;
      std::unique_ptr<Searcher> tpe = MakeOrDie(config);
      RunSequentially(*tpe, Bowl, 0, kObserved);
      const std::string observed_state = tpe->SaveState();
      // Concurrent: four suggestions for busy groups, none observed yet.
      std::vector<Assignment> concurrent;
      for (int64_t id = kObserved; id < kObserved + kConcurrent; ++id) {
        concurrent.push_back(*tpe->Suggest(id));
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
    EXPECT_GT(Mean(with_liar), 1.5 * Mean(without_liar))
        << "early_terminate " << multi_fidelity << ": mean pairwise distance with the liar "
        << Mean(with_liar) << ", without " << Mean(without_liar);
  }
}

TEST(TpeSearcherTest, SameSeedAndObservationsGiveTheSameSuggestions) {
  const SweepConfig config = SquareConfig(SearchMethod::kBayes, 11);
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

  std::unique_ptr<Searcher> other_seed = MakeOrDie(SquareConfig(SearchMethod::kBayes, 12));
  EXPECT_FALSE(SameAssignment(*other_seed->Suggest(0), a.suggestions[0]));
}

TEST(TpeSearcherTest, RestoredStateContinuesTheIdenticalSequence) {
  SweepConfig config = SquareConfig(SearchMethod::kBayes, 3);
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

TEST(TpeSearcherTest, RejectsStateFromAnotherConfigOrGarbage) {
  const SweepConfig config = SquareConfig(SearchMethod::kBayes, 3);
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

TEST(TpeSearcherTest, SuggestionsAreAlwaysValidValues) {
  const std::vector<ParameterSpec> parameters = test_support::EveryDistribution();
  SweepConfig config = MakeConfig(SearchMethod::kBayes, parameters, 17);
  config.search.startup_trials = 5;
  std::unique_ptr<Searcher> tpe = MakeOrDie(config);
  // Any numeric objective that depends on several parameters.
  const Objective objective = [](const Assignment& params) {
    double value = 0.0;
    for (const NamedValue& entry : params) {
      const double number = ParamAsDouble(entry.value);
      if (std::isfinite(number)) value += std::sin(number);
    }
    return value;
  };
  const RunResult run = RunSequentially(*tpe, objective, 0, 80);
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

TEST(TpeSearcherTest, MultiFidelityFitsOnTheHighestEpochWithEnoughReports) {
  // Epoch 1 is good near (0.7, 0.2), epoch 3 near (0.2, 0.8). Trials report and keep running.
  const Objective epoch_three = [](const Assignment& params) {
    return DistanceTo(params, 0.2, 0.8);
  };
  std::vector<double> near_epoch_one, near_epoch_three, near_without;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SweepConfig config = SquareConfig(SearchMethod::kBayes, seed);
    config.sweep.early_terminate.enabled = true;
    std::unique_ptr<Searcher> tpe = MakeOrDie(config);
    std::vector<Assignment> reported = RunReportingEpoch(*tpe, Bowl, 1, 0, 40);
    for (int64_t id = 0; id < 5; ++id) {  // too few epoch-3 reports to fit on
      tpe->ObserveEpoch(id, reported[id], 3, epoch_three(reported[id]));
    }
    const std::vector<Assignment> fitted_on_one = RunReportingEpoch(*tpe, Bowl, 1, 40, 20);
    near_epoch_one.push_back(FractionWithin(fitted_on_one, 0, kOptimumX, kOptimumY, kNearRadius));
    for (int64_t id = 5; id < 40; ++id) {  // now epoch 3 has 40 reports
      tpe->ObserveEpoch(id, reported[id], 3, epoch_three(reported[id]));
    }
    const std::vector<Assignment> fitted_on_three = RunReportingEpoch(*tpe, epoch_three, 3, 60, 20);
    near_epoch_three.push_back(FractionWithin(fitted_on_three, 0, 0.2, 0.8, kNearRadius));

    // Without early termination the epoch reports are not data: trials stay random.
    config.sweep.early_terminate.enabled = false;
    std::unique_ptr<Searcher> final_only = MakeOrDie(config);
    const std::vector<Assignment> unfitted = RunReportingEpoch(*final_only, Bowl, 1, 0, 60);
    near_without.push_back(FractionWithin(unfitted, 40, kOptimumX, kOptimumY, kNearRadius));
  }
  EXPECT_GT(Mean(near_epoch_one), 0.3);
  EXPECT_GT(Mean(near_epoch_three), 0.3);
  EXPECT_GT(Mean(near_epoch_one), 3.0 * Mean(near_without))
      << Mean(near_epoch_one) << " vs " << Mean(near_without);
}

TEST(TpeSearcherTest, MultiFidelityRanksTrialsStoppedEarlyBehindThoseThatReachedTheFidelity) {
  // Trials reach epoch 3 (a third of them), are stopped at epoch 2 or 1, or fail. Fitted on epoch
  // 3, the ranking is: epoch-3 values; then stopped trials, later stops first, each by its final
  // objective (however good it looks); then failures. A searcher without early termination told
  // final objectives that rank the same way must suggest exactly the same trials.
  SweepConfig config = SquareConfig(SearchMethod::kBayes, 8);
  config.sweep.early_terminate.enabled = true;
  std::unique_ptr<Searcher> multi_fidelity = MakeOrDie(config);
  config.sweep.early_terminate.enabled = false;
  std::unique_ptr<Searcher> final_only = MakeOrDie(config);
  for (int64_t id = 0; id < 42; ++id) {
    const Assignment params = *multi_fidelity->Suggest(id);
    const int64_t last_epoch = id % 3 == 0 ? 3 : id % 3 == 1 ? 2 : 1;
    const bool fails = id % 6 == 5;
    double value = 0.0;
    for (int64_t epoch = 1; epoch <= last_epoch; ++epoch) {
      value = Bowl(params) * static_cast<double>(epoch);  // early values look best
      multi_fidelity->ObserveEpoch(id, params, epoch, value);
    }
    const TrialStatus status = fails             ? TrialStatus::kFailed
                               : last_epoch == 3 ? TrialStatus::kCompleted
                                                 : TrialStatus::kStopped;
    const double objective = fails ? std::numeric_limits<double>::quiet_NaN() : value;
    multi_fidelity->Observe(id, params, status, objective);
    const double equivalent =
        fails ? objective : value + 100.0 * static_cast<double>(3 - last_epoch);
    final_only->Observe(id, params, status, equivalent);
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

TEST(TpeSearcherTest, IsBuiltFromAParsedBayesConfig) {
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
  candidates: 16
)";
  SweepConfig config;
  const Status parsed = ParseConfig(text, "bayes.yaml", &config);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  std::unique_ptr<Searcher> tpe = MakeOrDie(config);
  for (int64_t id = 0; id < 30; ++id) {
    const Assignment params = *tpe->Suggest(id);
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(IsValidValue(config.sweep.parameters[i], params[i].value)) << "trial " << id;
    }
    tpe->Observe(id, params, TrialStatus::kCompleted,
                 std::abs(std::log10(ParamAsDouble(params[0].value)) + 2.5));
  }
}

TEST(TpeSearcherTest, GpModelIsNotImplementedYet) {
  SweepConfig config = SquareConfig(SearchMethod::kBayes, 1);
  config.search.model = BayesModel::kGp;
  std::unique_ptr<Searcher> searcher;
  const Status status = MakeSearcher(config, &searcher);
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(), "search.model: gp is not implemented yet; use tpe");
}

TEST(TpeSearcherTest, RejectsNoCandidates) {
  SweepConfig config = SquareConfig(SearchMethod::kBayes, 1);
  config.search.candidates = 0;
  std::unique_ptr<Searcher> searcher;
  EXPECT_EQ(MakeSearcher(config, &searcher).code(), Status::Code::kBadInput);
}

}  // namespace
}  // namespace hpo
