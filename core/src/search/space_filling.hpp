// Private to hpo_core: space-filling draws over a W&B parameter space, for `search.sampler: sobol`
// (SobolSearcher) and for the start-up trials of the model-based searchers (StartupDesign).
#pragma once

#include <cstdint>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/param.hpp"
#include "sobol.hpp"

namespace hpo {

// Whether `spec` has an inverse CDF that ParameterQuantile can evaluate: every distribution but
// constant, beta and q_beta.
bool HasQuantile(const ParameterSpec& spec);

// The value of `spec`'s distribution at quantile u in (0, 1): min + u (max - min) for uniform
// ranges (in log space for the log and inverse-log ones, then rounded to multiples of q inside
// the bounds for q_*); int_uniform's floor(u * count)-th integer; categorical's floor(u * n)-th
// value (with probabilities: the value whose cumulative probability interval holds u);
// normal-family values through the inverse normal CDF. Precondition: HasQuantile(spec).
ParamValue ParameterQuantile(const ParameterSpec& spec, double u);

// The start-up trials of method bayes (ModelBasedSearcher). With RandomSampler::kIndependent (the
// default) trial k is exactly RandomSearcher's trial k for the same seed. With kSobol
// (`search.sampler: sobol`) it is a design that covers the space instead of i.i.d. draws.
// Trial k, for parameter p:
//  * a categorical without probabilities takes balanced draws: trials [b n, (b + 1) n) of its n
//    values are a permutation of them, drawn from DeriveSeed(seed, kBalancedPurpose + p, b), so
//    the first k n trials hold every value exactly k times;
//  * every other parameter with a quantile (HasQuantile), up to the first
//    ScrambledSobolSequence::kMaxDimensions of them in config order, takes one dimension of a
//    scrambled Sobol' sequence (scramble seed DeriveSeed(seed, kStartupSobolPurpose, 0)) through
//    ParameterQuantile: the first 2^m trials put one value in each 2^-m-quantile of it;
//  * the rest (constants, beta, q_beta, and numeric parameters beyond the sequence's dimensions)
//    are drawn as random search draws them, from DeriveSeed(seed, kSamplingPurpose, k).
// Trial k depends only on (seed, k), so a resumed sweep continues it without state. Immutable
// after construction; thread-safe for concurrent const use.
class StartupDesign {
 public:
  StartupDesign(std::vector<ParameterSpec> parameters, uint64_t seed, RandomSampler sampler);

  // Trial `trial_id`'s values, in config order. Precondition: trial_id >= 0.
  Assignment TrialAt(int64_t trial_id) const;

 private:
  enum class Source { kBalanced, kSequence, kRandom };

  std::vector<ParameterSpec> parameters_;
  std::vector<Source> sources_;  // per parameter
  uint64_t seed_;
  ScrambledSobolSequence sequence_;
};

}  // namespace hpo
