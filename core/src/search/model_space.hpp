// Private to hpo_core: how the model-based searchers (TPE) see each W&B parameter. A parameter
// becomes one model dimension:
//   * kFixed: a constant, a single-valued categorical or a range of width zero; always one value.
//   * kCategorical: categorical (with or without probabilities); the coordinate is the index into
//     `values`, and the prior is uniform or the configured probabilities.
//   * kNumeric with step 1: a grid; int_uniform counts the integers from min, q_uniform and q_beta
//     count the multiples of q inside the bounds, so rounding the coordinate rounds the value.
//   * kNumeric with step 0: a continuous coordinate in the value's natural space (uniform, beta,
//     normal, q_normal) or in log space (log_uniform*, q_log_uniform*, inv_log_uniform*,
//     log_normal, q_log_normal); decoding quantizes q_* values to multiples of q afterwards.
// Normal-family parameters (normal, q_normal, log_normal, q_log_normal) are modelled on
// [mu - 3 sigma, mu + 3 sigma] (in log space for the log_* ones) with the configured Gaussian
// N(mu, sigma) as the prior kernel; values outside that range (random start-up draws) are
// clamped onto it when they are encoded. Every other numeric prior is Optuna's: centred on the
// range with a width of the whole range. Plain values; thread-safe as values.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/param.hpp"

namespace hpo {

struct ModelDimension {
  enum class Kind { kFixed, kNumeric, kCategorical };
  Kind kind = Kind::kFixed;
  ParamValue fixed_value;  // kFixed

  // kNumeric: the coordinate's range and grid step (1 for grids, 0 for continuous).
  double low = 0.0;
  double high = 0.0;
  double step = 0.0;
  double prior_mu = 0.0;
  double prior_sigma = 1.0;
  int64_t grid_first = 0;  // grids: the integer, or the multiple of q, that coordinate 0 stands for

  std::vector<double> prior_probabilities;  // kCategorical: one per value, summing to 1
};

// The dimension for `spec`. Precondition: spec passed the config parser's checks.
ModelDimension DimensionOf(const ParameterSpec& spec);
// DimensionOf each parameter, in order.
std::vector<ModelDimension> ModelDimensionsOf(const std::vector<ParameterSpec>& parameters);

// The coordinate of `value` (clamped into the numeric range), or nullopt when the value cannot
// be the parameter's (a string for a numeric parameter, NaN, a value not among `values`).
// kFixed dimensions encode every value as 0.
std::optional<double> EncodeValue(const ParameterSpec& spec, const ModelDimension& dimension,
                                  const ParamValue& value);

// The parameter value at `coordinate`: of spec.type, inside the distribution's support, a
// multiple of q for q_* distributions and one of `values` for categoricals. Grid and category
// coordinates are rounded to the nearest index inside the range.
ParamValue DecodeValue(const ParameterSpec& spec, const ModelDimension& dimension,
                       double coordinate);

// `value` moved into [smallest positive double, largest double], as log_normal draws are kept.
double PositiveFinite(double value);

}  // namespace hpo
