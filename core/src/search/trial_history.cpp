#include "trial_history.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <utility>

#include "common/bytes.hpp"
#include "common/pareto.hpp"
#include "conditions.hpp"

namespace hpo {

namespace {

constexpr double kWorstLoss = std::numeric_limits<double>::infinity();

// Whether `now` is `saved` with its first `before` replaced by `after`.
bool DiffersOnlyIn(const std::string& saved, const std::string& now, const std::string& before,
                   const std::string& after) {
  const size_t at = saved.find(before);
  return at != std::string::npos &&
         saved.substr(0, at) + after + saved.substr(at + before.size()) == now;
}

// What to add to a config whose study began under an earlier default of method bayes
// (ApplyDefaultSearch, 2026-11-29: the Sobol start-up without early stopping, curves_tpe with
// it), when that is the only difference between the searchers; else "".
std::string DefaultChangeHint(const std::string& saved, const std::string& now) {
  const char* key = nullptr;
  if (DiffersOnlyIn(saved, now, "bayes/tpe ", "bayes/tpe+sobol ")) {
    key = "search: {sampler: random}";
  } else if (DiffersOnlyIn(saved, now, "bayes/tpe ", "bayes/curves_tpe ")) {
    key = "search: {model: tpe}";
  }
  if (key == nullptr) return "";
  return std::string(
             ": the study began under method bayes's earlier default (changed on "
             "2026-11-29); add `") +
         key + "` to the config to resume it";
}

}  // namespace

TrialHistory::TrialHistory(std::vector<ParameterSpec> parameters,
                           std::vector<ModelDimension> dimensions, std::vector<Goal> goals,
                           int64_t startup_trials, DataRule rule, int64_t final_epoch,
                           uint64_t seed)
    : parameters_(std::move(parameters)),
      dimensions_(std::move(dimensions)),
      goals_(std::move(goals)),
      startup_trials_(startup_trials),
      rule_(rule),
      final_epoch_(final_epoch),
      seed_(seed) {
  for (const ModelDimension& dimension : dimensions_) {
    if (dimension.kind != ModelDimension::Kind::kFixed) ++modelled_parameters_;
  }
}

void TrialHistory::SetParams(const Assignment& params, bool prior, TrialRecord* record) const {
  record->params = params;
  const std::vector<bool> active = ActiveParameters(parameters_, params);
  std::vector<double> coordinates;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (!active[i]) {
      coordinates.push_back(kAbsentCoordinate);
      continue;
    }
    const ParamValue* value = FindParam(params, parameters_[i].name);
    if (value == nullptr && prior) {
      coordinates.push_back(kAbsentCoordinate);
      continue;
    }
    std::optional<double> coordinate;
    if (value) coordinate = EncodeValue(parameters_[i], dimensions_[i], *value);
    if (!coordinate) {
      record->coordinates.reset();
      return;
    }
    coordinates.push_back(*coordinate);
  }
  record->coordinates = std::move(coordinates);
}

void TrialHistory::RecordSuggestion(int64_t trial_id, const Assignment& params) {
  TrialRecord& record = records_[trial_id];
  if (!record.finished) SetParams(params, trial_id < 0, &record);
}

void TrialHistory::RecordResult(int64_t trial_id, const Assignment& params, TrialStatus status,
                                double objective, const std::vector<double>& further_objectives) {
  TrialRecord& record = records_[trial_id];
  if (!params.empty() || record.params.empty()) SetParams(params, trial_id < 0, &record);
  record.finished = true;
  record.status = status;
  record.objective = objective;
  if (goals_.size() > 1) {
    record.further_objectives = further_objectives;
    record.further_objectives.resize(goals_.size() - 1, std::nan(""));
  }
}

void TrialHistory::RecordEpoch(int64_t trial_id, const Assignment& params, int64_t epoch,
                               double objective) {
  TrialRecord& record = records_[trial_id];
  if (record.params.empty()) SetParams(params, trial_id < 0, &record);
  record.epoch_objectives[epoch] = objective;
  CacheCurve(&record);
}

int64_t TrialHistory::prior_trials() const {
  return std::distance(records_.begin(), records_.lower_bound(0));
}

double TrialHistory::Loss(double objective) const { return LossOf(goals_.front(), objective); }

bool TrialHistory::CollectData(int64_t trial_id, std::vector<DataPoint>* observed,
                               std::vector<DataPoint>* pending) const {
  observed->clear();
  pending->clear();
  if (goals_.size() > 1) return CollectScalarised(trial_id, observed, pending);
  if (rule_ == DataRule::kPredictedFinals) {
    return CollectPredictedFinals(trial_id, observed, pending);
  }
  if (rule_ == DataRule::kFidelity) {
    std::map<int64_t, size_t> reports;  // epoch -> trials that reported it
    for (const auto& [id, record] : records_) {
      if (id == trial_id || !record.coordinates) continue;
      for (const auto& entry : record.epoch_objectives) ++reports[entry.first];
    }
    const size_t needed = std::max(static_cast<size_t>(startup_trials_), modelled_parameters_ + 1);
    for (auto it = reports.rbegin(); it != reports.rend(); ++it) {
      if (it->second < needed) continue;
      const int64_t epoch = it->first;
      for (const auto& [id, record] : records_) {
        if (id == trial_id || !record.coordinates) continue;
        const auto report = record.epoch_objectives.find(epoch);
        if (report != record.epoch_objectives.end()) {
          observed->push_back({id, &*record.coordinates, epoch, Loss(report->second)});
        } else if (!record.finished) {
          pending->push_back({id, &*record.coordinates, 0, kWorstLoss});
        } else if (record.status == TrialStatus::kFailed) {
          observed->push_back({id, &*record.coordinates, kFailedEpoch, kWorstLoss});
        } else {  // stopped (or ended) before the fidelity: ranked by how far it got
          const int64_t last_epoch =
              record.epoch_objectives.empty() ? 0 : record.epoch_objectives.rbegin()->first;
          observed->push_back({id, &*record.coordinates, last_epoch, Loss(record.objective)});
        }
      }
      return true;
    }
  }
  for (const auto& [id, record] : records_) {
    if (id == trial_id || !record.coordinates) continue;
    const double loss = record.finished ? Loss(record.objective) : kWorstLoss;
    (record.finished ? observed : pending)->push_back({id, &*record.coordinates, 0, loss});
  }
  return !observed->empty() && observed->size() >= static_cast<size_t>(startup_trials_);
}

bool TrialHistory::CollectScalarised(int64_t trial_id, std::vector<DataPoint>* observed,
                                     std::vector<DataPoint>* pending) const {
  std::vector<std::vector<double>> losses;
  for (const auto& [id, record] : records_) {
    if (id == trial_id || !record.coordinates) continue;
    if (!record.finished) {
      pending->push_back({id, &*record.coordinates, 0, kWorstLoss});
      continue;
    }
    std::vector<double> loss = {Loss(record.objective)};
    for (size_t j = 1; j < goals_.size(); ++j) {
      loss.push_back(LossOf(goals_[j], record.further_objectives[j - 1]));
    }
    losses.push_back(std::move(loss));
    observed->push_back({id, &*record.coordinates, 0, 0.0});
  }
  const std::vector<std::vector<double>> normalised = NormaliseLosses(losses);
  const std::vector<double> weights = ParegoWeights(seed_, trial_id, goals_.size());
  for (size_t i = 0; i < observed->size(); ++i) {
    (*observed)[i].loss = AugmentedChebyshev(normalised[i], weights);
  }
  return !observed->empty() && observed->size() >= static_cast<size_t>(startup_trials_);
}

void TrialHistory::CacheCurve(TrialRecord* record) const {
  if (rule_ != DataRule::kPredictedFinals) return;
  std::vector<double> losses_by_epoch;
  for (const auto& [epoch, objective] : record->epoch_objectives) {
    if (epoch < 1 || epoch > final_epoch_) continue;  // later reports change no prediction
    losses_by_epoch.resize(std::max(losses_by_epoch.size(), static_cast<size_t>(epoch)),
                           std::numeric_limits<double>::infinity());
    losses_by_epoch[static_cast<size_t>(epoch - 1)] = Loss(objective);
  }
  record->curve = CurveThroughGaps(losses_by_epoch);
  record->extrapolation = CurvePredictor::Extrapolate(record->curve, final_epoch_);
}

bool TrialHistory::CollectPredictedFinals(int64_t trial_id, std::vector<DataPoint>* observed,
                                          std::vector<DataPoint>* pending) const {
  CurvePredictor predictor(final_epoch_);
  for (const auto& [id, record] : records_) {
    if (id != trial_id) predictor.AddReference(record.curve);
  }
  for (const auto& [id, record] : records_) {
    if (id == trial_id || !record.coordinates) continue;
    if (!record.curve.losses.empty()) {
      const FinalPrediction prediction =
          predictor.Predict(record.curve.losses, record.extrapolation);
      observed->push_back({id, &*record.coordinates, 0, prediction.mean, prediction.variance});
    } else if (record.finished) {
      observed->push_back({id, &*record.coordinates, 0, Loss(record.objective)});
    } else {
      pending->push_back({id, &*record.coordinates, 0, kWorstLoss});
    }
  }
  return !observed->empty() && observed->size() >= static_cast<size_t>(startup_trials_);
}

std::string TrialHistory::Save(const std::string& tag, const std::string& fingerprint) const {
  std::vector<uint8_t> bytes;
  ByteWriter writer(&bytes);
  writer.PutString(tag);
  writer.PutString(fingerprint);
  writer.Put<uint64_t>(records_.size());
  for (const auto& [id, record] : records_) {
    writer.Put<int64_t>(id);
    writer.PutAssignment(record.params);
    writer.Put<uint8_t>(record.finished ? 1 : 0);
    writer.Put<uint8_t>(static_cast<uint8_t>(record.status));
    writer.Put<double>(record.objective);
    // Several objectives only, so that a single objective's state keeps its old bytes.
    for (size_t j = 0; record.finished && j + 1 < goals_.size(); ++j) {
      writer.Put<double>(record.further_objectives[j]);
    }
    writer.Put<uint64_t>(record.epoch_objectives.size());
    for (const auto& [epoch, objective] : record.epoch_objectives) {
      writer.Put<int64_t>(epoch);
      writer.Put<double>(objective);
    }
  }
  return std::string(bytes.begin(), bytes.end());
}

Status TrialHistory::Restore(const std::string& state, const std::string& tag,
                             const std::string& fingerprint, const std::string& searcher_name) {
  const std::vector<uint8_t> bytes(state.begin(), state.end());
  ByteReader reader(bytes);
  if (reader.GetString() != tag || !reader.ok()) {
    return Status::BadInput("saved searcher state is not a " + searcher_name + " searcher's state");
  }
  const std::string saved_fingerprint = reader.GetString();
  if (saved_fingerprint != fingerprint) {
    return Status::BadInput("saved " + searcher_name + " searcher state is for another config ('" +
                            saved_fingerprint.substr(0, 200) + "', this config is '" + fingerprint +
                            "')" + DefaultChangeHint(saved_fingerprint, fingerprint));
  }
  std::map<int64_t, TrialRecord> records;
  const uint64_t count = reader.Get<uint64_t>();
  bool well_formed = reader.ok();
  for (uint64_t i = 0; i < count && well_formed; ++i) {
    const int64_t id = reader.Get<int64_t>();
    TrialRecord record;
    SetParams(reader.GetAssignment(), id < 0, &record);
    record.finished = reader.Get<uint8_t>() != 0;
    const uint8_t status = reader.Get<uint8_t>();
    record.status = static_cast<TrialStatus>(status);
    record.objective = reader.Get<double>();
    for (size_t j = 0; record.finished && j + 1 < goals_.size(); ++j) {
      record.further_objectives.push_back(reader.Get<double>());
    }
    const uint64_t epochs = reader.Get<uint64_t>();
    for (uint64_t e = 0; e < epochs && reader.ok(); ++e) {
      const int64_t epoch = reader.Get<int64_t>();
      record.epoch_objectives[epoch] = reader.Get<double>();
    }
    CacheCurve(&record);
    well_formed = reader.ok() && status <= static_cast<uint8_t>(TrialStatus::kRunning) &&
                  records.emplace(id, std::move(record)).second;
  }
  if (!well_formed || !reader.at_end()) {
    return Status::BadInput("saved " + searcher_name + " searcher state is truncated or corrupt");
  }
  records_ = std::move(records);
  return Status::Ok();
}

}  // namespace hpo
