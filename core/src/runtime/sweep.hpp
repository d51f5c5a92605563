// RunSweep: one MPI job runs a whole sweep (docs/design.md, "The shape of a run"). Collective over
// MPI_COMM_WORLD; every rank calls it after MpiSession::Start with the same options.
//   1. rank 0 reads and validates the config and broadcasts its text; a bad config fails once,
//      on rank 0, and every rank returns the same BadInput status (nobody hangs);
//   2. the world splits into groups of ranks_per_trial;
//   3. rank 0 creates the output folder and the study file, then runs the coordinator on its own
//      thread (SweepSession) while its main thread trains like every other rank;
//   4. each group leader asks rank 0 for trials, broadcasts them to its group, reports every
//      epoch and sends the result; rank 0 appends each result to the study at once;
//   5. at the end rank 0 evaluates the best trial on the held-out test set and records it.
// A failure confined to one rank (e.g. a missing data file there) ends the job through AbortJob.
#pragma once

#include <string>

#include "hpo/config.hpp"
#include "hpo/status.hpp"

namespace hpo {

class TrainingHooks;

struct SweepOptions {
  std::string config_path;
  std::string output_override;  // --output: replaces the config's `output`
  std::string data_override;    // --data: replaces the config's `data` on the ranks given it
  bool resume = false;
  BareSweepSettings bare;  // --run-cap, --ranks-per-trial, --seed (a bare W&B sweep file only)
  // Test seam (train/training_hooks.hpp): reaches the trainer of every trial of a model task, on
  // every rank. Null (none) in `hpo`; borrowed, it must outlive RunSweep.
  TrainingHooks* training_hooks = nullptr;
};

// A TaskRunner whose trials run in the libtorch trainer (every model task's) also implements this:
// RunSweep hands it SweepOptions::training_hooks on every rank once the runner is prepared,
// before its first trial. Not collective.
class TrainingHooksUser {
 public:
  virtual ~TrainingHooksUser() = default;
  virtual void UseTrainingHooks(TrainingHooks* hooks) = 0;
};

class TaskRegistry;

// Runs the tasks of `registry` (BuiltinTaskRegistry(), or a user's own tasks beside or instead of
// the built-in ones). The returned Status is the same on every rank; the caller prints it on world
// rank 0 only.
Status RunSweep(const SweepOptions& options, const TaskRegistry& registry);

}  // namespace hpo
