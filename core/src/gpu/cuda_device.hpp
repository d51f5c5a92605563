// The GPU a rank trains on, in the CUDA build (HPO_CUDA=ON) only. The rule is AssignGpu's
// (common/gpu_assignment.hpp); this applies it to the node's visible devices. Not thread-safe: call
// once per process, before any CUDA work.
#pragma once

#include <cstdint>

#include "hpo/status.hpp"

namespace hpo {

// Makes GPU AssignGpu(node_local_rank, ranks_on_node, visible devices, trials_per_gpu) this
// process's current CUDA device and stores its index in *device. With trials_per_gpu > 1, caps
// torch's CUDA caching allocator on that device to 1/trials_per_gpu of its memory, so one trial
// cannot starve the others sharing the GPU (an allocation beyond the cap fails as out of memory,
// which ends only that trial). BadInput when the node has too few GPUs.
Status SelectCudaDevice(int node_local_rank, int ranks_on_node, int64_t trials_per_gpu,
                        int* device);

}  // namespace hpo
