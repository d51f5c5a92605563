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

// The joint Parzen estimator of multivariate TPE (Falkner et al. 2018's BOHB, Optuna's
// `multivariate=True`): one kernel per observation over every modelled dimension at once (a
// product of one-dimensional kernels sharing one mixture weight), plus the prior kernel (each
// dimension's prior, as for the univariate estimators). Numeric kernels are Gaussians truncated
// to the range (grids: the mass of the point's cell) with one bandwidth per dimension for every
// observation kernel (see Options); categorical ones are the univariate estimator's smoothed
// distributions, one per observation. Sampling picks one kernel and draws every dimension from
// it, so the observations' correlations between parameters survive; the density is a
// log-sum-exp over the kernels. Immutable after construction; thread-safe for concurrent const
// use with separate generators and scratch.
class MultivariateParzenEstimator {
 public:
  struct Options {
    // Numeric bandwidth per dimension: bandwidth_factor * n^(-1 / (d + 4)) * spread, the spread
    // being the observations' standard deviation in that dimension (Scott's rule) when `scott`
    // is set and n >= 2, else the range (Optuna's multivariate rule, with factor 0.2); n counts
    // the observations, d the modelled dimensions. Clipped into [range / min(100, n + 2), range]
    // with range = high - low + step.
    double bandwidth_factor = 0.2;
    bool scott = false;
    // The prior kernel's weight beside the observations' (Optuna: 1), also the categorical
    // kernels' smoothing.
    double prior_weight = 1.0;
    // The observations' mixture weights (oldest first, as many as points); nullptr:
    // TpeObservationWeights. Not owned; only read by the constructor.
    const std::vector<double>* weights = nullptr;
    // Whether Sample draws from the prior kernel too (it always counts in LogDensities).
    bool sample_prior = true;
    // Observations (by index into points) whose kernels take `narrow_bandwidths` (one per
    // dimension, e.g. another estimator's bandwidths()) instead of the rule above: pending trials
    // under the constant liar, so that they push candidates away from themselves. Not owned.
    const std::vector<bool>* narrow = nullptr;
    const std::vector<double>* narrow_bandwidths = nullptr;
  };

  // `points`: the observations' full coordinate vectors (one entry per dimension, kFixed ones
  // ignored), oldest first. Precondition: every point has dimensions.size() coordinates inside
  // the dimensions' ranges.
  MultivariateParzenEstimator(const std::vector<ModelDimension>& dimensions,
                              const std::vector<const std::vector<double>*>& points,
                              const Options& options);

  // A draw from the mixture (without the prior kernel unless Options::sample_prior or there are
  // no observations) into `point`, resized to the dimension count; kFixed entries are 0.
  void Sample(std::mt19937_64& rng, std::vector<double>* point) const;
  // The log density (grid dimensions: log probability of the point's cell) of each of `count`
  // points stored row-major in `points` (dimensions.size() coordinates each) into out[0..count).
  // `scratch` is working memory (one double per kernel).
  void LogDensities(const double* points, size_t count, double* out,
                    std::vector<double>* scratch) const;

  size_t kernel_count() const { return log_constants_.size(); }
  // The observation kernels' bandwidth per dimension (0 for kFixed and categorical ones).
  const std::vector<double>& bandwidths() const { return bandwidths_; }

 private:
  struct NumericDimension {
    size_t index = 0;
    double low = 0.0;
    double high = 0.0;
    double step = 0.0;
    // Per kernel, the observations' first and the prior's last.
    std::vector<double> mus;
    std::vector<double> sigmas;
    std::vector<double> inverse_sigmas;
    // Grids, per kernel: half a cell in bandwidths, and log(step / (sigma sqrt(2 pi))).
    std::vector<double> half_cells;
    std::vector<double> log_cells;
  };
  struct CategoricalDimension {
    size_t index = 0;
    size_t categories = 0;
    std::vector<double> log_probabilities;  // kernel-major: kernel * categories + category
    std::vector<double> cumulative;         // the same probabilities, summed up per kernel
  };

  // log_constants_ from the kernels' normalised mixture weights, and cumulative_weights_.
  void WeighKernels(size_t count, const Options& options);
  // Dimension d's Gaussian kernels; sets bandwidths_[d] and folds their masses into
  // log_constants_ (NormaliseNumericKernels).
  NumericDimension ModelNumeric(size_t d, const ModelDimension& dimension,
                                const std::vector<const std::vector<double>*>& points,
                                const Options& options, double shrink);
  // Takes each kernel's log mass inside the range out of log_constants_, and adds its log
  // density factor there (continuous) or to its grid cells' log masses.
  void NormaliseNumericKernels(double shared_sigma, NumericDimension* numeric);
  // Dimension d's kernel rows: each observation's smoothed distribution, then the prior.
  static CategoricalDimension ModelCategorical(
      size_t d, const ModelDimension& dimension,
      const std::vector<const std::vector<double>*>& points, double prior_weight);

  size_t dimension_count_ = 0;
  bool sample_prior_ = true;
  std::vector<double> bandwidths_;
  std::vector<NumericDimension> numeric_;
  std::vector<CategoricalDimension> categorical_;
  // Per kernel: log of its normalised weight, less the log of its numeric masses inside the
  // ranges, plus log(1 / (sigma sqrt(2 pi))) per continuous dimension.
  std::vector<double> log_constants_;
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
