// Searchers propose trials' hyperparameters. They live on rank 0 only, inside the coordinator, and
// know nothing of MPI or torch. Not thread-safe: the coordinator calls them from one thread, except
// for the computations StartSuggestion hands out (see there).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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

  // Suggest in two steps, so that an expensive model (TPE, GP) is computed off the coordinator's
  // thread. StartSuggestion snapshots everything trial `trial_id`'s suggestion depends on and
  // returns its computation, which may run once on any thread while the searcher goes on being
  // used (Observe, ObserveEpoch, SaveState); FinishSuggestion, given what the computation
  // returned, records and returns the suggestion: the same as Suggest at StartSuggestion's moment.
  // An empty function means the suggestion is cheap: call FinishSuggestion(trial_id, nullopt).
  // Between the two, no other suggestion is started. The default is Suggest alone.
  using SuggestionComputation = std::function<std::optional<Assignment>()>;
  virtual SuggestionComputation StartSuggestion(int64_t trial_id) {
    (void)trial_id;
    return {};
  }
  virtual std::optional<Assignment> FinishSuggestion(int64_t trial_id,
                                                     std::optional<Assignment> computed) {
    (void)computed;
    return Suggest(trial_id);
  }

  // Tells the searcher how a trial it suggested ended. `objective` is NaN for failed trials.
  // A negative `trial_id` is a trial of an earlier study (warm start), observed (with its epochs
  // first) before any suggestion and before a resume's replay: model-based searchers fit on it
  // and count it towards their start-up trials; the others ignore it.
  virtual void Observe(int64_t trial_id, const Assignment& params, TrialStatus status,
                       double objective) = 0;

  // Observe for a sweep of several objectives (SweepSpec::objectives): `objectives` holds the
  // trial's value of each, primary first (NaN where it has none; the primary NaN for failed
  // trials). The coordinator calls this one for every trial it reports (live and replayed) in
  // place of Observe. Searchers that search several objectives (method bayes) override it; the
  // default observes the primary objective alone through Observe.
  virtual void ObserveObjectives(int64_t trial_id, const Assignment& params, TrialStatus status,
                                 const std::vector<double>& objectives) {
    Observe(trial_id, params, status,
            objectives.empty() ? std::numeric_limits<double>::quiet_NaN() : objectives.front());
  }

  // An intermediate result: trial `trial_id` reached `objective` after `epoch` (1-based). Used by
  // model-based searchers for multi-fidelity (BOHB-style) fitting; others ignore it.
  virtual void ObserveEpoch(int64_t trial_id, const Assignment& params, int64_t epoch,
                            double objective) {
    (void)trial_id, (void)params, (void)epoch, (void)objective;
  }

  // How many trials the search space holds (grid), or nullopt when unbounded (random).
  virtual std::optional<int64_t> SpaceSize() const = 0;

  // Resume: trial `trial_id`, suggested with `params` before the restart and not finished, runs
  // again (it is pending, as after Suggest). Model-based searchers record it; others ignore it.
  virtual void ObservePending(int64_t trial_id, const Assignment& params) {
    (void)trial_id, (void)params;
  }

  // The searcher's whole state (RNG, observations, pending trials) as bytes. A searcher built from
  // the same config whose RestoreState gets these bytes continues exactly as this one would.
  virtual std::string SaveState() const = 0;
  // BadInput when `state` was not written by SaveState of a searcher of this kind and config.
  virtual Status RestoreState(const std::string& state) = 0;

  // A small string that differs between searchers of another kind or config (bounded, unlike
  // SaveState of a model-based searcher): what a study records so that a resume with another
  // search is refused; the searcher's state is rebuilt by replaying the study's trials (Observe,
  // ObserveEpoch, ObservePending). By default SaveState, which is one for stateless searchers.
  virtual std::string ConfigFingerprint() const { return SaveState(); }
};

// Grid: the cartesian product of every parameter's values, the first parameter varying slowest;
// a continuous range without `values` is a BadInput error (the config parser already rejects it).
// Random: independent draws from each distribution, seeded from `seed`, or scrambled Sobol points
// with search.sampler sobol. Bayes: multivariate TPE (search.model tpe, the default), independent
// TPE (tpe_independent) or a Gaussian process with expected improvement (search.model gp; with
// search.model curves fitted on each trial's final value predicted from its learning curve),
// after search.startup_trials random trials, with a constant liar for pending trials; with
// several objectives, TPE or the GP on ParEGO's scalarisation of them (trial_history.hpp).
// Grid and random search record several objectives and search as with one.
Status MakeSearcher(const SweepConfig& config, std::unique_ptr<Searcher>* searcher);

}  // namespace hpo
