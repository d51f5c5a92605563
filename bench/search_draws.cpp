// Where a sweep's searcher would draw next: the searcher rebuilt from a study as `hpo sweep
// --resume` rebuilds it (Coordinator::Restore replays the study's trials and epoch reports), then
// DRAWS suggestions, each from that same state (SaveState / RestoreState between them, so no draw
// sees the others as pending), for the trial ids after the study's.
//   hpo_bench_search_draws STUDY.h5 [--draws 400] [--within NAME=SPEC ...] [--candidates N]
//                          [--each-trial]
// SPEC: VALUE/VALUE/... (the value's text as `hpo status` prints it) or LOW:HIGH (numbers,
// inclusive). Prints one line per parameter: the share of draws of each value (a list of
// values), or the 10th, 50th and 90th percentiles (a range). With --within, one more line: the
// share of draws inside every given range at once, beside the same share for random search's
// draws over the study's space (method random, the same seed), and their ratio: how strongly
// the model points there. Check: every draw has every parameter of the space (a study with
// conditional parameters fails it). --candidates sets search.candidates (TPE's candidates per
// draw) for the model's draws. --each-trial (with --within) asks where the searcher drew along
// the sweep: for every trial id K of the study, the searcher is rebuilt from the trials before K
// alone (with all their epoch reports, also those made after trial K began: the draw sees a
// little of its future) and draws; the line gives the sum of the shares inside the ranges over
// all K, the region's expected draws in a sweep of that length, for the model and for random
// search, and the same for the first and second halves of the sweep. Used on the outcome sweeps
// of issue 54 item 4 (bench/RESULTS.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "coord/coordinator.hpp"
#include "harness.hpp"
#include "hpo/config.hpp"
#include "hpo/task_catalog.hpp"
#include "sched/scheduler.hpp"
#include "search/searcher.hpp"
#include "study/study_file.hpp"

namespace {

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "search_draws: %s\n", message.c_str());
  std::exit(1);
}

// One --within NAME=SPEC: a set of values, or a numeric range.
struct Within {
  std::string name;
  std::vector<std::string> values;  // empty for a range
  double low = 0.0;
  double high = 0.0;

  bool Holds(const hpo::Assignment& draw) const {
    const hpo::ParamValue* value = hpo::FindParam(draw, name);
    if (value == nullptr) return false;
    if (!values.empty()) {
      return std::find(values.begin(), values.end(), hpo::FormatParamValue(*value)) != values.end();
    }
    // Quantized values carry rounding (0.30000000000000004 for q 0.05): a relative tolerance.
    const double number = hpo::ParamAsDouble(*value);
    return number >= low - 1e-9 * std::abs(low) && number <= high + 1e-9 * std::abs(high);
  }
};

Within ParseWithin(const std::string& text) {
  const size_t equals = text.find('=');
  if (equals == std::string::npos) Fail("--within wants NAME=SPEC, got " + text);
  Within within;
  within.name = text.substr(0, equals);
  const std::string spec = text.substr(equals + 1);
  const size_t colon = spec.find(':');
  if (colon != std::string::npos) {
    char* end = nullptr;
    within.low = std::strtod(spec.c_str(), &end);
    const bool low_ok = end == spec.c_str() + colon;
    within.high = std::strtod(spec.c_str() + colon + 1, &end);
    if (!low_ok || *end != '\0' || within.low > within.high) Fail("--within " + text);
    return within;
  }
  size_t start = 0;
  while (start <= spec.size()) {
    const size_t slash = std::min(spec.find('/', start), spec.size());
    within.values.push_back(spec.substr(start, slash - start));
    start = slash + 1;
  }
  return within;
}

// DRAWS suggestions of `searcher` from its present state, for trial ids from `first_id` on.
std::vector<hpo::Assignment> Draw(hpo::Searcher* searcher, int64_t first_id, int64_t draws) {
  const std::string state = searcher->SaveState();
  std::vector<hpo::Assignment> suggestions;
  for (int64_t i = 0; i < draws; ++i) {
    const hpo::Status restored = searcher->RestoreState(state);
    if (!restored.ok()) Fail("restoring the searcher: " + restored.message());
    std::optional<hpo::Assignment> suggestion = searcher->Suggest(first_id + i);
    if (!suggestion) Fail("the searcher has no suggestion left");
    suggestions.push_back(std::move(*suggestion));
  }
  return suggestions;
}

// A sweep's coordinator restored from a study (as a resume restores it) and its searcher, which
// the coordinator owns.
struct RestoredSweep {
  std::unique_ptr<hpo::Coordinator> coordinator;
  hpo::Searcher* searcher = nullptr;
};

RestoredSweep Restore(const hpo::SweepConfig& config, const hpo::StudyContents& study) {
  hpo::CoordinatorDeps deps;
  hpo::Status status = hpo::MakeSearcher(config, &deps.searcher);
  if (status.ok()) status = hpo::MakeScheduler(config, &deps.scheduler);
  if (!status.ok()) Fail(status.message());
  deps.clock = [] { return 0.0; };
  RestoredSweep sweep;
  sweep.searcher = deps.searcher.get();
  sweep.coordinator = std::make_unique<hpo::Coordinator>(config, 1, std::move(deps));
  status = sweep.coordinator->Restore(study);
  if (!status.ok()) Fail(status.message());
  return sweep;
}

void PrintParameter(const hpo::ParameterSpec& spec, const std::vector<hpo::Assignment>& draws,
                    bool* check) {
  std::map<std::string, int64_t> counts;
  std::vector<double> numbers;
  for (const hpo::Assignment& draw : draws) {
    const hpo::ParamValue* value = hpo::FindParam(draw, spec.name);
    *check = *check && value != nullptr;
    if (value == nullptr) continue;
    if (!spec.values.empty()) ++counts[hpo::FormatParamValue(*value)];
    numbers.push_back(hpo::ParamAsDouble(*value));
  }
  hpo::bench::Fields fields = {{"parameter", spec.name}, {"draws", std::to_string(draws.size())}};
  const auto n = static_cast<double>(draws.size());
  if (!spec.values.empty()) {
    for (const hpo::ParamValue& value : spec.values) {
      const std::string label = hpo::FormatParamValue(value);
      fields.emplace_back(label, hpo::bench::Number(static_cast<double>(counts[label]) / n, 3));
    }
  } else if (!numbers.empty()) {
    std::sort(numbers.begin(), numbers.end());
    for (const auto& [name, q] : {std::pair{"p10", 0.1}, {"p50", 0.5}, {"p90", 0.9}}) {
      fields.emplace_back(name, hpo::bench::Number(numbers[static_cast<size_t>(q * (n - 1))]));
    }
  }
  hpo::bench::PrintResult("search_draws", fields, *check);
}

double ShareWithin(const std::vector<hpo::Assignment>& draws, const std::vector<Within>& ranges) {
  const auto inside = std::count_if(draws.begin(), draws.end(), [&](const hpo::Assignment& d) {
    return std::all_of(ranges.begin(), ranges.end(), [&](const Within& w) { return w.Holds(d); });
  });
  return static_cast<double>(inside) / static_cast<double>(draws.size());
}

// The study as it was when trial `first_id` was drawn: the trials before it, with every report
// they made (the study keeps no time per report). The running trials' and paused retries'
// records are dropped with the later trials.
hpo::StudyContents Before(const hpo::StudyContents& study, int64_t first_id) {
  hpo::StudyContents before = study;
  before.trials.clear();
  for (const hpo::TrialResult& trial : study.trials) {
    if (trial.trial_id < first_id) before.trials.push_back(trial);
  }
  for (auto it = before.earlier_spans.begin(); it != before.earlier_spans.end();) {
    it = it->first < first_id ? std::next(it) : before.earlier_spans.erase(it);
  }
  before.extra_attributes.erase("running_trials");
  before.extra_attributes.erase("paused_retries");
  return before;
}

// The share inside `ranges` of the searcher's draws for trial `trial_id` from the study's state
// before it: the start-up design's own point before search.startup_trials, else `draws` draws
// (each with its own trial id past the study's, so that each has its own random stream).
double ShareAt(const hpo::SweepConfig& config, const hpo::StudyContents& study, int64_t trial_id,
               int64_t draws, const std::vector<Within>& ranges) {
  const RestoredSweep sweep = Restore(config, Before(study, trial_id));
  if (trial_id < config.search.startup_trials) {
    return ShareWithin(Draw(sweep.searcher, trial_id, 1), ranges);
  }
  const int64_t first_id = 1000000 + trial_id * draws;
  return ShareWithin(Draw(sweep.searcher, first_id, draws), ranges);
}

// --each-trial: the region's expected draws over the study's trial ids, for the model and for
// random search (its share per draw times the trials), in all and by halves.
void PrintEachTrial(const hpo::SweepConfig& config, const hpo::StudyContents& study,
                    const std::vector<Within>& ranges, int64_t draws, double random_share,
                    const std::string& described) {
  int64_t trials = 0;
  for (const hpo::TrialResult& trial : study.trials) trials = std::max(trials, trial.trial_id + 1);
  double halves[2] = {0.0, 0.0};
  for (int64_t id = 0; id < trials; ++id) {
    halves[2 * id < trials ? 0 : 1] += ShareAt(config, study, id, draws, ranges);
  }
  const double expected = halves[0] + halves[1];
  const double random_expected = random_share * static_cast<double>(trials);
  hpo::bench::PrintResult(
      "search_draws",
      {{"within", described},
       {"each_trial", std::to_string(trials)},
       {"draws", std::to_string(draws)},
       {"candidates",
        config.search.candidates_given ? std::to_string(config.search.candidates) : "default"},
       {"expected", hpo::bench::Number(expected, 3)},
       {"first_half", hpo::bench::Number(halves[0], 3)},
       {"second_half", hpo::bench::Number(halves[1], 3)},
       {"random_expected", hpo::bench::Number(random_expected, 3)},
       {"ratio", hpo::bench::Number(expected / random_expected, 3)}},
      true);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    Fail(
        "usage: hpo_bench_search_draws STUDY.h5 [--draws N] [--within NAME=SPEC ...] "
        "[--candidates N] [--each-trial]");
  }
  int64_t draws = 400;
  int64_t candidates = 0;  // 0: the config's
  bool each_trial = false;
  std::vector<Within> ranges;
  std::string described;  // the --within specs, comma-separated
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--each-trial") {
      each_trial = true;
      continue;
    }
    if (i + 1 == argc) Fail(flag + " wants a value");
    if (flag == "--draws") {
      draws = std::atoll(argv[++i]);
    } else if (flag == "--candidates") {
      candidates = std::atoll(argv[++i]);
      if (candidates < 1) Fail("--candidates wants at least 1");
    } else if (flag == "--within") {
      ranges.push_back(ParseWithin(argv[++i]));
      described += (described.empty() ? "" : ",") + std::string(argv[i]);
    } else {
      Fail("unknown flag " + flag);
    }
  }
  if (draws < 1) Fail("--draws wants at least 1");
  if (each_trial && ranges.empty()) Fail("--each-trial wants --within");
  hpo::StudyContents study;
  hpo::Status status = hpo::ReadStudy(argv[1], &study);
  hpo::SweepConfig config;
  if (status.ok()) {
    status = hpo::ParseStoredConfig(study.attributes.config, hpo::BuiltinTaskCatalog(), &config);
  }
  if (!status.ok()) Fail(status.message());
  // A stored config is read without the task's metrics, and Restore refuses a config without
  // the study's: they are the study's own.
  config.metric_names = study.layout.metric_names;
  if (candidates > 0) {
    config.search.candidates = candidates;
    config.search.candidates_given = true;
  }
  const auto first_id = static_cast<int64_t>(study.trials.size()) + 1000;
  const RestoredSweep sweep = Restore(config, study);
  const std::vector<hpo::Assignment> model = Draw(sweep.searcher, first_id, draws);
  bool check = true;
  for (const hpo::ParameterSpec& spec : config.sweep.parameters)
    PrintParameter(spec, model, &check);
  if (ranges.empty()) return check ? 0 : 1;
  hpo::SweepConfig random = config;
  random.sweep.method = hpo::SearchMethod::kRandom;
  std::unique_ptr<hpo::Searcher> prior;
  status = hpo::MakeSearcher(random, &prior);
  if (!status.ok()) Fail(status.message());
  const double model_share = ShareWithin(model, ranges);
  // Random search's share from at least 100,000 draws: it is the yardstick of both lines.
  const double random_share =
      ShareWithin(Draw(prior.get(), first_id, std::max<int64_t>(10 * draws, 100000)), ranges);
  hpo::bench::PrintResult("search_draws",
                          {{"within", described},
                           {"draws", std::to_string(draws)},
                           {"share", hpo::bench::Number(model_share, 3)},
                           {"random_share", hpo::bench::Number(random_share, 3)},
                           {"ratio", hpo::bench::Number(model_share / random_share, 3)}},
                          check);
  if (each_trial) PrintEachTrial(config, study, ranges, draws, random_share, described);
  return check ? 0 : 1;
}
