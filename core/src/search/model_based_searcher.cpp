#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "conditions.hpp"
#include "searchers.hpp"

namespace hpo {

ModelBasedSearcher::ModelBasedSearcher(const SweepConfig& config, std::string state_tag,
                                       std::string model, std::string display_name)
    : seed_(config.execution.seed),
      startup_trials_(config.search.startup_trials),
      objectives_(config.sweep.objectives.size() > 1 ? config.sweep.objectives
                                                     : std::vector<MetricSpec>()),
      state_tag_(std::move(state_tag)),
      model_(std::move(model)),
      display_name_(std::move(display_name)),
      sobol_startup_(config.search.sampler == RandomSampler::kSobol),
      startup_design_(config.sweep.parameters, config.execution.seed, config.search.sampler),
      history_(config.sweep.parameters, ModelDimensionsOf(config.sweep.parameters), GoalsOf(config),
               config.search.startup_trials, DataRuleOf(config), config.execution.epochs,
               config.execution.seed) {}

std::vector<Goal> ModelBasedSearcher::GoalsOf(const SweepConfig& config) {
  if (config.sweep.objectives.size() < 2) return {config.sweep.metric.goal};
  std::vector<Goal> goals;
  for (const MetricSpec& objective : config.sweep.objectives) goals.push_back(objective.goal);
  return goals;
}

TrialHistory::DataRule ModelBasedSearcher::DataRuleOf(const SweepConfig& config) {
  if (PredictsCurves(config.search.model)) return TrialHistory::DataRule::kPredictedFinals;
  return config.sweep.early_terminate.enabled ? TrialHistory::DataRule::kFidelity
                                              : TrialHistory::DataRule::kFinalObjectives;
}

Status ModelBasedSearcher::CheckStartupTrials(const SweepConfig& config) {
  if (config.search.startup_trials < 0) {
    return Status::BadInput("search.startup_trials must not be negative, got " +
                            std::to_string(config.search.startup_trials));
  }
  return Status::Ok();
}

std::string ModelBasedSearcher::Fingerprint() const {
  // "+sobol" only with the Sobol start-up, so that a study begun with random start-up trials (the
  // default before 2026-11-29) is told apart and its resume refused with the key to add.
  std::string fingerprint = "bayes/" + model_ + (sobol_startup_ ? "+sobol" : "");
  // "+parego(...)" only with several objectives, so single-objective studies keep theirs.
  if (!objectives_.empty()) {
    std::string names;
    for (const MetricSpec& objective : objectives_) {
      names += (names.empty() ? "" : " ") + objective.name + ":" + GoalName(objective.goal);
    }
    fingerprint += "+parego(" + names + ")";
  }
  for (const ParameterSpec& parameter : history_.parameters()) {
    fingerprint += " " + parameter.name + ":" + DistributionName(parameter.distribution);
  }
  return fingerprint + ConditionsFingerprint(history_.parameters());
}

std::optional<Assignment> ModelBasedSearcher::Suggest(int64_t trial_id) {
  const SuggestionComputation computation = StartSuggestion(trial_id);
  return FinishSuggestion(trial_id, computation ? computation() : std::nullopt);
}

Searcher::SuggestionComputation ModelBasedSearcher::StartSuggestion(int64_t trial_id) {
  std::vector<DataPoint> observed;
  std::vector<DataPoint> pending;
  // An earlier study's trials (warm start) stand in for as many start-up trials.
  if (trial_id < 0 || trial_id < startup_trials_ - history_.prior_trials() ||
      !history_.CollectData(trial_id, &observed, &pending)) {
    return {};
  }
  // The data points point into the history, which later calls change: copy their coordinates.
  struct Snapshot {
    std::vector<DataPoint> observed;
    std::vector<DataPoint> pending;
    std::vector<std::vector<double>> coordinates;
  };
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->coordinates.reserve(observed.size() + pending.size());
  for (std::vector<DataPoint>* points : {&observed, &pending}) {
    for (DataPoint& point : *points) {
      snapshot->coordinates.push_back(*point.coordinates);
      point.coordinates = &snapshot->coordinates.back();
    }
  }
  snapshot->observed = std::move(observed);
  snapshot->pending = std::move(pending);
  return [this, trial_id, snapshot]() {
    return ModelSuggestion(trial_id, snapshot->observed, snapshot->pending);
  };
}

std::optional<Assignment> ModelBasedSearcher::FinishSuggestion(int64_t trial_id,
                                                               std::optional<Assignment> computed) {
  if (trial_id < 0) return std::nullopt;
  std::optional<Assignment> params = std::move(computed);
  if (!params) params = startup_design_.TrialAt(trial_id);
  params = DropInactive(history_.parameters(), std::move(*params));
  history_.RecordSuggestion(trial_id, *params);
  return params;
}

void ModelBasedSearcher::Observe(int64_t trial_id, const Assignment& params, TrialStatus status,
                                 double objective) {
  history_.RecordResult(trial_id, params, status, objective);
}

void ModelBasedSearcher::ObserveObjectives(int64_t trial_id, const Assignment& params,
                                           TrialStatus status,
                                           const std::vector<double>& objectives) {
  const double primary =
      objectives.empty() ? std::numeric_limits<double>::quiet_NaN() : objectives.front();
  const std::vector<double> further =
      objectives.size() > 1 ? std::vector<double>(objectives.begin() + 1, objectives.end())
                            : std::vector<double>();
  history_.RecordResult(trial_id, params, status, primary, further);
}

void ModelBasedSearcher::ObserveEpoch(int64_t trial_id, const Assignment& params, int64_t epoch,
                                      double objective) {
  history_.RecordEpoch(trial_id, params, epoch, objective);
}

void ModelBasedSearcher::ObservePending(int64_t trial_id, const Assignment& params) {
  history_.RecordSuggestion(trial_id, params);
}

std::string ModelBasedSearcher::ConfigFingerprint() const {
  return state_tag_ + " " + Fingerprint();
}

std::string ModelBasedSearcher::SaveState() const {
  return history_.Save(state_tag_, Fingerprint());
}

Status ModelBasedSearcher::RestoreState(const std::string& state) {
  return history_.Restore(state, state_tag_, Fingerprint(), display_name_);
}

}  // namespace hpo
