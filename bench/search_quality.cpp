// Search quality of the searchers built by MakeSearcher from SweepConfig structs:
//   hpo_bench_search_quality [SEEDS [METHODS]]      (default 20 seeds, every method)
//   hpo_bench_search_quality --system SYSTEM --function PROBLEM --seeds FIRST-LAST [--budget N]
//                            [--version VERSION]
//   hpo_bench_search_quality --evaluate PROBLEM VALUE...
// METHODS is a comma-separated subset of tpe, tpe_sobol, tpe_independent, gp, random, sobol,
// tpe_random_startup (and `curves` for part (b)), e.g. `20 tpe,tpe_independent`. `tpe` is what a
// config with `method: bayes` and no search: keys gets (hpo::ApplyDefaultSearch: in part (a) the
// Sobol start-up, the same as tpe_sobol; tpe_random_startup is the random start-up it had before
// 2026-11-29); in part (b) every method runs as named. (a) Four problems
// (bench/peers/_problems.py defines the same ones for the peers of
//     bench/peers/_quality.py, and ctest search_quality_problems_agree checks that both agree):
//     Branin (2-D, x1 in [-5, 10], x2 in [0, 15], minimum 0.397887), Hartmann-6 (6-D, [0, 1]^6,
//     minimum -3.32237), levy10_mixed (10-D Levy with 4 float, 3 int and 3 categorical
//     parameters, minimum 0) and mixed8 (a synthetic validation error over an 8-D space like the
//     Fashion-MNIST sweep's: log-uniform lr and weight decay, categorical batch size, optimizer
//     and width, float momentum and dropout, int layers; minimum 0.085). TPE (multivariate, the
//     default, and independent) and GP (method bayes, default search options but the model),
//     random and Sobol each run 100 sequential trials per seed (bench/optuna_quality.py runs
//     Optuna's TPE on the first two); one line per function, method and budget (50, 100 trials)
//     with the median over seeds of the best value found. Check: every best value is finite and
//     not below the known global minimum (minus 1e-9).
//     With --system (hpo_bayes, hpo_bayes_sobol, hpo_tpe_independent, hpo_gp, hpo_random,
//     hpo_sobol, hpo_bayes_random_startup: the methods above) it prints instead one line per seed
//     in bench/peers/_quality.py's format: the best value after 25, 50 and 100 trials (those within
//     --budget, default 100, and the budget) and the seconds the seed took. --evaluate prints the
//     value of PROBLEM at one point of its space (the values in parameter order, categorical ones
//     by their label; exit 2 for a point outside) and its known minimum, with 17 digits.
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
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
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

constexpr int kBudgets[] = {50, 100};
constexpr int kPerSeedBudgets[] = {25, 50, 100};

struct Problem {
  std::string name;
  std::vector<hpo::ParameterSpec> parameters;
  double minimum;
  std::function<double(const Assignment&)> evaluate;  // values in the order of `parameters`
};

double Real(const Assignment& params, size_t index) {
  return hpo::ParamAsDouble(params[index].value);
}

const std::string& Label(const Assignment& params, size_t index) {
  return std::get<std::string>(params[index].value);
}

int64_t Integer(const Assignment& params, size_t index) {
  return std::get<int64_t>(params[index].value);
}

double Branin(const Assignment& params) {
  const double x1 = Real(params, 0);
  const double b = 5.1 / (4.0 * M_PI * M_PI);
  const double c = 5.0 / M_PI;
  const double t = 1.0 / (8.0 * M_PI);
  const double inner = Real(params, 1) - b * x1 * x1 + c * x1 - 6.0;
  return inner * inner + 10.0 * (1.0 - t) * std::cos(x1) + 10.0;
}

double Hartmann6(const Assignment& params) {
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
    for (size_t j = 0; j < 6; ++j) {
      const double distance = Real(params, j) - 1e-4 * kP[i][j];
      exponent += kA[i][j] * distance * distance;
    }
    value -= kAlpha[i] * std::exp(-exponent);
  }
  return value;
}

// levy10_mixed's categorical labels and their numeric meaning.
const std::map<std::string, double> kLevyLevels = {
    {"m4", -4.0}, {"m1", -1.0}, {"p1", 1.0}, {"p3", 3.0}, {"p6", 6.0}};

double Levy10Mixed(const Assignment& params) {
  std::vector<double> w;
  for (size_t i = 0; i < 10; ++i) {
    const double x = i < 7 ? Real(params, i) : kLevyLevels.at(Label(params, i));
    w.push_back(1.0 + (x - 1.0) / 4.0);
  }
  const auto squared = [](double v) { return v * v; };
  double value = squared(std::sin(M_PI * w[0]));
  for (size_t i = 0; i < 9; ++i) {
    value += squared(w[i] - 1.0) * (1.0 + 10.0 * squared(std::sin(M_PI * w[i] + 1.0)));
  }
  value += squared(w[9] - 1.0) * (1.0 + squared(std::sin(2.0 * M_PI * w[9])));
  return value;
}

// mixed8 (bench/peers/_problems.py explains the terms): 0.085 + the categorical choices' offsets
// + penalties that vanish at each choice's best continuous values.
struct Mixed8Optimizer {
  double offset, best_log_lr, best_log_decay, decay_curvature;
};
const std::map<std::string, Mixed8Optimizer> kMixed8Optimizers = {
    {"sgd", {0.004, -0.6, -3.5, 0.0015}},
    {"adam", {0.003, -3.0, -4.0, 0.001}},
    {"adamw", {0.0, -2.7, -2.5, 0.002}}};
const std::map<int64_t, double> kMixed8BatchOffset = {
    {32, 0.0}, {64, 0.001}, {128, 0.003}, {256, 0.006}};
struct Mixed8Width {
  double offset, best_dropout, best_layers;
};
const std::map<int64_t, Mixed8Width> kMixed8Widths = {
    {4, {0.03, 0.05, 2}}, {8, {0.008, 0.2, 2}}, {16, {0.0, 0.3, 3}}};

double Mixed8(const Assignment& params) {
  const double lr = Real(params, 0);
  const int64_t batch_size = Integer(params, 1);
  const std::string& optimizer_name = Label(params, 2);
  const double momentum = Real(params, 3);
  const double dropout = Real(params, 4);
  const Mixed8Width& width = kMixed8Widths.at(Integer(params, 5));
  const double weight_decay = Real(params, 6);
  const double layers = Real(params, 7);
  const Mixed8Optimizer& optimizer = kMixed8Optimizers.at(optimizer_name);
  double best_log_lr = optimizer.best_log_lr +
                       0.5 * std::log10(static_cast<double>(batch_size) / 128.0) -
                       0.1 * (layers - 2.0);
  double value = 0.085 + optimizer.offset + kMixed8BatchOffset.at(batch_size) + width.offset;
  if (optimizer_name == "sgd") {
    best_log_lr += std::log10(1.0 - momentum);
    value += 0.05 * (momentum - 0.9) * (momentum - 0.9);
  }
  const double lr_off = std::log10(lr) - best_log_lr;
  value += 0.35 * (1.0 - std::exp(-lr_off * lr_off / 0.5));
  const double decay_off = std::log10(weight_decay) - optimizer.best_log_decay;
  value += optimizer.decay_curvature * decay_off * decay_off;
  value += 0.1 * (dropout - width.best_dropout) * (dropout - width.best_dropout);
  value += 0.004 * (layers - width.best_layers) * (layers - width.best_layers);
  return value;
}

hpo::ParameterSpec UniformParameter(const std::string& name, double min, double max) {
  hpo::ParameterSpec spec;
  spec.name = name;
  spec.distribution = hpo::Distribution::kUniform;
  spec.type = hpo::ParamType::kFloat;
  spec.min = min;
  spec.max = max;
  return spec;
}

hpo::ParameterSpec LogParameter(const std::string& name, double min, double max) {
  hpo::ParameterSpec spec = UniformParameter(name, min, max);
  spec.distribution = hpo::Distribution::kLogUniformValues;
  return spec;
}

hpo::ParameterSpec IntParameter(const std::string& name, int64_t min, int64_t max) {
  hpo::ParameterSpec spec =
      UniformParameter(name, static_cast<double>(min), static_cast<double>(max));
  spec.distribution = hpo::Distribution::kIntUniform;
  spec.type = hpo::ParamType::kInt;
  return spec;
}

hpo::ParameterSpec CategoricalParameter(const std::string& name, hpo::ParamType type,
                                        std::vector<hpo::ParamValue> values) {
  hpo::ParameterSpec spec;
  spec.name = name;
  spec.distribution = hpo::Distribution::kCategorical;
  spec.type = type;
  spec.values = std::move(values);
  return spec;
}

std::vector<Problem> Problems() {
  std::vector<hpo::ParameterSpec> hartmann;
  for (int d = 1; d <= 6; ++d) hartmann.push_back(UniformParameter("x" + std::to_string(d), 0, 1));
  std::vector<hpo::ParameterSpec> levy;
  for (int d = 1; d <= 10; ++d) {
    const std::string name = "x" + std::to_string(d);
    if (d <= 4) {
      levy.push_back(UniformParameter(name, -10.0, 10.0));
    } else if (d <= 7) {
      levy.push_back(IntParameter(name, -10, 10));
    } else {
      std::vector<hpo::ParamValue> labels;
      for (const auto& [label, level] : kLevyLevels) labels.emplace_back(label);
      levy.push_back(CategoricalParameter(name, hpo::ParamType::kString, labels));
    }
  }
  const std::vector<hpo::ParameterSpec> mixed8 = {
      LogParameter("lr", 1e-5, 0.5),
      CategoricalParameter("batch_size", hpo::ParamType::kInt,
                           {int64_t{32}, int64_t{64}, int64_t{128}, int64_t{256}}),
      CategoricalParameter("optimizer", hpo::ParamType::kString,
                           {std::string("sgd"), std::string("adam"), std::string("adamw")}),
      UniformParameter("momentum", 0.0, 0.95),
      UniformParameter("dropout", 0.0, 0.6),
      CategoricalParameter("width", hpo::ParamType::kInt, {int64_t{4}, int64_t{8}, int64_t{16}}),
      LogParameter("weight_decay", 1e-6, 1e-2),
      IntParameter("num_layers", 1, 4)};
  return {
      {"branin",
       {UniformParameter("x1", -5.0, 10.0), UniformParameter("x2", 0.0, 15.0)},
       0.39788735772973816,
       Branin},
      {"hartmann6", hartmann, -3.3223680114155147, Hartmann6},
      {"levy10_mixed", levy, 0.0, Levy10Mixed},
      {"mixed8", mixed8, 0.085, Mixed8},
  };
}

struct Method {
  std::string name;
  std::string system;  // its name in bench/peers/_quality.py
  hpo::SearchMethod method;
  hpo::RandomSampler sampler;
  hpo::BayesModel model;
  bool as_configs_default = false;  // part (a): search options as hpo::ApplyDefaultSearch sets them
};

const Method kMethods[] = {
    {"tpe", "hpo_bayes", hpo::SearchMethod::kBayes, hpo::RandomSampler::kIndependent,
     hpo::BayesModel::kTpe, true},
    {"tpe_independent", "hpo_tpe_independent", hpo::SearchMethod::kBayes,
     hpo::RandomSampler::kIndependent, hpo::BayesModel::kTpeIndependent},
    {"tpe_sobol", "hpo_bayes_sobol", hpo::SearchMethod::kBayes, hpo::RandomSampler::kSobol,
     hpo::BayesModel::kTpe},
    {"gp", "hpo_gp", hpo::SearchMethod::kBayes, hpo::RandomSampler::kIndependent,
     hpo::BayesModel::kGp},
    {"random", "hpo_random", hpo::SearchMethod::kRandom, hpo::RandomSampler::kIndependent,
     hpo::BayesModel::kTpe},
    {"sobol", "hpo_sobol", hpo::SearchMethod::kRandom, hpo::RandomSampler::kSobol,
     hpo::BayesModel::kTpe},
    {"tpe_random_startup", "hpo_bayes_random_startup", hpo::SearchMethod::kBayes,
     hpo::RandomSampler::kIndependent, hpo::BayesModel::kTpe},
};

hpo::SweepConfig BaseConfig(const Method& method, uint64_t seed) {
  hpo::SweepConfig config;
  config.path = "search_quality";
  config.sweep.method = method.method;
  config.sweep.metric.name = "val_loss";
  config.sweep.metric.goal = hpo::Goal::kMinimize;
  config.sweep.run_cap = 1000;
  config.search.sampler = method.sampler;
  config.search.sampler_given = !method.as_configs_default;
  config.search.model = method.model;
  config.search.model_given = true;
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

bool AtOrAboveMinimum(double best, const Problem& problem) {
  return std::isfinite(best) && best >= problem.minimum - 1e-9;
}

// One seed's sequential run of budgets.back() trials: the best value after each budget.
std::vector<double> BestAt(const Problem& problem, const Method& method, uint64_t seed,
                           const std::vector<int>& budgets) {
  hpo::SweepConfig config = BaseConfig(method, seed);
  config.sweep.parameters = problem.parameters;
  if (method.as_configs_default) hpo::ApplyDefaultSearch(false, false, &config);
  std::unique_ptr<hpo::Searcher> searcher = MakeOrExit(config);
  std::vector<double> best_at;
  double best = std::numeric_limits<double>::infinity();
  for (int64_t trial = 0; trial < budgets.back(); ++trial) {
    const Assignment params = *searcher->Suggest(trial);
    const double value = problem.evaluate(params);
    searcher->Observe(trial, params, hpo::TrialStatus::kCompleted, value);
    best = std::min(best, value);
    if (trial + 1 == budgets[best_at.size()]) best_at.push_back(best);
  }
  return best_at;
}

// Methods to run (argv[2], comma-separated names; every method when empty).
std::string g_only;
bool Selected(const std::string& name) {
  if (g_only.empty()) return true;
  return ("," + g_only + ",").find("," + name + ",") != std::string::npos;
}

void RunProblem(const Problem& problem, int seeds) {
  const std::vector<int> budgets(std::begin(kBudgets), std::end(kBudgets));
  for (const Method& method : kMethods) {
    if (!Selected(method.name)) continue;
    std::vector<std::vector<double>> best_at(budgets.size());
    const double start = hpo::bench::NowSeconds();
    for (int seed = 1; seed <= seeds; ++seed) {
      const std::vector<double> best = BestAt(problem, method, seed, budgets);
      for (size_t budget = 0; budget < budgets.size(); ++budget) {
        best_at[budget].push_back(best[budget]);
      }
    }
    const double seconds = hpo::bench::NowSeconds() - start;
    for (size_t budget = 0; budget < budgets.size(); ++budget) {
      bool check = static_cast<int>(best_at[budget].size()) == seeds;
      for (double best : best_at[budget]) check = check && AtOrAboveMinimum(best, problem);
      PrintResult("search_quality",
                  {{"function", problem.name},
                   {"method", method.name},
                   {"evals", std::to_string(budgets[budget])},
                   {"seeds", std::to_string(seeds)},
                   {"median_best", Number(Median(best_at[budget]), 6)},
                   {"known_minimum", Number(problem.minimum, 6)},
                   {"seconds_all_seeds", Number(seconds, 3)}},
                  check);
    }
  }
}

// --system: one line per seed, in bench/peers/_quality.py's format.
void RunSeeds(const Problem& problem, const Method& method, int first, int last, int budget,
              const std::string& version) {
  std::vector<int> budgets;
  for (int at : kPerSeedBudgets) {
    if (at < budget) budgets.push_back(at);
  }
  budgets.push_back(budget);
  for (int seed = first; seed <= last; ++seed) {
    const double start = hpo::bench::NowSeconds();
    const std::vector<double> best_at = BestAt(problem, method, seed, budgets);
    const double seconds = hpo::bench::NowSeconds() - start;
    hpo::bench::Fields fields = {{"system", method.system},
                                 {"version", version},
                                 {"function", problem.name},
                                 {"seed", std::to_string(seed)}};
    bool check = true;
    for (size_t i = 0; i < budgets.size(); ++i) {
      fields.emplace_back("best_at_" + std::to_string(budgets[i]), Number(best_at[i], 6));
      check = check && AtOrAboveMinimum(best_at[i], problem);
    }
    fields.emplace_back("seconds", Number(seconds, 4));
    PrintResult("peer_quality", fields, check);
  }
}

// --evaluate: parses one value per parameter (a categorical one by its label) into an
// assignment; nullopt when a value does not parse or lies outside its parameter's space.
std::optional<Assignment> ParseAssignment(const Problem& problem,
                                          const std::vector<std::string>& texts) {
  if (texts.size() != problem.parameters.size()) return std::nullopt;
  Assignment params;
  for (size_t i = 0; i < texts.size(); ++i) {
    const hpo::ParameterSpec& spec = problem.parameters[i];
    hpo::ParamValue value;
    char* end = nullptr;
    if (spec.type == hpo::ParamType::kString) {
      value = texts[i];
    } else if (spec.type == hpo::ParamType::kInt) {
      value = static_cast<int64_t>(std::strtoll(texts[i].c_str(), &end, 10));
    } else {
      value = std::strtod(texts[i].c_str(), &end);
    }
    if (end != nullptr && (end == texts[i].c_str() || *end != '\0')) return std::nullopt;
    const bool inside =
        spec.distribution == hpo::Distribution::kCategorical
            ? std::find(spec.values.begin(), spec.values.end(), value) != spec.values.end()
            : hpo::ParamAsDouble(value) >= spec.min && hpo::ParamAsDouble(value) <= spec.max;
    if (!inside) return std::nullopt;
    params.push_back({spec.name, value});
  }
  return params;
}

const Problem* FindProblem(const std::vector<Problem>& problems, const std::string& name) {
  for (const Problem& problem : problems) {
    if (problem.name == name) return &problem;
  }
  return nullptr;
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
  config.sweep.parameters = {LogParameter("lr", 1e-4, 1e-1), IntParameter("width", 8, 128),
                             UniformParameter("dropout", 0.0, 0.5)};
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

int Usage() {
  std::fprintf(stderr,
               "usage: hpo_bench_search_quality [SEEDS [METHODS]]\n"
               "       hpo_bench_search_quality --system SYSTEM --function PROBLEM --seeds "
               "FIRST-LAST [--budget N] [--version VERSION]\n"
               "       hpo_bench_search_quality --evaluate PROBLEM VALUE...\n");
  return 2;
}

int Evaluate(const std::vector<Problem>& problems, int argc, char** argv) {
  const Problem* problem = argc > 2 ? FindProblem(problems, argv[2]) : nullptr;
  if (problem == nullptr) return Usage();
  const std::optional<Assignment> params =
      ParseAssignment(*problem, std::vector<std::string>(argv + 3, argv + argc));
  if (!params) {
    std::fprintf(
        stderr, "search_quality: %s takes %zu values within its space (categorical ones by label):",
        problem->name.c_str(), problem->parameters.size());
    for (const hpo::ParameterSpec& spec : problem->parameters) {
      std::fprintf(stderr, " %s", spec.name.c_str());
    }
    std::fprintf(stderr, "\n");
    return 2;
  }
  std::printf("value=%.17g minimum=%.17g\n", problem->evaluate(*params), problem->minimum);
  return 0;
}

int RunSystem(const std::vector<Problem>& problems, int argc, char** argv) {
  std::map<std::string, std::string> flags = {{"--budget", "100"}, {"--version", "hpo"}};
  for (int i = 1; i + 1 < argc; i += 2) flags[argv[i]] = argv[i + 1];
  const Method* method = nullptr;
  for (const Method& candidate : kMethods) {
    if (candidate.system == flags["--system"]) method = &candidate;
  }
  const Problem* problem = FindProblem(problems, flags["--function"]);
  int first = 0;
  int last = 0;
  const std::string& seeds = flags["--seeds"];
  const int parsed = std::sscanf(seeds.c_str(), "%d-%d", &first, &last);
  if (parsed == 1) last = first;
  const int budget = std::atoi(flags["--budget"].c_str());
  if (argc % 2 == 0 || flags.size() != 5 || method == nullptr || problem == nullptr || parsed < 1 ||
      first < 0 || last < first || budget < 1) {
    return Usage();
  }
  RunSeeds(*problem, *method, first, last, budget, flags["--version"]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<Problem> problems = Problems();
  const std::string first = argc > 1 ? argv[1] : "";
  if (first == "--evaluate") return Evaluate(problems, argc, argv);
  if (first.rfind("--", 0) == 0) return RunSystem(problems, argc, argv);
  const int seeds = argc > 1 ? std::stoi(argv[1]) : 20;
  if (argc > 2) g_only = argv[2];
  for (const Problem& problem : problems) RunProblem(problem, seeds);
  RunMultiFidelity(seeds);
  return 0;
}
