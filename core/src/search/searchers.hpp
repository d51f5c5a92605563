// Private to hpo_core: the searchers MakeSearcher builds. Not thread-safe (see searcher.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "model_space.hpp"
#include "search/searcher.hpp"
#include "sobol.hpp"
#include "space_filling.hpp"
#include "trial_history.hpp"

namespace hpo {

// Enumerates the cartesian product of the parameters' values in config order, the first
// parameter varying slowest and the last fastest: trial k is point k of that order, whatever
// order the ids arrive in. Constants contribute one value, categoricals their `values`,
// int_uniform ranges every integer from min to max. SpaceSize is the product (saturating at
// INT64_MAX); Suggest returns nullopt for ids at or past it. The sweep's run_cap is not applied
// here: the coordinator stops at min(run_cap, SpaceSize). With `conditions:` the product runs
// over the active branches only (an absent parameter takes no values, so no two points differ
// only in absent parameters), parents first (ParentsFirstOrder; config order where valid), and
// its points, at most 2^20, are listed when the searcher is made; SpaceSize counts them.
class GridSearcher final : public Searcher {
 public:
  // BadInput "FILE:LINE: sweep.parameters.NAME: ..." when a parameter is not enumerable (e.g. a
  // uniform range; the config parser already rejects those), or "FILE: ..." when a grid over
  // conditional parameters has more than 2^20 points.
  static Status Create(const SweepConfig& config, std::unique_ptr<Searcher>* searcher);

  std::optional<Assignment> Suggest(int64_t trial_id) override;
  void Observe(int64_t trial_id, const Assignment& params, TrialStatus status,
               double objective) override;
  std::optional<int64_t> SpaceSize() const override { return space_size_; }
  // Trial k is point k: the state is only a tag and the space size, checked on restore.
  std::string SaveState() const override;
  Status RestoreState(const std::string& state) override;

 private:
  GridSearcher(std::vector<ParameterSpec> parameters, std::vector<Assignment> conditional_points);

  std::vector<ParameterSpec> parameters_;
  std::vector<Assignment> conditional_points_;  // with conditions: every point, in trial order
  std::vector<int64_t> value_counts_;           // per parameter
  int64_t space_size_ = 1;
};

// Draws every parameter independently from its distribution. Trial k's values come from a
// generator seeded with DeriveSeed(seed, kSamplingPurpose, k) (seeding.hpp, SplitMix64), drawing
// the parameters in config order, so
// trial k is the same whatever order Suggest is called in and however often. With `conditions:`
// every parameter is drawn and the inactive ones are dropped (DropInactive, conditions.hpp), so
// the draws of the others do not depend on the conditions. Unbounded: SpaceSize is nullopt and the
// coordinator applies run_cap.
class RandomSearcher final : public Searcher {
 public:
  RandomSearcher(std::vector<ParameterSpec> parameters, uint64_t seed);

  std::optional<Assignment> Suggest(int64_t trial_id) override;
  void Observe(int64_t trial_id, const Assignment& params, TrialStatus status,
               double objective) override;
  std::optional<int64_t> SpaceSize() const override { return std::nullopt; }
  // Trial k depends only on (seed, k): the state is only a tag and the seed, checked on restore.
  std::string SaveState() const override;
  Status RestoreState(const std::string& state) override;

 private:
  std::vector<ParameterSpec> parameters_;
  uint64_t seed_;
};

// The shared frame of method bayes's model-based searchers (TPE, GP):
//  * Start-up: while k < search.startup_trials minus the earlier studies' trials observed (warm
//    start: negative ids), while TrialHistory has too little data to fit, or
//    when the model has no suggestion, trial k is StartupDesign's trial k for the same seed
//    (space_filling.hpp): random search's trial k, or with `search.sampler: sobol` a scrambled
//    Sobol' sequence over the numeric parameters and balanced draws of each categorical's values.
//  * Otherwise the model (ModelSuggestion) proposes trial k from TrialHistory's data
//    (trial_history.hpp): final objectives, or with early termination (BOHB-style) the reports at
//    the highest epoch enough trials reached, and the pending trials for its constant liar.
// StartSuggestion copies the model's data (so the computation reads nothing the searcher changes
// later) and returns ModelSuggestion on the copy; start-up trials compute nothing. Both the
// start-up's and the model's suggestions give every parameter a value; FinishSuggestion drops
// those that are inactive for it (conditions.hpp), and TrialHistory codes an absent parameter as a
// NaN coordinate.
//  * Several objectives (ParEGO, Knowles 2006): the model is fitted on TrialHistory's augmented
//    Chebyshev scalarisation of the finished trials' objectives under a random weight vector
//    drawn from the seed and the trial id being suggested, so successive suggestions aim at
//    different parts of the Pareto front and a resume's replay gives the same ones. Chosen over
//    MOTPE because it leaves TPE and the GP as they are (one loss per data point).
// SaveState holds TrialHistory's records (params, status, objective, further objectives,
// per-epoch objectives; pending ones too) after a tag and a fingerprint of the model, the
// start-up, the objectives when several and the parameters ("bayes/MODEL[+sobol][+parego(NAME:GOAL
// ...)] name:distribution ...", then ConditionsFingerprint); RestoreState rejects a state from
// another model or config or not written by SaveState.
class ModelBasedSearcher : public Searcher {
 public:
  std::optional<Assignment> Suggest(int64_t trial_id) final;
  SuggestionComputation StartSuggestion(int64_t trial_id) final;
  std::optional<Assignment> FinishSuggestion(int64_t trial_id,
                                             std::optional<Assignment> computed) final;
  void Observe(int64_t trial_id, const Assignment& params, TrialStatus status,
               double objective) final;
  void ObserveObjectives(int64_t trial_id, const Assignment& params, TrialStatus status,
                         const std::vector<double>& objectives) final;
  void ObserveEpoch(int64_t trial_id, const Assignment& params, int64_t epoch,
                    double objective) final;
  void ObservePending(int64_t trial_id, const Assignment& params) final;
  std::optional<int64_t> SpaceSize() const final { return std::nullopt; }
  std::string SaveState() const final;
  Status RestoreState(const std::string& state) final;
  // The state tag and the fingerprint ("TAG bayes/MODEL name:distribution ...").
  std::string ConfigFingerprint() const final;

 protected:
  using DataPoint = TrialHistory::DataPoint;

  // BadInput when search.startup_trials < 0; every model's Create checks it.
  static Status CheckStartupTrials(const SweepConfig& config);

  // `model` names the model in the fingerprint ("tpe"), `display_name` in messages ("TPE").
  ModelBasedSearcher(const SweepConfig& config, std::string state_tag, std::string model,
                     std::string display_name);

  // The model's suggestion for `trial_id` from `observed` and `pending` (both non-empty or
  // pending empty; in TrialHistory's order), or nullopt to fall back to random search's trial.
  // Called from any thread: it may read only what construction fixed (parameters, dimensions,
  // seed, settings), never the history's records.
  virtual std::optional<Assignment> ModelSuggestion(int64_t trial_id,
                                                    std::vector<DataPoint> observed,
                                                    std::vector<DataPoint> pending) const = 0;

  const TrialHistory& history() const { return history_; }
  uint64_t seed() const { return seed_; }

 private:
  std::string Fingerprint() const;
  static TrialHistory::DataRule DataRuleOf(const SweepConfig& config);
  // The objectives' goals, primary first (the metric's alone with one objective).
  static std::vector<Goal> GoalsOf(const SweepConfig& config);

  uint64_t seed_;
  int64_t startup_trials_;
  std::vector<MetricSpec> objectives_;  // several objectives only; empty otherwise
  std::string state_tag_;
  std::string model_;
  std::string display_name_;
  bool sobol_startup_;
  StartupDesign startup_design_;
  TrialHistory history_;
};

// Tree-structured Parzen estimator search (Bergstra et al. 2011) for `method: bayes` with
// `search.model: tpe` (multivariate, the default) or `tpe_independent` (Optuna's TPESampler with
// its default settings: each parameter modelled and chosen on its own). See parzen_estimator.hpp
// for the estimators and model_space.hpp for how each W&B distribution is modelled. Start-up,
// data and saved state as ModelBasedSearcher says (the fingerprint names tpe or
// tpe_independent). The model's suggestion for trial k:
//  * Split: the best G of the n data points (by TrialHistory's ranking: the fidelity's reports
//    first, trials stopped before it behind them, failed ones last; loss by the metric's goal;
//    ties by trial id) form l(x), the rest g(x); G = min(ceil(0.1 n), 25) (Optuna's gamma) for
//    tpe_independent, min(ceil(1.5 sqrt(m)), 25) for tpe, m counting the data points at the
//    highest epoch among them (n without early termination).
//  * Constant liar: every trial suggested and not yet observed (other than k itself) joins g(x)
//    at the worst value, so concurrent suggestions for busy groups spread out; a pending trial
//    that reported the chosen epoch counts with that report instead.
//  * tpe_independent: per parameter, search.candidates draws from l(x) (the univariate
//    estimators); the one maximising log l(x) - log g(x) (the first on ties) is decoded into the
//    parameter's value.
//  * tpe: l(x) and g(x) are joint estimators over all parameters (MultivariateParzenEstimator,
//    bandwidths by Scott's rule on each group's own spread); l(x)'s kernels are weighted
//    1 / (rank + 1)^2 by their loss, g(x)'s as Optuna weights them. search.candidates joint draws
//    from l(x)'s observation kernels (not its prior); the one maximising log l(x) - log g(x) (the
//    first on ties) is decoded into the trial's values. Parameters that interact (a valley
//    across two of them) are followed where the independent model spreads its draws over the
//    cross product of the marginals.
//  * Under early termination (early_terminate, or the predicted finals of curves_tpe) the
//    candidates are draws from the prior kernel instead, 4 of them (12 for curves_tpe) unless
//    search.candidates is given: the data there are reports at early epochs or predictions from
//    them, where the settings that start fast lead whether or not they end best, and draws from
//    l(x) went back to them again and again (on the recorded Fashion-MNIST curves, the setting
//    best at epoch 1, which plateaus at 0.859, was 8.8 % of TPE's draws against under 2.5 % of
//    random search's, and ASHA stopped 74 % of the draws that could reach 0.87 against 54 %).
//    Scored by l(x) / g(x), the prior's draws still steer away from what the data rank low.
//  * curves_tpe (the default of method bayes with early_terminate, ApplyDefaultSearch): the data
//    are TrialHistory's predicted finals, as for the GP's curves, and the curve scheduler
//    judges the trials (the fingerprint names curves_tpe). Predicted finals rank settings by
//    where they end rather than by how they start, so l(x) / g(x) chooses among 12 prior draws.
//    On the real outcome sweeps of issue 54 item 4, 12 put 1.1-2.2x as many draws in their best
//    region as 4 did, with the replay's epochs to target unchanged (bench/RESULTS.md).
//  * Conditions (`conditions:`): Optuna's `group=True` decomposition, with the groups known from
//    the config: parameters present in the same trials form a group (ConditionGroups; the
//    unconditional ones one group). Each group is split and modelled on its own, on the data
//    points where it is present (l(x) and g(x) of `momentum` only see the trials that had
//    `optimizer: sgd`), jointly within the group (tpe) or per parameter (tpe_independent); the
//    groups are drawn in turn from one generator and the inactive parameters then dropped. A
//    group present in no data point yet is drawn from its prior. Without conditions there is
//    one group and the model is the one above.
// Randomness: trial k's generator is seeded with DeriveSeed(seed, TPE purpose, k), and the data
// are ordered by trial id, so the same observations, pending trials and seed give the same
// suggestion whatever the order of the calls.
class TpeSearcher final : public ModelBasedSearcher {
 public:
  // BadInput when search.candidates < 1 or search.startup_trials < 0.
  static Status Create(const SweepConfig& config, std::unique_ptr<Searcher>* searcher);

  // G, the size of l(x), for the data points `observed` (see Split above).
  static size_t GoodGroupSize(const std::vector<DataPoint>& observed, bool multivariate);

 private:
  explicit TpeSearcher(const SweepConfig& config);
  static bool MultivariateOf(const SweepConfig& config);
  // Whether candidates come from the prior (see the class comment): multivariate TPE under early
  // termination or on predicted finals.
  static bool PriorCandidatesOf(const SweepConfig& config);
  // Candidates per suggestion: search.candidates if given or drawn from l(x), else the prior's
  // count for the data (see the class comment).
  static int64_t CandidatesOf(const SweepConfig& config);
  // The model's name in the fingerprint: curves_tpe, tpe or tpe_independent.
  static const char* FingerprintNameOf(const SweepConfig& config);

  // One condition group's l(x) and g(x) (see Split above), by trial id.
  struct GroupSplit {
    std::vector<DataPoint> good;
    std::vector<const std::vector<double>*> good_points;
    std::vector<const std::vector<double>*> bad_points;
    std::vector<bool> bad_pending;  // per g(x) point: a pending trial (constant liar)
  };
  static GroupSplit SplitGroup(const std::vector<DataPoint>& observed,
                               const std::vector<DataPoint>& pending, bool multivariate);

  std::optional<Assignment> ModelSuggestion(int64_t trial_id, std::vector<DataPoint> observed,
                                            std::vector<DataPoint> pending) const override;

  int64_t candidates_;
  bool multivariate_;
  bool prior_candidates_;
  std::vector<size_t> groups_;  // per parameter, its ConditionGroups group
};

// Gaussian-process Bayesian optimisation for `method: bayes` with `search.model: gp`: a GP with a
// Matern-5/2 ARD kernel and expected improvement, after Optuna's GPSampler (gaussian_process.hpp
// for the model and its fit). Better than TPE where the parameters interact and trials are few
// (tens to a few hundred); its cost grows with the cube of the trials, so TPE stays the default.
// Start-up, data and saved state as ModelBasedSearcher says. The model's suggestion for trial k:
//  * Inputs: one per parameter that is not fixed: numeric coordinates (model_space.hpp) scaled
//    to [0, 1], categoricals as their index (distance 0 or 1). A parameter absent from a trial
//    (`conditions:`) takes the fixed input -1 there: a numeric input at least 1 from every present
//    value, a categorical one a category of its own, so the kernel sees the tree (absent and
//    present differ; two trials without it agree on it). Candidates get the same imputation from
//    their own parents' values before they are scored.
//  * Values: a data point's loss when it is from the fidelity (the highest epoch among them;
//    every point without early termination) and finite, else (stopped before the fidelity,
//    failed) the worst such loss; no suggestion (random search's trial) when there is none.
//    Hyperparameters are fitted on at most 200 points (every ceil(n / 200)-th by trial id); the
//    posterior conditions on all.
//  * Constant liar: each pending trial joins the data at the worst value, so concurrent
//    suggestions for busy groups spread out.
//  * Acquisition: log expected improvement below the best value, maximised over 1024 scrambled
//    Sobol' points (uniform draws past 32 inputs), then four rounds of 64 Gaussian perturbations
//    (sigma 0.1, halving each round; a categorical changes with probability 0.2) around each of
//    the best 4 so far; grid inputs are snapped to their grid before scoring. The best (the first
//    on ties) is decoded into values.
// Randomness: trial k's generators are seeded with DeriveSeed(seed, GP purpose, k); the same
// observations, pending trials and seed give the same suggestion whatever the order of the calls.
// With `search.model: curves` the data are TrialHistory's predicted finals instead: every trial
// that reported an epoch is modelled at its predicted final loss, with the prediction's variance
// as known noise on its row, so a trial seen for one epoch pulls the model less than a finished
// one (the fingerprint names curves).
class GpSearcher final : public ModelBasedSearcher {
 public:
  // BadInput when search.startup_trials < 0.
  static Status Create(const SweepConfig& config, std::unique_ptr<Searcher>* searcher);

 private:
  explicit GpSearcher(const SweepConfig& config);
  static bool PredictsFinals(const SweepConfig& config);

  bool predicts_finals_;

  std::optional<Assignment> ModelSuggestion(int64_t trial_id, std::vector<DataPoint> observed,
                                            std::vector<DataPoint> pending) const override;
};

// Quasi-random search for `method: random` with `search.sampler: sobol`: trial k takes point k
// of a scrambled Sobol' sequence (sobol.hpp; the scramble is seeded from the sweep seed), one
// sequence dimension per parameter in config order, except constants (fixed) and beta/q_beta,
// which have no simple inverse CDF and are drawn by SampleParameter from a generator seeded with
// DeriveSeed(seed, kSamplingPurpose, k). With `conditions:` every parameter keeps its dimension
// and the inactive ones are dropped from the point (DropInactive), so the sequence is unchanged. A
// coordinate u in (0, 1) becomes a value by ParameterQuantile (space_filling.hpp), the
// distribution's inverse CDF. Trial k depends only on (seed, k). Unbounded: SpaceSize is nullopt.
// SaveState is a tag, the seed and the parameters' names and distributions, checked on restore.
class SobolSearcher final : public Searcher {
 public:
  // BadInput naming the limit when more than ScrambledSobolSequence::kMaxDimensions parameters
  // need a sequence dimension.
  static Status Create(const SweepConfig& config, std::unique_ptr<Searcher>* searcher);

  std::optional<Assignment> Suggest(int64_t trial_id) override;
  void Observe(int64_t trial_id, const Assignment& params, TrialStatus status,
               double objective) override;
  std::optional<int64_t> SpaceSize() const override { return std::nullopt; }
  std::string SaveState() const override;
  Status RestoreState(const std::string& state) override;

 private:
  SobolSearcher(std::vector<ParameterSpec> parameters, uint64_t seed, int dimensions);

  std::vector<ParameterSpec> parameters_;
  uint64_t seed_;
  ScrambledSobolSequence sequence_;
};

}  // namespace hpo
