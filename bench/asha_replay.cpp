// ASHA on recorded learning curves: how many epochs a sweep spends before one of its trials
// reaches a target, for random search and for ASHA settings, on the full curves of random sweeps.
//   hpo_bench_asha_replay --target VALUE [--workers 2] [--run-cap 100] [--draws 2000]
//                         [--variant SPEC ...] STUDY.h5 [STUDY.h5 ...]
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
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "harness.hpp"
#include "hpo/config.hpp"
#include "sched/scheduler.hpp"
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
    if (i + 1 >= argc) return false;
    const std::string value = argv[++i];
    char* end = nullptr;
    if (arg == "--target") {
      options->target = std::strtod(value.c_str(), &end);
    } else if (arg == "--variant") {
      Variant variant;
      if (!ParseVariant(value, &variant)) return false;
      options->variants.push_back(variant);
      continue;
    } else {
      int64_t* target = arg == "--workers"   ? &options->workers
                        : arg == "--run-cap" ? &options->run_cap
                        : arg == "--draws"   ? &options->draws
                                             : nullptr;
      if (!target) return false;
      *target = std::strtoll(value.c_str(), &end, 10);
      if (*target < 1) return false;
    }
    if (*end != '\0') return false;
  }
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

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, &options)) {
    std::fprintf(stderr,
                 "usage: hpo_bench_asha_replay --target VALUE [--workers N] [--run-cap N] "
                 "[--draws N] [--variant random|KIND:MIN_ITER:ETA ...] STUDY.h5 ...\n"
                 "KIND: stopping, promotion, stopping-oracle or promotion-oracle\n");
    return 2;
  }
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
