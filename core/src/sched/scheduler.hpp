// Schedulers decide, after every epoch of a running trial, whether it goes on (early stopping):
// ASHA from W&B's `early_terminate: {type: hyperband}` and the median stopping rule from
// `median_stopping:`. They live on rank 0 inside the coordinator and know nothing of MPI or torch.
// Decisions are immediate (asynchronous): no running trial ever waits for another. With
// `asha: {promotion: true}`, ASHA pauses trials at rungs instead of stopping them, and Promote
// says which paused trial goes on next. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hpo/config.hpp"
#include "hpo/status.hpp"
#include "hpo/trial.hpp"

namespace hpo {

struct SchedulerDecision {
  bool keep_going = true;
  // When stopping: why, for the study's message column, e.g. "stopped at rung 1 (epoch 3):
  // val_accuracy 0.81 not in the top 1/3 of 9 trials at this rung" (ASHA at a rung), "stopped at
  // epoch 5: best val_accuracy 0.8 so far no longer in the top 1/3 of 12 trials at rung 1 (epoch
  // 3)" (ASHA between rungs).
  std::string reason;
  // With keep_going false: the trial pauses (checkpoints and frees its group) until Promote names
  // it, instead of stopping for good.
  bool pause = false;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;

  // Trial `trial_id` reported `objective` (the sweep metric, NaN if missing) after `epoch`
  // (1-based, consecutive per trial). Direction comes from the config's goal.
  virtual SchedulerDecision OnEpoch(int64_t trial_id, int64_t epoch, double objective) = 0;

  // Trial `trial_id` ended (completed, stopped or failed); a scheduler may drop its running state.
  virtual void OnTrialEnd(int64_t trial_id, TrialStatus status) { (void)trial_id, (void)status; }

  // A paused trial that goes on now, or nullopt. `idle`: no trial is running and no new one will
  // start, so nothing else can make a promotion possible. The trial is no longer paused.
  virtual std::optional<int64_t> Promote(bool idle) {
    (void)idle;
    return std::nullopt;
  }
  // Trials paused and not promoted since.
  virtual size_t paused_trials() const { return 0; }
  // Why the trials still paused when a sweep ends were never promoted, for its last line ("3 left
  // paused WHY"), e.g. "at a rung, never in its top 1/eta" (ASHA).
  virtual std::string WhyLeftPaused() const { return "(never promoted)"; }

  // The trials' programs start over when resumed (command trials whose program keeps no
  // checkpoint; the coordinator learns it from a finished trial's `restarted` message), so a
  // paused trial costs all its epochs again. A scheduler that weighs what going on costs counts
  // that and returns true; by default nothing changes (false).
  virtual bool ResumesStartOver() { return false; }

  // The scheduler's state as bytes; RestoreState on a scheduler built from the same config
  // continues exactly as this one would. BadInput for bytes it did not write.
  virtual std::string SaveState() const = 0;
  virtual Status RestoreState(const std::string& state) = 0;

  // A small string that differs between schedulers of other settings (bounded, unlike SaveState):
  // what a study records so that a resume with other early stopping is refused; the state is
  // rebuilt by replaying the study's trials (ReplayTrial). By default SaveState.
  virtual std::string ConfigFingerprint() const { return SaveState(); }

  // Resume: tells the scheduler what trial `trial_id` reported (epoch -> objective) and where it
  // stands: finished (completed, stopped, failed), paused at its last epoch, or running (dispatched
  // again, a paused one promoted). By default OnEpoch for each report, then OnTrialEnd when it
  // finished; the promotion variant records instead of deciding (which trials were promoted is
  // not in the reports' order).
  virtual void ReplayTrial(int64_t trial_id, const std::map<int64_t, double>& reports,
                           TrialStatus status) {
    for (const auto& [epoch, objective] : reports) OnEpoch(trial_id, epoch, objective);
    if (status != TrialStatus::kRunning && status != TrialStatus::kPaused) {
      OnTrialEnd(trial_id, status);
    }
  }
};

// Builds the config's scheduler: ASHA when sweep.early_terminate is enabled, the median rule when
// median_stopping is, both (a trial stops when either says stop) when both are; with method bayes
// and search.model curves, early_terminate builds the curve scheduler instead (its rungs are the
// epochs it decides at; curve_scheduler.hpp; BadInput beside median_stopping); nullptr when
// neither is (every trial runs all its epochs). BadInput for settings that cannot work with the
// sweep's epochs (e.g. no rung below `epochs`).
Status MakeScheduler(const SweepConfig& config, std::unique_ptr<Scheduler>* scheduler);

// The ASHA rungs (epochs at which trials are compared) for `spec` and `epochs`, ascending.
std::vector<int64_t> HyperbandRungs(const HyperbandSpec& spec, int64_t epochs);

}  // namespace hpo
