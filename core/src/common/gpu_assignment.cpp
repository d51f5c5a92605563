#include "common/gpu_assignment.hpp"

#include <string>

namespace hpo {

Status AssignGpu(int node_local_rank, int ranks_on_node, int gpus_on_node, int64_t trials_per_gpu,
                 int* gpu) {
  if (trials_per_gpu < 1) {
    return Status::BadInput("trials_per_gpu must be >= 1, got " + std::to_string(trials_per_gpu));
  }
  if (node_local_rank < 0 || node_local_rank >= ranks_on_node) {
    return Status::BadInput("node-local rank " + std::to_string(node_local_rank) +
                            " is outside 0.." + std::to_string(ranks_on_node - 1));
  }
  const int64_t needed = (ranks_on_node + trials_per_gpu - 1) / trials_per_gpu;
  if (gpus_on_node < needed) {
    return Status::BadInput(
        "this node runs " + std::to_string(ranks_on_node) + " ranks with trials_per_gpu " +
        std::to_string(trials_per_gpu) + ", which needs " + std::to_string(needed) +
        " GPUs, but it has " + std::to_string(gpus_on_node < 0 ? 0 : gpus_on_node) +
        " visible; start at most " +
        std::to_string(static_cast<int64_t>(gpus_on_node < 0 ? 0 : gpus_on_node) * trials_per_gpu) +
        " ranks per node or raise trials_per_gpu");
  }
  *gpu = static_cast<int>(node_local_rank / trials_per_gpu);
  return Status::Ok();
}

}  // namespace hpo
