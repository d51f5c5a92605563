// Sampling follows wandb/sweeps (src/sweeps/params.py, HyperParameter.ppf):
//   uniform U(min, max); int_uniform inclusive integers; q_* round(x / q) * q;
//   log_uniform exp(U(min, max)); log_uniform_values exp(U(ln min, ln max));
//   inv_log_uniform exp(-U(min, max)); inv_log_uniform_values exp(-U(-ln max, -ln min)), which is
//   log-uniform between the two values, as in W&B;
//   normal N(mu, sigma); log_normal exp(N(mu, sigma)); beta Beta(a, b).
// Where W&B can round a bounded q_* draw outside [min, max] (e.g. q_uniform min 0.1, q 1 -> 0),
// this version moves it to the nearest multiple of q inside the bounds instead, so every value
// stays in the range the config parser checked against the hyperparameter.
#include "search/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "common/infinity.hpp"

namespace hpo {

namespace {

double Uniform(double min, double max, std::mt19937_64& rng) {
  // libstdc++ can round a draw up to `max`; clamping keeps the closed interval exact.
  return std::clamp(std::uniform_real_distribution<double>(min, max)(rng), min, max);
}

double Normal(double mu, double sigma, std::mt19937_64& rng) {
  if (sigma == 0.0) return mu;
  return std::normal_distribution<double>(mu, sigma)(rng);
}

// exp(N(mu, sigma)) kept strictly positive and finite even where exp under- or overflows.
double LogNormal(double mu, double sigma, std::mt19937_64& rng) {
  return std::clamp(std::exp(Normal(mu, sigma, rng)), std::numeric_limits<double>::denorm_min(),
                    std::numeric_limits<double>::max());
}

// log(X) for X ~ Gamma(shape, 1). For shape < 1 it uses Gamma(shape) = Gamma(shape + 1) *
// U^(1/shape) in log space, so tiny shapes do not underflow to log(0).
double LogGamma(double shape, std::mt19937_64& rng) {
  if (shape >= 1.0) return std::log(std::gamma_distribution<double>(shape, 1.0)(rng));
  const double gamma = std::gamma_distribution<double>(shape + 1.0, 1.0)(rng);
  const double open_unit = 1.0 - std::generate_canonical<double, 64>(rng);  // in (0, 1]
  return std::log(gamma) + std::log(open_unit) / shape;
}

// Beta(a, b) = X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b), computed as 1 / (1 + Y / X) in log
// space and kept inside the open interval (0, 1) that is the distribution's support.
double Beta(double a, double b, std::mt19937_64& rng) {
  const double log_x = LogGamma(a, rng);
  const double log_y = LogGamma(b, rng);
  const double value = 1.0 / (1.0 + std::exp(log_y - log_x));
  return std::clamp(value, std::numeric_limits<double>::denorm_min(), std::nextafter(1.0, 0.0));
}

ValueInterval Closed(double lower, double upper) {
  return ValueInterval{lower, upper, false, false};
}

const ParamValue& PickUniformly(const std::vector<ParamValue>& values, std::mt19937_64& rng) {
  std::uniform_int_distribution<size_t> index(0, values.size() - 1);
  return values[index(rng)];
}

const ParamValue& PickWeighted(const std::vector<ParamValue>& values,
                               const std::vector<double>& probabilities, std::mt19937_64& rng) {
  std::discrete_distribution<size_t> index(probabilities.begin(), probabilities.end());
  return values[index(rng)];
}

}  // namespace

double RoundToMultiple(double value, double q) { return std::round(value / q) * q; }

double RoundToMultipleWithin(double value, double q, double lower, double upper) {
  double rounded = RoundToMultiple(value, q);
  if (rounded < lower) rounded = std::ceil(lower / q) * q;
  if (rounded > upper) rounded = std::floor(upper / q) * q;
  return std::clamp(rounded, lower, upper);
}

bool ValueInterval::Contains(const ValueInterval& inner) const {
  const bool lower_ok =
      inner.lower > lower || (inner.lower == lower && (inner.lower_open || !lower_open));
  const bool upper_ok =
      inner.upper < upper || (inner.upper == upper && (inner.upper_open || !upper_open));
  return lower_ok && upper_ok;
}

ParamValue SampleParameter(const ParameterSpec& spec, std::mt19937_64& rng) {
  const double min = spec.min;
  const double max = spec.max;
  switch (spec.distribution) {
    case Distribution::kConstant:
      return spec.values.front();
    case Distribution::kCategorical:
      return PickUniformly(spec.values, rng);
    case Distribution::kCategoricalWithProbabilities:
      return PickWeighted(spec.values, spec.probabilities, rng);
    case Distribution::kIntUniform: {
      std::uniform_int_distribution<int64_t> integers(std::llround(min), std::llround(max));
      return integers(rng);
    }
    case Distribution::kUniform:
      return Uniform(min, max, rng);
    case Distribution::kQUniform:
      return RoundToMultipleWithin(Uniform(min, max, rng), spec.q, min, max);
    case Distribution::kLogUniform:
      return std::clamp(std::exp(Uniform(min, max, rng)), std::exp(min), std::exp(max));
    case Distribution::kLogUniformValues:
      return std::clamp(std::exp(Uniform(std::log(min), std::log(max), rng)), min, max);
    case Distribution::kQLogUniform:
      return RoundToMultipleWithin(std::exp(Uniform(min, max, rng)), spec.q, std::exp(min),
                                   std::exp(max));
    case Distribution::kQLogUniformValues:
      return RoundToMultipleWithin(std::exp(Uniform(std::log(min), std::log(max), rng)), spec.q,
                                   min, max);
    case Distribution::kInvLogUniform:
      return std::clamp(std::exp(-Uniform(min, max, rng)), std::exp(-max), std::exp(-min));
    case Distribution::kInvLogUniformValues:
      return std::clamp(std::exp(-Uniform(-std::log(max), -std::log(min), rng)), min, max);
    case Distribution::kNormal:
      return Normal(spec.mu, spec.sigma, rng);
    case Distribution::kQNormal:
      return RoundToMultiple(Normal(spec.mu, spec.sigma, rng), spec.q);
    case Distribution::kLogNormal:
      return LogNormal(spec.mu, spec.sigma, rng);
    case Distribution::kQLogNormal:
      return RoundToMultiple(LogNormal(spec.mu, spec.sigma, rng), spec.q);
    case Distribution::kBeta:
      return Beta(spec.a, spec.b, rng);
    case Distribution::kQBeta:
      return RoundToMultipleWithin(Beta(spec.a, spec.b, rng), spec.q, 0.0, 1.0);
  }
  return spec.values.front();
}

ValueInterval SupportOf(const ParameterSpec& spec) {
  const double min = spec.min;
  const double max = spec.max;
  switch (spec.distribution) {
    case Distribution::kConstant:
    case Distribution::kCategorical:
    case Distribution::kCategoricalWithProbabilities: {
      ValueInterval interval = Closed(kInfinity, -kInfinity);
      for (const ParamValue& value : spec.values) {
        interval.lower = std::min(interval.lower, ParamAsDouble(value));
        interval.upper = std::max(interval.upper, ParamAsDouble(value));
      }
      return interval;
    }
    case Distribution::kIntUniform:
    case Distribution::kUniform:
    case Distribution::kQUniform:
    case Distribution::kLogUniformValues:
    case Distribution::kQLogUniformValues:
    case Distribution::kInvLogUniformValues:
      return Closed(min, max);
    case Distribution::kLogUniform:
    case Distribution::kQLogUniform:
      return Closed(std::exp(min), std::exp(max));
    case Distribution::kInvLogUniform:
      return Closed(std::exp(-max), std::exp(-min));
    case Distribution::kNormal:
      if (spec.sigma == 0.0) return Closed(spec.mu, spec.mu);
      return ValueInterval{-kInfinity, kInfinity, true, true};
    case Distribution::kQNormal:
      if (spec.sigma == 0.0) {
        const double value = RoundToMultiple(spec.mu, spec.q);
        return Closed(value, value);
      }
      return ValueInterval{-kInfinity, kInfinity, true, true};
    case Distribution::kLogNormal:
      if (spec.sigma == 0.0) return Closed(std::exp(spec.mu), std::exp(spec.mu));
      return ValueInterval{0.0, kInfinity, true, true};
    case Distribution::kQLogNormal:
      if (spec.sigma == 0.0) {
        const double value = RoundToMultiple(std::exp(spec.mu), spec.q);
        return Closed(value, value);
      }
      return ValueInterval{0.0, kInfinity, false, true};
    case Distribution::kBeta:
      return ValueInterval{0.0, 1.0, true, true};
    case Distribution::kQBeta:
      return Closed(0.0, 1.0);
  }
  return ValueInterval{-kInfinity, kInfinity, true, true};
}

std::optional<ParamValue> ValueInSpace(const ParameterSpec& spec, const ParamValue& value) {
  const double number = ParamAsDouble(value);
  if (spec.distribution == Distribution::kConstant ||
      spec.distribution == Distribution::kCategorical ||
      spec.distribution == Distribution::kCategoricalWithProbabilities) {
    for (const ParamValue& choice : spec.values) {
      if (choice == value || (!std::isnan(number) && ParamAsDouble(choice) == number)) {
        return choice;
      }
    }
    return std::nullopt;
  }
  if (std::isnan(number) || !SupportOf(spec).Contains(ValueInterval{number, number})) {
    return std::nullopt;
  }
  if (spec.type != ParamType::kInt) return ParamValue(number);
  if (number != std::round(number)) return std::nullopt;
  return ParamValue(static_cast<int64_t>(number));
}

}  // namespace hpo
