#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>

#include "hpo/bytes.hpp"
#include "hpo/seeding.hpp"
#include "parzen_estimator.hpp"
#include "searchers.hpp"

namespace hpo {

namespace {

constexpr uint64_t kTpePurpose = 0x747065ULL;  // "tpe"
constexpr char kStateTag[] = "hpo-tpe-state/v1";
constexpr size_t kMaxGoodTrials = 25;
constexpr double kWorstLoss = std::numeric_limits<double>::infinity();
// The rank epoch of failed trials that did not report the fidelity: behind every other trial.
constexpr int64_t kFailedEpoch = -1;

// Optuna's default gamma: the size of the good group l(x) among n data points.
size_t GoodCount(size_t n) {
  return std::min(static_cast<size_t>(std::ceil(0.1 * static_cast<double>(n))), kMaxGoodTrials);
}

std::vector<double> CoordinatesAt(const std::vector<const std::vector<double>*>& points,
                                  size_t dimension) {
  std::vector<double> coordinates;
  coordinates.reserve(points.size());
  for (const std::vector<double>* point : points) coordinates.push_back((*point)[dimension]);
  return coordinates;
}

// The candidate drawn from `good` that maximises log good(x) - log bad(x); the first on ties.
template <typename Estimator>
double BestCandidate(const Estimator& good, const Estimator& bad, int64_t candidates,
                     std::mt19937_64& rng) {
  std::vector<std::pair<double, double>> scored;  // (candidate, score), each candidate once
  double best = 0.0;
  double best_score = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < candidates; ++i) {
    const double candidate = good.Sample(rng);
    const auto seen = std::find_if(scored.begin(), scored.end(), [candidate](const auto& entry) {
      return entry.first == candidate;
    });
    const double score = seen != scored.end()
                             ? seen->second
                             : good.LogDensity(candidate) - bad.LogDensity(candidate);
    if (seen == scored.end()) scored.emplace_back(candidate, score);
    if (i == 0 || score > best_score) {
      best = candidate;
      best_score = score;
    }
  }
  return best;
}

}  // namespace

Status TpeSearcher::Create(const SweepConfig& config, std::unique_ptr<Searcher>* searcher) {
  if (config.search.candidates < 1) {
    return Status::BadInput("search.candidates must be at least 1, got " +
                            std::to_string(config.search.candidates));
  }
  if (config.search.startup_trials < 0) {
    return Status::BadInput("search.startup_trials must not be negative, got " +
                            std::to_string(config.search.startup_trials));
  }
  searcher->reset(new TpeSearcher(config));
  return Status::Ok();
}

TpeSearcher::TpeSearcher(const SweepConfig& config)
    : parameters_(config.sweep.parameters),
      goal_(config.sweep.metric.goal),
      seed_(config.execution.seed),
      startup_trials_(config.search.startup_trials),
      candidates_(config.search.candidates),
      multi_fidelity_(config.sweep.early_terminate.enabled),
      startup_searcher_(config.sweep.parameters, config.execution.seed) {
  for (const ParameterSpec& parameter : parameters_) {
    dimensions_.push_back(DimensionOf(parameter));
    if (dimensions_.back().kind != ModelDimension::Kind::kFixed) ++modelled_parameters_;
  }
}

std::string TpeSearcher::Fingerprint() const {
  std::string fingerprint = "bayes/tpe";
  for (const ParameterSpec& parameter : parameters_) {
    fingerprint += " " + parameter.name + ":" + DistributionName(parameter.distribution);
  }
  return fingerprint;
}

void TpeSearcher::SetParams(const Assignment& params, TrialRecord* record) const {
  record->params = params;
  std::vector<double> coordinates;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const ParamValue* value = FindParam(params, parameters_[i].name);
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

double TpeSearcher::Loss(double objective) const {
  if (std::isnan(objective)) return kWorstLoss;
  return goal_ == Goal::kMaximize ? -objective : objective;
}

bool TpeSearcher::CollectData(int64_t trial_id, std::vector<DataPoint>* observed,
                              std::vector<DataPoint>* pending) const {
  observed->clear();
  pending->clear();
  if (multi_fidelity_) {
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

Assignment TpeSearcher::ModelSuggestion(int64_t trial_id, std::vector<DataPoint> observed,
                                        std::vector<DataPoint> pending) const {
  std::sort(observed.begin(), observed.end(), [](const DataPoint& a, const DataPoint& b) {
    if (a.epoch != b.epoch) return a.epoch > b.epoch;
    if (a.loss != b.loss) return a.loss < b.loss;
    return a.trial_id < b.trial_id;
  });
  const size_t good_count = GoodCount(observed.size());
  std::vector<DataPoint> good(observed.begin(), observed.begin() + good_count);
  std::vector<DataPoint> bad(observed.begin() + good_count, observed.end());
  bad.insert(bad.end(), pending.begin(), pending.end());
  // Oldest first, so that the weights ramp down over the oldest trials (Optuna's order).
  const auto by_id = [](const DataPoint& a, const DataPoint& b) { return a.trial_id < b.trial_id; };
  std::sort(good.begin(), good.end(), by_id);
  std::sort(bad.begin(), bad.end(), by_id);
  std::vector<const std::vector<double>*> good_points;
  std::vector<const std::vector<double>*> bad_points;
  for (const DataPoint& point : good) good_points.push_back(point.coordinates);
  for (const DataPoint& point : bad) bad_points.push_back(point.coordinates);

  std::mt19937_64 rng(DeriveSeed(seed_, kTpePurpose, static_cast<uint64_t>(trial_id)));
  Assignment assignment;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const ModelDimension& dimension = dimensions_[i];
    double coordinate = 0.0;
    if (dimension.kind == ModelDimension::Kind::kNumeric) {
      const NumericParzenEstimator good_model(dimension, CoordinatesAt(good_points, i));
      const NumericParzenEstimator bad_model(dimension, CoordinatesAt(bad_points, i));
      coordinate = BestCandidate(good_model, bad_model, candidates_, rng);
    } else if (dimension.kind == ModelDimension::Kind::kCategorical) {
      const CategoricalParzenEstimator good_model(dimension, CoordinatesAt(good_points, i));
      const CategoricalParzenEstimator bad_model(dimension, CoordinatesAt(bad_points, i));
      coordinate = BestCandidate(good_model, bad_model, candidates_, rng);
    }
    assignment.push_back({parameters_[i].name, DecodeValue(parameters_[i], dimension, coordinate)});
  }
  return assignment;
}

std::optional<Assignment> TpeSearcher::Suggest(int64_t trial_id) {
  if (trial_id < 0) return std::nullopt;
  std::optional<Assignment> params;
  std::vector<DataPoint> observed;
  std::vector<DataPoint> pending;
  if (trial_id >= startup_trials_ && CollectData(trial_id, &observed, &pending)) {
    params = ModelSuggestion(trial_id, std::move(observed), std::move(pending));
  } else {
    params = startup_searcher_.Suggest(trial_id);
  }
  TrialRecord& record = records_[trial_id];
  if (!record.finished) SetParams(*params, &record);
  return params;
}

void TpeSearcher::Observe(int64_t trial_id, const Assignment& params, TrialStatus status,
                          double objective) {
  TrialRecord& record = records_[trial_id];
  if (!params.empty() || record.params.empty()) SetParams(params, &record);
  record.finished = true;
  record.status = status;
  record.objective = objective;
}

void TpeSearcher::ObserveEpoch(int64_t trial_id, const Assignment& params, int64_t epoch,
                               double objective) {
  TrialRecord& record = records_[trial_id];
  if (record.params.empty()) SetParams(params, &record);
  record.epoch_objectives[epoch] = objective;
}

std::string TpeSearcher::SaveState() const {
  std::vector<uint8_t> bytes;
  ByteWriter writer(&bytes);
  writer.PutString(kStateTag);
  writer.PutString(Fingerprint());
  writer.Put<uint64_t>(records_.size());
  for (const auto& [id, record] : records_) {
    writer.Put<int64_t>(id);
    writer.PutAssignment(record.params);
    writer.Put<uint8_t>(record.finished ? 1 : 0);
    writer.Put<uint8_t>(static_cast<uint8_t>(record.status));
    writer.Put<double>(record.objective);
    writer.Put<uint64_t>(record.epoch_objectives.size());
    for (const auto& [epoch, objective] : record.epoch_objectives) {
      writer.Put<int64_t>(epoch);
      writer.Put<double>(objective);
    }
  }
  return std::string(bytes.begin(), bytes.end());
}

Status TpeSearcher::RestoreState(const std::string& state) {
  const std::vector<uint8_t> bytes(state.begin(), state.end());
  ByteReader reader(bytes);
  if (reader.GetString() != kStateTag || !reader.ok()) {
    return Status::BadInput("saved searcher state is not a TPE searcher's state");
  }
  const std::string fingerprint = reader.GetString();
  if (fingerprint != Fingerprint()) {
    return Status::BadInput("saved TPE searcher state is for another config ('" +
                            fingerprint.substr(0, 200) + "', this config is '" + Fingerprint() +
                            "')");
  }
  std::map<int64_t, TrialRecord> records;
  const uint64_t count = reader.Get<uint64_t>();
  bool well_formed = reader.ok();
  for (uint64_t i = 0; i < count && well_formed; ++i) {
    const int64_t id = reader.Get<int64_t>();
    TrialRecord record;
    SetParams(reader.GetAssignment(), &record);
    record.finished = reader.Get<uint8_t>() != 0;
    const uint8_t status = reader.Get<uint8_t>();
    record.status = static_cast<TrialStatus>(status);
    record.objective = reader.Get<double>();
    const uint64_t epochs = reader.Get<uint64_t>();
    for (uint64_t e = 0; e < epochs && reader.ok(); ++e) {
      const int64_t epoch = reader.Get<int64_t>();
      record.epoch_objectives[epoch] = reader.Get<double>();
    }
    well_formed = reader.ok() && status <= static_cast<uint8_t>(TrialStatus::kRunning) &&
                  records.emplace(id, std::move(record)).second;
  }
  if (!well_formed || !reader.at_end()) {
    return Status::BadInput("saved TPE searcher state is truncated or corrupt");
  }
  records_ = std::move(records);
  return Status::Ok();
}

}  // namespace hpo
