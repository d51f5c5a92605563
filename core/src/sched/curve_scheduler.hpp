// Private to hpo_core: the scheduler of `search.model: curves` with `early_terminate` (built by
// MakeScheduler). Lives on rank 0 inside the coordinator; no MPI, no torch; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "sched/scheduler.hpp"
#include "search/curve_prediction.hpp"

namespace hpo::sched_internal {

// A multi-fidelity acquisition over learning curves (freeze-thaw style, on hpo's pause and
// promote machinery). Each trial's final loss (the metric by its goal, lower is better) is
// predicted from its reports (CurveThroughGaps: epochs not reported are interpolated) with
// CurvePredictor, the complete curves of the sweep its references.
// The incumbent is the lowest predicted final mean of all trials. Each option is valued by its
// expected improvement below the incumbent per epoch it costs, in logs:
//  * continuing trial i (running at an epoch it is judged, or paused): log EI(prediction_i) -
//    log(epochs - its epochs trained); a paused trial after ResumesStartOver: - log(epochs), as
//    its program trains every epoch again;
//  * starting a new trial: log of kNewTrialShare times the mean EI of every trial's prediction so
//    far (what a trial like those seen is worth) - log(epochs); +infinity while fewer than max(2,
//    startup_trials) trials have reported (explore first), -infinity once run_cap trials have
//    reported or Promote(idle true) was called (no new trial can start; not in the saved state: a
//    resumed sweep learns it again at its first idle Promote).
// A trial "may end best" when its probability of ending below the incumbent is at least
// kGoOnProbability. That probability adds one report's scatter about its trend
// (CurvePredictor::ReportVariance) to the prediction's variance: the trial's final value is one
// report, and where the sweep's curves run parallel their gains agree more closely than one report
// is precise (a real sweep left every trial paused at the last rung at +- 0.0011, its validation
// accuracy on 6,000 images scattering by about 0.003).
// A trial is judged at every epoch from the first early_terminate rung on (freeze-thaw: a trial
// that passed the rungs may still give way later): it goes on when its value is at least a new
// trial's and that of every paused trial Promote may take; otherwise it pauses ("paused at epoch E:
// predicted final METRIC M +- S, a new trial / trial J is worth more per epoch"). While new trials
// can start (past the start-up), a trial at or past the last rung that may not end best also
// pauses ("..., under a 5 % chance to end best, it gives way to new trials"). A non-finite report
// it is judged at stops the trial. Before the first rung, and at the last epoch, trials go on.
// Promote returns the paused trial of highest value (lowest id on ties): while new trials can
// start (idle false, fewer than run_cap reported), when it is worth at least a new trial and, past
// the start-up, may end best. Once none can, it returns it while no trial has trained every epoch;
// after that, the highest-valued of the paused trials that trained fewer epochs than the last rung
// or may end best (the others stay paused, and the sweep ends without them).
// Why a floor on the chance and not only the value per epoch: a new trial's value is the mean EI
// of the trials seen, and once a finished trial leads them all by far that mean is as small as any
// hopeless trial's. A real sweep (bench/RESULTS.md, 2026-11-30 seed 2) then promoted and trained on
// paused trials predicted 0.87-0.90 against an incumbent of 0.9185, 20 of its first 68 epochs,
// while no new trial started. On the recorded Fashion-MNIST curves the floor left the medians
// within noise (102.5 to 103 epochs to 0.87). Applied to running trials before the last rung it
// cost 124-150 there, and so did raising a new trial's value instead (185-226.5): a prediction
// before the last rung rests mostly on the sweep's complete curves, those of settings that led
// early and gained little later. For the same reason, once no new trial can start, the trials
// before the last rung are spared: there a threshold of 1e-6 left as many sweeps short of 0.87 as
// 5 % did, and sparing them (9 of 27 epochs) cut those from 22 to 5 of 200. State: every trial's
// losses and whether it is paused; rebuilt on resume by ReplayTrial.
class CurveScheduler final : public Scheduler {
 public:
  static constexpr double kGoOnProbability = 0.05;
  // Tuned on the recorded Fashion-MNIST curves (bench/peers/_target.py, seeds 1-100) and checked
  // on seeds 101-200: at 1 (no discount) new trials crowded out the long curves that reach 0.87
  // (median epochs 168 and 150.5 against 159.5 and 116 at 0.3); 0.1-0.5 did about as well.
  static constexpr double kNewTrialShare = 0.3;

  // `rungs`: HyperbandRungs (ascending, below `epochs`, not empty). Only the first is a
  // threshold; all of them are in the config fingerprint, as in the states saved when the
  // scheduler judged trials at the rungs alone (on the recorded Fashion-MNIST curves, judging at
  // every epoch reached 0.87 in 107 epochs against 114.5 at rungs 1/3/9, bench/RESULTS.md).
  CurveScheduler(std::vector<int64_t> rungs, int64_t epochs, Goal goal, std::string metric,
                 int64_t startup_trials, std::optional<int64_t> run_cap);

  SchedulerDecision OnEpoch(int64_t trial_id, int64_t epoch, double objective) override;
  void OnTrialEnd(int64_t trial_id, TrialStatus status) override;
  std::optional<int64_t> Promote(bool idle) override;
  bool ResumesStartOver() override {
    resumes_start_over_ = true;
    return true;
  }
  size_t paused_trials() const override;
  std::string WhyLeftPaused() const override;
  void ReplayTrial(int64_t trial_id, const std::map<int64_t, double>& reports,
                   TrialStatus status) override;
  std::string SaveState() const override;
  Status RestoreState(const std::string& state) override;
  std::string ConfigFingerprint() const override;

  // The prediction of `trial_id`'s final loss from everything recorded now (for tests and
  // messages); nullopt for a trial without a finite report.
  std::optional<FinalPrediction> PredictFinal(int64_t trial_id) const;

 private:
  struct TrialCurve {
    // Per epoch from 1 to at most `epochs`; +infinity for a non-finite report and for an epoch
    // not reported.
    std::vector<double> losses;
    bool paused = false;
    // Derived from `losses` by Update: CurveThroughGaps(losses), and its extrapolation
    // (CurvePredictor::Extrapolate), kept so that a decision over n trials costs O(n) and not n
    // curve fits.
    LearningCurve curve;
    std::optional<FinalPrediction> extrapolation;
  };
  // One trial with a finite report, as the valuation sees it.
  struct Option {
    int64_t trial_id = 0;
    bool paused = false;
    int64_t trained = 0;  // epochs of its curve, up to its last finite report
    FinalPrediction prediction;
    double continue_value = 0.0;  // log EI per epoch left (see the class comment)
  };
  // What every option is worth now (see the class comment).
  struct Valuation {
    std::vector<Option> options;  // by trial id
    double incumbent = 0.0;
    double new_trial_value = 0.0;
    // No new trial can start and a trial has trained every epoch (see the class comment).
    bool only_contenders = false;
    double report_variance = 0.0;  // CurvePredictor::ReportVariance of the sweep's curves
    const Option* Find(int64_t trial_id) const;
  };

  // Records the loss of `objective` at `epoch` (>= 1; nothing past `epochs`); the caller then
  // calls Update.
  void Record(int64_t epoch, double objective, TrialCurve* trial) const;
  void Update(TrialCurve* trial) const;
  Valuation Value() const;
  // Whether `option` may end best (see the class comment).
  static bool MayEndBest(const Option& option, const Valuation& valuation);
  // Whether `option` is a paused trial that Promote may take (see the class comment).
  bool MayGoOn(const Option& option, const Valuation& valuation) const;
  static std::string GoOnPercent();  // kGoOnProbability in percent, for messages
  std::string Fingerprint() const;
  std::string Describe(const FinalPrediction& prediction) const;

  std::vector<int64_t> rungs_;
  int64_t epochs_;
  Goal goal_;
  std::string metric_;
  int64_t startup_trials_;
  std::optional<int64_t> run_cap_;
  std::map<int64_t, TrialCurve> trials_;
  bool no_new_trials_ = false;  // Promote(idle true) was called
  // ResumesStartOver was called (not in the saved state: the coordinator calls it again for the
  // study's rows on resume).
  bool resumes_start_over_ = false;
};

}  // namespace hpo::sched_internal
