#include "model_space.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "search/sampling.hpp"

namespace hpo {

namespace {

// Half-width of the range normal-family parameters are modelled on, in standard deviations.
constexpr double kNormalRangeSigmas = 3.0;
// Tolerance for deciding which multiples of q lie inside [min, max] despite rounding of min / q.
constexpr double kGridTolerance = 1e-9;

bool IsGrid(Distribution distribution) {
  return distribution == Distribution::kIntUniform || distribution == Distribution::kQUniform ||
         distribution == Distribution::kQBeta;
}

bool IsNormalFamily(Distribution distribution) {
  return distribution == Distribution::kNormal || distribution == Distribution::kQNormal ||
         distribution == Distribution::kLogNormal || distribution == Distribution::kQLogNormal;
}

// The bounds that grids and clamps use; q_beta lives on [0, 1].
double LowerBound(const ParameterSpec& spec) {
  return spec.distribution == Distribution::kQBeta ? 0.0 : spec.min;
}
double UpperBound(const ParameterSpec& spec) {
  return spec.distribution == Distribution::kQBeta ? 1.0 : spec.max;
}

// The coordinate range of a continuous parameter: the natural or log space of its values.
void ContinuousRange(const ParameterSpec& spec, double* low, double* high) {
  switch (spec.distribution) {
    case Distribution::kUniform:
    case Distribution::kLogUniform:
    case Distribution::kQLogUniform:
      *low = spec.min, *high = spec.max;
      return;
    case Distribution::kLogUniformValues:
    case Distribution::kQLogUniformValues:
    case Distribution::kInvLogUniformValues:
      *low = std::log(spec.min), *high = std::log(spec.max);
      return;
    case Distribution::kInvLogUniform:
      *low = -spec.max, *high = -spec.min;
      return;
    case Distribution::kNormal:
    case Distribution::kQNormal:
    case Distribution::kLogNormal:
    case Distribution::kQLogNormal:
      *low = spec.mu - kNormalRangeSigmas * spec.sigma;
      *high = spec.mu + kNormalRangeSigmas * spec.sigma;
      return;
    default:  // beta
      *low = 0.0, *high = 1.0;
      return;
  }
}

// The coordinate of a numeric value before clamping (log space for the log-scale distributions).
double Transform(Distribution distribution, double value) {
  if (!IsLogScale(distribution)) return value;
  return value > 0.0 ? std::log(value) : -std::numeric_limits<double>::infinity();
}

ParamValue DecodeContinuous(const ParameterSpec& spec, double x) {
  const double min = spec.min;
  const double max = spec.max;
  switch (spec.distribution) {
    case Distribution::kUniform:
      return std::clamp(x, min, max);
    case Distribution::kLogUniform:
      return std::clamp(std::exp(x), std::exp(min), std::exp(max));
    case Distribution::kLogUniformValues:
    case Distribution::kInvLogUniformValues:
      return std::clamp(std::exp(x), min, max);
    case Distribution::kQLogUniform:
      return RoundToMultipleWithin(std::exp(x), spec.q, std::exp(min), std::exp(max));
    case Distribution::kQLogUniformValues:
      return RoundToMultipleWithin(std::exp(x), spec.q, min, max);
    case Distribution::kInvLogUniform:
      return std::clamp(std::exp(x), std::exp(-max), std::exp(-min));
    case Distribution::kNormal:
      return x;
    case Distribution::kQNormal:
      return RoundToMultiple(x, spec.q);
    case Distribution::kLogNormal:
      return PositiveFinite(std::exp(x));
    case Distribution::kQLogNormal:
      return RoundToMultiple(PositiveFinite(std::exp(x)), spec.q);
    default:  // beta: the open interval (0, 1)
      return std::clamp(x, std::numeric_limits<double>::denorm_min(), std::nextafter(1.0, 0.0));
  }
}

ModelDimension Fixed(ParamValue value) {
  ModelDimension dimension;
  dimension.kind = ModelDimension::Kind::kFixed;
  dimension.fixed_value = std::move(value);
  return dimension;
}

ModelDimension CategoricalDimension(const ParameterSpec& spec) {
  if (spec.values.size() == 1) return Fixed(spec.values.front());
  ModelDimension dimension;
  dimension.kind = ModelDimension::Kind::kCategorical;
  const size_t count = spec.values.size();
  if (spec.distribution == Distribution::kCategoricalWithProbabilities &&
      spec.probabilities.size() == count) {
    double total = 0.0;
    for (double probability : spec.probabilities) total += probability;
    for (double probability : spec.probabilities) {
      dimension.prior_probabilities.push_back(probability / total);
    }
  } else {
    dimension.prior_probabilities.assign(count, 1.0 / static_cast<double>(count));
  }
  dimension.high = static_cast<double>(count - 1);
  return dimension;
}

ModelDimension GridDimension(const ParameterSpec& spec) {
  int64_t first = 0;
  int64_t last = 0;
  if (spec.distribution == Distribution::kIntUniform) {
    first = std::llround(spec.min);
    last = std::llround(spec.max);
  } else {
    first = static_cast<int64_t>(std::ceil(LowerBound(spec) / spec.q - kGridTolerance));
    last = static_cast<int64_t>(std::floor(UpperBound(spec) / spec.q + kGridTolerance));
  }
  ModelDimension dimension;
  dimension.kind = ModelDimension::Kind::kNumeric;
  dimension.grid_first = first;
  dimension.step = 1.0;
  dimension.high = static_cast<double>(std::max<int64_t>(last - first, 0));
  if (dimension.high == 0.0) return Fixed(DecodeValue(spec, dimension, 0.0));
  dimension.prior_mu = 0.5 * dimension.high;
  dimension.prior_sigma = dimension.high + 1.0;
  return dimension;
}

}  // namespace

ModelDimension DimensionOf(const ParameterSpec& spec) {
  switch (spec.distribution) {
    case Distribution::kConstant:
      return Fixed(spec.values.front());
    case Distribution::kCategorical:
    case Distribution::kCategoricalWithProbabilities:
      return CategoricalDimension(spec);
    default:
      break;
  }
  if (IsGrid(spec.distribution)) return GridDimension(spec);
  ModelDimension dimension;
  dimension.kind = ModelDimension::Kind::kNumeric;
  ContinuousRange(spec, &dimension.low, &dimension.high);
  if (!(dimension.high > dimension.low)) return Fixed(DecodeContinuous(spec, dimension.low));
  if (IsNormalFamily(spec.distribution)) {
    dimension.prior_mu = spec.mu;
    dimension.prior_sigma = spec.sigma;
  } else {
    dimension.prior_mu = 0.5 * (dimension.low + dimension.high);
    dimension.prior_sigma = dimension.high - dimension.low;
  }
  return dimension;
}

std::vector<ModelDimension> ModelDimensionsOf(const std::vector<ParameterSpec>& parameters) {
  std::vector<ModelDimension> dimensions;
  dimensions.reserve(parameters.size());
  for (const ParameterSpec& parameter : parameters) dimensions.push_back(DimensionOf(parameter));
  return dimensions;
}

double PositiveFinite(double value) {
  return std::clamp(value, std::numeric_limits<double>::denorm_min(),
                    std::numeric_limits<double>::max());
}

std::optional<double> EncodeValue(const ParameterSpec& spec, const ModelDimension& dimension,
                                  const ParamValue& value) {
  switch (dimension.kind) {
    case ModelDimension::Kind::kFixed:
      return 0.0;
    case ModelDimension::Kind::kCategorical: {
      const double number = ParamAsDouble(value);
      for (size_t i = 0; i < spec.values.size(); ++i) {
        const bool numeric_match = !std::isnan(number) && ParamAsDouble(spec.values[i]) == number;
        if (spec.values[i] == value || numeric_match) return static_cast<double>(i);
      }
      return std::nullopt;
    }
    case ModelDimension::Kind::kNumeric:
      break;
  }
  const double number = ParamAsDouble(value);
  if (std::isnan(number)) return std::nullopt;
  double coordinate = 0.0;
  if (dimension.step > 0.0) {
    const double index =
        spec.distribution == Distribution::kIntUniform ? number : std::round(number / spec.q);
    coordinate = index - static_cast<double>(dimension.grid_first);
  } else {
    coordinate = Transform(spec.distribution, number);
  }
  return std::clamp(coordinate, dimension.low, dimension.high);
}

ParamValue DecodeValue(const ParameterSpec& spec, const ModelDimension& dimension,
                       double coordinate) {
  switch (dimension.kind) {
    case ModelDimension::Kind::kFixed:
      return dimension.fixed_value;
    case ModelDimension::Kind::kCategorical: {
      const double index = std::clamp(std::round(coordinate), 0.0, dimension.high);
      return spec.values[static_cast<size_t>(index)];
    }
    case ModelDimension::Kind::kNumeric:
      break;
  }
  if (dimension.step == 0.0) return DecodeContinuous(spec, coordinate);
  const int64_t index =
      dimension.grid_first + std::llround(std::clamp(coordinate, dimension.low, dimension.high));
  if (spec.distribution == Distribution::kIntUniform) return index;
  return std::clamp(static_cast<double>(index) * spec.q, LowerBound(spec), UpperBound(spec));
}

}  // namespace hpo
