// Private to hpo_core: the standard normal distribution's functions that the model-based (TPE)
// and quasi-random (Sobol) searchers need beyond <cmath>. Pure functions; thread-safe.
#pragma once

namespace hpo {

// 1 / sqrt(2), for erf and erfc of standard normal deviates.
inline constexpr double kSqrtHalf = 0.70710678118654752440;

// Phi(z), the standard normal cumulative distribution function.
double NormalCdf(double z);

// Phi^-1(p) for p in (0, 1) (Acklam's rational approximation refined by one Halley step, relative
// error below 1e-15); -inf for p <= 0 and +inf for p >= 1.
double InverseNormalCdf(double p);

}  // namespace hpo
