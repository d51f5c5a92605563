// Multi-objective search quality: ZDT1 (Zitzler, Deb, Thiele 2000) with 6 variables in [0, 1],
// f1 = x1, g = 1 + 9 mean(x2..x6), f2 = g (1 - sqrt(f1 / g)), both minimised (the Pareto front
// is x2..x6 = 0, f2 = 1 - sqrt(f1)). Each system runs BUDGET sequential trials per seed through
// MakeSearcher from a SweepConfig struct with two objectives, as the coordinator drives it
// (Suggest, then ObserveObjectives); the figure is the hypervolume of the trials' objectives
// below the reference point (1.1, 11) (the front's own hypervolume there is 11.77).
//   hpo_bench_objectives_quality [SEEDS [BUDGET [SYSTEMS]]]   (default 10 seeds, 100 trials,
//                                                              hpo_bayes,hpo_gp,hpo_random)
// Systems: hpo_bayes (method bayes, TPE on ParEGO's scalarisation), hpo_gp (the GP on it),
// hpo_random (method random). One line per seed and system (hypervolume, seconds), then one per
// system with the median and mean over seeds. bench/peers/_objectives_optuna.py runs Optuna's
// multi-objective samplers on the same problem and reference point. Check: every hypervolume is
// finite and not above the front's.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/pareto.hpp"
#include "harness.hpp"
#include "hpo/config.hpp"
#include "search/searcher.hpp"

namespace {

constexpr int kVariables = 6;
const std::vector<double> kReference = {1.1, 11.0};

std::vector<double> Zdt1(const hpo::Assignment& params) {
  double sum = 0.0;
  for (int i = 1; i < kVariables; ++i) {
    sum += hpo::ParamAsDouble(*hpo::FindParam(params, "x" + std::to_string(i)));
  }
  const double f1 = hpo::ParamAsDouble(*hpo::FindParam(params, "x0"));
  const double g = 1.0 + 9.0 * sum / (kVariables - 1);
  return {f1, g * (1.0 - std::sqrt(f1 / g))};
}

// The hypervolume of the true front below kReference: the integral of 11 - (1 - sqrt(f1)) over
// f1 in [0, 1] plus the strip f1 in [1, 1.1] of height 11.
double FrontHypervolume() { return (11.0 - 1.0 + 2.0 / 3.0) + 0.1 * 11.0; }

hpo::SweepConfig Zdt1Config(const std::string& system, uint64_t seed) {
  hpo::SweepConfig config;
  config.path = "zdt1.yaml";
  config.sweep.method =
      system == "hpo_random" ? hpo::SearchMethod::kRandom : hpo::SearchMethod::kBayes;
  config.search.model = system == "hpo_gp" ? hpo::BayesModel::kGp : hpo::BayesModel::kTpe;
  config.sweep.objectives = {{"f1", hpo::Goal::kMinimize, std::nullopt},
                             {"f2", hpo::Goal::kMinimize, std::nullopt}};
  config.sweep.metric = config.sweep.objectives.front();
  config.sweep.run_cap = 1000;
  for (int i = 0; i < kVariables; ++i) {
    hpo::ParameterSpec spec;
    spec.name = "x" + std::to_string(i);
    spec.distribution = hpo::Distribution::kUniform;
    spec.min = 0.0;
    spec.max = 1.0;
    config.sweep.parameters.push_back(spec);
  }
  config.execution.seed = seed;
  return config;
}

double RunSeed(const std::string& system, uint64_t seed, int64_t budget) {
  const hpo::SweepConfig config = Zdt1Config(system, seed);
  std::unique_ptr<hpo::Searcher> searcher;
  if (!hpo::MakeSearcher(config, &searcher).ok()) return std::nan("");
  std::vector<std::vector<double>> points;
  for (int64_t id = 0; id < budget; ++id) {
    const std::optional<hpo::Assignment> params = searcher->Suggest(id);
    if (!params) return std::nan("");
    const std::vector<double> objectives = Zdt1(*params);
    searcher->ObserveObjectives(id, *params, hpo::TrialStatus::kCompleted, objectives);
    points.push_back(objectives);
  }
  return hpo::Hypervolume2d(points, kReference);
}

}  // namespace

int main(int argc, char** argv) {
  const int seeds = argc > 1 ? std::stoi(argv[1]) : 10;
  const int64_t budget = argc > 2 ? std::stoll(argv[2]) : 100;
  std::vector<std::string> systems;
  std::istringstream names(argc > 3 ? argv[3] : "hpo_bayes,hpo_gp,hpo_random");
  for (std::string name; std::getline(names, name, ',');) systems.push_back(name);
  const double front = FrontHypervolume();
  for (const std::string& system : systems) {
    std::vector<double> volumes;
    bool check = true;
    for (int seed = 1; seed <= seeds; ++seed) {
      const double start = hpo::bench::NowSeconds();
      const double volume = RunSeed(system, static_cast<uint64_t>(seed), budget);
      const double seconds = hpo::bench::NowSeconds() - start;
      const bool ok = std::isfinite(volume) && volume <= front + 1e-9;
      check = check && ok;
      volumes.push_back(volume);
      hpo::bench::PrintResult("objectives_quality",
                              {{"problem", "zdt1_6d"},
                               {"system", system},
                               {"seed", std::to_string(seed)},
                               {"budget", std::to_string(budget)},
                               {"hypervolume", hpo::bench::Number(volume, 6)},
                               {"seconds", hpo::bench::Number(seconds, 3)}},
                              ok);
    }
    const hpo::bench::Summary summary = hpo::bench::Summarize(volumes);
    hpo::bench::PrintResult("objectives_quality",
                            {{"problem", "zdt1_6d"},
                             {"system", system},
                             {"seeds", std::to_string(seeds)},
                             {"budget", std::to_string(budget)},
                             {"hypervolume_median", hpo::bench::Number(summary.p50, 5)},
                             {"hypervolume_mean", hpo::bench::Number(summary.mean, 5)},
                             {"front_hypervolume", hpo::bench::Number(front, 5)}},
                            check);
  }
  return 0;
}
