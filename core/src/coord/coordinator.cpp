#include "coord/coordinator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <sstream>

#include "common/bytes.hpp"
#include "common/seeding.hpp"
#include "hpo/task_catalog.hpp"

namespace hpo {

namespace {

// The wall clock a trial's start_time_s is read from: seconds since the Unix epoch.
double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

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

// HexEncode's inverse; false for text that is not hex.
bool HexDecode(const std::string& hex, std::string* bytes) {
  if (hex.size() % 2 != 0) return false;
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  bytes->clear();
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int high = digit(hex[i]);
    const int low = digit(hex[i + 1]);
    if (high < 0 || low < 0) return false;
    bytes->push_back(static_cast<char>(high * 16 + low));
  }
  return true;
}

std::string EncodeTrials(const std::map<int64_t, TrialSpec>& trials) {
  std::vector<uint8_t> bytes;
  ByteWriter writer(&bytes);
  writer.Put<uint64_t>(trials.size());
  for (const auto& [id, trial] : trials) {
    writer.Put(trial.trial_id);
    writer.Put(trial.seed);
    writer.PutAssignment(trial.params);
    writer.Put(trial.attempt);
  }
  return std::string(bytes.begin(), bytes.end());
}

bool DecodeTrials(const std::string& text, std::map<int64_t, TrialSpec>* trials) {
  const std::vector<uint8_t> bytes(text.begin(), text.end());
  ByteReader reader(bytes);
  const uint64_t count = reader.Get<uint64_t>();
  for (uint64_t i = 0; i < count && reader.ok(); ++i) {
    TrialSpec trial;
    trial.trial_id = reader.Get<int64_t>();
    trial.seed = reader.Get<uint64_t>();
    trial.params = reader.GetAssignment();
    trial.attempt = reader.Get<int64_t>();
    (*trials)[trial.trial_id] = std::move(trial);
  }
  return reader.ok() && reader.at_end();
}

// A hex-encoded state attribute of a study, decoded; BadInput naming it when missing or damaged.
Status StateAttribute(const StudyContents& study, const std::string& name, std::string* bytes) {
  const auto found = study.extra_attributes.find(name);
  const std::string* hex =
      found == study.extra_attributes.end() ? nullptr : std::get_if<std::string>(&found->second);
  if (hex == nullptr) return Status::BadInput("the study has no attribute " + name);
  if (!HexDecode(*hex, bytes))
    return Status::BadInput("the study's attribute " + name + " is damaged");
  return Status::Ok();
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
  const std::vector<std::string>& metrics = config.metric_names;
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
      return HandleRequest(group, message.interrupt, reply);
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

Status Coordinator::Restore(const StudyContents& study) {
  std::string state;
  if (!study.trials.empty() || study.extra_attributes.count("searcher_state") != 0) {
    HPO_RETURN_IF_ERROR(StateAttribute(study, "searcher_state", &state));
    HPO_RETURN_IF_ERROR(deps_.searcher->RestoreState(state).WithContext("searcher_state"));
    if (deps_.scheduler) {
      HPO_RETURN_IF_ERROR(StateAttribute(study, "scheduler_state", &state));
      HPO_RETURN_IF_ERROR(deps_.scheduler->RestoreState(state).WithContext("scheduler_state"));
    }
  }
  if (study.extra_attributes.count("running_trials") != 0) {
    HPO_RETURN_IF_ERROR(StateAttribute(study, "running_trials", &state));
    if (!DecodeTrials(state, &unfinished_)) {
      return Status::BadInput("the study's attribute running_trials is damaged");
    }
  }
  for (const TrialResult& trial : study.trials) {
    next_trial_id_ = std::max(next_trial_id_, trial.trial_id + 1);
    unfinished_.erase(trial.trial_id);
    Count(trial);
  }
  for (const auto& [id, trial] : unfinished_) {
    next_trial_id_ = std::max(next_trial_id_, id + 1);
    requeued_.push_back(trial);
  }
  if (deps_.progress != nullptr) {
    *deps_.progress << "resuming the study: " << trials_finished_ << " trials finished, "
                    << requeued_.size() << " to continue from their checkpoints" << std::endl;
  }
  return Status::Ok();
}

void Coordinator::Interrupt(const std::string& reason) {
  if (interrupted_) return;
  interrupted_ = true;
  if (deps_.progress != nullptr) {
    *deps_.progress << "sweep interrupted: " << reason << "; running trials checkpoint and stop"
                    << std::endl;
  }
}

std::optional<TrialSpec> Coordinator::NextTrial() {
  if (!requeued_.empty()) {
    TrialSpec trial = std::move(requeued_.front());
    requeued_.pop_front();
    return trial;
  }
  if (search_exhausted_ || next_trial_id_ >= planned_trials_) {
    return std::nullopt;
  }
  std::optional<Assignment> params = deps_.searcher->Suggest(next_trial_id_);
  if (!params) return std::nullopt;
  TrialSpec trial;
  trial.trial_id = next_trial_id_++;
  trial.seed =
      DeriveSeed(config_.execution.seed, kTrainingPurpose, static_cast<uint64_t>(trial.trial_id));
  trial.params = std::move(*params);
  return trial;
}

Status Coordinator::HandleRequest(int group, bool interrupt, std::optional<ControlMessage>* reply) {
  if (running_[group] != -1) {
    return Status::Failure("group " + std::to_string(group) + " asked for a trial while trial " +
                           std::to_string(running_[group]) + " is still running");
  }
  if (interrupt) Interrupt("group " + std::to_string(group) + " received a preemption signal");
  ControlMessage answer;
  const std::optional<double>& time_budget = config_.budget.time_budget_s;
  if (time_budget && deps_.clock() - start_time_ >= *time_budget) {
    EndSweep("the time budget of " + FormatDuration(*time_budget) + " is used up");
  }
  std::optional<TrialSpec> trial;
  if (!interrupted_ && end_reason_.empty()) trial = NextTrial();
  if (!trial) {
    if (requeued_.empty()) search_exhausted_ = true;
    answer.kind = MessageKind::kNoMoreTrials;
    ++groups_done_;
    *reply = std::move(answer);
    return Status::Ok();
  }
  running_[group] = trial->trial_id;
  running_params_[group] = trial->params;
  unfinished_[trial->trial_id] = *trial;
  dispatched_at_[trial->trial_id] = UnixSeconds();
  answer.kind = MessageKind::kTrial;
  answer.trial = std::move(*trial);
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
  if (interrupted_) {
    decision.keep_going = false;
    decision.interrupt = true;
  } else if (target_trial_ >= 0 && target_trial_ != trial_id) {
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
  TrialSpec& spec = unfinished_.at(received.trial_id);
  if (received.status == TrialStatus::kRunning) {
    Interrupt("group " + std::to_string(group) + " received a preemption signal");
    if (deps_.progress != nullptr) {
      *deps_.progress << "trial " << received.trial_id << " " << received.message
                      << "; it continues on resume" << std::endl;
    }
    return PublishState();
  }
  if (received.status == TrialStatus::kFailed && spec.attempt < config_.budget.trial_retries) {
    ++spec.attempt;
    spec.seed =
        DeriveSeed(config_.execution.seed, kTrainingPurpose + static_cast<uint64_t>(spec.attempt),
                   static_cast<uint64_t>(spec.trial_id));
    if (deps_.progress != nullptr) {
      *deps_.progress << "trial " << spec.trial_id << " failed (" << received.message << "); retry "
                      << spec.attempt << " of " << config_.budget.trial_retries
                      << " with a new seed" << std::endl;
    }
    if (deps_.artifacts) deps_.artifacts->DiscardCheckpoint(spec.trial_id);
    requeued_.push_front(spec);
    return PublishState();
  }
  const int64_t attempts = spec.attempt;
  unfinished_.erase(received.trial_id);
  TrialResult result = received;
  result.group = group;
  if (const auto dispatched = dispatched_at_.find(result.trial_id);
      dispatched != dispatched_at_.end()) {
    result.start_time_s = dispatched->second;
    dispatched_at_.erase(dispatched);
  }
  result.epochs = static_cast<int64_t>(result.curve.size());
  if (result.status != TrialStatus::kFailed && !result.curve.empty() &&
      objective_index_ < result.curve.back().values.size()) {
    result.objective = result.curve.back().values[objective_index_];
  }
  if (result.status == TrialStatus::kFailed && attempts > 0) {
    result.message += " (after " + std::to_string(attempts) + " retries)";
  }
  const auto stop_reason = stop_reasons_.find(result.trial_id);
  if (stop_reason != stop_reasons_.end()) {
    if (result.status == TrialStatus::kStopped) result.message = stop_reason->second;
    stop_reasons_.erase(stop_reason);
  }
  deps_.searcher->Observe(result.trial_id, result.params, result.status, result.objective);
  if (deps_.scheduler) deps_.scheduler->OnTrialEnd(result.trial_id, result.status);
  HPO_RETURN_IF_ERROR(deps_.study->Stage(result));
  if (unpublished_.empty()) first_unpublished_at_ = deps_.clock();
  unpublished_.push_back(result.trial_id);
  const std::optional<TrialResult> previous_best = best_;
  Count(result);
  const bool new_best = best_ && best_->trial_id == result.trial_id;
  if (new_best && previous_best) weights_to_discard_.push_back(previous_best->trial_id);
  if (!new_best) weights_to_discard_.push_back(result.trial_id);
  PrintProgress(result);
  return Status::Ok();
}

Status Coordinator::PublishIfDue(bool idle) {
  if (unpublished_.empty()) return Status::Ok();
  const double now = deps_.clock();
  if (now < next_publish_at_) return Status::Ok();
  if (!idle && now - first_unpublished_at_ < kLongestDeferralSeconds) return Status::Ok();
  return PublishState();
}

Status Coordinator::Publish() { return unpublished_.empty() ? Status::Ok() : PublishState(); }

Status Coordinator::PublishState() {
  const double began = deps_.clock();
  HPO_RETURN_IF_ERROR(deps_.study->Publish(SweepStateAttributes()));
  const double ended = deps_.clock();
  next_publish_at_ = ended + kPublishSpacing * std::max(0.0, ended - began);
  if (deps_.artifacts) {
    for (const int64_t trial_id : unpublished_) deps_.artifacts->DiscardCheckpoint(trial_id);
    for (const int64_t trial_id : weights_to_discard_) deps_.artifacts->Discard(trial_id);
  }
  unpublished_.clear();
  weights_to_discard_.clear();
  return Status::Ok();
}

void Coordinator::Count(const TrialResult& result) {
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
  if (!std::isnan(result.objective) && (!best_ || IsBetter(result.objective, best_->objective))) {
    best_ = result;
  }
}

std::map<std::string, StudyAttribute> Coordinator::SweepStateAttributes() const {
  std::map<std::string, StudyAttribute> attributes;
  attributes["searcher_state"] = HexEncode(deps_.searcher->SaveState());
  if (deps_.scheduler) attributes["scheduler_state"] = HexEncode(deps_.scheduler->SaveState());
  attributes["running_trials"] = HexEncode(EncodeTrials(unfinished_));
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
