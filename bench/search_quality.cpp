// Search quality of the searchers built by MakeSearcher from SweepConfig structs:
//   hpo_bench_search_quality [SEEDS [METHODS]]      (default 20 seeds, every method)
// METHODS is a comma-separated subset of tpe, tpe_independent, gp, random, sobol (and `curves`
// for part (b)), e.g. `20 tpe,tpe_independent`.
// (a) Branin (2-D, x1 in [-5, 10], x2 in [0, 15], minimum 0.397887) and Hartmann-6 (6-D, [0, 1]^6,
//     minimum -3.32237): TPE (multivariate, the default, and independent) and GP (method bayes,
//     default search options but the model), random and Sobol each run 100 sequential trials per
//     seed (bench/optuna_quality.py runs Optuna's TPE on the same functions); one line per
//     function, method and budget (50, 100 trials) with the median over seeds of the best value
//     found. Check: every best value is finite and not below the known global minimum (minus 1e-9).
// (b) Multi-fidelity: a synthetic learning-curve task, loss(e) = f(x) + (1 - f(x)) exp(-e / tau(x))
//     + N(0, 0.005) over 27 epochs, with three hyperparameters (lr log-uniform in [1e-4, 1e-1],
//     width int in [8, 128], dropout in [0, 0.5]): f is 0.05 at (lr 10^-2.05, width 92, dropout
//     0.15) and grows quadratically away from it, tau = 1 + 2 (1 - u) with u the lr's position
//     on its log range (a small lr learns slowly, so early epochs favour large ones). 4 workers
//     in lockstep (one epoch per tick each; a free worker gets its next trial at once, so the
//     searcher sees pending trials). Reports the median over seeds of the epochs spent by all
//     workers until some trial's loss reaches 0.065, with ASHA (early_terminate hyperband,
//     min_iter 1, eta 3: rungs 1, 3, 9; the TPE searcher then fits BOHB-style) and without (every
//     trial runs 27 epochs), for both TPE models, GP and random search. Check: every seed reached
//     the target within 3000 trials.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/seeding.hpp"
#include "harness.hpp"
#include "hpo/config.hpp"
#include "sched/scheduler.hpp"
#include "search/searcher.hpp"

namespace {

using hpo::Assignment;
using hpo::bench::Number;
using hpo::bench::PrintResult;

constexpr double kBraninMinimum = 0.39788735772973816;
constexpr double kHartmannMinimum = -3.32237;
constexpr int kBudgets[] = {50, 100};

struct TestFunction {
  std::string name;
  std::vector<std::pair<double, double>> bounds;
  double minimum;
  std::function<double(const std::vector<double>&)> evaluate;
};

double Branin(const std::vector<double>& x) {
  const double b = 5.1 / (4.0 * M_PI * M_PI);
  const double c = 5.0 / M_PI;
  const double t = 1.0 / (8.0 * M_PI);
  const double inner = x[1] - b * x[0] * x[0] + c * x[0] - 6.0;
  return inner * inner + 10.0 * (1.0 - t) * std::cos(x[0]) + 10.0;
}

double Hartmann6(const std::vector<double>& x) {
  static constexpr double kAlpha[4] = {1.0, 1.2, 3.0, 3.2};
  static constexpr double kA[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                      {0.05, 10, 17, 0.1, 8, 14},
                                      {3, 3.5, 1.7, 10, 17, 8},
                                      {17, 8, 0.05, 10, 0.1, 14}};
  static constexpr double kP[4][6] = {{1312, 1696, 5569, 124, 8283, 5886},
                                      {2329, 4135, 8307, 3736, 1004, 9991},
                                      {2348, 1451, 3522, 2883, 3047, 6650},
                                      {4047, 8828, 8732, 5743, 1091, 381}};
  double value = 0.0;
  for (int i = 0; i < 4; ++i) {
    double exponent = 0.0;
    for (int j = 0; j < 6; ++j) {
      const double distance = x[j] - 1e-4 * kP[i][j];
      exponent += kA[i][j] * distance * distance;
    }
    value -= kAlpha[i] * std::exp(-exponent);
  }
  return value;
}

struct Method {
  std::string name;
  hpo::SearchMethod method;
  hpo::RandomSampler sampler;
  hpo::BayesModel model;
};

const Method kMethods[] = {
    {"tpe", hpo::SearchMethod::kBayes, hpo::RandomSampler::kIndependent, hpo::BayesModel::kTpe},
    {"tpe_independent", hpo::SearchMethod::kBayes, hpo::RandomSampler::kIndependent,
     hpo::BayesModel::kTpeIndependent},
    {"gp", hpo::SearchMethod::kBayes, hpo::RandomSampler::kIndependent, hpo::BayesModel::kGp},
    {"random", hpo::SearchMethod::kRandom, hpo::RandomSampler::kIndependent, hpo::BayesModel::kTpe},
    {"sobol", hpo::SearchMethod::kRandom, hpo::RandomSampler::kSobol, hpo::BayesModel::kTpe},
};

hpo::ParameterSpec UniformParameter(const std::string& name, double min, double max) {
  hpo::ParameterSpec spec;
  spec.name = name;
  spec.distribution = hpo::Distribution::kUniform;
  spec.type = hpo::ParamType::kFloat;
  spec.min = min;
  spec.max = max;
  return spec;
}

hpo::SweepConfig BaseConfig(const Method& method, uint64_t seed) {
  hpo::SweepConfig config;
  config.path = "search_quality";
  config.sweep.method = method.method;
  config.sweep.metric.name = "val_loss";
  config.sweep.metric.goal = hpo::Goal::kMinimize;
  config.sweep.run_cap = 1000;
  config.search.sampler = method.sampler;
  config.search.model = method.model;
  config.execution.seed = seed;
  return config;
}

std::unique_ptr<hpo::Searcher> MakeOrExit(const hpo::SweepConfig& config) {
  std::unique_ptr<hpo::Searcher> searcher;
  const hpo::Status status = hpo::MakeSearcher(config, &searcher);
  if (!status.ok()) {
    std::fprintf(stderr, "search_quality: %s\n", status.message().c_str());
    std::exit(1);
  }
  return searcher;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

// Methods to run (argv[2], comma-separated names; every method when empty).
std::string g_only;
bool Selected(const std::string& name) {
  if (g_only.empty()) return true;
  return ("," + g_only + ",").find("," + name + ",") != std::string::npos;
}

void RunTestFunction(const TestFunction& function, int seeds) {
  for (const Method& method : kMethods) {
    if (!Selected(method.name)) continue;
    std::vector<std::vector<double>> best_at(std::size(kBudgets));
    const double start = hpo::bench::NowSeconds();
    for (int seed = 1; seed <= seeds; ++seed) {
      hpo::SweepConfig config = BaseConfig(method, static_cast<uint64_t>(seed));
      for (size_t d = 0; d < function.bounds.size(); ++d) {
        config.sweep.parameters.push_back(UniformParameter(
            "x" + std::to_string(d + 1), function.bounds[d].first, function.bounds[d].second));
      }
      std::unique_ptr<hpo::Searcher> searcher = MakeOrExit(config);
      double best = std::numeric_limits<double>::infinity();
      size_t budget = 0;
      for (int64_t trial = 0; trial < kBudgets[std::size(kBudgets) - 1]; ++trial) {
        const Assignment params = *searcher->Suggest(trial);
        std::vector<double> x;
        for (const hpo::NamedValue& entry : params) x.push_back(std::get<double>(entry.value));
        const double value = function.evaluate(x);
        searcher->Observe(trial, params, hpo::TrialStatus::kCompleted, value);
        best = std::min(best, value);
        if (trial + 1 == kBudgets[budget]) best_at[budget++].push_back(best);
      }
    }
    const double seconds = hpo::bench::NowSeconds() - start;
    for (size_t budget = 0; budget < std::size(kBudgets); ++budget) {
      bool check = static_cast<int>(best_at[budget].size()) == seeds;
      for (double best : best_at[budget]) {
        check = check && std::isfinite(best) && best >= function.minimum - 1e-9;
      }
      PrintResult("search_quality",
                  {{"function", function.name},
                   {"method", method.name},
                   {"evals", std::to_string(kBudgets[budget])},
                   {"seeds", std::to_string(seeds)},
                   {"median_best", Number(Median(best_at[budget]), 6)},
                   {"known_minimum", Number(function.minimum, 6)},
                   {"seconds_all_seeds", Number(seconds, 3)}},
                  check);
    }
  }
}

// The multi-fidelity task (b).
constexpr int64_t kEpochs = 27;
constexpr int kWorkers = 4;
constexpr double kTarget = 0.065;
constexpr int64_t kMaxTrials = 3000;
constexpr uint64_t kNoisePurpose = 0x6e6f697365ULL;  // "noise"

struct CurveShape {
  double final_loss;
  double tau;
};

CurveShape ShapeOf(const Assignment& params) {
  const double lr = std::get<double>(params[0].value);
  const double width = static_cast<double>(std::get<int64_t>(params[1].value));
  const double dropout = std::get<double>(params[2].value);
  const double u = (std::log10(lr) + 4.0) / 3.0;  // 0 .. 1
  const double w = (width - 8.0) / 120.0;         // 0 .. 1
  const double d = dropout / 0.5;                 // 0 .. 1
  const double final_loss = 0.05 + 2.0 * (u - 0.65) * (u - 0.65) + 1.2 * (w - 0.7) * (w - 0.7) +
                            0.8 * (d - 0.3) * (d - 0.3);
  return {final_loss, 1.0 + 2.0 * (1.0 - u)};  // a small lr learns slowly
}

double CurveAt(const CurveShape& shape, int64_t epoch, uint64_t seed, int64_t trial) {
  std::mt19937_64 rng(
      hpo::DeriveSeed(seed, kNoisePurpose, static_cast<uint64_t>(trial * (kEpochs + 1) + epoch)));
  const double noise = std::normal_distribution<double>(0.0, 0.005)(rng);
  return shape.final_loss +
         (1.0 - shape.final_loss) * std::exp(-static_cast<double>(epoch) / shape.tau) + noise;
}

hpo::SweepConfig CurveConfig(const Method& method, bool asha, uint64_t seed) {
  hpo::SweepConfig config = BaseConfig(method, seed);
  hpo::ParameterSpec lr = UniformParameter("lr", 1e-4, 1e-1);
  lr.distribution = hpo::Distribution::kLogUniformValues;
  hpo::ParameterSpec width = UniformParameter("width", 8, 128);
  width.distribution = hpo::Distribution::kIntUniform;
  width.type = hpo::ParamType::kInt;
  config.sweep.parameters = {lr, width, UniformParameter("dropout", 0.0, 0.5)};
  config.execution.epochs = kEpochs;
  config.sweep.early_terminate.enabled = asha;
  config.sweep.early_terminate.min_iter = 1;
  config.sweep.early_terminate.eta = 3;
  return config;
}

// Epochs spent by all workers until a loss reaches kTarget; nullopt when kMaxTrials did not.
std::optional<int64_t> EpochsToTarget(const Method& method, bool asha, uint64_t seed) {
  const hpo::SweepConfig config = CurveConfig(method, asha, seed);
  std::unique_ptr<hpo::Searcher> searcher = MakeOrExit(config);
  std::unique_ptr<hpo::Scheduler> scheduler;
  if (asha && !hpo::MakeScheduler(config, &scheduler).ok()) return std::nullopt;
  struct Running {
    int64_t trial = -1;
    Assignment params;
    CurveShape shape{};
    int64_t epoch = 0;
  };
  std::vector<Running> workers(kWorkers);
  int64_t next_trial = 0;
  int64_t epochs_spent = 0;
  while (true) {
    for (Running& worker : workers) {
      if (worker.trial >= 0) continue;
      if (next_trial >= kMaxTrials) return std::nullopt;
      worker.trial = next_trial++;
      worker.params = *searcher->Suggest(worker.trial);
      worker.shape = ShapeOf(worker.params);
      worker.epoch = 0;
    }
    bool reached = false;
    for (Running& worker : workers) {
      const int64_t epoch = ++worker.epoch;
      ++epochs_spent;
      const double loss = CurveAt(worker.shape, epoch, seed, worker.trial);
      reached = reached || loss <= kTarget;
      searcher->ObserveEpoch(worker.trial, worker.params, epoch, loss);
      const bool keep_going =
          !scheduler || scheduler->OnEpoch(worker.trial, epoch, loss).keep_going;
      if (epoch == kEpochs || !keep_going) {
        const hpo::TrialStatus status =
            epoch == kEpochs ? hpo::TrialStatus::kCompleted : hpo::TrialStatus::kStopped;
        searcher->Observe(worker.trial, worker.params, status, loss);
        if (scheduler) scheduler->OnTrialEnd(worker.trial, status);
        worker.trial = -1;
      }
    }
    if (reached) return epochs_spent;
  }
}

void RunMultiFidelity(int seeds) {
  for (const Method& method : {kMethods[0], kMethods[1], kMethods[2], kMethods[3]}) {
    if (!Selected(method.name) || !Selected("curves")) continue;
    for (bool asha : {true, false}) {
      std::vector<double> epochs;
      bool check = true;
      for (int seed = 1; seed <= seeds; ++seed) {
        const std::optional<int64_t> spent = EpochsToTarget(method, asha, seed);
        check = check && spent.has_value();
        if (spent) epochs.push_back(static_cast<double>(*spent));
      }
      PrintResult(
          "search_quality",
          {{"task", "learning_curves"},
           {"method", method.name},
           {"scheduler", asha ? "asha" : "none"},
           {"workers", std::to_string(kWorkers)},
           {"target", Number(kTarget, 3)},
           {"seeds", std::to_string(seeds)},
           {"median_epochs_to_target", epochs.empty() ? "none" : Number(Median(epochs), 5)}},
          check);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int seeds = argc > 1 ? std::stoi(argv[1]) : 20;
  if (argc > 2) g_only = argv[2];
  RunTestFunction({"branin", {{-5.0, 10.0}, {0.0, 15.0}}, kBraninMinimum, Branin}, seeds);
  RunTestFunction({"hartmann6", std::vector<std::pair<double, double>>(6, {0.0, 1.0}),
                   kHartmannMinimum, Hartmann6},
                  seeds);
  RunMultiFidelity(seeds);
  return 0;
}
