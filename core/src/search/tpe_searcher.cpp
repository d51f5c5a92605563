#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "common/seeding.hpp"
#include "conditions.hpp"
#include "parzen_estimator.hpp"
#include "searchers.hpp"

namespace hpo {

namespace {

using DataPointRef = TrialHistory::DataPoint;

constexpr uint64_t kTpePurpose = 0x747065ULL;  // "tpe"
constexpr char kTpeStateTag[] = "hpo-tpe-state/v1";
constexpr size_t kMaxGoodTrials = 25;
// Multivariate TPE's settings, chosen on bench/search_quality.cpp (bench/RESULTS.md): the good
// group is the best ceil(1.5 sqrt(m)) (at most 25; see GoodGroupSize), its kernels weighted 1 /
// (rank + 1)^2, both groups' bandwidths by Scott's rule (factor 1), candidates drawn from the good
// group's observation kernels only.
constexpr double kGoodPerSqrtCount = 1.5;
constexpr double kGoodRankWeightPower = 2.0;
constexpr double kScottBandwidthFactor = 1.0;
// Candidates per suggestion when they come from the prior (early termination, see
// PriorCandidatesOf) and search.candidates is not given. On ASHA's rung data: on the recorded
// Fashion-MNIST curves 2 and 4 did alike and 8 drew near the plateau again. On curves_tpe's
// predicted finals: 12, which put 1.1-2.2x as many draws as 4 in the best region of the real
// outcome sweeps, with the replay unchanged (bench/RESULTS.md, 2026-12-01).
constexpr int64_t kPriorCandidates = 4;
constexpr int64_t kPredictedFinalsPriorCandidates = 12;

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

// Multivariate TPE's suggestion: `candidates` joint draws from the good group's kernels; the one
// maximising log l(x) - log g(x) (the first on ties), as coordinates.
// With `from_prior` the candidates are draws from the prior kernel alone (see PriorCandidatesOf).
std::vector<double> BestJointCandidate(const std::vector<ModelDimension>& dimensions,
                                       const std::vector<DataPointRef>& good,
                                       const std::vector<const std::vector<double>*>& good_points,
                                       const std::vector<const std::vector<double>*>& bad_points,
                                       const std::vector<bool>& bad_pending, int64_t candidates,
                                       bool from_prior, std::mt19937_64& rng) {
  // The good kernels' weights: 1 / (rank + 1)^2 by loss (ties by trial id).
  std::vector<size_t> order(good.size());
  for (size_t i = 0; i < good.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&good](size_t a, size_t b) {
    if (good[a].epoch != good[b].epoch) return good[a].epoch > good[b].epoch;
    if (good[a].loss != good[b].loss) return good[a].loss < good[b].loss;
    return good[a].trial_id < good[b].trial_id;
  });
  std::vector<double> rank_weights(good.size());
  for (size_t rank = 0; rank < order.size(); ++rank) {
    rank_weights[order[rank]] = std::pow(static_cast<double>(rank + 1), -kGoodRankWeightPower);
  }
  MultivariateParzenEstimator::Options options;
  options.bandwidth_factor = kScottBandwidthFactor;
  options.scott = true;
  options.sample_prior = false;
  options.weights = &rank_weights;
  const MultivariateParzenEstimator good_model(dimensions, good_points, options);
  // Constant liar: a pending trial's kernel in g(x) takes l(x)'s (narrower) bandwidths and, in
  // g(x), the share one trial of l(x) has there (its weight times g's total weight over l's),
  // so that it cancels the peak of l(x) it was drawn from and concurrent suggestions spread out.
  std::vector<double> bad_weights = TpeObservationWeights(bad_points.size());
  double good_total = options.prior_weight;
  double bad_total = options.prior_weight;
  for (double weight : rank_weights) good_total += weight;
  for (double weight : bad_weights) bad_total += weight;
  for (size_t i = 0; i < bad_weights.size(); ++i) {
    if (bad_pending[i]) bad_weights[i] *= bad_total / good_total;
  }
  options.weights = &bad_weights;
  options.narrow = &bad_pending;
  options.narrow_bandwidths = &good_model.bandwidths();
  const MultivariateParzenEstimator bad_model(dimensions, bad_points, options);

  const size_t count = static_cast<size_t>(candidates);
  const size_t width = dimensions.size();
  std::vector<double> samples(count * width);
  std::vector<double> point;
  std::optional<MultivariateParzenEstimator> prior;
  if (from_prior) {  // no observations: Sample draws from the prior kernel
    prior.emplace(dimensions, std::vector<const std::vector<double>*>(),
                  MultivariateParzenEstimator::Options());
  }
  const MultivariateParzenEstimator& source = prior ? *prior : good_model;
  for (size_t c = 0; c < count; ++c) {
    source.Sample(rng, &point);
    std::copy(point.begin(), point.end(), samples.begin() + static_cast<std::ptrdiff_t>(c * width));
  }
  std::vector<double> good_scores(count);
  std::vector<double> bad_scores(count);
  std::vector<double> scratch;
  good_model.LogDensities(samples.data(), count, good_scores.data(), &scratch);
  bad_model.LogDensities(samples.data(), count, bad_scores.data(), &scratch);
  size_t best = 0;
  for (size_t c = 1; c < count; ++c) {
    if (good_scores[c] - bad_scores[c] > good_scores[best] - bad_scores[best]) best = c;
  }
  const auto first = samples.begin() + static_cast<std::ptrdiff_t>(best * width);
  return std::vector<double>(first, first + static_cast<std::ptrdiff_t>(width));
}

// The data points where parameter `index` is present (every one without conditions).
std::vector<DataPointRef> ActiveAt(const std::vector<DataPointRef>& points, size_t index) {
  std::vector<DataPointRef> active;
  active.reserve(points.size());
  for (const DataPointRef& point : points) {
    if (!std::isnan((*point.coordinates)[index])) active.push_back(point);
  }
  return active;
}

}  // namespace

// The split of one condition group's data points (`observed` and `pending` by trial id): l(x)'s
// points, the best GoodGroupSize of `observed` by rank, and g(x)'s, the rest and the pending trials
// merged in id order.
TpeSearcher::GroupSplit TpeSearcher::SplitGroup(const std::vector<DataPoint>& observed,
                                                const std::vector<DataPoint>& pending,
                                                bool multivariate) {
  const auto by_id = [](const DataPoint& a, const DataPoint& b) { return a.trial_id < b.trial_id; };
  // The best good_count by rank (only those are ordered: O(n log good_count)).
  const size_t good_count = GoodGroupSize(observed, multivariate);
  GroupSplit split;
  split.good = observed;
  std::partial_sort(split.good.begin(),
                    split.good.begin() + static_cast<std::ptrdiff_t>(good_count), split.good.end(),
                    [](const DataPoint& a, const DataPoint& b) {
                      if (a.epoch != b.epoch) return a.epoch > b.epoch;
                      if (a.loss != b.loss) return a.loss < b.loss;
                      return a.trial_id < b.trial_id;
                    });
  split.good.resize(good_count);
  std::sort(split.good.begin(), split.good.end(), by_id);
  std::vector<DataPoint> rest;
  rest.reserve(observed.size() - good_count);
  size_t next_good = 0;
  for (const DataPoint& point : observed) {
    if (next_good < split.good.size() && split.good[next_good].trial_id == point.trial_id) {
      ++next_good;
    } else {
      rest.push_back(point);
    }
  }
  std::vector<DataPoint> bad(rest.size() + pending.size());
  std::merge(rest.begin(), rest.end(), pending.begin(), pending.end(), bad.begin(), by_id);
  for (const DataPoint& point : split.good) split.good_points.push_back(point.coordinates);
  for (const DataPoint& point : bad) split.bad_points.push_back(point.coordinates);
  split.bad_pending.resize(bad.size());
  size_t next_pending = 0;
  for (size_t i = 0; i < bad.size(); ++i) {
    split.bad_pending[i] =
        next_pending < pending.size() && pending[next_pending].trial_id == bad[i].trial_id;
    if (split.bad_pending[i]) ++next_pending;
  }
  return split;
}

Status TpeSearcher::Create(const SweepConfig& config, std::unique_ptr<Searcher>* searcher) {
  if (config.search.candidates < 1) {
    return Status::BadInput("search.candidates must be at least 1, got " +
                            std::to_string(config.search.candidates));
  }
  HPO_RETURN_IF_ERROR(CheckStartupTrials(config));
  searcher->reset(new TpeSearcher(config));
  return Status::Ok();
}

// The good group: Optuna's default gamma,
// min(ceil(0.1 n), 25), for independent TPE; for multivariate TPE min(ceil(1.5 sqrt(m)), 25), m
// counting the points at the highest epoch among them (all n without early termination, whose
// points are all final). With early termination most points are trials stopped at low epochs;
// counting them would fill l(x) with stopped trials behind the few at the fidelity (BOHB too fits
// l(x) on one budget's observations only). bench/search_quality.cpp's learning-curve task with
// ASHA, 150 seeds: 248 -> 208 median epochs to target.
size_t TpeSearcher::GoodGroupSize(const std::vector<DataPoint>& observed, bool multivariate) {
  const size_t n = observed.size();
  if (!multivariate) {
    return std::min(
        {static_cast<size_t>(std::ceil(0.1 * static_cast<double>(n))), kMaxGoodTrials, n});
  }
  int64_t fidelity = std::numeric_limits<int64_t>::min();
  for (const DataPoint& point : observed) fidelity = std::max(fidelity, point.epoch);
  const auto at_fidelity = static_cast<double>(
      std::count_if(observed.begin(), observed.end(),
                    [fidelity](const DataPoint& p) { return p.epoch == fidelity; }));
  const auto good = static_cast<size_t>(std::ceil(kGoodPerSqrtCount * std::sqrt(at_fidelity)));
  return std::min({good, kMaxGoodTrials, n});
}

TpeSearcher::TpeSearcher(const SweepConfig& config)
    : ModelBasedSearcher(config, kTpeStateTag, FingerprintNameOf(config), "TPE"),
      candidates_(CandidatesOf(config)),
      multivariate_(MultivariateOf(config)),
      prior_candidates_(PriorCandidatesOf(config)),
      groups_(ConditionGroups(config.sweep.parameters)) {}

bool TpeSearcher::MultivariateOf(const SweepConfig& config) {
  return config.search.model != BayesModel::kTpeIndependent;
}

int64_t TpeSearcher::CandidatesOf(const SweepConfig& config) {
  if (config.search.candidates_given || !PriorCandidatesOf(config)) return config.search.candidates;
  return config.search.model == BayesModel::kCurvesTpe ? kPredictedFinalsPriorCandidates
                                                       : kPriorCandidates;
}

bool TpeSearcher::PriorCandidatesOf(const SweepConfig& config) {
  return MultivariateOf(config) &&
         (config.sweep.early_terminate.enabled || PredictsCurves(config.search.model));
}

const char* TpeSearcher::FingerprintNameOf(const SweepConfig& config) {
  if (config.search.model == BayesModel::kCurvesTpe) return "curves_tpe";
  return MultivariateOf(config) ? "tpe" : "tpe_independent";
}

std::optional<Assignment> TpeSearcher::ModelSuggestion(int64_t trial_id,
                                                       std::vector<DataPoint> observed,
                                                       std::vector<DataPoint> pending) const {
  // Oldest first, so that the weights ramp down over the oldest trials (Optuna's order).
  const auto by_id = [](const DataPoint& a, const DataPoint& b) { return a.trial_id < b.trial_id; };
  if (!std::is_sorted(observed.begin(), observed.end(), by_id)) {
    std::sort(observed.begin(), observed.end(), by_id);
  }
  if (!std::is_sorted(pending.begin(), pending.end(), by_id)) {
    std::sort(pending.begin(), pending.end(), by_id);
  }
  const std::vector<ParameterSpec>& parameters = history().parameters();
  const std::vector<ModelDimension>& dimensions = history().dimensions();
  // One split per condition group, on the trials where the group is present (all of them
  // without conditions: one group).
  std::vector<GroupSplit> splits;
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (groups_[i] < splits.size()) continue;
    splits.push_back(SplitGroup(ActiveAt(observed, i), ActiveAt(pending, i), multivariate_));
  }

  std::mt19937_64 rng(DeriveSeed(seed(), kTpePurpose, static_cast<uint64_t>(trial_id)));
  std::vector<double> chosen(parameters.size(), 0.0);
  if (multivariate_) {
    for (size_t group = 0; group < splits.size(); ++group) {
      // The group's own dimensions; the others fixed, so that the estimators ignore them.
      std::vector<ModelDimension> group_dimensions(dimensions.size());
      for (size_t i = 0; i < dimensions.size(); ++i) {
        if (groups_[i] == group) group_dimensions[i] = dimensions[i];
      }
      const GroupSplit& split = splits[group];
      const std::vector<double> point =
          BestJointCandidate(group_dimensions, split.good, split.good_points, split.bad_points,
                             split.bad_pending, candidates_, prior_candidates_, rng);
      for (size_t i = 0; i < dimensions.size(); ++i) {
        if (groups_[i] == group) chosen[i] = point[i];
      }
    }
  } else {
    for (size_t i = 0; i < parameters.size(); ++i) {
      const ModelDimension& dimension = dimensions[i];
      const GroupSplit& split = splits[groups_[i]];
      if (dimension.kind == ModelDimension::Kind::kNumeric) {
        const NumericParzenEstimator good_model(dimension, CoordinatesAt(split.good_points, i));
        const NumericParzenEstimator bad_model(dimension, CoordinatesAt(split.bad_points, i));
        chosen[i] = BestCandidate(good_model, bad_model, candidates_, rng);
      } else if (dimension.kind == ModelDimension::Kind::kCategorical) {
        const CategoricalParzenEstimator good_model(dimension, CoordinatesAt(split.good_points, i));
        const CategoricalParzenEstimator bad_model(dimension, CoordinatesAt(split.bad_points, i));
        chosen[i] = BestCandidate(good_model, bad_model, candidates_, rng);
      }
    }
  }
  Assignment assignment;
  for (size_t i = 0; i < parameters.size(); ++i) {
    assignment.push_back(
        {parameters[i].name, DecodeValue(parameters[i], dimensions[i], chosen[i])});
  }
  return assignment;
}

}  // namespace hpo
