#include "hpo/coordinator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
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
      running_(static_cast<size_t>(num_groups), -1) {
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
    case MessageKind::kEpochReport: {
      if (message.trial_id != running_[group]) {
        return Status::Failure("group " + std::to_string(group) + " reported trial " +
                               std::to_string(message.trial_id) + " it is not running");
      }
      ControlMessage decision;
      decision.kind = MessageKind::kEpochDecision;
      decision.trial_id = message.trial_id;
      decision.keep_going = true;
      *reply = std::move(decision);
      return Status::Ok();
    }
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
  if (!search_exhausted_ && next_trial_id_ < planned_trials_) {
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
  }
  *reply = std::move(answer);
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
  HPO_RETURN_IF_ERROR(deps_.study->Append(result));
  deps_.searcher->Observe(result.trial_id, result.params, result.status, result.objective);
  ++trials_finished_;

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
