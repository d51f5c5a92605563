// Private to hpo_core: what a model-based searcher (TPE, GP) knows of the trials it suggested,
// and which of them are its data for the next suggestion. Owned by one searcher on rank 0; not
// thread-safe (see searcher.hpp).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "curve_prediction.hpp"
#include "hpo/config.hpp"
#include "hpo/param.hpp"
#include "hpo/status.hpp"
#include "hpo/trial.hpp"
#include "model_space.hpp"

namespace hpo {

// The records of every suggested or observed trial (params, their model coordinates, status,
// final objective, per-epoch objectives) and the rules that turn them into data:
//  * Without early termination: the final objectives of finished trials; unfinished trials are
//    pending.
//  * With early termination (BOHB-style multi-fidelity): the objectives reported at the highest
//    epoch (the fidelity) that at least max(startup_trials, modelled parameters + 1) trials
//    reported. Finished trials that did not report it rank behind every trial that did, as Optuna
//    ranks pruned trials: stopped ones by the last epoch they reported (later is better), then by
//    their final objective; failed ones last. Unfinished trials without that report are pending;
//    those with it count as observed. When no epoch has enough reports, the final objectives are
//    used as without early termination.
//  * Predicted finals (`search.model: curves`): every trial that reported an epoch is a data
//    point (at epoch 0, so that all rank by loss alone), its loss the CurvePredictor's mean for the
//    last epoch
//    (`final_epoch`) from its reports (CurveThroughGaps: epochs without a finite report are
//    interpolated), the complete curves of the others its references; a trial without a finite
//    report counts with its final objective's loss (failed: worst).
//    Unfinished trials without reports are pending.
//  * Several objectives (ParEGO, Knowles 2006), whatever the rule: the finished trials are the
//    data, each with the augmented Chebyshev scalarisation (common/pareto.hpp) of its objectives'
//    losses, normalised to [0, 1] over the finished trials with finite losses, under the weights
//    ParegoWeights(seed, k) drawn for the trial k being suggested; stopped trials count with their
//    last epoch's values, failed ones (or any objective missing) are worst. Unfinished trials are
//    pending.
// Losses follow the metric's goal (the objective, or its negation when maximising); failed
// trials (NaN) have an infinite loss. A parameter inactive in a trial (conditions.hpp) has the
// coordinate kAbsentCoordinate (NaN) there; trials whose params do not fit the space (an active
// parameter missing or out of its values) are left out, but for a warm start's earlier trials
// (ids < 0, coord/warm_start.hpp): an active parameter they lack is absent there too, so that
// they inform the model on the parameters they have, as Optuna's and SageMaker's warm starts do.
class TrialHistory {
 public:
  static constexpr double kAbsentCoordinate = std::numeric_limits<double>::quiet_NaN();

  // The rank epoch of failed trials that did not report the fidelity: behind every other trial.
  static constexpr int64_t kFailedEpoch = -1;

  // One trial as a model sees it. Data points rank by epoch (descending), then loss, then id.
  struct DataPoint {
    int64_t trial_id = 0;
    const std::vector<double>* coordinates = nullptr;  // owned by the history
    int64_t epoch = 0;  // the epoch the loss is from (0 for final objectives)
    double loss = 0.0;
    double variance = 0.0;  // the loss's own uncertainty (predicted finals), else 0
  };

  // Which of the rules above turns the records into data.
  enum class DataRule { kFinalObjectives, kFidelity, kPredictedFinals };

  // Precondition: `dimensions` are DimensionOf(parameters[i]); `goals` holds the objectives'
  // goals, primary first (one or more). `final_epoch` (the sweep's epochs) is used by
  // kPredictedFinals only; `seed` (the sweep's) by several objectives only.
  TrialHistory(std::vector<ParameterSpec> parameters, std::vector<ModelDimension> dimensions,
               std::vector<Goal> goals, int64_t startup_trials, DataRule rule, int64_t final_epoch,
               uint64_t seed);

  const std::vector<ParameterSpec>& parameters() const { return parameters_; }
  const std::vector<ModelDimension>& dimensions() const { return dimensions_; }
  size_t modelled_parameters() const { return modelled_parameters_; }

  // Searcher::Suggest returned `params` for `trial_id` (kept unless the trial already finished).
  void RecordSuggestion(int64_t trial_id, const Assignment& params);
  // Searcher::Observe and Searcher::ObserveEpoch.
  // `further_objectives`: the values of the objectives after the primary (`objective`), in
  // order; missing ones count as NaN.
  void RecordResult(int64_t trial_id, const Assignment& params, TrialStatus status,
                    double objective, const std::vector<double>& further_objectives = {});
  void RecordEpoch(int64_t trial_id, const Assignment& params, int64_t epoch, double objective);

  // How many records are of an earlier study's trials (negative ids: warm start).
  int64_t prior_trials() const;

  // The loss of an objective under the metric's goal; NaN (failed) is +infinity.
  double Loss(double objective) const;
  size_t objectives() const { return goals_.size(); }

  // Fills `observed` and `pending`, each in trial-id order, for suggesting trial `trial_id`
  // (which itself is neither); false when fewer than max(1, startup_trials) data points exist to
  // fit a model on. The pointers stay valid until the next Record* or Restore call.
  bool CollectData(int64_t trial_id, std::vector<DataPoint>* observed,
                   std::vector<DataPoint>* pending) const;

  // Every record, after `tag` and `fingerprint` (which Restore checks), as bytes.
  std::string Save(const std::string& tag, const std::string& fingerprint) const;
  // BadInput naming `searcher_name` when `state` has another tag or fingerprint or is truncated
  // or corrupt; the history is unchanged then.
  Status Restore(const std::string& state, const std::string& tag, const std::string& fingerprint,
                 const std::string& searcher_name);

 private:
  struct TrialRecord {
    Assignment params;
    std::optional<std::vector<double>> coordinates;  // nullopt when params do not fit the space
    bool finished = false;
    TrialStatus status = TrialStatus::kRunning;
    double objective = 0.0;
    std::vector<double> further_objectives;  // several objectives only
    std::map<int64_t, double> epoch_objectives;
    // kPredictedFinals only, derived from epoch_objectives by CacheCurve: CurveThroughGaps of
    // the losses by epoch and its extrapolation, so that collecting the data costs O(n) and
    // not n curve fits on the coordinator's message loop.
    LearningCurve curve;
    std::optional<FinalPrediction> extrapolation;
  };

  // `prior`: a warm start's trial, whose missing active parameters are absent (see above).
  void SetParams(const Assignment& params, bool prior, TrialRecord* record) const;
  // Fills the record's curve and extrapolation (kPredictedFinals; a no-op otherwise).
  void CacheCurve(TrialRecord* record) const;
  bool CollectPredictedFinals(int64_t trial_id, std::vector<DataPoint>* observed,
                              std::vector<DataPoint>* pending) const;
  bool CollectScalarised(int64_t trial_id, std::vector<DataPoint>* observed,
                         std::vector<DataPoint>* pending) const;

  std::vector<ParameterSpec> parameters_;
  std::vector<ModelDimension> dimensions_;
  size_t modelled_parameters_ = 0;  // dimensions that are not kFixed
  std::vector<Goal> goals_;         // primary first
  int64_t startup_trials_;
  DataRule rule_;
  int64_t final_epoch_;
  uint64_t seed_;
  std::map<int64_t, TrialRecord> records_;  // by trial id
};

}  // namespace hpo
