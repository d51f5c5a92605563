// Private to hpo_core: the univariate Parzen estimators of TPE, following Optuna's TPESampler
// (optuna/samplers/_tpe/parzen_estimator.py, independent sampling, its default settings:
// consider_prior, prior_weight 1, consider_magic_clip, no consider_endpoints, default_weights).
//
// Numeric: a mixture of one Gaussian kernel per observation plus the prior kernel, each truncated
// to the coordinate range ([low - 1/2, high + 1/2] for grids, whose mass per grid point is the
// kernel's mass of the point's cell). A kernel's bandwidth is the larger distance to its
// neighbours among the sorted observations and the prior mean, with the range ends as outer
// neighbours (the outermost kernels take their inner neighbour's distance instead), clipped into
// [range / min(100, kernels + 1), range] with range = high - low + step ("magic clip").
// Categorical: one smoothed distribution per observation, prior_weight * categories / (n + 1)
// times the prior probabilities plus 1 at the observed category, normalised, plus the prior.
// Mixture weights: Optuna's default_weights (older observations ramp down once there are more
// than 25), then the prior's weight 1, normalised. Immutable after construction; thread-safe for
// concurrent const use with separate generators.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

#include "model_space.hpp"

namespace hpo {

// Optuna's default_weights(n): n ones below 25; otherwise a linear ramp from 1/n to 1 over the
// oldest n - 25 and ones for the newest 25. Observations are ordered oldest first.
std::vector<double> TpeObservationWeights(size_t count);

// A uniform double in the open interval (0, 1) from 53 random bits (portable across standard
// libraries, unlike std::uniform_real_distribution).
double OpenUnitUniform(std::mt19937_64& rng);

class NumericParzenEstimator {
 public:
  // `coordinates`: the observations' coordinates inside [low, high], oldest first.
  // Precondition: dimension.kind is kNumeric with high > low or step > 0.
  NumericParzenEstimator(const ModelDimension& dimension, const std::vector<double>& coordinates);

  // A draw from the mixture; grid draws are rounded to the grid and clamped into [low, high].
  double Sample(std::mt19937_64& rng) const;
  // log density (continuous) or log probability (grid point) of `coordinate`.
  double LogDensity(double coordinate) const;

 private:
  double low_;
  double high_;
  double step_;
  // Per kernel, the observations' first and the prior's last.
  std::vector<double> mus_;
  std::vector<double> sigmas_;
  std::vector<double> inverse_sigmas_;
  // weight / mass inside the range (/ (sigma sqrt(2 pi)) when continuous).
  std::vector<double> scales_;
  std::vector<double> cumulative_weights_;  // for picking a kernel
};

class CategoricalParzenEstimator {
 public:
  // `categories`: the observations' category indices, oldest first.
  // Precondition: dimension.kind is kCategorical.
  CategoricalParzenEstimator(const ModelDimension& dimension,
                             const std::vector<double>& categories);

  double Sample(std::mt19937_64& rng) const;  // a category index
  double LogDensity(double category) const;   // log probability of a category index

 private:
  std::vector<double> probabilities_;  // the mixture's probability of each category
};

}  // namespace hpo
