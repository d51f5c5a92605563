#include "hpo/coordinator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <sstream>

#include "hpo/seeding.hpp"
#include "hpo/task_catalog.hpp"

namespace hpo {

namespace {

std::string FormatDuration(double seconds) {
  const auto total = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  char buffer[32];
  if (total >= 3600) {
    std::snprintf(buffer, sizeof(buffer), "%lldh%02lldm%02llds",
                  static_cast<long long>(total / 3600), static_cast<long long>(total / 60 % 60),
                  static_cast<long long>(total % 60));
  } else if (total >= 60) {
    std::snprintf(buffer, sizeof(buffer), "%lldm%02llds", static_cast<long long>(total / 60),
                  static_cast<long long>(total % 60));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%llds", static_cast<long long>(total));
  }
  return buffer;
}

// Saved states are bytes; study attributes are fixed-length strings, so they are stored as hex.
std::string HexEncode(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * bytes.size());
  for (unsigned char byte : bytes) {
    hex.push_back(kDigits[byte >> 4]);
    hex.push_back(kDigits[byte & 15]);
  }
  return hex;
}

std::string FormatObjective(double value) {
  if (std::isnan(value)) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4f", value);
  return buffer;
}

}  // namespace

Coordinator::Coordinator(const SweepConfig& config, int num_groups, CoordinatorDeps deps)
    : config_(config),
      num_groups_(num_groups),
      deps_(std::move(deps)),
      start_time_(deps_.clock()),
      running_(static_cast<size_t>(num_groups), -1),
      running_params_(static_cast<size_t>(num_groups)) {
  const std::vector<std::string>& metrics = TaskMetricNames(config.execution.task);
  const auto found = std::find(metrics.begin(), metrics.end(), config.sweep.metric.name);
  objective_index_ = static_cast<size_t>(found - metrics.begin());
  planned_trials_ = config.sweep.run_cap.value_or(INT64_MAX);
  if (std::optional<int64_t> space = deps_.searcher->SpaceSize()) {
    planned_trials_ = std::min(planned_trials_, *space);
  }
}

Status Coordinator::Handle(int group, const ControlMessage& message,
                           std::optional<ControlMessage>* reply) {
  reply->reset();
  if (group < 0 || group >= num_groups_) {
    return Status::Failure("control message from unknown group " + std::to_string(group));
  }
  switch (message.kind) {
    case MessageKind::kRequestTrial:
      return HandleRequest(group, reply);
    case MessageKind::kEpochReport:
      return HandleEpochReport(group, message, reply);
    case MessageKind::kTrialResult:
      return HandleResult(group, message.result);
    case MessageKind::kTrial:
    case MessageKind::kNoMoreTrials:
    case MessageKind::kEpochDecision:
      break;
  }
  return Status::Failure("group " + std::to_string(group) +
                         " sent a message only the coordinator sends");
}

Status Coordinator::HandleRequest(int group, std::optional<ControlMessage>* reply) {
  if (running_[group] != -1) {
    return Status::Failure("group " + std::to_string(group) + " asked for a trial while trial " +
                           std::to_string(running_[group]) + " is still running");
  }
  ControlMessage answer;
  std::optional<Assignment> params;
  const std::optional<double>& time_budget = config_.budget.time_budget_s;
  if (time_budget && deps_.clock() - start_time_ >= *time_budget) {
    EndSweep("the time budget of " + FormatDuration(*time_budget) + " is used up");
  }
  if (!search_exhausted_ && end_reason_.empty() && next_trial_id_ < planned_trials_) {
    params = deps_.searcher->Suggest(next_trial_id_);
  }
  if (!params) {
    search_exhausted_ = true;
    answer.kind = MessageKind::kNoMoreTrials;
    ++groups_done_;
  } else {
    answer.kind = MessageKind::kTrial;
    answer.trial.trial_id = next_trial_id_++;
    answer.trial.seed = DeriveSeed(config_.execution.seed, kTrainingPurpose,
                                   static_cast<uint64_t>(answer.trial.trial_id));
    answer.trial.params = std::move(*params);
    running_[group] = answer.trial.trial_id;
    running_params_[group] = answer.trial.params;
  }
  *reply = std::move(answer);
  return Status::Ok();
}

Status Coordinator::HandleEpochReport(int group, const ControlMessage& report,
                                      std::optional<ControlMessage>* reply) {
  const int64_t trial_id = report.trial_id;
  if (trial_id != running_[group]) {
    return Status::Failure("group " + std::to_string(group) + " reported trial " +
                           std::to_string(trial_id) + " it is not running");
  }
  const std::vector<double>& values = report.metrics.values;
  const double objective = objective_index_ < values.size()
                               ? values[objective_index_]
                               : std::numeric_limits<double>::quiet_NaN();
  deps_.searcher->ObserveEpoch(trial_id, running_params_[group], report.metrics.epoch, objective);

  ControlMessage decision;
  decision.kind = MessageKind::kEpochDecision;
  decision.trial_id = trial_id;
  if (target_trial_ >= 0 && target_trial_ != trial_id) {
    decision.keep_going = false;
    stop_reasons_[trial_id] =
        "stopped: the sweep's target was reached by trial " + std::to_string(target_trial_);
  } else if (target_trial_ < 0 && ReachesTarget(objective)) {
    target_trial_ = trial_id;
    EndSweep("trial " + std::to_string(trial_id) + " reached the target " +
             config_.sweep.metric.name + " " + FormatObjective(*config_.sweep.metric.target));
  } else if (deps_.scheduler && target_trial_ != trial_id) {
    SchedulerDecision verdict = deps_.scheduler->OnEpoch(trial_id, report.metrics.epoch, objective);
    if (!verdict.keep_going) {
      decision.keep_going = false;
      stop_reasons_[trial_id] = std::move(verdict.reason);
    }
  }
  *reply = std::move(decision);
  return Status::Ok();
}

Status Coordinator::HandleResult(int group, const TrialResult& received) {
  if (received.trial_id != running_[group]) {
    return Status::Failure("group " + std::to_string(group) + " sent a result for trial " +
                           std::to_string(received.trial_id) + " it was not running");
  }
  running_[group] = -1;
  TrialResult result = received;
  result.group = group;
  result.epochs = static_cast<int64_t>(result.curve.size());
  if (result.status != TrialStatus::kFailed && !result.curve.empty() &&
      objective_index_ < result.curve.back().values.size()) {
    result.objective = result.curve.back().values[objective_index_];
  }
  const auto stop_reason = stop_reasons_.find(result.trial_id);
  if (stop_reason != stop_reasons_.end()) {
    if (result.status == TrialStatus::kStopped) result.message = stop_reason->second;
    stop_reasons_.erase(stop_reason);
  }
  deps_.searcher->Observe(result.trial_id, result.params, result.status, result.objective);
  if (deps_.scheduler) deps_.scheduler->OnTrialEnd(result.trial_id, result.status);
  HPO_RETURN_IF_ERROR(deps_.study->AppendWithAttributes(result, SearchStateAttributes()));
  ++trials_finished_;
  if (result.status == TrialStatus::kFailed) {
    ++trials_failed_;
    const std::optional<int64_t>& allowed = config_.budget.max_failed_trials;
    if (allowed && trials_failed_ > *allowed && !too_many_failures_) {
      too_many_failures_ = true;
      EndSweep(std::to_string(trials_failed_) + " trials failed, more than max_failed_trials (" +
               std::to_string(*allowed) + "); the last failure: " + result.message);
    }
  }
  if (target_trial_ < 0 && result.status == TrialStatus::kCompleted &&
      ReachesTarget(result.objective)) {
    target_trial_ = result.trial_id;
    EndSweep("trial " + std::to_string(result.trial_id) + " reached the target " +
             config_.sweep.metric.name + " " + FormatObjective(*config_.sweep.metric.target));
  }

  const bool has_objective = !std::isnan(result.objective);
  if (has_objective && (!best_ || IsBetter(result.objective, best_->objective))) {
    if (best_ && deps_.artifacts) deps_.artifacts->Discard(best_->trial_id);
    best_ = result;
  } else if (deps_.artifacts) {
    deps_.artifacts->Discard(result.trial_id);
  }
  PrintProgress(result);
  return Status::Ok();
}

std::map<std::string, StudyAttribute> Coordinator::SearchStateAttributes() const {
  std::map<std::string, StudyAttribute> attributes;
  attributes["searcher_state"] = HexEncode(deps_.searcher->SaveState());
  if (deps_.scheduler) attributes["scheduler_state"] = HexEncode(deps_.scheduler->SaveState());
  return attributes;
}

bool Coordinator::ReachesTarget(double objective) const {
  const std::optional<double>& target = config_.sweep.metric.target;
  if (!target || std::isnan(objective)) return false;
  return config_.sweep.metric.goal == Goal::kMaximize ? objective >= *target : objective <= *target;
}

void Coordinator::EndSweep(const std::string& reason) {
  if (!end_reason_.empty()) return;
  end_reason_ = reason;
  if (deps_.progress != nullptr) {
    *deps_.progress << "sweep ending early: " << reason << std::endl;
  }
}

bool Coordinator::IsBetter(double objective, double than) const {
  return config_.sweep.metric.goal == Goal::kMaximize ? objective > than : objective < than;
}

void Coordinator::PrintProgress(const TrialResult& result) const {
  if (deps_.progress == nullptr) return;
  std::ostringstream line;
  line << "trial " << result.trial_id << " |";
  for (const NamedValue& entry : result.params) {
    line << ' ' << entry.name << '=' << FormatParamValue(entry.value);
  }
  line << " | " << config_.sweep.metric.name << ' ' << FormatObjective(result.objective) << " ("
       << TrialStatusName(result.status) << ", " << result.epochs << " ep, "
       << FormatDuration(result.duration_s) << ')';
  if (!result.message.empty()) line << " [" << result.message << ']';
  if (best_) {
    line << " | best " << FormatObjective(best_->objective) << " (trial " << best_->trial_id << ')';
  }
  const double elapsed = deps_.clock() - start_time_;
  const int64_t left = std::max<int64_t>(0, planned_trials_ - trials_finished_);
  line << " | " << trials_finished_ << '/' << planned_trials_ << " done | elapsed "
       << FormatDuration(elapsed);
  if (left > 0) {
    line << ", ~" << FormatDuration(elapsed / static_cast<double>(trials_finished_) * left)
         << " left";
  }
  *deps_.progress << line.str() << std::endl;
}

}  // namespace hpo
