// Trials and their results: what rank 0 hands to a group, and what comes back. Plain value types,
// serialised by the control plane (wire.hpp) and stored by the study file (study_file.hpp).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "hpo/param.hpp"

namespace hpo {

// One trial as dispatched: its id (0, 1, 2, ... in suggestion order), the seed its training uses
// (derived from the sweep seed and the id, so a trial's result does not depend on which group ran
// it) and its hyperparameters.
struct TrialSpec {
  int64_t trial_id = -1;
  uint64_t seed = 0;
  Assignment params;
  int64_t attempt = 0;  // 0, then 1, 2, ... when a failed trial runs again (trial_retries)
  // Population-based training (`pbt:`): the member whose checkpoint this trial starts from, at
  // the end of epoch `parent_epoch` (its model and optimizer state; this trial's own
  // hyperparameters then apply, and it trains epochs parent_epoch + 1, ...). -1: none.
  int64_t parent_trial = -1;
  int64_t parent_epoch = 0;
};

// kPaused: waiting at an ASHA rung for promotion (early_terminate.promotion), its checkpoint kept.
enum class TrialStatus { kCompleted, kStopped, kFailed, kRunning, kPaused };

// "completed" | "stopped" | "failed" | "running" | "paused", as stored in the study file.
const char* TrialStatusName(TrialStatus status);
// Parses a name written by TrialStatusName; returns false for anything else.
bool ParseTrialStatus(const std::string& name, TrialStatus* status);

// The metrics of one epoch. `values` is aligned with the study's metric names (see
// TaskMetricNames in task_catalog.hpp): for the built-in tasks train_loss, val_loss, val_accuracy,
// epoch_time_s.
struct EpochMetrics {
  int64_t epoch = 0;  // 1-based
  std::vector<double> values;
};

// A finished (completed, stopped or failed) trial, as gathered to rank 0.
struct TrialResult {
  int64_t trial_id = -1;
  TrialStatus status = TrialStatus::kRunning;
  // The sweep metric of the last epoch trained; NaN when the trial produced none.
  double objective = std::numeric_limits<double>::quiet_NaN();
  // Several objectives (SweepSpec::objectives): the further ones' values (objectives[1], ...) of
  // the last epoch trained, as `objective` is the primary's; NaN where the trial produced none.
  // Empty for a sweep of one objective. Set by the coordinator from the curve.
  std::vector<double> further_objectives;
  Assignment params;
  int64_t epochs = 0;  // epochs trained
  double duration_s = 0.0;
  int64_t group = -1;  // the trial group that ran it
  std::vector<EpochMetrics> curve;
  std::string message;  // why it failed or stopped; empty for completed trials
  // When rank 0 dispatched the trial (its last attempt, or its continuation after a resume):
  // seconds since the Unix epoch, UTC; NaN when unknown (studies written before hpo recorded it).
  double start_time_s = std::numeric_limits<double>::quiet_NaN();
  // Population-based training: TrialSpec's parent_trial and parent_epoch (-1 and 0: none); the
  // study's columns parent_trial and parent_epoch.
  int64_t parent_trial = -1;
  int64_t parent_epoch = 0;
};

}  // namespace hpo
