#include "coord/warm_start.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include "common/count_text.hpp"
#include "common/list_text.hpp"
#include "search/conditions.hpp"
#include "search/sampling.hpp"

namespace hpo {

namespace {

namespace fs = std::filesystem;

// "FILE:LINE: warm_start: WHAT", as every config error reads.
Status WarmStartEntryError(const SweepConfig& config, const WarmStartStudy& entry,
                           const std::string& what) {
  return Status::BadInput(config.path + ":" + std::to_string(entry.line) + ": warm_start: " + what);
}

bool IsSameFile(const std::string& a, const std::string& b) {
  std::error_code error;
  return fs::exists(b, error) && fs::equivalent(a, b, error);
}

// Why trials were left out, counted, for the summary line ("3 failed, 2 outside the space").
class WarmStartOmissions {
 public:
  void Count(const std::string& why) { ++counts_[why]; }
  std::string Text() const {
    std::string text;
    for (const auto& [why, count] : counts_) {
      text += (text.empty() ? "" : ", ") + std::to_string(count) + " " + why;
    }
    return text;
  }

 private:
  std::map<std::string, int64_t> counts_;
};

}  // namespace

bool MapPriorTrial(const SweepConfig& config, const TrialResult& trial, size_t metric_index,
                   bool same_epochs, PriorTrial* prior, std::string* why) {
  if (trial.status == TrialStatus::kFailed) {
    *why = "failed";
    return false;
  }
  if (!std::isfinite(trial.objective)) {
    *why = "without a value";
    return false;
  }
  const std::vector<ParameterSpec>& parameters = config.sweep.parameters;
  PriorTrial mapped;
  for (const ParameterSpec& spec : parameters) {
    const ParamValue* value = FindParam(trial.params, spec.name);
    if (value == nullptr) {
      // A conditional parameter may be absent; whether it must be present is known below.
      if (spec.distribution == Distribution::kConstant) {
        mapped.params.push_back({spec.name, spec.values.front()});
      }
      continue;
    }
    std::optional<ParamValue> in_space = ValueInSpace(spec, *value);
    if (!in_space) {
      *why = "outside the space (" + spec.name + ")";
      return false;
    }
    mapped.params.push_back({spec.name, std::move(*in_space)});
  }
  // Parameters this sweep's conditions leave out are dropped; every other one must be there.
  mapped.params = DropInactive(parameters, std::move(mapped.params));
  const std::vector<bool> active = ActiveParameters(parameters, mapped.params);
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (active[i] && FindParam(mapped.params, parameters[i].name) == nullptr) {
      mapped.missing.push_back(parameters[i].name);
    }
  }
  mapped.status =
      trial.status == TrialStatus::kCompleted ? TrialStatus::kCompleted : TrialStatus::kStopped;
  mapped.objective = trial.objective;
  for (const EpochMetrics& epoch : trial.curve) {
    if (metric_index < epoch.values.size()) {
      mapped.reports[epoch.epoch] = epoch.values[metric_index];
    }
  }
  mapped.same_epochs = same_epochs;
  *prior = std::move(mapped);
  return true;
}

Status LoadWarmStart(const SweepConfig& config, const TaskCatalog& catalog,
                     const std::string& own_study, WarmStart* warm_start) {
  WarmStart loaded;
  for (const WarmStartStudy& entry : config.warm_start) {
    const std::string path = StudyPathOf(entry.path);
    if (IsSameFile(path, own_study)) {
      return WarmStartEntryError(
          config, entry, path + " is this sweep's own study; continue it with --resume instead");
    }
    StudyContents study;
    const Status read = ReadStudy(path, &study);
    if (!read.ok()) return WarmStartEntryError(config, entry, read.message());
    const std::string goal = GoalName(config.sweep.metric.goal);
    if (study.attributes.metric_name != config.sweep.metric.name ||
        study.attributes.metric_goal != goal) {
      return WarmStartEntryError(config, entry,
                                 path + ": its metric is " + study.attributes.metric_name + " (" +
                                     study.attributes.metric_goal + "), this sweep's " +
                                     config.sweep.metric.name + " (" + goal + ")");
    }
    const auto& names = study.layout.metric_names;
    const size_t metric_index =
        std::find(names.begin(), names.end(), config.sweep.metric.name) - names.begin();
    // Its epochs per trial, from the config it stores; a config this build cannot read (a study
    // from another version) only leaves the scheduler unseeded.
    SweepConfig earlier;
    const bool same_epochs = ParseStoredConfig(study.attributes.config, catalog, &earlier).ok() &&
                             earlier.execution.epochs == config.execution.epochs;
    WarmStartOmissions omitted;
    WarmStartOmissions partial;  // used, lacking parameters of this sweep
    int64_t used = 0;
    for (const TrialResult& trial : study.trials) {
      PriorTrial prior;
      std::string why;
      if (!MapPriorTrial(config, trial, metric_index, same_epochs, &prior, &why)) {
        omitted.Count(why);
        continue;
      }
      if (!prior.missing.empty()) partial.Count("without " + Join(prior.missing));
      loaded.trials.push_back(std::move(prior));
      ++used;
    }
    const int64_t rows = static_cast<int64_t>(study.trials.size());
    std::string line =
        "warm start: " + std::to_string(used) + " of " + CountOf(rows, "trial") + " of " + path;
    if (!omitted.Text().empty()) line += " (not used: " + omitted.Text() + ")";
    if (!partial.Text().empty()) {
      line += " (used for the parameters they have: " + partial.Text() + ")";
    }
    const bool stopping = config.sweep.early_terminate.enabled || config.median_stopping.enabled ||
                          PredictsCurves(config.search.model);
    if (!stopping) {
      line += "; they seed the search";
    } else {
      line += same_epochs ? "; they seed the search and early stopping"
                          : "; they seed the search, not early stopping (other epochs per trial)";
    }
    loaded.summary.push_back(line);
    // Stored in the study and compared on resume: its words stay as studies have them.
    loaded.fingerprint += (loaded.fingerprint.empty() ? "" : "; ") + path + ": " +
                          std::to_string(rows) + " trials, " + std::to_string(used) + " used";
  }
  *warm_start = std::move(loaded);
  return Status::Ok();
}

}  // namespace hpo
