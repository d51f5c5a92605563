// Drawing one value from a W&B parameter distribution. Deterministic for a given generator state
// (libstdc++'s distributions), so the same seed suggests the same trials. Thread-compatible: the
// caller owns the generator.
#pragma once

#include <optional>
#include <random>

#include "hpo/config.hpp"
#include "hpo/param.hpp"

namespace hpo {

// Draws a value of spec.type from spec's distribution. int_uniform is inclusive of both ends;
// q_* distributions round to the nearest multiple of q (W&B semantics) and clamp into [min, max]
// where the distribution has bounds.
ParamValue SampleParameter(const ParameterSpec& spec, std::mt19937_64& rng);

// The multiple of q nearest to `value` (W&B's rounding of q_* values).
double RoundToMultiple(double value, double q);
// The multiple of q nearest to `value` inside [lower, upper], as SampleParameter rounds bounded
// q_* draws; the bound itself when the interval holds no multiple of q (the config parser rejects
// such ranges).
double RoundToMultipleWithin(double value, double q, double lower, double upper);

// An interval of the real line; an end is open when the values approach it but never reach it.
struct ValueInterval {
  double lower = 0.0;
  double upper = 0.0;
  bool lower_open = false;
  bool upper_open = false;

  // True when every value of `inner` lies in this interval.
  bool Contains(const ValueInterval& inner) const;
};

// An interval holding every value SampleParameter can draw from `spec`, so the config parser can
// check a distribution against a hyperparameter's valid range. Unbounded distributions reach
// -inf/+inf (open ends). Precondition: spec.type is kInt or kFloat.
ValueInterval SupportOf(const ParameterSpec& spec);

// `value` as a value of `spec`'s type when `spec` could have drawn it: one of its `values` (a
// number equal to one of them counts), or a number within SupportOf(spec), integral for an
// integer parameter (q grids are not checked); nullopt otherwise (a string for a number, outside).
std::optional<ParamValue> ValueInSpace(const ParameterSpec& spec, const ParamValue& value);

}  // namespace hpo
