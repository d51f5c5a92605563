// TrainingHooks: the trainer's seam for tests, as LevelDB's Env is the database's. A test passes
// one through TrainOptions::hooks (or, for a whole sweep, the runtime's non-public
// SweepOptions::training_hooks) to disturb training at a chosen point, e.g. a fault on one rank
// (tests/support/fault_injector.hpp). Production code passes none (a null pointer) and reads no
// test switch of its own.
#pragma once

#include <cstdint>

#include "hpo/trial.hpp"

namespace hpo {

class TrainingHooks {
 public:
  virtual ~TrainingHooks() = default;
  // Every rank of the group, on its training thread, before training step `step` (0-based) of
  // `epoch` (1-based) of `trial`, inside the step's failure containment: whatever it throws fails
  // the trial on every rank exactly as an exception of the step's own (the model's, out of memory)
  // would. Not collective; called concurrently by the ranks of one process in unit tests.
  virtual void BeforeStep(const TrialSpec& trial, int group_rank, int64_t epoch, int64_t step) = 0;
};

}  // namespace hpo
