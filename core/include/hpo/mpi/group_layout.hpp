// How the world is divided into trial groups. Ranks are ordered node by node (node index, then
// node-local rank) and cut into consecutive groups of ranks_per_trial, so a group's ranks share a
// node whenever ranks_per_trial divides the ranks per node. Computing it is collective over the
// world communicator.
#pragma once

#include <vector>

#include "hpo/mpi/communicator.hpp"
#include "hpo/status.hpp"

namespace hpo {

struct GroupLayout {
  int num_groups = 0;
  int group = 0;          // this rank's group
  int rank_in_group = 0;  // 0 is the group's leader
  int node_local_rank = 0;
  int ranks_on_node = 0;
  int node_index = 0;  // this rank's node, numbered in world-rank order of the nodes' first ranks
  std::vector<int> group_of_world_rank;  // every world rank's group (known on every rank)
  Communicator group_comm;               // this rank's group
  // The GPU of this rank's node that its trials train on (AssignGpu's rule, CUDA numbering of the
  // visible devices), or -1: the CPU. -1 from ComputeGroupLayout; the sweep sets it before any
  // task runner is made, in a CUDA build whose nodes all have GPUs.
  int gpu = -1;
};

// BadInput (identical on every rank) when the world size is not a multiple of ranks_per_trial;
// the message says how many ranks would work. World rank 0 is always the leader of group 0.
Status ComputeGroupLayout(const Communicator& world, int ranks_per_trial, GroupLayout* layout);

}  // namespace hpo
