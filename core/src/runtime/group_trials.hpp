// Private to hpo_runtime: what every rank does during a sweep (train the trials rank 0 hands its
// group), and where a trial's final weights live.
#pragma once

#include <cstdint>
#include <string>

#include "hpo/config.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/mpi/group_layout.hpp"
#include "hpo/train/task_data.hpp"

namespace hpo {

// OUTPUT/models/trial_ID.pt: where the leader saves a trial's final weights.
std::string WeightsPath(const std::string& output, int64_t trial_id);

// Every rank, collective over its group: asks rank 0 for trials (the leader, over `control`),
// trains each with the group, reports every epoch and sends the result, until rank 0 has no trial
// left. Returns when the group has been told so. A trial that throws ends the job (AbortJob).
void RunGroupTrials(const SweepConfig& config, const GroupLayout& layout, const TaskData& data,
                    const Communicator& control);

}  // namespace hpo
