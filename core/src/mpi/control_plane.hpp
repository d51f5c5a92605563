// The control plane over MPI: a duplicated world communicator that carries ControlMessages between
// group leaders and rank 0's coordinator, and the group-wide broadcast of what the leader heard.
//   ServeCoordinator  rank 0, on its coordinator thread: receives and answers until the coordinator
//                     is finished (answers the coordinator decides later, such as a suggestion
//                     computed off its thread, are sent between messages as they become ready),
//                     publishing the study between messages when the coordinator's
//                     group commit allows it (preferably while no message waits) and once more at
//                     the end. Polls with MPI_Improbe and a short back-off sleep, so it costs
//                     rank 0's training almost no CPU.
//   LeaderChannel     group leaders: send a message to rank 0 and wait for the reply.
//   BroadcastMessage  collective over a group: the leader's message reaches every rank.
// A malformed message or a failing coordinator ends the job (AbortJob).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "coord/control_message.hpp"
#include "coord/coordinator.hpp"
#include "hpo/mpi/communicator.hpp"
#include "hpo/mpi/group_layout.hpp"

namespace hpo {

// Runs on world rank 0 only; returns once coordinator.Finished() and every result is published.
// Calls `poll` (e.g. to check for a preemption signal) before every probe for a message.
void ServeCoordinator(Coordinator& coordinator, const Communicator& control,
                      const std::vector<int>& group_of_world_rank,
                      const std::function<void()>& poll);

class LeaderChannel {
 public:
  explicit LeaderChannel(const Communicator& control) : control_(control) {}

  void Send(const ControlMessage& message);
  // Sends and waits for rank 0's reply, napping between probes (no spinning core).
  ControlMessage Exchange(const ControlMessage& message);

 private:
  const Communicator& control_;
};

// MPI_Bcast for waits off the training path (between trials, after an epoch): waiting ranks nap
// between tests instead of spinning, leaving the core to the ranks and programs they wait for.
void BroadcastNapping(void* data, int count, MPI_Datatype type, int root,
                      const Communicator& group);

// Collective over `comm`: every rank returns rank 0's `text` (the others' is ignored).
std::string BroadcastString(const Communicator& comm, std::string text);

// Collective over `group`: the root's `message` is copied into every other rank's `message`.
// Waiting ranks nap (BroadcastNapping).
void BroadcastMessage(const Communicator& group, int root, ControlMessage* message);

}  // namespace hpo
