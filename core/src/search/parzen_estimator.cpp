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

namespace hpo {

namespace {

constexpr double kLogInverseSqrtTwoPi = -0.91893853320467274178;
// Below this half cell width (in bandwidths) and distance a grid kernel's log cell mass is taken
// from its density at the cell's centre with the second-order correction, log(2 h phi(z)) +
// log(1 + x), x = (z^2 - 1) h^2 / 6, log(1 + x) ~ x - x^2 / 2: error under 1e-4 there (the next
// terms are O(h^4 z^4)), and kernels farther away add nothing next to nearer ones and the prior.
constexpr double kSmallHalfCell = 0.1;
constexpr double kSmallHalfCellMaxZ = 6.0;
// exp of a kernel's log share below this (relative to the largest) is dropped: under 1e-43.
constexpr double kNegligibleLogShare = -100.0;

// log of the standard normal mass of [z - h, z + h], h > 0.
double LogCellMass(double z, double h) {
  const double a = std::min(std::abs(z - h), std::abs(z + h));
  const double b = std::max(std::abs(z - h), std::abs(z + h));
  if ((z - h) * (z + h) > 0.0) {  // one side of 0: erfc keeps its precision in the tail
    return std::log(0.5 * (std::erfc(a * kSqrtHalf) - std::erfc(b * kSqrtHalf)));
  }
  return std::log(StandardNormalMass(z - h, z + h));
}

// log of the standard normal mass of [a, b], a <= b, precise in both tails; 0 when the
// interval holds all but under 1e-17 of the mass.
constexpr double kWholeMassDistance = 8.5;
double LogMass(double a, double b) {
  if (a < -kWholeMassDistance && b > kWholeMassDistance) return 0.0;
  if (a < -kWholeMassDistance) return std::log1p(-0.5 * std::erfc(b * kSqrtHalf));
  if (b > kWholeMassDistance) return std::log1p(-0.5 * std::erfc(-a * kSqrtHalf));
  if (a > 0.0) return std::log(0.5 * (std::erfc(a * kSqrtHalf) - std::erfc(b * kSqrtHalf)));
  if (b < 0.0) return std::log(0.5 * (std::erfc(-b * kSqrtHalf) - std::erfc(-a * kSqrtHalf)));
  return std::log(StandardNormalMass(a, b));
}

// The observations' standard deviation in dimension `d` (with n - 1 in the denominator).
double StandardDeviation(const std::vector<const std::vector<double>*>& points, size_t d) {
  double mean = 0.0;
  for (const std::vector<double>* point : points) mean += (*point)[d];
  mean /= static_cast<double>(points.size());
  double variance = 0.0;
  for (const std::vector<double>* point : points) {
    variance += ((*point)[d] - mean) * ((*point)[d] - mean);
  }
  return std::sqrt(variance / static_cast<double>(points.size() - 1));
}

}  // namespace

MultivariateParzenEstimator::MultivariateParzenEstimator(
    const std::vector<ModelDimension>& dimensions,
    const std::vector<const std::vector<double>*>& points, const Options& options)
    : dimension_count_(dimensions.size()),
      sample_prior_(options.sample_prior),
      bandwidths_(dimensions.size(), 0.0) {
  const size_t count = points.size();
  size_t modelled = 0;
  for (const ModelDimension& dimension : dimensions) {
    if (dimension.kind != ModelDimension::Kind::kFixed) ++modelled;
  }
  WeighKernels(count, options);
  const double shrink =
      std::pow(static_cast<double>(std::max<size_t>(count, 1)), -1.0 / (modelled + 4.0));
  for (size_t d = 0; d < dimensions.size(); ++d) {
    const ModelDimension& dimension = dimensions[d];
    if (dimension.kind == ModelDimension::Kind::kNumeric) {
      numeric_.push_back(ModelNumeric(d, dimension, points, options, shrink));
    } else if (dimension.kind == ModelDimension::Kind::kCategorical) {
      categorical_.push_back(ModelCategorical(d, dimension, points, options.prior_weight));
    }
  }
}

void MultivariateParzenEstimator::WeighKernels(size_t count, const Options& options) {
  const size_t kernels = count + 1;
  std::vector<double> weights =
      options.weights != nullptr ? *options.weights : TpeObservationWeights(count);
  weights.resize(count, 1.0);
  weights.push_back(options.prior_weight);
  const double total_weight = std::accumulate(weights.begin(), weights.end(), 0.0);
  log_constants_.resize(kernels);
  double cumulative = 0.0;
  for (size_t k = 0; k < kernels; ++k) {
    log_constants_[k] = std::log(weights[k] / total_weight);
    cumulative += weights[k];
    cumulative_weights_.push_back(cumulative);
  }
}

MultivariateParzenEstimator::NumericDimension MultivariateParzenEstimator::ModelNumeric(
    size_t d, const ModelDimension& dimension,
    const std::vector<const std::vector<double>*>& points, const Options& options, double shrink) {
  const size_t count = points.size();
  const size_t kernels = count + 1;
  NumericDimension numeric;
  numeric.index = d;
  numeric.low = dimension.low;
  numeric.high = dimension.high;
  numeric.step = dimension.step;
  const double range = dimension.high - dimension.low + dimension.step;
  const double spread = options.scott && count >= 2 ? StandardDeviation(points, d) : range;
  const double min_sigma =
      range / std::min(kMagicClipMaxKernels, 1.0 + static_cast<double>(kernels));
  const double sigma = std::clamp(options.bandwidth_factor * shrink * spread, min_sigma, range);
  numeric.mus.reserve(kernels);
  for (const std::vector<double>* point : points) numeric.mus.push_back((*point)[d]);
  numeric.mus.push_back(dimension.prior_mu);
  bandwidths_[d] = sigma;
  numeric.sigmas.assign(kernels, sigma);
  numeric.sigmas.back() = dimension.prior_sigma;
  if (options.narrow != nullptr && options.narrow_bandwidths != nullptr) {
    const double narrow_sigma = std::clamp((*options.narrow_bandwidths)[d], min_sigma, range);
    for (size_t k = 0; k < count && k < options.narrow->size(); ++k) {
      if ((*options.narrow)[k]) numeric.sigmas[k] = narrow_sigma;
    }
  }
  for (double s : numeric.sigmas) numeric.inverse_sigmas.push_back(1.0 / s);
  NormaliseNumericKernels(sigma, &numeric);
  return numeric;
}

void MultivariateParzenEstimator::NormaliseNumericKernels(double shared_sigma,
                                                          NumericDimension* numeric) {
  const double lower = numeric->low - 0.5 * numeric->step;
  const double upper = numeric->high + 0.5 * numeric->step;
  // The observation kernels share one bandwidth (but the narrow ones): its log is taken once.
  const double log_inverse = std::log(1.0 / shared_sigma);
  for (size_t k = 0; k < numeric->mus.size(); ++k) {
    const double inverse = numeric->inverse_sigmas[k];
    const double mu = numeric->mus[k];
    const double log_density =
        (numeric->sigmas[k] == shared_sigma ? log_inverse : std::log(inverse)) +
        kLogInverseSqrtTwoPi;
    log_constants_[k] -= LogMass((lower - mu) * inverse, (upper - mu) * inverse);
    if (numeric->step == 0.0) {
      log_constants_[k] += log_density;
    } else {
      numeric->half_cells.push_back(0.5 * numeric->step * inverse);
      numeric->log_cells.push_back(std::log(numeric->step) + log_density);
    }
  }
}

MultivariateParzenEstimator::CategoricalDimension MultivariateParzenEstimator::ModelCategorical(
    size_t d, const ModelDimension& dimension,
    const std::vector<const std::vector<double>*>& points, double prior_weight) {
  const std::vector<double>& prior = dimension.prior_probabilities;
  const size_t count = points.size();
  const size_t kernels = count + 1;
  const size_t categories = prior.size();
  CategoricalDimension categorical;
  categorical.index = d;
  categorical.categories = categories;
  // Each observation's row: smoothing * prior + 1 at its category, divided by smoothing + 1;
  // the prior kernel's row is the prior.
  const double smoothing =
      prior_weight * static_cast<double>(categories) / static_cast<double>(count + 1);
  categorical.log_probabilities.resize(kernels * categories);
  categorical.cumulative.resize(kernels * categories);
  std::vector<double> unobserved(categories);   // an observation kernel's row, off it
  std::vector<double> observed_at(categories);  // and at the observed category
  std::vector<double> log_unobserved(categories);
  std::vector<double> log_observed_at(categories);
  for (size_t j = 0; j < categories; ++j) {
    unobserved[j] = smoothing * prior[j] / (smoothing + 1.0);
    observed_at[j] = (smoothing * prior[j] + 1.0) / (smoothing + 1.0);
    log_unobserved[j] = std::log(unobserved[j]);
    log_observed_at[j] = std::log(observed_at[j]);
  }
  for (size_t k = 0; k < kernels; ++k) {
    size_t observed = categories;  // none for the prior kernel
    if (k < count) {
      observed = std::min(static_cast<size_t>(std::llround((*points[k])[d])), categories - 1);
    }
    double running = 0.0;
    for (size_t j = 0; j < categories; ++j) {
      double probability = prior[j];
      double log_probability = 0.0;
      if (k == count) {
        log_probability = std::log(probability);
      } else if (j == observed) {
        probability = observed_at[j], log_probability = log_observed_at[j];
      } else {
        probability = unobserved[j], log_probability = log_unobserved[j];
      }
      categorical.log_probabilities[k * categories + j] = log_probability;
      running += probability;
      categorical.cumulative[k * categories + j] = running;
    }
  }
  return categorical;
}

void MultivariateParzenEstimator::Sample(std::mt19937_64& rng, std::vector<double>* point) const {
  point->assign(dimension_count_, 0.0);
  // Without the prior, the last observation kernel's cumulative weight is the total to draw in.
  const size_t kernels = cumulative_weights_.size();
  const bool prior = sample_prior_ || kernels == 1;
  const double total = cumulative_weights_[prior ? kernels - 1 : kernels - 2];
  const double target = OpenUnitUniform(rng) * total;
  const auto found =
      std::upper_bound(cumulative_weights_.begin(),
                       cumulative_weights_.begin() + (prior ? kernels : kernels - 1), target);
  const size_t kernel = std::min(static_cast<size_t>(found - cumulative_weights_.begin()),
                                 prior ? kernels - 1 : kernels - 2);
  for (const NumericDimension& numeric : numeric_) {
    const double mu = numeric.mus[kernel];
    const double sigma = numeric.sigmas[kernel];
    const double lower = numeric.low - 0.5 * numeric.step;
    const double upper = numeric.high + 0.5 * numeric.step;
    double x =
        mu + sigma * TruncatedStandardNormal((lower - mu) / sigma, (upper - mu) / sigma, rng);
    if (numeric.step > 0.0) x = std::round(x);
    (*point)[numeric.index] = std::clamp(x, numeric.low, numeric.high);
  }
  for (const CategoricalDimension& categorical : categorical_) {
    const auto first = categorical.cumulative.begin() + kernel * categorical.categories;
    const std::vector<double> cumulative(first, first + categorical.categories);
    (*point)[categorical.index] = static_cast<double>(PickIndex(cumulative, rng));
  }
}

void MultivariateParzenEstimator::LogDensities(const double* points, size_t count, double* out,
                                               std::vector<double>* scratch) const {
  const size_t kernels = log_constants_.size();
  scratch->resize(kernels);
  double* exponents = scratch->data();
  for (size_t c = 0; c < count; ++c) {
    const double* point = points + c * dimension_count_;
    std::copy(log_constants_.begin(), log_constants_.end(), exponents);
    for (const NumericDimension& numeric : numeric_) {
      const double x = point[numeric.index];
      const double* mus = numeric.mus.data();
      const double* inverse = numeric.inverse_sigmas.data();
      if (numeric.step == 0.0) {
        for (size_t k = 0; k < kernels; ++k) {
          const double z = (x - mus[k]) * inverse[k];
          exponents[k] -= 0.5 * z * z;
        }
        continue;
      }
      const double* half_cells = numeric.half_cells.data();
      const double* log_cells = numeric.log_cells.data();
      for (size_t k = 0; k < kernels; ++k) {
        const double z = (x - mus[k]) * inverse[k];
        const double h = half_cells[k];
        if (h < kSmallHalfCell && std::abs(z) < kSmallHalfCellMaxZ) {
          const double correction = (z * z - 1.0) * h * h * (1.0 / 6.0);
          exponents[k] += log_cells[k] - 0.5 * z * z + correction - 0.5 * correction * correction;
        } else {
          exponents[k] += LogCellMass(z, h);
        }
      }
    }
    for (const CategoricalDimension& categorical : categorical_) {
      const auto category = static_cast<size_t>(point[categorical.index]);
      const double* log_probabilities = categorical.log_probabilities.data() + category;
      for (size_t k = 0; k < kernels; ++k) {
        exponents[k] += log_probabilities[k * categorical.categories];
      }
    }
    double max = -std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < kernels; ++k) max = std::max(max, exponents[k]);
    double sum = 0.0;
    for (size_t k = 0; k < kernels; ++k) {
      const double shifted = exponents[k] - max;
      if (shifted > kNegligibleLogShare) sum += std::exp(shifted);
    }
    out[c] = max + std::log(sum);
  }
}

}  // namespace hpo
