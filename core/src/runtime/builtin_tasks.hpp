// Private to hpo_runtime: the factories of the built-in kinds of task, registered by
// BuiltinTaskRegistry exactly as a user's own task would be.
#pragma once

#include <memory>

#include "hpo/config.hpp"
#include "hpo/model_task.hpp"
#include "hpo/mpi/group_layout.hpp"
#include "hpo/status.hpp"
#include "hpo/task_runner.hpp"

namespace hpo {

// fashion_mnist and synthetic (train/builtin_classifier.hpp): a ModelTask factory, registered
// with AddModelTask like a user's task.
Status MakeBuiltinClassifier(const SweepConfig& config, std::unique_ptr<ModelTask>* task);

// command: each rank of the group runs the user's program as a child process with the torchrun
// environment; the leader reads the metrics from its child's output. Collective over the group
// (the ranks learn each other's hosts).
Status MakeCommandRunner(const SweepConfig& config, const GroupLayout& layout,
                         std::unique_ptr<TaskRunner>* runner);

// OUTPUT/models/trial_ID.pt: where the leader saves a built-in trial's final weights.
std::string WeightsPath(const std::string& output, int64_t trial_id);

// OUTPUT/checkpoints/trial_ID.pt: a built-in trial's latest checkpoint; OUTPUT/checkpoints/
// trial_ID/: a command trial's HPO_CHECKPOINT_DIR.
std::string CheckpointPath(const std::string& output, int64_t trial_id);
std::string CheckpointDir(const std::string& output, int64_t trial_id);

}  // namespace hpo
