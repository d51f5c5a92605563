// Not installed: hpo::Main (hpo/main.hpp) with the runtime's test seam filled in, for test
// programs that run the whole `hpo` command line with something injected into training
// (tests/mpi/programs/hpo_with_faults.cpp). hpo::Main is MainWithTrainingHooks with none.
#pragma once

#include "hpo/task_runner.hpp"

namespace hpo {

class TrainingHooks;

// hpo::Main, with `training_hooks` (borrowed; null for none) reaching the trainer of every trial a
// sweep runs for a model task (SweepOptions::training_hooks).
int MainWithTrainingHooks(int argc, char** argv, const TaskRegistry& registry,
                          TrainingHooks* training_hooks);

}  // namespace hpo
