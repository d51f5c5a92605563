// Private to hpo_runtime: what every rank does during a sweep (train the trials rank 0 hands its
// group), and where a trial's final weights live.
#pragma once

#include <cstdint>
#include <string>

#include "hpo/config.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/mpi/group_layout.hpp"
#include "hpo/train/task_data.hpp"
#include "hpo/train/trainer.hpp"

namespace hpo {

// OUTPUT/models/trial_ID.pt: where the leader saves a trial's final weights.
std::string WeightsPath(const std::string& output, int64_t trial_id);

// OUTPUT/checkpoints/trial_ID.pt: the trial's latest checkpoint.
std::string CheckpointPath(const std::string& output, int64_t trial_id);

// Every rank, collective over its group: asks rank 0 for trials (the leader, over `control`),
// trains each with the group (from its checkpoint when it has one), reports every epoch and sends
// the result, until rank 0 has no trial left or a preemption signal (PreemptionWatch) stops the
// group: its trial then checkpoints and is reported as still running. A failing trial (NaN,
// exception, out of memory) is reported as failed; anything else that throws ends the job
// (AbortJob). `fault` is injected for tests (HPO_INJECT_FAULT).
void RunGroupTrials(const SweepConfig& config, const GroupLayout& layout, const TaskData& data,
                    const Communicator& control, const FaultInjection& fault);

}  // namespace hpo
