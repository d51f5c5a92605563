// The cost of one suggestion of method bayes, TPE (multivariate, the default, and independent),
// GP and the learning-curve model (curves):
//   hpo_bench_tpe_cost [CALLS [MODELS]]   (default 200 for TPE; the GP and curves get CALLS / 20,
//                                          at least 3; MODELS a comma-separated subset of tpe,
//                                          tpe_independent, gp, curves)
// Four parameters (lr log_uniform_values, dropout uniform, width int_uniform, optimizer
// categorical of 3), default search options (TPE: 24 candidates). For 100, 1000 and (TPE only)
// 10000 observed trials, times CALLS calls of Suggest for the next trial id: asking again for a
// pending trial refits the same model on the same data (the trial itself is left out of its own
// fit), so every call costs one full suggestion at that many observations. TPE's observed trials
// are its own suggestions up to 1000; at 10000 and for the GP they are random search's
// (suggesting 10000 trials with TPE itself, or 1000 with the GP, would take minutes and change
// little of the cost). For curves, each observed trial reported 9 of 27 epochs first, so every
// suggestion predicts every trial's final value. Reports the median, mean and p99 in
// microseconds, and the median of StartSuggestion alone (the part on the coordinator's message
// loop; the rest runs on its worker thread).
// Reference: Optuna's TPESampler takes about 2 ms per trial at 1000 trials. Check: every
// suggestion is the same and inside the parameters' ranges.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness.hpp"
#include "hpo/config.hpp"
#include "search/searcher.hpp"

namespace {

hpo::ParameterSpec Range(const std::string& name, hpo::Distribution distribution, double min,
                         double max) {
  hpo::ParameterSpec spec;
  spec.name = name;
  spec.distribution = distribution;
  spec.type = distribution == hpo::Distribution::kIntUniform ? hpo::ParamType::kInt
                                                             : hpo::ParamType::kFloat;
  spec.min = min;
  spec.max = max;
  return spec;
}

hpo::SweepConfig CostConfig() {
  hpo::SweepConfig config;
  config.path = "tpe_cost";
  config.sweep.method = hpo::SearchMethod::kBayes;
  config.sweep.metric.name = "val_loss";
  config.sweep.metric.goal = hpo::Goal::kMinimize;
  config.sweep.run_cap = 100000;
  hpo::ParameterSpec optimizer;
  optimizer.name = "optimizer";
  optimizer.distribution = hpo::Distribution::kCategorical;
  optimizer.type = hpo::ParamType::kString;
  optimizer.values = {std::string("sgd"), std::string("adam"), std::string("adamw")};
  config.sweep.parameters = {Range("lr", hpo::Distribution::kLogUniformValues, 1e-5, 1e-1),
                             Range("dropout", hpo::Distribution::kUniform, 0.0, 0.5),
                             Range("width", hpo::Distribution::kIntUniform, 8, 512), optimizer};
  config.execution.seed = 7;
  return config;
}

// A smooth objective with its optimum inside the space.
double Objective(const hpo::Assignment& params) {
  const double lr = std::log10(std::get<double>(params[0].value)) + 3.0;
  const double dropout = std::get<double>(params[1].value) - 0.2;
  const double width = (static_cast<double>(std::get<int64_t>(params[2].value)) - 128.0) / 256.0;
  const double optimizer = std::get<std::string>(params[3].value) == "adam" ? 0.0 : 0.1;
  return lr * lr + dropout * dropout + width * width + optimizer;
}

// search.model curves learns from curves: 9 epochs of a saturating curve towards the objective.
void ReportCurve(hpo::Searcher* searcher, int64_t trial, const hpo::Assignment& params) {
  for (int64_t epoch = 1; epoch <= 9; ++epoch) {
    const double rest = std::exp(-static_cast<double>(epoch) / 3.0);
    searcher->ObserveEpoch(trial, params, epoch, Objective(params) + rest);
  }
}

bool InRange(const hpo::Assignment& params) {
  const double lr = std::get<double>(params[0].value);
  const double dropout = std::get<double>(params[1].value);
  const int64_t width = std::get<int64_t>(params[2].value);
  return lr >= 1e-5 && lr <= 1e-1 && dropout >= 0.0 && dropout <= 0.5 && width >= 8 && width <= 512;
}

const char* ModelName(hpo::BayesModel model) {
  switch (model) {
    case hpo::BayesModel::kTpe:
      return "tpe";
    case hpo::BayesModel::kTpeIndependent:
      return "tpe_independent";
    case hpo::BayesModel::kGp:
      return "gp";
    case hpo::BayesModel::kCurves:
      return "curves";
    case hpo::BayesModel::kCurvesTpe:
      return "curves_tpe";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  const int tpe_calls = argc > 1 ? std::stoi(argv[1]) : 200;
  const std::string only = argc > 2 ? "," + std::string(argv[2]) + "," : "";
  for (hpo::BayesModel model : {hpo::BayesModel::kTpe, hpo::BayesModel::kTpeIndependent,
                                hpo::BayesModel::kGp, hpo::BayesModel::kCurves}) {
    if (!only.empty() &&
        only.find("," + std::string(ModelName(model)) + ",") == std::string::npos) {
      continue;
    }
    const bool curves = model == hpo::BayesModel::kCurves;
    const bool gp = model == hpo::BayesModel::kGp || curves;
    const int calls = gp ? std::max(3, tpe_calls / 20) : tpe_calls;
    hpo::SweepConfig config = CostConfig();
    config.search.model = model;
    if (curves) config.execution.epochs = 27;
    hpo::SweepConfig random_config = config;
    random_config.sweep.method = hpo::SearchMethod::kRandom;
    for (int64_t observations : {100, 1000, 10000}) {
      if (gp && observations > 1000) continue;
      const bool own = !gp && observations <= 1000;
      std::unique_ptr<hpo::Searcher> searcher;
      std::unique_ptr<hpo::Searcher> random;
      if (!hpo::MakeSearcher(config, &searcher).ok()) return 1;
      if (!hpo::MakeSearcher(random_config, &random).ok()) return 1;
      for (int64_t trial = 0; trial < observations; ++trial) {
        const hpo::Assignment params = *(own ? searcher : random)->Suggest(trial);
        if (curves) ReportCurve(searcher.get(), trial, params);
        searcher->Observe(trial, params, hpo::TrialStatus::kCompleted, Objective(params));
      }
      const hpo::Assignment first = *searcher->Suggest(observations);
      bool check = InRange(first);
      std::vector<double> micros;
      std::vector<double> start_micros;  // StartSuggestion: the part on the message loop
      for (int call = 0; call < calls; ++call) {
        const double snapshot_began = hpo::bench::NowSeconds();
        const hpo::Searcher::SuggestionComputation computation =
            searcher->StartSuggestion(observations);
        start_micros.push_back((hpo::bench::NowSeconds() - snapshot_began) * 1e6);
        searcher->FinishSuggestion(observations, computation ? computation() : std::nullopt);
      }
      for (int call = 0; call < calls; ++call) {
        const double start = hpo::bench::NowSeconds();
        const hpo::Assignment params = *searcher->Suggest(observations);
        micros.push_back((hpo::bench::NowSeconds() - start) * 1e6);
        for (size_t i = 0; i < params.size(); ++i)
          check = check && params[i].value == first[i].value;
      }
      const hpo::bench::Summary summary = hpo::bench::Summarize(micros);
      const hpo::bench::Summary start = hpo::bench::Summarize(start_micros);
      hpo::bench::PrintResult("tpe_cost",
                              {{"model", ModelName(model)},
                               {"observations", std::to_string(observations)},
                               {"params", "4"},
                               {"candidates", gp ? "-" : std::to_string(config.search.candidates)},
                               {"calls", std::to_string(calls)},
                               {"us_per_suggest_p50", hpo::bench::Number(summary.p50)},
                               {"us_mean", hpo::bench::Number(summary.mean)},
                               {"us_p99", hpo::bench::Number(summary.p99)},
                               {"us_start_p50", hpo::bench::Number(start.p50)}},
                              check);
    }
  }
  return 0;
}
