// Which GPU of its node a rank trains on. A pure function of the node's layout, without CUDA, so
// the CPU build and the unit tests hold the same rule the CUDA build applies. Thread-safe.
#pragma once

#include <cstdint>

#include "hpo/status.hpp"

namespace hpo {

// The GPU index (0-based, as CUDA numbers the node's visible devices) of the rank with node-local
// rank `node_local_rank` among `ranks_on_node` ranks, on a node with `gpus_on_node` visible GPUs.
// trials_per_gpu == 1: one GPU per rank (a group of ranks_per_trial ranks uses as many GPUs);
// trials_per_gpu == K > 1 (one-rank groups): ranks K*g .. K*g+K-1 share GPU g.
// Preconditions: 0 <= node_local_rank < ranks_on_node. BadInput saying how many GPUs the node
// needs when it has too few, or when trials_per_gpu < 1; *gpu is then unchanged.
Status AssignGpu(int node_local_rank, int ranks_on_node, int gpus_on_node, int64_t trials_per_gpu,
                 int* gpu);

}  // namespace hpo
