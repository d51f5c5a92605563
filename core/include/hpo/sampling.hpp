// Drawing one value from a W&B parameter distribution. Deterministic for a given generator state
// (libstdc++'s distributions), so the same seed suggests the same trials. Thread-compatible: the
// caller owns the generator.
#pragma once

#include <random>

#include "hpo/config.hpp"
#include "hpo/param.hpp"

namespace hpo {

// Draws a value of spec.type from spec's distribution. int_uniform is inclusive of both ends;
// q_* distributions round to the nearest multiple of q (W&B semantics) and clamp into [min, max]
// where the distribution has bounds.
ParamValue SampleParameter(const ParameterSpec& spec, std::mt19937_64& rng);

}  // namespace hpo
