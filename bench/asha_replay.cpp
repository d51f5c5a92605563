// ASHA on recorded learning curves: how many epochs a sweep spends before one of its trials
// reaches a target, for random search and for ASHA settings, on the full curves of random sweeps.
//   hpo_bench_asha_replay --target VALUE [--workers 2] [--run-cap 100] [--draws 2000]
//                         [--variant SPEC ...] STUDY.h5 [STUDY.h5 ...]
//   hpo_bench_asha_replay --curves CSV --config CONFIG.yaml --target VALUE --system SYSTEM
//                         --seeds FIRST-LAST [--workers 2] [--run-cap 100]
//   hpo_bench_asha_replay --curves CSV --config CONFIG.yaml --nearest NAME=VALUE,... [...]
//   hpo_bench_asha_replay --curves CSV --config CONFIG.yaml --calibration [--references N]
// SPEC: `random` (no early stopping), `stopping:MIN_ITER:ETA` or `promotion:MIN_ITER:ETA` (ASHA's
// two variants with those rungs below the studies' epochs), or either kind with `-oracle` (e.g.
// `promotion-oracle:1:3`): the scheduler is told each trial's best value of its whole curve at
// every epoch instead of the epoch's value, as a perfect learning-curve predictor would, which
// bounds what predicting curves could gain; default: random and both variants at 1:3, then the
// promotion variant at 1:2 and 3:3. The pool is every trial of the studies that ran all their
// epochs (the most any trial of its study ran; the studies must agree on that and on the goal).
// A random sweep's trials are draws from the space's prior. Each draw is one simulated
// sweep: its trials are pool curves drawn with replacement (the same sequence for every variant),
// `workers` groups each train one epoch per time step, a free group takes a promotable paused trial
// first (promotion variant) else a new trial while fewer than `run-cap` have started, and hpo's own
// scheduler (MakeScheduler) decides after every epoch. The sweep's cost is the epochs trained by
// every group until an epoch reaches the target. Assumptions: epochs take equal time, and the
// trials are drawn at random (a model-based searcher is not simulated). Prints, per variant, the
// median, mean and quartiles of that cost, the share of draws that reached the target, and the
// median's ratio to random search's. Check: every draw of random search costs what its trials'
// curves say it must.
//
// With --curves, hpo's real searchers run too (bench/peers/_target.py's hpo systems): the CSV of
// bench/peers/_export_curves.py is a tabular blackbox over CONFIG's search space, the one
// bench/peers/_curves.py defines: a configuration trains along the recorded curve of its nearest
// recorded configuration (squared distance over the parameters scaled to [0, 1]: log_uniform_values
// on the log of the value, uniform, int_uniform and q_uniform linearly, a list of numbers by
// position, index / (n - 1), a list of strings as a mismatch; ties to the first row). SYSTEM sets
// the method and early stopping over CONFIG's space, everything else at hpo's defaults: hpo_random
// (random search), hpo_stopping and hpo_promotion (random + ASHA's stopping or promotion variant,
// rungs 1/3/9: min_iter 1, eta 3), hpo_bayes_stopping (method bayes with search.model tpe, i.e.
// multivariate TPE, + early_terminate hyperband: ASHA; hpo's default before 2026-11-29),
// hpo_bayes_promotion, hpo_gp_stopping (search.model gp), hpo_bayes_sobol_stopping (search.sampler
// sobol: the Sobol start-up), hpo_curves (search.model curves with early_terminate: the
// learning-curve model and its scheduler, judging from epoch 1 on), hpo_curves_sobol (the same with
// the Sobol start-up), hpo_random_curves (method random with search.model curves: random draws, the
// curve scheduler), hpo_random_sobol_curves (the same with search.sampler sobol: scrambled Sobol
// draws), hpo_default (method bayes + early_terminate hyperband and no search: keys, as users write
// it: what hpo::ApplyDefaultSearch makes of it, the curve scheduler with TPE's draws), and
// oracle_after_N_epochs (oracle_after_1_epoch, oracle_after_3_epochs, ...): the least cost any
// scheduler can reach on random search's draws when it must train a trial N epochs before judging
// it (OracleAfterEpochs). One sweep per seed (the config's seed replaced): MakeSearcher and
// MakeScheduler, told what hpo sweep's coordinator tells them (each epoch: ObserveEpoch, then the
// scheduler's OnEpoch; a trial's end: Observe with its last value, then OnTrialEnd; a free group
// takes a promoted trial, else a new suggestion, else, with nothing running, the idle promotion),
// `workers` groups each training one epoch per time step; the sweep ends at the first epoch
// reaching the target or when all of run-cap trials ended. Prints one line per seed: its epochs
// trained by every group, reached 1|0, the trials started, the resumes (paused trials that went on:
// each a checkpoint read and, for a command trial, a program restarted; 0 for the oracles), and
// `reachable`: the trials started whose curves reach the target when trained to the end (whether a
// miss comes from the draws or from the scheduler; 0 for the oracles). Check: those epochs are
// every epoch the trials trained, the target trial's curve first reaches the target at the epoch
// that ended the sweep, and random search costs what its suggestions' curves say it must.
// --nearest prints the row (0-based, in the CSV's order) of each configuration's nearest
// recorded one, one `nearest=ROW` line each (tests/unit/check_peer_blackbox.py).
// --calibration checks the curve scheduler's predictor (CurvePredictor) on the CSV's curves, rows
// with the same configuration and curve counted once: for each epoch k below the last, each
// curve's final value is predicted from its first k epochs with every other curve as a reference
// (leave one out), z = (final loss - predicted loss) / sd, sd counting one report's scatter as
// CurveScheduler::MayEndBest does. One line per k: the curves, the root mean square of z (1 when
// the predictor knows how much it does not know; above 1 it is overconfident and pauses trials
// that may still end best), the same without the report's scatter, z's range and the share within
// the 90 % interval. Check: at least 5 curves, every z finite, and at least 75 % of them within
// the 90 % interval (the root mean square is for reading: a few curves that take off late, which
// no predictor sees coming, dominate it). --references N gives each prediction N references
// instead of every other curve, as the scheduler has after N trials ended: every set of N other
// curves when there are at most 2,000 such sets per curve, else 2,000 of them drawn at random
// (seed 1); each set's prediction counts once.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "common/file_io.hpp"
#include "harness.hpp"
#include "hpo/config.hpp"
#include "hpo/task_catalog.hpp"
#include "sched/scheduler.hpp"
#include "search/curve_prediction.hpp"
#include "search/searcher.hpp"
#include "study/study_file.hpp"

namespace {

struct Variant {
  std::string spec;
  bool early_stopping = false;
  bool promotion = false;
  bool oracle = false;  // decisions on each curve's best value
  int64_t min_iter = 1;
  int64_t eta = 3;
};

struct Pool {
  std::vector<std::vector<double>> curves;  // the metric per epoch, each of `epochs` values
  std::vector<double> bests;                // each curve's best value
  int64_t epochs = 0;
  bool maximize = true;
};

struct Options {
  double target = std::numeric_limits<double>::quiet_NaN();
  int64_t workers = 2;
  int64_t run_cap = 100;
  int64_t draws = 2000;
  std::vector<Variant> variants;
  std::vector<std::string> studies;
  // --curves mode: the blackbox's CSV and config, the system and seeds, or --nearest queries.
  std::string curves;
  std::string config;
  std::string system;
  int64_t first_seed = 1;
  int64_t last_seed = 0;
  std::vector<std::string> nearest;
  bool calibration = false;
  int64_t references = 0;  // --calibration's references per prediction; 0: every other curve
};

// One simulated sweep's cost: epochs trained until the target; reached false when no trial got
// there within the run cap (the cost is then every epoch the sweep trained).
struct SweepCost {
  int64_t epochs = 0;
  bool reached = false;
};

bool ParseVariant(const std::string& spec, Variant* variant) {
  variant->spec = spec;
  if (spec == "random") return true;
  const size_t first = spec.find(':');
  const size_t second = first == std::string::npos ? first : spec.find(':', first + 1);
  if (second == std::string::npos) return false;
  std::string kind = spec.substr(0, first);
  const std::string oracle_suffix = "-oracle";
  if (kind.size() > oracle_suffix.size() &&
      kind.compare(kind.size() - oracle_suffix.size(), oracle_suffix.size(), oracle_suffix) == 0) {
    variant->oracle = true;
    kind.resize(kind.size() - oracle_suffix.size());
  }
  if (kind != "stopping" && kind != "promotion") return false;
  variant->early_stopping = true;
  variant->promotion = kind == "promotion";
  char* end = nullptr;
  variant->min_iter = std::strtoll(spec.c_str() + first + 1, &end, 10);
  if (end != spec.c_str() + second || variant->min_iter < 1) return false;
  variant->eta = std::strtoll(spec.c_str() + second + 1, &end, 10);
  return *end == '\0' && variant->eta >= 2;
}

bool ParseOptions(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      options->studies.push_back(arg);
      continue;
    }
    if (arg == "--calibration") {
      options->calibration = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    const std::string value = argv[++i];
    char* end = nullptr;
    std::string* text = arg == "--curves"   ? &options->curves
                        : arg == "--config" ? &options->config
                        : arg == "--system" ? &options->system
                                            : nullptr;
    if (text) {
      *text = value;
      continue;
    }
    if (arg == "--nearest") {
      options->nearest.push_back(value);
      continue;
    }
    if (arg == "--seeds") {
      options->first_seed = std::strtoll(value.c_str(), &end, 10);
      options->last_seed = options->first_seed;
      if (*end == '-') options->last_seed = std::strtoll(end + 1, &end, 10);
      if (*end != '\0' || options->first_seed > options->last_seed) return false;
      continue;
    }
    if (arg == "--target") {
      options->target = std::strtod(value.c_str(), &end);
    } else if (arg == "--variant") {
      Variant variant;
      if (!ParseVariant(value, &variant)) return false;
      options->variants.push_back(variant);
      continue;
    } else {
      int64_t* target = arg == "--workers"      ? &options->workers
                        : arg == "--run-cap"    ? &options->run_cap
                        : arg == "--draws"      ? &options->draws
                        : arg == "--references" ? &options->references
                                                : nullptr;
      if (!target) return false;
      *target = std::strtoll(value.c_str(), &end, 10);
      if (*target < 1) return false;
    }
    if (*end != '\0') return false;
  }
  if (!options->curves.empty()) {
    if (options->config.empty() || !options->studies.empty() || !options->variants.empty()) {
      return false;
    }
    if (options->references > 0 && !options->calibration) return false;
    return !options->nearest.empty() || options->calibration ||
           (std::isfinite(options->target) && !options->system.empty() &&
            options->first_seed <= options->last_seed);
  }
  if (options->calibration || options->references > 0) return false;
  if (options->variants.empty()) {
    for (const char* spec :
         {"random", "stopping:1:3", "promotion:1:3", "promotion:1:2", "promotion:3:3"}) {
      options->variants.emplace_back();
      ParseVariant(spec, &options->variants.back());
    }
  }
  return std::isfinite(options->target) && !options->studies.empty();
}

bool LoadPool(const std::vector<std::string>& paths, Pool* pool) {
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    hpo::StudyContents study;
    const hpo::Status status = hpo::ReadStudy(path, &study);
    if (!status.ok()) {
      std::fprintf(stderr, "asha_replay: %s\n", status.message().c_str());
      return false;
    }
    const auto& names = study.layout.metric_names;
    const auto column = std::find(names.begin(), names.end(), study.attributes.metric_name);
    if (column == names.end()) {
      std::fprintf(stderr, "asha_replay: %s has no curve column for its metric %s\n", path.c_str(),
                   study.attributes.metric_name.c_str());
      return false;
    }
    const bool maximize = study.attributes.metric_goal == "maximize";
    int64_t epochs = 0;
    for (const hpo::TrialResult& trial : study.trials) epochs = std::max(epochs, trial.epochs);
    if (i > 0 && (epochs != pool->epochs || maximize != pool->maximize)) {
      std::fprintf(stderr,
                   "asha_replay: %s is another design: %lld epochs, goal %s (%s: %lld epochs, "
                   "goal %s)\n",
                   path.c_str(), static_cast<long long>(epochs), maximize ? "maximize" : "minimize",
                   paths.front().c_str(), static_cast<long long>(pool->epochs),
                   pool->maximize ? "maximize" : "minimize");
      return false;
    }
    pool->maximize = maximize;
    pool->epochs = epochs;
    for (const hpo::TrialResult& trial : study.trials) {
      if (trial.epochs != pool->epochs ||
          static_cast<int64_t>(trial.curve.size()) != trial.epochs) {
        continue;
      }
      std::vector<double> curve;
      for (const hpo::EpochMetrics& epoch : trial.curve) {
        curve.push_back(epoch.values[static_cast<size_t>(column - names.begin())]);
      }
      pool->bests.push_back(maximize ? *std::max_element(curve.begin(), curve.end())
                                     : *std::min_element(curve.begin(), curve.end()));
      pool->curves.push_back(std::move(curve));
    }
  }
  if (pool->curves.empty()) {
    std::fprintf(stderr, "asha_replay: no trial of these studies ran all its %lld epochs\n",
                 static_cast<long long>(pool->epochs));
    return false;
  }
  return true;
}

bool Reaches(const Pool& pool, double target, double value) {
  return pool.maximize ? value >= target : value <= target;
}

std::unique_ptr<hpo::Scheduler> MakeAsha(const Variant& variant, const Pool& pool) {
  hpo::SweepConfig config;
  config.sweep.metric.name = "objective";
  config.sweep.metric.goal = pool.maximize ? hpo::Goal::kMaximize : hpo::Goal::kMinimize;
  config.execution.epochs = pool.epochs;
  config.sweep.early_terminate.enabled = true;
  config.sweep.early_terminate.min_iter = variant.min_iter;
  config.sweep.early_terminate.eta = variant.eta;
  config.sweep.early_terminate.promotion = variant.promotion;
  std::unique_ptr<hpo::Scheduler> scheduler;
  const hpo::Status status = hpo::MakeScheduler(config, &scheduler);
  if (!status.ok()) {
    std::fprintf(stderr, "asha_replay: %s: %s\n", variant.spec.c_str(), status.message().c_str());
    std::exit(2);
  }
  return scheduler;
}

// One sweep over the trials `draw` (pool indices, one per trial id, at least run_cap of them).
SweepCost SimulateSweep(const Variant& variant, const Pool& pool, const Options& options,
                        const std::vector<size_t>& draw) {
  std::unique_ptr<hpo::Scheduler> scheduler;
  if (variant.early_stopping) scheduler = MakeAsha(variant, pool);
  struct Slot {
    std::optional<int64_t> trial;
    int64_t epoch = 0;  // epochs the trial has trained
  };
  std::vector<Slot> slots(static_cast<size_t>(options.workers));
  std::vector<int64_t> trained(draw.size(), 0);
  int64_t started = 0;
  SweepCost cost;
  while (true) {
    bool any_running = false;
    for (Slot& slot : slots) {
      if (!slot.trial) {
        const bool busy = std::any_of(slots.begin(), slots.end(),
                                      [](const Slot& other) { return other.trial.has_value(); });
        std::optional<int64_t> promoted;
        if (variant.promotion) promoted = scheduler->Promote(!busy && started >= options.run_cap);
        if (promoted) {
          slot.trial = promoted;
        } else if (started < options.run_cap) {
          slot.trial = started++;
        } else {
          continue;
        }
        slot.epoch = trained[static_cast<size_t>(*slot.trial)];
      }
      any_running = true;
      const auto id = static_cast<size_t>(*slot.trial);
      const std::vector<double>& curve = pool.curves[draw[id]];
      const double value = curve[static_cast<size_t>(slot.epoch)];
      trained[id] = ++slot.epoch;
      ++cost.epochs;
      if (Reaches(pool, options.target, value)) {
        cost.reached = true;
        return cost;
      }
      bool ends = slot.epoch == pool.epochs;
      if (scheduler) {
        const double told = variant.oracle ? pool.bests[draw[id]] : value;
        const hpo::SchedulerDecision decision = scheduler->OnEpoch(*slot.trial, slot.epoch, told);
        if (decision.pause && !ends) {
          slot.trial.reset();
          continue;
        }
        ends = ends || !decision.keep_going;
        if (ends) {
          scheduler->OnTrialEnd(*slot.trial, slot.epoch == pool.epochs
                                                 ? hpo::TrialStatus::kCompleted
                                                 : hpo::TrialStatus::kStopped);
        }
      }
      if (ends) slot.trial.reset();
    }
    if (!any_running) return cost;
  }
}

// Random search's cost from the curves alone: trial k runs on group k % workers from time step
// (k / workers) * epochs; the sweep ends in the first (step, group) at which a trial's epoch
// reaches the target, and costs every epoch trained by then (groups are visited in order within
// a step).
SweepCost RandomSearchCost(const Pool& pool, const Options& options,
                           const std::vector<size_t>& draw) {
  const int64_t workers = options.workers;
  std::optional<std::pair<int64_t, int64_t>> end;  // (step, group) of the first hit
  for (int64_t trial = 0; trial < options.run_cap; ++trial) {
    const std::vector<double>& curve = pool.curves[draw[static_cast<size_t>(trial)]];
    for (size_t e = 0; e < curve.size(); ++e) {
      if (Reaches(pool, options.target, curve[e])) {
        const std::pair<int64_t, int64_t> hit{
            (trial / workers) * pool.epochs + static_cast<int64_t>(e), trial % workers};
        if (!end || hit < *end) end = hit;
        break;
      }
    }
  }
  SweepCost cost;
  cost.reached = end.has_value();
  if (!end) {
    cost.epochs = options.run_cap * pool.epochs;
    return cost;
  }
  const auto [step, group] = *end;
  for (int64_t trial = 0; trial < options.run_cap; ++trial) {
    const int64_t start = (trial / workers) * pool.epochs;
    if (start > step) break;
    const int64_t before = std::min(pool.epochs, step - start);
    const bool in_the_last_step = step < start + pool.epochs && trial % workers <= group;
    cost.epochs += before + (in_the_last_step ? 1 : 0);
  }
  return cost;
}

// One hyperparameter of the blackbox's space and how it is scaled to [0, 1].
struct Dimension {
  enum class Kind { kLog, kLinear, kOrdinal, kCategorical };
  Kind kind = Kind::kLinear;
  std::string name;
  double min = 0.0;
  double max = 1.0;
  std::vector<hpo::ParamValue> values;  // ordinal and categorical
};

// The recorded curves of a CSV over a config's space (see bench/peers/_curves.py).
struct Blackbox {
  std::vector<Dimension> dimensions;
  std::vector<std::vector<double>> points;  // scaled; a categorical one as its value's index
  Pool pool;
};

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "asha_replay: %s\n", message.c_str());
  std::exit(1);
}

double ScaleNumber(const Dimension& dimension, double value) {
  switch (dimension.kind) {
    case Dimension::Kind::kLog: {
      const double low = std::log(dimension.min);
      const double high = std::log(dimension.max);
      return (std::log(value) - low) / (high - low);
    }
    case Dimension::Kind::kLinear:
      return (value - dimension.min) / (dimension.max - dimension.min);
    case Dimension::Kind::kOrdinal:
      for (size_t i = 0; i < dimension.values.size(); ++i) {
        if (hpo::ParamAsDouble(dimension.values[i]) == value) {
          return dimension.values.size() > 1
                     ? static_cast<double>(i) / static_cast<double>(dimension.values.size() - 1)
                     : 0.0;
        }
      }
      break;
    case Dimension::Kind::kCategorical:
      break;
  }
  Fail(dimension.name + ": " + hpo::FormatParamValueExact(value) + " is not in its space");
}

// A value given as text (a CSV cell, a --nearest query) on its dimension's scale.
double ScaleText(const Dimension& dimension, const std::string& text) {
  if (dimension.kind == Dimension::Kind::kCategorical) {
    for (size_t i = 0; i < dimension.values.size(); ++i) {
      if (hpo::FormatParamValueExact(dimension.values[i]) == text) return static_cast<double>(i);
    }
    Fail(dimension.name + ": " + text + " is none of its values");
  }
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') Fail(dimension.name + ": " + text + " is no number");
  return ScaleNumber(dimension, value);
}

double ScaleParam(const Dimension& dimension, const hpo::ParamValue& value) {
  if (const auto* text = std::get_if<std::string>(&value)) return ScaleText(dimension, *text);
  return ScaleNumber(dimension, hpo::ParamAsDouble(value));
}

// The row of the recorded point nearest to `point` (the first one of equal distance).
size_t Nearest(const Blackbox& box, const std::vector<double>& point) {
  size_t best = 0;
  double best_distance = std::numeric_limits<double>::infinity();
  for (size_t row = 0; row < box.points.size(); ++row) {
    double total = 0.0;
    for (size_t i = 0; i < point.size(); ++i) {
      const double d = box.dimensions[i].kind == Dimension::Kind::kCategorical
                           ? (point[i] == box.points[row][i] ? 0.0 : 1.0)
                           : point[i] - box.points[row][i];
      total += d * d;
    }
    if (total < best_distance) {
      best = row;
      best_distance = total;
    }
  }
  return best;
}

size_t NearestRow(const Blackbox& box, const hpo::Assignment& params) {
  std::vector<double> point;
  for (const Dimension& dimension : box.dimensions) {
    const hpo::ParamValue* value = hpo::FindParam(params, dimension.name);
    if (value == nullptr) Fail("a suggestion has no " + dimension.name);
    point.push_back(ScaleParam(dimension, *value));
  }
  return Nearest(box, point);
}

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream stream(line);
  std::string cell;
  while (std::getline(stream, cell, ',')) cells.push_back(cell);
  return cells;
}

hpo::SweepConfig LoadSpaceConfig(const std::string& path) {
  std::string text;
  hpo::Status status = hpo::ReadWholeFile(path, "config", &text);
  hpo::SweepConfig config;
  if (status.ok()) status = hpo::ParseStoredConfig(text, hpo::BuiltinTaskCatalog(), &config);
  if (!status.ok()) Fail(path + ": " + status.message());
  return config;
}

Blackbox LoadBlackbox(const std::string& csv_path, const hpo::SweepConfig& config) {
  Blackbox box;
  for (const hpo::ParameterSpec& spec : config.sweep.parameters) {
    Dimension dimension;
    dimension.name = spec.name;
    dimension.min = spec.min;
    dimension.max = spec.max;
    dimension.values = spec.values;
    if (spec.distribution == hpo::Distribution::kCategorical) {
      dimension.kind = spec.type == hpo::ParamType::kString ? Dimension::Kind::kCategorical
                                                            : Dimension::Kind::kOrdinal;
    } else if (spec.distribution == hpo::Distribution::kLogUniformValues) {
      dimension.kind = Dimension::Kind::kLog;
    } else if (spec.distribution == hpo::Distribution::kUniform ||
               spec.distribution == hpo::Distribution::kIntUniform ||
               spec.distribution == hpo::Distribution::kQUniform) {
      dimension.kind = Dimension::Kind::kLinear;
    } else {
      Fail(spec.name + ": distribution " + hpo::DistributionName(spec.distribution) +
           " is not supported by the blackbox");
    }
    box.dimensions.push_back(std::move(dimension));
  }
  std::string text;
  const hpo::Status status = hpo::ReadWholeFile(csv_path, "curves", &text);
  if (!status.ok()) Fail(status.message());
  std::stringstream lines(text);
  std::string line;
  std::getline(lines, line);
  const std::vector<std::string> header = SplitCsvLine(line);
  std::vector<size_t> columns;
  for (const Dimension& dimension : box.dimensions) {
    const auto found = std::find(header.begin(), header.end(), dimension.name);
    if (found == header.end()) Fail(csv_path + " has no column " + dimension.name);
    columns.push_back(static_cast<size_t>(found - header.begin()));
  }
  const std::string metric = config.sweep.metric.name;
  const auto first = std::find(header.begin(), header.end(), metric + "_1");
  if (first == header.end()) Fail(csv_path + " has no column " + metric + "_1");
  const auto first_column = static_cast<size_t>(first - header.begin());
  box.pool.epochs = static_cast<int64_t>(header.size() - first_column);
  box.pool.maximize = config.sweep.metric.goal == hpo::Goal::kMaximize;
  for (int64_t e = 1; e <= box.pool.epochs; ++e) {
    if (header[first_column + static_cast<size_t>(e - 1)] != metric + "_" + std::to_string(e)) {
      Fail(csv_path + ": the columns after " + metric + "_1 are not its epochs in order");
    }
  }
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> cells = SplitCsvLine(line);
    if (cells.size() != header.size()) Fail(csv_path + ": a row of another length: " + line);
    std::vector<double> point;
    for (size_t i = 0; i < columns.size(); ++i) {
      point.push_back(ScaleText(box.dimensions[i], cells[columns[i]]));
    }
    std::vector<double> curve;
    for (size_t c = first_column; c < cells.size(); ++c) curve.push_back(std::stod(cells[c]));
    box.pool.bests.push_back(box.pool.maximize ? *std::max_element(curve.begin(), curve.end())
                                               : *std::min_element(curve.begin(), curve.end()));
    box.pool.curves.push_back(std::move(curve));
    box.points.push_back(std::move(point));
  }
  if (box.points.empty()) Fail(csv_path + " holds no curve");
  return box;
}

// CONFIG's sweep as SYSTEM runs it (see the top of the file); false for an unknown system.
bool ApplySystem(const std::string& system, hpo::SweepConfig* config) {
  static const std::map<std::string, std::pair<const char*, const char*>> kSystems = {
      // name: method (random, tpe, gp), early stopping (none, stopping, promotion)
      {"hpo_random", {"random", "none"}},
      {"hpo_stopping", {"random", "stopping"}},
      {"hpo_promotion", {"random", "promotion"}},
      {"hpo_bayes_stopping", {"tpe", "stopping"}},
      {"hpo_bayes_promotion", {"tpe", "promotion"}},
      {"hpo_bayes_sobol_stopping", {"tpe_sobol", "stopping"}},
      {"hpo_gp_stopping", {"gp", "stopping"}},
      {"hpo_curves", {"curves", "curves"}},
      {"hpo_curves_sobol", {"curves_sobol", "curves"}},
      {"hpo_random_curves", {"random", "curves"}},
      {"hpo_random_sobol_curves", {"random_sobol", "curves"}},
      {"hpo_default", {"default", "stopping"}},  // method bayes + early_terminate, no search:
  };
  const auto found = kSystems.find(system);
  if (found == kSystems.end()) return false;
  const std::string method = found->second.first;
  const std::string stopping = found->second.second;
  config->sweep.method = method == "random" || method == "random_sobol" ? hpo::SearchMethod::kRandom
                                                                        : hpo::SearchMethod::kBayes;
  if (method == "random_sobol") config->search.sampler = hpo::RandomSampler::kSobol;
  if (method == "gp") config->search.model = hpo::BayesModel::kGp;
  if (method == "curves" || method == "curves_sobol" || stopping == "curves") {
    config->search.model = hpo::BayesModel::kCurves;
  }
  if (method == "curves_sobol") config->search.sampler = hpo::RandomSampler::kSobol;
  if (method == "tpe_sobol") config->search.sampler = hpo::RandomSampler::kSobol;
  config->sweep.early_terminate = hpo::HyperbandSpec();
  if (stopping != "none") {
    config->sweep.early_terminate.enabled = true;
    config->sweep.early_terminate.min_iter = 1;
    config->sweep.early_terminate.eta = 3;
    config->sweep.early_terminate.promotion = stopping == "promotion";
  }
  // The tpe systems name their model (search.model: tpe, so TPE with ASHA); hpo_default gives
  // none, as users write it, and gets what ParseConfig makes of that.
  if (method == "tpe" || method == "tpe_sobol") config->search.model_given = true;
  if (method == "default") hpo::ApplyDefaultSearch(false, stopping == "promotion", config);
  return true;
}

// One sweep of hpo's searcher and scheduler on the blackbox: its cost, the trials it started and
// whether the check held.
struct SearchRun {
  SweepCost cost;
  int64_t trials = 0;
  int64_t resumes = 0;  // paused trials that went on (each a checkpoint read, a program restarted)
  int64_t reachable = 0;  // trials started whose curves reach the target if trained to the end
  bool check = true;
};

// One simulated sweep: free groups take trials as the coordinator's AnswerWaitingGroups picks
// them, each trains one epoch per time step along its configuration's recorded curve, and the
// searcher and scheduler see every epoch, until an epoch reaches the target or nothing runs.
class SimulatedSweep {
 public:
  SimulatedSweep(const hpo::SweepConfig& config, const Blackbox& box, const Options& options)
      : box_(box), options_(options) {
    hpo::Status status = hpo::MakeSearcher(config, &searcher_);
    if (status.ok()) status = hpo::MakeScheduler(config, &scheduler_);
    if (!status.ok()) Fail(options.system + ": " + status.message());
  }

  // Runs the sweep; `run_` holds its cost, trials and resumes after.
  void Run() {
    std::vector<std::optional<int64_t>> slots(static_cast<size_t>(options_.workers));
    while (!target_trial_) {
      bool any_running = false;
      for (std::optional<int64_t>& slot : slots) {
        if (!slot) {
          const bool busy = std::any_of(slots.begin(), slots.end(),
                                        [](const auto& other) { return other.has_value(); });
          slot = NextTrial(busy);
          if (!slot) continue;
        }
        any_running = true;
        if (TrainEpoch(&slot)) break;
      }
      if (!any_running) break;
    }
    run_.cost.reached = target_trial_.has_value();
    run_.trials = static_cast<int64_t>(trials_.size());
  }

  // The run, with check true when its epochs are every epoch its trials trained and the target
  // trial first reached the target at its last epoch.
  SearchRun Checked() {
    int64_t trained = 0;
    for (const Trial& trial : trials_) {
      trained += trial.trained;
      if (Reaches(box_.pool, options_.target, box_.pool.bests[trial.row])) ++run_.reachable;
    }
    run_.check = trained == run_.cost.epochs;
    if (target_trial_) {
      const Trial& trial = trials_[static_cast<size_t>(*target_trial_)];
      const std::vector<double>& curve = box_.pool.curves[trial.row];
      const auto first = std::find_if(curve.begin(), curve.end(), [&](double value) {
        return Reaches(box_.pool, options_.target, value);
      });
      run_.check = run_.check && first - curve.begin() + 1 == trial.trained;
    }
    return run_;
  }

  bool has_scheduler() const { return scheduler_ != nullptr; }

 private:
  struct Trial {
    hpo::Assignment params;
    size_t row = 0;
    int64_t trained = 0;
  };

  // What a free group runs next: a promotable paused trial, else a new one while the run cap
  // allows, else (no group busy) any paused trial.
  std::optional<int64_t> NextTrial(bool busy) {
    const bool paused = scheduler_ && scheduler_->paused_trials() > 0;
    if (paused) {
      if (const std::optional<int64_t> promoted = scheduler_->Promote(/*idle=*/false)) {
        ++run_.resumes;
        return promoted;
      }
    }
    if (static_cast<int64_t>(trials_.size()) < options_.run_cap) {
      const auto id = static_cast<int64_t>(trials_.size());
      std::optional<hpo::Assignment> params = searcher_->Suggest(id);
      if (params) {
        const size_t row = NearestRow(box_, *params);
        trials_.push_back({std::move(*params), row, 0});
        return id;
      }
    }
    if (paused && !busy) {
      const std::optional<int64_t> promoted = scheduler_->Promote(/*idle=*/true);
      if (promoted) ++run_.resumes;
      return promoted;
    }
    return std::nullopt;
  }

  // Trains the slot's trial one epoch; empties the slot when the trial pauses or ends. True when
  // the epoch reached the target.
  bool TrainEpoch(std::optional<int64_t>* slot) {
    const int64_t id = **slot;
    Trial& trial = trials_[static_cast<size_t>(id)];
    const double value = box_.pool.curves[trial.row][static_cast<size_t>(trial.trained)];
    ++trial.trained;
    ++run_.cost.epochs;
    searcher_->ObserveEpoch(id, trial.params, trial.trained, value);
    if (Reaches(box_.pool, options_.target, value)) {
      target_trial_ = id;
      return true;
    }
    bool ends = trial.trained == box_.pool.epochs;
    hpo::TrialStatus end_status = hpo::TrialStatus::kCompleted;
    if (scheduler_) {
      const hpo::SchedulerDecision decision = scheduler_->OnEpoch(id, trial.trained, value);
      if (!decision.keep_going && !ends) {
        if (decision.pause) {
          slot->reset();
          return false;
        }
        ends = true;
        end_status = hpo::TrialStatus::kStopped;
      }
    }
    if (ends) {
      searcher_->Observe(id, trial.params, end_status, value);
      if (scheduler_) scheduler_->OnTrialEnd(id, end_status);
      slot->reset();
    }
    return false;
  }

  const Blackbox& box_;
  const Options& options_;
  std::unique_ptr<hpo::Searcher> searcher_;
  std::unique_ptr<hpo::Scheduler> scheduler_;
  std::vector<Trial> trials_;
  SearchRun run_;
  std::optional<int64_t> target_trial_;
};

SearchRun SimulateSearch(const hpo::SweepConfig& config, const Blackbox& box,
                         const Options& options) {
  SimulatedSweep sweep(config, box, options);
  sweep.Run();
  SearchRun run = sweep.Checked();
  if (config.sweep.method == hpo::SearchMethod::kRandom && !sweep.has_scheduler()) {
    // Random search's suggestions do not depend on results: a fresh searcher gives the same ones.
    std::unique_ptr<hpo::Searcher> fresh;
    const hpo::Status status = hpo::MakeSearcher(config, &fresh);
    std::vector<size_t> draw;
    for (int64_t id = 0; status.ok() && id < options.run_cap; ++id) {
      draw.push_back(NearestRow(box, *fresh->Suggest(id)));
    }
    const SweepCost expected = RandomSearchCost(box.pool, options, draw);
    run.check = run.check && status.ok() && expected.epochs == run.cost.epochs &&
                expected.reached == run.cost.reached;
  }
  return run;
}

// The lower bound on any scheduler's cost over random search's draws of `config` (the draws of
// hpo_random and hpo_random_curves, which do not depend on results) when a trial must train
// `judge_after` epochs before it can be judged: a scheduler that then knew every such trial's
// whole curve would train draws 1..k for judge_after epochs each (a draw that reaches the target
// sooner ends the sweep there) and continue the one that reaches it soonest; the bound is the
// least such cost over k.
SearchRun OracleAfterEpochs(const hpo::SweepConfig& config, const Blackbox& box,
                            const Options& options, int64_t judge_after) {
  std::unique_ptr<hpo::Searcher> searcher;
  if (!hpo::MakeSearcher(config, &searcher).ok()) Fail("cannot make the random searcher");
  SearchRun run;
  run.cost.epochs = options.run_cap * std::min<int64_t>(judge_after, box.pool.epochs);
  std::optional<int64_t> soonest;  // the least first epoch at the target among draws 1..k
  for (int64_t k = 1; k <= options.run_cap; ++k) {
    run.trials = k;
    const std::vector<double>& curve = box.pool.curves[NearestRow(box, *searcher->Suggest(k - 1))];
    const auto hit = std::find_if(curve.begin(), curve.end(), [&](double value) {
      return Reaches(box.pool, options.target, value);
    });
    if (hit == curve.end()) continue;
    const int64_t reach = hit - curve.begin() + 1;
    if (reach <= judge_after) {  // the sweep ends while this draw is being judged
      const int64_t cost = (k - 1) * judge_after + reach;
      if (!run.cost.reached || cost < run.cost.epochs) run.cost.epochs = cost;
      run.cost.reached = true;
      break;
    }
    if (!soonest || reach < *soonest) soonest = reach;
    const int64_t cost = k * judge_after + *soonest - judge_after;
    if (!run.cost.reached || cost < run.cost.epochs) run.cost.epochs = cost;
    run.cost.reached = true;
  }
  return run;
}

// The --curves mode: --nearest queries, or one sweep per seed.
// The box's curves as losses (lower is better), rows with the same point and curve once.
std::vector<std::vector<double>> DistinctLossCurves(const Blackbox& box) {
  std::vector<std::vector<double>> losses;
  for (size_t i = 0; i < box.pool.curves.size(); ++i) {
    bool repeated = false;
    for (size_t j = 0; j < i && !repeated; ++j) {
      repeated = box.points[j] == box.points[i] && box.pool.curves[j] == box.pool.curves[i];
    }
    if (repeated) continue;
    losses.emplace_back();
    for (double value : box.pool.curves[i]) {
      losses.back().push_back(box.pool.maximize ? -value : value);
    }
  }
  return losses;
}

// --calibration's most reference sets per curve (see the top of the file).
constexpr size_t kMostReferenceSets = 2000;

// The number of ways to choose n of m, or cap + 1 once it passes cap.
size_t ChooseCapped(size_t m, size_t n, size_t cap) {
  double ways = 1.0;
  for (size_t k = 1; k <= n; ++k) {
    ways = ways * static_cast<double>(m - n + k) / static_cast<double>(k);
    if (ways > static_cast<double>(cap)) return cap + 1;
  }
  return static_cast<size_t>(std::llround(ways));
}

// The sets of `count` of `others` that predict one curve: every such set, or kMostReferenceSets
// drawn with `rng` when there are more.
std::vector<std::vector<size_t>> ReferenceSets(const std::vector<size_t>& others, size_t count,
                                               std::mt19937_64* rng) {
  std::vector<std::vector<size_t>> sets;
  if (ChooseCapped(others.size(), count, kMostReferenceSets) <= kMostReferenceSets) {
    std::vector<bool> chosen(others.size(), false);
    std::fill(chosen.begin(), chosen.begin() + static_cast<std::ptrdiff_t>(count), true);
    do {
      sets.emplace_back();
      for (size_t k = 0; k < others.size(); ++k) {
        if (chosen[k]) sets.back().push_back(others[k]);
      }
    } while (std::prev_permutation(chosen.begin(), chosen.end()));
    return sets;
  }
  for (size_t set = 0; set < kMostReferenceSets; ++set) {
    sets.emplace_back();
    std::sample(others.begin(), others.end(), std::back_inserter(sets.back()), count, *rng);
  }
  return sets;
}

// Per curve, the reference sets that predict it: `references` other curves each, or one set of
// every other curve when references is 0.
std::vector<std::vector<std::vector<size_t>>> CalibrationReferences(size_t curves,
                                                                    int64_t references) {
  if (references > 0 && static_cast<size_t>(references) >= curves) {
    Fail("--references " + std::to_string(references) + " needs more than that many distinct " +
         "curves; the CSV has " + std::to_string(curves));
  }
  std::mt19937_64 rng(1);
  std::vector<std::vector<std::vector<size_t>>> per_curve(curves);
  for (size_t i = 0; i < curves; ++i) {
    std::vector<size_t> others;
    for (size_t j = 0; j < curves; ++j) {
      if (j != i) others.push_back(j);
    }
    per_curve[i] = references == 0 ? std::vector<std::vector<size_t>>{others}
                                   : ReferenceSets(others, static_cast<size_t>(references), &rng);
  }
  return per_curve;
}

// The standard normal's two-sided 90 % bound.
constexpr double kNinetyPercentZ = 1.6449;

// The calibration's z of each prediction from the first `seen` epochs, and the sum of the squared
// errors over the prediction's own variance (without the report's scatter).
struct CalibrationErrors {
  std::vector<double> z;
  double prediction_only_square_sum = 0.0;
};

CalibrationErrors PredictFinals(const std::vector<std::vector<double>>& losses,
                                const std::vector<std::vector<std::vector<size_t>>>& references,
                                int64_t epochs, int64_t seen) {
  CalibrationErrors errors;
  for (size_t i = 0; i < losses.size(); ++i) {
    const std::vector<double> first(losses[i].begin(), losses[i].begin() + seen);
    const auto extrapolation = hpo::CurvePredictor::Extrapolate(first, epochs);
    for (const std::vector<size_t>& set : references[i]) {
      hpo::CurvePredictor predictor(epochs);
      for (size_t j : set) predictor.AddReference(losses[j]);
      const hpo::FinalPrediction prediction = predictor.Predict(first, extrapolation);
      const double error = losses[i].back() - prediction.mean;
      errors.z.push_back(error / std::sqrt(prediction.variance + predictor.ReportVariance()));
      errors.prediction_only_square_sum += error * error / prediction.variance;
    }
  }
  return errors;
}

// --calibration (see the top of the file).
int RunCalibration(const Blackbox& box, int64_t references) {
  const std::vector<std::vector<double>> losses = DistinctLossCurves(box);
  const auto sets = CalibrationReferences(losses.size(), references);
  const int64_t epochs = box.pool.epochs;
  bool all_ok = true;
  for (int64_t seen = 1; seen < epochs; ++seen) {
    const CalibrationErrors errors = PredictFinals(losses, sets, epochs, seen);
    const std::vector<double>& z = errors.z;
    double square_sum = 0.0;
    for (double value : z) square_sum += value * value;
    const auto n = static_cast<double>(z.size());
    const double rms = std::sqrt(square_sum / n);
    const auto within =
        std::count_if(z.begin(), z.end(), [](double v) { return std::abs(v) <= kNinetyPercentZ; });
    const double share_within = static_cast<double>(within) / n;
    const bool check = losses.size() >= 5 && std::isfinite(rms) && share_within >= 0.75;
    all_ok = all_ok && check;
    hpo::bench::PrintResult(
        "curve_calibration",
        {{"curves", std::to_string(losses.size())},
         {"references", references == 0 ? "others" : std::to_string(references)},
         {"predictions", std::to_string(z.size())},
         {"epochs_seen", std::to_string(seen)},
         {"rms_z", hpo::bench::Number(rms, 3)},
         {"rms_z_prediction_only",
          hpo::bench::Number(std::sqrt(errors.prediction_only_square_sum / n), 3)},
         {"z_min", hpo::bench::Number(*std::min_element(z.begin(), z.end()), 3)},
         {"z_max", hpo::bench::Number(*std::max_element(z.begin(), z.end()), 3)},
         {"within_90", hpo::bench::Number(share_within, 3)}},
        check);
  }
  return all_ok ? 0 : 1;
}

int RunOnCurves(const Options& options) {
  hpo::SweepConfig config = LoadSpaceConfig(options.config);
  const Blackbox box = LoadBlackbox(options.curves, config);
  if (options.calibration) return RunCalibration(box, options.references);
  for (const std::string& query : options.nearest) {
    std::map<std::string, std::string> given;
    for (const std::string& pair : SplitCsvLine(query)) {
      const size_t equals = pair.find('=');
      if (equals == std::string::npos) Fail("--nearest wants NAME=VALUE,...: " + query);
      given[pair.substr(0, equals)] = pair.substr(equals + 1);
    }
    std::vector<double> point;
    for (const Dimension& dimension : box.dimensions) {
      const auto found = given.find(dimension.name);
      if (found == given.end()) Fail("--nearest " + query + " has no " + dimension.name);
      point.push_back(ScaleText(dimension, found->second));
    }
    std::printf("nearest=%zu\n", Nearest(box, point));
  }
  if (options.system.empty()) return 0;
  // oracle_after_N_epochs: OracleAfterEpochs with judge_after N.
  int64_t judge_after = 0;
  const bool oracle =
      std::sscanf(options.system.c_str(), "oracle_after_%" SCNd64, &judge_after) == 1 &&
      judge_after >= 1 &&
      options.system ==
          "oracle_after_" + std::to_string(judge_after) + (judge_after == 1 ? "_epoch" : "_epochs");
  if (!ApplySystem(oracle ? "hpo_random" : options.system, &config)) {
    Fail("unknown system " + options.system);
  }
  config.sweep.run_cap = options.run_cap;
  config.sweep.metric.target = options.target;
  for (int64_t seed = options.first_seed; seed <= options.last_seed; ++seed) {
    config.execution.seed = static_cast<uint64_t>(seed);
    const SearchRun run = oracle ? OracleAfterEpochs(config, box, options, judge_after)
                                 : SimulateSearch(config, box, options);
    hpo::bench::PrintResult("peer_target",
                            {{"system", options.system},
                             {"target", hpo::bench::Number(options.target)},
                             {"seed", std::to_string(seed)},
                             {"epochs", std::to_string(run.cost.epochs)},
                             {"reached", run.cost.reached ? "1" : "0"},
                             {"trials", std::to_string(run.trials)},
                             {"resumes", std::to_string(run.resumes)},
                             {"reachable", std::to_string(run.reachable)}},
                            run.check);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, &options)) {
    std::fprintf(stderr,
                 "usage: hpo_bench_asha_replay --target VALUE [--workers N] [--run-cap N] "
                 "[--draws N] [--variant random|KIND:MIN_ITER:ETA ...] STUDY.h5 ...\n"
                 "       hpo_bench_asha_replay --curves CSV --config CONFIG --target VALUE "
                 "--system SYSTEM --seeds FIRST-LAST [--workers N] [--run-cap N]\n"
                 "       hpo_bench_asha_replay --curves CSV --config CONFIG --nearest "
                 "NAME=VALUE,... [...]\n"
                 "       hpo_bench_asha_replay --curves CSV --config CONFIG --calibration "
                 "[--references N]\n"
                 "KIND: stopping, promotion, stopping-oracle or promotion-oracle\n");
    return 2;
  }
  if (!options.curves.empty()) return RunOnCurves(options);
  Pool pool;
  if (!LoadPool(options.studies, &pool)) return 1;
  const auto best = pool.maximize ? std::max_element(pool.bests.begin(), pool.bests.end())
                                  : std::min_element(pool.bests.begin(), pool.bests.end());
  if (!Reaches(pool, options.target, *best)) {
    std::fprintf(stderr,
                 "asha_replay: none of the %zu full curves reaches the target %g (their best: "
                 "%g)\n",
                 pool.curves.size(), options.target, *best);
    return 1;
  }
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<size_t> pick(0, pool.curves.size() - 1);
  std::vector<std::vector<size_t>> draws(static_cast<size_t>(options.draws));
  for (auto& draw : draws) {
    for (int64_t i = 0; i < options.run_cap; ++i) draw.push_back(pick(rng));
  }
  double random_median = std::numeric_limits<double>::quiet_NaN();
  for (const Variant& variant : options.variants) {
    std::vector<double> costs;
    int64_t reached = 0;
    bool check = true;
    for (const auto& draw : draws) {
      const SweepCost cost = SimulateSweep(variant, pool, options, draw);
      if (!variant.early_stopping) {
        const SweepCost expected = RandomSearchCost(pool, options, draw);
        check = check && expected.epochs == cost.epochs && expected.reached == cost.reached;
      }
      costs.push_back(cost.reached ? static_cast<double>(cost.epochs)
                                   : std::numeric_limits<double>::infinity());
      reached += cost.reached ? 1 : 0;
    }
    std::sort(costs.begin(), costs.end());
    auto quantile = [&costs](double q) {
      return costs[std::min(costs.size() - 1, static_cast<size_t>(q * costs.size()))];
    };
    const double median = quantile(0.5);
    if (variant.spec == "random") random_median = median;
    double finite_sum = 0.0;
    for (double cost : costs) finite_sum += std::isfinite(cost) ? cost : 0.0;
    hpo::bench::PrintResult(
        "asha_replay",
        {{"variant", variant.spec},
         {"pool", std::to_string(pool.curves.size())},
         {"target", hpo::bench::Number(options.target)},
         {"median_epochs", hpo::bench::Number(median)},
         {"mean_epochs_reached", hpo::bench::Number(finite_sum / std::max<int64_t>(1, reached))},
         {"p25", hpo::bench::Number(quantile(0.25))},
         {"p75", hpo::bench::Number(quantile(0.75))},
         {"reached", hpo::bench::Number(static_cast<double>(reached) / options.draws, 3)},
         {"median_vs_random", hpo::bench::Number(median / random_median, 3)}},
        check);
  }
  return 0;
}
