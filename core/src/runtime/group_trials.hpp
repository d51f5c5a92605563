// Private to hpo_runtime: what every rank does during a sweep (run the trials rank 0 hands its
// group, whatever kind of task they are).
#pragma once

#include <string>

#include "hpo/config.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/mpi/group_layout.hpp"
#include "hpo/task_runner.hpp"

namespace hpo {

// Every rank, collective over its group: asks rank 0 for trials (the leader, over `control`),
// runs each with `runner`, reports every epoch and sends the result, until rank 0 has no trial
// left or a preemption signal (PreemptionWatch) stops the group: its trial then ends as still
// running. A trial whose runner returns an error is reported as failed; anything a runner throws
// ends the job (AbortJob).
void RunGroupTrials(const SweepConfig& config, const GroupLayout& layout, TaskRunner& runner,
                    const Communicator& control);

}  // namespace hpo
