// Private to hpo_core: the GP searcher's search for the candidate of highest log expected
// improvement (gp_searcher.cpp), after Optuna's GPSampler (optuna/_gp/optim_mixed.py): scrambled
// Sobol' candidates and the best observed points, rounds of perturbations around the best of them
// (the first round around the observed points too), L-BFGS-B on the continuous inputs of the best
// few, then an exhaustive search of each discrete input in turn. Deterministic for a seed.
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "gaussian_process.hpp"
#include "gp_inputs.hpp"

namespace hpo {

// The model inputs of the candidate of highest log expected improvement below `best` under
// `process`, on the inputs' grids and with `absence` imputed; `incumbents` (model inputs of
// observed points, best first) join the first candidates and centre the first round of
// perturbations, whatever they score.
Eigen::VectorXd BestCandidate(const GaussianProcess& process, const InputSpace& space,
                              const Absence& absence,
                              const std::vector<Eigen::VectorXd>& incumbents, uint64_t trial_seed,
                              double best);

}  // namespace hpo
