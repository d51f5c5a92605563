// How a trial talks to the sweep while it runs, whatever kind of task it is (torch-free, MPI-free):
// the epoch gate that answers continue / stop / interrupt after each epoch or step, and what a
// trial ends with. Used by every TaskRunner (hpo/task_runner.hpp) and by the libtorch trainer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hpo/trial.hpp"

namespace hpo {

// What a trial does after an epoch: go on, stop (early stopping: the trial ends as `stopped`), or
// stop because the sweep is being interrupted (the trial saves a checkpoint and ends as `running`,
// to continue on resume).
enum class EpochVerdict { kContinue, kStop, kInterrupt };

// Decides after each epoch whether a trial goes on. AfterEpoch is called on every rank of the group
// after the epoch's metrics are known (they are identical on all ranks); the implementation must
// return the same answer on all of them (the runtime asks rank 0 on the leader and broadcasts it).
class EpochGate {
 public:
  virtual ~EpochGate() = default;
  virtual EpochVerdict AfterEpoch(int64_t trial_id, const EpochMetrics& metrics) = 0;
  // Leader only, not collective: reports one epoch (or step) of the group's trial to rank 0 and
  // returns its answer, which the caller shares with its group its own way (command trials,
  // whose other ranks are busy watching their programs). Gates that are not wired to a rank 0
  // (tests, benchmarks) continue.
  virtual EpochVerdict ReportFromLeader(int64_t, const EpochMetrics&) {
    return EpochVerdict::kContinue;
  }
  // Local, not collective, called before every training step on every rank: whether this rank was
  // asked to stop (a preemption signal). The group stops after the first step at which any of its
  // ranks says so, checkpoints, and ends the trial as interrupted.
  virtual bool InterruptRequested() { return false; }
};

// Always continues.
class AlwaysContinue final : public EpochGate {
 public:
  EpochVerdict AfterEpoch(int64_t, const EpochMetrics&) override { return EpochVerdict::kContinue; }
};

struct TrialOutcome {
  // completed | stopped | failed, or running: interrupted, with a checkpoint to continue from.
  TrialStatus status = TrialStatus::kCompleted;
  std::vector<EpochMetrics>
      curve;            // metric order: SweepConfig::metric_names; includes resumed epochs
  std::string message;  // why it failed, stopped or was interrupted
  double duration_s = 0.0;
  int64_t resumed_epochs = 0;  // epochs restored from a checkpoint (0: trained from the start)
  int64_t resumed_step = 0;    // and steps of the epoch after them
};

}  // namespace hpo
