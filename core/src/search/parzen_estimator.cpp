#include "parzen_estimator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "gaussian.hpp"

namespace hpo {

namespace {

// Optuna's defaults.
constexpr double kPriorWeight = 1.0;
constexpr size_t kFlatWeightCount = 25;
constexpr double kMagicClipMaxKernels = 100.0;

constexpr double kInverseSqrtTwoPi = 0.39894228040143267794;
constexpr double kSqrtHalf = 0.70710678118654752440;
// Beyond this many standard deviations a kernel adds less than 1e-17 of the prior kernel's share
// to a density: its scale is at most a few hundred times the prior's (bandwidth at least 1/100
// of the range, weight at most the prior's), its exp(-z^2 / 2) at most 2e-22, and the prior's
// at least exp(-4.5) anywhere in the range.
constexpr double kNegligibleDistance = 10.0;
constexpr double kNegligibleSquaredDistance = kNegligibleDistance * kNegligibleDistance;

// Index of the entry of `cumulative` (ascending, last entry the total) that u * total falls in.
size_t PickIndex(const std::vector<double>& cumulative, std::mt19937_64& rng) {
  const double target = OpenUnitUniform(rng) * cumulative.back();
  const auto found = std::upper_bound(cumulative.begin(), cumulative.end(), target);
  return std::min(static_cast<size_t>(found - cumulative.begin()), cumulative.size() - 1);
}

// The normalised mixture weights: the observations' weights, then the prior's.
std::vector<double> MixtureWeights(size_t observation_count) {
  std::vector<double> weights = TpeObservationWeights(observation_count);
  weights.push_back(kPriorWeight);
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  for (double& weight : weights) weight /= total;
  return weights;
}

// A standard normal draw truncated to [a, b] by inversion, drawn in the lower tail (mirrored when
// the whole interval lies above 0) where the CDF keeps its precision.
double TruncatedStandardNormal(double a, double b, std::mt19937_64& rng) {
  if (a > 0.0) return -TruncatedStandardNormal(-b, -a, rng);
  const double lower = NormalCdf(a);
  const double upper = NormalCdf(b);
  const double z = InverseNormalCdf(lower + OpenUnitUniform(rng) * (upper - lower));
  return std::clamp(z, a, b);
}

// The standard normal mass of [a, b], a <= b, with an absolute error near 1e-16 (erf has no
// cancellation near 0, where the mass that matters lies).
double StandardNormalMass(double a, double b) {
  return 0.5 * (std::erf(b * kSqrtHalf) - std::erf(a * kSqrtHalf));
}

}  // namespace

std::vector<double> TpeObservationWeights(size_t count) {
  std::vector<double> weights(count, 1.0);
  if (count < kFlatWeightCount) return weights;
  const size_t ramp = count - kFlatWeightCount;
  const double first = 1.0 / static_cast<double>(count);
  for (size_t i = 0; i < ramp; ++i) {
    weights[i] =
        ramp == 1 ? first
                  : first + (1.0 - first) * static_cast<double>(i) / static_cast<double>(ramp - 1);
  }
  return weights;
}

double OpenUnitUniform(std::mt19937_64& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
}

NumericParzenEstimator::NumericParzenEstimator(const ModelDimension& dimension,
                                               const std::vector<double>& coordinates)
    : low_(dimension.low), high_(dimension.high), step_(dimension.step) {
  const size_t count = coordinates.size();
  const double range = high_ - low_ + step_;

  // Bandwidths from the neighbours among the observations and the prior mean, in sorted order.
  std::vector<double> points = coordinates;
  points.push_back(dimension.prior_mu);
  std::vector<size_t> order(points.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&points](size_t a, size_t b) { return points[a] < points[b]; });
  const size_t sorted_count = points.size();
  std::vector<double> ends(sorted_count + 2);
  ends.front() = low_ - 0.5 * step_;
  ends.back() = high_ + 0.5 * step_;
  for (size_t i = 0; i < sorted_count; ++i) ends[i + 1] = points[order[i]];
  std::vector<double> sorted_sigmas(sorted_count);
  for (size_t i = 0; i < sorted_count; ++i) {
    sorted_sigmas[i] = std::max(ends[i + 1] - ends[i], ends[i + 2] - ends[i + 1]);
  }
  if (sorted_count >= 2) {
    sorted_sigmas.front() = ends[2] - ends[1];
    sorted_sigmas.back() = ends[sorted_count] - ends[sorted_count - 1];
  }
  std::vector<double> sigmas(sorted_count);
  for (size_t i = 0; i < sorted_count; ++i) sigmas[order[i]] = sorted_sigmas[i];
  const double min_sigma =
      range / std::min(kMagicClipMaxKernels, 1.0 + static_cast<double>(count + 1));
  for (size_t i = 0; i < count; ++i) sigmas[i] = std::clamp(sigmas[i], min_sigma, range);

  mus_ = coordinates;
  mus_.push_back(dimension.prior_mu);
  sigmas.back() = dimension.prior_sigma;
  inverse_sigmas_.resize(sigmas.size());
  for (size_t i = 0; i < sigmas.size(); ++i) inverse_sigmas_[i] = 1.0 / sigmas[i];
  sigmas_ = std::move(sigmas);

  // Every kernel's mean lies inside the range and its bandwidth is at most the range (the prior's
  // at most 6 of its own for normal-family parameters), so its mass inside is well above 0.
  const std::vector<double> weights = MixtureWeights(count);
  const double lower = low_ - 0.5 * step_;
  const double upper = high_ + 0.5 * step_;
  double total = 0.0;
  for (size_t i = 0; i < mus_.size(); ++i) {
    const double mass = StandardNormalMass((lower - mus_[i]) * inverse_sigmas_[i],
                                           (upper - mus_[i]) * inverse_sigmas_[i]);
    double scale = weights[i] / mass;
    if (step_ == 0.0) scale *= inverse_sigmas_[i] * kInverseSqrtTwoPi;
    scales_.push_back(scale);
    total += weights[i];
    cumulative_weights_.push_back(total);
  }
}

double NumericParzenEstimator::Sample(std::mt19937_64& rng) const {
  const size_t kernel = PickIndex(cumulative_weights_, rng);
  const double mu = mus_[kernel];
  const double sigma = sigmas_[kernel];
  const double lower = low_ - 0.5 * step_;
  const double upper = high_ + 0.5 * step_;
  const double x =
      mu + sigma * TruncatedStandardNormal((lower - mu) / sigma, (upper - mu) / sigma, rng);
  if (step_ > 0.0) return std::clamp(std::round(x), low_, high_);
  return std::clamp(x, low_, high_);
}

double NumericParzenEstimator::LogDensity(double coordinate) const {
  // Summed in linear space: the prior kernel, wide and centred, keeps the sum far from underflow
  // anywhere in the range. Kernels too far away to add anything are skipped.
  double density = 0.0;
  for (size_t i = 0; i < mus_.size(); ++i) {
    const double z = (coordinate - mus_[i]) * inverse_sigmas_[i];
    if (step_ == 0.0) {
      if (z * z < kNegligibleSquaredDistance) density += scales_[i] * std::exp(-0.5 * z * z);
    } else {
      const double half_cell = 0.5 * step_ * inverse_sigmas_[i];
      if (std::abs(z) - half_cell < kNegligibleDistance) {
        density += scales_[i] * StandardNormalMass(z - half_cell, z + half_cell);
      }
    }
  }
  return std::log(density);
}

CategoricalParzenEstimator::CategoricalParzenEstimator(const ModelDimension& dimension,
                                                       const std::vector<double>& categories) {
  const std::vector<double>& prior = dimension.prior_probabilities;
  const size_t count = categories.size();
  const std::vector<double> weights = MixtureWeights(count);
  // Each observation's row: smoothing * prior + 1 at its category, divided by smoothing + 1.
  const double smoothing =
      kPriorWeight * static_cast<double>(prior.size()) / static_cast<double>(count + 1);
  const double observed_weight = 1.0 - weights.back();
  probabilities_.resize(prior.size());
  for (size_t j = 0; j < prior.size(); ++j) {
    probabilities_[j] =
        prior[j] * (observed_weight * smoothing / (smoothing + 1.0) + weights.back());
  }
  for (size_t i = 0; i < count; ++i) {
    const auto category = static_cast<size_t>(std::llround(categories[i]));
    probabilities_[std::min(category, prior.size() - 1)] += weights[i] / (smoothing + 1.0);
  }
}

double CategoricalParzenEstimator::Sample(std::mt19937_64& rng) const {
  std::vector<double> cumulative(probabilities_.size());
  std::partial_sum(probabilities_.begin(), probabilities_.end(), cumulative.begin());
  return static_cast<double>(PickIndex(cumulative, rng));
}

double CategoricalParzenEstimator::LogDensity(double category) const {
  const auto index = static_cast<size_t>(std::llround(category));
  return std::log(probabilities_[std::min(index, probabilities_.size() - 1)]);
}

}  // namespace hpo
