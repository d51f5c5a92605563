#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>

#include "common/seeding.hpp"
#include "parzen_estimator.hpp"
#include "searchers.hpp"

namespace hpo {

namespace {

constexpr uint64_t kTpePurpose = 0x747065ULL;  // "tpe"
constexpr char kStateTag[] = "hpo-tpe-state/v1";
constexpr size_t kMaxGoodTrials = 25;

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
  HPO_RETURN_IF_ERROR(CheckStartupTrials(config));
  searcher->reset(new TpeSearcher(config));
  return Status::Ok();
}

TpeSearcher::TpeSearcher(const SweepConfig& config)
    : ModelBasedSearcher(config, kStateTag, "tpe", "TPE"), candidates_(config.search.candidates) {}

std::optional<Assignment> TpeSearcher::ModelSuggestion(int64_t trial_id,
                                                       std::vector<DataPoint> observed,
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

  std::mt19937_64 rng(DeriveSeed(seed(), kTpePurpose, static_cast<uint64_t>(trial_id)));
  const std::vector<ParameterSpec>& parameters = history().parameters();
  Assignment assignment;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const ModelDimension& dimension = history().dimensions()[i];
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
    assignment.push_back({parameters[i].name, DecodeValue(parameters[i], dimension, coordinate)});
  }
  return assignment;
}

}  // namespace hpo
