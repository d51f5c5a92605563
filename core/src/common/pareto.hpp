// Several objectives: Pareto dominance, the hypervolume of a two-objective front, and ParEGO's
// scalarisation (Knowles 2006), over losses (every objective turned so that lower is better).
// Used by the searchers (ParEGO), the report (the front) and the benchmarks (hypervolume). Pure
// functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hpo {

// Whether loss vector `a` dominates `b`: no worse in every objective and better in one. Both
// have the same size; a vector holding a NaN dominates nothing and is dominated by any finite one.
bool Dominates(const std::vector<double>& a, const std::vector<double>& b);

// The indices (ascending) of the points of `points` that no other point dominates: the Pareto
// front. Points with a non-finite loss (failed trials) are never on it; equal points are all on it.
std::vector<size_t> ParetoFront(const std::vector<std::vector<double>>& points);

// The area two-objective loss points dominate below the reference point `reference` (points not
// strictly below it in both objectives add nothing). Points with a non-finite loss are ignored.
double Hypervolume2d(const std::vector<std::vector<double>>& points,
                     const std::vector<double>& reference);

// ParEGO's random weight vector for suggestion `trial_id` of a sweep seeded with `seed`:
// `objectives` weights, each > 0, summing to 1, uniform on the simplex (normalised exponential
// draws from a generator seeded with DeriveSeed(seed, ParEGO purpose, trial_id)), so the same
// seed and trial give the same weights in every run (a resume replays them).
std::vector<double> ParegoWeights(uint64_t seed, int64_t trial_id, size_t objectives);

// Each objective of `points` scaled to [0, 1] by its minimum and maximum over the points whose
// losses are all finite (an objective that does not vary there becomes 0); points with a
// non-finite loss are left as they are.
std::vector<std::vector<double>> NormaliseLosses(const std::vector<std::vector<double>>& points);

// The augmented Chebyshev scalarisation of normalised losses `losses` with `weights`:
// max_j(w_j f_j) + rho * sum_j(w_j f_j). +infinity when a loss is not finite (failed: worst).
inline constexpr double kParegoRho = 0.05;
double AugmentedChebyshev(const std::vector<double>& losses, const std::vector<double>& weights,
                          double rho = kParegoRho);

}  // namespace hpo
