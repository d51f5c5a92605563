// Searchers propose trials' hyperparameters. They live on rank 0 only, inside the coordinator, and
// know nothing of MPI or torch. Not thread-safe: the coordinator calls them from one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "hpo/config.hpp"
#include "hpo/param.hpp"
#include "hpo/status.hpp"
#include "hpo/trial.hpp"

namespace hpo {

class Searcher {
 public:
  virtual ~Searcher() = default;

  // The hyperparameters of trial `trial_id` (ids arrive as 0, 1, 2, ...), or nullopt when the
  // search space is exhausted (grid). The same config and seed give the same sequence.
  virtual std::optional<Assignment> Suggest(int64_t trial_id) = 0;

  // Tells the searcher how a trial it suggested ended. `objective` is NaN for failed trials.
  virtual void Observe(int64_t trial_id, const Assignment& params, TrialStatus status,
                       double objective) = 0;

  // How many trials the search space holds (grid), or nullopt when unbounded (random).
  virtual std::optional<int64_t> SpaceSize() const = 0;
};

// Grid: the cartesian product of every parameter's values, the first parameter varying slowest;
// a continuous range without `values` is a BadInput error (the config parser already rejects it).
// Random: independent draws from each distribution, seeded from `seed`.
Status MakeSearcher(const SweepConfig& config, std::unique_ptr<Searcher>* searcher);

}  // namespace hpo
