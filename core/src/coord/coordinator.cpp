#include "coord/coordinator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/bytes.hpp"
#include "common/count_text.hpp"
#include "common/diagnostic.hpp"
#include "common/duration_text.hpp"
#include "common/list_text.hpp"
#include "common/seeding.hpp"
#include "hpo/param.hpp"
#include "hpo/task_catalog.hpp"

namespace hpo {

namespace {

// The trials a sweep may run: run_cap, bounded by the search space's size when finite.
int64_t CoordinatorTrialCap(const SweepConfig& config, std::optional<int64_t> space) {
  const int64_t cap = config.sweep.run_cap.value_or(INT64_MAX);
  return space ? std::min(cap, *space) : cap;
}

// The population of a PBT sweep: its first `population` trials, within the cap.
PbtPopulation CoordinatorPopulation(const SweepConfig& config, std::optional<int64_t> space) {
  const int64_t initial =
      std::min<int64_t>(config.pbt.population, CoordinatorTrialCap(config, space));
  return PbtPopulation(config.pbt, config.sweep.parameters, config.sweep.metric.goal,
                       config.sweep.metric.name, config.execution.epochs, config.execution.seed,
                       initial);
}

}  // namespace

int64_t PlannedTrialCount(const SweepConfig& config, std::optional<int64_t> space) {
  return config.pbt.enabled ? CoordinatorPopulation(config, space).PlannedTrials()
                            : CoordinatorTrialCap(config, space);
}

namespace {

// The wall clock a trial's start_time_s is read from: seconds since the Unix epoch.
double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
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

using EpochReports = std::map<int64_t, std::map<int64_t, double>>;

// running_trials: the count, each trial (id, seed, params, attempt), then (since the searcher's
// state is rebuilt from the study) each trial's epoch reports: their count, (epoch, objective)s.
std::string EncodeTrials(const std::map<int64_t, TrialSpec>& trials, const EpochReports& reports) {
  std::vector<uint8_t> bytes;
  ByteWriter writer(&bytes);
  writer.Put<uint64_t>(trials.size());
  for (const auto& [id, trial] : trials) {
    writer.Put(trial.trial_id);
    writer.Put(trial.seed);
    writer.PutAssignment(trial.params);
    writer.Put(trial.attempt);
  }
  for (const auto& [id, trial] : trials) {
    const auto found = reports.find(id);
    writer.Put<uint64_t>(found == reports.end() ? 0 : found->second.size());
    if (found == reports.end()) continue;
    for (const auto& [epoch, objective] : found->second) {
      writer.Put(epoch);
      writer.Put(objective);
    }
  }
  return std::string(bytes.begin(), bytes.end());
}

// EncodeTrials' inverse; also reads the layout without reports (studies written before them).
bool DecodeTrials(const std::string& text, std::map<int64_t, TrialSpec>* trials,
                  EpochReports* reports) {
  const std::vector<uint8_t> bytes(text.begin(), text.end());
  ByteReader reader(bytes);
  const uint64_t count = reader.Get<uint64_t>();
  std::vector<int64_t> ids;
  for (uint64_t i = 0; i < count && reader.ok(); ++i) {
    TrialSpec trial;
    trial.trial_id = reader.Get<int64_t>();
    trial.seed = reader.Get<uint64_t>();
    trial.params = reader.GetAssignment();
    trial.attempt = reader.Get<int64_t>();
    ids.push_back(trial.trial_id);
    (*trials)[trial.trial_id] = std::move(trial);
  }
  for (size_t i = 0; i < ids.size() && reader.ok() && !reader.at_end(); ++i) {
    const uint64_t epochs = reader.Get<uint64_t>();
    for (uint64_t e = 0; e < epochs && reader.ok(); ++e) {
      const int64_t epoch = reader.Get<int64_t>();
      (*reports)[ids[i]][epoch] = reader.Get<double>();
    }
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

// Runs a suggestion's computation on the worker thread at a lower scheduling priority (nice 10),
// so that on a busy node the coordinator's message loop, and rank 0's own training, come first.
std::optional<Assignment> ComputeAtLowPriority(const Searcher::SuggestionComputation& computation) {
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
  return computation();
}

// A trial's message on one progress line: a command trial's failure holds its program's stderr
// tail, one line each; the line shows the first (the reason) and the last (the exception).
std::string OneLine(const std::string& message) {
  const size_t first_end = message.find('\n');
  if (first_end == std::string::npos) return message;
  const size_t last_end = message.find_last_not_of('\n');
  const size_t last_start = message.rfind('\n', last_end) + 1;
  if (last_start <= first_end) return message.substr(0, first_end);
  return message.substr(0, first_end) + " ... " +
         message.substr(last_start, last_end - last_start + 1);
}

// pbt_parents: the count, then each trial's (id, parent_trial, parent_epoch).
std::string EncodePbtParents(const std::map<int64_t, TrialSpec>& trials) {
  std::vector<uint8_t> bytes;
  ByteWriter writer(&bytes);
  uint64_t count = 0;
  for (const auto& [id, trial] : trials) count += trial.parent_trial >= 0 ? 1 : 0;
  writer.Put<uint64_t>(count);
  for (const auto& [id, trial] : trials) {
    if (trial.parent_trial < 0) continue;
    writer.Put(id);
    writer.Put(trial.parent_trial);
    writer.Put(trial.parent_epoch);
  }
  return std::string(bytes.begin(), bytes.end());
}

// EncodePbtParents' inverse, applied to the trials of `trials` it names; false when damaged.
bool ApplyPbtParents(const std::string& text, std::map<int64_t, TrialSpec>* trials) {
  const std::vector<uint8_t> bytes(text.begin(), text.end());
  ByteReader reader(bytes);
  const uint64_t count = reader.Get<uint64_t>();
  for (uint64_t i = 0; i < count && reader.ok(); ++i) {
    const int64_t id = reader.Get<int64_t>();
    const int64_t parent = reader.Get<int64_t>();
    const int64_t epoch = reader.Get<int64_t>();
    const auto found = trials->find(id);
    if (found == trials->end()) continue;
    found->second.parent_trial = parent;
    found->second.parent_epoch = epoch;
  }
  return reader.ok() && reader.at_end();
}

// A member that population-based training replaced: its row is never the best trial (it kept
// no final weights to evaluate).
bool ReplacedByPbt(const TrialResult& trial) {
  return trial.status == TrialStatus::kStopped &&
         trial.message.rfind("stopped by population-based training", 0) == 0;
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
  for (size_t j = 1; j < config.sweep.objectives.size(); ++j) {
    const std::string& name = config.sweep.objectives[j].name;
    further_indices_.push_back(
        static_cast<size_t>(std::find(metrics.begin(), metrics.end(), name) - metrics.begin()));
  }
  const std::optional<int64_t> space = deps_.searcher->SpaceSize();
  if (config.pbt.enabled) {
    pbt_ = std::make_unique<PbtPopulation>(CoordinatorPopulation(config, space));
  }
  planned_trials_ = pbt_ ? pbt_->PlannedTrials() : CoordinatorTrialCap(config, space);
  int64_t prior_id = -1;
  for (const PriorTrial& prior : deps_.warm_start.trials) {
    for (const auto& [epoch, objective] : prior.reports) {
      deps_.searcher->ObserveEpoch(prior_id, prior.params, epoch, objective);
    }
    deps_.searcher->Observe(prior_id, prior.params, prior.status, prior.objective);
    if (deps_.scheduler && prior.same_epochs) {
      deps_.scheduler->ReplayTrial(prior_id, prior.reports, prior.status);
    }
    --prior_id;
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
    case MessageKind::kEpochReport: {
      Status handled = HandleEpochReport(group, message, reply);
      if (handled.ok()) RecordReport(message);
      return handled;
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

Status Coordinator::Restore(const StudyContents& study) {
  // The objective is found among the config's metrics: with other metrics every report would
  // replay as NaN (a study's stored config, read without its task, has none).
  if (!study.layout.metric_names.empty() && study.layout.metric_names != config_.metric_names) {
    return Status::BadInput("the study's metrics (" + Join(study.layout.metric_names) +
                            ") are not this sweep's (" + Join(config_.metric_names) + ")");
  }
  // A study written before fingerprints (it has searcher_state and no searcher_fingerprint)
  // restores the saved states instead of replaying.
  const bool saved_states = study.extra_attributes.count("searcher_state") != 0 &&
                            study.extra_attributes.count("searcher_fingerprint") == 0;
  HPO_RETURN_IF_ERROR(saved_states ? RestoreSavedStates(study) : CheckFingerprints(study));
  HPO_RETURN_IF_ERROR(CheckWarmStartUnchanged(study));
  std::map<int64_t, TrialSpec> paused_retries;
  HPO_RETURN_IF_ERROR(ReadUnfinishedTrials(study, &paused_retries));
  RestoreFinishedAndPaused(study, paused_retries);
  if (!saved_states) Replay(study);
  for (const auto& [id, trial] : unfinished_) next_trial_id_ = std::max(next_trial_id_, id + 1);
  HPO_RETURN_IF_ERROR(ReplayPopulation(study));
  for (const auto& [id, trial] : unfinished_) requeued_.push_back(trial);
  HPO_RETURN_IF_ERROR(RunGeneration(/*force=*/false));
  ran_before_this_run_ = trials_finished_ + static_cast<int64_t>(paused_.size());
  if (deps_.progress != nullptr) {
    *deps_.progress << "resuming the study: " << CountOf(trials_finished_, "trial") << " finished, "
                    << ToContinueFromCheckpoints(requeued_.size());
    if (!paused_.empty()) *deps_.progress << ", " << paused_.size() << " paused";
    *deps_.progress << std::endl;
  }
  return Status::Ok();
}

Status Coordinator::RestoreSavedStates(const StudyContents& study) {
  std::string state;
  HPO_RETURN_IF_ERROR(StateAttribute(study, "searcher_state", &state));
  HPO_RETURN_IF_ERROR(deps_.searcher->RestoreState(state).WithContext("searcher_state"));
  if (deps_.scheduler) {
    HPO_RETURN_IF_ERROR(StateAttribute(study, "scheduler_state", &state));
    HPO_RETURN_IF_ERROR(deps_.scheduler->RestoreState(state).WithContext("scheduler_state"));
  }
  return Status::Ok();
}

Status Coordinator::CheckFingerprints(const StudyContents& study) const {
  if (study.trials.empty() && study.extra_attributes.count("searcher_fingerprint") == 0) {
    return Status::Ok();
  }
  std::string state;
  HPO_RETURN_IF_ERROR(StateAttribute(study, "searcher_fingerprint", &state));
  if (state != deps_.searcher->ConfigFingerprint()) {
    return Status::BadInput("the study was written by another search (searcher_fingerprint '" +
                            state + "', this sweep's '" + deps_.searcher->ConfigFingerprint() +
                            "')");
  }
  if (deps_.scheduler) {
    HPO_RETURN_IF_ERROR(StateAttribute(study, "scheduler_fingerprint", &state));
    if (state != deps_.scheduler->ConfigFingerprint()) {
      return Status::BadInput(
          "the study was written with other early stopping settings (ASHA rungs, eta and "
          "strict, median rule min_trials and start_step, goal): its scheduler_fingerprint "
          "differs from this sweep's");
    }
  }
  return Status::Ok();
}

Status Coordinator::CheckWarmStartUnchanged(const StudyContents& study) const {
  const auto found = study.extra_attributes.find("warm_start");
  if (found == study.extra_attributes.end()) return Status::Ok();
  const std::string* then = std::get_if<std::string>(&found->second);
  if (then == nullptr || *then != deps_.warm_start.fingerprint) {
    return Status::BadInput("the warm_start studies changed since this study began (then: " +
                            (then ? *then : std::string("damaged")) +
                            "; now: " + deps_.warm_start.fingerprint + ")");
  }
  return Status::Ok();
}

Status Coordinator::ReadUnfinishedTrials(const StudyContents& study,
                                         std::map<int64_t, TrialSpec>* paused_retries) {
  const auto has = [&](const char* name) { return study.extra_attributes.count(name) != 0; };
  std::string state;
  HPO_RETURN_IF_ERROR(ReadRunningTrials(study, &unfinished_, &reports_));
  if (has("pbt_parents")) {
    HPO_RETURN_IF_ERROR(StateAttribute(study, "pbt_parents", &state));
    if (!ApplyPbtParents(state, &unfinished_)) {
      return Status::BadInput("the study's attribute pbt_parents is damaged");
    }
  }
  if (has("paused_retries")) {
    EpochReports none;
    HPO_RETURN_IF_ERROR(StateAttribute(study, "paused_retries", &state));
    if (!DecodeTrials(state, paused_retries, &none)) {
      return Status::BadInput("the study's attribute paused_retries is damaged");
    }
  }
  return Status::Ok();
}

void Coordinator::RestoreFinishedAndPaused(const StudyContents& study,
                                           const std::map<int64_t, TrialSpec>& paused_retries) {
  for (const TrialResult& trial : study.trials) {
    next_trial_id_ = std::max(next_trial_id_, trial.trial_id + 1);
    if (trial.status == TrialStatus::kPaused) {
      staged_epochs_[trial.trial_id] = trial.curve.empty() ? 0 : trial.curve.back().epoch;
      // Promoted since (running again) when it is among the running trials; paused otherwise.
      if (unfinished_.count(trial.trial_id) == 0) {
        const auto retried = paused_retries.find(trial.trial_id);
        paused_[trial.trial_id] = retried != paused_retries.end()
                                      ? retried->second
                                      : NewTrial(trial.trial_id, trial.params);
        paused_[trial.trial_id].parent_trial = trial.parent_trial;
        paused_[trial.trial_id].parent_epoch = trial.parent_epoch;
        paused_runs_[trial.trial_id] = {trial.start_time_s, trial.duration_s, trial.group};
      }
      continue;
    }
    paused_.erase(trial.trial_id);
    paused_runs_.erase(trial.trial_id);
    staged_epochs_.erase(trial.trial_id);
    unfinished_.erase(trial.trial_id);
    reports_.erase(trial.trial_id);
    const std::optional<TrialResult> previous_best = best_;
    Count(trial);
    if (ReplacedByPbt(trial)) best_ = previous_best;
  }
}

void Coordinator::Replay(const StudyContents& study) {
  std::map<int64_t, std::map<int64_t, double>> paused_reports;  // of promoted trials, running now
  for (const TrialResult& trial : study.trials) {
    std::map<int64_t, double> reports;
    for (const EpochMetrics& epoch : trial.curve) {
      reports[epoch.epoch] = objective_index_ < epoch.values.size()
                                 ? epoch.values[objective_index_]
                                 : std::numeric_limits<double>::quiet_NaN();
    }
    if (unfinished_.count(trial.trial_id) != 0) {  // a paused row; the trial was promoted since
      paused_reports[trial.trial_id] = std::move(reports);
      continue;
    }
    for (const auto& [epoch, objective] : reports) {
      deps_.searcher->ObserveEpoch(trial.trial_id, trial.params, epoch, objective);
    }
    if (trial.status == TrialStatus::kPaused) {
      deps_.searcher->ObservePending(trial.trial_id, trial.params);
    } else {
      deps_.searcher->ObserveObjectives(trial.trial_id, trial.params, trial.status,
                                        AllObjectives(trial));
    }
    if (deps_.scheduler) deps_.scheduler->ReplayTrial(trial.trial_id, reports, trial.status);
  }
  for (const auto& [id, trial] : unfinished_) {
    deps_.searcher->ObservePending(id, trial.params);
    std::map<int64_t, double> reports = std::move(paused_reports[id]);
    const auto found = reports_.find(id);
    if (found != reports_.end()) {
      for (const auto& [epoch, objective] : found->second) reports[epoch] = objective;
    }
    for (const auto& [epoch, objective] : reports) {
      deps_.searcher->ObserveEpoch(id, trial.params, epoch, objective);
    }
    if (deps_.scheduler) deps_.scheduler->ReplayTrial(id, reports, TrialStatus::kRunning);
  }
}

Status Coordinator::ReplayPopulation(const StudyContents& study) {
  if (!pbt_) return Status::Ok();
  const auto join = [this](int64_t id, const Assignment& params, int64_t parent, int64_t epoch) {
    pbt_->Join(id, params, parent >= 0 ? epoch : 0);
  };
  for (const TrialResult& trial : study.trials) {
    join(trial.trial_id, trial.params, trial.parent_trial, trial.parent_epoch);
  }
  for (const auto& [id, trial] : unfinished_) {
    join(id, trial.params, trial.parent_trial, trial.parent_epoch);
  }
  std::map<int64_t, std::map<int64_t, double>> reports = reports_;
  for (const TrialResult& trial : study.trials) {
    std::map<int64_t, double>& own = reports[trial.trial_id];
    for (const EpochMetrics& epoch : trial.curve) {
      own.emplace(epoch.epoch, objective_index_ < epoch.values.size()
                                   ? epoch.values[objective_index_]
                                   : std::numeric_limits<double>::quiet_NaN());
    }
  }
  for (const auto& [id, own] : reports) {
    for (const auto& [epoch, objective] : own) pbt_->OnEpoch(id, epoch, objective);
  }
  for (const TrialResult& trial : study.trials) {
    if (trial.status != TrialStatus::kPaused && unfinished_.count(trial.trial_id) == 0) {
      pbt_->Leave(trial.trial_id);
    }
  }
  // Running trials that had reported a boundary whose generation was not decided pause there.
  std::vector<int64_t> running;
  for (const auto& [id, trial] : unfinished_) running.push_back(id);
  for (const int64_t id : running) {
    if (!pbt_->Resumed(id)) continue;
    const int64_t boundary = *pbt_->WaitingAt(id);
    TrialResult row;
    row.trial_id = id;
    row.status = TrialStatus::kPaused;
    row.params = unfinished_.at(id).params;
    row.parent_trial = unfinished_.at(id).parent_trial;
    row.parent_epoch = unfinished_.at(id).parent_epoch;
    for (const auto& [epoch, objective] : reports[id]) {
      if (epoch > boundary) break;
      EpochMetrics metrics;
      metrics.epoch = epoch;
      metrics.values.assign(config_.metric_names.size(), std::numeric_limits<double>::quiet_NaN());
      if (objective_index_ < metrics.values.size()) metrics.values[objective_index_] = objective;
      row.curve.push_back(std::move(metrics));
    }
    row.message = "paused at epoch " + std::to_string(boundary) +
                  " for population-based training (resumed; only " + config_.sweep.metric.name +
                  " kept for its epochs since its last row)";
    const TrialSpec spec = unfinished_.at(id);
    HPO_RETURN_IF_ERROR(Pause(spec, std::move(row)));
    reports_.erase(id);
  }
  return Status::Ok();
}

Status Coordinator::RunGeneration(bool force) {
  // A member told to pause is decided on once its pause (its row, its checkpoint) has arrived.
  if (!pbt_ || interrupted_ || !pausing_.empty()) return Status::Ok();
  std::optional<PbtGeneration> generation = pbt_->Decide(next_trial_id_, force);
  if (!generation) return Status::Ok();
  // The children's checkpoints first: once the generation is published they must exist.
  for (const PbtExploit& exploit : generation->exploits) {
    if (deps_.artifacts) {
      HPO_RETURN_IF_ERROR(deps_.artifacts->CopyCheckpoint(exploit.parent, exploit.child));
    }
  }
  std::ostringstream line;
  line << "population-based training at epoch " << generation->epoch << ":";
  for (const PbtExploit& exploit : generation->exploits) {
    HPO_RETURN_IF_ERROR(StopReplacedMember(exploit, generation->epoch));
    line << " trial " << exploit.replaced << " replaced by trial " << exploit.child
         << " (from trial " << exploit.parent << ":";
    const Assignment& from =
        paused_.count(exploit.parent) != 0 ? paused_.at(exploit.parent).params : exploit.params;
    for (const NamedValue& entry : exploit.params) {
      const ParamValue* before = FindParam(from, entry.name);
      if (before != nullptr && FormatParamValueExact(*before) == FormatParamValueExact(entry.value))
        continue;
      line << ' ' << entry.name << ' ' << (before ? FormatParamValue(*before) : "-") << "->"
           << FormatParamValue(entry.value);
    }
    line << ");";
  }
  for (const int64_t id : generation->continuing) {
    const auto found = paused_.find(id);
    if (found == paused_.end()) continue;
    TrialSpec spec = std::move(found->second);
    paused_.erase(found);
    paused_runs_.erase(id);
    unfinished_[id] = spec;
    requeued_.push_back(std::move(spec));
  }
  const size_t continuing = generation->continuing.size();
  line << " " << continuing << (continuing == 1 ? " member continues" : " members continue");
  for (const PbtExploit& exploit : generation->exploits) {
    TrialSpec child = NewTrial(exploit.child, exploit.params);
    child.parent_trial = exploit.parent;
    child.parent_epoch = generation->epoch;
    next_trial_id_ = std::max(next_trial_id_, exploit.child + 1);
    unfinished_[child.trial_id] = child;
    requeued_.push_back(std::move(child));
  }
  if (deps_.progress != nullptr) *deps_.progress << line.str() << std::endl;
  return PublishState();
}

Status Coordinator::StopReplacedMember(const PbtExploit& exploit, int64_t epoch) {
  const auto paused = paused_.find(exploit.replaced);
  TrialSpec spec = paused != paused_.end() ? paused->second : NewTrial(exploit.replaced, {});
  if (paused != paused_.end()) paused_.erase(paused);
  TrialResult row;
  row.trial_id = exploit.replaced;
  row.status = TrialStatus::kStopped;
  row.params = spec.params;
  row.parent_trial = spec.parent_trial;
  row.parent_epoch = spec.parent_epoch;
  row.epochs = epoch - (spec.parent_trial >= 0 ? spec.parent_epoch : 0);
  row.objective = exploit.replaced_objective;
  row.message = exploit.reason;
  // It ends where it paused: its row is that last run's (the study reader counts the run once).
  const auto run = paused_runs_.find(exploit.replaced);
  if (run != paused_runs_.end()) {
    row.start_time_s = run->second.start_time_s;
    row.duration_s = run->second.duration_s;
    row.group = run->second.group;
    paused_runs_.erase(run);
  }
  FailWithoutFiniteObjective(&row);
  TakeFurtherObjectives(&row);
  deps_.searcher->ObserveObjectives(row.trial_id, row.params, row.status, AllObjectives(row));
  HPO_RETURN_IF_ERROR(StageRow(row));
  const std::optional<TrialResult> previous_best = best_;
  Count(row);
  best_ = previous_best;
  weights_to_discard_.push_back(row.trial_id);
  PrintProgress(row);  // its line, as every finished trial has one
  return Status::Ok();
}

void Coordinator::RecordReport(const ControlMessage& report) {
  const std::vector<double>& values = report.metrics.values;
  std::map<int64_t, double>& reports = reports_[report.trial_id];
  reports.erase(reports.lower_bound(report.metrics.epoch), reports.end());
  reports[report.metrics.epoch] = objective_index_ < values.size()
                                      ? values[objective_index_]
                                      : std::numeric_limits<double>::quiet_NaN();
  NoteRunningChange();
}

void Coordinator::Interrupt(const std::string& reason) {
  if (interrupted_) return;
  interrupted_ = true;
  if (deps_.progress != nullptr) {
    *deps_.progress << "sweep interrupted: " << reason << "; running trials checkpoint and stop"
                    << std::endl;
  }
}

TrialSpec Coordinator::NewTrial(int64_t trial_id, Assignment params) const {
  TrialSpec trial;
  trial.trial_id = trial_id;
  trial.seed =
      DeriveSeed(config_.execution.seed, kTrainingPurpose, static_cast<uint64_t>(trial.trial_id));
  trial.params = std::move(params);
  return trial;
}

Status Coordinator::HandleRequest(int group, bool interrupt, std::optional<ControlMessage>* reply) {
  const bool waiting =
      (suggestion_ && suggestion_->group == group) ||
      std::find(waiting_groups_.begin(), waiting_groups_.end(), group) != waiting_groups_.end();
  if (running_[group] != -1 || waiting) {
    return Status::Failure(
        "group " + std::to_string(group) + " asked for a trial while " +
        (waiting ? std::string("its last request is unanswered")
                 : "trial " + std::to_string(running_[group]) + " is still running"));
  }
  if (interrupt) Interrupt("group " + std::to_string(group) + " received a preemption signal");
  waiting_groups_.push_back(group);
  AnswerWaitingGroups();
  const auto answered = std::find_if(replies_.begin(), replies_.end(),
                                     [group](const auto& entry) { return entry.first == group; });
  if (answered != replies_.end()) {
    *reply = std::move(answered->second);
    replies_.erase(answered);
  }
  return Status::Ok();
}

std::vector<std::pair<int, ControlMessage>> Coordinator::TakeReplies() {
  CollectSuggestion();
  AnswerWaitingGroups();
  return std::exchange(replies_, {});
}

void Coordinator::CollectSuggestion() {
  if (!suggestion_ ||
      suggestion_->computed.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    return;
  }
  std::optional<Assignment> computed = suggestion_->computed.get();
  const int group = suggestion_->group;
  const int64_t trial_id = suggestion_->trial_id;
  suggestion_.reset();
  if (!interrupted_ && end_reason_.empty()) {
    std::optional<Assignment> params =
        deps_.searcher->FinishSuggestion(trial_id, std::move(computed));
    if (params) {
      next_trial_id_ = trial_id + 1;
      Assign(group, NewTrial(trial_id, std::move(*params)));
      return;
    }
    search_exhausted_ = true;
  }
  waiting_groups_.push_front(group);
}

void Coordinator::AnswerWaitingGroups() {
  const std::optional<double>& time_budget = config_.budget.time_budget_s;
  if (!waiting_groups_.empty() && time_budget && deps_.clock() - start_time_ >= *time_budget) {
    EndSweep("the time budget of " + FormatDuration(*time_budget) + " is used up");
  }
  while (!waiting_groups_.empty()) {
    const int group = waiting_groups_.front();
    std::optional<TrialSpec> trial;
    if (!interrupted_ && end_reason_.empty()) {
      if (!requeued_.empty()) {
        trial = std::move(requeued_.front());
        requeued_.pop_front();
      } else if (std::optional<TrialSpec> promoted = PromotedTrial(/*idle=*/false)) {
        trial = std::move(promoted);
      } else if (suggestion_) {
        return;  // the next suggestion starts once this one is done
      } else if (!search_exhausted_ && next_trial_id_ < planned_trials_ &&
                 (!pbt_ || next_trial_id_ < pbt_->initial_members())) {
        Searcher::SuggestionComputation computation =
            deps_.searcher->StartSuggestion(next_trial_id_);
        if (computation) {
          suggestion_.emplace(SuggestionInFlight{
              group, next_trial_id_,
              std::async(std::launch::async, ComputeAtLowPriority, std::move(computation))});
          waiting_groups_.pop_front();
          continue;
        }
        std::optional<Assignment> params =
            deps_.searcher->FinishSuggestion(next_trial_id_, std::nullopt);
        if (params) {
          trial = NewTrial(next_trial_id_++, std::move(*params));
        } else {
          search_exhausted_ = true;
        }
      }
    }
    if (!trial && !interrupted_ && end_reason_.empty() && pbt_) {
      // Population-based training: a running member may yet complete a generation.
      if (AnyTrialRunning() && (!paused_.empty() || next_trial_id_ < planned_trials_)) return;
      if (!paused_.empty()) {
        const Status ran = RunGeneration(/*force=*/true);
        if (!ran.ok()) EndSweep("population-based training: " + ran.message());
        if (!requeued_.empty()) {
          trial = std::move(requeued_.front());
          requeued_.pop_front();
        }
      }
    } else if (!trial && !interrupted_ && end_reason_.empty() && !paused_.empty()) {
      // A trial still running may yet make a paused one promotable: wait for it.
      if (AnyTrialRunning()) return;
      trial = PromotedTrial(/*idle=*/true);
    }
    waiting_groups_.pop_front();
    if (trial) {
      Assign(group, std::move(*trial));
      continue;
    }
    if (requeued_.empty()) search_exhausted_ = true;
    ControlMessage answer;
    answer.kind = MessageKind::kNoMoreTrials;
    ++groups_done_;
    replies_.emplace_back(group, std::move(answer));
  }
}

std::optional<TrialSpec> Coordinator::PromotedTrial(bool idle) {
  if (!deps_.scheduler || paused_.empty()) return std::nullopt;
  const std::optional<int64_t> promoted = deps_.scheduler->Promote(idle);
  if (!promoted) return std::nullopt;
  const auto found = paused_.find(*promoted);
  if (found == paused_.end()) return std::nullopt;
  TrialSpec trial = std::move(found->second);
  paused_.erase(found);
  paused_runs_.erase(trial.trial_id);
  if (deps_.progress != nullptr) {
    *deps_.progress << "trial " << trial.trial_id << " promoted"
                    << (idle ? " (nothing else can run: the best paused trial goes on)" : "")
                    << "; it continues from its checkpoint" << std::endl;
  }
  return trial;
}

bool Coordinator::AnyTrialRunning() const {
  return suggestion_.has_value() ||
         std::any_of(running_.begin(), running_.end(), [](int64_t id) { return id != -1; });
}

void Coordinator::Assign(int group, TrialSpec trial) {
  // Population-based training: a trial the searcher suggested joins the population (children
  // joined when their generation was decided).
  if (pbt_ && trial.parent_trial < 0) pbt_->Join(trial.trial_id, trial.params, 0);
  running_[group] = trial.trial_id;
  running_params_[group] = trial.params;
  unfinished_[trial.trial_id] = trial;
  dispatched_at_[trial.trial_id] = UnixSeconds();
  NoteRunningChange();
  ControlMessage answer;
  answer.kind = MessageKind::kTrial;
  answer.trial = std::move(trial);
  replies_.emplace_back(group, std::move(answer));
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
  } else if (pbt_ && target_trial_ != trial_id) {
    if (pbt_->OnEpoch(trial_id, report.metrics.epoch, objective)) {
      decision.keep_going = false;
      decision.interrupt = true;  // a pause: it checkpoints and reports "running"
      pausing_[trial_id] = "paused at epoch " + std::to_string(report.metrics.epoch) +
                           " for population-based training";
    }
  } else if (pausing_.count(trial_id) != 0) {
    // Steps its program reported after the pause reached it (one that finishes its epoch): the
    // pause stands. Not the scheduler's: judged again, the trial would no longer be paused there
    // (the curve scheduler's), and nothing would ever promote it.
    decision.keep_going = false;
    decision.interrupt = true;
  } else if (deps_.scheduler && target_trial_ != trial_id) {
    SchedulerDecision verdict = deps_.scheduler->OnEpoch(trial_id, report.metrics.epoch, objective);
    if (!verdict.keep_going) {
      decision.keep_going = false;
      // A pause reaches the group as an interruption: it checkpoints and reports "running".
      decision.interrupt = verdict.pause;
      (verdict.pause ? pausing_ : stop_reasons_)[trial_id] = std::move(verdict.reason);
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
  if (received.status == TrialStatus::kRunning && pausing_.count(received.trial_id) != 0) {
    return PauseAtRung(group, received, spec);
  }
  if (received.status == TrialStatus::kRunning) {
    Interrupt("group " + std::to_string(group) + " received a preemption signal");
    if (deps_.progress != nullptr) {
      *deps_.progress << "trial " << received.trial_id << " " << received.message
                      << "; it continues on resume" << std::endl;
    }
    return PublishState();
  }
  // A child of population-based training is not retried: the checkpoint it started from is gone.
  if (received.status == TrialStatus::kFailed && spec.attempt < config_.budget.trial_retries &&
      spec.parent_trial < 0) {
    return Retry(&spec, received);
  }
  TrialResult result = FinishedRow(group, received);
  deps_.searcher->ObserveObjectives(result.trial_id, result.params, result.status,
                                    AllObjectives(result));
  if (deps_.scheduler) deps_.scheduler->OnTrialEnd(result.trial_id, result.status);
  if (pbt_) pbt_->Leave(result.trial_id);
  HPO_RETURN_IF_ERROR(StageRow(result));
  const std::optional<TrialResult> previous_best = best_;
  Count(result);
  const bool new_best = best_ && best_->trial_id == result.trial_id;
  if (new_best && previous_best) weights_to_discard_.push_back(previous_best->trial_id);
  if (!new_best) weights_to_discard_.push_back(result.trial_id);
  PrintProgress(result);
  return RunGeneration(/*force=*/false);  // a member that left may complete a generation
}

Status Coordinator::PauseAtRung(int group, const TrialResult& received, const TrialSpec& spec) {
  const auto pausing = pausing_.find(received.trial_id);
  TrialResult row = received;
  row.group = group;
  row.status = TrialStatus::kPaused;
  TakeStartTime(&row);  // this run's; a promotion dispatches it again
  row.message = std::move(pausing->second);
  row.parent_trial = spec.parent_trial;
  row.parent_epoch = spec.parent_epoch;
  pausing_.erase(pausing);
  HPO_RETURN_IF_ERROR(Pause(spec, std::move(row)));
  return RunGeneration(/*force=*/false);
}

Status Coordinator::Retry(TrialSpec* spec, const TrialResult& received) {
  ++spec->attempt;
  spec->seed =
      DeriveSeed(config_.execution.seed, kTrainingPurpose + static_cast<uint64_t>(spec->attempt),
                 static_cast<uint64_t>(spec->trial_id));
  if (deps_.progress != nullptr) {
    *deps_.progress << "trial " << spec->trial_id << " failed (" << OneLine(received.message)
                    << "); retry " << spec->attempt << " of " << config_.budget.trial_retries
                    << " with a new seed" << std::endl;
  }
  if (deps_.artifacts) deps_.artifacts->DiscardCheckpoint(spec->trial_id);
  requeued_.push_front(*spec);
  return PublishState();
}

TrialResult Coordinator::FinishedRow(int group, const TrialResult& received) {
  const TrialSpec& spec = unfinished_.at(received.trial_id);
  const int64_t attempts = spec.attempt;
  TrialResult result = received;
  result.group = group;
  result.parent_trial = spec.parent_trial;
  result.parent_epoch = spec.parent_epoch;
  unfinished_.erase(received.trial_id);
  pausing_.erase(received.trial_id);
  TakeStartTime(&result);
  result.epochs = static_cast<int64_t>(result.curve.size());
  if (result.status != TrialStatus::kFailed && !result.curve.empty() &&
      objective_index_ < result.curve.back().values.size()) {
    result.objective = result.curve.back().values[objective_index_];
  }
  FailWithoutFiniteObjective(&result);
  TakeFurtherObjectives(&result);
  if (result.status == TrialStatus::kFailed && attempts > 0) {
    result.message += " (after " + std::to_string(attempts) + " retries)";
  }
  const auto stop_reason = stop_reasons_.find(result.trial_id);
  if (stop_reason != stop_reasons_.end()) {
    if (result.status == TrialStatus::kStopped) result.message = stop_reason->second;
    stop_reasons_.erase(stop_reason);
  }
  return result;
}

void Coordinator::TakeStartTime(TrialResult* row) {
  const auto dispatched = dispatched_at_.find(row->trial_id);
  if (dispatched == dispatched_at_.end()) return;
  row->start_time_s = dispatched->second;
  dispatched_at_.erase(dispatched);
}

Status Coordinator::Pause(const TrialSpec& spec, TrialResult row) {
  row.epochs = static_cast<int64_t>(row.curve.size());
  if (!row.curve.empty() && objective_index_ < row.curve.back().values.size()) {
    row.objective = row.curve.back().values[objective_index_];
  }
  TakeFurtherObjectives(&row);
  const int64_t trial_id = spec.trial_id;
  paused_[trial_id] = spec;
  paused_runs_[trial_id] = {row.start_time_s, row.duration_s, row.group};
  unfinished_.erase(trial_id);
  HPO_RETURN_IF_ERROR(StageRow(row));
  if (deps_.progress != nullptr) {
    *deps_.progress << "trial " << row.trial_id << " " << row.message << "; " << paused_.size()
                    << " paused" << std::endl;
  }
  return Status::Ok();
}

Status Coordinator::StageRow(TrialResult row) {
  // A trial that paused before has its earlier epochs in the study already. (The last epoch
  // number, which for a child of population-based training is not its count of epochs.)
  const int64_t last_epoch = row.curve.empty() ? row.epochs : row.curve.back().epoch;
  const auto staged = staged_epochs_.find(row.trial_id);
  if (staged != staged_epochs_.end()) {
    const int64_t before = staged->second;
    row.curve.erase(std::remove_if(row.curve.begin(), row.curve.end(),
                                   [before](const EpochMetrics& m) { return m.epoch <= before; }),
                    row.curve.end());
  }
  if (row.status == TrialStatus::kPaused) {
    staged_epochs_[row.trial_id] = last_epoch;
  } else if (staged != staged_epochs_.end()) {
    staged_epochs_.erase(staged);
  }
  HPO_RETURN_IF_ERROR(deps_.study->Stage(row));
  if (unpublished_.empty()) first_unpublished_at_ = deps_.clock();
  unpublished_.push_back(row.trial_id);
  return Status::Ok();
}

Status Coordinator::ReadRunningTrials(const StudyContents& study,
                                      std::map<int64_t, TrialSpec>* trials, EpochReports* reports) {
  trials->clear();
  reports->clear();
  if (study.extra_attributes.count("running_trials") == 0) return Status::Ok();
  std::string state;
  HPO_RETURN_IF_ERROR(StateAttribute(study, "running_trials", &state));
  if (!DecodeTrials(state, trials, reports)) {
    return Status::BadInput("the study's attribute running_trials is damaged");
  }
  return Status::Ok();
}

Status Coordinator::PublishIfDue(bool idle) {
  const double now = deps_.clock();
  if (unpublished_.empty()) {
    // No result staged: the running trials' state alone, when idle and kRunningStateSeconds old.
    const bool stale =
        running_changed_at_ >= 0.0 && now - running_changed_at_ >= kRunningStateSeconds;
    if (!stale || !idle || now < next_publish_at_) return Status::Ok();
    return PublishState();
  }
  if (now < next_publish_at_) return Status::Ok();
  if (!idle && now - first_unpublished_at_ < kLongestDeferralSeconds) return Status::Ok();
  return PublishState();
}

void Coordinator::NoteRunningChange() {
  if (running_changed_at_ < 0.0) running_changed_at_ = deps_.clock();
}

Status Coordinator::Publish() { return unpublished_.empty() ? Status::Ok() : PublishState(); }

Status Coordinator::PublishState() {
  for (auto it = reports_.begin(); it != reports_.end();) {  // finished trials' are in /curves
    it = unfinished_.count(it->first) != 0 ? std::next(it) : reports_.erase(it);
  }
  const double began = deps_.clock();
  HPO_RETURN_IF_ERROR(deps_.study->Publish(SweepStateAttributes()));
  running_changed_at_ = -1.0;
  const double ended = deps_.clock();
  next_publish_at_ = ended + std::min(kLongestPublishSpacingSeconds,
                                      kPublishSpacing * std::max(0.0, ended - began));
  if (deps_.artifacts) {
    std::sort(unpublished_.begin(), unpublished_.end());
    unpublished_.erase(std::unique(unpublished_.begin(), unpublished_.end()), unpublished_.end());
    for (const int64_t trial_id : unpublished_) {
      // A paused trial resumes from its checkpoint.
      // So does one that goes on (promoted, or continuing in population-based training).
      if (paused_.count(trial_id) == 0 && unfinished_.count(trial_id) == 0) {
        deps_.artifacts->DiscardCheckpoint(trial_id);
      }
    }
    for (const int64_t trial_id : weights_to_discard_) deps_.artifacts->Discard(trial_id);
  }
  unpublished_.clear();
  weights_to_discard_.clear();
  if (deps_.after_publish) deps_.after_publish();
  return Status::Ok();
}

void Coordinator::FailWithoutFiniteObjective(TrialResult* result) const {
  if (result->status == TrialStatus::kFailed || std::isfinite(result->objective)) return;
  const std::string& metric = config_.sweep.metric.name;
  if (result->curve.empty()) {
    result->message = "reported no " + metric;
  } else {
    std::ostringstream reason;
    reason << metric << " is " << result->objective << " at its last report (epoch "
           << result->curve.back().epoch << ")";
    if (!result->message.empty()) reason << "; " << result->message;
    result->message = reason.str();
  }
  result->status = TrialStatus::kFailed;
  result->objective = std::numeric_limits<double>::quiet_NaN();
}

void Coordinator::TakeFurtherObjectives(TrialResult* result) const {
  result->further_objectives.assign(further_indices_.size(),
                                    std::numeric_limits<double>::quiet_NaN());
  if (result->status == TrialStatus::kFailed || result->curve.empty()) return;
  const std::vector<double>& values = result->curve.back().values;
  for (size_t j = 0; j < further_indices_.size(); ++j) {
    if (further_indices_[j] < values.size()) {
      result->further_objectives[j] = values[further_indices_[j]];
    }
  }
}

std::vector<double> Coordinator::AllObjectives(const TrialResult& result) const {
  std::vector<double> objectives = {result.objective};
  for (size_t j = 0; j < further_indices_.size(); ++j) {
    objectives.push_back(j < result.further_objectives.size()
                             ? result.further_objectives[j]
                             : std::numeric_limits<double>::quiet_NaN());
  }
  return objectives;
}

// Without a scheduler no trial pauses, so there is nothing to explain.
std::string Coordinator::why_left_paused() const {
  return deps_.scheduler ? deps_.scheduler->WhyLeftPaused() : std::string();
}

// What a program that starts over instead of loading HPO_CHECKPOINT_DIR costs this sweep.
std::string Coordinator::RestartConsequence(bool scheduler_weighs_it) const {
  if (config_.pbt.enabled) {
    return "a PBT program loads HPO_CHECKPOINT_DIR and reports the checkpoint's epoch + 1 next "
           "(docs/config.md, Population-based training); its lineage is not what the study's "
           "parent columns say (`pbt.strict: true` fails such trials)";
  }
  std::string consequence =
      "its program keeps no checkpoint in HPO_CHECKPOINT_DIR, so each time a trial goes on after "
      "a pause, a preemption or a retry it trains its first epochs again (docs/tasks.md, "
      "Preemption and resume); the study's curves hold each epoch once, the compute it took does "
      "not";
  if (scheduler_weighs_it) {
    consequence += "; the curve scheduler now counts a paused trial's resume as all its epochs";
  }
  return consequence;
}

void Coordinator::Count(const TrialResult& result) {
  ++trials_finished_;
  const bool restarted = result.message.rfind("restarted: ", 0) == 0;
  const bool weighed =
      restarted && deps_.scheduler && !config_.pbt.enabled && deps_.scheduler->ResumesStartOver();
  if (!warned_restart_ && restarted) {
    warned_restart_ = true;
    PrintDiagnostic("hpo: warning: trial " + std::to_string(result.trial_id) + " " +
                    result.message + ": " + RestartConsequence(weighed) +
                    "; every such trial's message says `restarted` (said once per sweep)");
  }
  if (result.status == TrialStatus::kFailed) {
    ++trials_failed_;
    last_failure_ = "trial " + std::to_string(result.trial_id) + ": " + result.message;
    const std::optional<int64_t>& allowed = config_.budget.max_failed_trials;
    if (allowed && trials_failed_ > *allowed && !too_many_failures_) {
      too_many_failures_ = true;
      EndSweep(CountOf(trials_failed_, "trial") + " failed, more than max_failed_trials (" +
               std::to_string(*allowed) + "); the last failure: " + result.message);
    }
  }
  if (target_trial_ < 0 && result.status == TrialStatus::kCompleted &&
      ReachesTarget(result.objective)) {
    target_trial_ = result.trial_id;
    EndSweep("trial " + std::to_string(result.trial_id) + " reached the target " +
             config_.sweep.metric.name + " " + FormatObjective(*config_.sweep.metric.target));
  }
  // Only a finite score can be the best: a study from an older hpo may hold NaN or -inf rows.
  if (result.status != TrialStatus::kFailed && std::isfinite(result.objective) &&
      (!best_ || IsBetter(result.objective, best_->objective))) {
    best_ = result;
  }
}

std::map<std::string, StudyAttribute> Coordinator::SweepStateAttributes() const {
  std::map<std::string, StudyAttribute> attributes;
  attributes["searcher_fingerprint"] = HexEncode(deps_.searcher->ConfigFingerprint());
  if (deps_.scheduler) {
    attributes["scheduler_fingerprint"] = HexEncode(deps_.scheduler->ConfigFingerprint());
  }
  if (!deps_.warm_start.fingerprint.empty()) {
    attributes["warm_start"] = deps_.warm_start.fingerprint;
  }
  attributes["running_trials"] = HexEncode(EncodeTrials(unfinished_, reports_));
  // A paused trial's row does not hold its attempt; those paused after a retry are kept here, so
  // that after a resume they continue from their checkpoints with their own seeds.
  std::map<int64_t, TrialSpec> paused_retries;
  for (const auto& [id, trial] : paused_) {
    if (trial.attempt > 0) paused_retries.emplace(id, trial);
  }
  attributes["paused_retries"] = HexEncode(EncodeTrials(paused_retries, {}));
  if (pbt_) attributes["pbt_parents"] = HexEncode(EncodePbtParents(unfinished_));
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

bool Coordinator::IsConstantParameter(const std::string& name) const {
  for (const ParameterSpec& spec : config_.sweep.parameters) {
    if (spec.name == name) return spec.distribution == Distribution::kConstant;
  }
  return false;
}

void Coordinator::PrintProgress(const TrialResult& result) const {
  if (deps_.progress == nullptr) return;
  std::ostringstream line;
  line << "trial " << result.trial_id << " |";
  for (const NamedValue& entry : result.params) {
    if (IsConstantParameter(entry.name)) continue;  // the same in every trial: noise here
    line << ' ' << entry.name << '=' << FormatParamValue(entry.value);
  }
  line << " | " << config_.sweep.metric.name << ' ' << FormatObjective(result.objective);
  for (size_t j = 0;
       j < result.further_objectives.size() && j + 1 < config_.sweep.objectives.size(); ++j) {
    line << ", " << config_.sweep.objectives[j + 1].name << ' '
         << FormatObjective(result.further_objectives[j]);
  }
  line << " (" << TrialStatusName(result.status) << ", " << result.epochs << " ep, "
       << FormatDuration(result.duration_s) << ')';
  if (!result.message.empty()) line << " [" << OneLine(result.message) << ']';
  if (best_) {
    line << " | best " << FormatObjective(best_->objective) << " (trial " << best_->trial_id << ')';
  }
  const double elapsed = deps_.clock() - start_time_;
  // Paused trials have had their run so far: the time left is that of the trials neither
  // finished nor paused, at the rate this run added such trials (a resumed run's clock starts at
  // the resume: the trials that ran before it took none of `elapsed`).
  const int64_t ran = trials_finished_ + static_cast<int64_t>(paused_.size());
  const int64_t ran_in_this_run = ran - ran_before_this_run_;
  const int64_t left = std::max<int64_t>(0, planned_trials_ - ran);
  line << " | " << trials_finished_ << '/' << planned_trials_ << " done | elapsed "
       << FormatDuration(elapsed);
  if (left > 0 && ran_in_this_run > 0) {
    line << ", ~"
         << FormatDuration(elapsed / static_cast<double>(ran_in_this_run) *
                           static_cast<double>(left))
         << " left";
  }
  *deps_.progress << line.str() << std::endl;
}

}  // namespace hpo
